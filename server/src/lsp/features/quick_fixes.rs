//! Quick fixes for the diagnostics around the cursor: add the missing
//! version header, take the "did you mean" suggestion, declare an
//! undeclared local as a parameter (with the type inference found for it);
//! for what a lenient reading accepted, set the header to 0.0.5 and
//! "Upgrade to Relay 0.0.5" (the file rewritten as `relay fmt --upgrade`
//! writes it).

use super::cursor::def_name;
use super::types::contains_incomplete;
use super::Replacement;
use crate::lsp::analysis::Analysis;
use relay_passes::diagnostic::{Code, Diagnostic, Layer};
use relay_syntax::{SyntaxKind, TextRange};

/// A quick fix: a title and its replacements.
pub struct QuickFix {
    pub title: String,
    pub edits: Vec<Replacement>,
    pub diagnostic: Diagnostic,
}

/// Quick fixes for the diagnostics of `analysis` that touch `range`.
pub fn quick_fixes(analysis: &Analysis, range: TextRange) -> Vec<QuickFix> {
    let mut out = Vec::new();
    let mut upgrade_offered = false;
    let text = analysis.text();
    for d in &analysis.diagnostics {
        let Some(span) = d.span else { continue };
        if span.range.intersect(range).is_none() {
            continue;
        }
        // Another version's header.
        if d.code == Code::OtherVersionHeader {
            out.push(QuickFix {
                title: "Set the header to `#[version = \"0.0.5\"]`".to_string(),
                edits: vec![Replacement {
                    range: span.range,
                    text: "#[version = \"0.0.5\"]".to_string(),
                }],
                diagnostic: d.clone(),
            });
        }
        // The missing version header.
        if d.code == Code::NoVersionHeader
            || d.layer == Layer::Syntax && d.message.contains("add `#[version = \"0.0.5\"]`")
        {
            out.push(QuickFix {
                title: "Add the `#[version = \"0.0.5\"]` header".to_string(),
                edits: vec![Replacement {
                    range: TextRange::empty(0.into()),
                    text: "#[version = \"0.0.5\"]\n".to_string(),
                }],
                diagnostic: d.clone(),
            });
        }
        // Did you mean …?
        if let Some(suggestion) = d
            .help
            .as_deref()
            .and_then(|h| h.strip_prefix("did you mean `"))
            .and_then(|h| h.strip_suffix("`?"))
        {
            out.push(QuickFix {
                title: format!("Replace with `{suggestion}`"),
                edits: vec![Replacement {
                    range: span.range,
                    text: suggestion.to_string(),
                }],
                diagnostic: d.clone(),
            });
        }
        // An undeclared local: declare it as a parameter.
        if d.message == "this local variable has not been previously declared" {
            let name = &text[span.range];
            if let Some(fix) = declare_parameter(analysis, span.range, name) {
                out.push(QuickFix {
                    title: fix.0,
                    edits: vec![fix.1],
                    diagnostic: d.clone(),
                });
            }
        }
        // What a lenient reading accepted: the whole file, upgraded (once).
        if is_leniency(d.code) && !upgrade_offered {
            if let Ok((upgraded, _)) = relay_passes::lower::upgrade(&analysis.name, text) {
                upgrade_offered = true;
                out.push(QuickFix {
                    title: "Upgrade to Relay 0.0.5".to_string(),
                    edits: vec![Replacement {
                        range: TextRange::up_to(text.len().try_into().unwrap_or_default()),
                        text: upgraded,
                    }],
                    diagnostic: d.clone(),
                });
            }
        }
    }
    out
}

/// Whether `code` reports what a lenient reading accepted.
fn is_leniency(code: Code) -> bool {
    matches!(
        code,
        Code::NoVersionHeader
            | Code::OtherVersionHeader
            | Code::ExpressionFile
            | Code::FrontendName
            | Code::MetaWithoutSection
            | Code::OldAttributes
            | Code::DroppedAttribute
            | Code::AttrsTypeFromOperator
            | Code::OpaqueOperator
    )
}

