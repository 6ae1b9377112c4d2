//! What the semantic check compares for the passes that change a
//! function's result *by design*, as TVM's do:
//!
//! * `ToMixedPrecision` returns float16 (or bfloat16) where the module
//!   returned float32 (TVM's default, `keep_orig_output_dtype=false`):
//!   the low-precision result, widened exactly, is compared with the
//!   original within the tolerance of the low-precision type. A result
//!   it leaves in float32 (an operator on its never-convert list, such as
//!   `nn.softmax`, ends the network) was still computed from float16
//!   values, so it too is compared within float16's tolerance (TVM's
//!   default `mixed_precision_type`; bfloat16's when the pipeline text
//!   asks for it) when the pass changed the module.
//!   Where the float16 computation overflows (as it does in TVM, whose
//!   rewrite casts the network to float16), the check compares on smaller
//!   inputs instead ([`crate::float16_range`]).
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

/// What to compare with the result before `pass` (its pipeline text,
/// arguments included): the part of `after` that must agree, and the data
/// type whose tolerance applies when it is coarser than the original's.
pub fn comparable(pass: &str, before: &Value, after: &Value) -> (Value, Option<DataType>) {
    let (name, arguments) = pass.split_once('(').unwrap_or((pass, ""));
    match name.trim() {
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
            let low = if arguments.contains("bfloat16") {
                DataType::bfloat(16)
            } else {
                DataType::float(16)
            };
            (widened, coarsest.or(Some(low)))
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
    fn a_float32_result_of_mixed_precision_has_float16s_tolerance() {
        // The softmax at the end stays float32, its input was float16.
        let before = tensor(DataType::FLOAT32, &[0.000880096, 0.5]);
        let after = tensor(DataType::FLOAT32, &[0.0008797342, 0.5]);
        let (after, precision) = comparable("ToMixedPrecision", &before, &after);
        assert_eq!(precision, Some(DataType::float(16)));
        assert_eq!(compare_with(&before, &after, precision), None);
        let wrong = tensor(DataType::FLOAT32, &[0.1, 0.5]);
        let (wrong, precision) = comparable("ToMixedPrecision", &before, &wrong);
        assert!(compare_with(&before, &wrong, precision).is_some());
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
