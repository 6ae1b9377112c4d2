//! Semantic tokens: what each token of the text is (keyword, parameter,
//! local, global, operator, constructor, type, …) and whether it declares
//! it. The order of [`TokenKind`] is the legend's (see
//! `to_proto::TOKEN_TYPES`).

use crate::lsp::analysis::Analysis;
use relay_passes::lower::NameKind;
use relay_syntax::ast::token_at_offset;
use relay_syntax::{SyntaxElement, SyntaxKind::*, SyntaxToken, TextRange};
use std::collections::HashSet;

/// A token's type, in legend order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    Keyword,
    Variable,
    Parameter,
    Function,
    Type,
    TypeParameter,
    Number,
    String,
    Comment,
    EnumMember,
    Property,
    Operator,
    Macro,
}

/// A token's modifiers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// The token declares the name.
    pub declaration: bool,
    /// An operator or built-in type.
    pub default_library: bool,
}

const NONE: Modifiers = Modifiers {
    declaration: false,
    default_library: false,
};
const DECLARATION: Modifiers = Modifiers {
    declaration: true,
    default_library: false,
};
const DEFAULT_LIBRARY: Modifiers = Modifiers {
    declaration: false,
    default_library: true,
};

/// One classified token of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SemanticToken {
    pub range: TextRange,
    pub kind: TokenKind,
    pub modifiers: Modifiers,
}

fn classify(
    analysis: &Analysis,
    token: &SyntaxToken,
    ctors: &HashSet<&str>,
) -> Option<(TokenKind, Modifiers)> {
    use TokenKind as T;
    let parent = token.parent().map(|p| p.kind());
    Some(match token.kind() {
        LET_KW | FN_KW | DEF_KW | IF_KW | ELSE_KW | TYPE_KW | MATCH_KW | MATCH_Q_KW | EXTERN_KW
        | FREE_VAR_KW | REF_KW | REF_READ_KW | REF_WRITE_KW => (T::Keyword, NONE),
        LOCAL => match parent {
            Some(PARAM) => (T::Parameter, DECLARATION),
            Some(LET_STMT | VAR_PAT | FREE_VAR_STMT) => (T::Variable, DECLARATION),
            _ => (T::Variable, NONE),
        },
        GRAPH => match parent {
            Some(GRAPH_BINDING) => (T::Variable, DECLARATION),
            _ => (T::Variable, NONE),
        },
        GLOBAL => match parent {
            Some(DEF) => (T::Function, DECLARATION),
            _ => (T::Function, NONE),
        },
        IDENT => match parent {
            Some(PATH_EXPR) | Some(CTOR_PAT) => {
                if ctors.contains(token.text()) {
                    (T::EnumMember, NONE)
                } else {
                    (T::Function, DEFAULT_LIBRARY)
                }
            }
            Some(ATTR_KEY) | Some(ATTR) => (T::Property, NONE),
            Some(CTOR_DEF) => (T::EnumMember, DECLARATION),
            Some(TYPE_PARAM) => (T::TypeParameter, DECLARATION),
            Some(TYPE_DEF | EXTERN_TYPE_DEF) => (T::Type, DECLARATION),
            Some(NAMED_TYPE) => {
                let offset = token.text_range().start();
                let kind = analysis
                    .names
                    .at(offset)
                    .map(|o| analysis.names.kind(o.def));
                if kind == Some(NameKind::TypeParam) {
                    (T::TypeParameter, NONE)
                } else {
                    (T::Type, NONE)
                }
            }
            Some(TENSOR_TYPE | SCALAR_TYPE | DIM) => (T::Type, DEFAULT_LIBRARY),
            _ => return None,
        },
        INT | FLOAT => (T::Number, NONE),
        BOOL => (T::Keyword, NONE),
        STRING => (T::String, NONE),
        LINE_COMMENT | BLOCK_COMMENT => (T::Comment, NONE),
        META_REF | VERSION_ATTR => (T::Macro, NONE),
        PLUS | MINUS | STAR | SLASH | L_ANGLE | R_ANGLE | BANG if parent == Some(BIN_EXPR) => {
            (T::Operator, NONE)
        }
        _ => return None,
    })
}

