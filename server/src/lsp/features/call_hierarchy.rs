//! Call hierarchy: which global functions a global function calls, and
//! which call it. A global is "called" wherever its name appears in another
//! definition's body — a call `@f(…)`, or `@f` passed as a value, which TVM
//! treats alike (both are references to the `GlobalVar`). Read from the
//! syntax tree, so it answers for files with type errors too.

use super::cursor::{def_name, token_at};
use super::types::global_signature;
use crate::lsp::analysis::Analysis;
use relay_syntax::{SyntaxKind::*, SyntaxNode, TextRange, TextSize};
use std::collections::HashMap;

/// One global function as the hierarchy shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallItem {
    /// The name without `@`.
    pub name: String,
    /// Its signature, when it type-checks.
    pub detail: Option<String>,
    /// The whole definition.
    pub range: TextRange,
    /// The `@name` of the definition.
    pub selection_range: TextRange,
}

/// A function and where, in the caller's body, the references are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub item: CallItem,
    pub sites: Vec<TextRange>,
}

/// The global function named at `offset` (its definition or a reference
/// to it), if it is defined in this file.
pub fn prepare(analysis: &Analysis, offset: TextSize) -> Option<CallItem> {
    let token = token_at(&analysis.root(), offset)?;
    if token.kind() != GLOBAL {
        return None;
    }
    let name = token.text().trim_start_matches('@');
    let def = defs(analysis).find(|(n, _)| n == name)?.1;
    item(analysis, name, &def)
}

/// The definitions whose bodies refer to `name`, with the references.
pub fn incoming(analysis: &Analysis, name: &str) -> Vec<Call> {
    defs(analysis)
        .filter_map(|(caller, def)| {
            let sites = references_in(&def, |callee| callee == name);
            if sites.is_empty() {
                return None;
            }
            Some(Call {
                item: item(analysis, &caller, &def)?,
                sites,
            })
        })
        .collect()
}

/// The globals `name`'s body refers to, each with its references, in the
/// order of their first reference.
pub fn outgoing(analysis: &Analysis, name: &str) -> Vec<Call> {
    // One pass over the file: each definition by name, each callee's place
    // in the answer by name (a module may have thousands of functions).
    let by_name: HashMap<String, SyntaxNode> = defs(analysis).collect();
    let Some(def) = by_name.get(name) else {
        return Vec::new();
    };
    let mut calls: Vec<Call> = Vec::new();
    let mut position: HashMap<String, usize> = HashMap::new();
    for (callee, site) in global_references(def) {
        if let Some(&i) = position.get(&callee) {
            calls[i].sites.push(site);
        } else if let Some(item) = by_name
            .get(&callee)
            .and_then(|d| item(analysis, &callee, d))
        {
            position.insert(callee, calls.len());
            calls.push(Call {
                item,
                sites: vec![site],
            });
        }
    }
    calls
}

/// Every `def` of the file with its name (without `@`).
fn defs(analysis: &Analysis) -> impl Iterator<Item = (String, SyntaxNode)> {
    analysis
        .root()
        .children()
        .filter(|n| n.kind() == DEF)
        .filter_map(|def| Some((def_name(&def)?, def)))
}

/// The item of the global `name` defined by `def`.
fn item(analysis: &Analysis, name: &str, def: &SyntaxNode) -> Option<CallItem> {
    let selection_range = def
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| t.kind() == GLOBAL)?
        .text_range();
    Some(CallItem {
        name: name.to_string(),
        detail: global_signature(analysis, name),
        range: def.text_range(),
        selection_range,
    })
}

/// `(name, range)` of every `@global` inside `def` but its own name.
fn global_references(def: &SyntaxNode) -> impl Iterator<Item = (String, TextRange)> + '_ {
    def.descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(move |t| t.kind() == GLOBAL && t.parent().as_ref() != Some(def))
        .map(|t| (t.text().trim_start_matches('@').to_string(), t.text_range()))
}

fn references_in(def: &SyntaxNode, wanted: impl Fn(&str) -> bool) -> Vec<TextRange> {
    global_references(def)
        .filter(|(name, _)| wanted(name))
        .map(|(_, range)| range)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    const V: &str = "#[version = \"0.0.5\"]\n";

    /// Each call as `name count`, checking that every site is a reference
    /// to the callee: `callee`, or the item itself when `None` (outgoing).
    fn show(analysis: &Analysis, calls: &[Call], callee: Option<&str>) -> Vec<String> {
        calls
            .iter()
            .map(|c| {
                let callee = callee.unwrap_or(&c.item.name);
                for site in &c.sites {
                    assert_eq!(&analysis.text()[*site], format!("@{callee}"));
                }
                format!("{} {}", c.item.name, c.sites.len())
            })
            .collect()
    }

    #[test]
    fn prepare_finds_the_definition_from_a_reference_or_its_name() {
        let marked = format!(
            "{V}<def>def <name>@g</name>(%x: float32) -> float32 {{ %x }}</def>\n\
             def @main(%x: float32) {{ @$0g(%x) }}\n"
        );
        let fixture = fixture::parse(&marked);
        let analysis = fixture::analysis(&fixture.text);
        let item = prepare(&analysis, fixture.cursor()).expect("an item");
        assert_eq!(item.name, "g");
        assert_eq!(item.range, fixture.range("def"));
        assert_eq!(item.selection_range, fixture.range("name"));
        assert_eq!(
            item.detail.as_deref(),
            Some("def @g(%x: float32) -> float32")
        );
        // Not on a global: nothing.
        let plain = fixture::analysis(&format!("{V}def @main(%x: float32) {{ %x }}"));
        assert_eq!(prepare(&plain, 35.into()), None);
    }

    #[test]
    fn incoming_and_outgoing_with_every_site() {
        let text = format!(
            "{V}def @leaf(%x: float32) -> float32 {{ %x }}\n\
             def @mid(%x: float32) -> float32 {{ @leaf(@leaf(%x)) }}\n\
             def @main(%x: float32) {{ let %f = @leaf; (@mid(%x), %f(%x)) }}\n"
        );
        let analysis = fixture::analysis(&text);
        assert_eq!(
            show(&analysis, &incoming(&analysis, "leaf"), Some("leaf")),
            ["mid 2", "main 1"]
        );
        assert_eq!(
            show(&analysis, &outgoing(&analysis, "main"), None),
            ["leaf 1", "mid 1"]
        );
        assert_eq!(
            show(&analysis, &outgoing(&analysis, "mid"), None),
            ["leaf 2"]
        );
        assert!(outgoing(&analysis, "leaf").is_empty());
        assert!(incoming(&analysis, "main").is_empty());
        // A recursive function calls itself.
        let rec = fixture::analysis(&format!(
            "{V}def @r(%n: int32) -> int32 {{ if (equal(%n, 0)) {{ 0 }} else {{ @r(subtract(%n, 1)) }} }}"
        ));
        assert_eq!(show(&rec, &incoming(&rec, "r"), Some("r")), ["r 1"]);
    }

    #[test]
    fn references_to_globals_not_defined_here_are_left_out() {
        let analysis = fixture::analysis(&format!("{V}def @main(%x: float32) {{ @nowhere(%x) }}"));
        assert!(outgoing(&analysis, "main").is_empty());
    }
}
