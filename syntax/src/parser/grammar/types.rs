//! Types: tensors with shapes, dtype scalars, tuples, function types, type
//! variables and ADT applications, and `_`; plus two forms TVM prints but
//! cannot read, so that everything our printer writes reads back:
//! `ref(T)` and `fn [A](A) -> A`.

use super::delimited;
use crate::parser::Parser;
use crate::token_set::TokenSet;
use crate::SyntaxKind::*;

/// What can start a type.
pub(super) const TYPE_FIRST: TokenSet = TokenSet::new(&[L_PAREN, FN_KW, IDENT, UNDERSCORE, REF_KW]);

/// Whether an identifier denotes a dtype (and so a rank-0 tensor type).
/// TVM decides on the prefix alone, so an ADT named `intlist` is unusable.
pub fn is_dtype_name(name: &str) -> bool {
    ["int", "uint", "float", "bool"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// `type ::= '(' types ')' | 'fn' '(' types ')' '->' type
///         | 'Tensor' '[' shape ',' IDENT ']' | IDENT ('[' types ']')? | '_'`
pub(super) fn type_(p: &mut Parser<'_>) {
    if !p.enter() {
        p.skip_nested();
        return;
    }
    match p.current() {
        L_PAREN => {
            let m = p.start();
            type_list(p, (L_PAREN, COMMA, R_PAREN));
            m.complete(p, TUPLE_TYPE);
        }
        FN_KW => {
            let m = p.start();
            p.bump(FN_KW);
            // Type parameters are printed by TVM but not read by it; we read them.
            if p.at(L_BRACK) {
                super::items::type_param_list(p);
            }
            type_list(p, (L_PAREN, COMMA, R_PAREN));
            p.expect(MINUS);
            p.expect(R_ANGLE);
            type_(p);
            m.complete(p, FN_TYPE);
        }
        IDENT if p.nth_text(0) == "Tensor" => tensor_type(p),
        IDENT if is_dtype_name(p.nth_text(0)) => {
            p.bump_node(SCALAR_TYPE);
        }
        IDENT => {
            let m = p.start();
            p.bump(IDENT);
            if p.at(L_BRACK) {
                let a = p.start();
                type_list(p, (L_BRACK, COMMA, R_BRACK));
                a.complete(p, TYPE_ARG_LIST);
            }
            m.complete(p, NAMED_TYPE);
        }
        UNDERSCORE => {
            let m = p.start();
            p.bump(UNDERSCORE);
            m.complete(p, INCOMPLETE_TYPE);
        }
        REF_KW => {
            let m = p.start();
            p.bump(REF_KW);
            let open = p.current_range();
            if p.expect(L_PAREN) {
                type_(p);
                p.expect_closer(open, R_PAREN);
            }
            m.complete(p, REF_TYPE);
        }
        _ => {
            let found = p.current().describe();
            p.error(format!("failed to parse type found {found}"));
        }
    }
    p.leave();
}

fn type_list(
    p: &mut Parser<'_>,
    delims: (crate::SyntaxKind, crate::SyntaxKind, crate::SyntaxKind),
) {
    delimited(p, delims, TYPE_FIRST, &mut type_, None);
}

/// `'Tensor' '[' '(' dim (',' dim)* ')' ',' IDENT ']'`
fn tensor_type(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(IDENT);
    let open = p.current_range();
    if p.expect(L_BRACK) {
        let s = p.start();
        delimited(
            p,
            (L_PAREN, COMMA, R_PAREN),
            TokenSet::new(&[INT, QUESTION, META_REF]),
            &mut dim,
            None,
        );
        s.complete(p, SHAPE);
        // No dtype after the comma is `void` (TVM reads "" as void, and its
        // printer writes void that way: `Tensor[(3), ]`).
        if p.expect(COMMA) && !p.at(R_BRACK) {
            p.expect(IDENT);
        }
        p.expect_closer(open, R_BRACK);
    }
    m.complete(p, TENSOR_TYPE);
}

/// `dim ::= INT | '?' | META`
fn dim(p: &mut Parser<'_>) {
    match p.current() {
        INT | QUESTION | META_REF => {
            p.bump_node(DIM);
        }
        _ => p.error_expected(INT.describe()),
    }
}
