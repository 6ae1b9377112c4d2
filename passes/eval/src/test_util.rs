//! What the kernels' unit tests share: tensors from literal values, an
//! attrs object from fields, and running one operator call on values.

use crate::{eval_call, CallInfo, EvalError, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::{AttrValue, Attrs};

/// A tensor of the integer `dtype` with these elements.
pub(crate) fn ints(dtype: &str, shape: &[i64], v: &[i64]) -> Value {
    Value::tensor(
        TensorData::from_i64s(DataType::parse(dtype).unwrap(), shape.to_vec(), v).unwrap(),
    )
}

/// A tensor of the float `dtype` with these elements (rounded to it).
pub(crate) fn floats(dtype: &str, shape: &[i64], v: &[f64]) -> Value {
    Value::tensor(
        TensorData::from_f64s(DataType::parse(dtype).unwrap(), shape.to_vec(), v).unwrap(),
    )
}

/// An attrs object holding `fields` (the kernels read fields by name).
pub(crate) fn attrs(fields: &[(&str, AttrValue)]) -> Attrs {
    Attrs::new(
        "test",
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

/// `op(args…)` with `fields` as its attributes; panics on an error.
pub(crate) fn run(op: &str, fields: &[(&str, AttrValue)], args: &[Value]) -> Value {
    let a = attrs(fields);
    eval_call(&CallInfo::new(op, Some(&a)), args).unwrap_or_else(|e| panic!("{op}: {e}"))
}

/// The error of `op(args…)` with `fields` as its attributes.
pub(crate) fn run_err(op: &str, fields: &[(&str, AttrValue)], args: &[Value]) -> EvalError {
    let a = attrs(fields);
    eval_call(&CallInfo::new(op, Some(&a)), args).expect_err(op)
}
