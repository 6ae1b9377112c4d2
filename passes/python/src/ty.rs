//! Relay types as Python objects: `TensorType`, `TupleType`, `FuncType`,
//! `TypeVar`, `GlobalTypeVar`, `TypeCall`, `RefType` and `IncompleteType`
//! under a common `Type` base. Types compare structurally.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use relay_passes::dtype::DataType;
use relay_passes::ir::{Dim, GlobalTypeVar, Type, TypeKind, TypeVar, TypeVarKind};
use relay_passes::printer::print_type;

/// The base class of every Relay type.
#[pyclass(module = "relay_tools._core", name = "Type", subclass, frozen)]
pub struct PyType {
    pub inner: Type,
}

macro_rules! type_classes {
    ($($rust:ident => $py:literal),* $(,)?) => {$(
        #[pyclass(module = "relay_tools._core", name = $py, extends = PyType, frozen, subclass)]
        pub struct $rust;
    )*};
}

type_classes! {
    PyTensorType => "TensorType",
    PyTupleType => "TupleType",
    PyFuncType => "FuncType",
    PyTypeVar => "TypeVar",
    PyGlobalTypeVar => "GlobalTypeVar",
    PyTypeCall => "TypeCall",
    PyRefType => "RefType",
    PyIncompleteType => "IncompleteType",
}

fn base(t: Type) -> PyClassInitializer<PyType> {
    PyClassInitializer::from(PyType { inner: t })
}

/// The Python object for `t`, of the class of its kind.
pub fn wrap_type(py: Python<'_>, t: &Type) -> PyResult<PyObject> {
    let init = base(t.clone());
    Ok(match t.kind() {
        TypeKind::Tensor(_) => Py::new(py, init.add_subclass(PyTensorType))?.into_any(),
        TypeKind::Tuple(_) => Py::new(py, init.add_subclass(PyTupleType))?.into_any(),
        TypeKind::Func(_) => Py::new(py, init.add_subclass(PyFuncType))?.into_any(),
        TypeKind::Var(_) => Py::new(py, init.add_subclass(PyTypeVar))?.into_any(),
        TypeKind::GlobalVar(_) => Py::new(py, init.add_subclass(PyGlobalTypeVar))?.into_any(),
        TypeKind::Call { .. } => Py::new(py, init.add_subclass(PyTypeCall))?.into_any(),
        TypeKind::Ref(_) => Py::new(py, init.add_subclass(PyRefType))?.into_any(),
        TypeKind::Incomplete(_) => Py::new(py, init.add_subclass(PyIncompleteType))?.into_any(),
    })
}

pub fn unwrap_type(value: &Bound<'_, PyAny>) -> PyResult<Type> {
    value
        .downcast::<PyType>()
        .map(|t| t.get().inner.clone())
        .map_err(|_| PyTypeError::new_err("expected a Relay type"))
}

pub fn unwrap_type_var(value: &Bound<'_, PyAny>) -> PyResult<TypeVar> {
    match unwrap_type(value)?.kind() {
        TypeKind::Var(v) => Ok(v.clone()),
        _ => Err(PyTypeError::new_err("expected a TypeVar")),
    }
}

fn types(value: &Bound<'_, PyAny>) -> PyResult<Vec<Type>> {
    value.iter()?.map(|t| unwrap_type(&t?)).collect()
}

fn wrap_types(py: Python<'_>, ts: &[Type]) -> PyResult<Vec<PyObject>> {
    ts.iter().map(|t| wrap_type(py, t)).collect()
}

fn get(slf: &Bound<'_, PyAny>) -> Type {
    slf.downcast::<PyType>()
        .map(|t| t.get().inner.clone())
        .unwrap_or_else(|_| Type::unit())
}

/// A shape entry: a known size as `int`, anything else (`?`, symbolic) as
/// `None`.
fn dim_to_py(d: &Dim) -> Option<i64> {
    d.as_int()
}

#[pymethods]
impl PyType {
    fn __str__(&self) -> String {
        print_type(&self.inner)
    }

