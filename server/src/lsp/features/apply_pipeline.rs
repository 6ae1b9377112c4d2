//! Applying a pipeline (`relay.applyPipeline`, the "Apply X" code
//! actions): the pipeline runs on the analysed module (see
//! [`crate::lsp::pipeline`]) and its result becomes replacements of only
//! the definitions it changed (by structural equality: a definition the
//! pass rebuilt into an equal one keeps its bytes, comments and all), so
//! one undo reverts it. An edit whose result would not read back is
//! refused.

use super::cursor::def_name;
use super::Replacement;
use crate::lsp::analysis::{guarded, Analysis};
use crate::lsp::pipeline::{print, run_pipeline, shows_types, RunResult};
use crate::project::Project;
use relay_passes::diagnostic::Layer;
use relay_passes::ir::equal::{first_difference, module_first_difference};
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_syntax::{SyntaxKind, TextRange, TextSize};
use std::collections::BTreeMap;

/// The `def`s of a printed module by name, with their text.
fn printed_defs(text: &str) -> (BTreeMap<String, String>, bool) {
    let parse = relay_syntax::parse_module(text);
    let root = parse.syntax_node();
    let mut defs = BTreeMap::new();
    let mut has_meta = false;
    for item in root.children() {
        match item.kind() {
            SyntaxKind::DEF => {
                if let Some(name) = def_name(&item) {
                    defs.insert(name, item.text().to_string());
                }
            }
            SyntaxKind::METADATA_SECTION => has_meta = true,
            _ => {}
        }
    }
    (defs, has_meta)
}

/// The edits that turn the document into `output`: one replacement per
/// definition the pipeline changed structurally (only `only`'s, when
/// given), deletions of removed definitions, new definitions appended. A
/// structurally equal result (spans, checked types and the names of bound
/// variables aside) gives no edit at all. When the printed modules use a
/// metadata section (whose indices are shared by all definitions) the whole
/// document is replaced.
pub fn definition_edits(
    analysis: &Analysis,
    input: &IRModule,
    output: &IRModule,
    only: Option<&str>,
) -> Vec<Replacement> {
    if module_first_difference(input, output, false).is_none() {
        return Vec::new();
    }
    let changed = |name: &str| match (input.function(name), output.function(name)) {
        (Some(before), Some(after)) => {
            first_difference(before.expr(), after.expr(), false).is_some()
        }
        (None, None) => false,
        _ => true,
    };
    let show_types = shows_types(analysis);
    let before_text = print(input, show_types);
    let after_text = print(output, show_types);
    let (before, meta_before) = printed_defs(&before_text);
    let (after, meta_after) = printed_defs(&after_text);
    let root = analysis.root();
    let source_has_meta = root
        .children()
        .any(|n| n.kind() == SyntaxKind::METADATA_SECTION);
    if (meta_before || meta_after || source_has_meta) && only.is_none() {
        return vec![Replacement {
            range: root.text_range(),
            text: after_text,
        }];
    }
    // The source's definitions (TVM keeps the last of a name).
    let mut source: BTreeMap<String, TextRange> = BTreeMap::new();
    let mut last_item_end = None;
    for item in root.children() {
        if item.kind() == SyntaxKind::DEF {
            if let Some(name) = def_name(&item) {
                source.insert(name, item.text_range());
            }
        }
        if matches!(
            item.kind(),
            SyntaxKind::DEF
                | SyntaxKind::TYPE_DEF
                | SyntaxKind::EXTERN_TYPE_DEF
                | SyntaxKind::VERSION
        ) {
            last_item_end = Some(item.text_range().end());
        }
    }
    let wanted = |name: &str| only.is_none_or_eq(name);
    let mut edits = Vec::new();
    for (name, new_text) in &after {
        if !wanted(name) {
            continue;
        }
        match (before.get(name), source.get(name)) {
            (Some(_), Some(range)) if changed(name) => edits.push(Replacement {
                range: *range,
                text: new_text.clone(),
            }),
            (None, None) | (Some(_), None) => {
                let at = last_item_end.unwrap_or_else(|| root.text_range().end());
                edits.push(Replacement {
                    range: TextRange::empty(at),
                    text: format!("\n\n{new_text}"),
                });
            }
            _ => {}
        }
    }
    for (name, range) in &source {
        if wanted(name) && before.contains_key(name) && !after.contains_key(name) {
            // The definition and the blank lines after it.
            let text = analysis.text();
            let mut end = usize::from(range.end());
            while end < text.len() && text.as_bytes()[end].is_ascii_whitespace() {
                end += 1;
            }
            edits.push(Replacement {
                range: TextRange::new(range.start(), TextSize::from(end as u32)),
                text: String::new(),
            });
        }
    }
    edits.sort_by_key(|e| e.range.start());
    edits
}

