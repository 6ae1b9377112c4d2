//! Traversal and rewriting of expression graphs without recursion.
//!
//! Real models are chains thousands of nodes deep, so nothing here recurses
//! on the depth of the graph: [`post_order`] uses an explicit stack and
//! visits each node once (nodes are identified by address, as TVM memoises
//! on pointers), and [`rewrite_post_order`] rebuilds a graph bottom-up,
//! keeping every node whose children did not change (so an untouched module
//! shares all its nodes with the rewritten one) and preserving sharing.
//!
//! Children are listed in TVM's visiting order (`ExprVisitor`), binding
//! variables included, so a rewrite that replaces a variable replaces it at
//! its binding site and at every use.

use crate::{Clause, Expr, ExprKind, Function, FunctionData, Pattern, Type, Var, VarData};

/// The direct sub-expressions of `expr`, in TVM's visiting order: function
/// parameters then body; let variable, value, body; match scrutinee, then
/// each clause's pattern variables and right-hand side.
pub fn children(expr: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    for_each_child(expr, |c| out.push(c));
    out
}

/// Calls `f` on each of [`children`]`(expr)` in order, without collecting
/// them (walks over large graphs visit every node, and most have one to
/// three children: a vector per node would be most of the cost).
pub fn for_each_child<'a>(expr: &'a Expr, f: impl FnMut(&'a Expr)) {
    visit_children(expr, true, f);
}

/// [`for_each_child`] without the variables bound by match patterns, which
/// a match does not use (the printer's dependency graph); a function's
/// parameters and a `let`'s variable are still visited.
pub fn for_each_child_except_pattern_vars<'a>(expr: &'a Expr, f: impl FnMut(&'a Expr)) {
    visit_children(expr, false, f);
}

#[inline]
fn visit_children<'a>(expr: &'a Expr, with_pattern_vars: bool, mut f: impl FnMut(&'a Expr)) {
    match expr.kind() {
        ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Constant(_)
        | ExprKind::Constructor(_)
        | ExprKind::Op(_) => {}
        ExprKind::Tuple(fields) => fields.iter().for_each(f),
        ExprKind::TupleGetItem { tuple, .. } => f(tuple),
        ExprKind::Call(call) => {
            f(&call.callee);
            call.args.iter().for_each(f);
        }
        ExprKind::Let { var, value, body } => {
            f(var.expr());
            f(value);
            f(body);
        }
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            f(cond);
            f(then_branch);
            f(else_branch);
        }
        ExprKind::Function(fd) => {
            fd.params.iter().map(Var::expr).for_each(&mut f);
            f(&fd.body);
        }
        ExprKind::Match { data, clauses, .. } => {
            f(data);
            for clause in clauses {
                if with_pattern_vars {
                    pattern_vars(&clause.pattern, &mut f);
                }
                f(&clause.rhs);
            }
        }
        ExprKind::RefCreate(value) | ExprKind::RefRead(value) => f(value),
        ExprKind::RefWrite { reference, value } => {
            f(reference);
            f(value);
        }
    }
}

fn pattern_vars<'a>(pattern: &'a Pattern, f: &mut impl FnMut(&'a Expr)) {
    match pattern {
        Pattern::Wildcard => {}
        Pattern::Var(var) => f(var.expr()),
        Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
            for field in fields {
                pattern_vars(field, f);
            }
        }
    }
}

/// A hash map keyed by node addresses (or other integer identities).
pub(crate) type AddrMap<K, V> = crate::fxhash::FxMap<K, V>;

/// Every node reachable from `root`, each once, children before parents.
pub fn post_order(root: &Expr) -> Vec<Expr> {
    let mut order = Vec::new();
    post_order_each(root, |e| order.push(e.clone()));
    order
}

/// [`post_order`] as a callback: `f` sees every node once, children first,
/// without the nodes being cloned into a vector.
///
/// Only nodes with more than one handle go into the table of visited nodes:
/// a node held by one parent is reached once, through that parent (see
/// `Expr::is_unshared`). On a large graph that table is the walk's main
/// use of memory, and most nodes have a single user.
pub fn post_order_each(root: &Expr, mut f: impl FnMut(&Expr)) {
    let mut seen: AddrMap<usize, ()> = AddrMap::default();
    // (node, children pushed?). Nodes are borrowed from their parents, which
    // outlive the walk (`root` holds them all).
    let mut stack: Vec<(&Expr, bool)> = vec![(root, false)];
    let mut buffer: Vec<&Expr> = Vec::new();
    while let Some((expr, expanded)) = stack.pop() {
        if expanded {
            f(expr);
            continue;
        }
        if !expr.is_unshared() && seen.insert(expr.addr(), ()).is_some() {
            continue;
        }
        stack.push((expr, true));
        for_each_child(expr, |c| buffer.push(c));
        for child in buffer.drain(..).rev() {
            if child.is_unshared() || !seen.contains_key(&child.addr()) {
                stack.push((child, false));
            }
        }
    }
}

