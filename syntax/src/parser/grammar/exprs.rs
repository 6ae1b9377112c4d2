//! Expressions: sequences with `let`/graph bindings, infix operators, calls,
//! atoms, `if`, `match`, references, tuples and projections.
//!
//! A sequence (TVM's `ParseExpr`) is kept flat: `%0 = a; %1 = b; c` is one
//! `SEQ_EXPR` with two `GRAPH_BINDING`s and a tail, never a nested chain, so
//! the thousands of bindings of a real model cost no stack depth.

use super::attrs::{at_attr_start, attr_list, dotted_name};
use super::items::fn_rest;
use super::patterns::pattern;
use super::types::type_;
use super::{braced, delimited, STOP};
use crate::parser::{CompletedMarker, Parser};
use crate::token_set::TokenSet;
use crate::SyntaxErrorKind;
use crate::SyntaxKind::{self, *};

/// What can start a statement of a sequence.
pub(super) const EXPR_FIRST: TokenSet = TokenSet::new(&[
    INT,
    FLOAT,
    BOOL,
    LOCAL,
    GLOBAL,
    GRAPH,
    IDENT,
    META_REF,
    FN_KW,
    IF_KW,
    REF_KW,
    REF_READ_KW,
    REF_WRITE_KW,
    L_PAREN,
    L_CURLY,
    LET_KW,
    MATCH_KW,
    MATCH_Q_KW,
    FREE_VAR_KW,
]);

/// The longest chain of infix operators or curried calls that is nested in
/// the tree; longer chains are reported (a tree that deep would overflow the
/// stack of every later recursive pass).
const MAX_CHAIN: usize = 2048;

/// `expr ::= stmt (';' stmt)*` with `let`/graph bindings and `free_var`
/// declarations. A lone expression stays bare (no `SEQ_EXPR` node).
pub(super) fn seq_expr(p: &mut Parser<'_>) {
    if !p.enter() {
        p.skip_nested();
        return;
    }
    let m = p.start();
    let mut is_seq = false;
    let mut has_value = false;
    let mut reported = false;
    loop {
        match p.current() {
            LET_KW => {
                is_seq = true;
                if !let_stmt(p) && (p.at(EOF) || p.at_ts(STOP) || p.at(COMMA)) {
                    // The broken `let` ran to the end of the block: its
                    // error stands for the missing value too.
                    reported = true;
                    break;
                }
                continue;
            }
            GRAPH if p.nth_at(1, EQ) => {
                graph_binding(p);
                is_seq = true;
                continue;
            }
            FREE_VAR_KW => {
                is_seq = true;
                let s = p.start();
                free_var(p);
                let more = p.eat(SEMICOLON);
                s.complete(p, FREE_VAR_STMT);
                if more {
                    continue;
                }
                break;
            }
            _ => {}
        }
        match stmt_expr(p) {
            Some(expr) => {
                has_value = true;
                if p.at(SEMICOLON) {
                    let s = expr.precede(p);
                    p.bump(SEMICOLON);
                    s.complete(p, EXPR_STMT);
                    is_seq = true;
                    continue;
                }
                break;
            }
            None => {
                reported = true;
                if p.at(EOF) || p.at_ts(STOP) && !p.at(SEMICOLON) || p.at(COMMA) {
                    break;
                }
                // Skip what cannot start an expression, then try again.
                is_seq = true;
                let e = p.start();
                p.bump_any();
                while !p.at(EOF) && !p.at_ts(STOP) && !p.at_ts(EXPR_FIRST) && !p.at(COMMA) {
                    p.bump_any();
                }
                e.complete(p, ERROR);
                if p.at(SEMICOLON) {
                    // A statement separator after the garbage: keep going.
                    let s = p.start();
                    p.bump(SEMICOLON);
                    s.complete(p, ERROR);
                }
                if !p.at_ts(EXPR_FIRST) {
                    break;
                }
            }
        }
    }
    if !has_value && !reported {
        p.error_expected("an expression");
    }
    if is_seq {
        m.complete(p, SEQ_EXPR);
    } else {
        m.abandon(p);
    }
    p.leave();
}

/// A statement that yields a value: a block, a match or an infix expression.
fn stmt_expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    match p.current() {
        L_CURLY => Some(block_expr(p)),
        MATCH_KW | MATCH_Q_KW => Some(match_expr(p)),
        _ => binop_expr(p),
    }
}

