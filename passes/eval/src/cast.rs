//! `cast`, `cast_like`, `reinterpret`: conversions with LLVM's x86-64
//! semantics (see the module documentation of `eval`).

use super::tensor::{class, decode, encode, round_f32, wrap, Class, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "cast" => cast,
        "cast_like" => cast_like,
        "reinterpret" => reinterpret,
        _ => return None,
    })
}

/// `cvttsd2si` with a 32-bit destination: truncation, and `i32::MIN` for
/// NaN and values out of range.
fn cvtt32(x: f64) -> i128 {
    let t = x.trunc();
    if x.is_nan() || !(-2147483648.0..2147483648.0).contains(&t) {
        i128::from(i32::MIN)
    } else {
        t as i128
    }
}

/// `cvttsd2si` with a 64-bit destination.
fn cvtt64(x: f64) -> i128 {
    let t = x.trunc();
    if x.is_nan() || !(-9223372036854775808.0..9223372036854775808.0).contains(&t) {
        i128::from(i64::MIN)
    } else {
        t as i128
    }
}

/// LLVM's `fptosi` / `fptoui` from a float to `to` on x86-64.
fn float_to_int(x: f64, to: DataType) -> i128 {
    if to.is_bool() {
        // fcmp one x, 0: NaN is false.
        return i128::from(!x.is_nan() && x != 0.0);
    }
    let signed = to.code == TypeCode::Int;
    let raw = match (signed, to.bits) {
        (true, 8 | 16 | 32) | (false, 8 | 16) => cvtt32(x),
        (true, _) | (false, 32) => cvtt64(x),
        (false, _) => {
            // fptoui to i64: values from 2^63 up are converted after
            // subtracting 2^63, and the top bit set back.
            const TWO63: f64 = 9223372036854775808.0;
            if x < TWO63 || x.is_nan() {
                cvtt64(x)
            } else {
                cvtt64(x - TWO63) ^ (1i128 << 63)
            }
        }
    };
    wrap(to, raw)
}

/// Converts a column (of any data type: the class carries what matters) to
/// `to`.
pub(crate) fn convert(col: &Col, to: DataType) -> EvalResult<Col> {
    let to_class = class(to)?;
    Ok(match (col, to_class) {
        (Col::F32(v), Class::F32) => Col::F32(v.iter().map(|&x| round_f32(to, x)).collect()),
        (Col::F32(v), Class::F64) => Col::F64(v.iter().map(|&x| f64::from(x)).collect()),
        (Col::F64(v), Class::F64) => Col::F64(v.clone()),
        (Col::F64(v), Class::F32) => Col::F32(
            v.iter()
                .map(|&x| {
                    if to.is_float16() {
                        // fptrunc double to half rounds once.
                        half::f16::from_f64(x).to_f32()
                    } else {
                        round_f32(to, x as f32)
                    }
                })
                .collect(),
        ),
        (Col::F32(v), Class::Int) => {
            Col::Int(v.iter().map(|&x| float_to_int(f64::from(x), to)).collect())
        }
        (Col::F64(v), Class::Int) => Col::Int(v.iter().map(|&x| float_to_int(x, to)).collect()),
        (Col::Int(v), Class::F32) => {
            // sitofp / uitofp round to nearest; to half, LLVM goes through float.
            Col::F32(v.iter().map(|&x| round_f32(to, x as f32)).collect())
        }
        (Col::Int(v), Class::F64) => Col::F64(v.iter().map(|&x| x as f64).collect()),
        (Col::Int(v), Class::Int) => {
            if to.is_bool() {
                Col::Int(v.iter().map(|&x| i128::from(x != 0)).collect())
            } else {
                Col::Int(v.iter().map(|&x| wrap(to, x)).collect())
            }
        }
    })
}

/// `t` converted to `dtype`.
pub fn cast_tensor(t: &TensorData, dtype: DataType) -> EvalResult<TensorData> {
    if t.dtype == dtype {
        return Ok(t.clone());
    }
    let col = decode(t)?;
    let out = convert(&col, dtype)?;
    encode(&out, dtype, t.shape.clone())
}

fn cast(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let Some(dtype) = call.dtype("dtype")? else {
        return unsupported("cast: no dtype");
    };
    Ok(Value::tensor(cast_tensor(x, dtype)?))
}

fn cast_like(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let x = arg_tensor(args, 0, call)?;
    let like = arg_tensor(args, 1, call)?;
    Ok(Value::tensor(cast_tensor(x, like.dtype)?))
}

fn reinterpret(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let Some(dtype) = call.dtype("dtype")? else {
        return unsupported("reinterpret: no dtype");
    };
    if dtype.bits != x.dtype.bits || dtype.lanes != x.dtype.lanes || dtype.bits % 8 != 0 {
        return unsupported(format!("reinterpret {} as {dtype}", x.dtype));
    }
    TensorData::new(dtype, x.shape.clone(), x.data.clone())
        .map(Value::tensor)
        .map_err(|e| super::EvalError::Unsupported(e.message))
}
