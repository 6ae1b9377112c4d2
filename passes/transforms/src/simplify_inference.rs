//! `SimplifyInference`: rewrites the normalisation operators into the
//! arithmetic they compute at inference time, as TVM v0.13's
//! `simplify_inference.cc` does.
//!
//! * `nn.batch_norm(x, γ, β, μ, σ²).0` becomes `x * s + t` with
//!   `s = 1 / sqrt(σ² + ε) [* γ]` and `t = -μ * s [+ β]`, both expanded to
//!   broadcast along the normalised axis. Only the first output is rewritten
//!   (the running statistics are not inference-time values), so a
//!   `batch_norm` used otherwise stays.
//! * `nn.dropout(x).0` becomes `x`.
//! * `nn.layer_norm`, `nn.group_norm`, `nn.instance_norm` become
//!   mean / variance / sqrt arithmetic; `nn.l2_normalize` becomes
//!   `x / sqrt(max(sum(x * x), ε))`.
//!
//! The rewrite needs the input's checked type (dtype and rank; static
//! dimensions for `group_norm`); an input without one is left as it is.
//! Every rewrite builds fresh nodes, so two projections of one `batch_norm`
//! each get their own arithmetic, as in TVM.

use relay_ir::build::{
    expand_bias_to_match_axis, op_call, reduce, reshape, scalar_constant, variance,
};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::rewrite_function;
use relay_ir::{Attrs, Expr, ExprKind, Function, IRModule, TensorType};
use relay_pass_manager::registry::PassSpec;
use relay_pass_manager::PassContext;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("SimplifyInference", 0)
        .required(&["InferType"])
        .doc(
            "Rewrite batch_norm, dropout, layer/group/instance norm and l2_normalize into the \
             arithmetic they compute at inference time",
        )
        .transform(simplify_function)
}

fn simplify_function(
    f: Function,
    _m: &IRModule,
    _ctx: &PassContext,
) -> Result<Function, Diagnostic> {
    Ok(simplify_inference(&f))
}

/// Rewrites the normalisation operators of `function` for inference.
pub fn simplify_inference(function: &Function) -> Function {
    rewrite_function(function, |pre, post| match post.kind() {
        ExprKind::TupleGetItem { tuple, index: 0 } => {
            simplify_first_output(pre, tuple).unwrap_or(post)
        }
        ExprKind::Call(_) => simplify_norm_call(pre, &post).unwrap_or(post),
        _ => post,
    })
}

/// The data argument's tensor type, from the original (typed) call.
fn data_type(pre_call: &Expr) -> Option<TensorType> {
    let call = pre_call.as_call()?;
    call.args.first()?.checked_type()?.as_tensor().cloned()
}

/// `batch_norm(…).0` and `dropout(…).0`; `new_tuple` is the rewritten call.
fn simplify_first_output(pre: &Expr, new_tuple: &Expr) -> Option<Expr> {
    let call = new_tuple.as_call()?;
    match call.callee.as_op()?.name.as_str() {
        "nn.dropout" => call.args.first().cloned(),
        "nn.batch_norm" => {
            let ExprKind::TupleGetItem {
                tuple: pre_tuple, ..
            } = pre.kind()
            else {
                return None;
            };
            let ty = data_type(pre_tuple)?;
            let [data, gamma, beta, mean, var] = <[Expr; 5]>::try_from(call.args.clone()).ok()?;
            batch_norm(call.attrs.as_ref()?, data, gamma, beta, mean, var, &ty)
        }
        _ => None,
    }
}

/// The other normalisations, rewritten at the call itself.
fn simplify_norm_call(pre: &Expr, post: &Expr) -> Option<Expr> {
    let call = post.as_call()?;
    let name = call.callee.as_op()?.name.as_str();
    let attrs = call.attrs.as_ref()?;
    let args = &call.args;
    match name {
        "nn.layer_norm" | "nn.group_norm" | "nn.instance_norm" => {
            let ty = data_type(pre)?;
            let [data, gamma, beta] = <[Expr; 3]>::try_from(args.clone()).ok()?;
            match name {
                "nn.layer_norm" => layer_norm(attrs, data, gamma, beta, &ty),
                "nn.group_norm" => group_norm(attrs, data, gamma, beta, &ty),
                _ => instance_norm(attrs, data, gamma, beta, &ty),
            }
        }
        "nn.l2_normalize" => l2_normalize(attrs, args.first()?.clone()),
        _ => None,
    }
}

fn int_attr(attrs: &Attrs, name: &str) -> Option<i64> {
    attrs.get(name)?.as_int()
}

fn bool_attr(attrs: &Attrs, name: &str) -> Option<bool> {
    attrs.get(name)?.as_int().map(|v| v != 0)
}

/// `epsilon` as the C++ `float` TVM passes to `MakeConstantScalar`.
fn epsilon(attrs: &Attrs, name: &str) -> Option<f32> {
    Some(attrs.get(name)?.as_f64()? as f32)
}

/// A negative axis counted from the end.
fn normalise_axis(axis: i64, ndim: usize) -> i64 {
    if axis < 0 {
        axis + ndim as i64
    } else {
        axis
    }
}

