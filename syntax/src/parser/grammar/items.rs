//! Files and top-level definitions: the version header, `def`, `type`,
//! `extern type`, the metadata section; and the function signature shared by
//! `def` and `fn`.

use super::attrs::{at_attr_start, attr_list};
use super::exprs::{block_expr, seq_expr};
use super::types::type_;
use super::{braced, delimited};
use crate::parser::Parser;
use crate::token_set::TokenSet;
use crate::SyntaxKind::*;
use rowan::TextRange;

const DEF_FIRST: TokenSet = TokenSet::new(&[DEF_KW, TYPE_KW, EXTERN_KW]);

/// `module ::= VERSION definition* METADATA? EOF`
pub(crate) fn source_file(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(VERSION_ATTR) {
        version(p);
    } else if p.lenient {
        let range = p.current_range();
        p.leniencies.push(crate::Leniency::new(
            crate::LeniencyKind::MissingVersion,
            "no `#[version = \"0.0.5\"]` header (TVM's parser requires one); read as version 0.0.5",
            TextRange::empty(range.start()),
        ));
    } else if p.at(FN_KW) {
        // A header cannot help a file that is an expression.
        p.error_of(crate::SyntaxErrorKind::Version, format!(
            "expected text format semantic version, found {}: this file is one expression, not a module; read it as an expression (`relay check --expr`, TVM's `relay.parse_expr`) or with `--lenient`",
            p.current().describe()
        ));
    } else {
        p.error_of(crate::SyntaxErrorKind::Version, format!(
            "expected text format semantic version, found {}; add `#[version = \"0.0.5\"]` as the first line",
            p.current().describe()
        ));
    }
    let mut after_extern = false;
    loop {
        if after_extern && p.at_ts(DEF_FIRST) {
            // TVM stops reading definitions after an `extern type`.
            p.error(format!(
                "expected end of file found {}: an `extern type` must be the last definition",
                p.current().describe()
            ));
        }
        match p.current() {
            DEF_KW => def(p),
            TYPE_KW => type_def(p),
            EXTERN_KW => {
                extern_type_def(p);
                after_extern = true;
            }
            METADATA => {
                let s = p.start();
                p.bump(METADATA);
                s.complete(p, METADATA_SECTION);
            }
            EOF => break,
            _ => {
                p.error_expected("end of file");
                // Skip to the next definition so one error hides nothing after it.
                let e = p.start();
                while !p.at(EOF) && !p.at_ts(DEF_FIRST) && !p.at(METADATA) {
                    p.bump_any();
                }
                e.complete(p, ERROR);
            }
        }
    }
    m.complete(p, SOURCE_FILE);
}

/// Whether the text is one `fn` expression (after an optional version
/// header): what a lenient module parse reads as an expression.
pub(crate) fn is_expression_file(p: &Parser<'_>) -> bool {
    let first = if p.at(VERSION_ATTR) { 1 } else { 0 };
    p.nth_at(first, FN_KW)
}

/// One expression with an optional version header (`tvm.relay.parse_expr`).
pub(crate) fn expr_file(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(VERSION_ATTR) {
        version(p);
    }
    seq_expr(p);
    loop {
        match p.current() {
            EOF => break,
            METADATA => {
                let s = p.start();
                p.bump(METADATA);
                s.complete(p, METADATA_SECTION);
            }
            _ => {
                p.error_expected("end of file");
                let e = p.start();
                while !p.at(EOF) && !p.at(METADATA) {
                    p.bump_any();
                }
                e.complete(p, ERROR);
            }
        }
    }
    m.complete(p, EXPR_FILE);
}

/// One `def` and nothing else, for re-parsing a definition alone
/// (`reparse.rs`): false if the text is not exactly that.
pub(crate) fn lone_def(p: &mut Parser<'_>) -> bool {
    let m = p.start();
    let is_def = p.at(DEF_KW);
    if is_def {
        def(p);
    }
    let exactly_one = is_def && p.at(EOF);
    while !p.at(EOF) {
        p.bump_any();
    }
    m.complete(p, SOURCE_FILE);
    exactly_one
}

