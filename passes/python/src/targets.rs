//! `tvm.ir.register_op_attr(op, "target.<compiler>", f)`: declares which
//! calls of an operator a BYOC target supports, in the library's registry
//! (`relay_patterns::targets`) that AnnotateTarget consults. `f` is a Python
//! predicate of the call (called back with the typed call), or a constant.

use crate::expr::wrap_expr;
use crate::TVMError;
use pyo3::prelude::*;
use relay_passes::ir::Expr;
use relay_passes::patterns::targets::{register_op_support, OpPredicate, OpSupport};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The level each (operator, target) was registered at: TVM refuses a
/// second registration unless its level is higher.
fn levels() -> &'static Mutex<HashMap<(String, String), i64>> {
    static LEVELS: OnceLock<Mutex<HashMap<(String, String), i64>>> = OnceLock::new();
    LEVELS.get_or_init(Default::default)
}

/// Registers `support` (a callable or a bool) as `target`'s support of `op`.
#[pyfunction]
pub fn register_op_target(
    op: &str,
    target: &str,
    support: &Bound<'_, PyAny>,
    level: i64,
) -> PyResult<()> {
    if relay_passes::op::lookup(op).is_none() {
        return Err(TVMError::new_err(format!(
            "Operator {op} is not registered"
        )));
    }
    {
        let mut levels = levels().lock().unwrap_or_else(|e| e.into_inner());
        let key = (op.to_string(), target.to_string());
        if let Some(existing) = levels.get(&key) {
            if *existing >= level {
                return Err(TVMError::new_err(format!(
                    "Attribute target.{target} of {op} is already registered with same \
                     plevel={existing}"
                )));
            }
        }
        levels.insert(key, level);
    }
    let support = if support.is_callable() {
        let function: Py<PyAny> = support.clone().unbind();
        let predicate: OpPredicate = Arc::new(move |call: &Expr| {
            Python::with_gil(|py| {
                let answer = wrap_expr(py, call)
                    .and_then(|arg| function.call1(py, (arg,)))
                    .and_then(|value| value.bind(py).is_truthy());
                answer.map_err(|e| e.to_string())
            })
        });
        OpSupport::Predicate(predicate)
    } else {
        OpSupport::Constant(support.is_truthy()?)
    };
    register_op_support(target, op, support);
    Ok(())
}
