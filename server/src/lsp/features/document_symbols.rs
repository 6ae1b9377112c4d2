//! The outline: the module's global functions (with their signatures) and
//! type definitions (with their constructors).

use super::types::global_signature;
use crate::lsp::analysis::Analysis;
use relay_syntax::{SyntaxKind::*, SyntaxNode, SyntaxToken, TextRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    Function,
    /// A type definition (an algebraic data type).
    Type,
    Constructor,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub detail: Option<String>,
    pub kind: SymbolKind,
    /// The whole definition.
    pub range: TextRange,
    /// The name in it.
    pub selection_range: TextRange,
    /// A type's constructors (`Some`, possibly empty, for types only).
    pub children: Option<Vec<Symbol>>,
}

fn first_token(node: &SyntaxNode, kind: relay_syntax::SyntaxKind) -> Option<SyntaxToken> {
    node.children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| t.kind() == kind)
}

pub fn document_symbols(analysis: &Analysis) -> Vec<Symbol> {
    let root = analysis.root();
    let mut out = Vec::new();
    for item in root.children() {
        match item.kind() {
            DEF => {
                let Some(name) = first_token(&item, GLOBAL) else {
                    continue;
                };
                let detail = global_signature(analysis, name.text().trim_start_matches('@'));
                out.push(Symbol {
                    name: name.text().to_string(),
                    detail,
                    kind: SymbolKind::Function,
                    range: item.text_range(),
                    selection_range: name.text_range(),
                    children: None,
                });
            }
            TYPE_DEF | EXTERN_TYPE_DEF => {
                let Some(name) = first_token(&item, IDENT) else {
                    continue;
                };
                let children: Vec<Symbol> = item
                    .descendants()
                    .filter(|n| n.kind() == CTOR_DEF)
                    .filter_map(|ctor| {
                        let token = first_token(&ctor, IDENT)?;
                        Some(Symbol {
                            name: token.text().to_string(),
                            detail: None,
                            kind: SymbolKind::Constructor,
                            range: ctor.text_range(),
                            selection_range: token.text_range(),
                            children: None,
                        })
                    })
                    .collect();
                out.push(Symbol {
                    name: name.text().to_string(),
                    detail: Some("type".to_string()),
                    kind: SymbolKind::Type,
                    range: item.text_range(),
                    selection_range: name.text_range(),
                    children: Some(children),
                });
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// Marks each symbol's range as `<sym KIND NAME>` and its name as
    /// `<name>`, children after their parent.
    fn check(marked: &str) {
        fn flatten(symbols: &[Symbol], out: &mut Vec<(TextRange, String)>) {
            for s in symbols {
                let kind = format!("{:?}", s.kind).to_lowercase();
                out.push((s.range, format!("sym {kind} {}", s.name)));
                out.push((s.selection_range, "name".to_string()));
                flatten(s.children.as_deref().unwrap_or_default(), out);
            }
        }
        fixture::check(marked, |analysis, _| {
            let mut out = Vec::new();
            flatten(&document_symbols(analysis), &mut out);
            out
        });
    }

    #[test]
    fn functions_and_types_with_their_constructors() {
        check(
            "#[version = \"0.0.5\"]\n\
             <sym type T>type <name>T</name> { <sym constructor A><name>A</name></sym>, <sym constructor B><name>B</name>(int32)</sym> }</sym>\n\
             // a comment\n\
             <sym function @f>def <name>@f</name>(%x: float32) { %x }</sym>\n",
        );
    }

    #[test]
    fn details_are_signatures_and_types_list_their_constructors() {
        let analysis =
            fixture::analysis("#[version = \"0.0.5\"]\ntype T { A }\ndef @f(%x: float32) { %x }\n");
        let symbols = document_symbols(&analysis);
        assert_eq!(symbols[0].detail.as_deref(), Some("type"));
        assert_eq!(symbols[0].children.as_ref().map(Vec::len), Some(1));
        assert_eq!(
            symbols[1].detail.as_deref(),
            Some("def @f(%x: float32) -> float32")
        );
        assert_eq!(symbols[1].children, None);
    }
}
