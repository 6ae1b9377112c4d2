//! Float16 range effects in the semantic check.
//!
//! float16's largest finite value is 65504. Seeded random inputs (uniform
//! in [-1, 1), weights included) push deep networks far past it, so a
//! module that computes in float16 may overflow to infinity or NaN on an
//! input where the same program, rewritten by a correct pass, does not (or
//! the other way round): `ToMixedPrecision` casting a float32 network to
//! float16, `FoldScaleAxis` folding a scale into the weights before the
//! product that overflowed. A difference there says nothing about the pass.
//!
//! So when a result differs, either module computes in float16
//! ([`computes_in_float16`]) and one of the two results has an element
//! that is not finite or is beyond float16's range ([`first_out_of_range`]),
//! the check runs both modules again on the same input scaled down by
//! powers of two ([`scaled_arguments`], exact in every binary float type)
//! until both results are within float16's range, and compares there:
//! agreement is the distinct outcome "agree within float16 range", a
//! difference is a real one. The check in `check.rs` decides; this module
//! holds the facts it decides on.

use crate::compare::unravel;
use crate::value::Value;
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;
use relay_ir::{ExprKind, IRModule, Type, TypeKind};

/// float16's largest finite value.
pub const FLOAT16_LARGEST: f64 = 65504.0;

/// The scales tried, as exponents: the input times 2^-4, 2^-8, 2^-12.
pub const SCALE_SHIFTS: [u32; 3] = [4, 8, 12];

fn is_float16(dtype: DataType) -> bool {
    dtype.code == TypeCode::Float && dtype.bits == 16
}

