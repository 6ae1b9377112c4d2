//! Sensitivity in the semantic check: telling a pass's rounding-level
//! change, amplified by an ill-conditioned module, from a real difference.
//!
//! A pass that rewrites arithmetic exactly in real numbers (SimplifyExpr's
//! `x / sqrt(y)` to `x * rsqrt(y)`) changes the float result by about one
//! unit in the last place. A deep network on random weights amplifies
//! such a change far beyond the check's tolerance ([`crate::compare`]):
//! gpt2's result moves by ~1% when one input moves by one rounding unit.
//! The tolerance cannot tell that from a wrong rewrite; the module itself
//! can: how far does *it* move its result when its inputs move by a
//! rounding unit?
//!
//! When the results of an input differ (and the range path,
//! [`crate::range_effects`], does not explain it), the check runs the
//! module before the pass once more on the same input with every float
//! element multiplied by (1 + u), u the rounding unit (machine epsilon) of
//! its type ([`rounding_unit`]: float16 2^-10, bfloat16 2^-7, float32
//! 2^-23, float64 2^-52) — integers and booleans unchanged, and parameters
//! drawn in a domain ([`crate::input_domains`]: an exponent that must stay
//! an even integer) as they are. For each float output it takes
//! S = max |perturbed − before| and D = max |after − before|.
//!
//! The rule: when every float output has 0 < S and D ≤ 2·S, the pass
//! moved the result no further than (twice) a rounding-size change of the
//! inputs moves it — what a pass that changes rounding, and only rounding,
//! is expected to do on this module — and the outcome is "agree within
//! sensitivity", not a difference. The factor 2 allows for a pass's
//! rounding changes landing in several places, each the size of one input
//! rounding; a wrong rewrite (a dropped term, a wrong constant) moves the
//! result by amounts of the order of the result itself, far beyond that.
//! S = 0 (a module that does not move at all, or rounds the perturbation
//! away) explains nothing, nor does an S that is not finite (the
//! perturbation made NaN or infinity); any structural or integer
//! difference is not a rounding effect either. Otherwise the difference
//! is reported as one, with the S and D measured.

use crate::value::{multiplied_arguments, Value};
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;
use std::fmt;

/// The rounding unit (machine epsilon) of a float type: the relative
/// distance from 1 to the next representable value. `None` for types that
/// are not floats.
pub fn rounding_unit(dtype: DataType) -> Option<f64> {
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16) => Some((-10f64).exp2()),
        (TypeCode::BFloat, 16) => Some((-7f64).exp2()),
        (TypeCode::Float, 32) => Some((-23f64).exp2()),
        (TypeCode::Float, 64) => Some((-52f64).exp2()),
        _ => None,
    }
}

/// `args` with every float element multiplied by (1 + its type's
/// [`rounding_unit`]); other values, and the arguments whose `keep` is
/// true (drawn in a domain), as they are.
pub fn perturbed_arguments(args: &[Value], keep: &[bool]) -> Vec<Value> {
    multiplied_arguments(args, keep, |dtype| rounding_unit(dtype).map(|u| 1.0 + u))
}

/// How far one float output moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Moves {
    /// Where the tensor is in the result (`.0`), empty for the result itself.
    pub path: String,
    /// S: max |perturbed − before| over its elements.
    pub by_inputs: f64,
    /// D: max |after − before| over its elements.
    pub by_pass: f64,
}

impl Moves {
    /// Whether the pass moved this output within twice what a rounding
    /// unit of the inputs moves it (and that moves it at all).
    pub fn within(&self) -> bool {
        self.by_inputs.is_finite() && self.by_inputs > 0.0 && self.by_pass <= 2.0 * self.by_inputs
    }

    /// D / S, for choosing the output to report.
    fn ratio(&self) -> f64 {
        if self.by_inputs > 0.0 {
            self.by_pass / self.by_inputs
        } else {
            f64::INFINITY
        }
    }
}

impl fmt::Display for Moves {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "output{} moves by up to {:.3e} when the float inputs move by one rounding unit; \
             the pass moved it by up to {:.3e}",
            self.path, self.by_inputs, self.by_pass
        )
    }
}

