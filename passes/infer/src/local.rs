//! TVM's `InferTypeLocal(expr)` (`type_infer.cc`): the type of one
//! expression, trusting the types its sub-expressions already carry. It is
//! a function on an expression, not a pass (TVM registers no `PassInfo` for
//! it): pass writers call it while rewriting, after building a node over
//! already typed children.
//!
//! As TVM's `SameTypedSubgraphExtractor` does, every child that has a
//! checked type is replaced by a new variable `%dummy_var` annotated with
//! that type, untyped children are copied the same way (down to typed
//! ones), and the small expression that results is inferred. Binding
//! variables, a call's callee, a function's contents and a match's clauses
//! are kept as they are.

use crate::{infer_expr, Diagnostics};
use relay_ir::{Call, Expr, ExprKind, IRModule, Type, Var};
use std::collections::HashMap;

/// The type of `expr`, inferred with the types of its typed children taken
/// as given (globals and ADTs are looked up in `module`); `None` with the
/// diagnostics when inference fails.
pub fn infer_type_local(expr: &Expr, module: Option<&IRModule>) -> (Option<Type>, Diagnostics) {
    let subgraph = same_typed_subgraph(expr);
    let (typed, diagnostics) = infer_expr(&subgraph, module);
    let ty = if diagnostics.iter().any(|d| d.is_error()) {
        None
    } else {
        typed.checked_type().cloned()
    };
    (ty, diagnostics)
}

/// The children TVM's extractor visits (the others are kept as they are).
fn copied_children(expr: &Expr) -> Vec<&Expr> {
    match expr.kind() {
        ExprKind::Tuple(fields) => fields.iter().collect(),
        ExprKind::Call(call) => call.args.iter().collect(),
        ExprKind::Let { value, body, .. } => vec![value, body],
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => vec![cond, then_branch, else_branch],
        ExprKind::TupleGetItem { tuple, .. } => vec![tuple],
        ExprKind::RefCreate(value) | ExprKind::RefRead(value) => vec![value],
        ExprKind::RefWrite { reference, value } => vec![reference, value],
        ExprKind::Match { data, .. } => vec![data],
        ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Constant(_)
        | ExprKind::Function(_)
        | ExprKind::Constructor(_)
        | ExprKind::Op(_) => Vec::new(),
    }
}

/// `root` rebuilt without checked types, typed children replaced by
/// annotated dummy variables. Iterative: an untyped chain can be long.
fn same_typed_subgraph(root: &Expr) -> Expr {
    let mut built: HashMap<usize, Expr> = HashMap::new();
    let mut stack: Vec<(Expr, bool)> = vec![(root.clone(), false)];
    while let Some((node, expanded)) = stack.pop() {
        if built.contains_key(&node.addr()) {
            continue;
        }
        let untyped: Vec<Expr> = copied_children(&node)
            .into_iter()
            .filter(|c| c.checked_type().is_none() && !built.contains_key(&c.addr()))
            .cloned()
            .collect();
        if !expanded && !untyped.is_empty() {
            stack.push((node, true));
            stack.extend(untyped.into_iter().rev().map(|c| (c, false)));
            continue;
        }
        let new_children: Vec<Expr> = copied_children(&node)
            .into_iter()
            .map(|c| match c.checked_type() {
                Some(ty) => Var::new("dummy_var", Some(ty.clone()), c.span()).into_expr(),
                None => built[&c.addr()].clone(),
            })
            .collect();
        let copy = copy_node(&node, new_children);
        built.insert(node.addr(), copy);
    }
    built.remove(&root.addr()).expect("the root is built last")
}

/// A new node like `node` (without its checked type) over `children`, the
/// replacements of [`copied_children`] in order.
fn copy_node(node: &Expr, children: Vec<Expr>) -> Expr {
    let span = node.span();
    let mut children = children.into_iter();
    let mut next = || children.next().expect("one replacement per copied child");
    match node.kind() {
        ExprKind::Var(data) => Var::with_id(
            data.id,
            data.name.clone(),
            data.type_annotation.clone(),
            data.virtual_device.as_deref().cloned(),
            span,
        )
        .into_expr(),
        ExprKind::Constant(data) => Expr::new(ExprKind::Constant(data.clone()), span),
        ExprKind::GlobalVar(global) => Expr::global(global.name(), span),
        ExprKind::Op(op) => Expr::op(op, span),
        ExprKind::Constructor(constructor) => {
            Expr::new(ExprKind::Constructor(constructor.clone()), span)
        }
        ExprKind::Function(data) => Expr::new(ExprKind::Function(data.clone()), span),
        ExprKind::Tuple(fields) => Expr::tuple(fields.iter().map(|_| next()).collect(), span),
        ExprKind::Call(call) => Expr::new(
            ExprKind::Call(Call {
                callee: call.callee.clone(),
                args: call.args.iter().map(|_| next()).collect(),
                attrs: call.attrs.clone(),
                type_args: call.type_args.clone(),
            }),
            span,
        ),
        ExprKind::Let { var, .. } => {
            let value = next();
            Expr::let_(var.clone(), value, next(), span)
        }
        ExprKind::If { .. } => {
            let cond = next();
            let then_branch = next();
            Expr::if_(cond, then_branch, next(), span)
        }
        ExprKind::TupleGetItem { index, .. } => Expr::tuple_get_item(next(), *index, span),
        ExprKind::RefCreate(_) => Expr::new(ExprKind::RefCreate(next()), span),
        ExprKind::RefRead(_) => Expr::new(ExprKind::RefRead(next()), span),
        ExprKind::RefWrite { .. } => {
            let reference = next();
            Expr::new(
                ExprKind::RefWrite {
                    reference,
                    value: next(),
                },
                span,
            )
        }
        ExprKind::Match {
            clauses, complete, ..
        } => Expr::new(
            ExprKind::Match {
                data: next(),
                clauses: clauses.clone(),
                complete: *complete,
            },
            span,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::build::op_call;
    use relay_ir::Dim;

    fn tensor(dims: &[i64]) -> Type {
        Type::tensor(
            dims.iter().map(|&d| Dim::int32(d)).collect(),
            "float32".parse().unwrap(),
        )
    }

    #[test]
    fn a_new_call_over_typed_children_gets_its_type() {
        let x = Var::new("x", Some(tensor(&[2, 3])), None).into_expr();
        let (typed_relu, _) = infer_expr(&op_call("nn.relu", vec![x]), None);
        assert!(typed_relu.checked_type().is_some());
        let sum = op_call("add", vec![typed_relu.clone(), typed_relu]);
        let (ty, diagnostics) = infer_type_local(&sum, None);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(ty, Some(tensor(&[2, 3])));
    }

    #[test]
    fn untyped_children_are_inferred_through_and_errors_are_reported() {
        let x = Var::new("x", Some(tensor(&[2, 3])), None).into_expr();
        let y = Var::new("y", Some(tensor(&[4])), None).into_expr();
        let inner = op_call("nn.relu", vec![x]);
        let (ty, _) = infer_type_local(&Expr::tuple(vec![inner.clone()], None), None);
        assert_eq!(ty, Some(Type::tuple(vec![tensor(&[2, 3])])));
        let (ty, diagnostics) = infer_type_local(&op_call("add", vec![inner, y]), None);
        assert_eq!(ty, None);
        assert!(diagnostics.iter().any(|d| d.is_error()));
    }
}
