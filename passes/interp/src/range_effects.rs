//! Range effects in the semantic check, for every float type.
//!
//! Seeded random inputs (uniform in [-1, 1), weights included) push deep
//! networks past the range of the float type they compute in: float16's
//! largest finite value is 65504, and 152 layers of random weights take
//! float32 past 3.4e38. A module may then overflow to infinity or NaN on
//! an input where the same program, rewritten by a correct pass, does not
//! (or the other way round): `ToMixedPrecision` casting a float32 network
//! to float16, `FoldScaleAxis` folding a scale into the weights before the
//! product that overflowed, `SimplifyInference` spelling `nn.batch_norm`
//! out as arithmetic that turns a float32 infinity into NaN where the
//! operator gave 0. A difference there says nothing about the pass.
//!
//! The range that matters is that of the narrowest float type either
//! module computes in ([`FloatRange::of`]): a float32 module converted to
//! float16 is bounded by float16's range on both sides of the pass. A
//! computation leaves it where an operator overflows the type it computes
//! in, giving an infinity ([`overflowed`]); a finite value of a wider type
//! beyond the range is not evidence, because the pass may keep that
//! operator in the wider type (`ToMixedPrecision`'s never list keeps
//! gpt2's `power` in float32, whose squares reach 1e5 on random weights).
//! When a result differs and one of the two results has an element that
//! is not finite ([`first_out_of_range`]), or an operator result inside
//! either module overflowed ([`operator_out_of_range`], the interpreter's
//! overflow watch), the check runs both modules again on the
//! same input scaled down by powers of two ([`scaled_arguments`], exact in
//! every binary float type) until both runs stay within the range, and
//! compares there: agreement is the distinct outcome "agree within range",
//! a difference is a real one. The check in `check.rs` decides; this
//! module holds the facts it decides on.

use crate::compare::unravel;
use crate::value::{multiplied_arguments, Value};
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;
use relay_ir::{ExprKind, IRModule, Type, TypeKind};

/// The scales tried, as exponents: the input times 2^-4, 2^-8, 2^-12.
pub const SCALE_SHIFTS: [u32; 3] = [4, 8, 12];

/// The largest finite value of a float type whose elements the check
/// reads (float16, bfloat16, float32, float64); `None` for other types.
pub fn largest_finite(dtype: DataType) -> Option<f64> {
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16) => Some(half::f16::MAX.to_f64()),
        (TypeCode::BFloat, 16) => Some(half::bf16::MAX.to_f64()),
        (TypeCode::Float, 32) => Some(f64::from(f32::MAX)),
        (TypeCode::Float, 64) => Some(f64::MAX),
        _ => None,
    }
}

/// The range a computation stays in: that of its narrowest float type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloatRange {
    /// The float type (one lane).
    pub dtype: DataType,
    /// Its largest finite value.
    pub largest: f64,
}

impl FloatRange {
    /// The range of one float type; `None` for a type that is not one.
    pub fn new(dtype: DataType) -> Option<FloatRange> {
        let dtype = dtype.with_lanes(1);
        largest_finite(dtype).map(|largest| FloatRange { dtype, largest })
    }

    /// The range of the narrowest float type (the smallest largest finite
    /// value) any expression of `modules` computes in: its inferred type,
    /// a constant's dtype or a variable's annotation. `None` when none
    /// computes in a float type.
    pub fn of(modules: &[&IRModule]) -> Option<FloatRange> {
        let mut narrowest: Option<FloatRange> = None;
        let mut note = |dtype: DataType| {
            if let Some(range) = FloatRange::new(dtype) {
                if narrowest.is_none_or(|n| range.largest < n.largest) {
                    narrowest = Some(range);
                }
            }
        };
        for module in modules {
            for (_, function) in module.functions() {
                relay_ir::rewrite::post_order_each(function.expr(), |expr| {
                    if let Some(ty) = expr.checked_type() {
                        each_tensor_dtype(ty, &mut note);
                    }
                    match expr.kind() {
                        ExprKind::Constant(data) => note(data.dtype),
                        ExprKind::Var(var) => {
                            if let Some(ty) = &var.type_annotation {
                                each_tensor_dtype(ty, &mut note);
                            }
                        }
                        _ => {}
                    }
                });
            }
        }
        narrowest
    }
}

/// Whether an element shows that the operation giving it overflowed its
/// float type: an infinity (a float16 result beyond 65504 is one; a finite
/// float32 result beyond it is not, see the module docs). NaN is not:
/// random inputs make NaN at every scale (`sqrt` of a negative random
/// variance in `nn.batch_norm`).
pub fn overflowed(v: f64) -> bool {
    v.is_infinite()
}

impl std::fmt::Display for FloatRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.dtype)
    }
}

