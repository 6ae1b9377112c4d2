//! `PassContext` and pass instruments from Python. The Python class
//! `relay_tools.transform.PassContext` holds one of these handles: entering
//! it enters the pass manager's context on this thread (instruments'
//! `enter_pass_ctx` run), so passes called inside see its opt_level,
//! required and disabled passes, config, target and instruments.
//!
//! A Python instrument (any object with some of TVM's hooks) becomes a
//! Rust [`PassInstrument`] whose hooks call back into Python; it sees Rust
//! passes as well as Python ones, and its `should_run` can veto either.

use crate::module::new_module;
use crate::passes::{clear_pending_error, pass_error_to_py, stash_error, PyPassInfo};
use crate::TVMError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use relay_passes::ir::IRModule;
use relay_passes::pass_manager::instruments::PassTiming;
use relay_passes::pass_manager::{
    config, ConfigType, ConfigValue, ContextGuard, HookResult, PassContext, PassContextOptions,
    PassInfo, PassInstrument,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A Python object's hooks as a pass instrument. Missing hooks do nothing
/// (`should_run` counts as true).
struct PythonInstrument {
    name: String,
    object: PyObject,
}

impl PythonInstrument {
    fn call(
        &self,
        hook: &str,
        with_module: Option<(&IRModule, &PassInfo)>,
    ) -> HookResult<PyObject> {
        Python::with_gil(|py| {
            let object = self.object.bind(py);
            if !object.hasattr(hook).unwrap_or(false) {
                return Ok(py.None());
            }
            let result = match with_module {
                Some((module, info)) => new_module(py, module.clone()).and_then(|m| {
                    object.call_method1(
                        hook,
                        (
                            m,
                            PyPassInfo {
                                inner: info.clone(),
                            },
                        ),
                    )
                }),
                None => object.call_method0(hook),
            };
            result.map(Bound::unbind).map_err(|e| stash_error(py, e))
        })
    }
}

impl PassInstrument for PythonInstrument {
    fn name(&self) -> &str {
        &self.name
    }

    fn enter_pass_ctx(&self) -> HookResult {
        self.call("enter_pass_ctx", None).map(drop)
    }

    fn exit_pass_ctx(&self) -> HookResult {
        self.call("exit_pass_ctx", None).map(drop)
    }

    fn should_run(&self, module: &IRModule, info: &PassInfo) -> HookResult<bool> {
        let answer = self.call("should_run", Some((module, info)))?;
        Python::with_gil(|py| {
            let answer = answer.bind(py);
            if answer.is_none() {
                return Ok(true);
            }
            answer.is_truthy().map_err(|e| stash_error(py, e))
        })
    }

    fn run_before_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        self.call("run_before_pass", Some((module, info))).map(drop)
    }

    fn run_after_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        self.call("run_after_pass", Some((module, info))).map(drop)
    }
}

/// `PassTimingInstrument`: the pass manager's timing, restarted each time a
/// context with it is left (so `render()` is empty afterwards, as TVM's).
#[pyclass(
    module = "relay_tools._core",
    name = "PassTimingInstrument",
    frozen,
    subclass
)]
pub struct PyPassTiming {
    current: Arc<Mutex<Arc<PassTiming>>>,
}

struct TimingHandle {
    current: Arc<Mutex<Arc<PassTiming>>>,
}

impl TimingHandle {
    fn timing(&self) -> Arc<PassTiming> {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl PassInstrument for TimingHandle {
    fn name(&self) -> &str {
        "PassTimingInstrument"
    }

    fn enter_pass_ctx(&self) -> HookResult {
        self.timing().enter_pass_ctx()
    }

    fn exit_pass_ctx(&self) -> HookResult {
        let result = self.timing().exit_pass_ctx();
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(PassTiming::new());
        result
    }

    fn run_before_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        self.timing().run_before_pass(module, info)
    }

    fn run_after_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        self.timing().run_after_pass(module, info)
    }

    fn pass_skipped(&self, module: &IRModule, info: &PassInfo, reason: &str) {
        self.timing().pass_skipped(module, info, reason)
    }
}

#[pymethods]
impl PyPassTiming {
    #[new]
    fn new() -> PyPassTiming {
        PyPassTiming {
            current: Arc::new(Mutex::new(Arc::new(PassTiming::new()))),
        }
    }

    /// The profile of the passes run so far in the current context.
    fn render(&self) -> String {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .render()
    }
}

