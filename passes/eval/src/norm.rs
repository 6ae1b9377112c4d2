//! Statistics and normalisations: `variance`, `nn.batch_norm`,
//! `nn.layer_norm`, `nn.instance_norm`, `nn.group_norm`,
//! `nn.l2_normalize` and `nn.lrn`.
//!
//! TVM folds the normalisations without a compute of their own through the
//! interpreter, which runs `SimplifyInference` first: `layer_norm`,
//! `instance_norm`, `group_norm` and `l2_normalize` become `mean`,
//! `variance`, `sqrt`, `divide`, … and those operators are evaluated. These
//! kernels compose the same operators' kernels in the same order, so the
//! results are exactly what TVM computes for those operators.
//! `nn.batch_norm` has a compute (`topi.nn.batch_norm`, inference mode):
//! `(x - mean) / sqrt(var + ε) · γ + β` along `axis`, returning the moving
//! statistics unchanged. `nn.lrn` is TOPI's `lrn`.
//!
//! Float sums (of `mean`, `variance`, `l2_normalize`, `lrn`) accumulate in
//! row-major order of the reduced axes, as the reduction kernels do; TVM's
//! x86 reduction schedule keeps that order for these reductions (no
//! `rfactor`), so results agree bit for bit except where LLVM vectorises a
//! reduction over an inner axis (then the float32 difference is within
//! `n · 2⁻²⁴ · Σ|x|` for `n` terms).

use super::elemwise::{const_f32, map_binary, map_unary};
use super::reduce::{mean_tensor, reduce_axes, reduce_tensor};
use super::tensor::{decode, dims, encode, norm_axis, numel, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "variance" => variance,
        "nn.batch_norm" => batch_norm,
        "nn.layer_norm" => layer_norm,
        "nn.instance_norm" => instance_norm,
        "nn.group_norm" => group_norm,
        "nn.l2_normalize" => l2_normalize,
        "nn.lrn" => lrn,
        _ => return None,
    })
}

fn reshaped(t: &TensorData, shape: Vec<i64>) -> EvalResult<TensorData> {
    TensorData::new(t.dtype, shape, t.data.clone()).map_err(|e| EvalError::Unsupported(e.message))
}

/// A scalar of `dtype` holding `v` (`MakeConstantScalar`).
fn scalar(dtype: DataType, v: f64) -> EvalResult<TensorData> {
    TensorData::from_f64s(dtype, Vec::new(), &[v]).map_err(|e| EvalError::Unsupported(e.message))
}

/// `VarianceCompute`: `Σ (x - mean)² / (count - unbiased)`; float16 squares
/// are summed and divided in float32, then cast back.
pub(crate) fn variance_tensor(
    x: &TensorData,
    mean: &TensorData,
    axes: &[usize],
    keepdims: bool,
    unbiased: bool,
) -> EvalResult<TensorData> {
    if axes.is_empty() {
        return unsupported("variance: no reduced axis");
    }
    let count: i64 = axes.iter().map(|&k| x.shape[k]).product::<i64>() - i64::from(unbiased);
    let diff = map_binary(x, mean, "subtract")?;
    let mut square = map_binary(&diff, &diff, "multiply")?;
    if x.dtype.is_float16() {
        square = super::cast::cast_tensor(&square, DataType::FLOAT32)?;
    }
    let sum = reduce_tensor(&square, "sum", axes, keepdims)?;
    let count = super::cast::cast_tensor(
        &TensorData::from_i64s(DataType::INT64, Vec::new(), &[count])
            .map_err(|e| EvalError::Unsupported(e.message))?,
        sum.dtype,
    )?;
    let var = map_binary(&sum, &count, "divide")?;
    if x.dtype.is_float16() {
        super::cast::cast_tensor(&var, x.dtype)
    } else {
        Ok(var)
    }
}

fn variance(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (x, mean) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    let axes = reduce_axes(call, x.ndim())?;
    let keepdims = call.bool_or("keepdims", false);
    let unbiased = call.bool_or("unbiased", false);
    variance_tensor(x, mean, &axes, keepdims, unbiased).map(Value::tensor)
}

