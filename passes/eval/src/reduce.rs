//! Reductions (`relay/op/tensor/reduce.cc` over TOPI's `CommReduce`): the
//! reduced elements are combined one by one in row-major order of the
//! reduced axes, starting from the reducer's identity.

use super::cast::convert;
use super::tensor::{
    class, decode, dims, encode, for_each_index, numel, round_f32, strides, wrap, Class, Col,
};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "sum" | "prod" | "max" | "min" | "all" | "any" => reduce,
        "mean" => mean,
        "argmax" | "argmin" => arg_reduce,
        _ => return None,
    })
}

/// The reduced axes, sorted, per `GetReduceAxes`: null means all, negative
/// axes count from the end, `exclude` takes the complement.
pub(crate) fn reduce_axes(call: &CallInfo, ndim: usize) -> EvalResult<Vec<usize>> {
    let mut axes: Vec<usize> = match call.ints("axis")? {
        None => (0..ndim).collect(),
        Some(list) => list
            .iter()
            .map(|&a| super::tensor::norm_axis(a, ndim, call.op))
            .collect::<EvalResult<_>>()?,
    };
    axes.sort_unstable();
    axes.dedup();
    if call.bool_or("exclude", false) {
        axes = (0..ndim).filter(|k| !axes.contains(k)).collect();
    }
    Ok(axes)
}

/// For each output element, the flat input indices it reduces, in order;
/// and the output shape.
fn groups(shape: &[i64], axes: &[usize], keepdims: bool) -> (Vec<i64>, Vec<Vec<usize>>) {
    let d = dims(shape);
    let st = strides(&d);
    let kept: Vec<usize> = (0..d.len()).filter(|k| !axes.contains(k)).collect();
    let kept_dims: Vec<usize> = kept.iter().map(|&k| d[k]).collect();
    let red_dims: Vec<usize> = axes.iter().map(|&k| d[k]).collect();
    let mut out = Vec::with_capacity(numel(&kept_dims));
    for_each_index(&kept_dims, |_, kidx| {
        let base: usize = kidx.iter().zip(&kept).map(|(&i, &k)| i * st[k]).sum();
        let mut members = Vec::with_capacity(numel(&red_dims));
        for_each_index(&red_dims, |_, ridx| {
            members.push(
                base + ridx
                    .iter()
                    .zip(axes)
                    .map(|(&i, &k)| i * st[k])
                    .sum::<usize>(),
            );
        });
        out.push(members);
    });
    // A reduction over no elements (an empty reduced axis).
    if numel(&red_dims) == 0 {
        out.iter_mut().for_each(Vec::clear);
    }
    let out_shape: Vec<i64> = if keepdims {
        (0..d.len())
            .map(|k| if axes.contains(&k) { 1 } else { shape[k] })
            .collect()
    } else {
        kept.iter().map(|&k| shape[k]).collect()
    };
    (out_shape, out)
}

/// The lowest finite value of a float type (TVM's `min_value`), which is
/// the identity of `max`.
fn lowest_f32(dt: DataType) -> f32 {
    if dt.is_float16() {
        half::f16::MIN.to_f32()
    } else if dt.is_bfloat16() {
        half::bf16::MIN.to_f32()
    } else {
        f32::MIN
    }
}

fn highest_f32(dt: DataType) -> f32 {
    if dt.is_float16() {
        half::f16::MAX.to_f32()
    } else if dt.is_bfloat16() {
        half::bf16::MAX.to_f32()
    } else {
        f32::MAX
    }
}

fn int_range(dt: DataType) -> (i128, i128) {
    if dt.is_bool() {
        (0, 1)
    } else if dt.is_int() {
        (-(1i128 << (dt.bits - 1)), (1i128 << (dt.bits - 1)) - 1)
    } else {
        (0, (1i128 << dt.bits) - 1)
    }
}

/// Reduces `x` over `axes` with the reducer `op`.
pub(crate) fn reduce_tensor(
    x: &TensorData,
    op: &str,
    axes: &[usize],
    keepdims: bool,
) -> EvalResult<TensorData> {
    let dt = x.dtype;
    let (out_shape, groups) = groups(&x.shape, axes, keepdims);
    let out = match decode(x)? {
        Col::F32(v) => {
            let (init, f): (f32, fn(f32, f32) -> f32) = match op {
                "sum" => (0.0, |a, b| a + b),
                "prod" => (1.0, |a, b| a * b),
                "max" => (lowest_f32(dt), |a, b| if a > b { a } else { b }),
                "min" => (highest_f32(dt), |a, b| if a < b { a } else { b }),
                _ => return unsupported(format!("{op} on {dt}")),
            };
            Col::F32(
                groups
                    .iter()
                    .map(|g| g.iter().fold(init, |acc, &i| round_f32(dt, f(acc, v[i]))))
                    .collect(),
            )
        }
        Col::F64(v) => {
            let (init, f): (f64, fn(f64, f64) -> f64) = match op {
                "sum" => (0.0, |a, b| a + b),
                "prod" => (1.0, |a, b| a * b),
                "max" => (f64::MIN, |a, b| if a > b { a } else { b }),
                "min" => (f64::MAX, |a, b| if a < b { a } else { b }),
                _ => return unsupported(format!("{op} on {dt}")),
            };
            Col::F64(
                groups
                    .iter()
                    .map(|g| g.iter().fold(init, |acc, &i| f(acc, v[i])))
                    .collect(),
            )
        }
        Col::Int(v) => {
            let (lo, hi) = int_range(dt);
            let (init, f): (i128, fn(i128, i128) -> i128) = match op {
                "sum" => (0, |a, b| a.wrapping_add(b)),
                "prod" => (1, |a, b| a.wrapping_mul(b)),
                "max" => (lo, |a, b| a.max(b)),
                "min" => (hi, |a, b| a.min(b)),
                "all" => (1, |a, b| i128::from(a != 0 && b != 0)),
                "any" => (0, |a, b| i128::from(a != 0 || b != 0)),
                _ => return unsupported(format!("{op} on {dt}")),
            };
            Col::Int(
                groups
                    .iter()
                    .map(|g| g.iter().fold(init, |acc, &i| wrap(dt, f(acc, v[i]))))
                    .collect(),
            )
        }
    };
    encode(&out, dt, out_shape)
}

