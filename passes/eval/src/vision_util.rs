//! Element access shared by the vision, image and signal kernels whose TOPI
//! definitions compute in `float32` (hybrid scripts and IR builders):
//! `float32` arguments as `f32` columns, results built from `f32` or
//! `int32` values, scalar arguments, and TVM's `min`/`max` on floats.

use super::tensor::{decode, Col};
use super::{unsupported, EvalError, EvalResult};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

/// The elements of a `float32` argument.
pub(crate) fn f32_values(t: &TensorData, what: &str) -> EvalResult<Vec<f32>> {
    match (t.dtype == DataType::FLOAT32, decode(t)?) {
        (true, Col::F32(v)) => Ok(v),
        _ => unsupported(format!("{what} is {}, not float32", t.dtype)),
    }
}

/// The elements of an integer argument.
pub(crate) fn int_values(t: &TensorData, what: &str) -> EvalResult<Vec<i64>> {
    match decode(t)? {
        Col::Int(v) => Ok(v.into_iter().map(|x| x as i64).collect()),
        _ => unsupported(format!("{what} is {}, not an integer tensor", t.dtype)),
    }
}

/// The one element of a one-element `float32` argument.
pub(crate) fn f32_scalar(t: &TensorData, what: &str) -> EvalResult<f32> {
    match f32_values(t, what)?.as_slice() {
        [v] => Ok(*v),
        _ => unsupported(format!("{what} has more than one element")),
    }
}

/// The one element of a one-element integer argument.
pub(crate) fn int_scalar(t: &TensorData, what: &str) -> EvalResult<i64> {
    match int_values(t, what)?.as_slice() {
        [v] => Ok(*v),
        _ => unsupported(format!("{what} has more than one element")),
    }
}

fn wrap_error(e: relay_ir::metadata::NdArrayError) -> EvalError {
    EvalError::Unsupported(e.message)
}

/// A `float32` tensor of `shape` from its elements.
pub(crate) fn f32_tensor(shape: Vec<i64>, values: &[f32]) -> EvalResult<TensorData> {
    let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    TensorData::new(DataType::FLOAT32, shape, data).map_err(wrap_error)
}

/// An integer tensor of `dtype` and `shape` from its elements.
pub(crate) fn int_tensor(
    dtype: DataType,
    shape: Vec<i64>,
    values: &[i64],
) -> EvalResult<TensorData> {
    TensorData::from_i64s(dtype, shape, values).map_err(wrap_error)
}

/// TVM's `min(a, b)` on floats: `select(a < b, a, b)`.
pub(crate) fn tvm_min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// TVM's `max(a, b)` on floats: `select(a > b, a, b)`.
pub(crate) fn tvm_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// A list-of-numbers attribute (`FloatImm`s, or integers); `None` when
/// absent or null.
pub(crate) fn float_list(call: &super::CallInfo, name: &str) -> EvalResult<Option<Vec<f64>>> {
    match call.attr(name) {
        None => Ok(None),
        Some(relay_ir::AttrValue::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_f64().ok_or_else(|| {
                    EvalError::Unsupported(format!(
                        "{}: `{name}` is not a list of numbers",
                        call.op
                    ))
                })
            })
            .collect::<EvalResult<Vec<f64>>>()
            .map(Some),
        Some(_) => unsupported(format!("{}: `{name}` is not a list", call.op)),
    }
}

/// TOPI's `bilinear_sample_nchw`/`_nhwc` at `(y, x)` of an `h × w` map read
/// through `at(row, col)`: the corners' terms `wx · wy · p` (`0` for a
/// corner outside the map) added to `0` in the order (x0, y0), (x0, y1),
/// (x1, y0), (x1, y1), each operation rounded to `float32`.
pub(crate) fn bilinear_sample(
    y: f32,
    x: f32,
    h: usize,
    w: usize,
    at: impl Fn(usize, usize) -> f32,
) -> f32 {
    let (y0, x0) = (y.floor() as i64, x.floor() as i64);
    let (wy_h, wx_h) = (y - y0 as f32, x - x0 as f32);
    let (wy_l, wx_l) = (1.0 - wy_h, 1.0 - wx_h);
    let mut val = 0.0f32;
    for (wx, xp) in [(wx_l, x0), (wx_h, x0 + 1)] {
        for (wy, yp) in [(wy_l, y0), (wy_h, y0 + 1)] {
            let inside = yp >= 0 && yp < h as i64 && xp >= 0 && xp < w as i64;
            val += if inside {
                wx * wy * at(yp as usize, xp as usize)
            } else {
                0.0
            };
        }
    }
    val
}
