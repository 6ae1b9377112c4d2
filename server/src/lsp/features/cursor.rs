//! What is under the cursor: the token (a name when one touches the
//! offset, else any token that is not trivia) and the `def` around it.

use crate::lsp::analysis::Analysis;
use relay_syntax::ast::token_at_offset;
use relay_syntax::{SyntaxKind, SyntaxKind::*, SyntaxNode, SyntaxToken, TextRange, TextSize};

/// Whether a token is a name (`%x`, `%0`, `@f`, an identifier).
pub fn is_name(kind: SyntaxKind) -> bool {
    matches!(kind, LOCAL | GRAPH | GLOBAL | IDENT)
}

/// The token under the cursor: a name if one touches the offset, else any
/// non-trivia token.
pub fn token_at(root: &SyntaxNode, offset: TextSize) -> Option<SyntaxToken> {
    if !root.text_range().contains_inclusive(offset) {
        return None;
    }
    let tokens: Vec<SyntaxToken> = token_at_offset(root, offset).collect();
    tokens
        .iter()
        .find(|t| is_name(t.kind()))
        .or_else(|| tokens.iter().find(|t| !t.kind().is_trivia()))
        .cloned()
}

/// The name of a `def` (without the `@`).
pub fn def_name(def: &SyntaxNode) -> Option<String> {
    def.children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| t.kind() == GLOBAL)
        .map(|t| t.text().trim_start_matches('@').to_string())
}

/// The name of the `def` enclosing all of `range`, if one does.
pub fn enclosing_def(analysis: &Analysis, range: TextRange) -> Option<String> {
    let root = analysis.root();
    root.children()
        .filter(|n| n.kind() == DEF)
        .find(|n| n.text_range().contains_range(range))
        .and_then(|n| def_name(&n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    fn token(marked: &str) -> Option<String> {
        let fixture = fixture::parse(marked);
        let root = relay_syntax::parse_module(&fixture.text).syntax_node();
        token_at(&root, fixture.cursor()).map(|t| t.text().to_string())
    }

    #[test]
    fn names_win_over_punctuation_and_trivia_is_skipped() {
        assert_eq!(token("def @f(%x) { %x$0, 1 }").as_deref(), Some("%x"));
        assert_eq!(token("def @f(%x) { (%x, $01) }").as_deref(), Some("1"));
        assert_eq!(token("def @f(%x) { %x }  $0").as_deref(), None);
        assert_eq!(token("def @f() {$0 1 }").as_deref(), Some("{"));
    }

    #[test]
    fn the_def_around_a_range() {
        let at = |marked: &str| {
            let fixture = fixture::parse(marked);
            enclosing_def(&fixture::analysis(&fixture.text), fixture.range("r"))
        };
        let module = |a: &str, b: &str| format!("def @f() {{ {a} }}\ndef @g() {{ {b} }}");
        assert_eq!(at(&module("<r>1</r>", "2")).as_deref(), Some("f"));
        assert_eq!(at(&module("1", "<r></r>2")).as_deref(), Some("g"));
        assert_eq!(at(&module("<r>1", "2</r>")), None);
    }
}