    fn __repr__(&self) -> String {
        print_type(&self.inner)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        let equal = other
            .downcast::<PyType>()
            .is_ok_and(|o| relay_passes::ir::equal::types_equal(&self.inner, &o.get().inner));
        match op {
            CompareOp::Eq => equal.into_py(py),
            CompareOp::Ne => (!equal).into_py(py),
            _ => py.NotImplemented(),
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.hash(&mut h);
        h.finish()
    }

    fn same_as(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyType>()
            .is_ok_and(|o| self.inner.ptr_eq(&o.get().inner))
    }

    fn astext(&self) -> String {
        print_type(&self.inner)
    }
}

#[pymethods]
impl PyTensorType {
    #[new]
    #[pyo3(signature = (shape, dtype = "float32"))]
    fn new(shape: Vec<Option<i64>>, dtype: &str) -> PyResult<PyClassInitializer<PyTensorType>> {
        let dtype = DataType::parse(dtype).map_err(|e| PyTypeError::new_err(e.to_string()))?;
        let shape = shape
            .into_iter()
            .map(|d| d.map_or(Dim::Any, Dim::int32))
            .collect();
        Ok(base(Type::tensor(shape, dtype)).add_subclass(PyTensorType))
    }

    /// The sizes (`None` for `?` and symbolic sizes).
    #[getter]
    fn shape(slf: &Bound<'_, Self>) -> Vec<Option<i64>> {
        get(slf.as_any())
            .as_tensor()
            .map(|t| t.shape.iter().map(dim_to_py).collect())
            .unwrap_or_default()
    }

    /// The sizes, all known (TVM raises for a dynamic shape).
    #[getter]
    fn concrete_shape(slf: &Bound<'_, Self>) -> PyResult<Vec<i64>> {
        let t = get(slf.as_any());
        let tensor = t
            .as_tensor()
            .ok_or_else(|| PyTypeError::new_err("not a tensor type"))?;
        tensor
            .shape
            .iter()
            .map(|d| {
                d.as_int()
                    .ok_or_else(|| PyTypeError::new_err("the shape is not concrete"))
            })
            .collect()
    }

    #[getter]
    fn dtype(slf: &Bound<'_, Self>) -> String {
        get(slf.as_any())
            .as_tensor()
            .map(|t| t.dtype.to_string())
            .unwrap_or_default()
    }
}

#[pymethods]
impl PyTupleType {
    #[new]
    fn new(fields: &Bound<'_, PyAny>) -> PyResult<PyClassInitializer<PyTupleType>> {
        Ok(base(Type::tuple(types(fields)?)).add_subclass(PyTupleType))
    }

    #[getter]
    fn fields(slf: &Bound<'_, Self>) -> PyResult<Vec<PyObject>> {
        let t = get(slf.as_any());
        wrap_types(slf.py(), t.as_tuple().unwrap_or(&[]))
    }