fn declare_parameter(
    analysis: &Analysis,
    at: TextRange,
    name: &str,
) -> Option<(String, Replacement)> {
    let root = analysis.root();
    let element = root.covering_element(at);
    let start = match &element {
        relay_syntax::SyntaxElement::Node(n) => n.clone(),
        relay_syntax::SyntaxElement::Token(t) => t.parent()?,
    };
    let function = start
        .ancestors()
        .find(|n| matches!(n.kind(), SyntaxKind::DEF | SyntaxKind::FN_EXPR))?;
    let params = function
        .children()
        .find(|n| n.kind() == SyntaxKind::PARAM_LIST)?;
    let close = params
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| t.kind() == SyntaxKind::R_PAREN)
        .last()?;
    let has_params = params.children().any(|n| n.kind() == SyntaxKind::PARAM);
    // The type inference found for it, if a complete one.
    let ty = analysis
        .index()
        .exact(at)
        .and_then(|e| e.checked_type())
        .filter(|t| !contains_incomplete(t))
        .map(relay_passes::printer::print_type);
    let decl = match &ty {
        Some(t) => format!("{name}: {t}"),
        None => name.to_string(),
    };
    let text = if has_params {
        format!(", {decl}")
    } else {
        decl.clone()
    };
    let owner = def_name(&function).map_or("the function".to_string(), |n| format!("@{n}"));
    Some((
        format!("Declare `{name}` as a parameter of {owner}"),
        Replacement {
            range: TextRange::empty(close.text_range().start()),
            text,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// The fixes for the diagnostics in the fixture's `<at>` range (the
    /// whole text when unmarked), each replacement marked as `<fix N TEXT>`
    /// with N the fix's index; the titles are returned.
    fn check(marked: &str) -> Vec<String> {
        let mut titles = Vec::new();
        fixture::check(marked, |analysis, _| {
            let fixture = fixture::parse(marked);
            let at = fixture
                .ranges
                .iter()
                .find(|(_, tag)| tag == "at")
                .map_or(analysis.root().text_range(), |(r, _)| *r);
            let mut out: Vec<(TextRange, String)> = fixture
                .ranges
                .into_iter()
                .filter(|(_, tag)| tag == "at")
                .collect();
            for (i, fix) in quick_fixes(analysis, at).into_iter().enumerate() {
                titles.push(fix.title);
                for edit in fix.edits {
                    out.push((edit.range, format!("fix {i} {}", edit.text)));
                }
            }
            out
        });
        titles
    }

    #[test]
    fn an_undeclared_local_becomes_a_parameter() {
        let titles = check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32<fix 0 , %y></fix>) { add(%x, %y) }\n",
        );
        assert_eq!(titles, ["Declare `%y` as a parameter of @f"]);
        let titles = check("#[version = \"0.0.5\"]\ndef @f(<fix 0 %y></fix>) { %y }\n");
        assert_eq!(titles, ["Declare `%y` as a parameter of @f"]);
    }

    #[test]
    fn the_missing_version_header() {
        let analysis = fixture::analysis("def @f() { 1 }\n");
        let fixes = quick_fixes(&analysis, analysis.root().text_range());
        assert_eq!(fixes.len(), 2);
        assert_eq!(fixes[1].title, "Upgrade to Relay 0.0.5");
        // The upgrade edits the text where it must (the header) and keeps
        // the rest as the user wrote it.
        assert_eq!(
            fixes[1].edits[0].text,
            "#[version = \"0.0.5\"]\ndef @f() { 1 }\n"
        );
        assert_eq!(fixes[0].title, "Add the `#[version = \"0.0.5\"]` header");
        assert_eq!(
            fixes[0].edits,
            [Replacement {
                range: TextRange::empty(0.into()),
                text: "#[version = \"0.0.5\"]\n".to_string(),
            }]
        );
    }

    #[test]
    fn did_you_mean_takes_the_suggestion() {
        let titles = check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: Tensor[(2), float32]) { <fix 0 nn.relu>nn.rleu</fix>(%x) }\n",
        );
        assert_eq!(titles, ["Replace with `nn.relu`"]);
    }

    #[test]
    fn only_for_diagnostics_that_touch_the_range() {
        let titles = check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) { <at>add(%x, %x)</at> }\n\
             def @g() { %y }\n",
        );
        assert!(titles.is_empty(), "{titles:?}");
    }
}