/// What the sensitivity measurement found for one input.
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    /// Every float output, in order.
    pub outputs: Vec<Moves>,
    /// An output that is not a float and differs after the pass, or a
    /// change of structure: not a rounding effect whatever S is.
    pub exact_difference: bool,
}

impl Sensitivity {
    /// Measures S and D for every float output of `before`, `after`
    /// (as comparable to `before`, [`crate::contract`]) and `perturbed`
    /// (the module before the pass on [`perturbed_arguments`]).
    pub fn measure(before: &Value, after: &Value, perturbed: &Value) -> Sensitivity {
        let skeleton = before.skeleton();
        if skeleton != after.skeleton() || skeleton != perturbed.skeleton() {
            return Sensitivity {
                outputs: Vec::new(),
                exact_difference: true,
            };
        }
        let mut outputs = Vec::new();
        let mut exact_difference = false;
        for ((b, a), p) in before
            .leaves()
            .iter()
            .zip(after.leaves())
            .zip(perturbed.leaves())
        {
            if rounding_unit(b.tensor.dtype).is_none() {
                exact_difference |= largest_difference(&b.tensor, &a.tensor) != 0.0;
                continue;
            }
            outputs.push(Moves {
                path: b.path.clone(),
                by_inputs: largest_difference(&b.tensor, &p.tensor),
                by_pass: largest_difference(&b.tensor, &a.tensor),
            });
        }
        Sensitivity {
            outputs,
            exact_difference,
        }
    }

    /// The rule: every float output moved by the pass within twice what a
    /// rounding unit of the inputs moves it, and nothing else changed.
    pub fn explains(&self) -> bool {
        !self.exact_difference && !self.outputs.is_empty() && self.outputs.iter().all(Moves::within)
    }

    /// The output whose D / S is largest (the first on a tie).
    pub fn worst(&self) -> Option<&Moves> {
        self.outputs
            .iter()
            .reduce(|w, m| if m.ratio() > w.ratio() { m } else { w })
    }
}

impl fmt::Display for Sensitivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.exact_difference {
            return f.write_str("a non-float output or the structure changed");
        }
        match self.worst() {
            Some(m) => write!(f, "{m}"),
            None => f.write_str("no float output"),
        }
    }
}

