//! Simulated quantisation, in floating point: `qnn.simulated_quantize` and
//! `qnn.simulated_dequantize` (TOPI's `nn/qnn.py`), and the Relay
//! quantisation pass's `relay.op.annotation.simulated_quantize`
//! (`python/tvm/relay/quantize/_annotate.py`). One division, rounding,
//! clipping or multiplication per element, each rounded to the data type as
//! TOPI computes it: exact.

use super::tensor::{decode, encode, norm_axis, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "qnn.simulated_quantize" => qnn_simulated_quantize,
        "qnn.simulated_dequantize" => qnn_simulated_dequantize,
        "relay.op.annotation.simulated_quantize" => annotation_simulated_quantize,
        _ => return None,
    })
}

/// The data type codes of TOPI's `SQNN_DTYPE_TO_CODE`, with the type's range.
fn simulated_range(code: i128) -> Option<(f64, f64)> {
    match code {
        1 => Some((-128.0, 127.0)),
        2 => Some((0.0, 255.0)),
        3 => Some((-2147483648.0, 2147483647.0)),
        _ => None,
    }
}

/// Floats of the data's class, as `f64` (exact for float32 and float64).
fn floats(t: &TensorData, what: &str) -> EvalResult<Vec<f64>> {
    match decode(t)? {
        Col::F32(v) if t.dtype == relay_ir::dtype::DataType::FLOAT32 => {
            Ok(v.into_iter().map(f64::from).collect())
        }
        Col::F64(v) => Ok(v),
        _ => unsupported(format!("{what}: float32 or float64 expected")),
    }
}

fn integers(t: &TensorData, what: &str) -> EvalResult<Vec<i128>> {
    match decode(t)? {
        Col::Int(v) => Ok(v),
        _ => unsupported(format!("{what}: integers expected")),
    }
}

/// Rounds a value held in `f64` to the data's float type.
fn fix(is_f32: bool, x: f64) -> f64 {
    if is_f32 {
        f64::from(x as f32)
    } else {
        x
    }
}

/// The channel of every element: its index along `axis` modulo the
/// parameter's length (TOPI's `indexmod`, so one value serves every
/// channel).
fn channels(data: &TensorData, axis: i64, len: usize, op: &str) -> EvalResult<Vec<usize>> {
    if len == 0 {
        return unsupported(format!("{op}: an empty quantisation parameter"));
    }
    if data.ndim() == 0 {
        return Ok(vec![0]);
    }
    let axis = norm_axis(axis, data.ndim(), op)?;
    let extent = data.shape[axis].max(1) as usize;
    let inner: usize = data.shape[axis + 1..].iter().product::<i64>().max(0) as usize;
    Ok((0..data.num_elements() as usize)
        .map(|i| (i / inner.max(1)) % extent % len)
        .collect())
}

fn encode_like(data: &TensorData, v: Vec<f64>) -> EvalResult<Value> {
    let col = if data.dtype == relay_ir::dtype::DataType::FLOAT32 {
        Col::F32(v.into_iter().map(|x| x as f32).collect())
    } else {
        Col::F64(v)
    };
    Ok(Value::tensor(encode(&col, data.dtype, data.shape.clone())?))
}

