//! Constraint generation: TVM's `TypeInferencer` (`type_infer.cc`).
//!
//! Expressions are visited children first and memoised by node identity
//! (variables by id), so a DAG is visited once. The walk uses an explicit
//! stack of jobs instead of recursion, and performs the side effects of each
//! node kind (unifications, relations, calls of the solver) in the order
//! TVM's visitor does: the callee of a call before its arguments, a
//! function's pending relations solved before its parameters are visited,
//! a `let`'s variable typed before its body, and so on.

use super::display::{show_pattern, show_type};
use super::exhaust::unmatched_cases;
use super::kind::kind_check;
use super::relation_contract::RelationFn;
use super::solver::{subst, Constraint, IdMap, NewRelation, Occurs, RelFunc, Site, Solver};
use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::dtype::DataType;
use relay_ir::op::{custom, OpDef};
use relay_ir::source::Span;
use relay_ir::{Call, Dim, Expr, ExprKind, FuncType, IRModule, Pattern, Type, TypeKind, Var};
use std::collections::HashMap;

/// Finds the relation registered under a name (`OpDef::type_rel`).
pub type RelationLookup<'a> = &'a (dyn Fn(&str) -> Option<RelationFn> + Sync);

/// Inference of this function stopped at an error (TVM's `EmitFatal`); the
/// diagnostic has been recorded.
#[derive(Debug)]
pub(crate) struct Fatal;

/// A step of the walk. Nodes are borrowed from the root, which outlives
/// the walk: no reference count changes hands per step.
enum Job<'e> {
    Visit(&'e Expr),
    Resume(&'e Expr, Stage),
}

enum Stage {
    Call,
    Tuple,
    TupleGetItem,
    Function,
    LetValue(Type),
    LetBody,
    IfCond,
    IfBranches,
    MatchData,
    MatchRhs(usize, Type),
    RefCreate,
    RefRead,
    RefWriteRef,
    RefWriteValue(Type),
}

/// The state of inferring one function (or one expression).
pub(crate) struct Inferencer<'a> {
    module: Option<&'a IRModule>,
    lookup: RelationLookup<'a>,
    pub solver: Solver,
    /// TVM's `type_map_`: the type of each visited node, by address.
    types: IdMap<usize, Type>,
    /// The type of each variable, by id.
    var_types: IdMap<u64, Type>,
    /// The type arguments of calls, by address.
    type_args: IdMap<usize, Vec<Type>>,
    /// Operator types (`None`: the operator has no usable relation).
    op_types: IdMap<usize, Option<OpType>>,
    /// Whether a call of an opaque operator (an unknown one, read
    /// leniently) or an untyped opaque constant was met: the unknown types
    /// that follow are expected, not an error.
    pub opaque_calls: bool,
    /// The types of global functions, from their annotations.
    global_types: HashMap<String, Type>,
    /// The nodes given a type, in the order they were: for the node kinds
    /// of dataflow graphs (no `let`, `if`, `match` or references) this is
    /// the post-order of the graph, which resolution then needs not find
    /// again. `None` once another kind is met.
    order: Option<Vec<Expr>>,
}

/// An operator's type, the one relation it carries and its number of
/// inputs.
struct OpType {
    ty: Type,
    relation: RelFunc,
    inputs: usize,
}

fn bool_scalar() -> Type {
    Type::scalar(DataType::bool())
}