/// max |a − b| over the elements of two tensors of one shape: equal
/// elements (the same infinity, NaN against NaN) count 0, a non-finite
/// element against another value infinity.
fn largest_difference(a: &TensorData, b: &TensorData) -> f64 {
    let mut largest = 0.0f64;
    for i in 0..a.len().min(b.len()) {
        let (Ok(x), Ok(y)) = (a.get_f64(i), b.get_f64(i)) else {
            continue;
        };
        let d = if x == y || (x.is_nan() && y.is_nan()) {
            0.0
        } else if x.is_finite() && y.is_finite() {
            (x - y).abs()
        } else {
            f64::INFINITY
        };
        largest = largest.max(d);
    }
    largest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(dtype: DataType, values: &[f64]) -> Value {
        Value::tensor(TensorData::from_f64s(dtype, vec![values.len() as i64], values).unwrap())
    }

    fn values(v: &Value) -> Vec<f64> {
        let Value::Tensor(t) = v else {
            panic!("not a tensor")
        };
        (0..t.len()).map(|i| t.get_f64(i).unwrap()).collect()
    }

    #[test]
    fn every_float_type_has_its_rounding_unit() {
        assert_eq!(rounding_unit(DataType::float(16)), Some(1.0 / 1024.0));
        assert_eq!(rounding_unit(DataType::bfloat(16)), Some(1.0 / 128.0));
        assert_eq!(rounding_unit(DataType::FLOAT32), Some(f32::EPSILON as f64));
        assert_eq!(rounding_unit(DataType::float(64)), Some(f64::EPSILON));
        assert_eq!(rounding_unit(DataType::int(32)), None);
        assert_eq!(rounding_unit(DataType::bool()), None);
    }

    #[test]
    fn each_float_type_moves_by_its_own_unit() {
        for (dtype, unit) in [
            (DataType::float(16), 1.0 / 1024.0),
            (DataType::bfloat(16), 1.0 / 128.0),
            (DataType::FLOAT32, f32::EPSILON as f64),
            (DataType::float(64), f64::EPSILON),
        ] {
            let moved = perturbed_arguments(&[tensor(dtype, &[1.0, -1.0, 0.0])], &[]);
            // 1 ± one unit is representable in every type: exact.
            assert_eq!(
                values(&moved[0]),
                vec![1.0 + unit, -1.0 - unit, 0.0],
                "{dtype}"
            );
        }
    }

    #[test]
    fn kept_parameters_and_integers_are_untouched() {
        let args = [
            tensor(DataType::FLOAT32, &[2.0]),
            tensor(DataType::FLOAT32, &[1.0]),
            tensor(DataType::int(32), &[7.0]),
            Value::tuple(vec![
                tensor(DataType::bool(), &[1.0]),
                tensor(DataType::FLOAT32, &[1.0]),
            ]),
        ];
        let moved = perturbed_arguments(&args, &[true, false, false, false]);
        assert_eq!(values(&moved[0]), vec![2.0]);
        assert_eq!(values(&moved[1]), vec![1.0 + f32::EPSILON as f64]);
        assert_eq!(values(&moved[2]), vec![7.0]);
        let Value::Tuple(fields) = &moved[3] else {
            panic!("not a tuple")
        };
        assert_eq!(values(&fields[0]), vec![1.0]);
        assert_eq!(values(&fields[1]), vec![1.0 + f32::EPSILON as f64]);
    }

    fn measured(before: &[f64], after: &[f64], perturbed: &[f64]) -> Sensitivity {
        let t = |v: &[f64]| tensor(DataType::float(64), v);
        Sensitivity::measure(&t(before), &t(after), &t(perturbed))
    }

    #[test]
    fn a_pass_within_twice_the_sensitivity_agrees() {
        let s = measured(&[1.0, 2.0], &[1.5, 2.0], &[1.0, 2.3]);
        assert_eq!(s.outputs[0].by_pass, 0.5);
        assert!((s.outputs[0].by_inputs - 0.3).abs() < 1e-12);
        assert!(s.explains(), "{s}");
        assert!(measured(&[1.0], &[1.6], &[1.3]).explains());
    }

    #[test]
    fn a_pass_beyond_twice_the_sensitivity_differs() {
        let s = measured(&[1.0, 2.0], &[1.7, 2.0], &[1.0, 2.3]);
        assert!(!s.explains(), "{s}");
        assert!(s.to_string().contains("moves by up to"), "{s}");
    }

    #[test]
    fn a_module_that_does_not_move_explains_nothing() {
        assert!(!measured(&[1.0], &[1.0 + 1e-15], &[1.0]).explains());
    }

    #[test]
    fn a_perturbation_that_makes_nan_explains_nothing() {
        assert!(!measured(&[1.0], &[5.0], &[f64::NAN]).explains());
        // NaN where NaN was moves nothing.
        assert!(measured(&[f64::NAN, 1.0], &[f64::NAN, 1.1], &[f64::NAN, 1.1]).explains());
    }

    #[test]
    fn every_output_must_be_within_and_integers_must_agree() {
        let t = |d: DataType, v: &[f64]| tensor(d, v);
        let pair = |x: Value, y: Value| Value::tuple(vec![x, y]);
        let f = DataType::float(64);
        let before = pair(t(f, &[1.0]), t(f, &[1.0]));
        let after = pair(t(f, &[1.1]), t(f, &[3.0]));
        let perturbed = pair(t(f, &[1.1]), t(f, &[1.1]));
        let s = Sensitivity::measure(&before, &after, &perturbed);
        assert!(!s.explains());
        assert_eq!(s.worst().unwrap().path, ".1");
        let i = DataType::int(32);
        let before = pair(t(f, &[1.0]), t(i, &[1.0]));
        let after = pair(t(f, &[1.1]), t(i, &[2.0]));
        let perturbed = pair(t(f, &[1.1]), t(i, &[1.0]));
        assert!(!Sensitivity::measure(&before, &after, &perturbed).explains());
    }
}
