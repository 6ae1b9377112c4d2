//! `SimplifyFCTranspose(target_weight_name)`: rewrites
//! `nn.dense(x, transpose(%w))` into `nn.dense(x, %w.T)`, with `%w.T` a new
//! parameter holding the weight already transposed, as TVM v0.13's
//! `simplify_fc_transpose.cc` does (used by
//! `relay.data_dep_optimization.simplify_fc_transpose`, which also
//! transposes the bound weight values; this pass only rewrites the
//! function).
//!
//! TVM's behaviour, kept here:
//! - the pattern is an `nn.dense` whose weight (as written, before the
//!   rewrite of its arguments) is a `transpose` of a variable; the axes of
//!   the transpose are not checked (the Python helper that finds the
//!   weights only looks for this shape of code);
//! - the variable's name must be one of `target_weight_name` (TVM fails an
//!   internal check otherwise), it must carry a tensor type annotation of
//!   rank 2 or more (TVM dereferences it), and the new variable is
//!   `%<name>.T` with the first two dimensions swapped, one new variable
//!   per rewritten `nn.dense`;
//! - the function's parameters become its free variables in order of first
//!   use, then the new `.T` variables in order of first use: parameters
//!   that are no longer used (the transposed weights) disappear.
//!
//! Registered like TVM: a function pass at opt_level 4 requiring
//! `DeadCodeElimination`.

use crate::free_var_params::free_vars_as_params;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::rewrite_function;
use relay_ir::IRModule;
use relay_ir::{Call, Expr, ExprKind, Function, Type, Var, VarId};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxSet as HashSet;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("SimplifyFCTranspose", 4)
        .required(&["DeadCodeElimination"])
        .param(ParamSpec::list(
            "target_weight_name",
            Vec::new(),
            "the names of the weights w of `nn.dense(x, transpose(w))` to replace by `w.T`",
        ))
        .doc("Replace nn.dense(x, transpose(%w)) by nn.dense(x, %w.T), a new pre-transposed parameter")
        .build(|args| {
            let names: HashSet<String> = args
                .string_list("target_weight_name")?
                .into_iter()
                .collect();
            Ok(
                move |function: Function, _module: &IRModule, _ctx: &PassContext| {
                    simplify_fc_transpose(&function, &names)
                },
            )
        })
}

/// Rewrites every `nn.dense(x, transpose(%w))` of `function` (nested
/// functions too) and rebuilds its parameter list as TVM does.
pub fn simplify_fc_transpose(
    function: &Function,
    target_weights: &HashSet<String>,
) -> Result<Function, Diagnostic> {
    let mut failure: Option<Diagnostic> = None;
    let mut transposed: Vec<VarId> = Vec::new();
    let rewritten = rewrite_function(function, |pre, post| {
        if failure.is_some() {
            return post;
        }
        let Some(weight) = transposed_weight(pre) else {
            return post;
        };
        match transposed_var(&weight, target_weights) {
            Ok(var) => {
                transposed.push(var.id());
                let call = post.as_call().expect("a rewritten call stays a call");
                let new_call = Call {
                    callee: call.callee.clone(),
                    args: vec![call.args[0].clone(), var.into_expr()],
                    attrs: call.attrs.clone(),
                    type_args: call.type_args.clone(),
                };
                Expr::new(ExprKind::Call(new_call), post.span())
            }
            Err(error) => {
                failure = Some(error);
                post
            }
        }
    });
    if let Some(error) = failure {
        return Err(error);
    }
    Ok(free_vars_as_params(&rewritten, &transposed))
}

/// The variable `%w` of `nn.dense(_, transpose(%w, …))`.
fn transposed_weight(expr: &Expr) -> Option<Var> {
    let call = expr.as_call()?;
    if call.callee.as_op()?.name != "nn.dense" {
        return None;
    }
    let weight = call.args.get(1)?.as_call()?;
    if weight.callee.as_op()?.name != "transpose" {
        return None;
    }
    weight.args.first()?.as_var()
}

/// `%<name>.T`, typed as `weight` with its first two dimensions swapped.
fn transposed_var(weight: &Var, target_weights: &HashSet<String>) -> Result<Var, Diagnostic> {
    let name = weight.name();
    let fail = |message: String| Diagnostic::pass_failed_at(weight.expr(), message);
    if !target_weights.contains(name) {
        return Err(fail(format!(
            "SimplifyFCTranspose: the transposed dense weight %{name} is not one of \
             target_weight_name"
        )));
    }
    let Some(tensor) = weight.type_annotation().and_then(Type::as_tensor) else {
        return Err(fail(format!(
            "SimplifyFCTranspose: the transposed dense weight %{name} needs a tensor type \
             annotation"
        )));
    };
    if tensor.shape.len() < 2 {
        return Err(fail(format!(
            "SimplifyFCTranspose: the transposed dense weight %{name} has rank {}, at least 2 \
             is needed",
            tensor.shape.len()
        )));
    }
    let shape = vec![tensor.shape[1].clone(), tensor.shape[0].clone()];
    Ok(Var::new(
        format!("{name}.T"),
        Some(Type::tensor(shape, tensor.dtype)),
        None,
    ))
}
