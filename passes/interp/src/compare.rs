//! Comparing two results of the same program: structure first (tuples,
//! ADT constructors, shapes, dtypes), then every tensor element —
//! integers and booleans exactly, floats within a tolerance scaled to the
//! dtype, NaN against NaN and infinities against the same infinity.

use crate::value::Value;
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;
use std::fmt;

/// The relative tolerance of a float dtype: about a thousand units in the
/// last place of float32 (passes reassociate and refold arithmetic, which
/// changes the rounding, not the value), ten of float16 and bfloat16.
pub fn relative_tolerance(dtype: DataType) -> f64 {
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 64) => 1e-9,
        (TypeCode::Float, 32) => 1e-4,
        (TypeCode::Float, 16) => 1e-2,
        (TypeCode::BFloat, 16) => 5e-2,
        _ => 0.0,
    }
}

/// How two floats are compared, for reports: `|a − b| ≤ rtol·(|b| + max|b|)`.
pub fn tolerance_text(dtype: DataType) -> String {
    let rtol = relative_tolerance(dtype);
    if rtol == 0.0 {
        format!("{dtype}: exact")
    } else {
        format!("{dtype}: |after - before| <= {rtol:e} * (|before| + max|before|)")
    }
}

/// The first difference between two results.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// The values have different structure (a tuple against a tensor, other
    /// shapes, other dtypes, other constructors).
    Structure { before: String, after: String },
    /// An element differs.
    Element {
        /// Where the tensor is in the value (`.0`), empty for the value itself.
        path: String,
        /// The element's index in the tensor.
        index: Vec<i64>,
        before: f64,
        after: f64,
        dtype: DataType,
        /// How many elements of that tensor differ.
        count: usize,
        total: usize,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Structure { before, after } => {
                write!(f, "the result was {before}, is now {after}")
            }
            Difference::Element {
                path,
                index,
                before,
                after,
                dtype,
                count,
                total,
            } => {
                let at: Vec<String> = index.iter().map(i64::to_string).collect();
                let value = |v: f64| crate::print::scalar_text(v, *dtype);
                write!(
                    f,
                    "output{path}[{}] was {}, is now {} ({count} of {total} elements differ; tolerance {})",
                    at.join(", "),
                    value(*before),
                    value(*after),
                    tolerance_text(*dtype)
                )
            }
        }
    }
}

/// Compares the result of the module before a pass with the result after.
pub fn compare(before: &Value, after: &Value) -> Option<Difference> {
    compare_with(before, after, None)
}

/// [`compare`], floats within the tolerance of `precision` when it is set
/// (a pass that computes in a coarser type by design, [`crate::contract`]).
pub fn compare_with(
    before: &Value,
    after: &Value,
    precision: Option<DataType>,
) -> Option<Difference> {
    let (sb, sa) = (before.skeleton(), after.skeleton());
    if sb != sa {
        return Some(Difference::Structure {
            before: sb,
            after: sa,
        });
    }
    for (b, a) in before.leaves().iter().zip(after.leaves()) {
        if let Some(d) = compare_tensors(&b.path, &b.tensor, &a.tensor, precision) {
            return Some(d);
        }
    }
    None
}

fn compare_tensors(
    path: &str,
    before: &TensorData,
    after: &TensorData,
    precision: Option<DataType>,
) -> Option<Difference> {
    let dtype = match precision {
        Some(coarse) if before.dtype.is_float() => coarse,
        _ => before.dtype,
    };
    let n = before.len();
    let exact = matches!(dtype.code, TypeCode::Int | TypeCode::UInt);
    let mut first = None;
    let mut count = 0;
    if exact {
        if before.data == after.data {
            return None;
        }
        for i in 0..n {
            let (b, a) = (before.get_i64(i), after.get_i64(i));
            if b != a {
                count += 1;
                first.get_or_insert((i, as_f64(&b, before, i), as_f64(&a, after, i)));
            }
        }
    } else {
        let read = |t: &TensorData| -> Vec<f64> {
            (0..n).map(|i| t.get_f64(i).unwrap_or(f64::NAN)).collect()
        };
        let (bs, as_) = (read(before), read(after));
        let max = bs
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0f64, |m, v| m.max(v.abs()));
        let rtol = relative_tolerance(dtype);
        for i in 0..n {
            let (b, a) = (bs[i], as_[i]);
            let same = if b.is_nan() || a.is_nan() {
                b.is_nan() && a.is_nan()
            } else if b.is_infinite() || a.is_infinite() {
                a == b
            } else {
                (a - b).abs() <= rtol * (b.abs() + max)
            };
            if !same {
                count += 1;
                first.get_or_insert((i, b, a));
            }
        }
    }
    let (i, b, a) = first?;
    Some(Difference::Element {
        path: path.to_string(),
        index: unravel(i, &before.shape),
        before: b,
        after: a,
        dtype,
        count,
        total: n,
    })
}

fn as_f64(v: &Result<i64, relay_ir::metadata::NdArrayError>, t: &TensorData, i: usize) -> f64 {
    match v {
        Ok(v) => *v as f64,
        Err(_) => t.get_f64(i).unwrap_or(f64::NAN),
    }
}

/// The multi-dimensional index of flat position `i`.
pub fn unravel(mut i: usize, shape: &[i64]) -> Vec<i64> {
    let mut index = vec![0; shape.len()];
    for (axis, &d) in shape.iter().enumerate().rev() {
        let d = d.max(1) as usize;
        index[axis] = (i % d) as i64;
        i /= d;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(values: &[f64]) -> Value {
        Value::tensor(
            TensorData::from_f64s(DataType::FLOAT32, vec![values.len() as i64], values).unwrap(),
        )
    }

    #[test]
    fn floats_within_the_tolerance_agree() {
        assert_eq!(compare(&f32s(&[1.0, 2.0]), &f32s(&[1.00001, 2.0])), None);
        let d = compare(&f32s(&[1.0, 2.0]), &f32s(&[1.0, 2.1])).unwrap();
        assert!(
            d.to_string()
                .starts_with("output[1] was 2, is now 2.1 (1 of 2"),
            "{d}"
        );
    }

    #[test]
    fn nan_and_infinity_positions_must_match() {
        assert_eq!(
            compare(
                &f32s(&[f64::NAN, f64::INFINITY]),
                &f32s(&[f64::NAN, f64::INFINITY])
            ),
            None
        );
        assert!(compare(&f32s(&[f64::NAN]), &f32s(&[0.0])).is_some());
        assert!(compare(&f32s(&[f64::INFINITY]), &f32s(&[f64::NEG_INFINITY])).is_some());
    }

    #[test]
    fn integers_are_exact_and_shapes_are_structure() {
        let ints = |v: &[i64]| {
            Value::tensor(TensorData::from_i64s(DataType::INT32, vec![v.len() as i64], v).unwrap())
        };
        assert!(compare(&ints(&[1, 2]), &ints(&[1, 3])).is_some());
        assert!(matches!(
            compare(&ints(&[1, 2]), &ints(&[1])),
            Some(Difference::Structure { .. })
        ));
    }
}
