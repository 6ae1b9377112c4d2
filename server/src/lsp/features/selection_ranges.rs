//! Selection ranges ("expand selection"): from the cursor outwards, the
//! token, then every enclosing syntax node whose range is larger than the
//! last one — an argument, the argument list, the call, the binding, the
//! body, the definition, the file. Nodes that cover exactly the same text
//! as their child (a path around its name, an expression statement) add no
//! step, and leading/trailing trivia never becomes part of a step: the
//! ranges are those of the nodes, which start and end at tokens.

use super::cursor::token_at;
use crate::lsp::analysis::Analysis;
use relay_syntax::ast::token_at_offset;
use relay_syntax::{SyntaxKind, TextRange, TextSize};

/// The ranges to select at `offset`, innermost first; each contains the
/// one before it and is strictly larger. Empty past the end of the text.
pub fn selection_ranges(analysis: &Analysis, offset: TextSize) -> Vec<TextRange> {
    let root = analysis.root();
    if offset > root.text_range().end() {
        return Vec::new();
    }
    // The name or other token the cursor touches (the cursor just after
    // `%x` in `%x, …` or `%x )` selects `%x`); in whitespace, the nodes
    // around it.
    let Some(token) = token_at(&root, offset).or_else(|| token_at_offset(&root, offset).next())
    else {
        return Vec::new();
    };
    let mut out: Vec<TextRange> = Vec::new();
    let mut push = |range: TextRange| {
        if out
            .last()
            .is_none_or(|last| range != *last && range.contains_range(*last))
        {
            out.push(range);
        }
    };
    // A comment is a step of its own; whitespace is not.
    if token.kind() != SyntaxKind::WHITESPACE {
        push(token.text_range());
    }
    for node in token.parent_ancestors() {
        push(node.text_range());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// The fixture marks the expected steps `<s1>`, `<s2>`, … innermost
    /// first (the file itself, the last step, is not marked).
    fn check(marked: &str) {
        let fixture = fixture::parse(marked);
        let analysis = fixture::analysis(&fixture.text);
        let found = selection_ranges(&analysis, fixture.cursor());
        let expected: Vec<TextRange> = (1..=fixture.ranges.len())
            .map(|i| fixture.range(&format!("s{i}")))
            .collect();
        let file = analysis.root().text_range();
        assert_eq!(found.last(), Some(&file), "the last step is the file");
        assert_eq!(&found[..found.len() - 1], &expected[..], "for {marked}");
    }

    const V: &str = "#[version = \"0.0.5\"]\n";

    #[test]
    fn from_an_argument_out_to_the_definition() {
        check(&format!(
            "{V}<s5>def @f(%x: float32) <s4>{{\n  <s3>add<s2>(<s1>%x$0</s1>, 1f)</s2></s3>\n}}</s4></s5>\n"
        ));
    }

    #[test]
    fn a_cursor_after_a_name_selects_the_name_not_the_space() {
        check(&format!(
            "{V}<s5>def @f(%x: float32) <s4>{{ <s3>negative<s2>(<s1>%x</s1>$0 )</s2></s3> }}</s4></s5>"
        ));
    }

    #[test]
    fn steps_only_grow() {
        let text = format!("{V}def @f(%x: Tensor[(1, 2), float32]) {{ (%x, %x.0) }}\n");
        let analysis = fixture::analysis(&text);
        for offset in 0..=text.len() as u32 {
            let steps = selection_ranges(&analysis, offset.into());
            for pair in steps.windows(2) {
                assert!(
                    pair[1].contains_range(pair[0]) && pair[1] != pair[0],
                    "at {offset}"
                );
            }
        }
        assert!(selection_ranges(&analysis, (text.len() as u32 + 5).into()).is_empty());
    }
}
