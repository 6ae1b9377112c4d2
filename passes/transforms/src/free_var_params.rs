//! The parameter list TVM's weight-rewriting passes (`SimplifyFCTranspose`,
//! `DenseToSparse`) give a rewritten function: they compute
//! `FreeVars(f0)` (the new weight variables), make them the only
//! parameters, then put `FreeVars` of that function (the variables of the
//! body, in order of first use) in front. Parameters the body no longer
//! uses disappear, and the order becomes the order of use.

use relay_ir::rewrite::post_order;
use relay_ir::{Expr, ExprKind, Function, FunctionData, Pattern, Var, VarId};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxSet as HashSet;

/// `function` with its parameters rebuilt as TVM does: the free variables
/// of its body in order of first use, those in `new_vars` last.
pub(crate) fn free_vars_as_params(function: &Function, new_vars: &[VarId]) -> Function {
    let new_vars: HashSet<VarId> = new_vars.iter().copied().collect();
    let (body_free, new_weights): (Vec<Var>, Vec<Var>) = free_vars_of_body(function)
        .into_iter()
        .partition(|var| !new_vars.contains(&var.id()));
    let data = function.data();
    Function::new(
        FunctionData {
            params: body_free.into_iter().chain(new_weights).collect(),
            ..data.clone()
        },
        function.expr().span(),
    )
}

/// The variables `function`'s body uses without binding them (its own
/// parameters included), in order of first use, as TVM's `FreeVars` lists
/// them.
fn free_vars_of_body(function: &Function) -> Vec<Var> {
    let order = post_order(function.body());
    let mut bound: HashSet<VarId> = HashSet::default();
    for node in &order {
        match node.kind() {
            ExprKind::Function(data) => bound.extend(data.params.iter().map(Var::id)),
            ExprKind::Let { var, .. } => {
                bound.insert(var.id());
            }
            ExprKind::Match { clauses, .. } => {
                for clause in clauses {
                    bind_pattern(&clause.pattern, &mut bound);
                }
            }
            _ => {}
        }
    }
    let mut seen: HashSet<VarId> = HashSet::default();
    order
        .iter()
        .filter_map(Expr::as_var)
        .filter(|var| !bound.contains(&var.id()) && seen.insert(var.id()))
        .collect()
}

fn bind_pattern(pattern: &Pattern, bound: &mut HashSet<VarId>) {
    match pattern {
        Pattern::Var(var) => {
            bound.insert(var.id());
        }
        Pattern::Constructor(_, args) => args.iter().for_each(|p| bind_pattern(p, bound)),
        Pattern::Tuple(items) => items.iter().for_each(|p| bind_pattern(p, bound)),
        Pattern::Wildcard => {}
    }
}
