//! The reference interpreter from Python: `interpret(mod, expr, args)` runs a
//! global function, a function expression or a closed expression with the
//! library's interpreter (`relay_passes::interp`, the code `relay run`
//! calls) after InferType, and converts values both ways — tensors from and
//! to `relay_tools.nd.NDArray`, tuples from and to Python tuples, other
//! values (closures, ADT values, references) as [`PyRuntimeValue`].
//! `relay_tools.relay.create_executor` (Python) is built on it.

use crate::expr::{tensor_from_py, unwrap_expr};
use crate::module::PyIRModule;
use crate::passes::pass_error_to_py;
use crate::TVMError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use relay_passes::interp::{self, Limits, Value};
use relay_passes::ir::{ExprKind, IRModule};
use relay_passes::pass_manager::{registry, run_pass, PassContext};

/// A run-time value that is neither a tensor nor a tuple: a closure, an
/// ADT value, a constructor or a reference (TVM's `Closure`,
/// `ConstructorValue`, `RefValue`). It can be passed back as an argument.
#[pyclass(name = "RuntimeValue", module = "relay_tools._core", frozen)]
pub struct PyRuntimeValue {
    value: Value,
}

#[pymethods]
impl PyRuntimeValue {
    /// `"closure"`, `"adt"`, `"constructor"` or `"ref"`.
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.value {
            Value::Closure(_) => "closure",
            Value::Adt(_) => "adt",
            Value::Constructor(_) => "constructor",
            Value::Ref(_) => "ref",
            Value::Tensor(_) | Value::Tuple(_) => "value",
        }
    }

    /// An ADT value's constructor name (`None` for other values).
    #[getter]
    fn constructor(&self) -> Option<String> {
        match &self.value {
            Value::Adt(adt) => Some(adt.constructor.name().to_string()),
            Value::Constructor(c) => Some(c.name().to_string()),
            _ => None,
        }
    }

    /// An ADT value's constructor tag: its index in the type definition
    /// (TVM's `ConstructorValue.tag`).
    #[getter]
    fn tag(&self) -> Option<i64> {
        match &self.value {
            Value::Adt(adt) => Some(adt.constructor.data().tag as i64),
            _ => None,
        }
    }

    /// An ADT value's fields.
    #[getter]
    fn fields(&self, py: Python<'_>) -> PyResult<Vec<PyObject>> {
        match &self.value {
            Value::Adt(adt) => adt.fields.iter().map(|f| to_python(py, f)).collect(),
            _ => Ok(Vec::new()),
        }
    }

    /// What a reference holds now (TVM's `RefValue.value`).
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        match &self.value {
            Value::Ref(cell) => {
                let inner = cell.lock().unwrap_or_else(|e| e.into_inner()).clone();
                to_python(py, &inner).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn __repr__(&self) -> String {
        format!("<RuntimeValue {}>", self.value.skeleton())
    }
}

/// A Python value as an interpreter value: an array-like (converted by
/// `relay_tools.nd.array`), a tuple or list of values, or a
/// [`PyRuntimeValue`].
fn from_python(value: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(v) = value.downcast::<PyRuntimeValue>() {
        return Ok(v.get().value.clone());
    }
    if value.is_instance_of::<PyTuple>() || value.is_instance_of::<PyList>() {
        // A list of numbers is a tensor (as `nd.array` reads it); a list
        // of tensors, a tuple.
        let nested_tensors = value
            .iter()?
            .next()
            .transpose()?
            .is_some_and(|first| first.hasattr("tobytes").unwrap_or(false));
        if value.is_instance_of::<PyTuple>() || nested_tensors {
            let fields = value
                .iter()?
                .map(|item| from_python(&item?))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(Value::tuple(fields));
        }
    }
    let nd = value.py().import_bound("relay_tools.nd")?;
    let array = nd.getattr("array")?.call1((value,))?;
    Ok(Value::tensor(tensor_from_py(&array)?))
}

/// An interpreter value as a Python value.
fn to_python(py: Python<'_>, value: &Value) -> PyResult<PyObject> {
    match value {
        Value::Tensor(t) => {
            let nd = py.import_bound("relay_tools.nd")?;
            let bytes = pyo3::types::PyBytes::new_bound(py, &t.data);
            Ok(nd
                .getattr("NDArray")?
                .call_method1("_from_bytes", (t.dtype.to_string(), t.shape.clone(), bytes))?
                .unbind())
        }
        Value::Tuple(fields) => {
            let items = fields
                .iter()
                .map(|f| to_python(py, f))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new_bound(py, items).into_any().unbind())
        }
        other => Ok(Py::new(
            py,
            PyRuntimeValue {
                value: other.clone(),
            },
        )?
        .into_any()),
    }
}

