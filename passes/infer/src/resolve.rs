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
use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::interner::Interner;
use relay_ir::rewrite::{children, post_order, post_order_each, rebuild, NodeUpdate};
use relay_ir::source::Span;
use relay_ir::{Call, Dim, Expr, ExprKind, FunctionData, Type, TypeKind, VarData};

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
            Code::UninferredType,
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
    globals: &'i super::GlobalTypes,
    memo: IdMap<usize, Expr>,
    vars: IdMap<u64, Expr>,
    pub unresolved: Unresolved,
    /// Shares equal result types between the nodes (the editor's checker;
    /// see [`Resolver::sharing_types`]).
    interner: Option<&'i Interner>,
}

impl<'i, 'a> Resolver<'i, 'a> {
    pub fn new(inf: &'i mut Inferencer<'a>, globals: &'i super::GlobalTypes) -> Self {
        Resolver {
            inf,
            globals,
            memo: IdMap::default(),
            vars: IdMap::default(),
            unresolved: Unresolved::default(),
            interner: None,
        }
    }

    /// Gives equal tensor and tuple types of the nodes one object from
    /// `interner` (see `relay_ir::interner`). The types of constants are
    /// never shared: which dimension objects they hold is printed in a
    /// metadata section.
    pub fn sharing_types(mut self, interner: Option<&'i Interner>) -> Self {
        self.interner = interner;
        self
    }

