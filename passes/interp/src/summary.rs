//! A few numbers that describe a run's result at a glance — per tensor its
//! shape, dtype, minimum, maximum and mean, and how many elements are NaN
//! or infinite — for the editor's "Run with random inputs" lens, where a
//! whole tensor would not fit.

use crate::print::python_shape;
use crate::value::Value;
use relay_ir::metadata::TensorData;
use std::fmt;

/// The summary of one tensor of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSummary {
    /// Where the tensor sits in the value (`.0.1` in a tuple, empty for
    /// the value itself).
    pub path: String,
    pub shape: Vec<i64>,
    pub dtype: String,
    /// Over the finite elements; `None` when there is none.
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    /// Elements that are NaN or infinite (left out of min, max and mean).
    pub non_finite: u64,
}

/// The summary of every tensor of `value`, in the order of
/// [`Value::leaves`].
pub fn summarize(value: &Value) -> Vec<TensorSummary> {
    value
        .leaves()
        .iter()
        .map(|leaf| summarize_tensor(&leaf.path, &leaf.tensor))
        .collect()
}

fn summarize_tensor(path: &str, tensor: &TensorData) -> TensorSummary {
    let mut min = f64::INFINITY;
    let mut max = f64::NEG_INFINITY;
    // Kahan summation: the mean of a large tensor stays exact to the
    // digits shown.
    let (mut sum, mut carry) = (0.0f64, 0.0f64);
    let mut finite = 0u64;
    let mut non_finite = 0u64;
    for i in 0..tensor.len() {
        let Ok(v) = tensor.get_f64(i) else {
            non_finite += 1;
            continue;
        };
        if !v.is_finite() {
            non_finite += 1;
            continue;
        }
        finite += 1;
        min = min.min(v);
        max = max.max(v);
        let y = v - carry;
        let t = sum + y;
        carry = (t - sum) - y;
        sum = t;
    }
    let some = |x: f64| (finite > 0).then_some(x);
    TensorSummary {
        path: path.to_string(),
        shape: tensor.shape.clone(),
        dtype: tensor.dtype.to_string(),
        min: some(min),
        max: some(max),
        mean: some(sum / finite.max(1) as f64),
        non_finite,
    }
}

/// A number in at most 4 significant digits (`0.1235`, `-12.5`, `1.2e+06`).
fn short(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e6 {
        return format!("{x}");
    }
    let text = format!("{x:.4}");
    if x.abs() >= 1e-3 && x.abs() < 1e6 {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.');
        trimmed.to_string()
    } else {
        format!("{x:.3e}")
    }
}

impl fmt::Display for TensorSummary {
    /// `(1, 10) float32 min -0.5 max 2 mean 0.3125`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path.trim_start_matches('.'))?;
        }
        write!(f, "{} {}", python_shape(&self.shape), self.dtype)?;
        if let (Some(min), Some(max), Some(mean)) = (self.min, self.max, self.mean) {
            write!(
                f,
                " min {} max {} mean {}",
                short(min),
                short(max),
                short(mean)
            )?;
        }
        if self.non_finite > 0 {
            write!(f, " ({} NaN/Inf)", self.non_finite)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::dtype::DataType;

    fn tensor(shape: Vec<i64>, values: &[f64]) -> Value {
        Value::tensor(TensorData::from_f64s(DataType::FLOAT32, shape, values).unwrap())
    }

    #[test]
    fn a_tensor_gets_its_shape_dtype_and_statistics() {
        let s = summarize(&tensor(vec![2, 2], &[1.0, -0.5, 2.0, 0.25]));
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].min, Some(-0.5));
        assert_eq!(s[0].max, Some(2.0));
        assert_eq!(s[0].mean, Some(0.6875));
        assert_eq!(
            s[0].to_string(),
            "(2, 2) float32 min -0.5 max 2 mean 0.6875"
        );
    }

    #[test]
    fn non_finite_elements_are_counted_apart() {
        let s = summarize(&tensor(vec![3], &[f64::NAN, 1.0, f64::INFINITY]));
        assert_eq!(s[0].non_finite, 2);
        assert_eq!(s[0].mean, Some(1.0));
        assert_eq!(
            s[0].to_string(),
            "(3,) float32 min 1 max 1 mean 1 (2 NaN/Inf)"
        );
    }

    #[test]
    fn a_tuple_lists_each_field() {
        let value = Value::tuple(vec![tensor(vec![], &[3.0]), tensor(vec![0], &[])]);
        let texts: Vec<String> = summarize(&value).iter().map(|s| s.to_string()).collect();
        assert_eq!(
            texts,
            ["0: () float32 min 3 max 3 mean 3", "1: (0,) float32"]
        );
    }
}
