//! `SimplifyExpr` and `SimplifyExprPostAlterOp`: algebraic and structural
//! clean-ups applied with TVM v0.13's pattern-rewrite engine, in TVM's order
//! and to a fixpoint, so the result prints as TVM's does.
//!
//! `SimplifyExpr` applies, in this order: the `*_like` concretizations
//! (`zeros_like`, `ones_like`, `full_like`, `reshape_like`,
//! `collapse_sum_like`, `broadcast_to_like`, `cast_like`), `x + x` → `x * 2`,
//! `x / sqrt(y)` → `x * rsqrt(y)`, identity elimination, reshape merging,
//! transpose merging, no-op transpose removal, same-dtype cast removal,
//! consecutive cast merging, full/ones/zeros operand folding, add/multiply
//! switching, adjacent constant add/multiply merging, dequantize before
//! `argmax` / `argmin` / `argsort`, clip-and-casts, redundant clips, and
//! binomial factoring. `SimplifyExprPostAlterOp` applies the subset TVM
//! runs after layout alteration.
//!
//! Where TVM would abort inside a rewrite (a failed internal check, an
//! untyped node), the rewrite here leaves the match as it is instead.
//!
//! The engine (matching, grouping, fixpoint) is in `engine`; each family
//! of rewrites has its own module.

mod arith;
mod cast;
mod concretize;
mod engine;
mod layout;

use concretize::LikeOp;
use engine::{NodeMap, PatternId, Rewrite};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Expr, Function, IRModule, TensorType, Type};
use relay_pass_manager::registry::PassSpec;

/// The registry entry of `SimplifyExpr`.
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("SimplifyExpr", 0)
        .required(&["InferType"])
        .doc(
            "Simplify expressions with TVM's rewrite patterns: concretize *_like operators, \
             remove identities, no-op casts, transposes and clips, merge reshapes, transposes \
             and casts, fold full/ones/zeros operands and constant chains, factor binomials",
        )
        .transform(|f, m, _ctx| simplify_expr(&f, m))
}

/// The registry entry of `SimplifyExprPostAlterOp`.
pub(crate) fn post_alter_op_spec() -> PassSpec {
    PassSpec::function("SimplifyExprPostAlterOp", 0)
        .required(&["InferType"])
        .doc(
            "The part of SimplifyExpr that cleans up after AlterOpLayout: identities, \
             reshapes, casts and clips",
        )
        .transform(|f, m, _ctx| run(&post_alter_op_rewrites(), &f, m))
}

/// The rewrites of `SimplifyExpr`, in TVM's order.
fn simplify_expr_rewrites() -> Vec<Box<dyn Rewrite>> {
    vec![
        Box::new(concretize::ConcretizeLike::new(LikeOp::Zeros)),
        Box::new(concretize::ConcretizeLike::new(LikeOp::Ones)),
        Box::new(concretize::ConcretizeLike::new(LikeOp::Full)),
        Box::new(concretize::ConcretizeLike::new(LikeOp::Reshape)),
        Box::new(concretize::ConcretizeLike::new(LikeOp::CollapseSum)),
        Box::new(concretize::ConcretizeLike::new(LikeOp::BroadcastTo)),
        Box::new(concretize::ConcretizeCastLike::new()),
        Box::new(arith::SimplifyAdd::new()),
        Box::new(arith::SimplifyRSqrt::new()),
        Box::new(arith::EliminateIdentity::new()),
        Box::new(layout::SimplifyReshape::new()),
        Box::new(layout::SimplifyTranspose::new()),
        Box::new(layout::SimplifyNoOpTranspose::new()),
        Box::new(cast::SimplifySameCast::new()),
        Box::new(cast::SimplifyConsecutiveCast::new()),
        Box::new(arith::FullElementwise::new()),
        Box::new(arith::SwitchAddMultiply::new()),
        Box::new(arith::SimplifyAdjacentMultiplyOrAdd::new()),
        Box::new(cast::SimplifyDequantizeArg::new("argmax")),
        Box::new(cast::SimplifyDequantizeArg::new("argmin")),
        Box::new(cast::SimplifyDequantizeArg::new("argsort")),
        Box::new(cast::SimplifyClipAndConsecutiveCast::new()),
        Box::new(cast::SimplifyClip::new()),
        Box::new(arith::SimplifyBinomial::new()),
    ]
}

/// The rewrites of `SimplifyExprPostAlterOp`, in TVM's order.
fn post_alter_op_rewrites() -> Vec<Box<dyn Rewrite>> {
    vec![
        Box::new(arith::EliminateIdentity::new()),
        Box::new(layout::SimplifyReshape::new()),
        Box::new(cast::SimplifySameCast::new()),
        Box::new(cast::SimplifyConsecutiveCast::new()),
        Box::new(cast::SimplifyClipAndConsecutiveCast::new()),
        Box::new(cast::SimplifyClip::new()),
    ]
}

/// Simplifies `function` as TVM's `SimplifyExpr` does.
pub fn simplify_expr(function: &Function, module: &IRModule) -> Result<Function, Diagnostic> {
    run(&simplify_expr_rewrites(), function, module)
}

fn run(
    rewrites: &[Box<dyn Rewrite>],
    function: &Function,
    module: &IRModule,
) -> Result<Function, Diagnostic> {
    let result = engine::rewrite_to_fixpoint(rewrites, function.expr(), module)
        .map_err(Diagnostic::pass_failed)?;
    // A rewrite never replaces the function node itself (no pattern matches
    // a function), so this is always a function.
    Ok(result.as_function().unwrap_or_else(|| function.clone()))
}

/// The checked tensor type of `expr`.
fn tensor_type(expr: &Expr) -> Option<&TensorType> {
    expr.checked_type()?.as_tensor()
}

/// The checked type of argument `index` of the call `expr`.
fn arg_type(expr: &Expr, index: usize) -> Option<&Type> {
    expr.as_call()?.args.get(index)?.checked_type()
}

/// The name of the operator `expr` calls.
fn op_name(expr: &Expr) -> Option<&str> {
    Some(expr.as_call()?.callee.as_op()?.name.as_str())
}

/// The rewritten expression a pattern node matched.
fn rewritten(nodes: &NodeMap, id: PatternId) -> Option<&Expr> {
    nodes.get(&id)
}
