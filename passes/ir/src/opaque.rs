//! Constants whose value is not in the text: `meta[relay.Constant][i]` in a
//! dump printed without its metadata section (`astext(show_meta_data=False)`),
//! read leniently.
//!
//! Such a constant is a variable that no function binds, named by its
//! reference (`meta[relay.Constant][0]`) and annotated with the type its
//! `/* ty=… */` comment gave. Every pass already treats a free variable as
//! a value it cannot see into, which is what an unknown constant is:
//! FoldConstant does not fold it, no simplification reads its elements.
//! The printer writes the reference back as TVM does (`meta[…][i]`, then
//! its type), and the name cannot collide with a variable of the text: no
//! name the lexer reads starts with `meta[`.

use crate::source::Span;
use crate::{Expr, Type, Var};

/// What the names of opaque constants start with.
const PREFIX: &str = "meta[";

/// The opaque constant written `reference` (`meta[relay.Constant][0]`), of
/// type `ty` when known.
pub fn opaque_constant(reference: &str, ty: Option<Type>, span: Option<Span>) -> Var {
    debug_assert!(reference.starts_with(PREFIX));
    Var::new(reference, ty, span)
}

/// The reference an opaque constant stands for, if `var` is one.
pub fn opaque_reference(var: &Var) -> Option<&str> {
    let name = var.name();
    is_opaque_constant_name(name).then_some(name)
}

/// Whether a variable named `name` is an opaque constant.
pub fn is_opaque_constant_name(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// Whether `expr` is an opaque constant.
pub fn is_opaque_constant(expr: &Expr) -> bool {
    expr.as_var()
        .is_some_and(|var| opaque_reference(&var).is_some())
}
