//! Which definitions of a module can be type-checked when the text has
//! syntax or name errors: one undeclared `%y` in one function must not hide
//! the type errors of the others.
//!
//! A definition is skipped when a syntax or name error lies inside it, or
//! when it refers (through `@name`, transitively) to a skipped definition
//! (its calls would be checked against a function we could not read). An
//! error outside every `def` (the version header, a `type` definition, the
//! metadata section) can change the meaning of any definition, so then
//! none is checked. Type inference runs on the whole module as before; its
//! diagnostics are kept for the checkable definitions only. The CLI
//! (`relay check`) and the language server both go through
//! [`CheckScope`].

use relay_ir::diagnostic::{Code, Diagnostic, Layer};
use relay_ir::source::FileId;
use relay_syntax::ast::{self, AstNode, AstToken};
use relay_syntax::{SyntaxKind, TextRange, TextSize};
use std::collections::{HashMap, HashSet};

/// The definitions of one file whose type errors are worth reporting.
#[derive(Debug, Clone)]
pub struct CheckScope {
    file: FileId,
    /// Ranges of the definitions that are skipped.
    skipped: Vec<TextRange>,
    /// Ranges of the definitions that are checked.
    checked: Vec<TextRange>,
    /// No definition is checked (an error outside every definition).
    nothing: bool,
}

impl CheckScope {
    /// The scope of `root` (the text of `file`) given the diagnostics of
    /// parsing and lowering it.
    pub fn new(file: FileId, root: &ast::SourceFile, earlier: &[Diagnostic]) -> CheckScope {
        let def_nodes: Vec<ast::Def> = root
            .items()
            .filter_map(|item| match item {
                ast::Item::Def(def) => Some(def),
                _ => None,
            })
            .collect();
        let ranges: Vec<TextRange> = def_nodes.iter().map(|d| d.syntax().text_range()).collect();
        let mut nothing = false;
        let mut bad: HashSet<usize> = HashSet::new();
        for d in earlier {
            if !d.is_error() || !matches!(d.layer, Layer::Syntax | Layer::Name) {
                continue;
            }
            let span = d
                .span
                .filter(|s| s.file == file && d.code != Code::VersionHeader);
            let Some(span) = span else {
                nothing = true;
                continue;
            };
            match ranges
                .iter()
                .position(|range| contains(*range, span.range.start()))
            {
                Some(i) => {
                    bad.insert(i);
                }
                None => nothing = true,
            }
        }
        // Which globals each definition uses, read only when some
        // definition is bad (an edit of a clean file reads no tree).
        if !bad.is_empty() && !nothing {
            spread_badness(&def_nodes, &mut bad);
        }
        let defs = &ranges;
        let (mut skipped, mut checked) = (Vec::new(), Vec::new());
        for (i, range) in defs.iter().enumerate() {
            if nothing || bad.contains(&i) {
                skipped.push(*range);
            } else {
                checked.push(*range);
            }
        }
        CheckScope {
            file,
            skipped,
            checked,
            nothing,
        }
    }

    /// Whether type inference has anything to report on.
    pub fn checks_anything(&self) -> bool {
        !self.nothing && !self.checked.is_empty()
    }

    /// Whether every definition is checked (the text has no syntax or name
    /// error that matters for types).
    pub fn checks_everything(&self) -> bool {
        !self.nothing && self.skipped.is_empty()
    }

    /// Whether a diagnostic of type inference is about a checked
    /// definition: one at a place inside it, or one without a place when
    /// nothing is skipped.
    pub fn keeps(&self, diagnostic: &Diagnostic) -> bool {
        if self.nothing {
            return false;
        }
        match diagnostic.span {
            Some(span) if span.file == self.file => self
                .checked
                .iter()
                .any(|range| contains(*range, span.range.start())),
            Some(_) => true,
            None => self.skipped.is_empty(),
        }
    }

    /// The type diagnostics worth reporting, from all of inference's.
    pub fn filter(&self, found: impl IntoIterator<Item = Diagnostic>) -> Vec<Diagnostic> {
        found.into_iter().filter(|d| self.keeps(d)).collect()
    }
}