/// `max(min(round(x / scale) + zp, qmax), qmin)` for the data type the
/// `out_dtype` tensor names; other codes pass the data through.
fn qnn_simulated_quantize(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 4, call)?;
    let data = arg_tensor(args, 0, call)?;
    let code = integers(arg_tensor(args, 1, call)?, "the dtype code")?;
    let [code] = code.as_slice() else {
        return unsupported("qnn.simulated_quantize: a scalar dtype code expected");
    };
    let x = floats(data, "the data")?;
    let Some((lo, hi)) = simulated_range(*code) else {
        return Ok(Value::tensor(data.clone()));
    };
    let is_f32 = data.dtype == relay_ir::dtype::DataType::FLOAT32;
    let scale = floats(arg_tensor(args, 2, call)?, "the scale")?;
    let zp = integers(arg_tensor(args, 3, call)?, "the zero point")?;
    let axis = call.int_or("axis", -1);
    let s_of = channels(data, axis, scale.len(), call.op)?;
    let z_of = channels(data, axis, zp.len(), call.op)?;
    let (lo, hi) = (fix(is_f32, lo), fix(is_f32, hi));
    let out = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let q = fix(is_f32, fix(is_f32, v / scale[s_of[i]]).round());
            let shifted = fix(is_f32, q + fix(is_f32, zp[z_of[i]] as f64));
            let m = if shifted < hi { shifted } else { hi };
            if m > lo {
                m
            } else {
                lo
            }
        })
        .collect();
    encode_like(data, out)
}

/// `(x - zp) · scale` for the integer codes; other codes pass the data
/// through.
fn qnn_simulated_dequantize(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 4, call)?;
    let data = arg_tensor(args, 0, call)?;
    let code = integers(arg_tensor(args, 1, call)?, "the dtype code")?;
    let [code] = code.as_slice() else {
        return unsupported("qnn.simulated_dequantize: a scalar dtype code expected");
    };
    let x = floats(data, "the data")?;
    if simulated_range(*code).is_none() {
        return Ok(Value::tensor(data.clone()));
    }
    let is_f32 = data.dtype == relay_ir::dtype::DataType::FLOAT32;
    let scale = floats(arg_tensor(args, 2, call)?, "the scale")?;
    let zp = integers(arg_tensor(args, 3, call)?, "the zero point")?;
    let axis = call.int_or("axis", -1);
    let s_of = channels(data, axis, scale.len(), call.op)?;
    let z_of = channels(data, axis, zp.len(), call.op)?;
    let out = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let shifted = fix(is_f32, v - fix(is_f32, zp[z_of[i]] as f64));
            fix(is_f32, shifted * scale[s_of[i]])
        })
        .collect();
    encode_like(data, out)
}

/// `round(clip(x / scale, clip_min, clip_max)) · scale` (broadcast
/// scalars), or the data itself for the identity kind; TVM's compute
/// asserts `sign` and `rounding="round"`, so other settings never compile.
fn annotation_simulated_quantize(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 4, call)?;
    let data = arg_tensor(args, 0, call)?;
    if !call.bool_or("sign", true) || call.str("rounding").unwrap_or("round") != "round" {
        return unsupported(
            "relay.op.annotation.simulated_quantize: TVM's compute requires sign and rounding=\"round\"",
        );
    }
    let Some(kind) = call.int("kind") else {
        return unsupported("relay.op.annotation.simulated_quantize: no `kind`");
    };
    // QAnnotateKind.IDENTITY: `topi.identity(data)`.
    if kind == 0 {
        return Ok(Value::tensor(data.clone()));
    }
    let x = floats(data, "the data")?;
    let is_f32 = data.dtype == relay_ir::dtype::DataType::FLOAT32;
    let scalar = |i: usize, what: &str| -> EvalResult<f64> {
        let t = arg_tensor(args, i, call)?;
        if t.dtype != data.dtype {
            return unsupported(format!("{}: {what} is not of the data's type", call.op));
        }
        match floats(t, what)?.as_slice() {
            [v] => Ok(*v),
            _ => unsupported(format!("{}: {what} must be a scalar", call.op)),
        }
    };
    let (scale, lo, hi) = (
        scalar(1, "the scale")?,
        scalar(2, "clip_min")?,
        scalar(3, "clip_max")?,
    );
    let out = x
        .into_iter()
        .map(|v| {
            let scaled = fix(is_f32, v / scale);
            let m = if scaled < hi { scaled } else { hi };
            let clipped = if m > lo { m } else { lo };
            fix(is_f32, clipped.round() * scale)
        })
        .collect();
    encode_like(data, out)
}
