//! `tvm.IRModule`: global functions by name, mutable from Python
//! (`mod["main"] = f`, `update`), as TVM's. The Rust module inside is
//! shared node for node with the IR it was made from.

use crate::analysis::as_function;
use crate::diagnostics::format_diagnostics;
use crate::expr::{unwrap_expr, wrap_expr, PyExpr};
use crate::ty::{wrap_type, PyType};
use crate::{DiagnosticError, TVMError};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use relay_passes::ir::{Expr, ExprKind, Function, IRModule, TypeKind};
use relay_passes::printer::{print_module, PrintOptions};

#[pyclass(module = "relay_tools._core", name = "IRModule", subclass)]
pub struct PyIRModule {
    pub inner: IRModule,
}

/// The global name a key stands for: a string or a `GlobalVar`.
fn global_name(key: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(name) = key.extract::<String>() {
        return Ok(name);
    }
    if let Ok(e) = key.downcast::<PyExpr>() {
        if let ExprKind::GlobalVar(g) = e.get().inner.kind() {
            return Ok(g.name().to_string());
        }
    }
    Err(PyTypeError::new_err(
        "expected a global name (str or GlobalVar)",
    ))
}

fn function_of(value: &Bound<'_, PyAny>) -> PyResult<Function> {
    unwrap_expr(value)?
        .as_function()
        .ok_or_else(|| PyTypeError::new_err("a module holds relay.Function values"))
}

/// The module's text as TVM's `astext()`.
pub fn module_text(m: &IRModule, show_meta_data: bool) -> String {
    let options = PrintOptions {
        show_meta_data,
        reparseable: false,
        ..PrintOptions::default()
    };
    print_module(m, &options)
}

pub fn new_module(py: Python<'_>, m: IRModule) -> PyResult<Py<PyIRModule>> {
    Py::new(py, PyIRModule { inner: m })
}

