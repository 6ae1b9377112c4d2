//! Operators as Python functions, from the operator table: `op_table()`
//! describes every operator (arguments, attribute fields with defaults) so
//! the Python layer can generate `relay.add`, `relay.nn.conv2d(data, weight,
//! strides=(1, 1), …)`, `relay.qnn.op.*` with TVM's signatures, and
//! `make_call` builds the call, converting keyword arguments to attribute
//! values of the declared field types and filling in the defaults.

use crate::attrs::{attr_to_py, py_to_attr};
use crate::expr::{unwrap_expr, wrap_expr};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use relay_passes::ir::{AttrValue, Attrs, Expr};
use relay_passes::op::{self, AttrsSchema};

/// Builds an attrs object of `schema` from keyword values (unknown names
/// get a did-you-mean; required fields must be present).
pub fn attrs_from_kwargs(schema: &AttrsSchema, kwargs: &Bound<'_, PyDict>) -> PyResult<Attrs> {
    let mut given: Vec<(String, Bound<'_, PyAny>)> = Vec::new();
    for (key, value) in kwargs.iter() {
        given.push((key.extract()?, value));
    }
    attrs_from_pairs(schema, "attrs", given)
}

fn attrs_from_pairs(
    schema: &AttrsSchema,
    what: &str,
    given: Vec<(String, Bound<'_, PyAny>)>,
) -> PyResult<Attrs> {
    for (key, _) in &given {
        if schema.field(key).is_none() {
            let hint = op::did_you_mean(key, schema.field_names())
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(PyTypeError::new_err(format!(
                "{what} got an unexpected keyword argument `{key}`{hint} ({} has {})",
                schema.type_key,
                schema.field_names().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let mut fields = Vec::with_capacity(schema.fields.len());
    for field in &schema.fields {
        let value = match given.iter().find(|(k, _)| *k == field.name) {
            Some((_, v)) => py_to_attr(v, &field.ty, &format!("{what}: `{}`", field.name))?,
            None if field.is_required() => {
                return Err(PyTypeError::new_err(format!(
                    "{what} missing required argument `{}`",
                    field.name
                )))
            }
            None => op::default_value(&field.default, &field.ty),
        };
        fields.push((field.name.clone(), value));
    }
    Ok(Attrs::new(schema.type_key.clone(), fields))
}

/// `name(*args, **kwargs)`: the first arguments are the operator's inputs
/// (also by name), further positional arguments and keywords are attribute
/// fields in declaration order.
#[pyfunction]
#[pyo3(signature = (name, args, kwargs = None))]
pub fn make_call(
    py: Python<'_>,
    name: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyObject> {
    let def = op::lookup(name)
        .ok_or_else(|| PyValueError::new_err(format!("operator `{name}` is not registered")))?;
    let input_names: Vec<&str> = def.argument_names().collect();
    let schema = def.attrs();
    let field_names: Vec<&str> = schema
        .map(|s| s.field_names().collect())
        .unwrap_or_default();
    let mut inputs: Vec<Option<Expr>> = vec![None; input_names.len()];
    let mut attr_values: Vec<(String, Bound<'_, PyAny>)> = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if i < input_names.len() {
            inputs[i] = Some(unwrap_expr(&arg)?);
        } else if let Some(field) = field_names.get(i - input_names.len()) {
            attr_values.push((field.to_string(), arg));
        } else {
            return Err(PyTypeError::new_err(format!(
                "{name}() takes {} positional arguments but {} were given",
                input_names.len() + field_names.len(),
                args.len()
            )));
        }
    }
    if let Some(kwargs) = kwargs {
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            if let Some(i) = input_names.iter().position(|n| *n == key) {
                if inputs[i].is_some() {
                    return Err(PyTypeError::new_err(format!(
                        "{name}() got multiple values for argument `{key}`"
                    )));
                }
                inputs[i] = Some(unwrap_expr(&value)?);
            } else if attr_values.iter().any(|(k, _)| *k == key) {
                return Err(PyTypeError::new_err(format!(
                    "{name}() got multiple values for argument `{key}`"
                )));
            } else {
                attr_values.push((key, value));
            }
        }
    }
    let mut call_args = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.into_iter().enumerate() {
        match input {
            Some(e) => call_args.push(e),
            None => {
                return Err(PyTypeError::new_err(format!(
                    "{name}() missing required argument `{}`",
                    input_names[i]
                )))
            }
        }
    }
    let attrs = match schema {
        Some(schema) => Some(attrs_from_pairs(schema, &format!("{name}()"), attr_values)?),
        None if attr_values.is_empty() => None,
        None => {
            return Err(PyTypeError::new_err(format!(
                "{name}() takes no attributes, got `{}`",
                attr_values[0].0
            )))
        }
    };
    wrap_expr(py, &Expr::call(Expr::op(def, None), call_args, attrs, None))
}

/// A field default as a Python value; required fields have none.
fn default_py(py: Python<'_>, field: &op::AttrField) -> PyResult<Option<PyObject>> {
    if field.is_required() {
        return Ok(None);
    }
    let value = op::default_value(&field.default, &field.ty);
    // An `Array` default reads back as a tuple, as TVM's Python defaults.
    Ok(Some(match value {
        AttrValue::Array(_) => {
            let list = attr_to_py(py, &value)?;
            PyTuple::new_bound(py, list.bind(py).iter()?.collect::<PyResult<Vec<_>>>()?).into_py(py)
        }
        other => attr_to_py(py, &other)?,
    }))
}

/// Every operator: `(name, [input names], [(field, type, default or
/// None, required)], description, attrs type key)`.
#[pyfunction]
pub fn op_table(py: Python<'_>) -> PyResult<Vec<PyObject>> {
    let mut out = Vec::new();
    for def in op::all_ops() {
        let inputs: Vec<String> = def.argument_names().map(str::to_string).collect();
        let mut fields = Vec::new();
        if let Some(schema) = def.attrs() {
            for field in &schema.fields {
                let default = default_py(py, field)?;
                let required = default.is_none();
                fields.push((
                    field.name.clone(),
                    field.ty.to_string(),
                    default.unwrap_or_else(|| py.None()),
                    required,
                ));
            }
        }
        out.push(
            (
                def.name.clone(),
                inputs,
                fields,
                def.description.clone(),
                def.attrs_type.clone(),
            )
                .into_py(py),
        );
    }
    Ok(out)
}