/// Rebuilds `expr` with `new_children` (in [`children`] order). Returns the
/// same node when every child is the same node.
pub fn with_children(expr: &Expr, new_children: &[Expr]) -> Expr {
    rebuild(expr, new_children, NodeUpdate::default())
}

/// What [`rebuild`] changes in a node besides its children: what type
/// inference writes back (and what an incremental re-check copies over).
#[derive(Debug, Clone, Default)]
pub struct NodeUpdate {
    /// The node's new checked type; `None` keeps the node's own.
    pub checked_type: Option<Type>,
    /// A call's new type arguments; `None` keeps the call's own.
    pub type_args: Option<Box<[Type]>>,
    /// The return type of a function written without one; ignored when the
    /// function has one.
    pub ret_type: Option<Type>,
    /// The annotation of a variable written without one (or with one that
    /// has `_` in it: TVM's inference resolves annotations too, so
    /// `let %v: _ = …` ends up annotated); ignored when the variable has a
    /// complete one.
    pub var_annotation: Option<Type>,
}

fn has_complete_annotation(v: &VarData) -> bool {
    v.type_annotation
        .as_ref()
        .is_some_and(|t| !t.contains_incomplete())
}

fn same_type(a: Option<&Type>, b: Option<&Type>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.ptr_eq(b) || a == b,
        _ => false,
    }
}

impl NodeUpdate {
    /// Whether applying the update to `expr` would change nothing.
    fn is_noop_for(&self, expr: &Expr) -> bool {
        let type_same = self
            .checked_type
            .as_ref()
            .is_none_or(|t| same_type(expr.checked_type(), Some(t)));
        let type_args_same = match (expr.kind(), &self.type_args) {
            (ExprKind::Call(call), Some(args)) => {
                call.type_args.len() == args.len()
                    && call
                        .type_args
                        .iter()
                        .zip(args)
                        .all(|(a, b)| a.ptr_eq(b) || a == b)
            }
            _ => true,
        };
        let ret_same = match expr.kind() {
            ExprKind::Function(f) => f.ret_type.is_some() || self.ret_type.is_none(),
            _ => true,
        };
        let annotation_same = match expr.kind() {
            ExprKind::Var(v) => has_complete_annotation(v) || self.var_annotation.is_none(),
            _ => true,
        };
        type_same && type_args_same && ret_same && annotation_same
    }
}

