//! Writing the solution back: TVM's `TypeInferencer::Resolver`.
//!
//! Every visited expression is rebuilt with its resolved `checked_type`;
//! variables without an annotation get the inferred type as annotation (as
//! TVM does), and every use of a variable is the same new node; functions
//! without a return type get the inferred one; calls get their type
//! arguments. A node whose type, children and fields are unchanged is kept,
//! so inferring an already typed module shares all its nodes.

use super::generate::Inferencer;
use super::solver::IdMap;
use crate::diagnostic::{Diagnostic, Layer};
use crate::ir::rewrite::{children, post_order, rebuild, NodeUpdate};
use crate::ir::{Dim, Expr, ExprKind, FunctionData, Type, TypeKind, VarData};
use crate::source::Span;
use std::collections::HashMap;

/// Expressions whose type stayed unknown.
#[derive(Default)]
pub(crate) struct Unresolved {
    pub first: Option<Option<Span>>,
    pub count: usize,
}

impl Unresolved {
    /// TVM's error, reported once for the first (innermost) such
    /// expression, with the number of others.
    pub fn diagnostic(&self) -> Option<Diagnostic> {
        let span = self.first?;
        let mut d = Diagnostic::error(
            Layer::Type,
            "The type inference pass was unable to infer a type for this expression.",
        )
        .with_note(
            "This usually occurs when an operator call is under constrained in some way, \
             check other reported errors for hints of what may of happened.",
        );
        d.span = span;
        if self.count > 1 {
            d = d.with_note(format!(
                "the types of {} other expressions could not be inferred either",
                self.count - 1
            ));
        }
        Some(d)
    }
}

pub(crate) struct Resolver<'i, 'a> {
    inf: &'i mut Inferencer<'a>,
    /// Final types of global functions, for `@f` nodes.
    globals: &'i HashMap<String, Type>,
    memo: IdMap<usize, Expr>,
    vars: IdMap<u64, Expr>,
    pub unresolved: Unresolved,
}

impl<'i, 'a> Resolver<'i, 'a> {
    pub fn new(inf: &'i mut Inferencer<'a>, globals: &'i HashMap<String, Type>) -> Self {
        Resolver {
            inf,
            globals,
            memo: IdMap::default(),
            vars: IdMap::default(),
            unresolved: Unresolved::default(),
        }
    }

    fn lookup(&self, e: &Expr) -> Expr {
        let found = match e.kind() {
            ExprKind::Var(v) => self.vars.get(&v.id.0),
            _ => self.memo.get(&e.addr()),
        };
        found.cloned().unwrap_or_else(|| e.clone())
    }

    /// The resolved type of a node, noting unknown ones.
    fn resolved(&mut self, e: &Expr, ty: Option<Type>) -> Option<Type> {
        let ty = self.inf.solver.resolve(&ty?);
        if ty.is_incomplete() {
            self.unresolved.count += 1;
            if self.unresolved.first.is_none() {
                self.unresolved.first = Some(e.span());
            }
        }
        Some(ty)
    }

    pub fn run(&mut self, root: &Expr) -> Expr {
        self.run_recording(root).0
    }

