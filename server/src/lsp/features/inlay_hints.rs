//! Inlay hints: the inferred type after every `let` variable written
//! without one and after every graph binding (`%0: Tensor[…]`), when
//! inference found all of it.

use super::types::{contains_incomplete, var_at};
use crate::lsp::analysis::Analysis;
use relay_passes::printer::print_type;
use relay_syntax::{SyntaxElement, SyntaxKind::*, TextRange, TextSize};

/// A type hint: `label` shown at `offset` (after the name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeHint {
    pub offset: TextSize,
    /// `: T`.
    pub label: String,
}

/// `: T` after every `let` variable without an annotation and every graph
/// binding, in `range`.
pub fn inlay_hints(analysis: &Analysis, range: TextRange) -> Vec<TypeHint> {
    let root = analysis.root();
    let node = match root.covering_element(range) {
        SyntaxElement::Node(node) => node,
        SyntaxElement::Token(token) => match token.parent() {
            Some(parent) => parent,
            None => return Vec::new(),
        },
    };
    let mut out = Vec::new();
    for n in node.descendants() {
        if !n
            .text_range()
            .intersect(range)
            .is_some_and(|r| !r.is_empty() || range.is_empty())
        {
            continue;
        }
        let (name, t) = match n.kind() {
            LET_STMT => {
                if n.children_with_tokens().any(|e| e.kind() == COLON) {
                    continue;
                }
                let Some(local) = n
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| t.kind() == LOCAL)
                else {
                    continue;
                };
                let t =
                    var_at(analysis, local.text_range()).and_then(|e| e.checked_type().cloned());
                (local, t)
            }
            GRAPH_BINDING => {
                let Some(graph) = n
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| t.kind() == GRAPH)
                else {
                    continue;
                };
                let t = n
                    .children()
                    .last()
                    .and_then(|v| analysis.index().exact(v.text_range()))
                    .and_then(|e| e.checked_type().cloned());
                (graph, t)
            }
            _ => continue,
        };
        let Some(t) = t.filter(|t| !contains_incomplete(t)) else {
            continue;
        };
        out.push(TypeHint {
            offset: name.text_range().end(),
            label: format!(": {}", print_type(&t)),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// Hints in the fixture's `<range>` (the whole text when unmarked),
    /// each marked as an empty `<hint: T></hint>` where it shows.
    fn check(marked: &str) {
        fixture::check(marked, |analysis, _| {
            let fixture = fixture::parse(marked);
            let range = fixture
                .ranges
                .iter()
                .find(|(_, tag)| tag == "range")
                .map_or(analysis.root().text_range(), |(r, _)| *r);
            let mut out = fixture
                .ranges
                .into_iter()
                .filter(|(_, tag)| tag == "range")
                .collect::<Vec<_>>();
            out.extend(
                inlay_hints(analysis, range)
                    .into_iter()
                    .map(|h| (TextRange::empty(h.offset), format!("hint{}", h.label))),
            );
            out
        });
    }

    #[test]
    fn lets_without_a_type_and_graph_bindings() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) {\n  \
               let %a<hint: float32></hint> = add(%x, %x);\n  \
               let %b: float32 = %a;\n  \
               %0<hint: float32></hint> = multiply(%b, %b);\n  \
               %0\n\
             }\n",
        );
    }

    #[test]
    fn only_in_the_range_and_only_complete_types() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32, %u) {\n  \
               let %a = add(%x, %x);\n  \
               <range>let %b<hint: float32></hint> = %a;\n  \
               let %c = %u;</range>\n  \
               %c\n\
             }\n",
        );
    }
}