/// Calls `note` with the dtype of every tensor type in `ty`.
fn each_tensor_dtype(ty: &Type, note: &mut impl FnMut(DataType)) {
    match ty.kind() {
        TypeKind::Tensor(t) => note(t.dtype),
        TypeKind::Tuple(fields) => fields.iter().for_each(|f| each_tensor_dtype(f, note)),
        TypeKind::Func(f) => {
            f.params.iter().for_each(|p| each_tensor_dtype(p, note));
            each_tensor_dtype(&f.ret, note);
        }
        TypeKind::Ref(t) => each_tensor_dtype(t, note),
        TypeKind::Call { args, .. } => args.iter().for_each(|a| each_tensor_dtype(a, note)),
        TypeKind::Var(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => {}
    }
}

/// Whether the check reads the elements of `tensor` for range: a float
/// tensor of a type [`largest_finite`] knows.
fn is_read(tensor: &TensorData) -> bool {
    largest_finite(tensor.dtype).is_some()
}

/// The first element of a float tensor that is not finite (NaN, or
/// [`overflowed`]): its index and value.
pub fn first_element_out_of_range(tensor: &TensorData) -> Option<(usize, f64)> {
    if !is_read(tensor) {
        return None;
    }
    (0..tensor.len()).find_map(|i| {
        let v = tensor.get_f64(i).unwrap_or(f64::NAN);
        (v.is_nan() || overflowed(v)).then_some((i, v))
    })
}

/// The first float element of `value` that is not finite, as text: `NaN
/// at output[0, 0]`, `inf at output.1[3]`.
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

/// The first element of an operator result that [`overflowed`].
fn first_overflow(tensor: &TensorData) -> Option<(usize, f64)> {
    if !is_read(tensor) {
        return None;
    }
    (0..tensor.len()).find_map(|i| {
        let v = tensor.get_f64(i).ok()?;
        overflowed(v).then_some((i, v))
    })
}

/// Where an operator result [`overflowed`], as text: `` `nn.dense` gives
/// inf at result[0, 473] `` (the interpreter's overflow watch, see
/// [`crate::run_watching_overflow`]).
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

/// Whether a float element of `value` [`overflowed`] (NaN does not
/// count).
pub fn overflows(value: &Value) -> bool {
    value
        .leaves()
        .iter()
        .any(|leaf| first_overflow(&leaf.tensor).is_some())
}

fn index_text(i: usize, shape: &[i64]) -> String {
    let at: Vec<String> = unravel(i, shape).iter().map(i64::to_string).collect();
    at.join(", ")
}

/// A short text of a result for a range message: its first element that
/// is not finite, or its first element when every one is.
pub fn range_text(value: &Value) -> String {
    first_out_of_range(value).unwrap_or_else(|| {
        let leaves = value.leaves();
        match leaves
            .iter()
            .find(|l| is_read(&l.tensor) && !l.tensor.is_empty())
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
/// of float16's subnormals); other values, and the arguments whose `keep`
/// is true (those drawn in a domain, [`crate::input_domains`]), as they
/// are.
pub fn scaled_arguments(args: &[Value], shift: u32, keep: &[bool]) -> Vec<Value> {
    let factor = (-(shift as f64)).exp2();
    multiplied_arguments(args, keep, |dtype| largest_finite(dtype).map(|_| factor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::metadata::TensorData;

    fn tensor(dtype: DataType, values: &[f64]) -> Value {
        Value::tensor(TensorData::from_f64s(dtype, vec![values.len() as i64], values).unwrap())
    }

    fn range(dtype: DataType) -> FloatRange {
        FloatRange::new(dtype).unwrap()
    }

    #[test]
    fn every_float_type_has_its_largest_finite_value() {
        assert_eq!(largest_finite(DataType::float(16)), Some(65504.0));
        assert_eq!(
            largest_finite(DataType::bfloat(16)),
            Some(3.3895313892515355e38)
        );
        assert_eq!(
            largest_finite(DataType::FLOAT32),
            Some(3.4028234663852886e38)
        );
        assert_eq!(largest_finite(DataType::float(64)), Some(f64::MAX));
        assert_eq!(largest_finite(DataType::INT32), None);
        // A vector type's range is its lane's.
        assert_eq!(
            range(DataType::FLOAT32.with_lanes(4)).dtype,
            DataType::FLOAT32
        );
        assert_eq!(range(DataType::float(16)).to_string(), "float16");
    }

    #[test]
    fn the_range_of_modules_is_their_narrowest_float_type() {
        let parse =
            |body: &str| crate::test_util::module(&format!("#[version = \"0.0.5\"]\n{body}"));
        let f32_module = parse("def @main(%x: Tensor[(2), float32]) { exp(%x) }");
        let mixed =
            parse("def @main(%x: Tensor[(2), float64], %h: Tensor[(2), float16]) { (%x, %h) }");
        let brain = parse("def @main(%x: Tensor[(2), bfloat16]) { %x }");
        let ints = parse("def @main(%x: Tensor[(2), int32]) { %x }");
        assert_eq!(
            FloatRange::of(&[&f32_module]),
            Some(range(DataType::FLOAT32))
        );
        assert_eq!(
            FloatRange::of(&[&f32_module, &mixed]),
            Some(range(DataType::float(16)))
        );
        assert_eq!(
            FloatRange::of(&[&f32_module, &brain]),
            Some(range(DataType::bfloat(16)))
        );
        assert_eq!(FloatRange::of(&[&ints]), None);
    }

    #[test]
    fn out_of_range_elements_are_found_with_their_position() {
        let fine = tensor(DataType::FLOAT32, &[1.0, -65504.0]);
        assert_eq!(first_out_of_range(&fine), None);
        // A finite float32 value beyond float16's largest is not out of
        // range: the pass may keep its operator in float32.
        let big = tensor(DataType::FLOAT32, &[1.0, 70000.0]);
        assert_eq!(first_out_of_range(&big), None);
        let nan = Value::tuple(vec![fine, tensor(DataType::float(16), &[f64::NAN])]);
        assert_eq!(first_out_of_range(&nan).unwrap(), "NaN at output.1[0]");
        // Integers have no float range.
        let ints =
            Value::tensor(TensorData::from_i64s(DataType::INT32, vec![1], &[100000]).unwrap());
        assert_eq!(first_out_of_range(&ints), None);
        let inf = tensor(DataType::FLOAT32, &[1.0, f64::NEG_INFINITY]);
        assert_eq!(first_out_of_range(&inf).unwrap(), "-inf at output[1]");
        let brain = tensor(DataType::bfloat(16), &[0.5, f64::INFINITY]);
        assert_eq!(first_out_of_range(&brain).unwrap(), "inf at output[1]");
        // A float16 result beyond 65504 is an infinity.
        let half = tensor(DataType::float(16), &[1.0, 70000.0]);
        assert_eq!(first_out_of_range(&half).unwrap(), "inf at output[1]");
    }

    #[test]
    fn operator_overflows_are_infinities_and_never_nan() {
        // gpt2's `power` in float32, kept there by ToMixedPrecision: a
        // value beyond float16's largest is no overflow.
        let beyond = tensor(DataType::FLOAT32, &[1.0, -129181.0]);
        assert_eq!(operator_out_of_range("power", &beyond), None);
        assert!(!overflows(&beyond));
        // The same value in float16 is one.
        let half = tensor(DataType::float(16), &[1.0, -129181.0]);
        assert_eq!(
            operator_out_of_range("multiply", &half).unwrap(),
            "`multiply` gives -inf at result[1]"
        );
        // NaN is not overflow evidence.
        let nan = tensor(DataType::FLOAT32, &[f64::NAN, 2.0]);
        assert_eq!(operator_out_of_range("sqrt", &nan), None);
        let split = Value::tuple(vec![
            tensor(DataType::float(16), &[f64::NAN]),
            tensor(DataType::float(16), &[0.5, f64::NEG_INFINITY]),
        ]);
        assert_eq!(
            operator_out_of_range("split", &split).unwrap(),
            "`split` gives -inf at result.1[1]"
        );
        let inf = tensor(DataType::FLOAT32, &[f64::NAN, 3.0, f64::INFINITY]);
        assert_eq!(
            operator_out_of_range("exp", &inf).unwrap(),
            "`exp` gives inf at result[2]"
        );
        // Outputs overflow as operator results do: NaN alone does not.
        assert!(overflows(&inf) && overflows(&half));
        assert!(!overflows(&nan));
    }

    #[test]
    fn scaling_is_exact_and_leaves_integers_alone() {
        let args = [
            tensor(DataType::float(16), &[0.75, -0.5]),
            Value::tensor(TensorData::from_i64s(DataType::INT32, vec![1], &[7]).unwrap()),
            tensor(DataType::bfloat(16), &[0.5]),
        ];
        let scaled = scaled_arguments(&args, 4, &[]);
        let half = scaled[0].as_tensor().unwrap();
        assert_eq!(half.get_f64(0).unwrap(), 0.75 / 16.0);
        assert_eq!(half.get_f64(1).unwrap(), -0.5 / 16.0);
        assert_eq!(scaled[1].as_tensor().unwrap().get_i64(0).unwrap(), 7);
        assert_eq!(
            scaled[2].as_tensor().unwrap().get_f64(0).unwrap(),
            0.5 / 16.0
        );
        // A kept argument (one drawn in a domain) is not scaled.
        let kept = scaled_arguments(&args, 4, &[false, false, true]);
        assert_eq!(kept[2].as_tensor().unwrap().get_f64(0).unwrap(), 0.5);
        assert_eq!(kept[0].as_tensor(), scaled[0].as_tensor());
    }
}
