//! Passes as Python objects (`tvm.transform.Pass`, `ModulePass`,
//! `FunctionPass`, `Sequential`): handles on the pass manager's passes,
//! whether built in (made by name from the registry), composed
//! (`Sequential`) or written in Python. A Python pass is a Rust [`Pass`]
//! whose body calls back into Python, so it runs inside the pass manager:
//! enabled by opt_level and `disabled_pass`, its `required` passes run
//! first, instruments and `PrintIR` see it, `should_run` can veto it.
//!
//! A Python exception raised in a pass or instrument is kept (see
//! [`stash_error`]) and raised again at the Python call as a `TVMError`
//! naming the pass, with the original exception as its `__cause__`.

use crate::context::run_context;
use crate::diagnostics::format_diagnostics;
use crate::expr::{unwrap_expr, wrap_expr};
use crate::module::{new_module, PyIRModule};
use crate::TVMError;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use relay_passes::diagnostic::{Code, Diagnostic};
use relay_passes::ir::{Function, IRModule};
use relay_passes::pass_manager::registry::{self, PassKind};
use relay_passes::pass_manager::{
    run_pass, Pass, PassContext, PassError, PassInfo, PassResult, PipelineValue, Sequential,
};
use std::sync::{Arc, Mutex};

/// The Python exception behind the last failure of a Python callback, taken
/// when the failure reaches Python again.
static PENDING_ERROR: Mutex<Option<PyErr>> = Mutex::new(None);

/// Keeps `err` for the Python caller; returns its text for the Rust error.
pub fn stash_error(py: Python<'_>, err: PyErr) -> String {
    let text = match err.value_bound(py).str() {
        Ok(s) => format!(
            "{}: {}",
            err.get_type_bound(py)
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default(),
            s
        ),
        Err(_) => "a Python exception".to_string(),
    };
    *PENDING_ERROR.lock().unwrap_or_else(|e| e.into_inner()) = Some(err);
    text
}

/// A `TVMError` for a failed pass, chained to the Python exception that
/// caused it, if any.
pub fn pass_error_to_py(py: Python<'_>, error: &PassError, module: Option<&IRModule>) -> PyErr {
    let mut message = error.message.clone();
    if !error.diagnostics.is_empty() {
        let sources = error
            .sources
            .clone()
            .or_else(|| module.map(|m| m.sources.clone()))
            .unwrap_or_default();
        message.push('\n');
        message.push_str(&format_diagnostics(&error.diagnostics, &sources));
    }
    let err = TVMError::new_err(message);
    if let Some(cause) = PENDING_ERROR
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        err.set_cause(py, Some(cause));
    }
    err
}

/// Clears a kept exception that no failure reported (a hook failure that
/// a later success made irrelevant cannot happen, but a stale one must not
/// be chained to an unrelated error).
pub fn clear_pending_error() {
    PENDING_ERROR
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
}

/// `tvm.transform.PassInfo`.
#[pyclass(module = "relay_tools._core", name = "PassInfo", frozen)]
#[derive(Clone)]
pub struct PyPassInfo {
    pub inner: PassInfo,
}

