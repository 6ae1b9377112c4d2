//! Renaming copies for the partial evaluator: TVM's `DeDup` (a fresh
//! variable for every binder, fresh type parameters) combined with
//! `TypeSubst` (type parameters of an inlined function replaced by the
//! call's type arguments), and the free variables of a function.
//!
//! Checked types follow TVM: a copied node keeps its original's checked
//! type unless the substitution changed something inside it (TVM rebuilds
//! such nodes without one); a fresh variable has the checked type of the
//! original's uses, so a variable never used prints without one.

use relay_ir::rewrite::for_each_child;
use relay_ir::{
    Call, Clause, Expr, ExprKind, FunctionData, Pattern, Type, TypeKind, TypeVar, Var, VarId,
};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// Type parameter id → the type that replaces it.
pub(crate) type TypeSubst = HashMap<u64, Type>;

/// A renamed copy of `root` with `subst` applied, and the pairs (original
/// function literal, its copy).
pub(crate) fn dedup(root: &Expr, subst: &TypeSubst) -> (Expr, Vec<(Expr, Expr)>) {
    let mut renamer = Renamer {
        subst,
        use_types: use_types(root),
        vars: HashMap::default(),
        type_vars: HashMap::default(),
        functions: Vec::new(),
    };
    let (copy, _) = renamer.copy(root);
    (copy, renamer.functions)
}

/// The variables used in `root` but bound outside it, in first-use order.
pub(super) fn free_vars(root: &Expr) -> Vec<Var> {
    let mut bound: HashSet<VarId> = HashSet::default();
    let mut used: Vec<Var> = Vec::new();
    let mut used_ids: HashSet<VarId> = HashSet::default();
    walk_uses(root, &mut |expr, is_binder| {
        let Some(var) = expr.as_var() else {
            return;
        };
        if is_binder {
            bound.insert(var.id());
        } else if used_ids.insert(var.id()) {
            used.push(var);
        }
    });
    used.retain(|v| !bound.contains(&v.id()));
    used
}

/// The checked type of each variable's uses in `root`.
pub(super) fn use_types(root: &Expr) -> HashMap<VarId, Option<Type>> {
    let mut types = HashMap::default();
    walk_uses(root, &mut |expr, is_binder| {
        if let (false, ExprKind::Var(data)) = (is_binder, expr.kind()) {
            types
                .entry(data.id)
                .or_insert_with(|| expr.checked_type().cloned());
        }
    });
    types
}

/// Calls `f(node, is_binder)` on every node of `root` once, in pre-order;
/// binders are function parameters, `let` variables and pattern variables
/// (a binder and its uses are the same node, so the position tells them
/// apart, not the node).
fn walk_uses(root: &Expr, f: &mut impl FnMut(&Expr, bool)) {
    let mut seen: HashSet<usize> = HashSet::default();
    let mut stack: Vec<Expr> = vec![root.clone()];
    while let Some(expr) = stack.pop() {
        if !seen.insert(expr.addr()) {
            continue;
        }
        f(&expr, false);
        let mut children: Vec<Expr> = Vec::new();
        match expr.kind() {
            ExprKind::Let { var, value, body } => {
                f(var.expr(), true);
                children.push(value.clone());
                children.push(body.clone());
            }
            ExprKind::Function(data) => {
                for p in &data.params {
                    f(p.expr(), true);
                }
                children.push(data.body.clone());
            }
            ExprKind::Match { data, clauses, .. } => {
                children.push(data.clone());
                for clause in clauses {
                    for v in super::pattern_vars(&clause.pattern) {
                        f(v.expr(), true);
                    }
                    children.push(clause.rhs.clone());
                }
            }
            _ => for_each_child(&expr, |c| children.push(c.clone())),
        }
        stack.extend(children.into_iter().rev());
    }
}

struct Renamer<'a> {
    subst: &'a TypeSubst,
    use_types: HashMap<VarId, Option<Type>>,
    vars: HashMap<VarId, Var>,
    type_vars: HashMap<u64, TypeVar>,
    functions: Vec<(Expr, Expr)>,
}

