//! The check every formatting run ends with: the result parses without
//! errors and has the input's tokens and comments in the input's order, so
//! it means what the input means and has lost no text. The only tokens the
//! layout may add are the commas TVM writes after the last match arm and
//! constructor (a comma right before `}` is ignored on both sides).

use super::FormatError;
use crate::{parse, Entry, SyntaxKind, SyntaxNode, SyntaxToken, TextRange};

pub(crate) fn same_tokens(
    input: &SyntaxNode,
    formatted: &str,
    entry: Entry,
) -> Result<(), FormatError> {
    let reparsed = parse(formatted, entry);
    if let Some(error) = reparsed.errors().first() {
        return Err(FormatError::unsupported(
            format!(
                "`relay fmt` would write text that does not parse ({}); the file was left unchanged",
                error.message()
            ),
            input.text_range(),
        ));
    }
    let before = significant(input);
    let after = significant(&reparsed.syntax_node());
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

/// The tokens and comments, without whitespace and without commas that
/// stand right before a `}`.
fn significant(root: &SyntaxNode) -> Vec<SyntaxToken> {
    let mut tokens: Vec<SyntaxToken> = Vec::new();
    let mut last_code: Option<usize> = None;
    for token in root
        .descendants_with_tokens()
        .filter_map(|element| element.into_token())
    {
        match token.kind() {
            SyntaxKind::WHITESPACE => continue,
            SyntaxKind::R_CURLY => {
                if let Some(index) = last_code {
                    if tokens[index].kind() == SyntaxKind::COMMA {
                        tokens.remove(index);
                    }
                }
            }
            _ => {}
        }
        if !token.kind().is_trivia() {
            last_code = Some(tokens.len());
        }
        tokens.push(token);
    }
    tokens
}