/// `'let' LOCAL (':' type)? '=' binop ';'`; false when the variable is
/// missing, in which case the rest of the statement, up to its `;`, is
/// (or the end of its list element) is skipped under that one error (a run of `let let let …` is one error, not
/// one per keyword).
fn let_stmt(p: &mut Parser<'_>) -> bool {
    let m = p.start();
    p.bump(LET_KW);
    if !p.expect(LOCAL) {
        p.recover_until(TokenSet::new(&[COMMA]));
        p.eat(SEMICOLON);
        m.complete(p, LET_STMT);
        return false;
    }
    if p.eat(COLON) {
        type_(p);
    }
    if p.expect(EQ) {
        binop_expr(p);
    }
    p.expect(SEMICOLON);
    m.complete(p, LET_STMT);
    true
}

/// `GRAPH '=' binop ';'`
fn graph_binding(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(GRAPH);
    p.bump(EQ);
    binop_expr(p);
    p.expect(SEMICOLON);
    m.complete(p, GRAPH_BINDING);
}

/// `'free_var' LOCAL (':' type)?`
fn free_var(p: &mut Parser<'_>) {
    p.bump(FREE_VAR_KW);
    p.expect(LOCAL);
    if p.eat(COLON) {
        type_(p);
    }
}

/// `{ expr }`: a block with its own scope.
pub(super) fn block_expr(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    braced(p, &mut seq_expr);
    m.complete(p, BLOCK_EXPR)
}

/// The binding power and token count of the infix operator at the cursor.
/// Two-token operators (`<=`, `>=`, `==`, `!=`) must be written without a
/// space, as TVM's tokenizer-level matching requires.
fn current_op(p: &Parser<'_>) -> Option<(u8, usize)> {
    let eq_follows = p.nth_at(1, EQ) && p.nth_joint(1);
    match p.current() {
        STAR | SLASH => Some((12, 1)),
        PLUS | MINUS => Some((10, 1)),
        L_ANGLE | R_ANGLE => Some((8, if eq_follows { 2 } else { 1 })),
        EQ | BANG if eq_follows => Some((7, 2)),
        _ => None,
    }
}

/// `binop ::= call (OP call)*`, left associative, TVM's precedences.
pub(super) fn binop_expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let mut chain = 0;
    binop_bp(p, 0, &mut chain)
}

fn binop_bp(p: &mut Parser<'_>, min_bp: u8, chain: &mut usize) -> Option<CompletedMarker> {
    let mut lhs = call_expr(p)?;
    while let Some((bp, tokens)) = current_op(p) {
        if bp < min_bp {
            break;
        }
        *chain += 1;
        if *chain == MAX_CHAIN {
            p.error_of(
                SyntaxErrorKind::Limit,
                format!(
                "more than {MAX_CHAIN} infix operators in one expression; bind parts with `let`"
            ),
            );
        }
        let m = if *chain >= MAX_CHAIN {
            None
        } else {
            Some(lhs.precede(p))
        };
        for _ in 0..tokens {
            p.bump_any();
        }
        binop_bp(p, bp + 1, chain);
        if let Some(m) = m {
            lhs = m.complete(p, BIN_EXPR);
        }
    }
    Some(lhs)
}

/// `call ::= atomic ('(' call_args ')')*`
fn call_expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let mut callee = atomic_expr(p)?;
    let mut chain = 0;
    while p.at(L_PAREN) {
        chain += 1;
        if chain > MAX_CHAIN {
            p.error_of(
                SyntaxErrorKind::Limit,
                format!("more than {MAX_CHAIN} curried calls in a row"),
            );
            arg_list(p);
            continue;
        }
        let m = callee.precede(p);
        arg_list(p);
        callee = m.complete(p, CALL_EXPR);
    }
    Some(callee)
}

/// `'(' (expr (',' expr)* (',' attr_list)? | attr_list)? ','? ')'`
fn arg_list(p: &mut Parser<'_>) {
    let m = p.start();
    delimited(
        p,
        (L_PAREN, COMMA, R_PAREN),
        EXPR_FIRST,
        &mut seq_expr,
        Some(&mut |p: &mut Parser<'_>| {
            if at_attr_start(p) {
                attr_list(p);
                true
            } else {
                false
            }
        }),
    );
    m.complete(p, ARG_LIST);
}

fn single(p: &mut Parser<'_>, kind: SyntaxKind) -> CompletedMarker {
    p.bump_node(kind)
}

