//! A short description of a tensor's values for people: element count,
//! min / max / mean over the finite values, how many are NaN or infinite,
//! and the first few values. The editor's hover on a constant shows it; it
//! is meant for any place that shows a tensor without printing all of it.

use super::ndarray::TensorData;
use crate::dtype::TypeCode;

/// How many leading values the summary lists.
pub const FIRST_VALUES: usize = 8;

/// The statistics of a tensor's values.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueSummary {
    pub elements: usize,
    /// Min, max and mean of the finite values; `None` when there are none
    /// (or the dtype has no numeric reading).
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub nan: usize,
    pub infinite: usize,
    /// The first [`FIRST_VALUES`] values in row-major order, as TVM prints
    /// them (integers without a fraction).
    pub first: Vec<String>,
}

impl ValueSummary {
    /// The summary of `data`. A dtype whose elements cannot be read as
    /// numbers (handles, custom types) gives counts only.
    pub fn of(data: &TensorData) -> ValueSummary {
        let elements = data.len();
        let integral = matches!(data.dtype.code, TypeCode::Int | TypeCode::UInt);
        let (mut min, mut max, mut sum, mut finite) =
            (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0usize);
        let (mut nan, mut infinite) = (0, 0);
        let mut first = Vec::new();
        for i in 0..elements {
            let Ok(v) = data.get_f64(i) else {
                break;
            };
            if first.len() < FIRST_VALUES {
                first.push(if integral {
                    match data.get_i64(i) {
                        Ok(n) => n.to_string(),
                        Err(_) => format!("{v}"),
                    }
                } else {
                    format!("{v}")
                });
            }
            if v.is_nan() {
                nan += 1;
            } else if v.is_infinite() {
                infinite += 1;
            } else {
                min = min.min(v);
                max = max.max(v);
                sum += v;
                finite += 1;
            }
        }
        let any = finite > 0;
        ValueSummary {
            elements,
            min: any.then_some(min),
            max: any.then_some(max),
            mean: any.then(|| sum / finite as f64),
            nan,
            infinite,
            first,
        }
    }
}

impl std::fmt::Display for ValueSummary {
    /// `4 elements: min -1, max 3, mean 0.5; [-1, 0, 3, 0]`, with `…` when
    /// more values follow and the NaN/infinity counts when there are any.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let noun = if self.elements == 1 {
            "element"
        } else {
            "elements"
        };
        write!(f, "{} {noun}", self.elements)?;
        if let (Some(min), Some(max), Some(mean)) = (self.min, self.max, self.mean) {
            write!(f, ": min {min}, max {max}, mean {}", round(mean))?;
        }
        if self.nan > 0 {
            write!(f, ", {} NaN", self.nan)?;
        }
        if self.infinite > 0 {
            write!(f, ", {} infinite", self.infinite)?;
        }
        if !self.first.is_empty() {
            let more = if self.elements > self.first.len() {
                ", …"
            } else {
                ""
            };
            write!(f, "; [{}{more}]", self.first.join(", "))?;
        }
        Ok(())
    }
}

/// A mean to six significant digits (the sum's rounding makes more noise).
fn round(v: f64) -> String {
    let text = format!("{v:.5e}");
    text.parse::<f64>().map_or(text, |r| r.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;

    fn f32s(values: &[f64], shape: Vec<i64>) -> TensorData {
        TensorData::from_f64s(DataType::float(32), shape, values).unwrap()
    }

    #[test]
    fn statistics_over_the_finite_values() {
        let data = f32s(&[-1.0, 0.5, 3.0, f64::NAN, f64::INFINITY], vec![5]);
        let s = ValueSummary::of(&data);
        assert_eq!(
            (s.min, s.max, s.mean),
            (Some(-1.0), Some(3.0), Some(2.5 / 3.0))
        );
        assert_eq!((s.nan, s.infinite), (1, 1));
        assert_eq!(
            s.to_string(),
            "5 elements: min -1, max 3, mean 0.833333, 1 NaN, 1 infinite; [-1, 0.5, 3, NaN, inf]"
        );
    }

    #[test]
    fn long_tensors_list_the_first_values_then_an_ellipsis() {
        let values: Vec<f64> = (0..20).map(f64::from).collect();
        let text = ValueSummary::of(&f32s(&values, vec![4, 5])).to_string();
        assert_eq!(
            text,
            "20 elements: min 0, max 19, mean 9.5; [0, 1, 2, 3, 4, 5, 6, 7, …]"
        );
    }

    #[test]
    fn integers_scalars_and_empty_tensors() {
        let ints = TensorData::from_i64s(DataType::int(64), vec![], &[-7]).unwrap();
        assert_eq!(
            ValueSummary::of(&ints).to_string(),
            "1 element: min -7, max -7, mean -7; [-7]"
        );
        let empty = f32s(&[], vec![0, 3]);
        assert_eq!(ValueSummary::of(&empty).to_string(), "0 elements");
    }
}
