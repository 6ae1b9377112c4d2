//! `FastMath`: replaces `exp`, `erf`, `tanh` and `nn.softmax` by their fast
//! approximations (`fast_exp`, `fast_erf`, `fast_tanh`,
//! `nn.fast_softmax`), as TVM v0.13's `fast_math.cc` does. Its opt_level is
//! 4, so a Sequential runs it only at `opt_level` 4 or with
//! `required_pass=["FastMath"]`.

use relay_ir::build::op_call;
use relay_ir::op;
use relay_ir::rewrite::rewrite_function;
use relay_ir::{Expr, Function};
use relay_pass_manager::registry::PassSpec;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("FastMath", 4)
        .required(&["InferType"])
        .doc("Replace exp, erf, tanh and softmax by their fast approximations")
        .transform(|f, _m, _ctx| Ok(fast_math(&f)))
}

/// The fast counterpart of an operator, if it has one.
fn fast_version(name: &str) -> Option<&'static str> {
    match name {
        "exp" => Some("fast_exp"),
        "erf" => Some("fast_erf"),
        "tanh" => Some("fast_tanh"),
        "nn.softmax" => Some("nn.fast_softmax"),
        _ => None,
    }
}

/// Rewrites the operators of `function` into their fast versions.
pub fn fast_math(function: &Function) -> Function {
    rewrite_function(function, |_pre, post| {
        let Some(call) = post.as_call() else {
            return post;
        };
        let Some(fast) = call.callee.as_op().and_then(|o| fast_version(&o.name)) else {
            return post;
        };
        let Some(input) = call.args.first().cloned() else {
            return post;
        };
        // TVM's helpers take the first argument only; softmax keeps its
        // attrs object (`axis`).
        match &call.attrs {
            Some(attrs) => match op::lookup(fast) {
                Some(fast_op) => Expr::call(
                    Expr::op(fast_op, None),
                    vec![input],
                    Some(attrs.clone()),
                    None,
                ),
                None => post,
            },
            None => op_call(fast, vec![input]),
        }
    })
}