/// `atomic ::= base ('.' INT)?` — one projection at most, as in TVM.
pub(super) fn atomic_expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let base = match p.current() {
        INT | FLOAT | BOOL => single(p, LITERAL),
        LOCAL => single(p, LOCAL_EXPR),
        GLOBAL => single(p, GLOBAL_EXPR),
        GRAPH => single(p, GRAPH_EXPR),
        META_REF => single(p, META_EXPR),
        IDENT => {
            let m = p.start();
            path(p);
            m.complete(p, PATH_EXPR)
        }
        FN_KW => {
            let m = p.start();
            p.bump(FN_KW);
            if p.enter() {
                fn_rest(p);
                p.leave();
            } else {
                p.skip_nested();
            }
            m.complete(p, FN_EXPR)
        }
        IF_KW => if_expr(p),
        REF_KW => ref_expr(p, REF_CREATE_EXPR, 1),
        REF_READ_KW => ref_expr(p, REF_READ_EXPR, 1),
        REF_WRITE_KW => ref_expr(p, REF_WRITE_EXPR, 2),
        L_PAREN => paren_or_tuple(p),
        _ => {
            p.error_expected("an expression");
            return None;
        }
    };
    if p.at(DOT) {
        let m = base.precede(p);
        p.bump(DOT);
        p.expect(INT);
        return Some(m.complete(p, TUPLE_GET_ITEM_EXPR));
    }
    Some(base)
}

/// An operator or constructor name. A `.` before an integer is left for the
/// projection (`Cons.0`); any other trailing `.` is eaten, as TVM does.
fn path(p: &mut Parser<'_>) {
    if p.nth_at(1, DOT) && p.nth_at(2, INT) {
        p.bump(IDENT);
        return;
    }
    dotted_name(p);
}

/// `'if' '(' expr ')' '{' expr '}' 'else' '{' expr '}'`
fn if_expr(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump(IF_KW);
    let c = p.start();
    let open = p.current_range();
    if p.expect(L_PAREN) {
        seq_expr(p);
        p.expect_closer(open, R_PAREN);
    }
    c.complete(p, CONDITION);
    block_expr(p);
    if p.expect(ELSE_KW) {
        block_expr(p);
    }
    m.complete(p, IF_EXPR)
}

/// `ref(e)`, `ref_read(e)`, `ref_write(e, v)`
fn ref_expr(p: &mut Parser<'_>, kind: SyntaxKind, operands: usize) -> CompletedMarker {
    let m = p.start();
    p.bump_any();
    let open = p.current_range();
    if p.expect(L_PAREN) {
        seq_expr(p);
        for _ in 1..operands {
            if p.expect(COMMA) {
                seq_expr(p);
            }
        }
        p.expect_closer(open, R_PAREN);
    }
    m.complete(p, kind)
}

/// `'(' ')'` (unit), `'(' expr ')'`, or `'(' expr ',' (expr ','?)* ')'`.
fn paren_or_tuple(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    let open = p.current_range();
    p.bump(L_PAREN);
    if p.eat(R_PAREN) {
        return m.complete(p, TUPLE_EXPR);
    }
    seq_expr(p);
    if p.eat(R_PAREN) {
        return m.complete(p, PAREN_EXPR);
    }
    if !p.eat(COMMA) {
        p.error_unclosed(open, R_PAREN);
        return m.complete(p, PAREN_EXPR);
    }
    loop {
        if p.eat(R_PAREN) {
            break;
        }
        if p.at(EOF) || p.at_ts(STOP) {
            p.error_unclosed(open, R_PAREN);
            break;
        }
        let before = p.position();
        seq_expr(p);
        if p.position() == before && !p.at(COMMA) && !p.at(R_PAREN) {
            if p.at(EOF) || p.at_ts(STOP) {
                break;
            }
            let e = p.start();
            p.bump_any();
            e.complete(p, ERROR);
        }
        p.eat(COMMA);
    }
    m.complete(p, TUPLE_EXPR)
}

/// `('match' | 'match?') atomic '{' clause (',' clause)* ','? '}'`
fn match_expr(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump_any();
    atomic_expr(p);
    let arms = p.start();
    delimited(
        p,
        (L_CURLY, COMMA, R_CURLY),
        super::patterns::PAT_FIRST,
        &mut match_arm,
        None,
    );
    arms.complete(p, MATCH_ARM_LIST);
    m.complete(p, MATCH_EXPR)
}

/// `pattern '=>' expr` (the `=>` must be written without a space).
fn match_arm(p: &mut Parser<'_>) {
    let m = p.start();
    let before = p.position();
    pattern(p);
    if p.position() == before {
        m.abandon(p);
        return;
    }
    if p.expect(EQ) {
        if p.at(R_ANGLE) && p.nth_joint(0) {
            p.bump(R_ANGLE);
        } else {
            p.error(format!(
                "expected `>` right after `=` (write `=>`), found {}",
                p.current().describe()
            ));
        }
    }
    seq_expr(p);
    m.complete(p, MATCH_ARM);
}
