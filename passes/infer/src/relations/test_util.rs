//! Test helpers: hand-built types, attrs objects filled from the operator
//! table's schema defaults, and shortcuts to run an operator's relation.

use super::by_name;
use crate::relation_contract::{RelationArgs, RelationOutcome};
use relay_ir::dtype::DataType;
use relay_ir::op::{self, AttrType};
use relay_ir::{AttrValue, Attrs, Dim, Type};

/// `Tensor[(dims…), dtype]` with int32 dims; `&[]` is a scalar.
pub fn t(dims: &[i64], dtype: &str) -> Type {
    Type::tensor(
        dims.iter().map(|&d| Dim::int32(d)).collect(),
        dtype.parse().unwrap(),
    )
}

/// `Tensor[(dims…), dtype]` with int64 dims.
pub fn t64(dims: &[i64], dtype: &str) -> Type {
    Type::tensor(
        dims.iter().map(|&d| Dim::int64(d)).collect(),
        dtype.parse().unwrap(),
    )
}

/// A tensor type from explicit dims.
pub fn td(dims: Vec<Dim>, dtype: &str) -> Type {
    Type::tensor(dims, dtype.parse().unwrap())
}

/// A tuple type.
pub fn tup(fields: &[Type]) -> Type {
    Type::tuple(fields.to_vec())
}

/// A `DataType` attribute value.
pub fn dt(name: &str) -> AttrValue {
    AttrValue::DataType(DataType::parse(name).unwrap())
}

/// An int32 `IntImm`.
pub fn int(v: i64) -> AttrValue {
    AttrValue::int_imm(v, DataType::INT32)
}

/// An array of int32 `IntImm`s.
pub fn ints(vs: &[i64]) -> AttrValue {
    AttrValue::Array(vs.iter().map(|&v| int(v)).collect())
}

/// A string.
pub fn s(v: &str) -> AttrValue {
    AttrValue::Str(v.to_string())
}

/// A boolean.
pub fn b(v: bool) -> AttrValue {
    AttrValue::Bool(v)
}

/// A double.
pub fn f(v: f64) -> AttrValue {
    AttrValue::Double(v)
}

/// A field's declared default, as the lowering builds it.
pub(crate) use relay_ir::op::default_value;

/// Converts a given value to a field's type as TVM converts a packed
/// argument (the subset the tests and the corpus reader need).
pub fn convert(value: AttrValue, ty: &AttrType) -> AttrValue {
    use AttrValue as V;
    match (ty, value) {
        (AttrType::Optional(inner), V::Null) => {
            let _ = inner;
            V::Null
        }
        (AttrType::Optional(inner), value) => convert(value, inner),
        (AttrType::Int | AttrType::UInt64, V::IntImm { value, .. }) => V::Int(value),
        (AttrType::Int | AttrType::UInt64, V::Bool(b)) => V::Int(i64::from(b)),
        (AttrType::Bool, V::Int(v) | V::IntImm { value: v, .. }) => V::Bool(v != 0),
        (AttrType::Double, V::Int(v) | V::IntImm { value: v, .. }) => V::Double(v as f64),
        (AttrType::Double, V::FloatImm { value, .. }) => V::Double(value),
        (AttrType::DataType, V::Str(s)) => V::DataType(DataType::parse(&s).unwrap_or_default()),
        (AttrType::PrimExpr | AttrType::Integer | AttrType::BoolObj, V::Int(v)) => int(v),
        (AttrType::Array(inner), V::Array(items)) => {
            V::Array(items.into_iter().map(|i| convert(i, inner)).collect())
        }
        (_, value) => value,
    }
}

