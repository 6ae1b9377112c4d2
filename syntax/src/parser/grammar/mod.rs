//! The Relay grammar, as TVM v0.13's recursive-descent parser (`parser.cc`)
//! accepts it, written against the parser core's markers.
//!
//! Each function parses one construct and documents the rule it follows.
//! Quirks of TVM's grammar are kept where they decide what is accepted (a
//! comma is required after the first element of a list and optional after
//! it; `=>`, `<=`, `==` must touch), so that we accept exactly what TVM
//! accepts, but every rejection gets a precise error and parsing goes on.

mod attrs;
mod exprs;
mod items;
mod patterns;
pub(crate) mod types;

pub(crate) use self::items::lone_def;
use crate::parser::Parser;
use crate::token_set::TokenSet;
use crate::SyntaxKind::{self, *};
use rowan::TextRange;

pub(crate) use items::{expr_file, is_expression_file, source_file};
pub use types::is_dtype_name;

/// Tokens at which a list or block stops skipping and hands control back up.
pub(super) const STOP: TokenSet = TokenSet::new(&[
    R_PAREN,
    R_BRACK,
    R_CURLY,
    SEMICOLON,
    DEF_KW,
    TYPE_KW,
    EXTERN_KW,
    METADATA,
    VERSION_ATTR,
]);

/// Parses `open elem (sep? elem)* sep? close` as TVM's `ParseSequence` does:
/// after the first element a separator is required; after that it is
/// optional. `before_close`, when given, may parse trailing attributes (it
/// returns true when it did, and then only `close` may follow).
pub(super) fn delimited(
    p: &mut Parser<'_>,
    (open, sep, close): (SyntaxKind, SyntaxKind, SyntaxKind),
    elem_first: TokenSet,
    elem: &mut dyn FnMut(&mut Parser<'_>),
    mut before_close: Option<&mut dyn FnMut(&mut Parser<'_>) -> bool>,
) {
    let open_range = p.current_range();
    if !p.expect(open) {
        return;
    }
    let mut first = true;
    loop {
        if p.eat(close) {
            return;
        }
        if let Some(attrs) = before_close.as_mut() {
            if attrs(p) {
                expect_close(p, open_range, close);
                return;
            }
        }
        if !first && (p.at(EOF) || p.at_ts(STOP)) {
            p.error_unclosed(open_range, close);
            return;
        }
        let before = p.position();
        elem(p);
        if p.position() == before && !p.at(sep) && !p.at(close) {
            // The element reported why it could not start here; what
            // follows up to the next separator belongs to the same broken
            // element and gets no error of its own.
            if !(p.at(EOF) || p.at_ts(STOP)) {
                p.recover_until(TokenSet::new(&[sep, close]));
            }
            if p.at(EOF) || p.at_ts(STOP) && !p.at(close) {
                p.error_unclosed(open_range, close);
                return;
            }
            first = false;
            p.eat(sep);
            continue;
        }
        if first {
            first = false;
            if p.eat(close) {
                return;
            }
            if !p.eat(sep) {
                p.error_unclosed(open_range, close);
                if !p.at_ts(elem_first) {
                    return;
                }
            }
        } else {
            p.eat(sep);
        }
    }
}

/// Expects the closing token of a list after its attributes, skipping what
/// cannot be there so the list still ends at its own closer.
fn expect_close(p: &mut Parser<'_>, open: TextRange, close: SyntaxKind) {
    if p.eat(close) {
        return;
    }
    p.error_unclosed(open, close);
    let m = p.start();
    let mut skipped = false;
    while !p.at(close) && !p.at(EOF) && !p.at_ts(STOP) {
        p.bump_any();
        skipped = true;
    }
    if skipped {
        m.complete(p, ERROR);
    } else {
        m.abandon(p);
    }
    p.eat(close);
}

/// Parses `{ contents }`, recovering to the matching `}`.
pub(super) fn braced(p: &mut Parser<'_>, contents: &mut dyn FnMut(&mut Parser<'_>)) {
    let open = p.current_range();
    if !p.expect(L_CURLY) {
        return;
    }
    contents(p);
    if p.expect_closer(open, R_CURLY) {
        return;
    }
    // Skip to the `}` that closes this block, stepping over nested groups,
    // unless the text plainly moved on to the next definition.
    let m = p.start();
    let mut skipped = false;
    loop {
        match p.current() {
            EOF | DEF_KW | TYPE_KW | EXTERN_KW | METADATA | R_CURLY => break,
            L_PAREN | L_BRACK | L_CURLY => p.skip_group(),
            _ => p.bump_any(),
        }
        skipped = true;
    }
    if skipped {
        m.complete(p, ERROR);
    } else {
        m.abandon(p);
    }
    p.eat(R_CURLY);
}