#[pymethods]
impl PyIRModule {
    #[new]
    #[pyo3(signature = (functions = None, type_definitions = None))]
    fn new(
        functions: Option<&Bound<'_, PyDict>>,
        type_definitions: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyIRModule> {
        let _ = type_definitions;
        let mut m = IRModule::new();
        if let Some(functions) = functions {
            for (key, value) in functions.iter() {
                m.add_function(&global_name(&key)?, function_of(&value)?);
            }
        }
        Ok(PyIRModule { inner: m })
    }

    /// A module whose `main` is `expr` (a function, or a function of the
    /// expression's free variables).
    #[staticmethod]
    #[pyo3(signature = (expr, functions = None, type_defs = None))]
    fn from_expr(
        expr: &Bound<'_, PyAny>,
        functions: Option<&Bound<'_, PyDict>>,
        type_defs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyIRModule> {
        let mut m = PyIRModule::new(functions, type_defs)?;
        m.inner
            .add_function("main", as_function(&unwrap_expr(expr)?));
        Ok(m)
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        if let Ok(t) = key.downcast::<PyType>() {
            if let TypeKind::GlobalVar(g) = t.get().inner.kind() {
                return match self.inner.type_definition(g.name()) {
                    Some(data) => Ok(PyTypeData {
                        inner: data.clone(),
                    }
                    .into_py(py)),
                    None => Err(PyKeyError::new_err(g.name().to_string())),
                };
            }
        }
        let name = global_name(key)?;
        match self.inner.function(&name) {
            Some(f) => wrap_expr(py, f.expr()),
            None => Err(PyKeyError::new_err(format!(
                "Cannot find global var \"{name}\" in the Module"
            ))),
        }
    }

    fn __setitem__(&mut self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let name = global_name(key)?;
        self.inner.add_function(&name, function_of(value)?);
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.function(&global_name(key)?).is_some())
    }

    fn __len__(&self) -> usize {
        self.inner.function_count()
    }

    /// Adds every function and type definition of `other`, replacing those
    /// with the same names.
    fn update(&mut self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(m) = other.downcast::<PyIRModule>() {
            let other = m.borrow().inner.clone();
            for (name, f) in other.functions() {
                self.inner.add_function(name, f.clone());
            }
            for (_, data) in other.type_definitions() {
                self.inner.add_type_definition(data.clone());
            }
            return Ok(());
        }
        let dict = other.downcast::<PyDict>()?;
        for (key, value) in dict.iter() {
            self.inner
                .add_function(&global_name(&key)?, function_of(&value)?);
        }
        Ok(())
    }

    fn update_func(&mut self, var: &Bound<'_, PyAny>, func: &Bound<'_, PyAny>) -> PyResult<()> {
        self.__setitem__(var, func)
    }

    fn remove(&mut self, var: &Bound<'_, PyAny>) -> PyResult<()> {
        let name = global_name(var)?;
        self.inner
            .remove_function(&name)
            .map(|_| ())
            .ok_or_else(|| PyKeyError::new_err(name))
    }

    /// `{GlobalVar: Function}`.
    #[getter]
    fn functions(&self, py: Python<'_>) -> PyResult<PyObject> {
        let dict = PyDict::new_bound(py);
        for (name, f) in self.inner.functions() {
            dict.set_item(
                wrap_expr(py, &Expr::global(name, None))?,
                wrap_expr(py, f.expr())?,
            )?;
        }
        Ok(dict.into_py(py))
    }

    /// `{GlobalTypeVar: TypeData}`.
    #[getter]
    fn type_definitions(&self, py: Python<'_>) -> PyResult<PyObject> {
        let dict = PyDict::new_bound(py);
        for (_, data) in self.inner.type_definitions() {
            let header = relay_passes::ir::Type::new(TypeKind::GlobalVar(data.header.clone()));
            dict.set_item(
                wrap_type(py, &header)?,
                PyTypeData {
                    inner: data.clone(),
                }
                .into_py(py),
            )?;
        }
        Ok(dict.into_py(py))
    }

    fn get_global_var(&self, py: Python<'_>, name: &str) -> PyResult<PyObject> {
        if self.inner.function(name).is_none() {
            return Err(TVMError::new_err(format!(
                "Cannot find global var \"{name}\" in the Module"
            )));
        }
        wrap_expr(py, &Expr::global(name, None))
    }

    fn get_global_vars(&self, py: Python<'_>) -> PyResult<Vec<PyObject>> {
        self.inner
            .functions()
            .map(|(name, _)| wrap_expr(py, &Expr::global(name, None)))
            .collect()
    }

    fn get_global_type_var(&self, py: Python<'_>, name: &str) -> PyResult<PyObject> {
        match self.inner.global_type_var(name) {
            Some(g) => wrap_type(
                py,
                &relay_passes::ir::Type::new(TypeKind::GlobalVar(g.clone())),
            ),
            None => Err(TVMError::new_err(format!(
                "Cannot find global type var \"{name}\" in the Module"
            ))),
        }
    }

    fn get_global_type_vars(&self, py: Python<'_>) -> PyResult<Vec<PyObject>> {
        self.inner
            .type_definitions()
            .map(|(_, d)| {
                wrap_type(
                    py,
                    &relay_passes::ir::Type::new(TypeKind::GlobalVar(d.header.clone())),
                )
            })
            .collect()
    }

    /// The constructor called `name` of any type definition.
    fn get_constructor(&self, py: Python<'_>, name: &str) -> PyResult<PyObject> {
        match self.inner.constructor(name) {
            Some(c) => wrap_expr(py, &Expr::new(ExprKind::Constructor(c.clone()), None)),
            None => Err(TVMError::new_err(format!("Cannot find constructor {name}"))),
        }
    }

    #[pyo3(signature = (show_meta_data = true))]
    fn astext(&self, show_meta_data: bool) -> String {
        module_text(&self.inner, show_meta_data)
    }

    fn __str__(&self) -> String {
        module_text(&self.inner, false)
    }

    /// The text that reads back (a `let`-bound `match` parenthesised), for
    /// handing the module to another program (the relay.toml host).
    fn _reparseable_text(&self) -> String {
        print_module(&self.inner, &PrintOptions::default())
    }

    fn __repr__(&self) -> String {
        module_text(&self.inner, false)
    }

    /// The same module: the same functions (node for node) and types, as a
    /// pass that returns its input gives.
    fn same_as(&self, other: &Bound<'_, PyAny>) -> bool {
        let Ok(other) = other.downcast::<PyIRModule>() else {
            return false;
        };
        let other = &other.borrow().inner;
        self.inner.function_count() == other.function_count()
            && self
                .inner
                .functions()
                .zip(other.functions())
                .all(|((na, fa), (nb, fb))| na == nb && fa.expr().ptr_eq(fb.expr()))
            && self
                .inner
                .type_definitions()
                .map(|(n, _)| n)
                .eq(other.type_definitions().map(|(n, _)| n))
    }

    fn copy(&self) -> PyIRModule {
        PyIRModule {
            inner: self.inner.clone(),
        }
    }
}

/// An ADT definition (`TypeData`): header, type variables, constructors.
#[pyclass(module = "relay_tools._core", name = "TypeData", frozen)]
pub struct PyTypeData {
    pub inner: relay_passes::ir::TypeData,
}

#[pymethods]
impl PyTypeData {
    #[getter]
    fn header(&self, py: Python<'_>) -> PyResult<PyObject> {
        wrap_type(
            py,
            &relay_passes::ir::Type::new(TypeKind::GlobalVar(self.inner.header.clone())),
        )
    }

