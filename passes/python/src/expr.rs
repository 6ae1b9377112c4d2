//! Relay expressions as Python objects: one class per node kind under a
//! common `Expr` base (`relay.Var`, `relay.Call`, `relay.Function`, …), with
//! TVM's constructors and fields. A Python object is a handle on the
//! immutable, shared Rust node; wrapping and unwrapping copy no IR.
//!
//! Equality and hashing are TVM's `ObjectRef` ones — node identity — except
//! for operators (one per name) and global variables (equal by name here, as
//! the IR identifies them), so memo tables keyed by expressions work.

use crate::attrs::{py_to_attr, PyAttrs, PyDictAttrs};
use crate::ty::{unwrap_type, unwrap_type_var, wrap_type};
use crate::TVMError;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyDict, PyList, PyTuple};
use relay_passes::dtype::DataType;
use relay_passes::ir::build;
use relay_passes::ir::{
    AttrValue, Attrs, Clause, Constructor, DictAttrs, Expr, ExprKind, Function, FunctionData,
    Pattern, Var,
};
use relay_passes::metadata::TensorData;
use relay_passes::printer::{print_expr, PrintOptions};

/// The base class of every Relay expression (TVM's `RelayExpr`).
#[pyclass(module = "relay_tools._core", name = "Expr", subclass, frozen)]
pub struct PyExpr {
    pub inner: Expr,
}

macro_rules! node_classes {
    ($($rust:ident => $py:literal),* $(,)?) => {$(
        #[pyclass(module = "relay_tools._core", name = $py, extends = PyExpr, frozen, subclass)]
        pub struct $rust;
    )*};
}

node_classes! {
    PyVar => "Var",
    PyGlobalVar => "GlobalVar",
    PyConstant => "Constant",
    PyTuple_ => "Tuple",
    PyTupleGetItem => "TupleGetItem",
    PyCall => "Call",
    PyLet => "Let",
    PyIf => "If",
    PyFunction => "Function",
    PyMatch => "Match",
    PyRefCreate => "RefCreate",
    PyRefRead => "RefRead",
    PyRefWrite => "RefWrite",
    PyConstructor => "Constructor",
    PyOp => "Op",
}

fn base(expr: Expr) -> PyClassInitializer<PyExpr> {
    PyClassInitializer::from(PyExpr { inner: expr })
}

/// The Python object for `expr`, of the class of its kind.
pub fn wrap_expr(py: Python<'_>, expr: &Expr) -> PyResult<PyObject> {
    let init = base(expr.clone());
    Ok(match expr.kind() {
        ExprKind::Var(_) => Py::new(py, init.add_subclass(PyVar))?.into_any(),
        ExprKind::GlobalVar(_) => Py::new(py, init.add_subclass(PyGlobalVar))?.into_any(),
        ExprKind::Constant(_) => Py::new(py, init.add_subclass(PyConstant))?.into_any(),
        ExprKind::Tuple(_) => Py::new(py, init.add_subclass(PyTuple_))?.into_any(),
        ExprKind::TupleGetItem { .. } => Py::new(py, init.add_subclass(PyTupleGetItem))?.into_any(),
        ExprKind::Call(_) => Py::new(py, init.add_subclass(PyCall))?.into_any(),
        ExprKind::Let { .. } => Py::new(py, init.add_subclass(PyLet))?.into_any(),
        ExprKind::If { .. } => Py::new(py, init.add_subclass(PyIf))?.into_any(),
        ExprKind::Function(_) => Py::new(py, init.add_subclass(PyFunction))?.into_any(),
        ExprKind::Match { .. } => Py::new(py, init.add_subclass(PyMatch))?.into_any(),
        ExprKind::RefCreate(_) => Py::new(py, init.add_subclass(PyRefCreate))?.into_any(),
        ExprKind::RefRead(_) => Py::new(py, init.add_subclass(PyRefRead))?.into_any(),
        ExprKind::RefWrite { .. } => Py::new(py, init.add_subclass(PyRefWrite))?.into_any(),
        ExprKind::Constructor(_) => Py::new(py, init.add_subclass(PyConstructor))?.into_any(),
        ExprKind::Op(_) => Py::new(py, init.add_subclass(PyOp))?.into_any(),
    })
}

/// The Rust node of a Python expression; Python numbers become float32
/// (or int32) scalar constants, as TVM's `convert` does.
pub fn unwrap_expr(value: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if let Ok(e) = value.downcast::<PyExpr>() {
        return Ok(e.get().inner.clone());
    }
    if let Ok(items) = value.downcast::<PyList>() {
        let fields = items
            .iter()
            .map(|i| unwrap_expr(&i))
            .collect::<PyResult<_>>()?;
        return Ok(Expr::tuple(fields, None));
    }
    if let Ok(items) = value.downcast::<PyTuple>() {
        let fields = items
            .iter()
            .map(|i| unwrap_expr(&i))
            .collect::<PyResult<_>>()?;
        return Ok(Expr::tuple(fields, None));
    }
    if let Some(e) = scalar_constant(value) {
        return Ok(e);
    }
    Err(PyTypeError::new_err(format!(
        "expected a Relay expression, got {}",
        value.get_type().name()?
    )))
}

