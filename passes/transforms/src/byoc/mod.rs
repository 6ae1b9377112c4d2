//! TVM v0.13's "bring your own codegen" (BYOC) flow: the passes that carve
//! a module into regions offloaded to external compilers.
//!
//! The regions are marked by `annotation.compiler_begin` /
//! `annotation.compiler_end` calls (attrs `relay.attrs.CompilerAttrs`,
//! field `compiler`) on the edges into and out of each region:
//!
//! * [`merge_composite`] groups operators into `Composite` functions with
//!   a pattern table, before annotation,
//! * [`annotate_target`] puts the annotations around the operators each
//!   target supports,
//! * [`regions`] groups the annotated nodes into regions (TVM's
//!   `AnnotatedRegionSet`), which both passes below start from,
//! * [`merge_compiler_regions`] merges neighbouring regions of the same
//!   target where no data dependency forbids it,
//! * [`partition_graph`] outlines every region into a global function
//!   carrying `Compiler`, `Primitive`, `Inline` and `global_symbol`,
//! * [`compiler_functions`] outlines, marks extern or inlines `Compiler`
//!   functions around a codegen's own lowering.

pub mod annotate_target;
pub mod compiler_functions;
pub mod merge_compiler_regions;
pub mod merge_composite;
pub mod partition_graph;
pub mod regions;

use relay_ir::{AttrValue, Attrs, Expr};

/// The attrs type of the two annotation operators.
pub const COMPILER_ATTRS: &str = "relay.attrs.CompilerAttrs";
/// The operator that opens a region on an edge.
pub const COMPILER_BEGIN: &str = "annotation.compiler_begin";
/// The operator that closes a region on an edge.
pub const COMPILER_END: &str = "annotation.compiler_end";

/// Which side of a region an annotation call marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    Begin,
    End,
}

/// A `compiler_begin`/`compiler_end` call: its side and target.
pub struct Annotation<'a> {
    pub boundary: Boundary,
    pub compiler: &'a str,
    /// The annotated value (the call's only argument).
    pub arg: &'a Expr,
}

/// `expr` as a region annotation: a call of `compiler_begin` or
/// `compiler_end` with a `CompilerAttrs` object and one argument. TVM
/// recognises annotations by the attrs type, so a call of the operators
/// with other attributes is an ordinary call.
pub fn annotation(expr: &Expr) -> Option<Annotation<'_>> {
    let call = expr.as_call()?;
    let boundary = match call.callee.as_op()?.name.as_str() {
        COMPILER_BEGIN => Boundary::Begin,
        COMPILER_END => Boundary::End,
        _ => return None,
    };
    let compiler = compiler_of(call.attrs.as_ref()?)?;
    match call.args.as_slice() {
        [arg] => Some(Annotation {
            boundary,
            compiler,
            arg,
        }),
        _ => None,
    }
}

/// The `compiler` field of a `CompilerAttrs` object (`None` for any other
/// attrs type).
pub fn compiler_of(attrs: &Attrs) -> Option<&str> {
    if attrs.type_key() != COMPILER_ATTRS {
        return None;
    }
    attrs.get("compiler").and_then(AttrValue::as_str)
}

/// `annotation.compiler_end(value)` for `compiler` (TVM's
/// `relay.op.annotation._make.compiler_end`).
pub fn compiler_end(value: Expr, compiler: &str) -> Expr {
    annotate(COMPILER_END, value, compiler)
}

/// `annotation.compiler_begin(value)` for `compiler`.
pub fn compiler_begin(value: Expr, compiler: &str) -> Expr {
    annotate(COMPILER_BEGIN, value, compiler)
}

fn annotate(op_name: &str, value: Expr, compiler: &str) -> Expr {
    let op = relay_ir::op::lookup(op_name)
        .unwrap_or_else(|| panic!("operator `{op_name}` is not in the operator table"));
    let attrs = Attrs::new(
        COMPILER_ATTRS,
        vec![("compiler".to_string(), AttrValue::Str(compiler.to_string()))],
    );
    Expr::call(Expr::op(op, None), vec![value], Some(attrs), None)
}