/// Sorted, distinct axes from a list that may count from the end.
fn axes_from(list: &[i64], ndim: usize, op: &str) -> EvalResult<Vec<usize>> {
    let mut axes = list
        .iter()
        .map(|&a| norm_axis(a, ndim, op))
        .collect::<EvalResult<Vec<_>>>()?;
    axes.sort_unstable();
    axes.dedup();
    Ok(axes)
}

/// `(x - mean) / sqrt(var + ε)` over `axes`, as SimplifyInference writes it
/// (ε a constant of x's type from the C++ `float` epsilon).
fn normalise(x: &TensorData, axes: &[usize], epsilon: f64) -> EvalResult<TensorData> {
    let mean = mean_tensor(x, axes, true, false)?;
    let var = variance_tensor(x, &mean, axes, true, false)?;
    let eps = scalar(x.dtype, f64::from(epsilon as f32))?;
    let denom = map_unary(&map_binary(&var, &eps, "add")?, "sqrt")?;
    map_binary(&map_binary(x, &mean, "subtract")?, &denom, "divide")
}

/// A per-channel tensor `[C]` shaped to broadcast along `axis` of a rank
/// `ndim` tensor (`ExpandBiasToMatchAxis`).
fn along_axis(t: &TensorData, ndim: usize, axis: usize) -> EvalResult<TensorData> {
    let mut shape = t.shape.clone();
    shape.resize(shape.len() + ndim - axis - 1, 1);
    reshaped(t, shape)
}

/// Multiplies by γ and adds β along `axis`, each when the call enables it.
fn scale_and_center(
    mut out: TensorData,
    gamma: &TensorData,
    beta: &TensorData,
    axis: usize,
    call: &CallInfo,
) -> EvalResult<TensorData> {
    let ndim = out.ndim();
    if call.bool_or("scale", true) {
        out = map_binary(&out, &along_axis(gamma, ndim, axis)?, "multiply")?;
    }
    if call.bool_or("center", true) {
        out = map_binary(&out, &along_axis(beta, ndim, axis)?, "add")?;
    }
    Ok(out)
}

/// The data, γ and β of a normalisation, and its (normalised) axis.
fn norm_args<'v>(
    args: &'v [Value],
    call: &CallInfo,
) -> EvalResult<(&'v TensorData, &'v TensorData, &'v TensorData, usize)> {
    expect_args(args, 3, call)?;
    let x = arg_tensor(args, 0, call)?;
    let axis = norm_axis(call.int_or("axis", 1), x.ndim(), call.op)?;
    Ok((
        x,
        arg_tensor(args, 1, call)?,
        arg_tensor(args, 2, call)?,
        axis,
    ))
}

fn layer_norm(args: &[Value], call: &CallInfo) -> EvalResult {
    let (x, gamma, beta, axis) = norm_args(args, call)?;
    let out = normalise(x, &[axis], call.f64("epsilon")?)?;
    scale_and_center(out, gamma, beta, axis, call).map(Value::tensor)
}

fn instance_norm(args: &[Value], call: &CallInfo) -> EvalResult {
    let (x, gamma, beta, axis) = norm_args(args, call)?;
    let reduced: Vec<usize> = (1..x.ndim()).filter(|&i| i != axis).collect();
    let out = normalise(x, &reduced, call.f64("epsilon")?)?;
    scale_and_center(out, gamma, beta, axis, call).map(Value::tensor)
}

/// The channels split into `num_groups` groups, each normalised over its
/// channels and every axis after the channel axis.
fn group_norm(args: &[Value], call: &CallInfo) -> EvalResult {
    let (x, gamma, beta, axis) = norm_args(args, call)?;
    let groups = call.req_int("num_groups")?;
    let channels = x.shape[axis];
    if groups <= 0 || channels % groups != 0 {
        return unsupported("nn.group_norm: the channels do not divide into the groups");
    }
    let mut grouped_shape = Vec::with_capacity(x.ndim() + 1);
    let mut reduced = Vec::new();
    for (i, &extent) in x.shape.iter().enumerate() {
        if i == axis {
            grouped_shape.extend([groups, channels / groups]);
            reduced.push(i + 1);
        } else {
            if i > axis {
                reduced.push(i + 1);
            }
            grouped_shape.push(extent);
        }
    }
    let grouped = reshaped(x, grouped_shape)?;
    let out = reshaped(
        &normalise(&grouped, &reduced, call.f64("epsilon")?)?,
        x.shape.clone(),
    )?;
    scale_and_center(out, gamma, beta, axis, call).map(Value::tensor)
}

