//! Element-wise kernels: unary math, broadcasting binary arithmetic,
//! comparisons and logic, `where`, `clip`, and the `*_like` fills.
//!
//! Each float kernel is written as TVM's TOPI computes it, step by step,
//! with [`round_f32`] after each step so that `float16`/`bfloat16` round as
//! LLVM's soft-promoted `half` does (for `float32` the rounding is the
//! identity).

use super::broadcast::{broadcast_map, try_broadcast_map};
use super::tensor::{
    broadcast_index, broadcast_shapes, class, decode, encode, filled, round_f32, wrap, Class, Col,
};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "negative" | "sqrt" | "rsqrt" | "exp" | "log" | "log2" | "log10" | "tanh" | "sigmoid"
        | "floor" | "ceil" | "round" | "trunc" | "abs" | "sign" | "cos" | "sin" | "tan"
        | "cosh" | "sinh" | "acos" | "asin" | "atan" | "copy" | "logical_not" | "bitwise_not"
        | "nn.relu" => unary,
        "isnan" | "isfinite" | "isinf" => predicate,
        "add" | "subtract" | "multiply" | "divide" | "floor_divide" | "trunc_divide" | "mod"
        | "floor_mod" | "trunc_mod" | "power" | "maximum" | "minimum" | "logical_and"
        | "logical_or" | "logical_xor" | "bitwise_and" | "bitwise_or" | "bitwise_xor"
        | "left_shift" | "right_shift" => binary,
        "equal" | "not_equal" | "less" | "less_equal" | "greater" | "greater_equal" => compare,
        "where" => where_,
        "clip" => clip,
        "zeros_like" | "ones_like" => const_like,
        "full_like" => full_like,
        _ => return None,
    })
}

// ---- unary ----

type F32Fn = fn(f32, DataType) -> f32;
type F64Fn = fn(f64) -> f64;
type IntFn = fn(i128, DataType) -> EvalResult<i128>;

struct UnaryFns {
    f32: Option<F32Fn>,
    f64: Option<F64Fn>,
    int: Option<IntFn>,
}

fn r(dt: DataType, x: f32) -> f32 {
    round_f32(dt, x)
}