impl<'a> Inferencer<'a> {
    pub fn new(module: Option<&'a IRModule>, lookup: RelationLookup<'a>) -> Inferencer<'a> {
        let mut solver = Solver::new();
        solver.sources = module.map(|m| m.sources.clone());
        Inferencer {
            module,
            lookup,
            solver,
            types: IdMap::default(),
            var_types: IdMap::default(),
            type_args: IdMap::default(),
            op_types: IdMap::default(),
            opaque_calls: false,
            global_types: HashMap::new(),
            order: Some(Vec::new()),
        }
    }

    /// Every node of `root`'s graph in post-order (see `order`), when the
    /// walk of `root` completed and met only dataflow nodes.
    /// Taken: a second call gives `None`.
    pub fn take_post_order(&mut self, root: &Expr) -> Option<Vec<Expr>> {
        self.order
            .as_ref()?
            .last()
            .filter(|last| last.ptr_eq(root))?;
        self.order.take()
    }

    // ---- results, for resolution ----

    /// The type inference gave `e`, if it was visited.
    pub fn type_of(&self, e: &Expr) -> Option<&Type> {
        match e.kind() {
            ExprKind::Var(v) => self.var_types.get(&v.id.0),
            _ => self.types.get(&e.addr()),
        }
    }

    /// [`Inferencer::type_of`], resolved by the solver.
    pub fn resolved_type_of(&mut self, e: &Expr) -> Option<Type> {
        let t = match e.kind() {
            ExprKind::Var(v) => self.var_types.get(&v.id.0),
            _ => self.types.get(&e.addr()),
        }?;
        Some(self.solver.resolve(t))
    }

    /// The type arguments recorded for a call, taken out (resolution
    /// rebuilds each call once).
    pub fn take_call_type_args(&mut self, e: &Expr) -> Option<Vec<Type>> {
        self.type_args.remove(&e.addr())
    }

    // ---- errors ----

    fn emit(&mut self, code: Code, span: Option<Span>, message: impl Into<String>) {
        let mut d = Diagnostic::error(code, message);
        d.span = span;
        self.solver.diagnostics.push(d);
    }

    fn fatal(&mut self, code: Code, span: Option<Span>, message: impl Into<String>) -> Fatal {
        self.emit(code, span, message);
        Fatal
    }

    /// Unification from the inferencer: a mismatch is reported and
    /// inference goes on; a failed occurs check stops it.
    fn unify(
        &mut self,
        a: &Type,
        b: &Type,
        site: &Site,
        assign_lhs: bool,
        assign_rhs: bool,
    ) -> Result<Type, Fatal> {
        match self.solver.unify(a, b, site, assign_lhs, assign_rhs) {
            Ok(t) => Ok(t),
            Err(occurs) => Err(self.occurs_error(a, b, site, &occurs)),
        }
    }

    fn occurs_error(&mut self, a: &Type, b: &Type, site: &Site, occurs: &Occurs) -> Fatal {
        let a = self.solver.resolve(a);
        let b = self.solver.resolve(b);
        let mut d = Diagnostic::error(
            Code::TypeMismatch,
            format!(
                "Error unifying `{}` and `{}`: {}",
                show_type(&a),
                show_type(&b),
                occurs.describe()
            ),
        );
        d.span = site.span;
        d.labels = site.labels.clone();
        self.solver.diagnostics.push(d);
        Fatal
    }

    // ---- recording ----

    fn has_type(&self, e: &Expr) -> bool {
        self.type_of(e).is_some()
    }

    fn get(&self, e: &Expr) -> Type {
        self.type_of(e).cloned().unwrap_or_else(Type::incomplete)
    }

    /// TVM's `GetType` bookkeeping: kind-check the type, then record it.
    fn record(&mut self, e: &Expr, ty: Type) -> Result<(), Fatal> {
        if let Err(message) = kind_check(&ty, self.module) {
            return Err(self.fatal(Code::IllKindedType, e.span(), message));
        }
        self.set(e, ty);
        Ok(())
    }

    fn set(&mut self, e: &Expr, ty: Type) {
        let old = match e.kind() {
            ExprKind::Var(v) => self.var_types.insert(v.id.0, ty),
            _ => self.types.insert(e.addr(), ty),
        };
        if old.is_none() {
            if let Some(order) = &mut self.order {
                order.push(e.clone());
            }
        }
    }

    /// Visits a variable where TVM calls `GetType` on it: its annotation or
    /// a fresh unknown type, unless it already has a type.
    fn var_type_or_visit(&mut self, var: &Var) -> Result<Type, Fatal> {
        if let Some(t) = self.var_types.get(&var.id().0) {
            return Ok(t.clone());
        }
        let ty = var
            .type_annotation()
            .cloned()
            .unwrap_or_else(Type::incomplete);
        self.record(var.expr(), ty.clone())?;
        Ok(ty)
    }

    // ---- the walk ----

    /// Generates the constraints of `root` (and solves as TVM does on the
    /// way). Stops at the first fatal error.
    pub fn run(&mut self, root: &Expr) -> Result<(), Fatal> {
        self.reserve_for(root);
        let mut stack = vec![Job::Visit(root)];
        while let Some(job) = stack.pop() {
            match job {
                Job::Visit(e) => {
                    if !self.has_type(e) {
                        self.begin(e, &mut stack)?;
                    }
                }
                Job::Resume(e, stage) => self.resume(e, stage, &mut stack)?,
            }
        }
        Ok(())
    }

    /// Sizes the tables for `root` up front: growing a table of thousands
    /// of entries rehashes all of them, several times over. The number of
    /// nodes is estimated from the length of the source text (real models
    /// have one node per 20 to 80 bytes); without a span nothing is
    /// reserved. A wrong estimate costs only time or memory.
    fn reserve_for(&mut self, root: &Expr) {
        const BYTES_PER_NODE: usize = 20;
        const MAX_NODES: usize = 1 << 16;
        let Some(span) = root.span() else { return };
        let nodes = (u32::from(span.range.len()) as usize / BYTES_PER_NODE).min(MAX_NODES);
        if nodes < 64 {
            return;
        }
        // About half the nodes of a dataflow graph are calls (one relation
        // and one set of type arguments each), most of the rest their
        // operators.
        self.types.reserve(nodes);
        if let Some(order) = &mut self.order {
            order.reserve(nodes);
        }
        self.type_args.reserve(nodes / 2);
        self.solver.reserve(nodes / 2);
    }

    fn begin<'e>(&mut self, e: &'e Expr, stack: &mut Vec<Job<'e>>) -> Result<(), Fatal> {
        if matches!(
            e.kind(),
            ExprKind::Let { .. }
                | ExprKind::If { .. }
                | ExprKind::Match { .. }
                | ExprKind::RefCreate(_)
                | ExprKind::RefRead(_)
                | ExprKind::RefWrite { .. }
        ) {
            self.order = None;
        }
        match e.kind() {
            ExprKind::Var(v) => {
                // A constant whose value and type the text did not have
                // (read leniently): unknown by design, like an opaque call.
                if v.type_annotation.is_none() && relay_ir::opaque::is_opaque_constant_name(&v.name)
                {
                    self.opaque_calls = true;
                }
                let ty = v.type_annotation.clone().unwrap_or_else(Type::incomplete);
                self.record(e, ty)
            }
            ExprKind::GlobalVar(g) => {
                let ty = self.global_type(g.name(), e.span())?;
                self.record(e, ty)
            }
            ExprKind::Constant(data) => {
                let shape = data.shape.iter().map(|&d| Dim::int32(d)).collect();
                self.record(e, Type::tensor(shape, data.dtype))
            }
            ExprKind::Op(op) => {
                let ty = match self.op_type(op) {
                    Some(t) => t,
                    None => Type::incomplete(),
                };
                self.set(e, ty);
                Ok(())
            }
            ExprKind::Constructor(c) => {
                let name = c.data().belong_to.name();
                let Some(td) = self.module.and_then(|m| m.type_definition(name)) else {
                    return Err(self.fatal(
                        Code::UnknownConstructor,
                        e.span(),
                        format!(
                            "the type `{name}` of constructor `{}` is not defined",
                            c.name()
                        ),
                    ));
                };
                let ret = Type::new(TypeKind::Call {
                    func: Type::new(TypeKind::GlobalVar(td.header.clone())),
                    args: td.type_vars.iter().cloned().map(Type::var).collect(),
                });
                let ty = Type::func(c.data().inputs.clone(), ret, td.type_vars.clone());
                self.record(e, ty)
            }
            ExprKind::Tuple(fields) => {
                for f in fields.iter().rev() {
                    stack.push(Job::Visit(f));
                }
                // The resume job goes under the fields' jobs.
                let n = fields.len();
                stack.insert(stack.len() - n, Job::Resume(e, Stage::Tuple));
                Ok(())
            }
            ExprKind::TupleGetItem { tuple, .. } => {
                stack.push(Job::Resume(e, Stage::TupleGetItem));
                stack.push(Job::Visit(tuple));
                Ok(())
            }
            ExprKind::Call(call) => {
                let n = call.args.len() + 1;
                for a in call.args.iter().rev() {
                    stack.push(Job::Visit(a));
                }
                stack.push(Job::Visit(&call.callee));
                // The resume job goes under the callee's and arguments'.
                stack.insert(stack.len() - n, Job::Resume(e, Stage::Call));
                Ok(())
            }
            ExprKind::Function(f) => {
                self.solver.solve();
                for p in &f.params {
                    self.var_type_or_visit(p)?;
                }
                stack.push(Job::Resume(e, Stage::Function));
                stack.push(Job::Visit(&f.body));
                Ok(())
            }
            ExprKind::Let { var, value, .. } => {
                let is_function = matches!(value.kind(), ExprKind::Function(_));
                let mut let_type = Type::incomplete();
                if is_function {
                    let_type = self.var_type_or_visit(var)?;
                }
                if let Some(annotation) = var.type_annotation() {
                    let site =
                        Site::at(e.span()).label(var.expr().span(), "the variable's annotation");
                    let annotation = annotation.clone();
                    let_type = self.unify(&let_type, &annotation, &site, true, true)?;
                }
                stack.push(Job::Resume(e, Stage::LetValue(let_type)));
                stack.push(Job::Visit(value));
                Ok(())
            }
            ExprKind::If { cond, .. } => {
                stack.push(Job::Resume(e, Stage::IfCond));
                stack.push(Job::Visit(cond));
                Ok(())
            }
            ExprKind::Match { data, .. } => {
                stack.push(Job::Resume(e, Stage::MatchData));
                stack.push(Job::Visit(data));
                Ok(())
            }
            ExprKind::RefCreate(value) => {
                stack.push(Job::Resume(e, Stage::RefCreate));
                stack.push(Job::Visit(value));
                Ok(())
            }
            ExprKind::RefRead(r) => {
                stack.push(Job::Resume(e, Stage::RefRead));
                stack.push(Job::Visit(r));
                Ok(())
            }
            ExprKind::RefWrite { reference, .. } => {
                stack.push(Job::Resume(e, Stage::RefWriteRef));
                stack.push(Job::Visit(reference));
                Ok(())
            }
        }
    }

    fn resume<'e>(
        &mut self,
        e: &'e Expr,
        stage: Stage,
        stack: &mut Vec<Job<'e>>,
    ) -> Result<(), Fatal> {
        match (e.kind(), stage) {
            (ExprKind::Tuple(fields), Stage::Tuple) => {
                let ty = Type::tuple(fields.iter().map(|f| self.get(f)).collect());
                self.record(e, ty)
            }
            (ExprKind::TupleGetItem { tuple, index }, Stage::TupleGetItem) => {
                let tuple_ty = self.get(tuple);
                let out = Type::incomplete();
                self.solver.add_relation(NewRelation {
                    func: RelFunc::TupleGetItem(*index),
                    args: vec![tuple_ty, out.clone()],
                    num_inputs: 1,
                    attrs: None,
                    span: e.span(),
                    site: e.clone(),
                });
                self.record(e, out)
            }
            (ExprKind::Call(call), Stage::Call) => {
                let ty = self.call(e, call)?;
                self.record(e, ty)
            }
            (ExprKind::Function(f), Stage::Function) => {
                let params: Vec<Type> = f.params.iter().map(|p| self.get(p.expr())).collect();
                let mut rtype = self.get(&f.body);
                if let TypeKind::Func(ft) = rtype.kind() {
                    if !ft.type_params.is_empty() {
                        let fresh = ft.type_params.iter().map(|_| Type::incomplete()).collect();
                        rtype = self.instantiate(&rtype, ft, fresh);
                    }
                }
                if let Some(ret) = &f.ret_type {
                    let site = Site::at(e.span()).about(&f.body, "the body of the function");
                    rtype = self.unify(ret, &rtype, &site, true, true)?;
                }
                let fn_ty = Type::func(params, rtype, f.type_params.clone());
                let ty = self.solver.resolve(&fn_ty);
                self.record(e, ty)
            }
            (ExprKind::Let { var, value, body }, Stage::LetValue(let_type)) => {
                let vtype = self.get(value);
                let mut site = Site::at(e.span()).about(value, "the bound value");
                if var.type_annotation().is_some() {
                    site = site.label(var.expr().span(), "the variable's annotation");
                }
                let let_type = self.unify(&let_type, &vtype, &site, true, true)?;
                self.var_types.insert(var.id().0, let_type);
                stack.push(Job::Resume(e, Stage::LetBody));
                stack.push(Job::Visit(body));
                Ok(())
            }
            (ExprKind::Let { body, .. }, Stage::LetBody) => {
                let ty = self.get(body);
                self.set(e, ty);
                Ok(())
            }
            (
                ExprKind::If {
                    cond,
                    then_branch,
                    else_branch,
                },
                Stage::IfCond,
            ) => {
                let cond_ty = self.get(cond);
                // A variable's span is its declaration: then the `if` is
                // the place to point at.
                let site = match cond.kind() {
                    ExprKind::Var(_) => Site::at(e.span()).about(cond, "the condition"),
                    _ => Site::at(cond.span()),
                };
                self.unify(&cond_ty, &bool_scalar(), &site, true, true)?;
                stack.push(Job::Resume(e, Stage::IfBranches));
                stack.push(Job::Visit(else_branch));
                stack.push(Job::Visit(then_branch));
                Ok(())
            }
            (
                ExprKind::If {
                    then_branch,
                    else_branch,
                    ..
                },
                Stage::IfBranches,
            ) => {
                let a = self.get(then_branch);
                let b = self.get(else_branch);
                let site = Site::at(e.span())
                    .about(then_branch, "the `then` branch")
                    .about(else_branch, "the `else` branch");
                let ty = self.unify(&a, &b, &site, true, true)?;
                self.record(e, ty)
            }
            (ExprKind::Match { data, clauses, .. }, Stage::MatchData) => {
                let dtype = self.get(data);
                for clause in clauses {
                    self.pattern(&clause.pattern, &dtype, e.span())?;
                }
                let rtype = Type::incomplete();
                match clauses.first() {
                    Some(first) => {
                        let rhs = &first.rhs;
                        stack.push(Job::Resume(e, Stage::MatchRhs(0, rtype)));
                        stack.push(Job::Visit(rhs));
                        Ok(())
                    }
                    None => self.finish_match(e, rtype),
                }
            }
            (ExprKind::Match { clauses, .. }, Stage::MatchRhs(i, rtype)) => {
                let rhs_ty = self.get(&clauses[i].rhs);
                let site = Site::at(e.span()).about(&clauses[i].rhs, "this clause's value");
                let rtype = self.unify(&rtype, &rhs_ty, &site, true, true)?;
                if let Some(next) = clauses.get(i + 1) {
                    let rhs = &next.rhs;
                    stack.push(Job::Resume(e, Stage::MatchRhs(i + 1, rtype)));
                    stack.push(Job::Visit(rhs));
                    Ok(())
                } else {
                    self.finish_match(e, rtype)
                }
            }
            (ExprKind::RefCreate(value), Stage::RefCreate) => {
                let ty = Type::new(TypeKind::Ref(self.get(value)));
                self.record(e, ty)
            }
            (ExprKind::RefRead(r), Stage::RefRead) => {
                let it = Type::incomplete();
                let rt = self.get(r);
                let expected = Type::new(TypeKind::Ref(it.clone()));
                self.unify(&rt, &expected, &Site::at(e.span()), true, true)?;
                self.record(e, it)
            }
            (ExprKind::RefWrite { reference, value }, Stage::RefWriteRef) => {
                let it = Type::incomplete();
                let rt = self.get(reference);
                let expected = Type::new(TypeKind::Ref(it.clone()));
                self.unify(&rt, &expected, &Site::at(e.span()), true, true)?;
                stack.push(Job::Resume(e, Stage::RefWriteValue(it)));
                stack.push(Job::Visit(value));
                Ok(())
            }
            (ExprKind::RefWrite { value, .. }, Stage::RefWriteValue(it)) => {
                let vt = self.get(value);
                self.unify(&vt, &it, &Site::at(e.span()), true, true)?;
                self.record(e, Type::unit())
            }
            _ => Ok(()),
        }
    }

    fn finish_match(&mut self, e: &Expr, rtype: Type) -> Result<(), Fatal> {
        let ExprKind::Match {
            clauses, complete, ..
        } = e.kind()
        else {
            return Ok(());
        };
        if *complete {
            match unmatched_cases(clauses, self.module) {
                Ok(missing) if !missing.is_empty() => {
                    let cases: Vec<String> = missing.iter().map(show_pattern).collect();
                    return Err(self.fatal(
                        Code::NonExhaustiveMatch,
                        e.span(),
                        format!(
                            "match expression does not handle the following cases: {}",
                            cases.join(", ")
                        ),
                    ));
                }
                Ok(_) => {}
                Err(message) => return Err(self.fatal(Code::PatternMismatch, e.span(), message)),
            }
        }
        self.record(e, rtype)
    }

    /// TVM's `VisitPattern`: constrains the scrutinee's type `t` by the
    /// pattern and types the pattern's variables.
    fn pattern(&mut self, p: &Pattern, t: &Type, span: Option<Span>) -> Result<(), Fatal> {
        match p {
            Pattern::Wildcard => Ok(()),
            Pattern::Var(var) => {
                let vt = self.var_type_or_visit(var)?;
                let site = Site::at(var.expr().span().or(span));
                self.unify(&vt, t, &site, true, true)?;
                Ok(())
            }
            Pattern::Constructor(ctor, fields) => {
                let name = ctor.data().belong_to.name();
                let Some(td) = self.module.and_then(|m| m.type_definition(name)) else {
                    return Err(self.fatal(
                        Code::PatternMismatch,
                        span,
                        format!(
                            "the type `{name}` of constructor `{}` is not defined",
                            ctor.name()
                        ),
                    ));
                };
                let unknown: Vec<Type> = td.type_vars.iter().map(|_| Type::incomplete()).collect();
                let expected = Type::new(TypeKind::Call {
                    func: Type::new(TypeKind::GlobalVar(ctor.data().belong_to.clone())),
                    args: unknown,
                });
                let before = self.solver.diagnostics.len();
                let site = Site::at(span);
                let unified = self.unify(t, &expected, &site, true, true)?;
                let reported = self.solver.diagnostics.len() > before;
                let TypeKind::Call { func, args } = unified.kind() else {
                    if reported {
                        return Err(Fatal);
                    }
                    let shown = self.solver.resolve(&unified);
                    return Err(self.fatal(
                        Code::PatternMismatch,
                        span,
                        format!("Expected a type call, got `{}`", show_type(&shown)),
                    ));
                };
                let header_ok = matches!(func.kind(), TypeKind::GlobalVar(g) if *g == td.header);
                if !header_ok {
                    return Err(self.fatal(
                        Code::PatternMismatch,
                        span,
                        format!(
                            "ADT headers must match, but we have `{}` and `{}`",
                            td.header.name(),
                            show_type(func)
                        ),
                    ));
                }
                if td.type_vars.len() != args.len() {
                    return Err(self.fatal(
                        Code::PatternMismatch,
                        span,
                        format!(
                            "The number of type args must match the number of type vars in the type data: {} != {}",
                            td.type_vars.len(),
                            args.len()
                        ),
                    ));
                }
                let mut map: IdMap<u64, Type> = IdMap::default();
                for (tv, a) in td.type_vars.iter().zip(args) {
                    map.insert(tv.id(), a.clone());
                }
                let inputs = &ctor.data().inputs;
                if inputs.len() != fields.len() {
                    return Err(self.fatal(
                        Code::PatternMismatch,
                        span,
                        format!(
                            "Not enough inputs for the constructor; expected {}, got {}",
                            inputs.len(),
                            fields.len()
                        ),
                    ));
                }
                let field_types: Vec<Type> = inputs.iter().map(|t| subst(t, &map)).collect();
                for (f, ft) in fields.iter().zip(&field_types) {
                    self.pattern(f, ft, span)?;
                }
                Ok(())
            }
            Pattern::Tuple(fields) => {
                let unknown: Vec<Type> = fields.iter().map(|_| Type::incomplete()).collect();
                let expected = Type::tuple(unknown);
                let before = self.solver.diagnostics.len();
                let unified = self.unify(t, &expected, &Site::at(span), true, true)?;
                let reported = self.solver.diagnostics.len() > before;
                let Some(field_types) = unified.as_tuple().map(<[Type]>::to_vec) else {
                    if reported {
                        return Err(Fatal);
                    }
                    let shown = self.solver.resolve(&unified);
                    return Err(self.fatal(
                        Code::PatternMismatch,
                        span,
                        format!("Expected a tuple type, got `{}`", show_type(&shown)),
                    ));
                };
                if field_types.len() != fields.len() {
                    return Err(self.fatal(
                        Code::PatternMismatch,
                        span,
                        format!(
                            "the tuple pattern has {} fields, but the value has {}",
                            fields.len(),
                            field_types.len()
                        ),
                    ));
                }
                for (f, ft) in fields.iter().zip(&field_types) {
                    self.pattern(f, ft, span)?;
                }
                Ok(())
            }
        }
    }

    // ---- calls ----

    fn call(&mut self, e: &Expr, call: &Call) -> Result<Type, Fatal> {
        let arg_types: Vec<Type> = call.args.iter().map(|a| self.get(a)).collect();
        if let ExprKind::Op(op) = call.callee.kind() {
            let op: &'static OpDef = op;
            if relay_ir::op::is_opaque_op(op) {
                self.opaque_calls = true;
                return Ok(Type::incomplete());
            }
            if op.type_rel.as_deref() == Some(custom::DECLARED_RELATION) {
                if let Some(rule) = custom::declared_rule(&op.name) {
                    return Ok(self.declared_call(e, call, op, rule, &arg_types));
                }
            }
            match self.op_relation(op) {
                None => {
                    let message = match &op.type_rel {
                        Some(rel) => format!(
                            "the type relation `{rel}` of operator `{}` is not implemented",
                            op.name
                        ),
                        None => format!("operator `{}` has no type relation", op.name),
                    };
                    self.emit(Code::OperatorTypeError, e.span(), message);
                    return Ok(Type::incomplete());
                }
                Some((relation, inputs)) => {
                    if let Some(out) = self.primitive_call(e, call, relation, inputs, &arg_types) {
                        self.type_args.insert(e.addr(), arg_types);
                        return Ok(out);
                    }
                }
            }
        }
        self.solver.solve();
        self.general_call(e, call, arg_types)
    }

    /// A call of an operator a project declared (`relay.toml`), typed by
    /// its rule: an input's type, a fixed type, or a shape computed from
    /// the inputs' dimensions and the call's attributes (once they are
    /// known; before, the type stays unknown without an error).
    fn declared_call(
        &mut self,
        e: &Expr,
        call: &Call,
        op: &OpDef,
        rule: &custom::OutputRule,
        arg_types: &[Type],
    ) -> Type {
        use custom::{DimRule, OutputRule};
        if op.num_inputs >= 0 && arg_types.len() != op.num_inputs as usize {
            self.emit(
                Code::ArgumentCount,
                e.span(),
                format!(
                    "`{}` takes {} arguments, but {} were given",
                    op.name,
                    op.num_inputs,
                    arg_types.len()
                ),
            );
            return Type::incomplete();
        }
        match rule {
            OutputRule::SameAs(i) => arg_types.get(*i).cloned().unwrap_or_else(Type::incomplete),
            OutputRule::Fixed(ty) => ty.clone(),
            // Declared with TVM's `Broadcast` relation, which runs instead.
            OutputRule::Broadcast => Type::incomplete(),
            OutputRule::Shape { dims, dtype_of } => {
                self.solver.solve();
                let inputs: Vec<Type> = arg_types.iter().map(|t| self.solver.resolve(t)).collect();
                let tensor = |i: usize| inputs.get(i).and_then(|t| t.as_tensor().cloned());
                let Some(dtype) = tensor(*dtype_of).map(|t| t.dtype) else {
                    self.opaque_calls = true;
                    return Type::incomplete();
                };
                let mut shape = Vec::with_capacity(dims.len());
                for dim in dims {
                    let value = match dim {
                        DimRule::Const(n) => Some(*n),
                        DimRule::Input { input, axis } => {
                            let Some(t) = tensor(*input) else {
                                self.opaque_calls = true;
                                return Type::incomplete();
                            };
                            let rank = t.shape.len() as i64;
                            let axis = if *axis < 0 { axis + rank } else { *axis };
                            if axis < 0 || axis >= rank {
                                self.emit(
                                    Code::OperatorTypeError,
                                    e.span(),
                                    format!(
                                        "the type rule of `{}` reads axis {axis} of input {input}, \
                                         which has rank {rank}",
                                        op.name
                                    ),
                                );
                                return Type::incomplete();
                            }
                            t.shape[axis as usize].as_int()
                        }
                        DimRule::Attr(name) => call
                            .attrs
                            .as_ref()
                            .and_then(|a| a.get(name))
                            .and_then(|v| v.as_int()),
                    };
                    match value {
                        Some(n) => shape.push(relay_ir::Dim::int32(n)),
                        None => {
                            self.emit(
                                Code::OperatorTypeError,
                                e.span(),
                                format!(
                                    "the type rule of `{}` needs a known integer for {dim:?}",
                                    op.name
                                ),
                            );
                            return Type::incomplete();
                        }
                    }
                }
                Type::tensor(shape, dtype)
            }
        }
    }

    /// TVM's `PrimitiveCall`: the fast path for an operator called with as
    /// many arguments as it declares: one relation instance with the call's
    /// attributes.
    fn primitive_call(
        &mut self,
        e: &Expr,
        call: &Call,
        func: RelFunc,
        inputs: usize,
        arg_types: &[Type],
    ) -> Option<Type> {
        if inputs != arg_types.len() {
            return None;
        }
        let out = Type::incomplete();
        let mut args = Vec::with_capacity(arg_types.len() + 1);
        args.extend_from_slice(arg_types);
        args.push(out.clone());
        self.solver.add_relation(NewRelation {
            func,
            args,
            num_inputs: arg_types.len(),
            attrs: call.attrs.clone(),
            span: e.span(),
            site: e.clone(),
        });
        Some(out)
    }

    /// TVM's `GeneralCall`: calls of functions, constructors, and operators
    /// called with the wrong number of arguments.
    fn general_call(&mut self, e: &Expr, call: &Call, arg_types: Vec<Type>) -> Result<Type, Fatal> {
        let ftype = self.get(&call.callee);
        let fn_ty = match ftype.kind() {
            TypeKind::Func(_) => ftype.clone(),
            TypeKind::Incomplete(_) => {
                let func_type = Type::func(arg_types.clone(), Type::incomplete(), Vec::new());
                let before = self.solver.diagnostics.len();
                let unified = self.unify(
                    &ftype,
                    &func_type,
                    &Site::at(call.callee.span()),
                    true,
                    true,
                )?;
                if unified.as_func().is_none() {
                    if self.solver.diagnostics.len() > before {
                        return Err(Fatal);
                    }
                    let shown = self.solver.resolve(&unified);
                    return Err(self.fatal(
                        Code::NotAFunction,
                        e.span(),
                        format!(
                            "only expressions with function types can be called, found `{}`",
                            show_type(&shown)
                        ),
                    ));
                }
                unified
            }
            _ => {
                let shown = self.solver.resolve(&ftype);
                return Err(self.fatal(
                    Code::NotAFunction,
                    e.span(),
                    format!(
                        "only expressions with function types can be called, found `{}`",
                        show_type(&shown)
                    ),
                ));
            }
        };
        let Some(ft) = fn_ty.as_func() else {
            return Err(Fatal);
        };
        let ft: FuncType = ft.clone();
        if call.type_args.len() > ft.type_params.len() {
            return Err(self.fatal(
                Code::ArgumentCount,
                e.span(),
                format!(
                    "Incorrect number of type args: expected {} but got {}",
                    ft.type_params.len(),
                    call.type_args.len()
                ),
            ));
        }
        let mut type_args = call.type_args.to_vec();
        while type_args.len() < ft.type_params.len() {
            type_args.push(Type::incomplete());
        }
        let inst = self.instantiate(&fn_ty, &ft, type_args.clone());
        self.type_args.insert(e.addr(), type_args);
        let Some(inst_ft) = inst.as_func().cloned() else {
            return Err(Fatal);
        };

        let variadic = matches!(call.callee.kind(), ExprKind::Op(op) if op.num_inputs < 0);
        let arity = inst_ft.params.len();
        let nargs = arg_types.len();
        if arity < nargs && !variadic {
            return Err(self.fatal(
                Code::ArgumentCount,
                e.span(),
                format!(
                    "the function is provided too many arguments expected {arity}, found {nargs}"
                ),
            ));
        } else if arity > nargs {
            return Err(self.fatal(
                Code::ArgumentCount,
                e.span(),
                format!(
                    "the function is provided too few arguments expected {arity}, found {nargs}"
                ),
            ));
        }

        let param_spans = self.param_spans(&call.callee);
        let mut unified_args = Vec::new();
        for (i, arg_ty) in arg_types.iter().enumerate() {
            let Some(param_ty) = inst_ft.params.get(i) else {
                unified_args.push(arg_ty.clone());
                continue;
            };
            let site = Site::at(e.span())
                .about(&call.args[i], "this argument")
                .label(
                    param_spans.get(i).copied().flatten(),
                    "the parameter it is passed to",
                );
            if variadic {
                unified_args.push(self.unify(param_ty, arg_ty, &site, false, false)?);
            } else {
                self.unify(param_ty, arg_ty, &site, true, false)?;
            }
        }
        unified_args.push(inst_ft.ret.clone());
        let constraints = self.solver.constraints(&inst).to_vec();
        for c in constraints {
            let (args, num_inputs) = if variadic {
                (unified_args.clone(), nargs)
            } else {
                (c.args.clone(), c.num_inputs)
            };
            self.solver.add_relation(NewRelation {
                func: c.func.clone(),
                args,
                num_inputs,
                attrs: call.attrs.clone(),
                span: e.span(),
                site: e.clone(),
            });
        }
        Ok(inst_ft.ret)
    }

    /// TVM's `InstantiateFuncType`: the function type with its type
    /// parameters replaced by `args` (and no type parameters).
    fn instantiate(&mut self, ty: &Type, ft: &FuncType, args: Vec<Type>) -> Type {
        let mut map: IdMap<u64, Type> = IdMap::default();
        for (tv, a) in ft.type_params.iter().zip(args) {
            map.insert(tv.id(), a);
        }
        let params = ft.params.iter().map(|p| subst(p, &map)).collect();
        let ret = subst(&ft.ret, &map);
        let inst = Type::func(params, ret, Vec::new());
        let constraints: Vec<Constraint> = self
            .solver
            .constraints(ty)
            .iter()
            .map(|c| Constraint {
                func: c.func.clone(),
                args: c.args.iter().map(|a| subst(a, &map)).collect(),
                num_inputs: c.num_inputs,
            })
            .collect();
        self.solver.set_constraints(&inst, constraints);
        inst
    }

    /// The spans of the parameters of a callee, when it is a function whose
    /// parameters can be found, for notes.
    fn param_spans(&self, callee: &Expr) -> Vec<Option<Span>> {
        let function = match callee.kind() {
            ExprKind::Function(_) => callee.as_function(),
            ExprKind::GlobalVar(g) => self.module.and_then(|m| m.function(g.name())).cloned(),
            _ => None,
        };
        function.map_or_else(Vec::new, |f| {
            f.params().iter().map(|p| p.expr().span()).collect()
        })
    }

    // ---- types of globals and operators ----

    /// A global function's type from its annotations only (TVM's
    /// `func_type_annotation`); unannotated parts are unknown. Every use of
    /// the global in this function shares the same type.
    fn global_type(&mut self, name: &str, span: Option<Span>) -> Result<Type, Fatal> {
        if let Some(t) = self.global_types.get(name) {
            return Ok(t.clone());
        }
        let Some(module) = self.module else {
            return Err(self.fatal(
                Code::UnknownGlobal,
                span,
                "Cannot do type inference on global variables without a module",
            ));
        };
        let Some(f) = module.function(name) else {
            return Err(self.fatal(
                Code::UnknownGlobal,
                span,
                format!("there is no global function `@{name}` in the module"),
            ));
        };
        let data = f.data();
        let params = data
            .params
            .iter()
            .map(|p| {
                p.type_annotation()
                    .cloned()
                    .unwrap_or_else(Type::incomplete)
            })
            .collect();
        let ret = data.ret_type.clone().unwrap_or_else(Type::incomplete);
        let ty = Type::func(params, ret, data.type_params.clone());
        self.global_types.insert(name.to_string(), ty.clone());
        Ok(ty)
    }

    /// An operator's polymorphic type, as `add_type_rel` builds it:
    /// `fn [in0, …, out](in0, …) -> out` with the relation over all of them.
    fn op_type(&mut self, op: &'static OpDef) -> Option<Type> {
        self.op_entry(op).map(|o| o.ty.clone())
    }

    /// The relation of `op`'s type and its number of inputs.
    fn op_relation(&mut self, op: &'static OpDef) -> Option<(RelFunc, usize)> {
        let entry = self.op_entry(op)?;
        Some((entry.relation.clone(), entry.inputs))
    }

    fn op_entry(&mut self, op: &'static OpDef) -> Option<&OpType> {
        let key = op as *const OpDef as usize;
        if !self.op_types.contains_key(&key) {
            let entry = self.new_op_type(op);
            self.op_types.insert(key, entry);
        }
        self.op_types[&key].as_ref()
    }

    fn new_op_type(&mut self, op: &'static OpDef) -> Option<OpType> {
        let rel = op.type_rel.as_deref().and_then(|name| (self.lookup)(name));
        rel.map(|func| {
            let n = op.num_inputs.max(0) as usize;
            let mut type_params: Vec<relay_ir::TypeVar> = (0..n)
                .map(|i| relay_ir::TypeVar::new(format!("in{i}"), relay_ir::TypeVarKind::Type))
                .collect();
            let params: Vec<Type> = type_params.iter().cloned().map(Type::var).collect();
            let out = relay_ir::TypeVar::new("out", relay_ir::TypeVarKind::Type);
            type_params.push(out.clone());
            let out = Type::var(out);
            let mut rel_args = params.clone();
            rel_args.push(out.clone());
            let ty = Type::func(params, out, type_params);
            let relation = RelFunc::Op {
                func,
                op: op.name.as_str(),
            };
            self.solver.set_constraints(
                &ty,
                vec![Constraint {
                    func: relation.clone(),
                    args: rel_args,
                    num_inputs: n,
                }],
            );
            OpType {
                ty,
                relation,
                inputs: n,
            }
        })
    }
}
