//! What the semantic check compares for the passes that change a
//! function's result *by design*, as TVM's do:
//!
//! * `ToMixedPrecision` returns float16 (or bfloat16) where the module
//!   returned float32 (TVM's default, `keep_orig_output_dtype=false`):
//!   the low-precision result, widened exactly, is compared with the
//!   original within the tolerance of the low-precision type.
//!   Where the original result is beyond the low-precision type's range
//!   (float16's largest value is 65504) and the low-precision one is
//!   infinite there, the input overflows the type — as it does in TVM,
//!   whose rewrite casts the output to float16 — and says nothing about
//!   the pass: that input is not compared ([`beyond_range`]).
//! * `FirstOrderGradient` returns `(value, (gradients…))`: the value is
//!   compared with the original result (the gradients have no reference
//!   to compare with).
//! * `FakeQuantizationToInteger` computes in integers what the module
//!   computed in float and rounded once at the end: with per-channel or
//!   non-trivial scales the integer path rounds at each requantize, so an
//!   element may end one unit away. TVM's own tests accept exactly that
//!   (`compare_fq_to_int(..., allow_rounding_error=True)`: `|a - b| <= 1`);
//!   so does the check — a difference of one unit in an integer result is
//!   forgiven, anything larger is reported.
//!
//! Any other pass must keep the result as it was.

use crate::value::Value;
use relay_ir::dtype::DataType;

/// What to compare with the result before `pass`: the part of `after`
/// that must agree, and the data type whose tolerance applies when it is
/// coarser than the original's.
pub fn comparable(pass: &str, before: &Value, after: &Value) -> (Value, Option<DataType>) {
    match pass {
        "FirstOrderGradient" => match after {
            Value::Tuple(fields) if fields.len() == 2 && before.skeleton() != after.skeleton() => {
                (fields[0].clone(), None)
            }
            _ => (after.clone(), None),
        },
        "FakeQuantizationToInteger" => (forgive_one_unit(before, after), None),
        "ToMixedPrecision" => {
            let mut coarsest = None;
            let widened = widen(before, after, &mut coarsest);
            (widened, coarsest)
        }
        _ => (after.clone(), None),
    }
}

/// `after` with every integer element one unit away from `before`'s set to
/// `before`'s (the rounding `FakeQuantizationToInteger` may change).
fn forgive_one_unit(before: &Value, after: &Value) -> Value {
    match (before, after) {
        (Value::Tensor(b), Value::Tensor(a))
            if a.dtype == b.dtype && a.shape == b.shape && !a.dtype.is_float() =>
        {
            let mut forgiven = (**a).clone();
            let mut changed = false;
            for i in 0..b.len() {
                if let (Ok(x), Ok(y)) = (b.get_i64(i), a.get_i64(i)) {
                    if x != y && (x - y).abs() == 1 && forgiven.set_i64(i, x).is_ok() {
                        changed = true;
                    }
                }
            }
            if changed {
                Value::tensor(forgiven)
            } else {
                after.clone()
            }
        }
        (Value::Tuple(bs), Value::Tuple(as_)) if bs.len() == as_.len() => Value::tuple(
            bs.iter()
                .zip(as_.iter())
                .map(|(b, a)| forgive_one_unit(b, a))
                .collect(),
        ),
        _ => after.clone(),
    }
}

/// Why `after` is not comparable with `before` under `pass`'s contract:
/// ToMixedPrecision's result overflowed its low-precision type because the
/// original result is beyond that type's range.
pub fn beyond_range(pass: &str, before: &Value, after: &Value) -> Option<String> {
    let (before, after) = (before.leaves(), after.leaves());
    if pass != "ToMixedPrecision" || before.len() != after.len() {
        return None;
    }
    before
        .iter()
        .zip(after)
        .find_map(|(b, a)| {
            let (b, a) = (&b.tensor, &a.tensor);
            if !(b.dtype.is_float() && b.dtype.bits > 16 && a.dtype.bits == 16) {
                return None;
            }
            let largest = largest_finite(a.dtype)?;
            let values = |t: &relay_ir::metadata::TensorData, i| t.get_f64(i).unwrap_or(f64::NAN);
            let reach = (0..b.len())
                .map(|i| values(b, i))
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, v| m.max(v.abs()));
            let overflowed =
                (0..b.len()).any(|i| values(b, i).is_finite() && !values(a, i).is_finite());
            (reach > largest && overflowed).then(|| {
                format!(
                    "the original result reaches {reach:.4e}, beyond {}'s largest value {largest}, and overflows to infinity in {} (as in TVM, whose rewrite casts it to {})",
                    a.dtype, a.dtype, a.dtype
                )
            })
        })
}