fn scalar_constant(value: &Bound<'_, PyAny>) -> Option<Expr> {
    if value.is_instance_of::<pyo3::types::PyBool>() {
        let b: bool = value.extract().ok()?;
        let data = TensorData::from_i64s(DataType::bool(), vec![], &[i64::from(b)]).ok()?;
        return Some(Expr::constant(data, None));
    }
    if value.is_instance_of::<pyo3::types::PyInt>() {
        let v: i64 = value.extract().ok()?;
        let data = TensorData::from_i64s(DataType::INT32, vec![], &[v]).ok()?;
        return Some(Expr::constant(data, None));
    }
    if value.is_instance_of::<pyo3::types::PyFloat>() {
        let v: f64 = value.extract().ok()?;
        let data = TensorData::from_f64s(DataType::FLOAT32, vec![], &[v]).ok()?;
        return Some(Expr::constant(data, None));
    }
    None
}

pub fn unwrap_var(value: &Bound<'_, PyAny>) -> PyResult<Var> {
    unwrap_expr(value)?
        .as_var()
        .ok_or_else(|| PyTypeError::new_err("expected a relay.Var"))
}

fn unwrap_exprs(value: &Bound<'_, PyAny>) -> PyResult<Vec<Expr>> {
    value.iter()?.map(|item| unwrap_expr(&item?)).collect()
}

fn wrap_all<'a>(py: Python<'_>, exprs: impl IntoIterator<Item = &'a Expr>) -> PyResult<PyObject> {
    let items = exprs
        .into_iter()
        .map(|e| wrap_expr(py, e))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new_bound(py, items).into_py(py))
}

fn option_type(py: Python<'_>, ty: Option<&relay_passes::ir::Type>) -> PyResult<PyObject> {
    ty.map_or_else(|| Ok(py.None()), |t| wrap_type(py, t))
}

