//! The check every formatting run ends with: the result parses without
//! errors, has the input's tokens in the input's order and the input's
//! comments in the input's order, so it means what the input means and has
//! lost no text. The tokens and the comments are compared as two sequences:
//! a line comment written before a `,` or `;` moves after it. The only tokens
//! the layout may add are the commas TVM writes after the last match arm and
//! constructor (a comma right before `}` is ignored on both sides).

use super::FormatError;
use crate::{parse_with, Entry, ParseOptions, SyntaxKind, SyntaxNode, SyntaxToken, TextRange};

#[cfg(test)]
pub(crate) fn same_tokens(
    input: &SyntaxNode,
    formatted: &str,
    entry: Entry,
) -> Result<(), FormatError> {
    same_tokens_with(input, formatted, entry, ParseOptions::STRICT)
}

/// [`same_tokens`] for a text read with `options`.
pub(crate) fn same_tokens_with(
    input: &SyntaxNode,
    formatted: &str,
    entry: Entry,
    options: ParseOptions,
) -> Result<(), FormatError> {
    let reparsed = parse_with(formatted, entry, options);
    if let Some(error) = reparsed.errors().first() {
        return Err(FormatError::unsupported(
            format!(
                "`relay fmt` would write text that does not parse ({}); the file was left unchanged",
                error.message()
            ),
            input.text_range(),
        ));
    }
    let (before, before_comments) = significant(input);
    let (after, after_comments) = significant(&reparsed.syntax_node());
    compare(&before, &after, input)?;
    compare(&before_comments, &after_comments, input)?;
    Ok(())
}

fn compare(
    before: &[SyntaxToken],
    after: &[SyntaxToken],
    input: &SyntaxNode,
) -> Result<(), FormatError> {
    for (index, old) in before.iter().enumerate() {
        match after.get(index) {
            Some(new) if new.kind() == old.kind() && new.text() == old.text() => {}
            _ => {
                return Err(FormatError::unsupported(
                    format!(
                        "`relay fmt` would change or move this {} (a layout rule is wrong); the file was left unchanged",
                        old.kind().describe()
                    ),
                    old.text_range(),
                ))
            }
        }
    }
    if after.len() > before.len() {
        let end = input.text_range().end();
        return Err(FormatError::unsupported(
            "`relay fmt` would add text at the end (a layout rule is wrong); the file was left unchanged"
                .to_string(),
            TextRange::empty(end),
        ));
    }
    Ok(())
}

/// The tokens (without commas that stand right before a `}`) and the
/// comments, in order.
fn significant(root: &SyntaxNode) -> (Vec<SyntaxToken>, Vec<SyntaxToken>) {
    let mut tokens: Vec<SyntaxToken> = Vec::new();
    let mut comments: Vec<SyntaxToken> = Vec::new();
    for token in root
        .descendants_with_tokens()
        .filter_map(|element| element.into_token())
    {
        match token.kind() {
            SyntaxKind::WHITESPACE => {}
            SyntaxKind::LINE_COMMENT | SyntaxKind::BLOCK_COMMENT => comments.push(token),
            SyntaxKind::R_CURLY => {
                if tokens.last().is_some_and(|t| t.kind() == SyntaxKind::COMMA) {
                    tokens.pop();
                }
                tokens.push(token);
            }
            _ => tokens.push(token),
        }
    }
    (tokens, comments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_module;

    fn refusal(input: &str, formatted: &str) -> (String, TextRange) {
        let root = parse_module(input).syntax_node();
        match same_tokens(&root, formatted, Entry::Module) {
            Err(FormatError::Unsupported { message, range }) => (message, range),
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_layout_that_loses_or_changes_text_is_refused_at_its_place() {
        let input = "#[version = \"0.0.5\"]\ndef @main() { /* kept */ 1 }\n";
        let (message, range) = refusal(input, "#[version = \"0.0.5\"]\ndef @main() { 1 }\n");
        assert!(message.contains("comment"), "{message}");
        assert_eq!(&input[range], "/* kept */");
        let (message, range) = refusal(
            input,
            "#[version = \"0.0.5\"]\ndef @main() { /* kept */ 2 }\n",
        );
        assert!(message.contains("integer"), "{message}");
        assert_eq!(&input[range], "1");
        let (message, _) = refusal(
            input,
            "#[version = \"0.0.5\"]\ndef @main() { /* kept */ 1\n",
        );
        assert!(message.contains("does not parse"), "{message}");
    }

    #[test]
    fn only_commas_before_a_closing_brace_may_be_added() {
        let root = parse_module("#[version = \"0.0.5\"]\ntype T { A, B }\n").syntax_node();
        assert!(same_tokens(
            &root,
            "#[version = \"0.0.5\"]\ntype T {\n  A,\n  B,\n}\n",
            Entry::Module
        )
        .is_ok());
        assert!(same_tokens(
            &root,
            "#[version = \"0.0.5\"]\ntype T { A, B }\ntype U { C }\n",
            Entry::Module
        )
        .is_err());
    }
}