fn unary_fns(op: &str) -> UnaryFns {
    macro_rules! fns {
        ($f32:expr, $f64:expr, $int:expr) => {
            UnaryFns {
                f32: $f32,
                f64: $f64,
                int: $int,
            }
        };
    }
    match op {
        // TVM's `neg` is `0 - x`: +0 stays +0.
        "negative" => fns!(
            Some(|x, _| 0.0 - x),
            Some(|x| 0.0 - x),
            Some(|x, dt| Ok(wrap(dt, 0i128.wrapping_sub(x))))
        ),
        "sqrt" => fns!(Some(|x, _| x.sqrt()), Some(f64::sqrt), None),
        // `1 / sqrt(x)` (the `tir.rsqrt` legalisation).
        "rsqrt" => fns!(
            Some(|x, dt| 1.0 / r(dt, x.sqrt())),
            Some(|x| 1.0 / x.sqrt()),
            None
        ),
        "exp" => fns!(Some(|x, _| x.exp()), Some(f64::exp), None),
        "log" => fns!(Some(|x, _| x.ln()), Some(f64::ln), None),
        "log2" => fns!(Some(|x, _| x.log2()), Some(f64::log2), None),
        "log10" => fns!(Some(|x, _| x.log10()), Some(f64::log10), None),
        "tanh" => fns!(Some(tanh_f32), Some(tanh_f64), None),
        // `1 / (1 + exp(0 - x))` (the `tir.sigmoid` legalisation).
        "sigmoid" => fns!(
            Some(|x, dt| 1.0 / r(dt, 1.0 + r(dt, r(dt, 0.0 - x).exp()))),
            Some(|x| 1.0 / (1.0 + (0.0 - x).exp())),
            None
        ),
        "floor" => fns!(Some(|x, _| x.floor()), Some(f64::floor), Some(|x, _| Ok(x))),
        "ceil" => fns!(Some(|x, _| x.ceil()), Some(f64::ceil), Some(|x, _| Ok(x))),
        // `llvm.round`: halfway cases away from zero.
        "round" => fns!(Some(|x, _| x.round()), Some(f64::round), Some(|x, _| Ok(x))),
        "trunc" => fns!(Some(|x, _| x.trunc()), Some(f64::trunc), Some(|x, _| Ok(x))),
        "abs" => fns!(
            Some(|x, _| x.abs()),
            Some(f64::abs),
            Some(|x, dt| Ok(wrap(dt, if x >= 0 { x } else { 0i128.wrapping_sub(x) })))
        ),
        // select(x > 0, 1, select(x < 0, -1, 0)).
        "sign" => fns!(
            Some(|x, _| if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }),
            Some(|x| if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }),
            Some(|x, dt| Ok(wrap(dt, x.signum())))
        ),
        "cos" => fns!(Some(|x, _| x.cos()), Some(f64::cos), None),
        "sin" => fns!(Some(|x, _| x.sin()), Some(f64::sin), None),
        // `sin(x) / cos(x)` (the LLVM legalisation of `tir.tan`).
        "tan" => fns!(
            Some(|x, dt| r(dt, x.sin()) / r(dt, x.cos())),
            Some(|x| x.sin() / x.cos()),
            None
        ),
        // (exp(x) + exp(-1 * x)) / 2 and (exp(x) - exp(-1 * x)) / 2.
        "cosh" => fns!(
            Some(|x, dt| r(dt, r(dt, x.exp()) + r(dt, r(dt, -x).exp())) / 2.0),
            Some(|x| (x.exp() + (-x).exp()) / 2.0),
            None
        ),
        "sinh" => fns!(
            Some(|x, dt| r(dt, r(dt, x.exp()) - r(dt, r(dt, -x).exp())) / 2.0),
            Some(|x| (x.exp() - (-x).exp()) / 2.0),
            None
        ),
        "acos" => fns!(Some(|x, _| x.acos()), Some(f64::acos), None),
        "asin" => fns!(Some(|x, _| x.asin()), Some(f64::asin), None),
        "atan" => fns!(Some(|x, _| x.atan()), Some(f64::atan), None),
        "copy" => fns!(Some(|x, _| x), Some(|x| x), Some(|x, _| Ok(x))),
        "logical_not" => fns!(None, None, Some(|x, _| Ok(i128::from(x == 0)))),
        "bitwise_not" => fns!(None, None, Some(|x, dt| Ok(wrap(dt, !x)))),
        // max(x, 0): select(x > 0, x, 0).
        "nn.relu" => fns!(
            Some(|x, _| if x > 0.0 { x } else { 0.0 }),
            Some(|x| if x > 0.0 { x } else { 0.0 }),
            Some(|x, _| Ok(x.max(0)))
        ),
        _ => fns!(None, None, None),
    }
}

/// TVM's LLVM legalisation of `tir.tanh`:
/// `x >= 0 ? (1 - exp(-2x)) / (1 + exp(-2x)) : (exp(2x) - 1) / (exp(2x) + 1)`.
fn tanh_f32(x: f32, dt: DataType) -> f32 {
    if x >= 0.0 {
        let e = r(dt, r(dt, -2.0 * x).exp());
        r(dt, 1.0 - e) / r(dt, 1.0 + e)
    } else {
        let e = r(dt, r(dt, 2.0 * x).exp());
        r(dt, e - 1.0) / r(dt, e + 1.0)
    }
}

fn tanh_f64(x: f64) -> f64 {
    if x >= 0.0 {
        let e = (-2.0 * x).exp();
        (1.0 - e) / (1.0 + e)
    } else {
        let e = (2.0 * x).exp();
        (e - 1.0) / (e + 1.0)
    }
}