fn optional_type(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<relay_passes::ir::Type>> {
    match value {
        Some(v) if !v.is_none() => Ok(Some(unwrap_type(v)?)),
        _ => Ok(None),
    }
}

/// The TVM text of an expression.
pub fn expr_text(expr: &Expr, show_meta_data: bool) -> String {
    let options = PrintOptions {
        show_meta_data,
        reparseable: false,
        ..PrintOptions::default()
    };
    print_expr(expr, &options)
}

/// Identity, as TVM's `same_as`, with one node per operator and per global
/// name.
pub fn expr_key(expr: &Expr) -> (u8, usize, String) {
    match expr.kind() {
        ExprKind::Op(op) => (1, *op as *const _ as usize, String::new()),
        ExprKind::GlobalVar(g) => (2, 0, g.name().to_string()),
        _ => (0, expr.addr(), String::new()),
    }
}

fn binary(lhs: &Expr, rhs: &Bound<'_, PyAny>, op: &str, reflected: bool) -> PyResult<Expr> {
    let rhs = unwrap_expr(rhs)?;
    let args = if reflected {
        vec![rhs, lhs.clone()]
    } else {
        vec![lhs.clone(), rhs]
    };
    Ok(build::op_call(op, args))
}

#[pymethods]
impl PyExpr {
    /// The type InferType gave this node.
    #[getter]
    fn checked_type(&self, py: Python<'_>) -> PyResult<PyObject> {
        match self.inner.checked_type() {
            Some(ty) => wrap_type(py, ty),
            None => Err(PyValueError::new_err(
                "The type checker has not populated the checked_type for this node",
            )),
        }
    }

    /// The source span as `(start, end)` byte offsets, or `None`.
    #[getter]
    fn span(&self) -> Option<(u32, u32)> {
        self.inner
            .span()
            .map(|s| (u32::from(s.range.start()), u32::from(s.range.end())))
    }

    #[pyo3(signature = (show_meta_data = true))]
    fn astext(&self, show_meta_data: bool) -> String {
        expr_text(&self.inner, show_meta_data)
    }

    fn __str__(&self) -> String {
        expr_text(&self.inner, false)
    }

    fn __repr__(&self) -> String {
        expr_text(&self.inner, false)
    }

    fn same_as(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyExpr>()
            .is_ok_and(|o| expr_key(&o.get().inner) == expr_key(&self.inner))
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        match op {
            CompareOp::Eq => self.same_as(other).into_py(py),
            CompareOp::Ne => (!self.same_as(other)).into_py(py),
            _ => py.NotImplemented(),
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        expr_key(&self.inner).hash(&mut h);
        h.finish()
    }

    /// TVM's node type key (`relay.Call`).
    #[getter]
    fn type_key(&self) -> &'static str {
        match self.inner.kind() {
            ExprKind::Var(_) => "relay.Var",
            ExprKind::GlobalVar(_) => "GlobalVar",
            ExprKind::Constant(_) => "relay.Constant",
            ExprKind::Tuple(_) => "relay.Tuple",
            ExprKind::TupleGetItem { .. } => "relay.TupleGetItem",
            ExprKind::Call(_) => "relay.Call",
            ExprKind::Let { .. } => "relay.Let",
            ExprKind::If { .. } => "relay.If",
            ExprKind::Function(_) => "relay.Function",
            ExprKind::Match { .. } => "relay.Match",
            ExprKind::RefCreate(_) => "relay.RefCreate",
            ExprKind::RefRead(_) => "relay.RefRead",
            ExprKind::RefWrite { .. } => "relay.RefWrite",
            ExprKind::Constructor(_) => "relay.Constructor",
            ExprKind::Op(_) => "Op",
        }
    }

    fn __add__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        wrap_expr(py, &binary(&self.inner, o, "add", false)?)
    }
    fn __radd__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        wrap_expr(py, &binary(&self.inner, o, "add", true)?)
    }
    fn __sub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        wrap_expr(py, &binary(&self.inner, o, "subtract", false)?)
    }
    fn __rsub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        wrap_expr(py, &binary(&self.inner, o, "subtract", true)?)
    }
    fn __mul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        wrap_expr(py, &binary(&self.inner, o, "multiply", false)?)
    }
    fn __rmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        wrap_expr(py, &binary(&self.inner, o, "multiply", true)?)
    }
    fn __truediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        wrap_expr(py, &binary(&self.inner, o, "divide", false)?)
    }
    fn __rtruediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        wrap_expr(py, &binary(&self.inner, o, "divide", true)?)
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<PyObject> {
        wrap_expr(py, &build::op_call("negative", vec![self.inner.clone()]))
    }

    /// `t[i]` on a tuple-valued expression is `TupleGetItem(t, i)`.
    fn __getitem__(&self, py: Python<'_>, index: i64) -> PyResult<PyObject> {
        let arity = match self.inner.kind() {
            ExprKind::Tuple(fields) => Some(fields.len()),
            _ => self
                .inner
                .checked_type()
                .and_then(|t| t.as_tuple())
                .map(<[_]>::len),
        };
        let index = match arity {
            Some(n) => {
                let i = if index < 0 { index + n as i64 } else { index };
                if i < 0 || i >= n as i64 {
                    return Err(PyIndexError::new_err("tuple index out of range"));
                }
                i as usize
            }
            None if index >= 0 => index as usize,
            None => return Err(PyIndexError::new_err("negative index on a non-tuple")),
        };
        if let ExprKind::Tuple(fields) = self.inner.kind() {
            return wrap_expr(py, &fields[index]);
        }
        wrap_expr(py, &Expr::tuple_get_item(self.inner.clone(), index, None))
    }
}

fn get(slf: &Bound<'_, PyAny>) -> Expr {
    // Every node class extends `PyExpr`, so the downcast always succeeds.
    slf.downcast::<PyExpr>()
        .map(|e| e.get().inner.clone())
        .unwrap_or_else(|_| Expr::tuple(Vec::new(), None))
}

#[pymethods]
impl PyVar {
    #[new]
    #[pyo3(signature = (name_hint, type_annotation = None, span = None))]
    fn new(
        name_hint: &str,
        type_annotation: Option<&Bound<'_, PyAny>>,
        span: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyVar>> {
        let _ = span;
        let var = Var::new(name_hint, optional_type(type_annotation)?, None);
        Ok(base(var.into_expr()).add_subclass(PyVar))
    }

    #[getter]
    fn name_hint(slf: &Bound<'_, Self>) -> String {
        get(slf.as_any())
            .as_var()
            .map(|v| v.name().to_string())
            .unwrap_or_default()
    }

    #[getter]
    fn type_annotation(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let e = get(slf.as_any());
        option_type(
            slf.py(),
            e.as_var().as_ref().and_then(|v| v.type_annotation()),
        )
    }

    /// The variable's identity (TVM's `vid`).
    #[getter]
    fn vid(slf: &Bound<'_, Self>) -> u64 {
        get(slf.as_any()).as_var().map_or(0, |v| v.id().0)
    }
}

#[pymethods]
impl PyGlobalVar {
    #[new]
    #[pyo3(signature = (name_hint, type_annot = None))]
    fn new(
        name_hint: &str,
        type_annot: Option<&Bound<'_, PyAny>>,
    ) -> PyClassInitializer<PyGlobalVar> {
        let _ = type_annot;
        base(Expr::global(name_hint, None)).add_subclass(PyGlobalVar)
    }

    #[getter]
    fn name_hint(slf: &Bound<'_, Self>) -> String {
        match get(slf.as_any()).kind() {
            ExprKind::GlobalVar(g) => g.name().to_string(),
            _ => String::new(),
        }
    }