fn version(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(VERSION_ATTR);
    m.complete(p, VERSION);
}

/// `'def' GLOBAL fn_rest`
fn def(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(DEF_KW);
    p.expect(GLOBAL);
    fn_rest(p);
    m.complete(p, DEF);
}

/// `ty_params? '(' param_list ')' ('-' '>' type)? '{' expr '}'`
pub(super) fn fn_rest(p: &mut Parser<'_>) {
    if p.at(L_BRACK) {
        type_param_list(p);
    }
    let m = p.start();
    delimited(
        p,
        (L_PAREN, COMMA, R_PAREN),
        TokenSet::new(&[LOCAL]),
        &mut param,
        Some(&mut |p: &mut Parser<'_>| {
            if at_attr_start(p) {
                attr_list(p);
                true
            } else {
                false
            }
        }),
    );
    m.complete(p, PARAM_LIST);
    if p.at(MINUS) {
        let r = p.start();
        p.bump(MINUS);
        p.expect(R_ANGLE);
        type_(p);
        r.complete(p, RET_TYPE);
    }
    block_expr(p);
}

/// `LOCAL ('{' attr_list '}')? (':' type)?`
fn param(p: &mut Parser<'_>) {
    let m = p.start();
    if !p.expect(LOCAL) {
        m.abandon(p);
        return;
    }
    if p.at(L_CURLY) {
        let a = p.start();
        braced(p, &mut |p: &mut Parser<'_>| attr_list(p));
        a.complete(p, PARAM_ATTRS);
    }
    if p.eat(COLON) {
        type_(p);
    }
    m.complete(p, PARAM);
}

/// `'[' IDENT (',' IDENT)* ','? ']'`
pub(super) fn type_param_list(p: &mut Parser<'_>) {
    let m = p.start();
    delimited(
        p,
        (L_BRACK, COMMA, R_BRACK),
        TokenSet::new(&[IDENT]),
        &mut |p: &mut Parser<'_>| {
            if p.at(IDENT) {
                let t = p.start();
                p.bump(IDENT);
                t.complete(p, TYPE_PARAM);
            } else {
                p.error_expected("identifier");
            }
        },
        None,
    );
    m.complete(p, TYPE_PARAM_LIST);
}

/// `'type' IDENT ty_params? ('{' ctor (',' ctor)* ','? '}')?`
fn type_def(p: &mut Parser<'_>) {
    let m = p.start();
    type_def_body(p);
    m.complete(p, TYPE_DEF);
}

/// `'extern' 'type' IDENT ty_params?` (constructors are an error).
fn extern_type_def(p: &mut Parser<'_>) {
    let m = p.start();
    let keyword = p.current_range();
    p.bump(EXTERN_KW);
    if type_def_body(p) {
        p.error_at(keyword, "an external type may not have any constructors");
    }
    m.complete(p, EXTERN_TYPE_DEF);
}

/// The part of a type definition after any `extern`; true if constructors
/// were declared.
fn type_def_body(p: &mut Parser<'_>) -> bool {
    p.expect(TYPE_KW);
    p.expect(IDENT);
    if p.at(L_BRACK) {
        type_param_list(p);
    }
    if !p.at(L_CURLY) {
        return false;
    }
    let m = p.start();
    let mut count = 0usize;
    delimited(
        p,
        (L_CURLY, COMMA, R_CURLY),
        TokenSet::new(&[IDENT]),
        &mut |p: &mut Parser<'_>| {
            if !p.at(IDENT) {
                p.error_expected("identifier");
                return;
            }
            count += 1;
            let c = p.start();
            p.bump(IDENT);
            if p.at(L_PAREN) {
                let f = p.start();
                delimited(
                    p,
                    (L_PAREN, COMMA, R_PAREN),
                    super::types::TYPE_FIRST,
                    &mut |p: &mut Parser<'_>| type_(p),
                    None,
                );
                f.complete(p, CTOR_FIELD_LIST);
            }
            c.complete(p, CTOR_DEF);
        },
        None,
    );
    m.complete(p, CTOR_LIST);
    count > 0
}