/// `x / sqrt(max(Σ x², ε))` over `axis`, ε a float32 constant.
fn l2_normalize(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let axes = axes_from(&call.ints("axis")?.unwrap_or_default(), x.ndim(), call.op)?;
    if axes.is_empty() {
        return unsupported("nn.l2_normalize: no axis");
    }
    let eps = scalar(DataType::FLOAT32, f64::from(call.f64("eps")? as f32))?;
    let square = map_binary(x, x, "multiply")?;
    let sum = map_binary(
        &reduce_tensor(&square, "sum", &axes, true)?,
        &eps,
        "maximum",
    )?;
    map_binary(x, &map_unary(&sum, "sqrt")?, "divide").map(Value::tensor)
}

/// `topi.nn.batch_norm` in inference mode; returns `(out, mean, var)`.
fn batch_norm(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 5, call)?;
    let x = arg_tensor(args, 0, call)?;
    let [gamma, beta, mean, var] = [1, 2, 3, 4].map(|i| arg_tensor(args, i, call));
    let (gamma, beta, mean, var) = (gamma?, beta?, mean?, var?);
    let axis = norm_axis(call.int_or("axis", 1), x.ndim(), call.op)?;
    let eps = scalar(x.dtype, f64::from(const_f32(x.dtype, call.f64("epsilon")?)))?;
    let shaped = |t: &TensorData| along_axis(t, x.ndim(), axis);
    let denom = map_unary(&map_binary(&shaped(var)?, &eps, "add")?, "sqrt")?;
    let out = map_binary(
        &map_binary(x, &shaped(mean)?, "subtract")?,
        &denom,
        "divide",
    )?;
    let out = scale_and_center(out, gamma, beta, axis, call)?;
    Ok(Value::Tuple(vec![
        Value::tensor(out),
        Value::tensor(mean.clone()),
        Value::tensor(var.clone()),
    ]))
}

/// TOPI's `lrn` on 4-D data, along axis 1 or 3: the squares summed over a
/// window of `size` channels (zero outside), then
/// `x / pow(bias + alpha · s / size, beta)`.
fn lrn(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let size = call.req_int("size")?;
    let axis = call.int_or("axis", 1);
    if x.ndim() != 4 || size <= 0 || size % 2 != 1 || !(axis == 1 || axis == 3) {
        return unsupported("nn.lrn: 4-D data, an odd size and axis 1 or 3 expected");
    }
    let dt = x.dtype;
    let Col::F32(v) = decode(x)? else {
        return unsupported(format!("nn.lrn on {dt}"));
    };
    let c =
        |name: &str| -> EvalResult<f32> { Ok(const_f32(dt, f64::from(call.f64(name)? as f32))) };
    let (alpha, beta, bias) = (c("alpha")?, c("beta")?, c("bias")?);
    let r = |a: f32| super::tensor::round_f32(dt, a);
    let d = dims(&x.shape);
    let axis = axis as usize;
    let (len, step) = (d[axis], strides(&d)[axis]);
    let half = (size / 2) as usize;
    let size_f = r(size as f32);
    let mut out = Vec::with_capacity(numel(&d));
    for (i, &xi) in v.iter().enumerate() {
        let ch = (i / step) % len;
        let mut sum = 0f32;
        for k in 0..size as usize {
            // Channel `ch + k - half` of the data padded by `half` zeros.
            let p = (ch + k).checked_sub(half).filter(|&p| p < len);
            let e = p.map_or(0.0, |p| v[i - ch * step + p * step]);
            sum = r(sum + r(e * e));
        }
        let base = r(bias + r(r(alpha * sum) / size_f));
        out.push(r(xi / r(base.powf(beta))));
    }
    Ok(Value::tensor(encode(&Col::F32(out), dt, x.shape.clone())?))
}
