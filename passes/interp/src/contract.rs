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
//!   asks for it) when the pass changed the module. On a module already
//!   in float16 the rewrite goes the other way for those operators: a
//!   result computed in float32 stands where the original's was float16,
//!   and is rounded to float16 to compare.
//!   Where the float16 computation overflows (as it does in TVM, whose
//!   rewrite casts the network to float16), the check compares on smaller
//!   inputs instead ([`crate::range_effects`]).
//! * `Gradient` and `FirstOrderGradient` return `(value, (gradients…))`:
//!   the value is compared with the original result; the gradients are
//!   checked against central finite differences of the module before the
//!   pass ([`crate::gradient_check`]). Their gradient is that of the sum of
//!   the tensors the pass seeds with `ones_like` ([`gradient_seeding`]).
//! * `ToCPS` adds a continuation parameter to `@main`
//!   ([`continuation_argument`]): the check passes the identity
//!   continuation, so the result is the original one.
//! * `FakeQuantizationToInteger` computes in integers what the module
//!   computed in float and rounded once at the end: with per-channel or
//!   non-trivial scales the integer path rounds at each requantize, so an
//!   element may end one unit away. TVM's own tests accept exactly that
//!   (`compare_fq_to_int(..., allow_rounding_error=True)`: `|a - b| <= 1`);
//!   so does the check — a difference of one unit in an integer result is
//!   forgiven, anything larger is reported.
//!
//! Any other pass must keep the result as it was.

use crate::bind::Supplied;
use crate::value::{Closure, Value};
use relay_ir::dtype::DataType;
use relay_ir::{Function, FunctionData, TypeKind, Var};
use std::sync::Arc;

/// The passes whose contract this module knows.
const WITH_CONTRACT: [&str; 5] = [
    "Gradient",
    "FirstOrderGradient",
    "ToCPS",
    "ToMixedPrecision",
    "FakeQuantizationToInteger",
];

/// The pass whose contract applies to `pass` (its pipeline text): the pass
/// itself, or in a `Sequential(…)` (a pipeline checked as a whole) the
/// first of its passes with a contract, with its arguments.
fn contract_pass(pass: &str) -> &str {
    let pass = pass.trim();
    let Some(inner) = pass
        .strip_prefix("Sequential(")
        .and_then(|rest| rest.strip_suffix(')'))
    else {
        return pass;
    };
    top_level_items(inner)
        .into_iter()
        .map(contract_pass)
        .find(|p| WITH_CONTRACT.contains(&name_of(p)))
        .unwrap_or(pass)
}

/// The comma-separated items of a pass list, commas inside parentheses,
/// brackets or quotes left alone.
fn top_level_items(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in list.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                items.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(list[start..].trim());
    items
}

/// The pass's name, without its arguments.
fn name_of(pass: &str) -> &str {
    pass.split_once('(').map_or(pass, |(name, _)| name).trim()
}

/// Which tensors of the result a gradient pass seeds with `ones_like`: the
/// gradients it returns are those of their sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seeding {
    /// Every tensor of the result (FirstOrderGradient).
    EveryTensor,
    /// The first tensor: field 0 of a tuple result, recursively (Gradient,
    /// as TVM's `init_grad` does).
    FirstTensor,
}

impl Seeding {
    /// What the gradients are the gradients of, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Seeding::EveryTensor => "the sum of the result's elements",
            Seeding::FirstTensor => "the sum of the elements of the result's first tensor",
        }
    }
}

/// How `pass` seeds its gradients, if it returns `(value, (gradients…))`.
pub fn gradient_seeding(pass: &str) -> Option<Seeding> {
    match name_of(contract_pass(pass)) {
        "Gradient" => Some(Seeding::FirstTensor),
        "FirstOrderGradient" => Some(Seeding::EveryTensor),
        _ => None,
    }
}

