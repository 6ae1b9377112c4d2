//! `relay.transform.gradient(expr, mod, mode)`: the library's
//! `relay_transforms::gradient::gradient` on a Python expression. In the
//! higher-order mode the module, when given, receives the `@<name>_grad`
//! functions of the globals the program calls, as TVM's does.

use crate::expr::{unwrap_expr, wrap_expr};
use crate::module::PyIRModule;
use crate::TVMError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use relay_passes::transforms::gradient::{gradient as differentiate, GradientMode};

#[pyfunction]
#[pyo3(signature = (expr, module=None, mode="higher_order"))]
pub fn gradient(
    py: Python<'_>,
    expr: &Bound<'_, PyAny>,
    module: Option<&Bound<'_, PyIRModule>>,
    mode: &str,
) -> PyResult<PyObject> {
    let mode: GradientMode = mode.parse().map_err(PyValueError::new_err)?;
    let expr = unwrap_expr(expr)?;
    let result = match module {
        Some(module) => {
            let mut module = module.borrow_mut();
            differentiate(&expr, Some(&mut module.inner), mode)
        }
        None => differentiate(&expr, None, mode),
    };
    match result {
        Ok(result) => wrap_expr(py, &result),
        Err(diagnostic) => Err(TVMError::new_err(diagnostic.message)),
    }
}
