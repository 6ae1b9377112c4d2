//! Element access for kernels: tensors decoded into columns of `f32`, `f64`
//! or integers, encoded back with the rounding or wrapping of their data
//! type, and the shape arithmetic the kernels share (strides, broadcasting,
//! axis normalisation).

use super::{unsupported, EvalResult};
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;

/// How a data type is computed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// `float16`, `bfloat16`, `float32`: in `f32`.
    F32,
    /// `float64`.
    F64,
    /// Signed or unsigned integers and `bool`, in `i128`, wrapped to the
    /// width after each operation.
    Int,
}

/// The class of a scalar data type we can compute with.
pub(crate) fn class(dtype: DataType) -> EvalResult<Class> {
    if dtype.lanes != 1 {
        return unsupported(format!("vector data type {dtype}"));
    }
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16 | 32) | (TypeCode::BFloat, 16) => Ok(Class::F32),
        (TypeCode::Float, 64) => Ok(Class::F64),
        (TypeCode::Int, 8 | 16 | 32 | 64) | (TypeCode::UInt, 1 | 8 | 16 | 32 | 64) => {
            Ok(Class::Int)
        }
        _ => unsupported(format!("data type {dtype}")),
    }
}

/// The elements of a tensor, ready to compute with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Col {
    F32(Vec<f32>),
    F64(Vec<f64>),
    Int(Vec<i128>),
}

impl Col {
    pub(crate) fn len(&self) -> usize {
        match self {
            Col::F32(v) => v.len(),
            Col::F64(v) => v.len(),
            Col::Int(v) => v.len(),
        }
    }
}

/// Rounds an `f32` to the precision of `dtype` (float16 / bfloat16), to
/// nearest with ties to even; `float32` values are returned unchanged.
#[inline]
pub(crate) fn round_f32(dtype: DataType, x: f32) -> f32 {
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16) => super::float16::round_to_float16(x),
        (TypeCode::BFloat, 16) => half::bf16::from_f32(x).to_f32(),
        _ => x,
    }
}

/// Wraps an integer to the width and signedness of `dtype`.
pub(crate) fn wrap(dtype: DataType, v: i128) -> i128 {
    let bits = u32::from(dtype.bits);
    if bits >= 128 {
        return v;
    }
    let mask: i128 = (1i128 << bits) - 1;
    let low = v & mask;
    if dtype.code == TypeCode::Int && bits > 0 && low >> (bits - 1) & 1 == 1 {
        low - (1i128 << bits)
    } else {
        low
    }
}

fn elem_bytes(t: &TensorData) -> usize {
    t.dtype.bytes()
}

/// Decodes every element of `t`.
pub(crate) fn decode(t: &TensorData) -> EvalResult<Col> {
    let dtype = t.dtype;
    let cls = class(dtype)?;
    let b = elem_bytes(t);
    let chunks = t.data.chunks_exact(b);
    Ok(match (cls, dtype.code, dtype.bits) {
        (Class::F32, TypeCode::Float, 32) => Col::F32(
            chunks
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        (Class::F32, TypeCode::Float, 16) => Col::F32(
            chunks
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        ),
        (Class::F32, _, _) => Col::F32(
            chunks
                .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        ),
        (Class::F64, _, _) => Col::F64(
            chunks
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
        ),
        (Class::Int, code, _) => Col::Int(
            chunks
                .map(|c| {
                    let mut buf = [0u8; 16];
                    buf[..b].copy_from_slice(c);
                    let raw = i128::from_le_bytes(buf);
                    if code == TypeCode::Int {
                        wrap(dtype, raw)
                    } else if dtype.bits == 1 {
                        // A bool takes a byte; any non-zero byte is true.
                        i128::from(raw != 0)
                    } else {
                        raw
                    }
                })
                .collect(),
        ),
    })
}

/// Encodes a column as a tensor of `dtype` (rounding `f32` values to
/// float16/bfloat16, wrapping integers). The column's class must be the
/// data type's class.
pub(crate) fn encode(col: &Col, dtype: DataType, shape: Vec<i64>) -> EvalResult<TensorData> {
    let cls = class(dtype)?;
    let b = dtype.bytes();
    // Each element's bytes written in place (one pass the compiler can
    // unroll, no per-element growth check).
    fn put<T: Copy, const B: usize>(v: &[T], data: &mut [u8], bytes: impl Fn(T) -> [u8; B]) {
        for (dst, &x) in data.chunks_exact_mut(B).zip(v) {
            dst.copy_from_slice(&bytes(x));
        }
    }
    let mut data = vec![0u8; col.len() * b];
    match (col, cls) {
        (Col::F32(v), Class::F32) => match (dtype.code, dtype.bits) {
            (TypeCode::Float, 32) => put(v, &mut data, f32::to_le_bytes),
            (TypeCode::Float, 16) => put(v, &mut data, |x| half::f16::from_f32(x).to_le_bytes()),
            _ => put(v, &mut data, |x| half::bf16::from_f32(x).to_le_bytes()),
        },
        (Col::F64(v), Class::F64) => put(v, &mut data, f64::to_le_bytes),
        (Col::Int(v), Class::Int) => {
            for (dst, &x) in data.chunks_exact_mut(b).zip(v) {
                let x = if dtype.bits == 1 {
                    i128::from(x & 1 != 0)
                } else {
                    x
                };
                dst.copy_from_slice(&x.to_le_bytes()[..b]);
            }
        }
        _ => return unsupported(format!("internal: a column of the wrong class for {dtype}")),
    }
    TensorData::new(dtype, shape, data).map_err(|e| super::EvalError::Unsupported(e.message))
}

// ---- shapes ----

/// The shape as sizes.
pub(crate) fn dims(shape: &[i64]) -> Vec<usize> {
    shape.iter().map(|&d| d.max(0) as usize).collect()
}

pub(crate) fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major strides.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Normalises a possibly negative axis for a tensor of rank `ndim`.
pub(crate) fn norm_axis(axis: i64, ndim: usize, op: &str) -> EvalResult<usize> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n {
        return unsupported(format!("{op}: axis {axis} out of range for rank {ndim}"));
    }
    Ok(a as usize)
}

