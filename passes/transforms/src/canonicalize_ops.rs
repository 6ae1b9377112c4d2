//! `CanonicalizeOps`: rewrites `nn.bias_add(x, b)` into
//! `add(x, expand_dims(b, …))`, as TVM v0.13's `canonicalize_ops.cc` does,
//! so later passes (fusion, scale folding) see plain broadcasting. The
//! input's checked type gives the rank; an untyped `bias_add` is left as it
//! is.

use relay_ir::build::{expand_bias_to_match_axis, op_call};
use relay_ir::rewrite::rewrite_function;
use relay_ir::{Expr, Function};
use relay_pass_manager::registry::PassSpec;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("CanonicalizeOps", 3)
        .required(&["InferType"])
        .doc("Rewrite nn.bias_add into expand_dims and add")
        .transform(|f, _m, _ctx| Ok(canonicalize_ops(&f)))
}

/// Expands every `nn.bias_add` of `function`.
pub fn canonicalize_ops(function: &Function) -> Function {
    rewrite_function(function, |pre, post| {
        expand_bias_add(pre, &post).unwrap_or(post)
    })
}

fn expand_bias_add(pre: &Expr, post: &Expr) -> Option<Expr> {
    let call = post.as_call()?;
    if call.callee.as_op()?.name != "nn.bias_add" || call.args.len() != 2 {
        return None;
    }
    let ndim = pre.as_call()?.args[0]
        .checked_type()?
        .as_tensor()?
        .shape
        .len();
    let mut axis = call.attrs.as_ref()?.get("axis")?.as_int()?;
    if axis < 0 {
        axis += ndim as i64;
    }
    let bias = expand_bias_to_match_axis(call.args[1].clone(), ndim, &[axis]);
    Some(op_call("add", vec![call.args[0].clone(), bias]))
}