    /// Calling a global variable builds a call to it.
    #[pyo3(signature = (*args))]
    fn __call__(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
        let args = unwrap_exprs(args.as_any())?;
        wrap_expr(slf.py(), &Expr::call(get(slf.as_any()), args, None, None))
    }
}

/// Reads an array-like (numpy array, `relay_tools.nd.NDArray`): its dtype,
/// shape and C-order bytes.
pub fn tensor_from_py(data: &Bound<'_, PyAny>) -> PyResult<TensorData> {
    let dtype: String = data.getattr("dtype")?.str()?.extract()?;
    let dtype = DataType::parse(&dtype).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let shape: Vec<i64> = data.getattr("shape")?.extract()?;
    let bytes: Vec<u8> = data.call_method0("tobytes")?.extract()?;
    TensorData::new(dtype, shape, bytes).map_err(|e| PyValueError::new_err(e.message))
}

#[pymethods]
impl PyConstant {
    #[new]
    #[pyo3(signature = (data, span = None))]
    fn new(
        data: &Bound<'_, PyAny>,
        span: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyConstant>> {
        let _ = span;
        let nd = data.py().import_bound("relay_tools.nd")?;
        let data = nd.getattr("array")?.call1((data,))?;
        let tensor = tensor_from_py(&data)?;
        Ok(base(Expr::constant(tensor, None)).add_subclass(PyConstant))
    }

    /// The value as a `relay_tools.nd.NDArray`.
    #[getter]
    fn data(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let py = slf.py();
        let e = get(slf.as_any());
        let Some(t) = e.as_constant() else {
            return Err(TVMError::new_err("not a constant"));
        };
        let nd = py.import_bound("relay_tools.nd")?;
        let bytes = pyo3::types::PyBytes::new_bound(py, &t.data);
        Ok(nd
            .getattr("NDArray")?
            .call_method1("_from_bytes", (t.dtype.to_string(), t.shape.clone(), bytes))?
            .unbind())
    }
}

#[pymethods]
impl PyTuple_ {
    #[new]
    #[pyo3(signature = (fields, span = None))]
    fn new(
        fields: &Bound<'_, PyAny>,
        span: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyTuple_>> {
        let _ = span;
        Ok(base(Expr::tuple(unwrap_exprs(fields)?, None)).add_subclass(PyTuple_))
    }

    #[getter]
    fn fields(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::Tuple(fields) => wrap_all(slf.py(), fields),
            _ => Ok(slf.py().None()),
        }
    }

