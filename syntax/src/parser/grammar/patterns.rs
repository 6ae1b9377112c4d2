//! Match patterns: `_`, `%x: T`, `Ctor(p, …)`, `(p, …)`.

use super::delimited;
use super::types::type_;
use crate::parser::Parser;
use crate::token_set::TokenSet;
use crate::SyntaxKind::*;

/// What can start a pattern.
pub(super) const PAT_FIRST: TokenSet = TokenSet::new(&[UNDERSCORE, LOCAL, IDENT, L_PAREN]);

/// `pattern ::= '_' | LOCAL (':' type)? | IDENT pat_list? | pat_list`
pub(super) fn pattern(p: &mut Parser<'_>) {
    if !p.enter() {
        p.skip_nested();
        return;
    }
    match p.current() {
        UNDERSCORE => {
            let m = p.start();
            p.bump(UNDERSCORE);
            m.complete(p, WILDCARD_PAT);
        }
        LOCAL => {
            let m = p.start();
            p.bump(LOCAL);
            if p.eat(COLON) {
                type_(p);
            }
            m.complete(p, VAR_PAT);
        }
        IDENT => {
            let m = p.start();
            p.bump(IDENT);
            if p.at(L_PAREN) {
                pat_list(p);
            }
            m.complete(p, CTOR_PAT);
        }
        L_PAREN => {
            let m = p.start();
            pat_list(p);
            m.complete(p, TUPLE_PAT);
        }
        _ => p.error_expected("a pattern"),
    }
    p.leave();
}

/// `'(' (pattern (',' pattern)* ','?)? ')'`
fn pat_list(p: &mut Parser<'_>) {
    let m = p.start();
    delimited(p, (L_PAREN, COMMA, R_PAREN), PAT_FIRST, &mut pattern, None);
    m.complete(p, PAT_LIST);
}