/// The largest finite value of a 16-bit float type.
fn largest_finite(dtype: DataType) -> Option<f64> {
    use relay_ir::dtype::TypeCode;
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16) => Some(65504.0),
        (TypeCode::BFloat, 16) => Some(3.3895313892515355e38),
        _ => None,
    }
}

/// `after` with every float16/bfloat16 tensor that stands where `before`
/// has a wider float converted (exactly) to that type.
fn widen(before: &Value, after: &Value, coarsest: &mut Option<DataType>) -> Value {
    match (before, after) {
        (Value::Tensor(b), Value::Tensor(a))
            if a.dtype.bits == 16 && b.dtype.is_float() && b.dtype.bits > 16 =>
        {
            match relay_eval::cast_tensor(a, b.dtype) {
                Ok(wide) => {
                    coarsest.get_or_insert(a.dtype);
                    Value::tensor(wide)
                }
                Err(_) => after.clone(),
            }
        }
        (Value::Tuple(bs), Value::Tuple(as_)) if bs.len() == as_.len() => Value::tuple(
            bs.iter()
                .zip(as_.iter())
                .map(|(b, a)| widen(b, a, coarsest))
                .collect(),
        ),
        _ => after.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare_with;
    use relay_ir::metadata::TensorData;

    fn tensor(dtype: DataType, values: &[f64]) -> Value {
        Value::tensor(TensorData::from_f64s(dtype, vec![values.len() as i64], values).unwrap())
    }

    #[test]
    fn fake_quantization_may_round_one_unit_differently() {
        let int8 = DataType::int(8);
        let before = tensor(int8, &[10.0, -3.0, 7.0]);
        let rounded = tensor(int8, &[11.0, -3.0, 6.0]);
        let (after, precision) = comparable("FakeQuantizationToInteger", &before, &rounded);
        assert_eq!(compare_with(&before, &after, precision), None);
        let wrong = tensor(int8, &[12.0, -3.0, 7.0]);
        let (after, precision) = comparable("FakeQuantizationToInteger", &before, &wrong);
        assert!(compare_with(&before, &after, precision).is_some());
        // Other passes get no such allowance.
        let (after, precision) = comparable("FoldConstant", &before, &rounded);
        assert!(compare_with(&before, &after, precision).is_some());
    }

    #[test]
    fn mixed_precision_is_compared_at_the_low_precision() {
        let before = tensor(DataType::FLOAT32, &[1.0, 2.0]);
        let close = tensor(DataType::float(16), &[1.0009765625, 2.0]);
        let (after, precision) = comparable("ToMixedPrecision", &before, &close);
        assert_eq!(precision, Some(DataType::float(16)));
        assert_eq!(compare_with(&before, &after, precision), None);
        let wrong = tensor(DataType::float(16), &[1.5, 2.0]);
        let (after, precision) = comparable("ToMixedPrecision", &before, &wrong);
        assert!(compare_with(&before, &after, precision).is_some());
    }

    #[test]
    fn a_float16_overflow_of_a_result_beyond_its_range_is_not_compared() {
        let before = tensor(DataType::FLOAT32, &[70000.0, 100.0]);
        let overflowed = tensor(DataType::float(16), &[f64::INFINITY, 100.0]);
        let why = beyond_range("ToMixedPrecision", &before, &overflowed).unwrap();
        assert!(
            why.contains("beyond float16's largest value 65504"),
            "{why}"
        );
        // In range: an infinity is a difference, not an overflow.
        let small = tensor(DataType::FLOAT32, &[1000.0, 100.0]);
        assert_eq!(beyond_range("ToMixedPrecision", &small, &overflowed), None);
        // Another pass has no such excuse.
        assert_eq!(beyond_range("FoldConstant", &before, &overflowed), None);
    }

    #[test]
    fn a_gradient_is_compared_by_its_value() {
        let before = tensor(DataType::FLOAT32, &[1.0]);
        let grads = Value::tuple(vec![tensor(DataType::FLOAT32, &[5.0])]);
        let after = Value::tuple(vec![tensor(DataType::FLOAT32, &[1.0]), grads.clone()]);
        let (value, _) = comparable("FirstOrderGradient", &before, &after);
        assert_eq!(compare_with(&before, &value, None), None);
        let wrong = Value::tuple(vec![tensor(DataType::FLOAT32, &[3.0]), grads]);
        let (value, _) = comparable("FirstOrderGradient", &before, &wrong);
        assert!(compare_with(&before, &value, None).is_some());
    }

    #[test]
    fn other_passes_must_keep_the_result_type() {
        let before = tensor(DataType::FLOAT32, &[1.0]);
        let after = tensor(DataType::float(16), &[1.0]);
        let (same, precision) = comparable("FoldConstant", &before, &after);
        assert_eq!(precision, None);
        assert!(compare_with(&before, &same, precision).is_some());
    }
}
