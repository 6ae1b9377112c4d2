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
//! The walk is iterative (models are let chains thousands deep), and
//! linear: whether a binding is recursive is noted when its variable is met
//! while its value is still being rewritten, not by searching the rewritten
//! value (which, in a chain of lets, is the whole chain so far).

use relay_ir::fxhash::{FxMap, FxSet};
use relay_ir::rewrite::{children, for_each_child, post_order, with_children};
use relay_ir::{Expr, ExprKind, Function, VarId};
use relay_pass_manager::registry::PassSpec;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("ToGraphNormalForm", 1)
        .doc("Replace let bindings by sharing (graph normal form)")
        .transform(|f, _m, _ctx| Ok(to_graph_normal_form(&f)))
}

/// Rewrites `function` into graph normal form.
pub fn to_graph_normal_form(function: &Function) -> Function {
    let root = function.expr();
    let nodes = post_order(root);
    // Which value each let binds, by variable.
    let mut bound_values: FxMap<VarId, Expr> = FxMap::default();
    for node in &nodes {
        if let ExprKind::Let { var, value, .. } = node.kind() {
            bound_values.insert(var.id(), value.clone());
        }
    }
    let mut rewritten: FxMap<usize, Expr> = FxMap::default();
    // What each let-bound variable became the first time it was met.
    let mut variables: FxMap<VarId, Expr> = FxMap::default();
    // Let-bound variables met inside their own value.
    let mut recursive: FxSet<VarId> = FxSet::default();
    for node in &nodes {
        // Every node inside a value comes before the value (post-order).
        let binder = match node.kind() {
            ExprKind::Let { var, .. } => Some(var.id()),
            _ => None,
        };
        let mut first = true;
        for_each_child(node, |child| {
            let is_binder = std::mem::take(&mut first) && binder.is_some();
            if let Some(var) = child.as_var().filter(|_| !is_binder) {
                let open = bound_values
                    .get(&var.id())
                    .is_some_and(|value| !rewritten.contains_key(&value.addr()));
                if open {
                    recursive.insert(var.id());
                }
            }
        });
        let mut rewrite_child = |child: &Expr| match child.as_var() {
            Some(var) if bound_values.contains_key(&var.id()) => variable_use(
                var.id(),
                child,
                &bound_values,
                &rewritten,
                &recursive,
                &mut variables,
            ),
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

fn lookup(rewritten: &FxMap<usize, Expr>, node: &Expr) -> Expr {
    rewritten
        .get(&node.addr())
        .cloned()
        .unwrap_or_else(|| node.clone())
}

/// What a use of the let-bound variable `id` becomes (see the module doc).
fn variable_use(
    id: VarId,
    use_site: &Expr,
    bound_values: &FxMap<VarId, Expr>,
    rewritten: &FxMap<usize, Expr>,
    recursive: &FxSet<VarId>,
    variables: &mut FxMap<VarId, Expr>,
) -> Expr {
    if let Some(done) = variables.get(&id) {
        return done.clone();
    }
    let result = match bound_values
        .get(&id)
        .and_then(|value| rewritten.get(&value.addr()))
    {
        Some(value) if recursive.contains(&id) => {
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
