//! Attribute values between Rust and Python: an attrs object reads as
//! Python values (`call.attrs.strides == [1, 1]`, `call.attrs["padding"]`),
//! and keyword arguments of operator functions become attribute values of
//! the field's declared type (`strides=(2, 2)` → an `Array<IndexExpr>` of
//! int32 `IntImm`s), as TVM's FFI converts them.

use crate::expr::{unwrap_expr, wrap_expr};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};
use relay_passes::dtype::DataType;
use relay_passes::ir::{AttrValue, Attrs, DictAttrs};
use relay_passes::op::AttrType;

/// An attribute value as a Python value: integers and immediates as `int`,
/// doubles and float immediates as `float`, data types and strings as
/// `str`, arrays as `list`, maps as `dict`, null and `?` as `None`,
/// expressions as IR nodes, other objects as their type key.
pub fn attr_to_py(py: Python<'_>, value: &AttrValue) -> PyResult<PyObject> {
    Ok(match value {
        AttrValue::Null | AttrValue::Any => py.None(),
        AttrValue::Int(v) => v.into_py(py),
        AttrValue::IntImm { value, dtype, .. } if dtype.is_bool() => (*value != 0).into_py(py),
        AttrValue::IntImm { value, .. } => value.into_py(py),
        AttrValue::Double(v) | AttrValue::FloatImm { value: v, .. } => v.into_py(py),
        AttrValue::Bool(b) => b.into_py(py),
        AttrValue::Str(s) => s.into_py(py),
        // The void type reads as "", as it prints (`out_dtype=""`).
        AttrValue::DataType(dtype) if *dtype == DataType::void() => "".into_py(py),
        AttrValue::DataType(dtype) => dtype.to_string().into_py(py),
        AttrValue::Array(items) => {
            let items = items
                .iter()
                .map(|item| attr_to_py(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new_bound(py, items).into_py(py)
        }
        AttrValue::Map(entries) => {
            let dict = PyDict::new_bound(py);
            for (key, value) in entries {
                dict.set_item(key, attr_to_py(py, value)?)?;
            }
            dict.into_py(py)
        }
        AttrValue::Expr(expr) => wrap_expr(py, expr)?,
        AttrValue::Meta(object) => object.type_key().to_string().into_py(py),
    })
}

/// A Python value as an attribute value of type `ty` (`what` names the
/// field in errors).
pub fn py_to_attr(value: &Bound<'_, PyAny>, ty: &AttrType, what: &str) -> PyResult<AttrValue> {
    if value.is_none() {
        return if ty.is_nullable() {
            Ok(AttrValue::Null)
        } else {
            Err(PyTypeError::new_err(format!("{what} cannot be None")))
        };
    }
    let mismatch = || {
        PyTypeError::new_err(format!(
            "{what} takes {ty}, not {}",
            value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    };
    Ok(match ty {
        AttrType::Optional(inner) => return py_to_attr(value, inner, what),
        AttrType::Int | AttrType::UInt64 => AttrValue::Int(int_of(value).ok_or_else(mismatch)?),
        AttrType::Double => AttrValue::Double(value.extract::<f64>().map_err(|_| mismatch())?),
        AttrType::Bool => AttrValue::Bool(value.extract::<bool>().map_err(|_| mismatch())?),
        AttrType::BoolObj => {
            let b = value.extract::<bool>().map_err(|_| mismatch())?;
            AttrValue::int_imm(i64::from(b), DataType::bool())
        }
        AttrType::StdString | AttrType::String => {
            AttrValue::Str(value.extract::<String>().map_err(|_| mismatch())?)
        }
        AttrType::DataType => {
            let name = value.extract::<String>().map_err(|_| mismatch())?;
            if name.is_empty() {
                AttrValue::DataType(DataType::void())
            } else {
                AttrValue::DataType(
                    DataType::parse(&name)
                        .map_err(|e| PyTypeError::new_err(format!("{what}: {e}")))?,
                )
            }
        }
        AttrType::Integer => {
            AttrValue::int_imm(int_of(value).ok_or_else(mismatch)?, DataType::INT32)
        }
        AttrType::FloatImm => AttrValue::FloatImm {
            value: value.extract::<f64>().map_err(|_| mismatch())?,
            dtype: DataType::FLOAT32,
        },
        AttrType::PrimExpr => prim_expr(value).ok_or_else(mismatch)?,
        AttrType::Array(element) => {
            if value.is_instance_of::<PyString>() {
                return Err(mismatch());
            }
            let mut items = Vec::new();
            for (i, item) in value.iter().map_err(|_| mismatch())?.enumerate() {
                items.push(py_to_attr(&item?, element, &format!("{what}[{i}]"))?);
            }
            AttrValue::Array(items)
        }
        AttrType::Map => {
            let dict = value.downcast::<PyDict>().map_err(|_| mismatch())?;
            let mut entries = Vec::new();
            for (key, item) in dict.iter() {
                let key: String = key.extract().map_err(|_| mismatch())?;
                let item = py_to_attr(&item, &AttrType::ObjectRef, &format!("{what}[{key:?}]"))?;
                entries.push((key, item));
            }
            AttrValue::Map(entries)
        }
        AttrType::Expr | AttrType::Constant => AttrValue::Expr(unwrap_expr(value)?),
        AttrType::ObjectRef | AttrType::VirtualDevice | AttrType::EnvFunc | AttrType::IndexMap => {
            object_ref(value, what)?
        }
    })
}

/// A Python integer (not a bool), or an integer numpy scalar.
fn int_of(value: &Bound<'_, PyAny>) -> Option<i64> {
    if value.is_instance_of::<PyBool>() || value.is_instance_of::<PyFloat>() {
        return None;
    }
    value.extract::<i64>().ok()
}

/// A `PrimExpr` immediate: int32 `IntImm` for integers (int64 when too
/// large), float32 `FloatImm` for floats, `bool` for booleans.
fn prim_expr(value: &Bound<'_, PyAny>) -> Option<AttrValue> {
    if let Ok(b) = value.downcast::<PyBool>() {
        return Some(AttrValue::int_imm(i64::from(b.is_true()), DataType::bool()));
    }
    if let Some(v) = int_of(value) {
        let dtype = if i32::try_from(v).is_ok() {
            DataType::INT32
        } else {
            DataType::INT64
        };
        return Some(AttrValue::int_imm(v, dtype));
    }
    value.extract::<f64>().ok().map(|v| AttrValue::FloatImm {
        value: v,
        dtype: DataType::FLOAT32,
    })
}

/// An untyped object field: integers, floats, strings, sequences and
/// expressions, converted by their Python type.
fn object_ref(value: &Bound<'_, PyAny>, what: &str) -> PyResult<AttrValue> {
    if let Some(v) = prim_expr(value) {
        return Ok(v);
    }
    if let Ok(s) = value.extract::<String>() {
        return Ok(AttrValue::Str(s));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in value.iter()?.enumerate() {
            items.push(object_ref(&item?, &format!("{what}[{i}]"))?);
        }
        return Ok(AttrValue::Array(items));
    }
    if let Ok(dict) = value.downcast::<PyDict>() {
        let mut entries = Vec::new();
        for (key, item) in dict.iter() {
            entries.push((key.extract::<String>()?, object_ref(&item, what)?));
        }
        return Ok(AttrValue::Map(entries));
    }
    unwrap_expr(value)
        .map(AttrValue::Expr)
        .map_err(|_| PyTypeError::new_err(format!("{what}: cannot convert this value")))
}

/// A call's attrs object (`relay.attrs.Conv2DAttrs`): fields as attributes
/// and as items.
#[pyclass(module = "relay_tools._core", name = "Attrs", frozen)]
pub struct PyAttrs {
    pub inner: Attrs,
}

#[pymethods]
impl PyAttrs {
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<PyObject> {
        match self.inner.get(name) {
            Some(value) => attr_to_py(py, value),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "{} has no field `{name}`",
                self.inner.type_key()
            ))),
        }
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<PyObject> {
        match self.inner.get(name) {
            Some(value) => attr_to_py(py, value),
            None => Err(PyKeyError::new_err(name.to_string())),
        }
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.get(name).is_some()
    }

    /// The field names, in declaration order.
    fn keys(&self) -> Vec<String> {
        self.inner.fields().iter().map(|(k, _)| k.clone()).collect()
    }

    fn list_field_info(&self) -> Vec<String> {
        self.keys()
    }

    #[getter]
    fn type_key(&self) -> String {
        self.inner.type_key().to_string()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.downcast::<PyAttrs>().is_ok_and(|o| {
            relay_passes::ir::equal::attrs_equal(Some(&self.inner), Some(&o.get().inner))
        })
    }

    fn __repr__(&self) -> String {
        let fields: Vec<String> = self
            .inner
            .fields()
            .iter()
            .map(|(k, v)| format!("{k}={}", crate::attrs::attr_text(v)))
            .collect();
        format!("{}({})", self.inner.type_key(), fields.join(", "))
    }
}

/// A function's attributes (`DictAttrs`): keys to values.
#[pyclass(module = "relay_tools._core", name = "DictAttrs", frozen)]
pub struct PyDictAttrs {
    pub inner: DictAttrs,
}

#[pymethods]
impl PyDictAttrs {
    fn __getitem__(&self, py: Python<'_>, key: &str) -> PyResult<PyObject> {
        match self.inner.get(key) {
            Some(value) => attr_to_py(py, value),
            None => Err(PyKeyError::new_err(key.to_string())),
        }
    }

    fn __getattr__(&self, py: Python<'_>, key: &str) -> PyResult<PyObject> {
        match self.inner.get(key) {
            Some(value) => attr_to_py(py, value),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(key.to_string())),
        }
    }

    fn __contains__(&self, key: &str) -> bool {
        self.inner.get(key).is_some()
    }

    fn __len__(&self) -> usize {
        self.inner.entries().len()
    }

    fn keys(&self) -> Vec<String> {
        self.inner
            .entries()
            .iter()
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The attributes as a `dict`.
    fn dict(&self, py: Python<'_>) -> PyResult<PyObject> {
        let dict = PyDict::new_bound(py);
        for (key, value) in self.inner.entries() {
            dict.set_item(key, attr_to_py(py, value)?)?;
        }
        Ok(dict.into_py(py))
    }

    fn __repr__(&self) -> String {
        let fields: Vec<String> = self
            .inner
            .entries()
            .iter()
            .map(|(k, v)| format!("{k}={}", attr_text(v)))
            .collect();
        format!("DictAttrs({})", fields.join(", "))
    }
}

/// A short text of a value for `repr`.
pub fn attr_text(value: &AttrValue) -> String {
    match value {
        AttrValue::Null => "None".into(),
        AttrValue::Any => "?".into(),
        AttrValue::Int(v) | AttrValue::IntImm { value: v, .. } => v.to_string(),
        AttrValue::Double(v) | AttrValue::FloatImm { value: v, .. } => v.to_string(),
        AttrValue::Bool(b) => if *b { "True" } else { "False" }.into(),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::DataType(d) => format!("{:?}", d.to_string()),
        AttrValue::Array(items) => {
            let items: Vec<String> = items.iter().map(attr_text).collect();
            format!("[{}]", items.join(", "))
        }
        AttrValue::Map(entries) => {
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k:?}: {}", attr_text(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        AttrValue::Expr(_) => "<expr>".into(),
        AttrValue::Meta(m) => m.type_key().to_string(),
    }
}