/// Whether a type has a float16 tensor in it.
fn mentions_float16(ty: &Type) -> bool {
    match ty.kind() {
        TypeKind::Tensor(t) => is_float16(t.dtype),
        TypeKind::Tuple(fields) => fields.iter().any(mentions_float16),
        TypeKind::Func(f) => f.params.iter().any(mentions_float16) || mentions_float16(&f.ret),
        TypeKind::Ref(t) => mentions_float16(t),
        TypeKind::Call { args, .. } => args.iter().any(mentions_float16),
        TypeKind::Var(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => false,
    }
}

/// Whether some expression of `module` computes in float16: its inferred
/// type, a constant's dtype or a variable's annotation is float16.
pub fn computes_in_float16(module: &IRModule) -> bool {
    module.functions().any(|(_, function)| {
        let mut found = false;
        relay_ir::rewrite::post_order_each(function.expr(), |expr| {
            if found {
                return;
            }
            found = expr.checked_type().is_some_and(mentions_float16)
                || match expr.kind() {
                    ExprKind::Constant(data) => is_float16(data.dtype),
                    ExprKind::Var(var) => {
                        var.type_annotation.as_ref().is_some_and(mentions_float16)
                    }
                    _ => false,
                };
        });
        found
    })
}

/// The first element of a float tensor that is not finite or is beyond
/// float16's range: its index and value.
pub fn first_element_out_of_range(tensor: &TensorData) -> Option<(usize, f64)> {
    if !tensor.dtype.is_float() {
        return None;
    }
    (0..tensor.len()).find_map(|i| {
        let v = tensor.get_f64(i).unwrap_or(f64::NAN);
        (!v.is_finite() || v.abs() > FLOAT16_LARGEST).then_some((i, v))
    })
}

/// The first float element of `value` that is not finite or is beyond
/// float16's range, as text: `NaN at output[0, 0]`, `7.1e4 at output.1[3]`.
pub fn first_out_of_range(value: &Value) -> Option<String> {
    value.leaves().iter().find_map(|leaf| {
        let (i, v) = first_element_out_of_range(&leaf.tensor)?;
        Some(format!(
            "{} at output{}[{}]",
            crate::print::scalar_text(v, leaf.tensor.dtype),
            leaf.path,
            index_text(i, &leaf.tensor.shape)
        ))
    })
}

/// The first element of an operator result that shows a float16 overflow:
/// a finite value beyond float16's range (the float16 computation of it
/// overflows), or an infinity in a float16 tensor (it did). NaN is not
/// taken as one: random inputs make NaN in float32 too (`sqrt` of a
/// negative variance in `nn.batch_norm`), at every scale.
fn first_overflow(tensor: &TensorData) -> Option<(usize, f64)> {
    if !tensor.dtype.is_float() {
        return None;
    }
    let in_float16 = is_float16(tensor.dtype);
    (0..tensor.len()).find_map(|i| {
        let v = tensor.get_f64(i).ok()?;
        let beyond = v.is_finite() && v.abs() > FLOAT16_LARGEST;
        (beyond || (in_float16 && v.is_infinite())).then_some((i, v))
    })
}

/// Where the first operator result of a run showed a float16 overflow (a
/// finite value beyond float16's range, or an infinity in float16), as
/// text: `` `nn.dense` gives 9.155e19 at result[0, 473] `` (the
/// interpreter's float16 watch, see [`crate::run_watching_float16_range`]).
pub fn operator_out_of_range(op: &str, value: &Value) -> Option<String> {
    value.leaves().iter().find_map(|leaf| {
        let (i, v) = first_overflow(&leaf.tensor)?;
        Some(format!(
            "`{op}` gives {} at result{}[{}]",
            crate::print::scalar_text(v, leaf.tensor.dtype),
            leaf.path,
            index_text(i, &leaf.tensor.shape)
        ))
    })
}

fn index_text(i: usize, shape: &[i64]) -> String {
    let at: Vec<String> = unravel(i, shape).iter().map(i64::to_string).collect();
    at.join(", ")
}

/// A short text of a result for a range message: where it first leaves
/// float16's range, or its first element when it does not.
pub fn range_text(value: &Value) -> String {
    first_out_of_range(value).unwrap_or_else(|| {
        let leaves = value.leaves();
        match leaves
            .iter()
            .find(|l| l.tensor.dtype.is_float() && !l.tensor.is_empty())
        {
            Some(leaf) => {
                let v = leaf.tensor.get_f64(0).unwrap_or(f64::NAN);
                let at = vec!["0"; leaf.tensor.shape.len()].join(", ");
                format!(
                    "{} at output{}[{at}], within range",
                    crate::print::scalar_text(v, leaf.tensor.dtype),
                    leaf.path
                )
            }
            None => "within range".to_string(),
        }
    })
}

/// `args` with every float tensor multiplied by 2^-`shift` (exact, short
/// of float16's subnormals); other values as they are.
pub fn scaled_arguments(args: &[Value], shift: u32) -> Vec<Value> {
    let factor = (-(shift as f64)).exp2();
    args.iter().map(|a| scaled(a, factor)).collect()
}

fn scaled(value: &Value, factor: f64) -> Value {
    match value {
        Value::Tensor(t) if t.dtype.is_float() => {
            let mut out = (**t).clone();
            for i in 0..out.len() {
                if let Ok(v) = t.get_f64(i) {
                    // A float set into its own dtype cannot fail.
                    let _ = out.set_f64(i, v * factor);
                }
            }
            Value::tensor(out)
        }
        Value::Tuple(fields) => Value::tuple(fields.iter().map(|f| scaled(f, factor)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::metadata::TensorData;

    fn tensor(dtype: DataType, values: &[f64]) -> Value {
        Value::tensor(TensorData::from_f64s(dtype, vec![values.len() as i64], values).unwrap())
    }

    #[test]
    fn out_of_range_elements_are_found_with_their_position() {
        let fine = tensor(DataType::FLOAT32, &[1.0, -65504.0]);
        assert_eq!(first_out_of_range(&fine), None);
        let big = tensor(DataType::FLOAT32, &[1.0, 70000.0]);
        assert_eq!(first_out_of_range(&big).unwrap(), "70000 at output[1]");
        let nan = Value::tuple(vec![fine, tensor(DataType::float(16), &[f64::NAN])]);
        assert_eq!(first_out_of_range(&nan).unwrap(), "NaN at output.1[0]");
        // Integers have no float16 range.
        let ints =
            Value::tensor(TensorData::from_i64s(DataType::INT32, vec![1], &[100000]).unwrap());
        assert_eq!(first_out_of_range(&ints), None);
    }

    #[test]
    fn operator_overflows_are_finite_values_beyond_range_or_float16_infinities() {
        let beyond = tensor(DataType::FLOAT32, &[1.0, -70000.0]);
        assert_eq!(
            operator_out_of_range("multiply", &beyond).unwrap(),
            "`multiply` gives -70000 at result[1]"
        );
        // NaN, and infinities outside float16, are not overflow evidence.
        let nan = tensor(DataType::FLOAT32, &[f64::NAN, f64::INFINITY]);
        assert_eq!(operator_out_of_range("sqrt", &nan), None);
        let half = Value::tuple(vec![
            tensor(DataType::float(16), &[f64::NAN]),
            tensor(DataType::float(16), &[0.5, f64::NEG_INFINITY]),
        ]);
        assert_eq!(
            operator_out_of_range("split", &half).unwrap(),
            "`split` gives -inf at result.1[1]"
        );
    }

    #[test]
    fn scaling_is_exact_and_leaves_integers_alone() {
        let args = [
            tensor(DataType::float(16), &[0.75, -0.5]),
            Value::tensor(TensorData::from_i64s(DataType::INT32, vec![1], &[7]).unwrap()),
        ];
        let scaled = scaled_arguments(&args, 4);
        let half = scaled[0].as_tensor().unwrap();
        assert_eq!(half.get_f64(0).unwrap(), 0.75 / 16.0);
        assert_eq!(half.get_f64(1).unwrap(), -0.5 / 16.0);
        assert_eq!(scaled[1].as_tensor().unwrap().get_i64(0).unwrap(), 7);
    }
}