    /// `ty`, or an equal type shared through the interner.
    fn shared(&self, ty: Type) -> Type {
        match self.interner {
            Some(interner) => interner.ty(ty),
            None => ty,
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
    fn resolved(&mut self, e: &Expr) -> Option<Type> {
        let ty = self.inf.resolved_type_of(e)?;
        if ty.is_incomplete() {
            self.unresolved.count += 1;
            if self.unresolved.first.is_none() {
                self.unresolved.first = Some(e.span());
            }
        }
        Some(ty)
    }

    /// A type that becomes an annotation (of a variable without one, or
    /// the return type of a function without one) must be complete: the
    /// annotation is printed, and a hole inside it (`List[?]` of a list
    /// nothing constrains) has no text that parses. TVM leaves the hole
    /// and prints `meta[IncompleteType][0]`, which no parser reads back;
    /// we report it as TVM reports a type it could not infer at all.
    fn note_unwritable(&mut self, e: &Expr, ty: &Type) {
        if ty.contains_incomplete() && !ty.is_incomplete() {
            self.unresolved.count += 1;
            if self.unresolved.first.is_none() {
                self.unresolved.first = Some(e.span());
            }
        }
    }

    pub fn run(&mut self, root: &Expr) -> Expr {
        if let Some(order) = self.inf.take_post_order(root) {
            self.memo.reserve(order.len());
            for node in &order {
                let new = self.rebuild(node);
                self.remember(node, new);
            }
            return self.lookup(root);
        }
        post_order_each(root, |node| {
            let new = self.rebuild(node);
            self.remember(node, new);
        });
        self.lookup(root)
    }

    fn remember(&mut self, node: &Expr, new: Expr) {
        match node.kind() {
            ExprKind::Var(v) => {
                self.vars.insert(v.id.0, new);
            }
            // An operator stays itself (`lookup` falls back to the node),
            // and there is one per call: not worth a table entry.
            ExprKind::Op(_) => {}
            _ => {
                self.memo.insert(node.addr(), new);
            }
        }
    }

    /// [`Self::run`], also returning the input nodes in post-order and,
    /// aligned with them, the node each became: what an incremental
    /// re-check needs to carry the result over to an equal function.
    pub fn run_recording(&mut self, root: &Expr) -> (Expr, Vec<Expr>, Vec<Expr>) {
        let order = match self.inf.take_post_order(root) {
            Some(order) => order,
            None => post_order(root),
        };
        let mut outputs = Vec::with_capacity(order.len());
        for node in &order {
            let new = self.rebuild(node);
            outputs.push(new.clone());
            self.remember(node, new);
        }
        (self.lookup(root), order, outputs)
    }

    /// The resolution of a type argument that is the type of the call's
    /// argument `old` (an operator's type arguments are its arguments'
    /// types), taken from the argument's new node `new` instead of
    /// resolving it again: resolving a type to a tensor gives the same
    /// object every time, and `new` was just given it.
    fn resolved_as_argument(
        &self,
        t: &Type,
        old: Option<&Expr>,
        new: Option<&Expr>,
    ) -> Option<Type> {
        let (old, new) = (old?, new?);
        if new.ptr_eq(old) || matches!(old.kind(), ExprKind::GlobalVar(_) | ExprKind::Op(_)) {
            return None;
        }
        let resolved = new.checked_type().filter(|r| r.as_tensor().is_some())?;
        self.inf
            .type_of(old)
            .is_some_and(|recorded| recorded.ptr_eq(t))
            .then(|| resolved.clone())
    }

    /// A call: always a new node on first inference (it gets a type), so
    /// built directly rather than through the generic [`rebuild`].
    fn rebuild_call(&mut self, e: &Expr, call: &Call) -> Expr {
        let checked_type = self.resolved(e).map(|t| self.shared(t));
        let callee = self.lookup(&call.callee);
        let args: Vec<Expr> = call.args.iter().map(|a| self.lookup(a)).collect();
        // Each call is rebuilt once: its recorded type arguments are
        // resolved in place.
        let mut type_args = self.inf.take_call_type_args(e);
        for (i, t) in type_args.iter_mut().flatten().enumerate() {
            *t = match self.resolved_as_argument(t, call.args.get(i), args.get(i)) {
                Some(resolved) => resolved,
                None => {
                    let resolved = self.inf.solver.resolve(t);
                    self.shared(resolved)
                }
            };
        }
        let same_type = |a: Option<&Type>, b: Option<&Type>| match (a, b) {
            (_, None) => true,
            (Some(a), Some(b)) => a.ptr_eq(b) || a == b,
            (None, Some(_)) => false,
        };
        let type_args_same = match &type_args {
            None => true,
            Some(new) => {
                call.type_args.len() == new.len()
                    && call
                        .type_args
                        .iter()
                        .zip(new)
                        .all(|(a, b)| a.ptr_eq(b) || a == b)
            }
        };
        if callee.ptr_eq(&call.callee)
            && args.iter().zip(&call.args).all(|(a, b)| a.ptr_eq(b))
            && same_type(e.checked_type(), checked_type.as_ref())
            && type_args_same
        {
            return e.clone();
        }
        let ty = checked_type.or_else(|| e.checked_type().cloned());
        Expr::with_type(
            ExprKind::Call(Call {
                callee,
                args,
                attrs: call.attrs.clone(),
                type_args: match type_args {
                    Some(resolved) => resolved.into(),
                    None => call.type_args.clone(),
                },
            }),
            e.span(),
            ty,
        )
    }

    fn rebuild(&mut self, e: &Expr) -> Expr {
        match e.kind() {
            ExprKind::Var(v) => {
                if let Some(done) = self.vars.get(&v.id.0) {
                    return done.clone();
                }
                let Some(ty) = self.resolved(e) else {
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
                let ty = match v.type_annotation.as_ref() {
                    // Typed by its annotation: the lowering's object.
                    Some(a) if a.ptr_eq(&ty) => ty,
                    a => match annotation_if_same(a, ty) {
                        same if a.is_some_and(|a| a.ptr_eq(&same)) => same,
                        other => self.shared(other),
                    },
                };
                self.note_unwritable(e, &ty);
                let update = NodeUpdate {
                    var_annotation: Some(ty.clone()),
                    checked_type: Some(ty),
                    ..NodeUpdate::default()
                };
                rebuild(e, &[], update)
            }
            ExprKind::Op(_) => e.clone(),
            ExprKind::Call(call) => self.rebuild_call(e, call),
            // A constant takes the inferred type object even when it equals
            // the one it had (TVM compares with `same_as`): a constant's type
            // is made anew by every inference, and which dimension objects it
            // shares is printed in the metadata section. Other nodes keep
            // an equal old type; their types are never printed as objects.
            ExprKind::Constant(data) => {
                let Some(ty) = self.resolved(e) else {
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
                let checked_type = self.resolved(e);
                let new: Vec<Expr> = children(e).into_iter().map(|c| self.lookup(c)).collect();
                let checked_type = match e.kind() {
                    ExprKind::Function(f) => checked_type
                        .map(|t| params_as_typed(t, new.get(..f.params.len()).unwrap_or(&[]))),
                    _ => checked_type.map(|t| self.shared(t)),
                };
                let ret_type = match (e.kind(), checked_type.as_ref().map(Type::kind)) {
                    (ExprKind::Function(f), Some(TypeKind::Func(ft))) if f.ret_type.is_none() => {
                        self.note_unwritable(e, &ft.ret);
                        Some(ft.ret.clone())
                    }
                    _ => None,
                };
                let update = NodeUpdate {
                    checked_type,
                    type_args: None,
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
                                let data = Box::new(FunctionData {
                                    ret_type: Some(ret),
                                    ..(**f).clone()
                                });
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

/// The type of an annotated variable: its annotation itself when the
/// solver's type equals it (TVM's inferencer starts a variable from its
/// annotation object). Without this every parameter of a model held a
/// second, equal copy of its annotation in the typed module (51,590 of
/// them, about 6 MB, for the 10 MB benchmark module). Annotations with
/// symbolic sizes keep the solver's type: which dimension objects those
/// share is printed (see `Resolver::resolved_annotation`).
pub(crate) fn annotation_if_same(annotation: Option<&Type>, ty: Type) -> Type {
    match annotation {
        Some(a)
            if !a.ptr_eq(&ty) && !has_symbolic_dim(a) && !a.contains_incomplete() && *a == ty =>
        {
            a.clone()
        }
        _ => ty,
    }
}

/// A function's type with each parameter type replaced by the typed
/// parameter's own type object when the two are equal (see
/// [`annotation_if_same`]: the function type otherwise keeps the copies
/// alive). A new function type only when some parameter was replaced.
pub(crate) fn params_as_typed(ty: Type, params: &[Expr]) -> Type {
    let TypeKind::Func(ft) = ty.kind() else {
        return ty;
    };
    if ft.params.len() != params.len() {
        return ty;
    }
    let typed = |(p, node): (&Type, &Expr)| match node.checked_type() {
        Some(t) if !t.ptr_eq(p) && !has_symbolic_dim(p) && t == p => t.clone(),
        _ => p.clone(),
    };
    let replaced: Vec<Type> = ft.params.iter().zip(params).map(typed).collect();
    if replaced.iter().zip(&ft.params).all(|(a, b)| a.ptr_eq(b)) {
        return ty;
    }
    Type::func(replaced, ft.ret.clone(), ft.type_params.clone())
}

/// Whether a symbolic size (`meta[…]` or computed) occurs in `t`.
fn has_symbolic_dim(t: &Type) -> bool {
    t.any_part(|t| {
        t.as_tensor().is_some_and(|tensor| {
            tensor
                .shape
                .iter()
                .any(|d| matches!(d, Dim::Meta(_) | Dim::Expr(_)))
        })
    })
}