/// Applies a unary function to every element.
pub(crate) fn map_unary(x: &TensorData, op: &str) -> EvalResult<TensorData> {
    let fns = unary_fns(op);
    let dt = x.dtype;
    let missing = || unsupported(format!("{op} on {dt}"));
    let out = match decode(x)? {
        Col::F32(v) => {
            let Some(f) = fns.f32 else { return missing() };
            Col::F32(v.into_iter().map(|a| r(dt, f(a, dt))).collect())
        }
        Col::F64(v) => {
            let Some(f) = fns.f64 else { return missing() };
            Col::F64(v.into_iter().map(f).collect())
        }
        Col::Int(v) => {
            let Some(f) = fns.int else { return missing() };
            Col::Int(v.into_iter().map(|a| f(a, dt)).collect::<EvalResult<_>>()?)
        }
    };
    encode(&out, dt, x.shape.clone())
}

fn unary(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    Ok(Value::tensor(map_unary(x, call.op)?))
}

fn predicate(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let test: fn(f64) -> bool = match call.op {
        "isnan" => f64::is_nan,
        "isfinite" => f64::is_finite,
        _ => f64::is_infinite,
    };
    let out: Vec<i128> = match decode(x)? {
        Col::F32(v) => v
            .into_iter()
            .map(|a| i128::from(test(f64::from(a))))
            .collect(),
        Col::F64(v) => v.into_iter().map(|a| i128::from(test(a))).collect(),
        // Integers are finite and never NaN.
        Col::Int(v) => v
            .iter()
            .map(|_| i128::from(call.op == "isfinite"))
            .collect(),
    };
    Ok(Value::tensor(encode(
        &Col::Int(out),
        DataType::bool(),
        x.shape.clone(),
    )?))
}

// ---- binary ----

type F32Bin = fn(f32, f32, DataType) -> f32;
type F64Bin = fn(f64, f64) -> f64;
type IntBin = fn(i128, i128, DataType) -> EvalResult<i128>;

struct BinaryFns {
    f32: Option<F32Bin>,
    f64: Option<F64Bin>,
    int: Option<IntBin>,
}

fn nonzero(b: i128) -> EvalResult<()> {
    if b == 0 {
        return unsupported("integer division by zero");
    }
    Ok(())
}

/// Truncating division; `MIN / -1` traps on x86, so it is not folded.
fn int_truncdiv(a: i128, b: i128, dt: DataType) -> EvalResult<i128> {
    nonzero(b)?;
    let q = a / b;
    if wrap(dt, q) != q {
        return unsupported("integer division overflow");
    }
    Ok(q)
}

fn int_truncmod(a: i128, b: i128, dt: DataType) -> EvalResult<i128> {
    int_truncdiv(a, b, dt)?;
    Ok(a % b)
}

