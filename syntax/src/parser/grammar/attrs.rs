//! Attributes: `key=value` items of calls, function parameter lists and
//! parameter `{…}` annotations (TVM's `ParseAttrs`, `ParseAttributeValue`).

use super::delimited;
use super::exprs::atomic_expr;
use crate::parser::Parser;
use crate::token_set::TokenSet;
use crate::SyntaxKind::*;

/// What can start an attribute value.
const VALUE_FIRST: TokenSet = TokenSet::new(&[
    INT,
    FLOAT,
    BOOL,
    STRING,
    META_REF,
    L_BRACK,
    L_PAREN,
    IDENT,
    LOCAL,
    GLOBAL,
    GRAPH,
    FN_KW,
    IF_KW,
    REF_KW,
    REF_READ_KW,
    REF_WRITE_KW,
]);

/// TVM switches from arguments to attributes when it sees an identifier
/// followed by `=` (so the first key cannot be dotted).
pub(super) fn at_attr_start(p: &Parser<'_>) -> bool {
    p.at(IDENT) && p.nth_at(1, EQ)
}

/// `attr (','? attr)* ','?` — commas between attributes are optional.
pub(super) fn attr_list(p: &mut Parser<'_>) {
    while p.at(IDENT) {
        attr(p);
        p.eat(COMMA);
    }
}

/// `IDENT ('.' IDENT)* '=' attr_value`
fn attr(p: &mut Parser<'_>) {
    let m = p.start();
    let k = p.start();
    dotted_name(p);
    k.complete(p, ATTR_KEY);
    if p.expect(EQ) {
        attr_value(p);
    }
    m.complete(p, ATTR);
}

/// `IDENT ('.' IDENT)*`, where (as in TVM) a `.` not followed by an
/// identifier is consumed and ends the name.
pub(super) fn dotted_name(p: &mut Parser<'_>) {
    p.bump(IDENT);
    while p.at(DOT) {
        p.bump(DOT);
        if !p.eat(IDENT) {
            break;
        }
    }
}

/// A literal, a meta reference, `[v, …]`, `(v)`, `None`/`nullptr`, or an
/// atomic expression.
fn attr_value(p: &mut Parser<'_>) {
    if !p.enter() {
        p.skip_nested();
        return;
    }
    match p.current() {
        INT | FLOAT | BOOL | STRING => {
            p.bump_node(LITERAL);
        }
        META_REF => {
            let m = p.start();
            p.bump(META_REF);
            m.complete(p, META_EXPR);
        }
        L_BRACK => {
            let m = p.start();
            delimited(
                p,
                (L_BRACK, COMMA, R_BRACK),
                VALUE_FIRST,
                &mut attr_value,
                None,
            );
            m.complete(p, ATTR_LIST_VALUE);
        }
        L_PAREN => {
            let m = p.start();
            let open = p.current_range();
            p.bump(L_PAREN);
            attr_value(p);
            p.expect_closer(open, R_PAREN);
            m.complete(p, ATTR_PAREN_VALUE);
        }
        IDENT if matches!(p.nth_text(0), "None" | "nullptr") => {
            let m = p.start();
            p.bump(IDENT);
            m.complete(p, ATTR_NULL_VALUE);
        }
        _ => {
            atomic_expr(p);
        }
    }
    p.leave();
}
