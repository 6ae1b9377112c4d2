//! One top-level `def` parsed on its own, without the text around it: what
//! the incremental re-parse (`reparse.rs`) does with an edited definition
//! and the parallel parse (`parallel_parse.rs`) with each definition of a
//! large module.
//!
//! The result is what a parse of the whole text gives for that definition
//! when its boundaries cannot depend on what is around it. Here the
//! fragment itself is checked:
//!
//! * it lexes without errors (an unterminated string, comment or `#[…`
//!   would, in the whole text, run on past the definition) and its last
//!   token is the `}` that closes the `def`'s body, at its very end (no
//!   trivia after it);
//! * parsed alone, it is exactly one `def`, and the parser never reached
//!   the end of the fragment inside it (no error there: a body left
//!   unclosed would, in the whole text, swallow the definitions after it);
//! * nothing in it is accepted leniently (a full parse reports the
//!   leniencies together, sorted, one warning per name).
//!
//! What lies outside the fragment is the callers' to check: nothing before
//! it that changes how it is read (an `extern type`, after which TVM reads
//! no definition; a nesting limit, reported once per parse), and the text
//! after it.

use crate::parser::{self, grammar};
use crate::{build_tree, lexer, ParseOptions, SyntaxError, SyntaxKind, SyntaxNode};
use rowan::{GreenNode, TextRange, TextSize};

/// Parses `fragment` as one `def`, if it is exactly one whose boundaries
/// cannot depend on what is around it (see the module docs): the green
/// node of the `def` and its errors (relative to the fragment, sorted, one
/// per offset).
pub(crate) fn parse_lone_def(
    fragment: &str,
    options: ParseOptions,
) -> Option<(GreenNode, Vec<SyntaxError>)> {
    let (lexed, lex_errors, frontend_names) = lexer::lex_with(
        fragment,
        build_tree::Lexed::new(fragment.len()),
        options.lenient,
    );
    if !lex_errors.is_empty() || !frontend_names.is_empty() {
        return None;
    }
    let end = TextSize::of(fragment);
    // Ends with a `}` token: no trivia after it, nothing that could run on.
    if lexed.last_token()
        != Some((
            SyntaxKind::R_CURLY,
            TextRange::at(end - TextSize::from(1), 1.into()),
        ))
    {
        return None;
    }
    let mut p = parser::Parser::new(fragment, lexed);
    p.lenient = options.lenient;
    if !grammar::lone_def(&mut p) {
        return None;
    }
    let (green, mut errors, leniencies) = p.finish();
    if !leniencies.is_empty() {
        return None;
    }
    if errors.iter().any(|e| e.range().start() >= end) {
        return None;
    }
    let wrapper = SyntaxNode::new_root(green);
    let mut children = wrapper.children_with_tokens();
    let def = children.next()?.into_node()?;
    if def.kind() != SyntaxKind::DEF || children.next().is_some() {
        return None;
    }
    if def.text_range() != TextRange::up_to(end) {
        return None;
    }
    errors.sort_by_key(|e| e.range().start());
    errors.dedup_by_key(|e| e.range().start());
    Some((def.green().to_owned(), errors))
}
