//! `relay.analysis` and `tvm.ir` structural comparison: free, bound and all
//! variables, `post_order_visit`, `well_formed`, `structural_equal`,
//! `structural_hash` and `assert_structural_equal` (whose message names
//! the first difference, as TVM's mismatch path does).

use crate::expr::{unwrap_expr, wrap_expr, PyExpr};
use crate::module::PyIRModule;
use crate::ty::PyType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use relay_passes::ir::equal::{
    first_difference, module_first_difference, structural_hash as expr_hash, types_equal,
};
use relay_passes::ir::rewrite::post_order_each;
use relay_passes::ir::{Expr, ExprKind, Function, FunctionData, Pattern, Var, VarId};
use std::collections::HashSet;

fn pattern_vars(pattern: &Pattern, out: &mut Vec<Var>) {
    match pattern {
        Pattern::Wildcard => {}
        Pattern::Var(v) => out.push(v.clone()),
        Pattern::Constructor(_, ps) | Pattern::Tuple(ps) => {
            ps.iter().for_each(|p| pattern_vars(p, out))
        }
    }
}

/// The variables bound in `expr` (parameters, let variables, pattern
/// variables), in visiting order, each once.
pub fn bound_vars_of(expr: &Expr) -> Vec<Var> {
    let mut out = Vec::new();
    post_order_each(expr, |e| match e.kind() {
        ExprKind::Function(f) => out.extend(f.params.iter().cloned()),
        ExprKind::Let { var, .. } => out.push(var.clone()),
        ExprKind::Match { clauses, .. } => clauses
            .iter()
            .for_each(|c| pattern_vars(&c.pattern, &mut out)),
        _ => {}
    });
    let mut seen = HashSet::new();
    out.retain(|v| seen.insert(v.id()));
    out
}

/// Every variable of `expr` in visiting order.
pub fn all_vars_of(expr: &Expr) -> Vec<Var> {
    let mut out = Vec::new();
    post_order_each(expr, |e| {
        if let Some(v) = e.as_var() {
            out.push(v);
        }
    });
    out
}

/// The variables used but not bound in `expr`, in visiting order.
pub fn free_vars_of(expr: &Expr) -> Vec<Var> {
    let bound: HashSet<VarId> = bound_vars_of(expr).iter().map(Var::id).collect();
    all_vars_of(expr)
        .into_iter()
        .filter(|v| !bound.contains(&v.id()))
        .collect()
}

/// `expr` as a function: itself if it is one, else a function of its free
/// variables (what `IRModule.from_expr` does).
pub fn as_function(expr: &Expr) -> Function {
    if let Some(f) = expr.as_function() {
        return f;
    }
    Function::new(
        FunctionData {
            params: free_vars_of(expr),
            body: expr.clone(),
            ret_type: None,
            type_params: Vec::new(),
            attrs: Default::default(),
            virtual_device: None,
        },
        None,
    )
}

fn wrap_vars(py: Python<'_>, vars: Vec<Var>) -> PyResult<Vec<PyObject>> {
    vars.iter().map(|v| wrap_expr(py, v.expr())).collect()
}

#[pyfunction]
pub fn free_vars(py: Python<'_>, expr: &Bound<'_, PyAny>) -> PyResult<Vec<PyObject>> {
    wrap_vars(py, free_vars_of(&unwrap_expr(expr)?))
}

#[pyfunction]
pub fn bound_vars(py: Python<'_>, expr: &Bound<'_, PyAny>) -> PyResult<Vec<PyObject>> {
    wrap_vars(py, bound_vars_of(&unwrap_expr(expr)?))
}

#[pyfunction]
pub fn all_vars(py: Python<'_>, expr: &Bound<'_, PyAny>) -> PyResult<Vec<PyObject>> {
    wrap_vars(py, all_vars_of(&unwrap_expr(expr)?))
}

