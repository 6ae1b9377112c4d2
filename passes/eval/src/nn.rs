//! Neural-network kernels: `nn.bias_add`, `nn.leaky_relu`, `nn.prelu`, `nn.softmax`,
//! `nn.log_softmax` (`nn.relu` is with the unary kernels), and the
//! annotations whose compute is the identity (and `debug`, whose compute
//! is the identity plus a host callback that folding does not run).

use super::elemwise::{const_f32, map_binary};
use super::tensor::{decode, dims, encode, norm_axis, round_f32, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.bias_add" => bias_add,
        "nn.leaky_relu" => leaky_relu,
        "nn.prelu" => prelu,
        "nn.softmax" | "nn.log_softmax" | "nn.fast_softmax" => softmax,
        "annotation.stop_fusion"
        | "annotation.cast_hint"
        | "annotation.bitpack_start"
        | "annotation.bitpack_end"
        | "annotation.checkpoint"
        | "annotation.compiler_begin"
        | "annotation.compiler_end"
        | "debug" => identity,
        _ => return None,
    })
}

/// `data + expand_dims(bias, 1, ndim - axis - 1)`.
fn bias_add(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let bias = arg_tensor(args, 1, call)?;
    let axis = norm_axis(call.int_or("axis", 1), data.ndim(), call.op)?;
    let mut shape = bias.shape.clone();
    shape.resize(shape.len() + data.ndim() - axis - 1, 1);
    let bias = TensorData::new(bias.dtype, shape, bias.data.clone())
        .map_err(|e| EvalError::Unsupported(e.message))?;
    Ok(Value::tensor(map_binary(data, &bias, "add")?))
}

/// `select(x > 0, x, x * alpha)`, alpha a constant of x's type.
fn leaky_relu(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let alpha = call.f64("alpha")?;
    let dt = x.dtype;
    let out = match decode(x)? {
        Col::F32(v) => {
            let a = const_f32(dt, alpha);
            Col::F32(
                v.into_iter()
                    .map(|x| if x > 0.0 { x } else { round_f32(dt, x * a) })
                    .collect(),
            )
        }
        Col::F64(v) => Col::F64(
            v.into_iter()
                .map(|x| if x > 0.0 { x } else { x * alpha })
                .collect(),
        ),
        Col::Int(_) => return unsupported("nn.leaky_relu on integers"),
    };
    Ok(Value::tensor(encode(&out, dt, x.shape.clone())?))
}

/// `topi::prelu`: `select(x > 0, x, x * alpha[i_axis])`, one slope per
/// index along `axis` (the relation made `alpha` `[x.shape[axis]]`).
fn prelu(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let x = arg_tensor(args, 0, call)?;
    let alpha = arg_tensor(args, 1, call)?;
    let axis = call.int_or("axis", 1);
    let d = dims(&x.shape);
    let Some(axis) = usize::try_from(axis).ok().filter(|&a| a < d.len()) else {
        return unsupported(format!("nn.prelu: axis {axis}"));
    };
    if alpha.dtype != x.dtype || alpha.shape != [x.shape[axis]] {
        return unsupported("nn.prelu: alpha must be one value of the data's type per channel");
    }
    let (step, len) = (strides(&d)[axis], d[axis]);
    let channel = |i: usize| (i / step) % len;
    let dt = x.dtype;
    let out = match (decode(x)?, decode(alpha)?) {
        (Col::F32(v), Col::F32(a)) => Col::F32(
            v.iter()
                .enumerate()
                .map(|(i, &x)| {
                    if x > 0.0 {
                        x
                    } else {
                        round_f32(dt, x * a[channel(i)])
                    }
                })
                .collect(),
        ),
        (Col::F64(v), Col::F64(a)) => Col::F64(
            v.iter()
                .enumerate()
                .map(|(i, &x)| if x > 0.0 { x } else { x * a[channel(i)] })
                .collect(),
        ),
        (Col::Int(v), Col::Int(a)) => Col::Int(
            v.iter()
                .enumerate()
                .map(|(i, &x)| if x > 0 { x } else { x * a[channel(i)] })
                .collect(),
        ),
        _ => return unsupported(format!("nn.prelu on {dt}")),
    };
    Ok(Value::tensor(encode(&out, dt, x.shape.clone())?))
}

/// `topi::identity`.
fn identity(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    Ok(args[0].clone())
}

/// TOPI's softmax along `axis`, for each row: `m` the maximum (from the
/// lowest finite value, `select(acc > x, acc, x)`), `e = exp(x - m)`, `s`
/// the sum of `e` in order, then `e / s`; log_softmax is
/// `x - m - log(s)`. `nn.fast_softmax` takes `e = fast_exp(x - m)` for
/// float32 (TOPI's `softmax_common` with `use_fast_exp`).
fn softmax(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let dt = x.dtype;
    let axis = norm_axis(call.int_or("axis", -1), x.ndim(), call.op)?;
    let log = call.op == "nn.log_softmax";
    let fast = call.op == "nn.fast_softmax" && dt == relay_ir::dtype::DataType::FLOAT32;
    let d = dims(&x.shape);
    let st = strides(&d);
    let (len, step) = (d[axis], st[axis]);
    let outer: usize = d[..axis].iter().product();
    let inner: usize = d[axis + 1..].iter().product();
    let Col::F32(v) = decode(x)? else {
        return unsupported(format!("{} on {dt}", call.op));
    };
    let r = |a: f32| round_f32(dt, a);
    let lowest = if dt.is_float16() {
        half::f16::MIN.to_f32()
    } else if dt.is_bfloat16() {
        half::bf16::MIN.to_f32()
    } else {
        f32::MIN
    };
    let mut out = vec![0f32; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let base = o * len * inner + i;
            let at = |k: usize| base + k * step;
            let m = (0..len).fold(lowest, |acc, k| if acc > v[at(k)] { acc } else { v[at(k)] });
            let e = |k: usize| {
                let delta = r(v[at(k)] - m);
                if fast {
                    super::fast_math::fast_exp(delta)
                } else {
                    r(delta.exp())
                }
            };
            let s = (0..len).fold(0f32, |acc, k| r(acc + e(k)));
            for k in 0..len {
                out[at(k)] = if log {
                    r(r(v[at(k)] - m) - r(s.ln()))
                } else {
                    r(e(k) / s)
                };
            }
        }
    }
    Ok(Value::tensor(encode(&Col::F32(out), dt, x.shape.clone())?))
}
