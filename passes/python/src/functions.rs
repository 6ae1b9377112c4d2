//! TVM's `relay.transform` functions that transform one function of a
//! module rather than being passes: `Defunctionalization(func, mod)`.

use crate::diagnostics::format_diagnostics;
use crate::expr::{unwrap_expr, wrap_expr};
use crate::module::PyIRModule;
use crate::TVMError;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use relay_passes::transforms::defunctionalization::defunctionalize;

/// `relay.transform.Defunctionalization(func, mod)`: the first-order
/// version of `func`; the specialised globals, `@apply` functions and ADTs
/// it needs are added to `mod`, as TVM's function adds them.
#[pyfunction]
pub fn defunctionalization(
    py: Python<'_>,
    func: &Bound<'_, PyAny>,
    module: &Bound<'_, PyIRModule>,
) -> PyResult<PyObject> {
    let function = unwrap_expr(func)?
        .as_function()
        .ok_or_else(|| PyTypeError::new_err("Defunctionalization expects a relay.Function"))?;
    let mut module = module.borrow_mut();
    match defunctionalize(&function, &mut module.inner) {
        Ok(result) => wrap_expr(py, result.expr()),
        Err(diagnostic) => Err(TVMError::new_err(format_diagnostics(
            &[diagnostic],
            &module.inner.sources,
        ))),
    }
}
