//! `ToGraphNormalForm`: removes `let` bindings, replacing each use of a
//! let-bound variable by the bound value, so shared values become shared
//! graph nodes (`%0 = …;` in the text), as TVM v0.13's
//! `to_graph_normal_form.cc` does.
//!
//! A use of a let-bound variable becomes the rewritten value. A recursive
//! binding (the value mentions its own variable, e.g. a recursive local
//! function) is kept as `let %f = value; %f` at its uses outside the value,
//! while uses inside the value stay `%f`. Here we deliberately differ from
//! TVM v0.13: its mutator memoises the variable node at the first use met,
//! which for a recursive function is the use inside its own body, so every
//! later use stays `%f` and the binding is dropped, leaving `%f` free and
//! losing the function. Function parameters and match variables are
//! untouched.
//!
//! The walk is iterative (models are let chains thousands deep).

use crate::diagnostic::Diagnostic;
use crate::ir::rewrite::{children, post_order, with_children};
use crate::ir::{Expr, ExprKind, Function, VarId};
use crate::transform::registry::PassSpec;
use crate::transform::PassInfo;
use std::collections::{HashMap, HashSet};

pub(crate) fn spec() -> PassSpec {
    super::function_pass_spec(
        PassInfo::new("ToGraphNormalForm", 1, &[]),
        "Replace let bindings by sharing (graph normal form)",
        |f, _m, _ctx| -> Result<Function, Diagnostic> { Ok(to_graph_normal_form(&f)) },
    )
}

/// Rewrites `function` into graph normal form.
pub fn to_graph_normal_form(function: &Function) -> Function {
    let root = function.expr();
    let nodes = post_order(root);
    // Which value each let binds, by variable.
    let mut bound_values: HashMap<VarId, Expr> = HashMap::new();
    for node in &nodes {
        if let ExprKind::Let { var, value, .. } = node.kind() {
            bound_values.insert(var.id(), value.clone());
        }
    }
    let mut rewritten: HashMap<usize, Expr> = HashMap::new();
    // What each let-bound variable became the first time it was met.
    let mut variables: HashMap<VarId, Expr> = HashMap::new();
    for node in &nodes {
        let mut rewrite_child = |child: &Expr| match child.as_var() {
            Some(var) if bound_values.contains_key(&var.id()) => {
                variable_use(var.id(), child, &bound_values, &rewritten, &mut variables)
            }
            _ => lookup(&rewritten, child),
        };
        let replacement = match node.kind() {
            // A let disappears into its (rewritten) body.
            ExprKind::Let { body, .. } => rewrite_child(body),
            _ => {
                let new_children: Vec<Expr> =
                    children(node).into_iter().map(&mut rewrite_child).collect();
                with_children(node, &new_children)
            }
        };
        rewritten.insert(node.addr(), replacement);
    }
    lookup(&rewritten, root)
        .as_function()
        .expect("a function is rewritten to a function")
}

fn lookup(rewritten: &HashMap<usize, Expr>, node: &Expr) -> Expr {
    rewritten
        .get(&node.addr())
        .cloned()
        .unwrap_or_else(|| node.clone())
}

/// What a use of the let-bound variable `id` becomes (see the module doc).
fn variable_use(
    id: VarId,
    use_site: &Expr,
    bound_values: &HashMap<VarId, Expr>,
    rewritten: &HashMap<usize, Expr>,
    variables: &mut HashMap<VarId, Expr>,
) -> Expr {
    if let Some(done) = variables.get(&id) {
        return done.clone();
    }
    let result = match bound_values
        .get(&id)
        .and_then(|value| rewritten.get(&value.addr()))
    {
        Some(value) if mentions_variable(value, id) => {
            let var = use_site.as_var().expect("the use site is a variable");
            Expr::let_(var.clone(), value.clone(), use_site.clone(), None)
        }
        Some(value) => value.clone(),
        // Met inside its own value (recursion): this use stays the
        // variable, bound by the `let` that later uses get.
        None => return use_site.clone(),
    };
    variables.insert(id, result.clone());
    result
}

/// Whether `expr` mentions the variable `id` anywhere.
fn mentions_variable(expr: &Expr, id: VarId) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![expr.clone()];
    while let Some(node) = stack.pop() {
        if !seen.insert(node.addr()) {
            continue;
        }
        if node.as_var().is_some_and(|v| v.id() == id) {
            return true;
        }
        stack.extend(children(&node).into_iter().cloned());
    }
    false
}
