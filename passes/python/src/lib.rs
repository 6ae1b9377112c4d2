//! `relay_tools._core`: the Rust half of the Python package `relay_tools`
//! (TVM's `tvm.relay` / `tvm.transform` / `tvm.instrument` shapes on our
//! library). It wraps the façade `relay-passes`: IR nodes and types as
//! Python classes (`expr`, `ty`, `attrs`), modules, parsing and printing
//! (`module`), the operator table (`ops`), the pass registry, passes and
//! Python passes run by the pass manager (`passes`), pass contexts and
//! instruments (`context`), analyses and structural comparison
//! (`analysis`), and the reference interpreter (`executor`). The Python
//! layer under `python/relay_tools/` arranges these
//! into TVM's module layout.

// PyO3 0.22's macros expand to unsafe calls without `unsafe` blocks, test
// a `gil-refs` cfg newer compilers do not know and convert results into
// themselves (`useless_conversion`); all three come from the
// generated code, not ours.
#![allow(unsafe_op_in_unsafe_fn, unexpected_cfgs, clippy::useless_conversion)]

mod analysis;
mod attrs;
mod context;
mod diagnostics;
mod executor;
mod expr;
mod functions;
mod gradient;
mod module;
mod ops;
mod passes;
mod targets;
mod ty;

use pyo3::prelude::*;

pyo3::create_exception!(
    _core,
    TVMError,
    pyo3::exceptions::PyRuntimeError,
    "An error of the pass infrastructure (TVM's `tvm.error.TVMError`)."
);
pyo3::create_exception!(
    _core,
    DiagnosticError,
    TVMError,
    "Syntax, name or type errors, with their places in the text."
);

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    relay_passes::register_builtin_passes();
    let py = m.py();
    m.add("TVMError", py.get_type_bound::<TVMError>())?;
    m.add("DiagnosticError", py.get_type_bound::<DiagnosticError>())?;

    m.add_class::<expr::PyExpr>()?;
    m.add_class::<expr::PyVar>()?;
    m.add_class::<expr::PyGlobalVar>()?;
    m.add_class::<expr::PyConstant>()?;
    m.add_class::<expr::PyTuple_>()?;
    m.add_class::<expr::PyTupleGetItem>()?;
    m.add_class::<expr::PyCall>()?;
    m.add_class::<expr::PyLet>()?;
    m.add_class::<expr::PyIf>()?;
    m.add_class::<expr::PyFunction>()?;
    m.add_class::<expr::PyMatch>()?;
    m.add_class::<expr::PyClause>()?;
    m.add_class::<expr::PyPattern>()?;
    m.add_class::<expr::PyRefCreate>()?;
    m.add_class::<expr::PyRefRead>()?;
    m.add_class::<expr::PyRefWrite>()?;
    m.add_class::<expr::PyConstructor>()?;
    m.add_class::<expr::PyOp>()?;
    m.add_function(wrap_pyfunction!(expr::op_get, m)?)?;

    m.add_class::<ty::PyType>()?;
    m.add_class::<ty::PyTensorType>()?;
    m.add_class::<ty::PyTupleType>()?;
    m.add_class::<ty::PyFuncType>()?;
    m.add_class::<ty::PyTypeVar>()?;
    m.add_class::<ty::PyGlobalTypeVar>()?;
    m.add_class::<ty::PyTypeCall>()?;
    m.add_class::<ty::PyRefType>()?;
    m.add_class::<ty::PyIncompleteType>()?;

    m.add_class::<attrs::PyAttrs>()?;
    m.add_class::<attrs::PyDictAttrs>()?;

    m.add_class::<module::PyIRModule>()?;
    m.add_class::<module::PyTypeData>()?;
    m.add_function(wrap_pyfunction!(module::parse, m)?)?;
    m.add_function(wrap_pyfunction!(module::parse_expr, m)?)?;

    m.add_function(wrap_pyfunction!(ops::make_call, m)?)?;
    m.add_function(wrap_pyfunction!(ops::op_table, m)?)?;
    m.add_function(wrap_pyfunction!(targets::register_op_target, m)?)?;

    m.add_class::<passes::PyPassInfo>()?;
    m.add_class::<passes::PyPass>()?;
    m.add_class::<passes::PyModulePassClass>()?;
    m.add_class::<passes::PyFunctionPassClass>()?;
    m.add_class::<passes::PySequentialClass>()?;
    m.add_function(wrap_pyfunction!(passes::make_module_pass, m)?)?;
    m.add_function(wrap_pyfunction!(passes::make_function_pass, m)?)?;
    m.add_function(wrap_pyfunction!(passes::create_pass, m)?)?;
    m.add_function(wrap_pyfunction!(passes::pass_specs, m)?)?;
    m.add_function(wrap_pyfunction!(passes::pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(functions::defunctionalization, m)?)?;
    m.add_function(wrap_pyfunction!(passes::report_error, m)?)?;
    m.add_function(wrap_pyfunction!(gradient::gradient, m)?)?;

    m.add_class::<context::PyPassContext>()?;
    m.add_class::<context::PyPassTiming>()?;
    m.add_function(wrap_pyfunction!(context::config_keys, m)?)?;

    m.add_function(wrap_pyfunction!(analysis::free_vars, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::bound_vars, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::all_vars, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::post_order_visit, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::well_formed, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::structural_equal, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::assert_structural_equal, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::structural_hash, m)?)?;

    m.add_class::<executor::PyRuntimeValue>()?;
    m.add_function(wrap_pyfunction!(executor::interpret, m)?)?;
    Ok(())
}