impl Renamer<'_> {
    /// A copy of `ty` and whether the substitution changed it.
    fn ty(&self, ty: &Type) -> (Type, bool) {
        match ty.kind() {
            TypeKind::Var(tv) => {
                if let Some(replacement) = self.subst.get(&tv.id()) {
                    // A parameter replaced by itself (a function evaluated
                    // for unknown type arguments) is no change, as TVM's
                    // `same_as` sees it.
                    let same = matches!(replacement.kind(), TypeKind::Var(r) if r.id() == tv.id());
                    (replacement.clone(), !same)
                } else if let Some(renamed) = self.type_vars.get(&tv.id()) {
                    (Type::var(renamed.clone()), false)
                } else {
                    (ty.clone(), false)
                }
            }
            TypeKind::Tuple(fields) => {
                let (fields, changed) = self.types(fields);
                (Type::tuple(fields), changed)
            }
            TypeKind::Func(func) => {
                let (params, changed_params) = self.types(&func.params);
                let (ret, changed_ret) = self.ty(&func.ret);
                (
                    Type::func(params, ret, func.type_params.clone()),
                    changed_params || changed_ret,
                )
            }
            TypeKind::Call { func, args } => {
                let (func, changed_func) = self.ty(func);
                let (args, changed_args) = self.types(args);
                (
                    Type::new(TypeKind::Call { func, args }),
                    changed_func || changed_args,
                )
            }
            TypeKind::Ref(inner) => {
                let (inner, changed) = self.ty(inner);
                (Type::new(TypeKind::Ref(inner)), changed)
            }
            TypeKind::Tensor(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => {
                (ty.clone(), false)
            }
        }
    }

    fn types(&self, types: &[Type]) -> (Vec<Type>, bool) {
        let mut changed = false;
        let out = types
            .iter()
            .map(|t| {
                let (t, c) = self.ty(t);
                changed |= c;
                t
            })
            .collect();
        (out, changed)
    }

    fn opt_ty(&self, ty: Option<&Type>) -> (Option<Type>, bool) {
        match ty {
            Some(t) => {
                let (t, changed) = self.ty(t);
                (Some(t), changed)
            }
            None => (None, false),
        }
    }

    fn fresh(&mut self, var: &Var) -> Var {
        let data = var.data();
        let (annotation, changed) = self.opt_ty(data.type_annotation.as_ref());
        let fresh = Var::with_id(
            VarId::fresh(),
            data.name.clone(),
            annotation,
            data.virtual_device.as_deref().cloned(),
            var.expr().span(),
        );
        let checked = if changed {
            None
        } else {
            self.use_types.get(&data.id).cloned().flatten()
        };
        let fresh = match checked {
            Some(ty) => fresh.with_checked_type(ty),
            None => fresh,
        };
        self.vars.insert(data.id, fresh.clone());
        fresh
    }

    fn pattern(&mut self, pattern: &Pattern) -> Pattern {
        match pattern {
            Pattern::Wildcard => Pattern::Wildcard,
            Pattern::Var(v) => Pattern::Var(self.fresh(v)),
            Pattern::Constructor(c, fields) => {
                Pattern::Constructor(c.clone(), fields.iter().map(|p| self.pattern(p)).collect())
            }
            Pattern::Tuple(fields) => {
                Pattern::Tuple(fields.iter().map(|p| self.pattern(p)).collect())
            }
        }
    }

    fn rebuilt(original: &Expr, kind: ExprKind, changed: bool) -> Expr {
        let checked = if changed {
            None
        } else {
            original.checked_type().cloned()
        };
        Expr::with_type(kind, original.span(), checked)
    }

    /// The copy of `expr` and whether the substitution changed it.
    fn copy(&mut self, expr: &Expr) -> (Expr, bool) {
        super::with_stack(|| self.copy_here(expr))
    }

    fn copy_here(&mut self, expr: &Expr) -> (Expr, bool) {
        match expr.kind() {
            ExprKind::Var(data) => match self.vars.get(&data.id) {
                Some(renamed) => (renamed.expr().clone(), false),
                None => (expr.clone(), false),
            },
            ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::Op(_)
            | ExprKind::Constructor(_) => (expr.clone(), false),
            ExprKind::Tuple(fields) => {
                let (fields, changed) = self.copies(fields);
                (
                    Self::rebuilt(expr, ExprKind::Tuple(fields), changed),
                    changed,
                )
            }
            ExprKind::TupleGetItem { tuple, index } => {
                let (tuple, changed) = self.copy(tuple);
                let kind = ExprKind::TupleGetItem {
                    tuple,
                    index: *index,
                };
                (Self::rebuilt(expr, kind, changed), changed)
            }
            ExprKind::Call(call) => {
                let (callee, c1) = self.copy(&call.callee);
                let (args, c2) = self.copies(&call.args);
                let (type_args, c3) = self.types(&call.type_args);
                let changed = c1 || c2 || c3;
                let kind = ExprKind::Call(Call {
                    callee,
                    args,
                    attrs: call.attrs.clone(),
                    type_args: type_args.into(),
                });
                (Self::rebuilt(expr, kind, changed), changed)
            }
            ExprKind::Let { .. } => self.copy_lets(expr),
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let (cond, c1) = self.copy(cond);
                let (then_branch, c2) = self.copy(then_branch);
                let (else_branch, c3) = self.copy(else_branch);
                let changed = c1 || c2 || c3;
                let kind = ExprKind::If {
                    cond,
                    then_branch,
                    else_branch,
                };
                (Self::rebuilt(expr, kind, changed), changed)
            }
            ExprKind::Function(data) => {
                let type_params: Vec<TypeVar> = data
                    .type_params
                    .iter()
                    .map(|tp| {
                        let fresh = TypeVar::new(tp.name(), tp.kind());
                        self.type_vars.insert(tp.id(), fresh.clone());
                        fresh
                    })
                    .collect();
                let params: Vec<Var> = data.params.iter().map(|p| self.fresh(p)).collect();
                let (body, c1) = self.copy(&data.body);
                let (ret_type, c2) = self.opt_ty(data.ret_type.as_ref());
                let c3 = data
                    .params
                    .iter()
                    .any(|p| self.opt_ty(p.type_annotation()).1);
                let changed = c1 || c2 || c3;
                let kind = ExprKind::Function(Box::new(FunctionData {
                    params,
                    body,
                    ret_type,
                    type_params,
                    ..(**data).clone()
                }));
                let copy = Self::rebuilt(expr, kind, changed);
                self.functions.push((expr.clone(), copy.clone()));
                (copy, changed)
            }
            ExprKind::Match {
                data,
                clauses,
                complete,
            } => {
                let (data, mut changed) = self.copy(data);
                let mut copied = Vec::with_capacity(clauses.len());
                for clause in clauses {
                    let pattern = self.pattern(&clause.pattern);
                    let (rhs, c) = self.copy(&clause.rhs);
                    changed |= c;
                    copied.push(Clause { pattern, rhs });
                }
                let kind = ExprKind::Match {
                    data,
                    clauses: copied,
                    complete: *complete,
                };
                (Self::rebuilt(expr, kind, changed), changed)
            }
            ExprKind::RefCreate(value) => {
                let (value, changed) = self.copy(value);
                (
                    Self::rebuilt(expr, ExprKind::RefCreate(value), changed),
                    changed,
                )
            }
            ExprKind::RefRead(value) => {
                let (value, changed) = self.copy(value);
                (
                    Self::rebuilt(expr, ExprKind::RefRead(value), changed),
                    changed,
                )
            }
            ExprKind::RefWrite { reference, value } => {
                let (reference, c1) = self.copy(reference);
                let (value, c2) = self.copy(value);
                let changed = c1 || c2;
                let kind = ExprKind::RefWrite { reference, value };
                (Self::rebuilt(expr, kind, changed), changed)
            }
        }
    }

    fn copies(&mut self, exprs: &[Expr]) -> (Vec<Expr>, bool) {
        let mut changed = false;
        let out = exprs
            .iter()
            .map(|e| {
                let (e, c) = self.copy(e);
                changed |= c;
                e
            })
            .collect();
        (out, changed)
    }

    /// A chain of `let`s, copied in a loop (chains are as long as programs).
    fn copy_lets(&mut self, expr: &Expr) -> (Expr, bool) {
        let mut chain: Vec<(Expr, Var, Expr, bool)> = Vec::new();
        let mut current = expr;
        while let ExprKind::Let { var, value, body } = current.kind() {
            let fresh = self.fresh(var);
            let (value, changed) = self.copy(value);
            chain.push((current.clone(), fresh, value, changed));
            current = body;
        }
        let (mut body, mut changed) = self.copy(current);
        for (original, var, value, value_changed) in chain.into_iter().rev() {
            changed |= value_changed;
            let kind = ExprKind::Let { var, value, body };
            body = Self::rebuilt(&original, kind, changed);
        }
        (body, changed)
    }
}