/// The value `pass` promises its added parameter `index` of the entry
/// `after` works with: for ToCPS's continuation `%k: fn (T) -> answer`
/// (the entry's last parameter), the identity `fn (%x: T) { %x }`, which
/// makes the result the original one.
pub fn continuation_argument(pass: &str, after: &Function, index: usize) -> Option<Supplied> {
    if name_of(contract_pass(pass)) != "ToCPS" || index + 1 != after.params().len() {
        return None;
    }
    let param = &after.params()[index];
    let ty = param
        .type_annotation()
        .or_else(|| param.expr().checked_type())?;
    let TypeKind::Func(continuation) = ty.kind() else {
        return None;
    };
    let [argument_type] = &continuation.params[..] else {
        return None;
    };
    let x = Var::new("x", Some(argument_type.clone()), None);
    let identity = Function::new(
        FunctionData {
            params: vec![x.clone()],
            body: x.expr().clone(),
            ret_type: Some(argument_type.clone()),
            type_params: Vec::new(),
            attrs: Default::default(),
            virtual_device: None,
        },
        None,
    );
    let text = format!(
        "fn (%x: {}) {{ %x }}",
        relay_ir::printer::readable::ty(argument_type)
    );
    Some(Supplied {
        parameter: format!("%{}", param.name()),
        value: Value::Closure(Arc::new(Closure {
            function: identity,
            env: None,
            recursive: None,
            global: None,
        })),
        text,
    })
}

/// What to compare with the result before `pass` (its pipeline text,
/// arguments included): the part of `after` that must agree, and the data
/// type whose tolerance applies when it is coarser than the original's.
pub fn comparable(pass: &str, before: &Value, after: &Value) -> (Value, Option<DataType>) {
    let pass = contract_pass(pass);
    let arguments = pass.split_once('(').map_or("", |(_, arguments)| arguments);
    match name_of(pass) {
        "Gradient" | "FirstOrderGradient" => match after {
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

/// `after` in `before`'s float types, where the pass changed a result's
/// float type:
/// - a float16/bfloat16 tensor that stands where `before` has a wider float
///   (the network now computes in the low precision) is converted, exactly,
///   to the wider type;
/// - a wider float tensor that stands where `before` has a float16/bfloat16
///   one (a module already in float16, whose last operators are on the
///   never-convert list — `mean` in a layer norm — and now compute in
///   float32, as TVM's rewrite casts them) is rounded to the 16-bit type:
///   the original computed in it, so that is the precision both share.
///
/// `coarsest` receives the 16-bit type whose tolerance applies.
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
        (Value::Tensor(b), Value::Tensor(a))
            if b.dtype.is_float()
                && b.dtype.bits == 16
                && a.dtype.is_float()
                && a.dtype.bits > 16 =>
        {
            match relay_eval::cast_tensor(a, b.dtype) {
                Ok(narrow) => {
                    coarsest.get_or_insert(b.dtype);
                    Value::tensor(narrow)
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
    fn a_float16_result_the_pass_left_in_float32_is_compared_in_float16() {
        // A module already in float16: a layer norm's `mean` is on the
        // never-convert list, so the rewrite computes the end in float32.
        let before = tensor(DataType::float(16), &[0.333251953125, 70000.0]);
        let after = tensor(DataType::FLOAT32, &[0.33333334, 1e30]);
        let (narrowed, precision) = comparable("ToMixedPrecision", &before, &after);
        assert_eq!(precision, Some(DataType::float(16)));
        assert_eq!(compare_with(&before, &narrowed, precision), None);
        let wrong = tensor(DataType::FLOAT32, &[0.5, 1e30]);
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
    fn a_pipeline_checked_as_a_whole_has_its_gradient_passs_contract() {
        assert_eq!(
            gradient_seeding("Sequential(SimplifyInference, FirstOrderGradient)"),
            Some(Seeding::EveryTensor)
        );
        assert_eq!(
            gradient_seeding("Sequential(FoldConstant, Gradient(mode=\"higher_order\"))"),
            Some(Seeding::FirstTensor)
        );
        assert_eq!(gradient_seeding("Sequential(FoldConstant, ToCPS)"), None);
        assert_eq!(
            contract_pass("Sequential(FoldConstant, ToMixedPrecision(\"bfloat16\"))"),
            "ToMixedPrecision(\"bfloat16\")"
        );
        assert_eq!(contract_pass("Sequential(A, B)"), "Sequential(A, B)");
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
