//! What the semantic check compares for the passes that change a
//! function's result *by design*, as TVM's do:
//!
//! * `ToMixedPrecision` returns float16 (or bfloat16) where the module
//!   returned float32 (TVM's default, `keep_orig_output_dtype=false`):
//!   the low-precision result, widened exactly, is compared with the
//!   original within the tolerance of the low-precision type.
//! * `FirstOrderGradient` returns `(value, (gradients…))`: the value is
//!   compared with the original result (the gradients have no reference
//!   to compare with).
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
        "ToMixedPrecision" => {
            let mut coarsest = None;
            let widened = widen(before, after, &mut coarsest);
            (widened, coarsest)
        }
        _ => (after.clone(), None),
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