#[pymethods]
impl PyPassInfo {
    #[new]
    #[pyo3(signature = (opt_level, name, required = None, traceable = false))]
    fn new(
        opt_level: u32,
        name: &str,
        required: Option<Vec<String>>,
        traceable: bool,
    ) -> PyPassInfo {
        let _ = traceable;
        PyPassInfo {
            inner: PassInfo {
                name: name.to_string(),
                opt_level,
                required: required.unwrap_or_default(),
            },
        }
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    #[getter]
    fn opt_level(&self) -> u32 {
        self.inner.opt_level
    }

    #[getter]
    fn required(&self) -> Vec<String> {
        self.inner.required.clone()
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        self.inner.to_string()
    }
}

/// The base class of every pass.
#[pyclass(module = "relay_tools._core", name = "Pass", subclass, frozen)]
pub struct PyPass {
    inner: std::sync::OnceLock<Arc<dyn Pass>>,
}

#[pyclass(module = "relay_tools._core", name = "ModulePass", extends = PyPass, subclass, frozen)]
pub struct PyModulePassClass;

#[pyclass(module = "relay_tools._core", name = "FunctionPass", extends = PyPass, subclass, frozen)]
pub struct PyFunctionPassClass;

#[pyclass(module = "relay_tools._core", name = "Sequential", extends = PyPass, subclass, frozen)]
pub struct PySequentialClass;

/// An empty handle: Python subclasses made by the class decorators
/// (`@module_pass class P: …`) are created first and given their pass by
/// `_init_handle` in `__init__`.
fn empty() -> PyClassInitializer<PyPass> {
    PyClassInitializer::from(PyPass {
        inner: std::sync::OnceLock::new(),
    })
}

#[pymethods]
impl PyModulePassClass {
    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn new(
        args: &Bound<'_, pyo3::types::PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyClassInitializer<Self> {
        let _ = (args, kwargs);
        empty().add_subclass(PyModulePassClass)
    }
}

#[pymethods]
impl PyFunctionPassClass {
    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn new(
        args: &Bound<'_, pyo3::types::PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyClassInitializer<Self> {
        let _ = (args, kwargs);
        empty().add_subclass(PyFunctionPassClass)
    }
}

#[pymethods]
impl PySequentialClass {
    /// `tvm.transform.Sequential(passes, opt_level, name, required)`.
    #[new]
    #[pyo3(signature = (passes = None, opt_level = 0, name = "sequential", required = None))]
    fn new(
        passes: Option<&Bound<'_, PyAny>>,
        opt_level: u32,
        name: &str,
        required: Option<Vec<String>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let passes = match passes {
            Some(list) if !list.is_none() => list
                .iter()?
                .map(|p| unwrap_pass(&p?))
                .collect::<PyResult<Vec<_>>>()?,
            _ => Vec::new(),
        };
        let seq = Sequential::with_info(info_of(name, opt_level, required), passes);
        Ok(PyClassInitializer::from(PyPass::with(Arc::new(seq))).add_subclass(PySequentialClass))
    }
}

impl PyPass {
    fn with(pass: Arc<dyn Pass>) -> PyPass {
        let cell = std::sync::OnceLock::new();
        let _ = cell.set(pass);
        PyPass { inner: cell }
    }

    pub fn pass(&self) -> PyResult<Arc<dyn Pass>> {
        self.inner
            .get()
            .cloned()
            .ok_or_else(|| TVMError::new_err("this pass object was never initialised"))
    }
}

/// The Python object for `pass`, of the class of `kind`.
pub fn wrap_pass(py: Python<'_>, pass: Arc<dyn Pass>, kind: PassKind) -> PyResult<PyObject> {
    let init = PyClassInitializer::from(PyPass::with(pass));
    Ok(match kind {
        PassKind::Module => Py::new(py, init.add_subclass(PyModulePassClass))?.into_any(),
        PassKind::Function => Py::new(py, init.add_subclass(PyFunctionPassClass))?.into_any(),
        PassKind::Sequential => Py::new(py, init.add_subclass(PySequentialClass))?.into_any(),
    })
}

pub fn unwrap_pass(value: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Pass>> {
    value
        .downcast::<PyPass>()
        .map_err(|_| PyTypeError::new_err("expected a tvm.transform.Pass"))?
        .get()
        .pass()
}

/// Runs `pass` on a Python module under the current context (with the
/// GIL released, so passes may use threads; Python callbacks take it back).
pub fn run_on(
    py: Python<'_>,
    pass: Arc<dyn Pass>,
    module: &Bound<'_, PyIRModule>,
) -> PyResult<Py<PyIRModule>> {
    let input = module.borrow().inner.clone();
    let ctx = run_context(py)?;
    clear_pending_error();
    let kept = input.clone();
    let result = py.allow_threads(move || run_pass(&*pass, input, &ctx));
    match result {
        Ok(out) => new_module(py, out),
        Err(error) => Err(pass_error_to_py(py, &error, Some(&kept))),
    }
}

#[pymethods]
impl PyPass {
    /// Lets Python subclasses (class decorators) be made first and get their
    /// pass afterwards with `_init_handle`.
    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn new(args: &Bound<'_, pyo3::types::PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyPass {
        let _ = (args, kwargs);
        PyPass {
            inner: std::sync::OnceLock::new(),
        }
    }

    /// Gives a pass made by `__new__` the handle of `other`.
    fn _init_handle(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let pass = unwrap_pass(other)?;
        self.inner
            .set(pass)
            .map_err(|_| TVMError::new_err("the pass is already initialised"))
    }

    #[getter]
    fn info(&self) -> PyResult<PyPassInfo> {
        Ok(PyPassInfo {
            inner: self.pass()?.info().clone(),
        })
    }

    /// Runs the pass on a module under `PassContext.current()`.
    fn __call__(&self, py: Python<'_>, module: &Bound<'_, PyAny>) -> PyResult<Py<PyIRModule>> {
        let module = module
            .downcast::<PyIRModule>()
            .map_err(|_| PyTypeError::new_err("a pass runs on a tvm.IRModule"))?;
        run_on(py, self.pass()?, module)
    }

    /// The pass as pipeline text (`FuseOps(fuse_opt_level=2)`).
    fn describe(&self) -> PyResult<String> {
        Ok(self.pass()?.describe())
    }

    fn __str__(&self) -> PyResult<String> {
        let pass = self.pass()?;
        let info = pass.info();
        Ok(format!(
            "Run pass: {} at the optimization level {}",
            info.name, info.opt_level
        ))
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(self.pass()?.describe())
    }
}

// ---- passes written in Python ----

/// The Python `PassContext.current()` object handed to Python passes.
fn python_context(py: Python<'_>) -> PyResult<PyObject> {
    Ok(py
        .import_bound("relay_tools.transform")?
        .getattr("PassContext")?
        .call_method0("current")?
        .unbind())
}

/// A module pass whose body is a Python callable `(mod, ctx) -> mod`.
pub struct PythonModulePass {
    info: PassInfo,
    func: PyObject,
}

impl Pass for PythonModulePass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn transform(&self, module: IRModule, _ctx: &PassContext) -> PassResult {
        Python::with_gil(|py| {
            let call = || -> PyResult<IRModule> {
                let input = new_module(py, module)?;
                let out = self.func.call1(py, (input, python_context(py)?))?;
                let out = out.bind(py).downcast::<PyIRModule>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "module pass {} must return a tvm.IRModule",
                        self.info.name
                    ))
                })?;
                let result = out.borrow().inner.clone();
                Ok(result)
            };
            call().map_err(|e| {
                let text = stash_error(py, e);
                PassError::new(
                    &self.info.name,
                    format!("pass {} failed: {text}", self.info.name),
                )
            })
        })
    }
}