/// Whether the document with `edits` applied still reads (parses, and its
/// names resolve): an edit must never leave text the tools cannot read
/// back. Says why not, with the first error, when it does not.
pub fn reads_back(analysis: &Analysis, edits: &[Replacement]) -> Result<(), String> {
    if edits.is_empty() {
        return Ok(());
    }
    let text = analysis.text();
    let mut result = String::with_capacity(text.len());
    let mut at = 0;
    for edit in edits {
        let (start, end) = (
            usize::from(edit.range.start()),
            usize::from(edit.range.end()),
        );
        result.push_str(&text[at..start]);
        result.push_str(&edit.text);
        at = end;
    }
    result.push_str(&text[at..]);
    let (_, diagnostics) = guarded(|| parse_and_lower("result", &result))
        .map_err(|m| format!("internal error: reading the result back panicked: {m}"))?;
    // As for running passes at all (see `run_pipeline`), the errors that
    // matter are those of reading: syntax and names.
    let unreadable = diagnostics
        .iter()
        .find(|d| d.is_error() && matches!(d.layer, Layer::Syntax | Layer::Name));
    match unreadable {
        None => Ok(()),
        Some(error) => Err(format!(
            "the result does not read back, so it was not applied: {}",
            error.message
        )),
    }
}

trait OnlyName {
    fn is_none_or_eq(&self, name: &str) -> bool;
}

impl OnlyName for Option<&str> {
    fn is_none_or_eq(&self, name: &str) -> bool {
        match self {
            None => true,
            Some(only) => *only == name,
        }
    }
}

/// Runs a pipeline and computes the edits, or says why not.
pub fn apply_pipeline(
    analysis: &Analysis,
    project: Option<&Project>,
    pipeline: &str,
    only: Option<&str>,
) -> (Result<Vec<Replacement>, String>, RunResult) {
    let result = run_pipeline(analysis, project, pipeline.trim(), false);
    let edits = match (&result.input, &result.output, &result.error) {
        (Some(input), Some(output), None) => {
            guarded(|| definition_edits(analysis, input, output, only))
                .map_err(|m| format!("internal error: computing the edit panicked: {m}"))
                .and_then(|edits| {
                    reads_back(analysis, &edits)?;
                    Ok(edits)
                })
        }
        (_, _, Some(error)) => Err(error.clone()),
        _ => Err("the pipeline gave no module".to_string()),
    };
    (edits, result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    const SRC: &str = "#[version = \"0.0.5\"]\ndef @main(%x: int32) {\n  %x\n}\n";

    fn analysis() -> Analysis {
        fixture::analysis(SRC)
    }

    /// An edit that would leave text that does not parse is refused, with
    /// the reason; one that reads is accepted.
    #[test]
    fn edits_whose_result_does_not_read_back_are_refused() {
        let analysis = analysis();
        let body = SRC.find("%x\n}").unwrap() as u32;
        let replace_body = |text: &str| Replacement {
            range: TextRange::new(body.into(), (body + 2).into()),
            text: text.to_string(),
        };
        assert_eq!(
            reads_back(&analysis, &[replace_body("add(%x, %x)")]),
            Ok(())
        );
        let refused = reads_back(
            &analysis,
            &[replace_body("let %y = match (%x) { _ => 1 }; %y")],
        )
        .expect_err("a bare match as a let value does not parse");
        assert!(refused.contains("does not read back"), "{refused}");
        let refused = reads_back(&analysis, &[replace_body("%undeclared")])
            .expect_err("an undeclared variable does not resolve");
        assert!(refused.contains("does not read back"), "{refused}");
    }

    /// FoldConstant changes @main only: the replacement covers @main (the
    /// fixture's `<main>`) and @helper keeps its comment and spacing.
    #[test]
    fn only_the_definitions_that_change_are_replaced() {
        let fixture = fixture::parse(
            "#[version = \"0.0.5\"]\n\
             def @helper(%a: float32) -> float32 {\n  // kept\n  multiply(%a,   %a)\n}\n\n\
             <main>def @main(%x: float32) -> float32 {\n  %0 = add(1f, 2f);\n  multiply(%x, %0)\n}</main>\n",
        );
        let analysis = fixture::analysis(&fixture.text);
        let (edits, _) = apply_pipeline(&analysis, None, "FoldConstant", None);
        let edits = edits.expect("FoldConstant runs");
        assert_eq!(edits.len(), 1, "{edits:?}");
        assert_eq!(edits[0].range, fixture.range("main"));
        assert_eq!(
            edits[0].text,
            "def @main(%x: float32) -> float32 {\n  multiply(%x, 3f)\n}"
        );
        // Restricted to @helper, which FoldConstant leaves alone: no edit.
        let (edits, _) = apply_pipeline(&analysis, None, "FoldConstant", Some("helper"));
        assert_eq!(edits, Ok(Vec::new()));
    }

    #[test]
    fn a_pipeline_that_does_not_parse_says_why() {
        let (edits, _) = apply_pipeline(&analysis(), None, "NoSuchPass", None);
        let error = edits.expect_err("an unknown pass");
        assert!(error.contains("NoSuchPass"), "{error}");
    }
}