    #[getter]
    fn type_vars(&self, py: Python<'_>) -> PyResult<Vec<PyObject>> {
        self.inner
            .type_vars
            .iter()
            .map(|v| wrap_type(py, &relay_passes::ir::Type::var(v.clone())))
            .collect()
    }

    #[getter]
    fn constructors(&self, py: Python<'_>) -> PyResult<Vec<PyObject>> {
        self.inner
            .constructors
            .iter()
            .map(|c| wrap_expr(py, &Expr::new(ExprKind::Constructor(c.clone()), None)))
            .collect()
    }
}

/// `tvm.parser.parse(text, source_name)`: the module, or a
/// `DiagnosticError` listing every syntax and name error with its place.
#[pyfunction]
#[pyo3(signature = (source, source_name = "from_string", init_module = None))]
pub fn parse(
    py: Python<'_>,
    source: &str,
    source_name: &str,
    init_module: Option<&Bound<'_, PyIRModule>>,
) -> PyResult<Py<PyIRModule>> {
    let init = init_module
        .map(|m| m.borrow().inner.clone())
        .unwrap_or_default();
    let (m, diagnostics) = relay_passes::lower::parse_and_lower_into(init, source_name, source);
    if diagnostics.has_errors() {
        let list: Vec<_> = diagnostics.iter().cloned().collect();
        return Err(DiagnosticError::new_err(format_diagnostics(
            &list, &m.sources,
        )));
    }
    new_module(py, m)
}

/// `relay.parse_expr(text)`: one expression.
#[pyfunction]
pub fn parse_expr(py: Python<'_>, source: &str) -> PyResult<PyObject> {
    let (e, diagnostics) = relay_passes::lower::parse_and_lower_expr("from_string", source);
    if diagnostics.has_errors() {
        let mut sources = relay_passes::source::SourceMap::new();
        sources.add("from_string", source.to_string());
        let list: Vec<_> = diagnostics.iter().cloned().collect();
        return Err(DiagnosticError::new_err(format_diagnostics(
            &list, &sources,
        )));
    }
    wrap_expr(py, &e)
}