/// Rebuilds `expr` with `new_children` (in [`children`] order) and the
/// changes of `update`. Returns the same node when every child is the same
/// node and the update changes nothing, so untouched graphs stay shared.
///
/// A binding position (parameter, let or pattern variable) whose new child
/// is not a variable keeps its old variable, and missing children keep the
/// old ones: a faulty rewrite degrades instead of panicking.
pub fn rebuild(expr: &Expr, new_children: &[Expr], update: NodeUpdate) -> Expr {
    let old = children(expr);
    debug_assert_eq!(old.len(), new_children.len());
    if old.iter().zip(new_children).all(|(a, b)| a.ptr_eq(b)) && update.is_noop_for(expr) {
        return expr.clone();
    }
    let mut it = old.iter().enumerate().map(|(i, old)| {
        new_children
            .get(i)
            .cloned()
            .unwrap_or_else(|| (*old).clone())
    });
    // Children are consumed in `children` order; running out cannot happen
    // (one entry per old child), the fallback only keeps the types right.
    let mut next = || it.next().unwrap_or_else(|| Expr::tuple(Vec::new(), None));
    let span = expr.span();
    let ty = update
        .checked_type
        .clone()
        .or_else(|| expr.checked_type().cloned());
    let kind = match expr.kind() {
        ExprKind::Var(v) => ExprKind::Var(VarData {
            id: v.id,
            name: v.name.clone(),
            type_annotation: if has_complete_annotation(v) {
                v.type_annotation.clone()
            } else {
                update.var_annotation.or_else(|| v.type_annotation.clone())
            },
            virtual_device: v.virtual_device.clone(),
        }),
        ExprKind::GlobalVar(g) => ExprKind::GlobalVar(g.clone()),
        ExprKind::Constant(data) => ExprKind::Constant(data.clone()),
        ExprKind::Constructor(c) => ExprKind::Constructor(c.clone()),
        ExprKind::Op(op) => ExprKind::Op(op),
        ExprKind::Tuple(fields) => ExprKind::Tuple(fields.iter().map(|_| next()).collect()),
        ExprKind::TupleGetItem { index, .. } => ExprKind::TupleGetItem {
            tuple: next(),
            index: *index,
        },
        ExprKind::Call(call) => {
            let callee = next();
            let args = call.args.iter().map(|_| next()).collect();
            ExprKind::Call(crate::Call {
                callee,
                args,
                attrs: call.attrs.clone(),
                type_args: update.type_args.unwrap_or_else(|| call.type_args.clone()),
            })
        }
        ExprKind::Let { var, .. } => ExprKind::Let {
            var: as_var_or(next(), var),
            value: next(),
            body: next(),
        },
        ExprKind::If { .. } => ExprKind::If {
            cond: next(),
            then_branch: next(),
            else_branch: next(),
        },
        ExprKind::Function(f) => {
            let params = f.params.iter().map(|p| as_var_or(next(), p)).collect();
            ExprKind::Function(Box::new(FunctionData {
                params,
                body: next(),
                ret_type: f.ret_type.clone().or(update.ret_type),
                type_params: f.type_params.clone(),
                attrs: f.attrs.clone(),
                virtual_device: f.virtual_device.clone(),
            }))
        }
        ExprKind::Match {
            clauses, complete, ..
        } => {
            let data = next();
            let clauses = clauses
                .iter()
                .map(|clause| {
                    let pattern = rebuild_pattern(&clause.pattern, &mut next);
                    Clause {
                        pattern,
                        rhs: next(),
                    }
                })
                .collect();
            ExprKind::Match {
                data,
                clauses,
                complete: *complete,
            }
        }
        ExprKind::RefCreate(_) => ExprKind::RefCreate(next()),
        ExprKind::RefRead(_) => ExprKind::RefRead(next()),
        ExprKind::RefWrite { .. } => ExprKind::RefWrite {
            reference: next(),
            value: next(),
        },
    };
    Expr::with_type(kind, span, ty)
}

/// The new variable of a binding position, or the old one when the rewrite
/// put something else there.
fn as_var_or(expr: Expr, old: &Var) -> Var {
    expr.as_var().unwrap_or_else(|| old.clone())
}

fn rebuild_pattern(pattern: &Pattern, next: &mut impl FnMut() -> Expr) -> Pattern {
    match pattern {
        Pattern::Wildcard => Pattern::Wildcard,
        Pattern::Var(old) => Pattern::Var(as_var_or(next(), old)),
        Pattern::Constructor(ctor, fields) => Pattern::Constructor(
            ctor.clone(),
            fields.iter().map(|f| rebuild_pattern(f, next)).collect(),
        ),
        Pattern::Tuple(fields) => {
            Pattern::Tuple(fields.iter().map(|f| rebuild_pattern(f, next)).collect())
        }
    }
}

/// Rewrites the graph under `root` bottom-up. `f` receives each original
/// node and the node rebuilt over the already rewritten children (the same
/// node if nothing below changed), and returns its replacement. Each node is
/// visited once, so shared nodes stay shared.
///
/// Only replaced nodes are remembered (a node that stays itself stands for
/// itself), and nodes are borrowed from the graph rather than collected: a
/// rewrite that changes little touches little memory besides the walk.
pub fn rewrite_post_order(root: &Expr, mut f: impl FnMut(&Expr, Expr) -> Expr) -> Expr {
    let mut replaced: AddrMap<usize, Expr> = AddrMap::default();
    let mut new_children: Vec<Expr> = Vec::new();
    post_order_each(root, |node| {
        let mut child_replaced = false;
        if !replaced.is_empty() {
            for_each_child(node, |c| child_replaced |= replaced.contains_key(&c.addr()));
        }
        let rebuilt = if child_replaced {
            new_children.clear();
            for_each_child(node, |c| {
                new_children.push(replaced.get(&c.addr()).unwrap_or(c).clone());
            });
            with_children(node, &new_children)
        } else {
            node.clone()
        };
        let replacement = f(node, rebuilt);
        if !replacement.ptr_eq(node) {
            replaced.insert(node.addr(), replacement);
        }
    });
    replaced
        .remove(&root.addr())
        .unwrap_or_else(|| root.clone())
}

