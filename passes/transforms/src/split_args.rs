//! `SplitArgs(max_function_args)`: TVM v0.13's function pass (opt_level 1,
//! requires InferType) that keeps `concatenate` calls under a backend's
//! limit on kernel arguments.
//!
//! With a negative limit nothing changes. Otherwise a `concatenate` of a
//! tuple literal with at least `limit = max_function_args - outputs`
//! fields (`outputs` being the number of results of the call, one for a
//! tensor) is split: the fields are cut into consecutive groups of `limit`,
//! each group is concatenated on the same axis and wrapped in
//! `annotation.stop_fusion`, and the groups' results are concatenated
//! again (new tuples are left for the InferType that follows to type). The rewrite is bottom-up over rewritten operands, while the field
//! list and the result count come from the original call, as in TVM. A
//! non-positive `limit` (TVM divides by it) is refused with a diagnostic.

use relay_ir::build::{op_call, op_call_with};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::rewrite_post_order;
use relay_ir::{AttrValue, Expr, ExprKind, Function, IRModule};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("SplitArgs", 1)
        .required(&["InferType"])
        .param(
            ParamSpec::int(
                "max_function_args",
                -1,
                "the most arguments a generated kernel may take; negative for no limit",
            )
            // TVM's `int`.
            .with_range(i32::MIN as i64, i32::MAX as i64),
        )
        .doc("Split concatenates with too many inputs")
        .build(|args| {
            let max_function_args = args.int("max_function_args");
            Ok(
                move |function: Function, _module: &IRModule, _ctx: &PassContext| {
                    split_args(&function, max_function_args)
                },
            )
        })
}

/// Splits the over-long concatenates of `function` (see the module doc).
pub fn split_args(function: &Function, max_function_args: i64) -> Result<Function, Diagnostic> {
    if max_function_args < 0 {
        return Ok(function.clone());
    }
    let mut failure = None;
    let rewritten = rewrite_post_order(function.expr(), |old, rebuilt| {
        let Some(call) = old.as_call() else {
            return rebuilt;
        };
        if call.callee.as_op().map(|op| op.name.as_str()) != Some("concatenate") {
            return rebuilt;
        }
        let Some(tuple) = call.args.first() else {
            return rebuilt;
        };
        let ExprKind::Tuple(fields) = tuple.kind() else {
            return rebuilt;
        };
        let outputs = old
            .checked_type()
            .and_then(|t| t.as_tuple().map(<[_]>::len))
            .unwrap_or(1) as i64;
        let limit = max_function_args - outputs;
        if (fields.len() as i64) < limit {
            return rebuilt;
        }
        if limit <= 0 {
            failure = Some(Diagnostic::pass_failed(format!(
                "SplitArgs: max_function_args={max_function_args} leaves no room for \
                     the inputs of a concatenate with {outputs} output(s)"
            )));
            return rebuilt;
        }
        let axis = call
            .attrs
            .as_ref()
            .and_then(|attrs| attrs.get("axis"))
            .and_then(AttrValue::as_int)
            .unwrap_or(0);
        let concatenate = |parts: Expr| {
            op_call_with(
                "concatenate",
                vec![parts],
                &[("axis", AttrValue::Int(axis))],
            )
        };
        let groups: Vec<Expr> = fields
            .chunks(limit as usize)
            .map(|group| {
                let part = Expr::tuple(group.to_vec(), tuple.span());
                op_call("annotation.stop_fusion", vec![concatenate(part)])
            })
            .collect();
        concatenate(Expr::tuple(groups, tuple.span()))
    });
    if let Some(error) = failure {
        return Err(error);
    }
    rewritten
        .as_function()
        .ok_or_else(|| Diagnostic::pass_failed("SplitArgs: the function did not stay a function"))
}