/// The global name the expression to run is added under (a name no
/// module written by hand uses).
const ENTRY: &str = "__relay_tools_executor_entry";

/// Runs `expr` of `mod` (both optional, TVM's `Interpreter.evaluate`) on
/// `args` with the reference interpreter:
/// * no `expr`: the module's `main`;
/// * a `GlobalVar`: that global function;
/// * a function: that function, with the module's globals visible;
/// * another expression: its value (`args` must be empty).
///
/// The module is type-checked first, as TVM's executors do. Run-time
/// errors raise `TVMError` with the message and the failing expression's
/// place when it has one.
#[pyfunction]
#[pyo3(signature = (module = None, expr = None, args = Vec::new()))]
pub fn interpret(
    py: Python<'_>,
    module: Option<&Bound<'_, PyIRModule>>,
    expr: Option<&Bound<'_, PyAny>>,
    args: Vec<Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let mut module: IRModule = module.map(|m| m.borrow().inner.clone()).unwrap_or_default();
    let expr = expr.map(unwrap_expr).transpose()?;
    let entry = match expr.as_ref().map(|e| (e, e.kind())) {
        None => "main".to_string(),
        Some((_, ExprKind::GlobalVar(g))) => g.name().to_string(),
        Some((e, ExprKind::Function(_))) => {
            module.add_function(ENTRY, e.as_function().expect("a function"));
            ENTRY.to_string()
        }
        Some((e, _)) => {
            if !args.is_empty() {
                return Err(PyValueError::new_err(
                    "an expression that is not a function takes no arguments",
                ));
            }
            module.add_function(ENTRY, crate::analysis::as_function(e));
            ENTRY.to_string()
        }
    };
    if module.function(&entry).is_none() {
        return Err(PyValueError::new_err(format!(
            "the module has no function @{entry} to run"
        )));
    }
    let args = args.iter().map(from_python).collect::<PyResult<Vec<_>>>()?;
    let infer = registry::create_by_name("InferType").map_err(TVMError::new_err)?;
    let ctx = PassContext::current();
    let typed = run_pass(&*infer, module, &ctx).map_err(|e| pass_error_to_py(py, &e, None))?;
    let function = typed
        .function(&entry)
        .expect("InferType keeps the functions");
    if function.params().len() != args.len() {
        return Err(PyValueError::new_err(format!(
            "@{} takes {} argument{}, {} given",
            if entry == ENTRY {
                "the function"
            } else {
                &entry
            },
            function.params().len(),
            if function.params().len() == 1 {
                ""
            } else {
                "s"
            },
            args.len()
        )));
    }
    for (i, arg) in args.iter().enumerate() {
        if let Some(ty) = interp::param_type(function, i) {
            interp::check_argument(&ty, arg).map_err(|e| {
                PyValueError::new_err(format!(
                    "argument {i} (%{}): {e}",
                    function.params()[i].name()
                ))
            })?;
        }
    }
    let value = py
        .allow_threads(|| interp::run(&typed, &entry, args, Limits::default()))
        .map_err(|error| {
            let mut message = error.to_string();
            if let Some(span) = error.span {
                if let Some(file) = typed.sources.get(span.file) {
                    let (line, col) = file.line_col(span.range.start());
                    message = format!(
                        "{}:{}:{}: {message}",
                        typed.sources.name(span.file),
                        line + 1,
                        col + 1
                    );
                }
            }
            TVMError::new_err(message)
        })?;
    to_python(py, &value)
}