/// Whether `ReduceCompute` returns the input unchanged: a scalar input, or
/// `exclude` leaving no axis to reduce.
fn is_identity(call: &CallInfo, x: &TensorData, axes: &[usize]) -> bool {
    x.ndim() == 0 || (call.bool_or("exclude", false) && axes.is_empty())
}

fn reduce(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let axes = reduce_axes(call, x.ndim())?;
    if is_identity(call, x, &axes) {
        return Ok(Value::tensor(x.clone()));
    }
    let keepdims = call.bool_or("keepdims", false);
    Ok(Value::tensor(reduce_tensor(x, call.op, &axes, keepdims)?))
}

/// `mean`: the sum divided by the element count cast to the data type;
/// `float16` data is summed and divided in `float32`, then cast back.
fn mean(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let axes = reduce_axes(call, x.ndim())?;
    let keepdims = call.bool_or("keepdims", false);
    let identity = is_identity(call, x, &axes);
    mean_tensor(x, &axes, keepdims, identity).map(Value::tensor)
}

/// The mean of `x` over `axes` (sorted, distinct), as the `mean` operator
/// computes it; `identity` when `ReduceCompute` reduces nothing.
pub(crate) fn mean_tensor(
    x: &TensorData,
    axes: &[usize],
    keepdims: bool,
    identity: bool,
) -> EvalResult<TensorData> {
    let count: i64 = axes.iter().map(|&k| x.shape[k]).product();
    let dt = x.dtype;
    let work = if dt.is_float16() {
        super::cast::cast_tensor(x, DataType::FLOAT32)?
    } else {
        x.clone()
    };
    let wdt = work.dtype;
    let sum = if identity {
        work
    } else {
        reduce_tensor(&work, "sum", axes, keepdims)?
    };
    let count_col = convert(&Col::Int(vec![i128::from(count)]), wdt)?;
    let out = match (decode(&sum)?, count_col) {
        (Col::F32(v), Col::F32(c)) => {
            Col::F32(v.into_iter().map(|a| round_f32(wdt, a / c[0])).collect())
        }
        (Col::F64(v), Col::F64(c)) => Col::F64(v.into_iter().map(|a| a / c[0]).collect()),
        (Col::Int(v), Col::Int(c)) => {
            if c[0] == 0 {
                return unsupported("mean: integer division by zero");
            }
            Col::Int(v.into_iter().map(|a| wrap(wdt, a / c[0])).collect())
        }
        _ => return unsupported(format!("mean on {dt}")),
    };
    let result = encode(&out, wdt, sum.shape.clone())?;
    if dt.is_float16() {
        super::cast::cast_tensor(&result, dt)
    } else {
        Ok(result)
    }
}

/// `argmax` / `argmin`: int32 indices (within the reduced axes, row-major),
/// the first extreme unless `select_last_index`.
fn arg_reduce(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    if x.ndim() == 0 {
        return Ok(Value::tensor(x.clone()));
    }
    let axes = reduce_axes(call, x.ndim())?;
    if call.bool_or("exclude", false) && axes.is_empty() {
        return Ok(Value::tensor(x.clone()));
    }
    let keepdims = call.bool_or("keepdims", false);
    let last = call.bool_or("select_last_index", false);
    let is_max = call.op == "argmax";
    let dt = x.dtype;
    let (out_shape, groups) = groups(&x.shape, &axes, keepdims);
    // Values as f64 for floats, exact integers otherwise; compare with the
    // reducer's `is_bigger` / `is_same` rules.
    let vals: Vec<f64> = match decode(x)? {
        Col::F32(v) => v.into_iter().map(f64::from).collect(),
        Col::F64(v) => v,
        Col::Int(v) => {
            if v.iter().any(|&a| a.unsigned_abs() > (1u128 << 53)) {
                return unsupported("argmax/argmin: integers too large");
            }
            v.into_iter().map(|a| a as f64).collect()
        }
    };
    let init_val = match class(dt)? {
        Class::F32 => f64::from(if is_max {
            lowest_f32(dt)
        } else {
            highest_f32(dt)
        }),
        Class::F64 => {
            if is_max {
                f64::MIN
            } else {
                f64::MAX
            }
        }
        Class::Int => {
            let (lo, hi) = int_range(dt);
            (if is_max { lo } else { hi }) as f64
        }
    };
    let mut out = Vec::with_capacity(groups.len());
    for g in &groups {
        let (mut idx, mut val) = (-1i128, init_val);
        for (k, &i) in g.iter().enumerate() {
            let (k, v) = (k as i128, vals[i]);
            // lhs = the accumulator, rhs = the new element.
            let better = if is_max { val > v } else { val < v };
            let same = val == v;
            let proper = if last { idx > k } else { idx < k };
            if !(better || (same && proper)) {
                idx = k;
            }
            if !better {
                val = v;
            }
        }
        out.push(idx);
    }
    Ok(Value::tensor(encode(
        &Col::Int(out),
        DataType::INT32,
        out_shape,
    )?))
}