/// A function pass whose body is a Python callable `(func, mod, ctx) ->
/// func`, called on each function that may be optimised; InferType runs
/// afterwards, as for every function pass.
pub struct PythonFunctionPass {
    info: PassInfo,
    func: PyObject,
}

impl Pass for PythonFunctionPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn transform(&self, module: IRModule, _ctx: &PassContext) -> PassResult {
        let updated = Python::with_gil(|py| {
            let call = || -> PyResult<IRModule> {
                let py_module = new_module(py, module.clone())?;
                let ctx = python_context(py)?;
                let mut updated = module.clone();
                for (name, function) in module.functions() {
                    if !function.is_optimizable() {
                        continue;
                    }
                    let out = self
                        .func
                        .call1(py, (wrap_expr(py, function.expr())?, &py_module, &ctx))?;
                    let new: Function =
                        unwrap_expr(out.bind(py))?.as_function().ok_or_else(|| {
                            PyTypeError::new_err(format!(
                                "function pass {} must return a relay.Function",
                                self.info.name
                            ))
                        })?;
                    updated.add_function(name, new);
                }
                Ok(updated)
            };
            call().map_err(|e| {
                let text = stash_error(py, e);
                PassError::new(
                    &self.info.name,
                    format!("pass {} failed: {text}", self.info.name),
                )
            })
        })?;
        let infer = registry::create_by_name("InferType")
            .map_err(|m| PassError::new(&self.info.name, m))?;
        run_pass(&*infer, updated, &PassContext::current())
    }
}

fn info_of(name: &str, opt_level: u32, required: Option<Vec<String>>) -> PassInfo {
    PassInfo {
        name: name.to_string(),
        opt_level,
        required: required.unwrap_or_default(),
    }
}

/// A module pass from a Python callable `(mod, ctx) -> mod`.
#[pyfunction]
#[pyo3(signature = (func, name, opt_level, required = None))]
pub fn make_module_pass(
    py: Python<'_>,
    func: PyObject,
    name: &str,
    opt_level: u32,
    required: Option<Vec<String>>,
) -> PyResult<PyObject> {
    let pass = PythonModulePass {
        info: info_of(name, opt_level, required),
        func,
    };
    wrap_pass(py, Arc::new(pass), PassKind::Module)
}