    fn __len__(slf: &Bound<'_, Self>) -> usize {
        match get(slf.as_any()).kind() {
            ExprKind::Tuple(fields) => fields.len(),
            _ => 0,
        }
    }
}

#[pymethods]
impl PyTupleGetItem {
    #[new]
    #[pyo3(signature = (tuple_value, index, span = None))]
    fn new(
        tuple_value: &Bound<'_, PyAny>,
        index: usize,
        span: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyTupleGetItem>> {
        let _ = span;
        Ok(
            base(Expr::tuple_get_item(unwrap_expr(tuple_value)?, index, None))
                .add_subclass(PyTupleGetItem),
        )
    }

    #[getter]
    fn tuple_value(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::TupleGetItem { tuple, .. } => wrap_expr(slf.py(), tuple),
            _ => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn index(slf: &Bound<'_, Self>) -> usize {
        match get(slf.as_any()).kind() {
            ExprKind::TupleGetItem { index, .. } => *index,
            _ => 0,
        }
    }
}

/// Builds an attrs object for a call to `callee` from `attrs`: an `Attrs`
/// object as is, a dict as fields of the operator's attrs type.
fn call_attrs(callee: &Expr, attrs: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Attrs>> {
    let Some(attrs) = attrs.filter(|a| !a.is_none()) else {
        return Ok(None);
    };
    if let Ok(a) = attrs.downcast::<PyAttrs>() {
        return Ok(Some(a.get().inner.clone()));
    }
    let dict = attrs
        .downcast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("attrs must be an Attrs object, a dict or None"))?;
    let schema = callee.as_op().and_then(|op| op.attrs()).ok_or_else(|| {
        PyTypeError::new_err("a dict of attrs needs an operator with an attrs type")
    })?;
    Ok(Some(crate::ops::attrs_from_kwargs(schema, dict)?))
}

#[pymethods]
impl PyCall {
    #[new]
    #[pyo3(signature = (op, args, attrs = None, type_args = None, span = None))]
    fn new(
        op: &Bound<'_, PyAny>,
        args: &Bound<'_, PyAny>,
        attrs: Option<&Bound<'_, PyAny>>,
        type_args: Option<&Bound<'_, PyAny>>,
        span: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyCall>> {
        let _ = (type_args, span);
        let callee = unwrap_expr(op)?;
        let attrs = call_attrs(&callee, attrs)?;
        let attrs = match (attrs, callee.as_op().and_then(|o| o.attrs())) {
            // An operator with an attrs type always carries the object.
            (None, Some(schema)) => Some(build::attrs_with(&schema.type_key, &[])),
            (attrs, _) => attrs,
        };
        let call = Expr::call(callee, unwrap_exprs(args)?, attrs, None);
        Ok(base(call).add_subclass(PyCall))
    }

    #[getter]
    fn op(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).as_call() {
            Some(c) => wrap_expr(slf.py(), &c.callee),
            None => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn args(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).as_call() {
            Some(c) => wrap_all(slf.py(), &c.args),
            None => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn attrs(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let py = slf.py();
        match get(slf.as_any()).as_call().and_then(|c| c.attrs.clone()) {
            Some(attrs) => Ok(Py::new(py, PyAttrs { inner: attrs })?.into_any()),
            None => Ok(py.None()),
        }
    }

    #[getter]
    fn type_args(slf: &Bound<'_, Self>) -> PyResult<Vec<PyObject>> {
        let e = get(slf.as_any());
        e.as_call()
            .map(|c| c.type_args.iter().map(|t| wrap_type(slf.py(), t)).collect())
            .unwrap_or_else(|| Ok(Vec::new()))
    }
}

#[pymethods]
impl PyLet {
    #[new]
    #[pyo3(signature = (variable, value, body, span = None))]
    fn new(
        variable: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        body: &Bound<'_, PyAny>,
        span: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyLet>> {
        let _ = span;
        let e = Expr::let_(
            unwrap_var(variable)?,
            unwrap_expr(value)?,
            unwrap_expr(body)?,
            None,
        );
        Ok(base(e).add_subclass(PyLet))
    }

    #[getter]
    fn var(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::Let { var, .. } => wrap_expr(slf.py(), var.expr()),
            _ => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn value(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::Let { value, .. } => wrap_expr(slf.py(), value),
            _ => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn body(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::Let { body, .. } => wrap_expr(slf.py(), body),
            _ => Ok(slf.py().None()),
        }
    }
}

#[pymethods]
impl PyIf {
    #[new]
    #[pyo3(signature = (cond, true_branch, false_branch, span = None))]
    fn new(
        cond: &Bound<'_, PyAny>,
        true_branch: &Bound<'_, PyAny>,
        false_branch: &Bound<'_, PyAny>,
        span: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyIf>> {
        let _ = span;
        let e = Expr::if_(
            unwrap_expr(cond)?,
            unwrap_expr(true_branch)?,
            unwrap_expr(false_branch)?,
            None,
        );
        Ok(base(e).add_subclass(PyIf))
    }

    #[getter]
    fn cond(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::If { cond, .. } => wrap_expr(slf.py(), cond),
            _ => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn true_branch(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::If { then_branch, .. } => wrap_expr(slf.py(), then_branch),
            _ => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn false_branch(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::If { else_branch, .. } => wrap_expr(slf.py(), else_branch),
            _ => Ok(slf.py().None()),
        }
    }
}

/// Function attributes from a `DictAttrs`, a dict or `None`.
fn dict_attrs(value: Option<&Bound<'_, PyAny>>) -> PyResult<DictAttrs> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(DictAttrs::default());
    };
    if let Ok(d) = value.downcast::<PyDictAttrs>() {
        return Ok(d.get().inner.clone());
    }
    let dict = value
        .downcast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("attrs must be a DictAttrs, a dict or None"))?;
    let mut out = DictAttrs::default();
    for (key, item) in dict.iter() {
        let key: String = key.extract()?;
        let v = function_attr_value(&item, &key)?;
        out.set(&key, v);
    }
    Ok(out)
}

/// A function attribute value: TVM stores Python ints as int32 `IntImm`s
/// (`Primitive=1`), strings as `String`s.
fn function_attr_value(item: &Bound<'_, PyAny>, key: &str) -> PyResult<AttrValue> {
    py_to_attr(item, &relay_passes::op::AttrType::ObjectRef, key)
}

fn function_data(f: &Expr) -> Option<&FunctionData> {
    match f.kind() {
        ExprKind::Function(data) => Some(data),
        _ => None,
    }
}

#[pymethods]
impl PyFunction {
    #[new]
    #[pyo3(signature = (params, body, ret_type = None, type_params = None, attrs = None, span = None))]
    fn new(
        params: &Bound<'_, PyAny>,
        body: &Bound<'_, PyAny>,
        ret_type: Option<&Bound<'_, PyAny>>,
        type_params: Option<&Bound<'_, PyAny>>,
        attrs: Option<&Bound<'_, PyAny>>,
        span: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<PyFunction>> {
        let _ = span;
        let params = params
            .iter()?
            .map(|p| unwrap_var(&p?))
            .collect::<PyResult<Vec<_>>>()?;
        let type_params = match type_params.filter(|t| !t.is_none()) {
            Some(t) => t
                .iter()?
                .map(|v| unwrap_type_var(&v?))
                .collect::<PyResult<Vec<_>>>()?,
            None => Vec::new(),
        };
        let data = FunctionData {
            params,
            body: unwrap_expr(body)?,
            ret_type: optional_type(ret_type)?,
            type_params,
            attrs: dict_attrs(attrs)?,
            virtual_device: None,
        };
        Ok(base(Function::new(data, None).into_expr()).add_subclass(PyFunction))
    }

    #[getter]
    fn params(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let e = get(slf.as_any());
        let params: Vec<Expr> = function_data(&e)
            .map(|f| f.params.iter().map(|v| v.expr().clone()).collect())
            .unwrap_or_default();
        wrap_all(slf.py(), &params)
    }

    #[getter]
    fn body(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let e = get(slf.as_any());
        match function_data(&e) {
            Some(f) => wrap_expr(slf.py(), &f.body),
            None => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn ret_type(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let e = get(slf.as_any());
        option_type(
            slf.py(),
            function_data(&e).and_then(|f| f.ret_type.as_ref()),
        )
    }

    #[getter]
    fn type_params(slf: &Bound<'_, Self>) -> PyResult<Vec<PyObject>> {
        let e = get(slf.as_any());
        let py = slf.py();
        function_data(&e)
            .map(|f| {
                f.type_params
                    .iter()
                    .map(|v| wrap_type(py, &relay_passes::ir::Type::var(v.clone())))
                    .collect()
            })
            .unwrap_or_else(|| Ok(Vec::new()))
    }

    /// The function's attributes (`None` when it has none, as TVM).
    #[getter]
    fn attrs(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let e = get(slf.as_any());
        let py = slf.py();
        match function_data(&e) {
            Some(f) if !f.attrs.is_empty() => Ok(Py::new(
                py,
                PyDictAttrs {
                    inner: f.attrs.clone(),
                },
            )?
            .into_any()),
            _ => Ok(py.None()),
        }
    }

    /// A copy with attribute `key` set (TVM's `with_attr`).
    #[pyo3(signature = (attr_key_or_dict, attr_value = None))]
    fn with_attr(
        slf: &Bound<'_, Self>,
        attr_key_or_dict: &Bound<'_, PyAny>,
        attr_value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let e = get(slf.as_any());
        let f = function_data(&e).ok_or_else(|| PyTypeError::new_err("not a function"))?;
        let mut attrs = f.attrs.clone();
        if let Ok(dict) = attr_key_or_dict.downcast::<PyDict>() {
            for (key, item) in dict.iter() {
                let key: String = key.extract()?;
                attrs.set(&key, function_attr_value(&item, &key)?);
            }
        } else {
            let key: String = attr_key_or_dict.extract()?;
            let value =
                attr_value.ok_or_else(|| PyTypeError::new_err("with_attr needs a value"))?;
            attrs.set(&key, function_attr_value(value, &key)?);
        }
        let data = FunctionData {
            params: f.params.clone(),
            body: f.body.clone(),
            ret_type: f.ret_type.clone(),
            type_params: f.type_params.clone(),
            attrs,
            virtual_device: f.virtual_device.clone(),
        };
        wrap_expr(slf.py(), &Function::new(data, e.span()).into_expr())
    }

    /// Calling a function builds a call to it.
    #[pyo3(signature = (*args))]
    fn __call__(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
        let args = unwrap_exprs(args.as_any())?;
        wrap_expr(slf.py(), &Expr::call(get(slf.as_any()), args, None, None))
    }
}

/// A match pattern (`PatternWildcard`, `PatternVar`, `PatternConstructor`,
/// `PatternTuple`), told apart by `kind`.
#[pyclass(module = "relay_tools._core", name = "Pattern", frozen)]
#[derive(Clone)]
pub struct PyPattern {
    pub inner: Pattern,
}

#[pymethods]
impl PyPattern {
    /// `wildcard`, `var`, `constructor` or `tuple`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner {
            Pattern::Wildcard => "wildcard",
            Pattern::Var(_) => "var",
            Pattern::Constructor(..) => "constructor",
            Pattern::Tuple(_) => "tuple",
        }
    }

    #[getter]
    fn var(&self, py: Python<'_>) -> PyResult<PyObject> {
        match &self.inner {
            Pattern::Var(v) => wrap_expr(py, v.expr()),
            _ => Ok(py.None()),
        }
    }

    #[getter]
    fn constructor(&self, py: Python<'_>) -> PyResult<PyObject> {
        match &self.inner {
            Pattern::Constructor(c, _) => {
                wrap_expr(py, &Expr::new(ExprKind::Constructor(c.clone()), None))
            }
            _ => Ok(py.None()),
        }
    }

    #[getter]
    fn patterns(&self) -> Vec<PyPattern> {
        match &self.inner {
            Pattern::Constructor(_, ps) | Pattern::Tuple(ps) => {
                ps.iter().map(|p| PyPattern { inner: p.clone() }).collect()
            }
            _ => Vec::new(),
        }
    }

    #[staticmethod]
    fn wildcard() -> PyPattern {
        PyPattern {
            inner: Pattern::Wildcard,
        }
    }

    #[staticmethod]
    fn of_var(var: &Bound<'_, PyAny>) -> PyResult<PyPattern> {
        Ok(PyPattern {
            inner: Pattern::Var(unwrap_var(var)?),
        })
    }

    #[staticmethod]
    fn of_constructor(
        constructor: &Bound<'_, PyAny>,
        patterns: Vec<PyPattern>,
    ) -> PyResult<PyPattern> {
        let c = unwrap_constructor(constructor)?;
        Ok(PyPattern {
            inner: Pattern::Constructor(c, patterns.into_iter().map(|p| p.inner).collect()),
        })
    }

    #[staticmethod]
    fn of_tuple(patterns: Vec<PyPattern>) -> PyPattern {
        PyPattern {
            inner: Pattern::Tuple(patterns.into_iter().map(|p| p.inner).collect()),
        }
    }
}

fn unwrap_constructor(value: &Bound<'_, PyAny>) -> PyResult<Constructor> {
    match unwrap_expr(value)?.kind() {
        ExprKind::Constructor(c) => Ok(c.clone()),
        _ => Err(PyTypeError::new_err("expected a relay.Constructor")),
    }
}

/// One `pattern => rhs` of a match.
#[pyclass(module = "relay_tools._core", name = "Clause", frozen)]
pub struct PyClause {
    pub inner: Clause,
}

#[pymethods]
impl PyClause {
    #[new]
    fn new(lhs: PyPattern, rhs: &Bound<'_, PyAny>) -> PyResult<PyClause> {
        Ok(PyClause {
            inner: Clause {
                pattern: lhs.inner,
                rhs: unwrap_expr(rhs)?,
            },
        })
    }

    #[getter]
    fn lhs(&self) -> PyPattern {
        PyPattern {
            inner: self.inner.pattern.clone(),
        }
    }

    #[getter]
    fn rhs(&self, py: Python<'_>) -> PyResult<PyObject> {
        wrap_expr(py, &self.inner.rhs)
    }
}

#[pymethods]
impl PyMatch {
    #[new]
    #[pyo3(signature = (data, clauses, complete = true))]
    fn new(
        data: &Bound<'_, PyAny>,
        clauses: Vec<PyRef<'_, PyClause>>,
        complete: bool,
    ) -> PyResult<PyClassInitializer<PyMatch>> {
        let e = Expr::new(
            ExprKind::Match {
                data: unwrap_expr(data)?,
                clauses: clauses.iter().map(|c| c.inner.clone()).collect(),
                complete,
            },
            None,
        );
        Ok(base(e).add_subclass(PyMatch))
    }

    #[getter]
    fn data(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::Match { data, .. } => wrap_expr(slf.py(), data),
            _ => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn clauses(slf: &Bound<'_, Self>) -> Vec<PyClause> {
        match get(slf.as_any()).kind() {
            ExprKind::Match { clauses, .. } => clauses
                .iter()
                .map(|c| PyClause { inner: c.clone() })
                .collect(),
            _ => Vec::new(),
        }
    }

    #[getter]
    fn complete(slf: &Bound<'_, Self>) -> bool {
        matches!(
            get(slf.as_any()).kind(),
            ExprKind::Match { complete: true, .. }
        )
    }
}

#[pymethods]
impl PyRefCreate {
    #[new]
    fn new(value: &Bound<'_, PyAny>) -> PyResult<PyClassInitializer<PyRefCreate>> {
        Ok(
            base(Expr::new(ExprKind::RefCreate(unwrap_expr(value)?), None))
                .add_subclass(PyRefCreate),
        )
    }

    #[getter]
    fn value(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::RefCreate(v) => wrap_expr(slf.py(), v),
            _ => Ok(slf.py().None()),
        }
    }
}

#[pymethods]
impl PyRefRead {
    #[new]
    fn new(r#ref: &Bound<'_, PyAny>) -> PyResult<PyClassInitializer<PyRefRead>> {
        Ok(base(Expr::new(ExprKind::RefRead(unwrap_expr(r#ref)?), None)).add_subclass(PyRefRead))
    }

    #[getter]
    fn r#ref(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::RefRead(v) => wrap_expr(slf.py(), v),
            _ => Ok(slf.py().None()),
        }
    }
}

#[pymethods]
impl PyRefWrite {
    #[new]
    fn new(
        r#ref: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<PyClassInitializer<PyRefWrite>> {
        let e = Expr::new(
            ExprKind::RefWrite {
                reference: unwrap_expr(r#ref)?,
                value: unwrap_expr(value)?,
            },
            None,
        );
        Ok(base(e).add_subclass(PyRefWrite))
    }

    #[getter]
    fn r#ref(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::RefWrite { reference, .. } => wrap_expr(slf.py(), reference),
            _ => Ok(slf.py().None()),
        }
    }

    #[getter]
    fn value(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::RefWrite { value, .. } => wrap_expr(slf.py(), value),
            _ => Ok(slf.py().None()),
        }
    }
}

#[pymethods]
impl PyConstructor {
    #[new]
    #[pyo3(signature = (name_hint, inputs, belong_to, tag = 0))]
    fn new(
        name_hint: &str,
        inputs: &Bound<'_, PyAny>,
        belong_to: &Bound<'_, PyAny>,
        tag: usize,
    ) -> PyResult<PyClassInitializer<PyConstructor>> {
        let inputs = inputs
            .iter()?
            .map(|t| unwrap_type(&t?))
            .collect::<PyResult<Vec<_>>>()?;
        let header = match unwrap_type(belong_to)?.kind() {
            relay_passes::ir::TypeKind::GlobalVar(g) => g.clone(),
            _ => return Err(PyTypeError::new_err("belong_to must be a GlobalTypeVar")),
        };
        let c = Constructor::new(name_hint, inputs, header, tag);
        Ok(base(Expr::new(ExprKind::Constructor(c), None)).add_subclass(PyConstructor))
    }

    #[getter]
    fn name_hint(slf: &Bound<'_, Self>) -> String {
        match get(slf.as_any()).kind() {
            ExprKind::Constructor(c) => c.name().to_string(),
            _ => String::new(),
        }
    }

    #[getter]
    fn tag(slf: &Bound<'_, Self>) -> usize {
        match get(slf.as_any()).kind() {
            ExprKind::Constructor(c) => c.data().tag,
            _ => 0,
        }
    }

    #[getter]
    fn inputs(slf: &Bound<'_, Self>) -> PyResult<Vec<PyObject>> {
        match get(slf.as_any()).kind() {
            ExprKind::Constructor(c) => c
                .data()
                .inputs
                .iter()
                .map(|t| wrap_type(slf.py(), t))
                .collect(),
            _ => Ok(Vec::new()),
        }
    }

    #[getter]
    fn belong_to(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        match get(slf.as_any()).kind() {
            ExprKind::Constructor(c) => wrap_type(
                slf.py(),
                &relay_passes::ir::Type::new(relay_passes::ir::TypeKind::GlobalVar(
                    c.data().belong_to.clone(),
                )),
            ),
            _ => Ok(slf.py().None()),
        }
    }

    #[pyo3(signature = (*args))]
    fn __call__(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
        let args = unwrap_exprs(args.as_any())?;
        wrap_expr(slf.py(), &Expr::call(get(slf.as_any()), args, None, None))
    }
}

#[pymethods]
impl PyOp {
    #[getter]
    fn name(slf: &Bound<'_, Self>) -> String {
        get(slf.as_any())
            .as_op()
            .map(|o| o.name.clone())
            .unwrap_or_default()
    }

    #[getter]
    fn num_inputs(slf: &Bound<'_, Self>) -> i32 {
        get(slf.as_any()).as_op().map_or(0, |o| o.num_inputs)
    }

    #[getter]
    fn attrs_type_key(slf: &Bound<'_, Self>) -> Option<String> {
        get(slf.as_any()).as_op().and_then(|o| o.attrs_type.clone())
    }

    #[getter]
    fn support_level(slf: &Bound<'_, Self>) -> Option<u32> {
        get(slf.as_any()).as_op().and_then(|o| o.support_level)
    }

    #[getter]
    fn description(slf: &Bound<'_, Self>) -> String {
        get(slf.as_any())
            .as_op()
            .map(|o| o.description.clone())
            .unwrap_or_default()
    }

    /// The operator's `TOpPattern` code.
    fn get_attr(slf: &Bound<'_, Self>, key: &str) -> PyResult<PyObject> {
        let py = slf.py();
        let e = get(slf.as_any());
        let op = e
            .as_op()
            .ok_or_else(|| TVMError::new_err("not an operator"))?;
        Ok(match key {
            "TOpPattern" => op.pattern.map(|p| p.code()).into_py(py),
            "TOpIsStateful" => op.stateful.into_py(py),
            "TNonComputational" => op.non_computational.into_py(py),
            _ => py.None(),
        })
    }

    /// Calling an operator builds a call with default attributes.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        let name = PyOp::name(slf);
        crate::ops::make_call(slf.py(), &name, args, kwargs)
    }
}

/// `relay.op.get(name)`: the operator of that name.
#[pyfunction]
pub fn op_get(py: Python<'_>, name: &str) -> PyResult<PyObject> {
    match relay_passes::op::lookup(name) {
        Some(op) => wrap_expr(py, &Expr::op(op, None)),
        None => {
            let hint = relay_passes::op::suggest_op(name)
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            Err(TVMError::new_err(format!(
                "Operator {name} is not registered{hint}"
            )))
        }
    }
}