    fn __len__(slf: &Bound<'_, Self>) -> usize {
        get(slf.as_any()).as_tuple().map_or(0, <[_]>::len)
    }
}

#[pymethods]
impl PyFuncType {
    #[new]
    #[pyo3(signature = (arg_types, ret_type, type_params = None, type_constraints = None))]
    fn new(
        arg_types: &Bound<'_, PyAny>,
        ret_type: &Bound<'_, PyAny>,
        type_params: Option<&Bound<'_, PyAny>>,
        type_constraints: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyFuncType>> {
        let _ = type_constraints;
        let type_params = match type_params.filter(|t| !t.is_none()) {
            Some(ts) => ts
                .iter()?
                .map(|t| unwrap_type_var(&t?))
                .collect::<PyResult<_>>()?,
            None => Vec::new(),
        };
        let t = Type::func(types(arg_types)?, unwrap_type(ret_type)?, type_params);
        Ok(base(t).add_subclass(PyFuncType))
    }

    #[getter]
    fn arg_types(slf: &Bound<'_, Self>) -> PyResult<Vec<PyObject>> {
        let t = get(slf.as_any());
        wrap_types(slf.py(), t.as_func().map_or(&[][..], |f| &f.params))
    }

    #[getter]
    fn ret_type(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let t = get(slf.as_any());
        match t.as_func() {
            Some(f) => wrap_type(slf.py(), &f.ret),
            None => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn type_params(slf: &Bound<'_, Self>) -> PyResult<Vec<PyObject>> {
        let t = get(slf.as_any());
        let vars: Vec<Type> = t
            .as_func()
            .map(|f| f.type_params.iter().map(|v| Type::var(v.clone())).collect())
            .unwrap_or_default();
        wrap_types(slf.py(), &vars)
    }
}

#[pymethods]
impl PyTypeVar {
    #[new]
    #[pyo3(signature = (name_hint, kind = 0))]
    fn new(name_hint: &str, kind: i32) -> PyClassInitializer<PyTypeVar> {
        let kind = match kind {
            1 => TypeVarKind::ShapeVar,
            4 => TypeVarKind::Constraint,
            5 => TypeVarKind::AdtHandle,
            _ => TypeVarKind::Type,
        };
        base(Type::var(TypeVar::new(name_hint, kind))).add_subclass(PyTypeVar)
    }

    #[getter]
    fn name_hint(slf: &Bound<'_, Self>) -> String {
        match get(slf.as_any()).kind() {
            TypeKind::Var(v) => v.name().to_string(),
            _ => String::new(),
        }
    }
}

#[pymethods]
impl PyGlobalTypeVar {
    #[new]
    #[pyo3(signature = (name_hint, kind = 5))]
    fn new(name_hint: &str, kind: i32) -> PyClassInitializer<PyGlobalTypeVar> {
        let _ = kind;
        base(Type::new(TypeKind::GlobalVar(GlobalTypeVar::new(
            name_hint,
        ))))
        .add_subclass(PyGlobalTypeVar)
    }

    #[getter]
    fn name_hint(slf: &Bound<'_, Self>) -> String {
        match get(slf.as_any()).kind() {
            TypeKind::GlobalVar(g) => g.name().to_string(),
            _ => String::new(),
        }
    }

    /// `List(t)` is the type call `List[t]`.
    #[pyo3(signature = (*args))]
    fn __call__(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, pyo3::types::PyTuple>,
    ) -> PyResult<PyObject> {
        let t = Type::new(TypeKind::Call {
            func: get(slf.as_any()),
            args: types(args.as_any())?,
        });
        wrap_type(slf.py(), &t)
    }
}

#[pymethods]
impl PyTypeCall {
    #[new]
    fn new(
        func: &Bound<'_, PyAny>,
        args: &Bound<'_, PyAny>,
    ) -> PyResult<PyClassInitializer<PyTypeCall>> {
        let t = Type::new(TypeKind::Call {
            func: unwrap_type(func)?,
            args: types(args)?,
        });
        Ok(base(t).add_subclass(PyTypeCall))
    }

    #[getter]
    fn func(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            TypeKind::Call { func, .. } => wrap_type(slf.py(), func),
            _ => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn args(slf: &Bound<'_, Self>) -> PyResult<Vec<PyObject>> {
        match get(slf.as_any()).kind() {
            TypeKind::Call { args, .. } => wrap_types(slf.py(), args),
            _ => Ok(Vec::new()),
        }
    }
}

#[pymethods]
impl PyRefType {
    #[new]
    fn new(value: &Bound<'_, PyAny>) -> PyResult<PyClassInitializer<PyRefType>> {
        Ok(base(Type::new(TypeKind::Ref(unwrap_type(value)?))).add_subclass(PyRefType))
    }

    #[getter]
    fn value(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            TypeKind::Ref(t) => wrap_type(slf.py(), t),
            _ => Ok(slf.py().None()),
        }
    }
}

#[pymethods]
impl PyIncompleteType {
    #[new]
    #[pyo3(signature = (kind = 0))]
    fn new(kind: i32) -> PyClassInitializer<PyIncompleteType> {
        let _ = kind;
        base(Type::incomplete()).add_subclass(PyIncompleteType)
    }
}