/// The pass manager's instrument for each Python instrument object.
fn instruments_from_py(list: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Arc<dyn PassInstrument>>> {
    let Some(list) = list.filter(|l| !l.is_none()) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<Arc<dyn PassInstrument>> = Vec::new();
    for item in list.iter()? {
        let item = item?;
        if let Ok(timing) = item.downcast::<PyPassTiming>() {
            out.push(Arc::new(TimingHandle {
                current: timing.get().current.clone(),
            }));
            continue;
        }
        let name = item.get_type().name()?.to_string();
        out.push(Arc::new(PythonInstrument {
            name,
            object: item.unbind(),
        }));
    }
    Ok(out)
}

/// A config value from Python, checked against the key's declared type.
fn config_value(key: &str, value: &Bound<'_, PyAny>) -> PyResult<ConfigValue> {
    let ty = config::config_type(key).ok_or_else(|| {
        let keys: Vec<&str> = config::list_configs().iter().map(|(k, _)| *k).collect();
        TVMError::new_err(format!(
            "Invalid config option '{key}' candidates are: {}",
            keys.join(", ")
        ))
    })?;
    let wrong = || PyValueError::new_err(format!("config `{key}` takes {ty}"));
    Ok(match ty {
        ConfigType::Bool => ConfigValue::Bool(value.extract().map_err(|_| wrong())?),
        ConfigType::Int => ConfigValue::Int(value.extract().map_err(|_| wrong())?),
        ConfigType::Float => ConfigValue::Float(value.extract().map_err(|_| wrong())?),
        ConfigType::String => ConfigValue::String(value.extract().map_err(|_| wrong())?),
        ConfigType::Map => {
            let dict = value.downcast::<PyDict>().map_err(|_| wrong())?;
            let mut map = BTreeMap::new();
            for (k, v) in dict.iter() {
                let v = if let Ok(b) = v.extract::<bool>() {
                    ConfigValue::Bool(b)
                } else if let Ok(i) = v.extract::<i64>() {
                    ConfigValue::Int(i)
                } else if let Ok(f) = v.extract::<f64>() {
                    ConfigValue::Float(f)
                } else {
                    ConfigValue::String(v.str()?.to_string())
                };
                map.insert(k.extract::<String>()?, v);
            }
            ConfigValue::Map(map)
        }
    })
}

/// The Rust side of a Python `PassContext`.
#[pyclass(module = "relay_tools._core", name = "PassContextHandle", unsendable)]
pub struct PyPassContext {
    context: Arc<PassContext>,
    guards: Vec<ContextGuard>,
}

#[pymethods]
impl PyPassContext {
    #[new]
    #[pyo3(signature = (opt_level = 2, required_pass = None, disabled_pass = None, instruments = None, config = None, target = None))]
    fn new(
        opt_level: u32,
        required_pass: Option<Vec<String>>,
        disabled_pass: Option<Vec<String>>,
        instruments: Option<&Bound<'_, PyAny>>,
        config: Option<&Bound<'_, PyDict>>,
        target: Option<String>,
    ) -> PyResult<PyPassContext> {
        let mut values = BTreeMap::new();
        if let Some(config) = config {
            for (k, v) in config.iter() {
                let key: String = k.extract()?;
                values.insert(key.clone(), config_value(&key, &v)?);
            }
        }
        let options = PassContextOptions {
            opt_level,
            required_pass: required_pass.unwrap_or_default(),
            disabled_pass: disabled_pass.unwrap_or_default(),
            config: values,
            instruments: instruments_from_py(instruments)?,
            target,
            ..PassContextOptions::default()
        };
        let context = PassContext::new(options).map_err(TVMError::new_err)?;
        Ok(PyPassContext {
            context,
            guards: Vec::new(),
        })
    }

    /// The context in force when none is entered (opt_level 2).
    #[staticmethod]
    fn default_context() -> PyPassContext {
        PyPassContext {
            context: PassContext::current(),
            guards: Vec::new(),
        }
    }

    fn enter(&mut self, py: Python<'_>) -> PyResult<()> {
        clear_pending_error();
        let guard = self
            .context
            .enter()
            .map_err(|e| pass_error_to_py(py, &e, None))?;
        self.guards.push(guard);
        Ok(())
    }

    fn exit(&mut self, py: Python<'_>) -> PyResult<()> {
        clear_pending_error();
        match self.guards.pop() {
            Some(guard) => guard.exit().map_err(|e| pass_error_to_py(py, &e, None)),
            None => Err(TVMError::new_err("the pass context was not entered")),
        }
    }

    /// Exits the current instruments and enters `instruments` instead.
    #[pyo3(signature = (instruments = None))]
    fn override_instruments(
        &self,
        py: Python<'_>,
        instruments: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        clear_pending_error();
        let new = instruments_from_py(instruments)?;
        self.context
            .override_instruments(new)
            .map_err(|e| pass_error_to_py(py, &e, None))
    }

    /// How many instruments the pass manager holds (TVM clears them after a
    /// failing hook).
    fn instrument_count(&self) -> usize {
        self.context.instruments().len()
    }

    #[getter]
    fn opt_level(&self) -> u32 {
        self.context.opt_level
    }

    #[getter]
    fn target(&self) -> Option<String> {
        self.context.target.clone()
    }
}

impl PyPassContext {
    pub fn context(&self) -> Arc<PassContext> {
        self.context.clone()
    }
}

/// The context to run a pass under: the current one, with the target of
/// an enclosing `with tvm.target.Target(…)` block if the context has none.
pub fn run_context(py: Python<'_>) -> PyResult<Arc<PassContext>> {
    let ctx = PassContext::current();
    let target: Option<String> = py
        .import_bound("relay_tools.target")?
        .getattr("_current_target_name")?
        .call0()?
        .extract()?;
    match target {
        Some(target) if ctx.target.as_deref() != Some(target.as_str()) => {
            let options = PassContextOptions {
                opt_level: ctx.opt_level,
                required_pass: ctx.required_pass.clone(),
                disabled_pass: ctx.disabled_pass.clone(),
                config: ctx.config.clone(),
                instruments: ctx.instruments(),
                target: Some(target),
                tvm_exact: ctx.tvm_exact,
                log: None,
                reproducer_dir: ctx.reproducer_dir.clone(),
            };
            PassContext::new(options).map_err(TVMError::new_err)
        }
        _ => Ok(ctx),
    }
}

/// The registered config keys with their types (`PassContext.list_configs`).
#[pyfunction]
pub fn config_keys() -> Vec<(String, String)> {
    config::list_configs()
        .into_iter()
        .map(|(key, ty)| (key.to_string(), ty.to_string()))
        .collect()
}
