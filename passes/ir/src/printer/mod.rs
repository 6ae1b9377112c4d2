//! The Relay text printer: modules, expressions and types written exactly
//! as TVM v0.13's `astext()` writes them (see the reference, §2, and
//! `src/relay/printer/` in TVM).
//!
//! ```text
//! #[version = "0.0.5"]
//! def @main(%x: Tensor[(1, 10), float32]) -> Tensor[(1, 10), float32] {
//!   %0 = add(%x, %x);
//!   nn.relu(%0)
//! }
//! ```
//!
//! What TVM does, and so what we do:
//!
//! * **Graph form.** Variables, globals, constants, operators and
//!   constructors are always written inline. The root of a scope (a
//!   function body, an `if` branch, a match arm, a `let` value or body, the
//!   printed expression) is inline when it has at most one use. Every other
//!   node gets its own line `%N = …;` in the innermost scope being printed,
//!   the first time a user prints it; later uses say `%N`. `N` is one
//!   counter for the whole print. Arguments are printed before their
//!   callee. Nodes are identified by identity, so two equal but distinct
//!   nodes print twice.
//! * **Lets** print as flat `let %v = …;` chains; a `let` used in a
//!   non-root position becomes a temporary whose value is the chain in
//!   parentheses.
//! * **Names** are made unique over the whole print (`%x`, `%x1`, `%x2`); a
//!   name that is empty or does not start with a letter gets a `v` prefix.
//!   A variable first met outside its binding is free and gets a
//!   `free_var %x: T;` line.
//! * **Constants**: scalars of the common dtypes are literals (`1f`, `2i64`,
//!   `True`); any other constant is `meta[relay.Constant][k]` and goes to the
//!   metadata section, which is written byte for byte as TVM writes it.
//! * **Attributes**: only fields that differ from their declared default,
//!   in declaration order; function attributes in their order.
//! * **Types**: `Tensor[(1, 10), float32]`, a rank-0 tensor as its dtype,
//!   `(A,)`, `fn [T](A) -> B`, `List[A]`, `ref(T)`; in module printing an
//!   incomplete type is a meta reference, as in TVM (see [`print_type`] for
//!   the readable form).
//! * **Type comments** `/* ty=… */` after constants, calls, variables at
//!   their binding, function literals, tuples and projections that have a
//!   checked type (with [`PrintOptions::show_types`]). Spans are never
//!   printed.
//!
//! Where we differ from TVM, it is so that the output always parses back:
//! strings are escaped (TVM escapes them too, but its parser cannot read the
//! escapes back; ours can), and variable names that would not lex are
//! sanitised (see `scalar::var_base_name`) when the text is read again
//! ([`PrintOptions::reparseable`]); TVM's exact text keeps them as TVM
//! writes them (`%conv1.weight`, `@foo.bar`), which a lenient reading reads.
//! Also:
//!
//! * An incomplete type at the top of an annotation is no annotation (TVM's
//!   parser represents `_` and a missing type as a null type, which prints
//!   nothing); nested in a type it is a meta reference, as in TVM.
//! * A constant that was read from a metadata section is written back as
//!   the object it was read from (found through its span in
//!   [`IRModule::sources`]), so its span and checked type survive a round
//!   trip as they do in TVM.
//! * Without the metadata section, a `VirtualDevice` is still a meta
//!   reference (TVM writes a debugging form that does not parse).
//! * An expression other than a constant, global or operator used as an
//!   attribute value is a meta reference whose object is written as null
//!   (TVM serialises the whole expression; no input we read has one).

mod defaults;
mod doc;
mod memo;
mod metadata_section;
pub mod readable;
mod scalar;
mod text;

pub use scalar::push_decimal;

/// The name a local variable hinted `hint` is written with in text that
/// reads back (`conv1.weight` → `conv1_weight`, `1_bn.gamma` →
/// `v1_bn_gamma`), before the printer makes it unique: what `relay fmt
/// --upgrade` renames a frontend's name to.
pub fn reparseable_local_name(hint: &str) -> String {
    scalar::var_base_name(hint)
}

/// The name a global function is written with after `@` in text that reads
/// back (`head.relu` → `head_relu`).
pub fn reparseable_global_name(name: &str) -> String {
    scalar::global_name(name)
}

use crate::{Expr, IRModule, Type};
use text::{Printer, TypeStyle};

/// Options of [`print_module`] and [`print_expr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrintOptions {
    /// Write the `#[metadata]` section when something refers to it. When
    /// off, TVM's comment saying the section was left out is written
    /// instead (the text then does not parse back if it uses `meta[…]`).
    pub show_meta_data: bool,
    /// Write `/* ty=… */` comments on nodes that have a checked type.
    pub show_types: bool,
    /// Put a `match` or `let` that is the value of a `let` in parentheses.
    /// TVM prints it bare, which neither TVM's parser nor ours reads (the
    /// value is a `binop` in the grammar). On (the default) for text that is
    /// read again — the editor's edits, external passes' input, reproducers;
    /// `relay print` and `relay opt` turn it off to write TVM's `astext()`.
    pub reparseable: bool,
}

impl Default for PrintOptions {
    fn default() -> PrintOptions {
        PrintOptions {
            show_meta_data: true,
            show_types: true,
            reparseable: true,
        }
    }
}

/// A module as TVM's `astext()` writes it: the version header, the type
/// definitions sorted by name, then the functions sorted by name, a blank
/// line between items, then the metadata section if anything refers to it.
pub fn print_module(m: &IRModule, opts: &PrintOptions) -> String {
    Printer::new(
        opts.show_meta_data,
        opts.show_types,
        TypeStyle::Tvm,
        Some(&m.sources),
    )
    .reparseable(opts.reparseable)
    .module(m)
}

/// An expression as TVM's `astext()` writes it (what `parse_expr` reads):
/// the version header, `free_var` lines for free variables, the bindings,
/// then the expression, then the metadata section if anything refers to it.
pub fn print_expr(e: &Expr, opts: &PrintOptions) -> String {
    Printer::new(opts.show_meta_data, opts.show_types, TypeStyle::Tvm, None)
        .reparseable(opts.reparseable)
        .expr(e)
}

/// A type for people (diagnostics, hover): as in modules, except that an
/// incomplete type is `_` and a symbolic size is its name, never a
/// `meta[…]` reference.
pub fn print_type(t: &Type) -> String {
    Printer::new(false, false, TypeStyle::Readable, None).type_text(t)
}

/// Runs `f`, first moving to a fresh stack segment if this thread's stack
/// is nearly used up. The printer recurses once per level of syntactic
/// nesting (`fn`, `if`, `match`, tuple types, patterns inside one another),
/// as TVM's does; chains of bindings and `let`s are printed without
/// recursion. Growing on demand keeps deeply nested IR printable from any
/// thread, at the cost of a stack-pointer check per level — unlike a
/// printing thread of its own, which costs more than printing a small
/// module.
pub(crate) fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    /// Room one level of nesting may need before the next check.
    const RED_ZONE: usize = 128 << 10;
    /// The size of each new segment.
    const SEGMENT: usize = 4 << 20;
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

#[cfg(test)]
mod tests;