/// Whether `offset` is in `range`, its end included (an error at the end
/// of an unfinished definition belongs to it).
/// Adds to `bad` the definitions that use a bad one's global, until none
/// is left.
fn spread_badness(defs: &[ast::Def], bad: &mut HashSet<usize>) {
    let defs: Vec<(String, HashSet<String>)> = defs
        .iter()
        .map(|def| {
            let own = def.name().map(|n| n.syntax().text_range());
            let name = def.name().map(|n| n.name().to_string()).unwrap_or_default();
            let uses = def
                .syntax()
                .descendants_with_tokens()
                .filter_map(|e| e.into_token())
                .filter(|t| t.kind() == SyntaxKind::GLOBAL && Some(t.text_range()) != own)
                .map(|t| t.text().trim_start_matches('@').to_string())
                .collect();
            (name, uses)
        })
        .collect();
    let index: HashMap<&str, Vec<usize>> =
        defs.iter()
            .enumerate()
            .fold(HashMap::new(), |mut map, (i, (name, _))| {
                map.entry(name.as_str()).or_default().push(i);
                map
            });
    let mut changed = true;
    while changed {
        changed = false;
        for (i, (_, uses)) in defs.iter().enumerate() {
            if bad.contains(&i) {
                continue;
            }
            let uses_bad = uses.iter().any(|name| {
                index
                    .get(name.as_str())
                    .is_some_and(|found| found.iter().any(|j| bad.contains(j)))
            });
            if uses_bad {
                bad.insert(i);
                changed = true;
            }
        }
    }
}

fn contains(range: TextRange, offset: TextSize) -> bool {
    range.start() <= offset && offset <= range.end()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer_module;
    use relay_ir::source::SourceMap;
    use relay_lower::lower_module;

    /// The codes `relay check` reports for `text` (parse, lower, scope,
    /// infer), in order.
    fn codes(text: &str) -> Vec<&'static str> {
        let mut sources = SourceMap::new();
        let file = sources.add("t.relay", text);
        let parse = relay_syntax::parse_module(text);
        let mut found: Vec<Diagnostic> = parse
            .errors()
            .iter()
            .map(|e| Diagnostic::from_syntax_error(file, e))
            .collect();
        let root = parse.source_file().unwrap();
        let lowered = lower_module(file, &root);
        found.extend(lowered.diagnostics);
        let scope = CheckScope::new(file, &root, &found);
        if scope.checks_anything() {
            found.extend(scope.filter(infer_module(&lowered.module).1));
        }
        relay_ir::diagnostic::sort_by_position(&mut found);
        found.iter().map(|d| d.code.id()).collect()
    }

    const BROADCAST: &str =
        "def @good(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) { add(%a, %b) }\n";

    #[test]
    fn a_name_error_does_not_hide_other_functions_type_errors() {
        let text =
            format!("#[version = \"0.0.5\"]\ndef @bad(%x: float32) {{ add(%x, %y) }}\n{BROADCAST}");
        assert_eq!(codes(&text), ["E0101", "E0202"]);
        let text =
            format!("#[version = \"0.0.5\"]\ndef @bad(%x: float32) {{ nn.rleu(%x) }}\n{BROADCAST}");
        assert_eq!(codes(&text), ["E0103", "E0202"]);
    }

    #[test]
    fn a_syntax_error_in_one_function_does_not_hide_the_others() {
        let text =
            format!("#[version = \"0.0.5\"]\n{BROADCAST}def @bad(%x: float32) {{ add(%x, }}\n");
        assert_eq!(codes(&text), ["E0202", "E0004"]);
    }

    #[test]
    fn users_of_a_skipped_definition_are_skipped() {
        // @user would report that @bad's type cannot be found: a cascade.
        let text = "#[version = \"0.0.5\"]\ndef @bad(%x) { add(%x, %y) }\n\
                    def @user(%x: float32) { @bad(%x) }\n";
        assert_eq!(codes(text), ["E0101"]);
    }

    #[test]
    fn an_error_outside_definitions_checks_nothing() {
        let text = format!("def @bad(%x: float32) {{ %x }}\n{BROADCAST}");
        assert_eq!(codes(&text), ["E0005"]);
    }
}