fn batch_norm(
    attrs: &Attrs,
    data: Expr,
    gamma: Expr,
    beta: Expr,
    moving_mean: Expr,
    moving_var: Expr,
    ty: &TensorType,
) -> Option<Expr> {
    let eps = scalar_constant(ty.dtype, epsilon(attrs, "epsilon")?)?;
    let one = scalar_constant(ty.dtype, 1.0)?;
    let sqrt_var = op_call("sqrt", vec![op_call("add", vec![moving_var, eps])]);
    let mut scale = op_call("divide", vec![one, sqrt_var]);
    if bool_attr(attrs, "scale")? {
        scale = op_call("multiply", vec![scale, gamma]);
    }
    let neg_mean = op_call("negative", vec![moving_mean]);
    let mut shift = op_call("multiply", vec![neg_mean, scale.clone()]);
    if bool_attr(attrs, "center")? {
        shift = op_call("add", vec![shift, beta]);
    }
    let ndim = ty.shape.len();
    let axis = normalise_axis(int_attr(attrs, "axis")?, ndim);
    let scale = expand_bias_to_match_axis(scale, ndim, &[axis]);
    let shift = expand_bias_to_match_axis(shift, ndim, &[axis]);
    let out = op_call("multiply", vec![data, scale]);
    Some(op_call("add", vec![out, shift]))
}

/// `(x - mean) / sqrt(var + ε)` over `axes`.
fn normalise(data: Expr, axes: &[i64], eps: Expr) -> Expr {
    let mean = reduce("mean", data.clone(), axes, true, false);
    let var = variance(data.clone(), mean.clone(), axes, true, false);
    let denom = op_call("sqrt", vec![op_call("add", vec![var, eps])]);
    op_call("divide", vec![op_call("subtract", vec![data, mean]), denom])
}

/// Multiplies by γ and adds β (each when enabled), broadcast along `axis`.
fn scale_and_center(
    attrs: &Attrs,
    mut out: Expr,
    gamma: Expr,
    beta: Expr,
    ndim: usize,
    axis: i64,
) -> Option<Expr> {
    if bool_attr(attrs, "scale")? {
        out = op_call(
            "multiply",
            vec![out, expand_bias_to_match_axis(gamma, ndim, &[axis])],
        );
    }
    if bool_attr(attrs, "center")? {
        out = op_call(
            "add",
            vec![out, expand_bias_to_match_axis(beta, ndim, &[axis])],
        );
    }
    Some(out)
}

fn layer_norm(attrs: &Attrs, data: Expr, gamma: Expr, beta: Expr, ty: &TensorType) -> Option<Expr> {
    let eps = scalar_constant(ty.dtype, epsilon(attrs, "epsilon")?)?;
    let raw_axis = int_attr(attrs, "axis")?;
    // The reduction keeps the axis as written; the bias expansion needs it
    // counted from the front.
    let out = normalise(data, &[raw_axis], eps);
    let ndim = ty.shape.len();
    scale_and_center(
        attrs,
        out,
        gamma,
        beta,
        ndim,
        normalise_axis(raw_axis, ndim),
    )
}

fn instance_norm(
    attrs: &Attrs,
    data: Expr,
    gamma: Expr,
    beta: Expr,
    ty: &TensorType,
) -> Option<Expr> {
    let ndim = ty.shape.len();
    let axis = normalise_axis(int_attr(attrs, "axis")?, ndim);
    let reduced: Vec<i64> = (1..ndim as i64).filter(|&i| i != axis).collect();
    let eps = scalar_constant(ty.dtype, epsilon(attrs, "epsilon")?)?;
    let out = normalise(data, &reduced, eps);
    scale_and_center(attrs, out, gamma, beta, ndim, axis)
}

fn group_norm(attrs: &Attrs, data: Expr, gamma: Expr, beta: Expr, ty: &TensorType) -> Option<Expr> {
    let ndim = ty.shape.len();
    let axis = normalise_axis(int_attr(attrs, "axis")?, ndim);
    let groups = int_attr(attrs, "num_groups")?;
    // The grouping needs every dimension to be static.
    let old_shape: Vec<i64> = ty.shape.iter().map(|d| d.as_int()).collect::<Option<_>>()?;
    let channels = *old_shape.get(usize::try_from(axis).ok()?)?;
    if groups == 0 {
        return None;
    }
    let mut new_shape = Vec::with_capacity(ndim + 1);
    let mut reduced = Vec::new();
    for (i, &extent) in old_shape.iter().enumerate() {
        let i = i as i64;
        if i == axis {
            new_shape.push(groups);
            new_shape.push(channels / groups);
            reduced.push(i + 1);
            continue;
        }
        if i >= axis {
            reduced.push(i + 1);
        }
        new_shape.push(extent);
    }
    let grouped = reshape(data, &new_shape);
    let eps = scalar_constant(ty.dtype, epsilon(attrs, "epsilon")?)?;
    let out = reshape(normalise(grouped, &reduced, eps), &old_shape);
    scale_and_center(attrs, out, gamma, beta, ndim, axis)
}

fn l2_normalize(attrs: &Attrs, data: Expr) -> Option<Expr> {
    // TVM builds this ε as float32 whatever the input's dtype.
    let eps = scalar_constant(relay_ir::dtype::DataType::FLOAT32, epsilon(attrs, "eps")?)?;
    let axes = attrs.get("axis")?.as_int_array()?;
    let square = op_call("multiply", vec![data.clone(), data.clone()]);
    let sum = op_call(
        "maximum",
        vec![reduce("sum", square, &axes, true, false), eps],
    );
    Some(op_call("divide", vec![data, op_call("sqrt", vec![sum])]))
}