/// The classified tokens that touch `range` (all when `None`), in text
/// order. A token may span lines (a block comment): the protocol's
/// encoding splits it.
pub fn semantic_tokens(analysis: &Analysis, range: Option<TextRange>) -> Vec<SemanticToken> {
    let ctor_names: Vec<String> = analysis
        .module()
        .type_definitions()
        .flat_map(|(_, d)| d.constructors.iter().map(|c| c.name().to_string()))
        .collect();
    let ctors: HashSet<&str> = ctor_names.iter().map(String::as_str).collect();
    let root = analysis.root();
    let tokens: Box<dyn Iterator<Item = SyntaxToken>> = match range {
        Some(range) => match root.covering_element(range) {
            // The tokens of the range only, from the first on (a viewport
            // of a large module, not every token of the definition it is in).
            SyntaxElement::Node(node) => {
                let within = node.text_range();
                let first = token_at_offset(&node, range.start()).left_biased();
                Box::new(
                    std::iter::successors(first, SyntaxToken::next_token)
                        .take_while(move |t| {
                            t.text_range().start() <= range.end()
                                && within.contains_range(t.text_range())
                        })
                        .filter(move |t| t.text_range().intersect(range).is_some()),
                )
            }
            SyntaxElement::Token(token) => Box::new(std::iter::once(token)),
        },
        None => Box::new(
            root.descendants_with_tokens()
                .filter_map(|e| e.into_token()),
        ),
    };
    tokens
        .filter_map(|token| {
            let (kind, modifiers) = classify(analysis, &token, &ctors)?;
            Some(SemanticToken {
                range: token.text_range(),
                kind,
                modifiers,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// Marks each token as `<kind[ decl][ lib]>`, kinds in lower case.
    fn tag(token: &SemanticToken) -> String {
        let mut tag = format!("{:?}", token.kind).to_lowercase();
        if token.modifiers.declaration {
            tag.push_str(" decl");
        }
        if token.modifiers.default_library {
            tag.push_str(" lib");
        }
        tag
    }

    fn check(marked: &str) {
        fixture::check(marked, |analysis, _| {
            semantic_tokens(analysis, None)
                .iter()
                .map(|t| (t.range, tag(t)))
                .collect()
        });
    }

    #[test]
    fn names_say_what_they_are_and_where_they_are_declared() {
        check(
            "<macro>#[version = \"0.0.5\"]</macro>\n\
             <keyword>def</keyword> <function decl>@f</function>(<parameter decl>%x</parameter>: <type lib>float32</type>) {\n  \
               <keyword>let</keyword> <variable decl>%y</variable> = <function lib>nn</function>.<function lib>relu</function>(<variable>%x</variable>);\n  \
               <function>@f</function>(<variable>%y</variable>)\n\
             }\n",
        );
    }

    #[test]
    fn constructors_literals_comments_and_operators() {
        check(
            "<macro>#[version = \"0.0.5\"]</macro>\n\
             <keyword>type</keyword> <type decl>T</type> { <enummember decl>A</enummember> }\n\
             <comment>// note</comment>\n\
             <keyword>def</keyword> <function decl>@f</function>() { (<enummember>A</enummember>, <number>1</number>, <number>2f</number>, <keyword>True</keyword>) }\n",
        );
    }

    #[test]
    fn a_range_asks_for_the_tokens_it_touches() {
        let fixture = fixture::parse(
            "#[version = \"0.0.5\"]\ndef @f(%x: float32) {\n  <r>add(%x, %x)</r>\n}\n",
        );
        let analysis = fixture::analysis(&fixture.text);
        let kinds: Vec<String> = semantic_tokens(&analysis, Some(fixture.range("r")))
            .iter()
            .map(tag)
            .collect();
        assert_eq!(kinds, ["function lib", "variable", "variable"]);
    }

    /// A range request walks only the tokens of its range; the answer is
    /// that of the walk over the whole node covering the range (what it
    /// did before), for every range over a small module.
    #[test]
    fn a_range_walks_only_its_tokens_with_the_same_answer() {
        let text = "#[version = \"0.0.5\"]\ntype T { A }\n// note\ndef @f(%x: float32) {\n  let %y = add(%x, %x) /* c */;\n  (%y, A, 1f)\n}\ndef @g() { @f(2f) }\n";
        let analysis = fixture::analysis(text);
        let ctors = HashSet::from(["A"]);
        let root = analysis.root();
        let len = text.len() as u32;
        for start in 0..=len {
            for end in start..=len {
                let range = TextRange::new(start.into(), end.into());
                let expected: Vec<SemanticToken> = match root.covering_element(range) {
                    SyntaxElement::Node(node) => node
                        .descendants_with_tokens()
                        .filter_map(|e| e.into_token())
                        .filter(|t| t.text_range().intersect(range).is_some())
                        .collect::<Vec<_>>(),
                    SyntaxElement::Token(token) => vec![token],
                }
                .into_iter()
                .filter_map(|token| {
                    let (kind, modifiers) = classify(&analysis, &token, &ctors)?;
                    Some(SemanticToken {
                        range: token.text_range(),
                        kind,
                        modifiers,
                    })
                })
                .collect();
                assert_eq!(
                    semantic_tokens(&analysis, Some(range)),
                    expected,
                    "{range:?}"
                );
            }
        }
    }
}