/// NumPy broadcasting of two shapes.
pub(crate) fn broadcast_shapes(a: &[i64], b: &[i64]) -> EvalResult<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0i64; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return unsupported(format!("shapes {a:?} and {b:?} do not broadcast"));
        };
    }
    Ok(out)
}

/// For each element of `out_shape` (row-major), the flat index of the
/// element of a tensor of shape `in_shape` broadcast to it.
pub(crate) fn broadcast_index(in_shape: &[i64], out_shape: &[i64]) -> Vec<usize> {
    let out = dims(out_shape);
    let inp = dims(in_shape);
    let offset = out.len() - inp.len();
    let in_strides = strides(&inp);
    // Stride of each output axis in the input (0 where broadcast).
    let eff: Vec<usize> = (0..out.len())
        .map(|i| {
            if i < offset || inp[i - offset] == 1 {
                0
            } else {
                in_strides[i - offset]
            }
        })
        .collect();
    let total = numel(&out);
    let mut result = Vec::with_capacity(total);
    if total == 0 {
        return result;
    }
    let mut idx = vec![0usize; out.len()];
    let mut flat = 0usize;
    for _ in 0..total {
        result.push(flat);
        // Increment the multi-index.
        for ax in (0..out.len()).rev() {
            idx[ax] += 1;
            flat += eff[ax];
            if idx[ax] < out[ax] {
                break;
            }
            flat -= eff[ax] * idx[ax];
            idx[ax] = 0;
        }
    }
    result
}

/// Calls `f(out_flat, multi_index)` for every element of `shape`, in
/// row-major order.
pub(crate) fn for_each_index(shape: &[usize], mut f: impl FnMut(usize, &[usize])) {
    let total = numel(shape);
    if total == 0 {
        return;
    }
    let mut idx = vec![0usize; shape.len()];
    for flat in 0..total {
        f(flat, &idx);
        for ax in (0..shape.len()).rev() {
            idx[ax] += 1;
            if idx[ax] < shape[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
}

/// A tensor whose element `i` is element `src[i]` of `input` (raw bytes,
/// any data type).
pub(crate) fn gather(input: &TensorData, shape: Vec<i64>, src: &[usize]) -> EvalResult<TensorData> {
    let b = input.dtype.bytes();
    if b == 0 {
        return unsupported(format!("data type {}", input.dtype));
    }
    let mut data = Vec::with_capacity(src.len() * b);
    for &s in src {
        match input.data.get(s * b..s * b + b) {
            Some(bytes) => data.extend_from_slice(bytes),
            None => return unsupported("internal: element index out of range"),
        }
    }
    TensorData::new(input.dtype, shape, data).map_err(|e| super::EvalError::Unsupported(e.message))
}

/// A tensor of `shape` filled with the raw element `value` (one element's
/// bytes).
pub(crate) fn filled(dtype: DataType, shape: Vec<i64>, value: &[u8]) -> EvalResult<TensorData> {
    let n = numel(&dims(&shape));
    let mut data = Vec::with_capacity(n * value.len());
    for _ in 0..n {
        data.extend_from_slice(value);
    }
    TensorData::new(dtype, shape, data).map_err(|e| super::EvalError::Unsupported(e.message))
}