/// The attrs object `op` gets with the given fields and every other field
/// at its schema default; `None` when the op declares no attrs type.
pub fn attrs_for(op_name: &str, given: &[(&str, AttrValue)]) -> Option<Attrs> {
    let op = op::lookup(op_name).unwrap_or_else(|| panic!("no operator {op_name}"));
    // A few ops declare no attrs type but are always called with one
    // (TVM's Python wrappers build it); `attrs_type=` picks it.
    let schema = match given.iter().find(|(key, _)| *key == "attrs_type") {
        Some((_, AttrValue::Str(key))) => op::attrs_schema(key).expect("known attrs type"),
        _ => op.attrs()?,
    };
    let given: Vec<(&str, AttrValue)> = given
        .iter()
        .filter(|(key, _)| *key != "attrs_type")
        .cloned()
        .collect();
    let given = given.as_slice();
    for (key, _) in given {
        assert!(
            schema.field(key).is_some(),
            "{op_name} has no attribute {key}"
        );
    }
    let fields = schema
        .fields
        .iter()
        .map(|field| {
            let value = match given.iter().find(|(key, _)| *key == field.name) {
                Some((_, value)) => convert(value.clone(), &field.ty),
                None => default_value(&field.default, &field.ty),
            };
            (field.name.clone(), value)
        })
        .collect();
    Some(Attrs::new(schema.type_key.clone(), fields))
}

/// Runs `op`'s relation on `inputs` (output incomplete).
pub fn run(op_name: &str, inputs: &[Type], given: &[(&str, AttrValue)]) -> RelationOutcomeOrError {
    run_with_output(op_name, inputs, Type::incomplete(), given)
}

/// Runs `op`'s relation on `inputs` with the output's type as it is now
/// (a relation called again after its output was resolved).
pub fn run_with_output(
    op_name: &str,
    inputs: &[Type],
    output: Type,
    given: &[(&str, AttrValue)],
) -> RelationOutcomeOrError {
    let op = op::lookup(op_name).unwrap_or_else(|| panic!("no operator {op_name}"));
    let rel_name = op.type_rel.as_deref().expect("op has a relation");
    let rel = by_name(rel_name).unwrap_or_else(|| panic!("relation {rel_name} not implemented"));
    let attrs = attrs_for(op_name, given);
    let mut slots = inputs.to_vec();
    slots.push(output);
    rel(&RelationArgs::new(&slots, attrs.as_ref()))
}

pub type RelationOutcomeOrError = Result<RelationOutcome, crate::relation_contract::RelationError>;

/// The assignments of a relation that must finish.
pub fn solved(op_name: &str, inputs: &[Type], given: &[(&str, AttrValue)]) -> Vec<(usize, Type)> {
    match run(op_name, inputs, given) {
        Ok(RelationOutcome::Solved(assigns)) => assigns,
        Ok(RelationOutcome::NotReady) => panic!("{op_name}: relation waits"),
        Ok(RelationOutcome::Pending(_)) => {
            panic!("{op_name}: relation assigns and waits (use `pending`)")
        }
        Err(err) => panic!("{op_name}: relation fails: {}", err.message),
    }
}

/// The (first) type a finished relation gives the output.
pub fn solve_out(op_name: &str, inputs: &[Type], given: &[(&str, AttrValue)]) -> Type {
    let out = inputs.len();
    solved(op_name, inputs, given)
        .into_iter()
        .find(|(slot, _)| *slot == out)
        .map(|(_, ty)| ty)
        .unwrap_or_else(|| panic!("{op_name}: no output assigned"))
}

/// The assignments of a relation that assigns and then waits (TVM's
/// relations that check more on their stale argument array).
pub fn pending(op_name: &str, inputs: &[Type], given: &[(&str, AttrValue)]) -> Vec<(usize, Type)> {
    match run(op_name, inputs, given) {
        Ok(RelationOutcome::Pending(assigns)) => assigns,
        other => panic!("{op_name}: expected assignments and a wait, got {other:?}"),
    }
}

/// Whether the relation waits.
pub fn waits(op_name: &str, inputs: &[Type], given: &[(&str, AttrValue)]) -> bool {
    matches!(run(op_name, inputs, given), Ok(RelationOutcome::NotReady))
}

/// The error message of a relation that must fail.
pub fn fails(op_name: &str, inputs: &[Type], given: &[(&str, AttrValue)]) -> String {
    match run(op_name, inputs, given) {
        Err(err) => err.message,
        Ok(outcome) => panic!("{op_name}: expected an error, got {outcome:?}"),
    }
}