/// A function pass from a Python callable `(func, mod, ctx) -> func`.
#[pyfunction]
#[pyo3(signature = (func, name, opt_level, required = None))]
pub fn make_function_pass(
    py: Python<'_>,
    func: PyObject,
    name: &str,
    opt_level: u32,
    required: Option<Vec<String>>,
) -> PyResult<PyObject> {
    let pass = PythonFunctionPass {
        info: info_of(name, opt_level, required),
        func,
    };
    wrap_pass(py, Arc::new(pass), PassKind::Function)
}

/// A Python value as a pass argument of the pipeline language.
fn pipeline_value(value: &Bound<'_, PyAny>) -> PyResult<PipelineValue> {
    if let Ok(b) = value.downcast::<pyo3::types::PyBool>() {
        return Ok(PipelineValue::Bool(b.is_true()));
    }
    if value.is_instance_of::<pyo3::types::PyInt>() {
        return Ok(PipelineValue::Int(value.extract()?));
    }
    if value.is_instance_of::<pyo3::types::PyFloat>() {
        return Ok(PipelineValue::Float(value.extract()?));
    }
    if let Ok(s) = value.extract::<String>() {
        return Ok(PipelineValue::Str(s));
    }
    if let Ok(dict) = value.downcast::<PyDict>() {
        let mut entries = Vec::new();
        for (k, v) in dict.iter() {
            entries.push((k.extract::<String>()?, pipeline_value(&v)?));
        }
        return Ok(PipelineValue::Map(entries));
    }
    if value.is_none() {
        return Ok(PipelineValue::List(Vec::new()));
    }
    if let Ok(items) = value.iter() {
        return Ok(PipelineValue::List(
            items
                .map(|i| pipeline_value(&i?))
                .collect::<PyResult<_>>()?,
        ));
    }
    Err(PyTypeError::new_err(format!(
        "cannot pass a {} to a pass",
        value.get_type().name()?
    )))
}

/// A registered pass by constructor name with keyword arguments
/// (`FuseOps(fuse_opt_level=2)`).
#[pyfunction]
#[pyo3(signature = (name, kwargs = None))]
pub fn create_pass(
    py: Python<'_>,
    name: &str,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyObject> {
    let mut args = Vec::new();
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            args.push((k.extract::<String>()?, pipeline_value(&v)?));
        }
    }
    let kind = registry::lookup(name)
        .map(|s| s.kind)
        .unwrap_or(PassKind::Module);
    let pass = registry::create(name, &args).map_err(|e| PyValueError::new_err(e.message))?;
    wrap_pass(py, pass, kind)
}

fn pipeline_to_py(py: Python<'_>, value: &PipelineValue) -> PyObject {
    match value {
        PipelineValue::Int(i) => i.into_py(py),
        PipelineValue::Float(f) => f.into_py(py),
        PipelineValue::Bool(b) => b.into_py(py),
        PipelineValue::Str(s) => s.into_py(py),
        PipelineValue::List(items) => {
            PyList::new_bound(py, items.iter().map(|i| pipeline_to_py(py, i))).into_py(py)
        }
        PipelineValue::Map(entries) => {
            let dict = PyDict::new_bound(py);
            for (k, v) in entries {
                let _ = dict.set_item(k, pipeline_to_py(py, v));
            }
            dict.into_py(py)
        }
    }
}

/// Every registered pass: `(name, info name, kind, opt_level, required,
/// [(param, type, default, doc)], description)`.
#[pyfunction]
pub fn pass_specs(py: Python<'_>) -> Vec<PyObject> {
    registry::all()
        .into_iter()
        .map(|spec| {
            let params: Vec<PyObject> = spec
                .params
                .iter()
                .map(|p| {
                    (
                        p.name.clone(),
                        p.ty.name(),
                        pipeline_to_py(py, &p.default),
                        p.doc.clone(),
                    )
                        .into_py(py)
                })
                .collect();
            (
                spec.name.clone(),
                spec.info.name.clone(),
                spec.kind.name(),
                spec.info.opt_level,
                spec.info.required.clone(),
                params,
                spec.description.clone(),
            )
                .into_py(py)
        })
        .collect()
}

/// Runs a pipeline written as text (`"InferType, FoldConstant"`).
#[pyfunction]
pub fn pipeline(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    let pass = relay_passes::pass_manager::pipeline_from_text(text)
        .map_err(|e| PyValueError::new_err(e.message))?;
    wrap_pass(py, pass, PassKind::Sequential)
}

/// A diagnostic reported from Python into the running pass's context.
#[pyfunction]
pub fn report_error(message: &str) {
    PassContext::current().report(Diagnostic::error(Code::PassFailed, message));
}