fn int_floordiv(a: i128, b: i128, dt: DataType) -> EvalResult<i128> {
    let q = int_truncdiv(a, b, dt)?;
    Ok(if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

fn int_floormod(a: i128, b: i128, dt: DataType) -> EvalResult<i128> {
    int_truncdiv(a, b, dt)?;
    let m = a % b;
    Ok(if m != 0 && ((m < 0) != (b < 0)) {
        m + b
    } else {
        m
    })
}

fn shift_amount(b: i128, dt: DataType) -> EvalResult<u32> {
    if b < 0 || b >= i128::from(dt.bits) {
        return unsupported("shift amount out of range");
    }
    Ok(b as u32)
}

fn binary_fns(op: &str) -> BinaryFns {
    macro_rules! fns {
        ($f32:expr, $f64:expr, $int:expr) => {
            BinaryFns {
                f32: $f32,
                f64: $f64,
                int: $int,
            }
        };
    }
    match op {
        "add" => fns!(
            Some(|a, b, _| a + b),
            Some(|a, b| a + b),
            Some(|a, b, dt| Ok(wrap(dt, a.wrapping_add(b))))
        ),
        "subtract" => fns!(
            Some(|a, b, _| a - b),
            Some(|a, b| a - b),
            Some(|a, b, dt| Ok(wrap(dt, a.wrapping_sub(b))))
        ),
        "multiply" => fns!(
            Some(|a, b, _| a * b),
            Some(|a, b| a * b),
            Some(|a, b, dt| Ok(wrap(dt, a.wrapping_mul(b))))
        ),
        "divide" | "trunc_divide" => fns!(
            Some(|a, b, _| a / b),
            Some(|a, b| a / b),
            Some(int_truncdiv)
        ),
        // Floats: floor(a / b).
        "floor_divide" => fns!(
            Some(|a, b, dt| r(dt, a / b).floor()),
            Some(|a, b| (a / b).floor()),
            Some(int_floordiv)
        ),
        // Floats: `frem`, i.e. fmod.
        "mod" | "trunc_mod" => fns!(
            Some(|a, b, _| a % b),
            Some(|a, b| a % b),
            Some(int_truncmod)
        ),
        // Floats: a - floor(a / b) * b.
        "floor_mod" => fns!(
            Some(|a, b, dt| a - r(dt, r(dt, r(dt, a / b).floor()) * b)),
            Some(|a, b| a - (a / b).floor() * b),
            Some(int_floormod)
        ),
        "power" => fns!(Some(|a, b, _| a.powf(b)), Some(f64::powf), None),
        // select(a > b, a, b) and select(a < b, a, b).
        "maximum" => fns!(
            Some(|a, b, _| if a > b { a } else { b }),
            Some(|a, b| if a > b { a } else { b }),
            Some(|a, b, _| Ok(if a > b { a } else { b }))
        ),
        "minimum" => fns!(
            Some(|a, b, _| if a < b { a } else { b }),
            Some(|a, b| if a < b { a } else { b }),
            Some(|a, b, _| Ok(if a < b { a } else { b }))
        ),
        "logical_and" => fns!(None, None, Some(|a, b, _| Ok(i128::from(a != 0 && b != 0)))),
        "logical_or" => fns!(None, None, Some(|a, b, _| Ok(i128::from(a != 0 || b != 0)))),
        "logical_xor" => fns!(
            None,
            None,
            Some(|a, b, _| Ok(i128::from((a != 0) != (b != 0))))
        ),
        "bitwise_and" => fns!(None, None, Some(|a, b, dt| Ok(wrap(dt, a & b)))),
        "bitwise_or" => fns!(None, None, Some(|a, b, dt| Ok(wrap(dt, a | b)))),
        "bitwise_xor" => fns!(None, None, Some(|a, b, dt| Ok(wrap(dt, a ^ b)))),
        "left_shift" => fns!(
            None,
            None,
            Some(|a, b, dt| Ok(wrap(dt, a << shift_amount(b, dt)?)))
        ),
        // Arithmetic for signed types, logical for unsigned ones (whose
        // values are never negative here).
        "right_shift" => fns!(
            None,
            None,
            Some(|a, b, dt| Ok(wrap(dt, a >> shift_amount(b, dt)?)))
        ),
        _ => fns!(None, None, None),
    }
}

/// `op(a, b)` with broadcasting; both operands have the same data type.
pub(crate) fn map_binary(a: &TensorData, b: &TensorData, op: &str) -> EvalResult<TensorData> {
    if a.dtype != b.dtype {
        return unsupported(format!(
            "{op}: operands of types {} and {}",
            a.dtype, b.dtype
        ));
    }
    let dt = a.dtype;
    let shape = broadcast_shapes(&a.shape, &b.shape)?;
    let (sa, sb) = (&a.shape[..], &b.shape[..]);
    let fns = binary_fns(op);
    let missing = || unsupported(format!("{op} on {dt}"));
    let out = match (decode(a)?, decode(b)?) {
        (Col::F32(x), Col::F32(y)) => {
            let Some(f) = fns.f32 else { return missing() };
            macro_rules! map {
                ($g:expr) => {
                    broadcast_map(&x, sa, &y, sb, &shape, $g)
                };
            }
            // The commonest float32 operations spelled out so that their
            // loops vectorise; the same arithmetic as `binary_fns`, and
            // float32's rounding is the identity.
            Col::F32(match (op, dt == DataType::FLOAT32) {
                ("add", true) => map!(|p: f32, q: f32| p + q),
                ("subtract", true) => map!(|p: f32, q: f32| p - q),
                ("multiply", true) => map!(|p: f32, q: f32| p * q),
                ("divide", true) => map!(|p: f32, q: f32| p / q),
                _ => broadcast_map(&x, sa, &y, sb, &shape, |p, q| r(dt, f(p, q, dt))),
            })
        }
        (Col::F64(x), Col::F64(y)) => {
            let Some(f) = fns.f64 else { return missing() };
            Col::F64(broadcast_map(&x, sa, &y, sb, &shape, f))
        }
        (Col::Int(x), Col::Int(y)) => {
            let Some(f) = fns.int else { return missing() };
            Col::Int(try_broadcast_map(&x, sa, &y, sb, &shape, |p, q| {
                f(p, q, dt)
            })?)
        }
        _ => return missing(),
    };
    encode(&out, dt, shape)
}

fn binary(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let a = arg_tensor(args, 0, call)?;
    let b = arg_tensor(args, 1, call)?;
    call.check_size(&broadcast_shapes(&a.shape, &b.shape)?)?;
    Ok(Value::tensor(map_binary(a, b, call.op)?))
}

/// Comparisons give `bool`; float comparisons are ordered (NaN compares
/// false, also for `not_equal`, which is LLVM's `fcmp one`).
pub(crate) fn map_compare(a: &TensorData, b: &TensorData, op: &str) -> EvalResult<TensorData> {
    if a.dtype != b.dtype {
        return unsupported(format!(
            "{op}: operands of types {} and {}",
            a.dtype, b.dtype
        ));
    }
    let shape = broadcast_shapes(&a.shape, &b.shape)?;
    let (sa, sb) = (&a.shape[..], &b.shape[..]);
    fn cmp<T: PartialOrd>(op: &str, x: T, y: T) -> bool {
        match op {
            "equal" => x == y,
            // Ordered: false when either is NaN.
            "not_equal" => matches!(
                x.partial_cmp(&y),
                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Greater)
            ),
            "less" => x < y,
            "less_equal" => x <= y,
            "greater" => x > y,
            _ => x >= y,
        }
    }
    let out: Vec<i128> = match (decode(a)?, decode(b)?) {
        (Col::F32(x), Col::F32(y)) => {
            broadcast_map(&x, sa, &y, sb, &shape, |p, q| i128::from(cmp(op, p, q)))
        }
        (Col::F64(x), Col::F64(y)) => {
            broadcast_map(&x, sa, &y, sb, &shape, |p, q| i128::from(cmp(op, p, q)))
        }
        (Col::Int(x), Col::Int(y)) => {
            broadcast_map(&x, sa, &y, sb, &shape, |p, q| i128::from(cmp(op, p, q)))
        }
        _ => return unsupported(format!("{op} on {}", a.dtype)),
    };
    encode(&Col::Int(out), DataType::bool(), shape)
}

fn compare(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let a = arg_tensor(args, 0, call)?;
    let b = arg_tensor(args, 1, call)?;
    call.check_size(&broadcast_shapes(&a.shape, &b.shape)?)?;
    Ok(Value::tensor(map_compare(a, b, call.op)?))
}

/// `where(cond, x, y)`: all three broadcast together; a non-zero condition
/// selects `x`.
fn where_(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let c = arg_tensor(args, 0, call)?;
    let x = arg_tensor(args, 1, call)?;
    let y = arg_tensor(args, 2, call)?;
    if x.dtype != y.dtype {
        return unsupported("where: branches of different types");
    }
    let shape = broadcast_shapes(&broadcast_shapes(&c.shape, &x.shape)?, &y.shape)?;
    call.check_size(&shape)?;
    let ic = broadcast_index(&c.shape, &shape);
    let ix = broadcast_index(&x.shape, &shape);
    let iy = broadcast_index(&y.shape, &shape);
    let truth: Vec<bool> = match decode(c)? {
        Col::F32(v) => v.iter().map(|&a| a != 0.0).collect(),
        Col::F64(v) => v.iter().map(|&a| a != 0.0).collect(),
        Col::Int(v) => v.iter().map(|&a| a != 0).collect(),
    };
    let b = x.dtype.bytes();
    let mut data = Vec::with_capacity(ic.len() * b);
    for k in 0..ic.len() {
        let (src, i) = if truth[ic[k]] { (x, ix[k]) } else { (y, iy[k]) };
        data.extend_from_slice(&src.data[i * b..i * b + b]);
    }
    TensorData::new(x.dtype, shape, data)
        .map(Value::tensor)
        .map_err(|e| super::EvalError::Unsupported(e.message))
}

/// `clip(x, a_min, a_max)`: `max(min(x, a_max), a_min)` with the bounds
/// converted to x's type (`tir.const`: rounded for floats, truncated for
/// integers).
fn clip(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let lo = call.f64("a_min")?;
    let hi = call.f64("a_max")?;
    let dt = x.dtype;
    let out = match decode(x)? {
        Col::F32(v) => {
            let (lo, hi) = (const_f32(dt, lo), const_f32(dt, hi));
            Col::F32(
                v.into_iter()
                    .map(|a| {
                        let m = if a < hi { a } else { hi };
                        if m > lo {
                            m
                        } else {
                            lo
                        }
                    })
                    .collect(),
            )
        }
        Col::F64(v) => Col::F64(
            v.into_iter()
                .map(|a| {
                    let m = if a < hi { a } else { hi };
                    if m > lo {
                        m
                    } else {
                        lo
                    }
                })
                .collect(),
        ),
        Col::Int(v) => {
            let (lo, hi) = (wrap(dt, lo as i64 as i128), wrap(dt, hi as i64 as i128));
            Col::Int(v.into_iter().map(|a| a.min(hi).max(lo)).collect())
        }
    };
    Ok(Value::tensor(encode(&out, dt, x.shape.clone())?))
}

/// A double constant of a float type: LLVM's `ConstantFP::get(type, v)`,
/// one rounding from the double.
pub(crate) fn const_f32(dt: DataType, v: f64) -> f32 {
    if dt.is_float16() {
        half::f16::from_f64(v).to_f32()
    } else if dt.is_bfloat16() {
        half::bf16::from_f64(v).to_f32()
    } else {
        v as f32
    }
}

/// One element of `dtype` holding `v` (converted as `tir.const` does).
pub(crate) fn scalar_bytes(dtype: DataType, v: f64) -> EvalResult<Vec<u8>> {
    let col = match class(dtype)? {
        Class::F32 => Col::F32(vec![const_f32(dtype, v)]),
        Class::F64 => Col::F64(vec![v]),
        Class::Int => Col::Int(vec![if dtype.is_bool() {
            i128::from(v != 0.0)
        } else {
            v as i64 as i128
        }]),
    };
    Ok(encode(&col, dtype, Vec::new())?.data)
}

fn const_like(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let v = if call.op == "ones_like" { 1.0 } else { 0.0 };
    let bytes = scalar_bytes(x.dtype, v)?;
    Ok(Value::tensor(filled(x.dtype, x.shape.clone(), &bytes)?))
}

/// `full_like(x, fill)`: fill cast to x's type.
fn full_like(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let x = arg_tensor(args, 0, call)?;
    let fill = arg_tensor(args, 1, call)?;
    if fill.num_elements() != 1 {
        return unsupported("full_like: the fill value is not a scalar");
    }
    let v = super::cast::cast_tensor(fill, x.dtype)?;
    Ok(Value::tensor(filled(x.dtype, x.shape.clone(), &v.data)?))
}