/// Calls `fvisit` on every node of `expr`, children before parents, each
/// node once (TVM's `post_order_visit`).
#[pyfunction]
pub fn post_order_visit(
    py: Python<'_>,
    expr: &Bound<'_, PyAny>,
    fvisit: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let root = unwrap_expr(expr)?;
    let mut nodes = Vec::new();
    post_order_each(&root, |e| nodes.push(e.clone()));
    for node in &nodes {
        fvisit.call1((wrap_expr(py, node)?,))?;
    }
    Ok(())
}

/// Whether every variable is bound at most once (TVM's `well_formed`).
#[pyfunction]
pub fn well_formed(expr: &Bound<'_, PyAny>) -> PyResult<bool> {
    let root = unwrap_expr(expr)?;
    let mut sites = Vec::new();
    post_order_each(&root, |e| match e.kind() {
        ExprKind::Function(f) => sites.extend(f.params.iter().map(Var::id)),
        ExprKind::Let { var, .. } => sites.push(var.id()),
        ExprKind::Match { clauses, .. } => {
            let mut vars = Vec::new();
            clauses
                .iter()
                .for_each(|c| pattern_vars(&c.pattern, &mut vars));
            sites.extend(vars.iter().map(Var::id));
        }
        _ => {}
    });
    let mut seen = HashSet::new();
    Ok(sites.into_iter().all(|id| seen.insert(id)))
}

/// The first difference between two IR values, or `None` when equal.
fn difference(
    lhs: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
    map_free_vars: bool,
) -> PyResult<Option<String>> {
    if let (Ok(a), Ok(b)) = (lhs.downcast::<PyIRModule>(), rhs.downcast::<PyIRModule>()) {
        let (a, b) = (a.borrow(), b.borrow());
        return Ok(
            module_first_difference(&a.inner, &b.inner, map_free_vars).map(|d| match d.global {
                Some(g) => format!("in @{g}: {}", d.reason),
                None => d.reason,
            }),
        );
    }
    if let (Ok(a), Ok(b)) = (lhs.downcast::<PyExpr>(), rhs.downcast::<PyExpr>()) {
        return Ok(
            first_difference(&a.get().inner, &b.get().inner, map_free_vars).map(|d| d.reason),
        );
    }
    if let (Ok(a), Ok(b)) = (lhs.downcast::<PyType>(), rhs.downcast::<PyType>()) {
        let (a, b) = (&a.get().inner, &b.get().inner);
        return Ok((!types_equal(a, b)).then(|| {
            format!(
                "type {} vs {}",
                relay_passes::printer::print_type(a),
                relay_passes::printer::print_type(b)
            )
        }));
    }
    if lhs.is_none() && rhs.is_none() {
        return Ok(None);
    }
    if lhs.is_none() || rhs.is_none() {
        return Ok(Some("None vs a value".into()));
    }
    Err(PyTypeError::new_err(
        "structural_equal compares IRModules, expressions or types",
    ))
}

#[pyfunction]
#[pyo3(signature = (lhs, rhs, map_free_vars = false))]
pub fn structural_equal(
    lhs: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
    map_free_vars: bool,
) -> PyResult<bool> {
    Ok(difference(lhs, rhs, map_free_vars)?.is_none())
}

#[pyfunction]
#[pyo3(signature = (lhs, rhs, map_free_vars = false))]
pub fn assert_structural_equal(
    lhs: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
    map_free_vars: bool,
) -> PyResult<()> {
    match difference(lhs, rhs, map_free_vars)? {
        None => Ok(()),
        Some(reason) => Err(PyValueError::new_err(format!(
            "StructuralEqual check failed, caused by: {reason}\nlhs:\n{}\nrhs:\n{}",
            lhs.str()?,
            rhs.str()?
        ))),
    }
}

#[pyfunction]
#[pyo3(signature = (node, map_free_vars = false))]
pub fn structural_hash(node: &Bound<'_, PyAny>, map_free_vars: bool) -> PyResult<u64> {
    if let Ok(m) = node.downcast::<PyIRModule>() {
        return Ok(m.borrow().inner.structural_hash());
    }
    if let Ok(t) = node.downcast::<PyType>() {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        t.get().inner.hash(&mut h);
        return Ok(h.finish());
    }
    Ok(expr_hash(&unwrap_expr(node)?, map_free_vars))
}