/// Rewrites the body of a function (parameters included) bottom-up.
pub fn rewrite_function(function: &Function, f: impl FnMut(&Expr, Expr) -> Expr) -> Function {
    let new = rewrite_post_order(function.expr(), f);
    new.as_function()
        .expect("a function must be rewritten to a function")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::TensorData;

    fn scalar(v: f64) -> Expr {
        Expr::constant(
            TensorData::from_f64s(crate::dtype::DataType::FLOAT32, vec![], &[v]).unwrap(),
            None,
        )
    }

    #[test]
    fn post_order_visits_shared_nodes_once() {
        let x = Var::new("x", None, None);
        let add = crate::op::lookup("add").unwrap();
        let a = Expr::call(
            Expr::op(add, None),
            vec![x.expr().clone(), scalar(1.0)],
            None,
            None,
        );
        let b = Expr::tuple(vec![a.clone(), a.clone()], None);
        let order = post_order(&b);
        // x, add op, constant, the call, the tuple.
        assert_eq!(order.len(), 5);
        assert!(order.last().unwrap().ptr_eq(&b));
    }

    #[test]
    fn rewrite_keeps_untouched_nodes_and_sharing() {
        let x = Var::new("x", None, None);
        let add = crate::op::lookup("add").unwrap();
        let a = Expr::call(
            Expr::op(add, None),
            vec![x.expr().clone(), scalar(1.0)],
            None,
            None,
        );
        let t = Expr::tuple(vec![a.clone(), a.clone()], None);
        let same = rewrite_post_order(&t, |_, e| e);
        assert!(same.ptr_eq(&t));
        // Replace the constant: the call is rebuilt once and still shared.
        let changed = rewrite_post_order(&t, |old, e| {
            if old.as_constant().is_some() {
                scalar(2.0)
            } else {
                e
            }
        });
        let ExprKind::Tuple(fields) = changed.kind() else {
            panic!("a tuple")
        };
        assert!(fields[0].ptr_eq(&fields[1]));
        assert!(!fields[0].ptr_eq(&a));
    }

    #[test]
    fn nodes_with_one_user_and_nodes_held_elsewhere_are_visited_once() {
        // x is used twice (shared), `a` once by the tuple and once more
        // through a handle outside the graph, `b` only by its parent.
        let x = Var::new("x", None, None);
        let relu = crate::op::lookup("nn.relu").unwrap();
        let a = Expr::call(Expr::op(relu, None), vec![x.expr().clone()], None, None);
        let b = Expr::call(Expr::op(relu, None), vec![x.expr().clone()], None, None);
        let root = Expr::tuple(vec![a.clone(), b, a.clone()], None);
        let outside = a.clone();
        let mut visits: Vec<usize> = Vec::new();
        post_order_each(&root, |e| visits.push(e.addr()));
        // x, two op nodes, a, b, the tuple.
        assert_eq!(visits.len(), 6);
        let mut unique = visits.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), visits.len());
        drop(outside);

        // Replacing x rebuilds a (once, still shared) and b; the callback
        // sees every original node once.
        let y = Var::new("y", None, None);
        let mut seen = 0;
        let new = rewrite_post_order(&root, |old, e| {
            seen += 1;
            if old.ptr_eq(x.expr()) {
                y.expr().clone()
            } else {
                e
            }
        });
        assert_eq!(seen, 6);
        let ExprKind::Tuple(fields) = new.kind() else {
            panic!("a tuple")
        };
        assert!(fields[0].ptr_eq(&fields[2]));
        for field in fields {
            let call = field.as_call().unwrap();
            assert!(call.args[0].ptr_eq(y.expr()));
        }
    }

    #[test]
    fn deep_chains_do_not_overflow() {
        let relu = crate::op::lookup("nn.relu").unwrap();
        let mut e = Var::new("x", None, None).into_expr();
        for _ in 0..200_000 {
            e = Expr::call(Expr::op(relu, None), vec![e], None, None);
        }
        let handle = std::thread::spawn(move || post_order(&e).len());
        assert_eq!(handle.join().unwrap(), 400_001);
    }
}
