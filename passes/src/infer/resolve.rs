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
use crate::ir::rewrite::{children, post_order};
use crate::ir::{
    Call, Clause, Expr, ExprKind, FunctionData, GlobalVar, Pattern, Type, TypeKind, Var, VarData,
};
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

fn same_type(a: Option<&Type>, b: Option<&Type>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.ptr_eq(b) || a == b,
        _ => false,
    }
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
        for node in post_order(root) {
            let new = self.rebuild(&node);
            match node.kind() {
                ExprKind::Var(v) => {
                    self.vars.insert(v.id.0, new);
                }
                _ => {
                    self.memo.insert(node.addr(), new);
                }
            }
        }
        self.lookup(root)
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
                let annotation = v.type_annotation.clone().unwrap_or_else(|| ty.clone());
                if v.type_annotation.is_some() && same_type(e.checked_type(), Some(&ty)) {
                    return e.clone();
                }
                Expr::with_type(
                    ExprKind::Var(VarData {
                        id: v.id,
                        name: v.name.clone(),
                        type_annotation: Some(annotation),
                        virtual_device: v.virtual_device.clone(),
                    }),
                    e.span(),
                    Some(ty),
                )
            }
            ExprKind::Op(_) => e.clone(),
            ExprKind::GlobalVar(g) => match self.globals.get(g.name()) {
                Some(ty) if !same_type(e.checked_type(), Some(ty)) => Expr::with_type(
                    ExprKind::GlobalVar(GlobalVar::new(g.name())),
                    e.span(),
                    Some(ty.clone()),
                ),
                _ => e.clone(),
            },
            _ => {
                let ty = self.inf.type_of(e).cloned();
                let ty = match ty {
                    Some(t) => self.resolved(e, Some(t)),
                    None => e.checked_type().cloned(),
                };
                let old: Vec<&Expr> = children(e);
                let new: Vec<Expr> = old.iter().map(|c| self.lookup(c)).collect();
                let children_same = old.iter().zip(&new).all(|(a, b)| a.ptr_eq(b));
                let type_args = match e.kind() {
                    ExprKind::Call(_) => self.inf.call_type_args(e).cloned().map(|args| {
                        args.iter()
                            .map(|t| self.inf.solver.resolve(t))
                            .collect::<Vec<_>>()
                    }),
                    _ => None,
                };
                let ret_type = match e.kind() {
                    ExprKind::Function(f) if f.ret_type.is_none() => {
                        match ty.as_ref().map(Type::kind) {
                            Some(TypeKind::Func(ft)) => Some(ft.ret.clone()),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                let type_args_same = match (e.kind(), &type_args) {
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
                if children_same
                    && type_args_same
                    && ret_type.is_none()
                    && same_type(e.checked_type(), ty.as_ref())
                {
                    return e.clone();
                }
                build(e, &new, ty, type_args, ret_type)
            }
        }
    }
}

/// `e` with new children (in `rewrite::children` order), type, call type
/// arguments and function return type.
fn build(
    e: &Expr,
    new_children: &[Expr],
    ty: Option<Type>,
    type_args: Option<Vec<Type>>,
    ret_type: Option<Type>,
) -> Expr {
    let mut it = new_children.iter().cloned();
    let mut next = || it.next().unwrap_or_else(|| Expr::tuple(Vec::new(), None));
    let as_var = |e: Expr| -> Var {
        match e.as_var() {
            Some(v) => v,
            None => Var::new("", None, e.span()),
        }
    };
    let kind = match e.kind() {
        ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Constant(_)
        | ExprKind::Constructor(_)
        | ExprKind::Op(_) => return leaf_with_type(e, ty),
        ExprKind::Tuple(fields) => ExprKind::Tuple(fields.iter().map(|_| next()).collect()),
        ExprKind::TupleGetItem { index, .. } => ExprKind::TupleGetItem {
            tuple: next(),
            index: *index,
        },
        ExprKind::Call(call) => {
            let callee = next();
            let args = call.args.iter().map(|_| next()).collect();
            ExprKind::Call(Call {
                callee,
                args,
                attrs: call.attrs.clone(),
                type_args: type_args.unwrap_or_else(|| call.type_args.clone()),
            })
        }
        ExprKind::Let { .. } => ExprKind::Let {
            var: as_var(next()),
            value: next(),
            body: next(),
        },
        ExprKind::If { .. } => ExprKind::If {
            cond: next(),
            then_branch: next(),
            else_branch: next(),
        },
        ExprKind::Function(f) => {
            let params = f.params.iter().map(|_| as_var(next())).collect();
            ExprKind::Function(FunctionData {
                params,
                body: next(),
                ret_type: f.ret_type.clone().or(ret_type),
                type_params: f.type_params.clone(),
                attrs: f.attrs.clone(),
                virtual_device: f.virtual_device.clone(),
            })
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
    Expr::with_type(kind, e.span(), ty)
}

fn leaf_with_type(e: &Expr, ty: Option<Type>) -> Expr {
    let kind = match e.kind() {
        ExprKind::Constant(data) => ExprKind::Constant(data.clone()),
        ExprKind::Constructor(c) => ExprKind::Constructor(c.clone()),
        ExprKind::Op(op) => ExprKind::Op(op),
        ExprKind::GlobalVar(g) => ExprKind::GlobalVar(g.clone()),
        _ => return e.clone(),
    };
    Expr::with_type(kind, e.span(), ty)
}

fn rebuild_pattern(pattern: &Pattern, next: &mut impl FnMut() -> Expr) -> Pattern {
    match pattern {
        Pattern::Wildcard => Pattern::Wildcard,
        Pattern::Var(v) => match next().as_var() {
            Some(var) => Pattern::Var(var),
            None => Pattern::Var(v.clone()),
        },
        Pattern::Constructor(ctor, fields) => Pattern::Constructor(
            ctor.clone(),
            fields.iter().map(|f| rebuild_pattern(f, next)).collect(),
        ),
        Pattern::Tuple(fields) => {
            Pattern::Tuple(fields.iter().map(|f| rebuild_pattern(f, next)).collect())
        }
    }
}