    /// [`Self::run`], also returning the input nodes in post-order and,
    /// aligned with them, the node each became: what an incremental
    /// re-check needs to carry the result over to an equal function.
    pub fn run_recording(&mut self, root: &Expr) -> (Expr, Vec<Expr>, Vec<Expr>) {
        let order = post_order(root);
        for node in &order {
            let new = self.rebuild(node);
            match node.kind() {
                ExprKind::Var(v) => {
                    self.vars.insert(v.id.0, new);
                }
                _ => {
                    self.memo.insert(node.addr(), new);
                }
            }
        }
        let outputs = order.iter().map(|node| self.lookup(node)).collect();
        (self.lookup(root), order, outputs)
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        match e.kind() {
            ExprKind::Var(v) => {
                if let Some(done) = self.vars.get(&v.id.0) {
                    return done.clone();
                }
                let ty = self.inf.var_type(v.id).cloned();
                let Some(ty) = self.resolved(e, ty) else {
                    return e.clone();
                };
                if let Some(annotation) = v
                    .type_annotation
                    .as_ref()
                    .filter(|t| !t.contains_incomplete())
                    .and_then(|t| self.resolved_annotation(t))
                {
                    let var = VarData {
                        id: v.id,
                        name: v.name.clone(),
                        type_annotation: Some(annotation),
                        virtual_device: v.virtual_device.clone(),
                    };
                    return Expr::with_type(ExprKind::Var(var), e.span(), Some(ty));
                }
                let update = NodeUpdate {
                    var_annotation: Some(ty.clone()),
                    checked_type: Some(ty),
                    ..NodeUpdate::default()
                };
                rebuild(e, &[], update)
            }
            ExprKind::Op(_) => e.clone(),
            // A constant takes the inferred type object even when it equals
            // the one it had (TVM compares with `same_as`): a constant's type
            // is made anew by every inference, and which dimension objects it
            // shares is printed in the metadata section. Other nodes keep
            // an equal old type; their types are never printed as objects.
            ExprKind::Constant(data) => {
                let ty = self.inf.type_of(e).cloned();
                let Some(ty) = self.resolved(e, ty) else {
                    return e.clone();
                };
                if e.checked_type().is_some_and(|old| old.ptr_eq(&ty)) {
                    return e.clone();
                }
                Expr::with_type(ExprKind::Constant(data.clone()), e.span(), Some(ty))
            }
            ExprKind::GlobalVar(g) => match self.globals.get(g.name()) {
                Some(ty) => rebuild(
                    e,
                    &[],
                    NodeUpdate {
                        checked_type: Some(ty.clone()),
                        ..NodeUpdate::default()
                    },
                ),
                None => e.clone(),
            },
            _ => {
                let ty = self.inf.type_of(e).cloned();
                let checked_type = match ty {
                    Some(t) => self.resolved(e, Some(t)),
                    None => None,
                };
                let new: Vec<Expr> = children(e).into_iter().map(|c| self.lookup(c)).collect();
                let type_args = match e.kind() {
                    ExprKind::Call(_) => self.inf.call_type_args(e).cloned().map(|args| {
                        args.iter()
                            .map(|t| self.inf.solver.resolve(t))
                            .collect::<Vec<_>>()
                    }),
                    _ => None,
                };
                let ret_type = match (e.kind(), checked_type.as_ref().map(Type::kind)) {
                    (ExprKind::Function(f), Some(TypeKind::Func(ft))) if f.ret_type.is_none() => {
                        Some(ft.ret.clone())
                    }
                    _ => None,
                };
                let update = NodeUpdate {
                    checked_type,
                    type_args,
                    ret_type,
                    var_annotation: None,
                };
                let out = rebuild(e, &new, update);
                match out.kind() {
                    ExprKind::Function(f) => {
                        match f
                            .ret_type
                            .as_ref()
                            .and_then(|t| self.resolved_annotation(t))
                        {
                            Some(ret) => {
                                let data = FunctionData {
                                    params: f.params.clone(),
                                    body: f.body.clone(),
                                    ret_type: Some(ret),
                                    type_params: f.type_params.clone(),
                                    attrs: f.attrs.clone(),
                                    virtual_device: f.virtual_device.clone(),
                                };
                                let ty = out.checked_type().cloned();
                                Expr::with_type(ExprKind::Function(data), out.span(), ty)
                            }
                            None => out,
                        }
                    }
                    _ => out,
                }
            }
        }
    }

    /// TVM's resolver runs annotations through the solver too (its
    /// `VisitType`), so an annotation unified with a computed type is
    /// replaced by that type. Only symbolic sizes are objects the text shows
    /// (`meta[tir.Mul][k]` of an annotation and of the body's type are then
    /// one entry), so only annotations with symbolic sizes are replaced:
    /// other nodes are kept, which keeps re-inference cheap.
    fn resolved_annotation(&mut self, t: &Type) -> Option<Type> {
        if !has_symbolic_dim(t) {
            return None;
        }
        let resolved = self.inf.solver.resolve(t);
        (!resolved.ptr_eq(t)).then_some(resolved)
    }
}

/// Whether a symbolic size (`meta[…]` or computed) occurs in `t`.
fn has_symbolic_dim(t: &Type) -> bool {
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match t.kind() {
            TypeKind::Tensor(tt) => {
                if tt
                    .shape
                    .iter()
                    .any(|d| matches!(d, Dim::Meta(_) | Dim::Expr(_)))
                {
                    return true;
                }
            }
            TypeKind::Tuple(fields) => stack.extend(fields),
            TypeKind::Func(f) => {
                stack.extend(&f.params);
                stack.push(&f.ret);
            }
            TypeKind::Call { func, args } => {
                stack.push(func);
                stack.extend(args);
            }
            TypeKind::Ref(inner) => stack.push(inner),
            TypeKind::Var(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => {}
        }
    }
    false
}
