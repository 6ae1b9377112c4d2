//! Structural equality and hashing with alpha-equivalence, as TVM's
//! `StructuralEqual` / `StructuralHash` define them for Relay.
//!
//! * Bound variables (function parameters, `let` variables, pattern
//!   variables) and type parameters are matched by binding position, so
//!   `fn (%x) { %x }` equals `fn (%y) { %y }`.
//! * Free variables are equal when they are the same variable, or, with
//!   `map_free_vars`, when they have the same name (and map consistently).
//! * Spans and checked types are ignored; constants compare by dtype, shape
//!   and bytes; doubles in attributes with TVM's 1e-9 tolerance.
//!
//! Both walks use explicit worklists, so deep graphs cannot overflow the
//! stack, and shared nodes are compared or hashed once.

use crate::ir::{
    AttrValue, Attrs, DictAttrs, Dim, Expr, ExprKind, IRModule, Pattern, Type, TypeData, TypeKind,
    TypeVar, Var, VarId,
};
use crate::source::Span;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// The first place where two expressions or modules differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub reason: String,
    pub lhs: Option<Span>,
    pub rhs: Option<Span>,
}

/// Whether `a` and `b` are structurally equal.
pub fn structural_equal(a: &Expr, b: &Expr, map_free_vars: bool) -> bool {
    first_difference(a, b, map_free_vars).is_none()
}

/// The first difference between `a` and `b` in pre-order, if any.
pub fn first_difference(a: &Expr, b: &Expr, map_free_vars: bool) -> Option<Difference> {
    Comparer::new(map_free_vars).compare_exprs(a, b)
}

/// The first difference between two modules: item names, type definitions,
/// then functions in name order (free variables matched by name).
pub fn module_first_difference(a: &IRModule, b: &IRModule) -> Option<Difference> {
    let names = |m: &IRModule| {
        m.functions()
            .map(|(n, _)| n.to_string())
            .collect::<Vec<_>>()
    };
    let types = |m: &IRModule| {
        m.type_definitions()
            .map(|(n, _)| n.to_string())
            .collect::<Vec<_>>()
    };
    if types(a) != types(b) {
        return Some(Difference {
            reason: format!(
                "the type definitions differ: [{}] vs [{}]",
                types(a).join(", "),
                types(b).join(", ")
            ),
            lhs: None,
            rhs: None,
        });
    }
    for ((name, ta), (_, tb)) in a.type_definitions().zip(b.type_definitions()) {
        if !Comparer::new(true).type_data_equal(ta, tb) {
            return Some(Difference {
                reason: format!("type `{name}` is defined differently"),
                lhs: None,
                rhs: None,
            });
        }
    }
    if names(a) != names(b) {
        return Some(Difference {
            reason: format!(
                "the global functions differ: [{}] vs [{}]",
                names(a).join(", "),
                names(b).join(", ")
            ),
            lhs: None,
            rhs: None,
        });
    }
    for ((name, fa), (_, fb)) in a.functions().zip(b.functions()) {
        if let Some(mut diff) = first_difference(fa.expr(), fb.expr(), true) {
            diff.reason = format!("in @{name}: {}", diff.reason);
            return Some(diff);
        }
    }
    None
}

enum Task {
    Expr(Expr, Expr),
    Bind(Var, Var),
}

struct Comparer {
    map_free_vars: bool,
    vars: HashMap<VarId, VarId>,
    vars_rev: HashMap<VarId, VarId>,
    type_vars: HashMap<u64, u64>,
    type_vars_rev: HashMap<u64, u64>,
    incomplete: HashMap<u64, u64>,
    incomplete_rev: HashMap<u64, u64>,
    visited: HashSet<(usize, usize)>,
}

fn diff(reason: impl Into<String>, a: &Expr, b: &Expr) -> Option<Difference> {
    Some(Difference {
        reason: reason.into(),
        lhs: a.span(),
        rhs: b.span(),
    })
}

/// Records `a ↔ b` in a bijection; false if either side is mapped elsewhere.
fn bind<K: Eq + Hash + Copy>(fwd: &mut HashMap<K, K>, rev: &mut HashMap<K, K>, a: K, b: K) -> bool {
    match (fwd.get(&a), rev.get(&b)) {
        (Some(x), _) if *x != b => false,
        (_, Some(y)) if *y != a => false,
        _ => {
            fwd.insert(a, b);
            rev.insert(b, a);
            true
        }
    }
}

impl Comparer {
    fn new(map_free_vars: bool) -> Comparer {
        Comparer {
            map_free_vars,
            vars: HashMap::new(),
            vars_rev: HashMap::new(),
            type_vars: HashMap::new(),
            type_vars_rev: HashMap::new(),
            incomplete: HashMap::new(),
            incomplete_rev: HashMap::new(),
            visited: HashSet::new(),
        }
    }

    fn compare_exprs(&mut self, a: &Expr, b: &Expr) -> Option<Difference> {
        let mut stack = vec![Task::Expr(a.clone(), b.clone())];
        while let Some(task) = stack.pop() {
            let found = match task {
                Task::Bind(va, vb) => self.bind_var(&va, &vb),
                Task::Expr(ea, eb) => self.step(&ea, &eb, &mut stack),
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn bind_var(&mut self, a: &Var, b: &Var) -> Option<Difference> {
        if !bind(&mut self.vars, &mut self.vars_rev, a.id(), b.id()) {
            return diff("a variable is bound twice", a.expr(), b.expr());
        }
        match (a.type_annotation(), b.type_annotation()) {
            (None, None) => None,
            (Some(ta), Some(tb)) if self.types_equal(ta, tb) => None,
            _ => diff(
                format!("the annotations of %{} and %{} differ", a.name(), b.name()),
                a.expr(),
                b.expr(),
            ),
        }
    }

    /// Compares the node itself and schedules its children (first child on top).
    fn step(&mut self, a: &Expr, b: &Expr, stack: &mut Vec<Task>) -> Option<Difference> {
        if !self.visited.insert((a.addr(), b.addr())) {
            return None;
        }
        let mut push = Vec::new();
        let result = match (a.kind(), b.kind()) {
            (ExprKind::Var(da), ExprKind::Var(db)) => {
                let ok = match self.vars.get(&da.id) {
                    Some(mapped) => *mapped == db.id,
                    None if self.vars_rev.contains_key(&db.id) => false,
                    None if da.id == db.id => true,
                    None if self.map_free_vars && da.name == db.name => {
                        bind(&mut self.vars, &mut self.vars_rev, da.id, db.id)
                    }
                    None => false,
                };
                if ok {
                    None
                } else {
                    diff(
                        format!("variable %{} does not correspond to %{}", da.name, db.name),
                        a,
                        b,
                    )
                }
            }
            (ExprKind::GlobalVar(ga), ExprKind::GlobalVar(gb)) => (ga != gb)
                .then(|| diff(format!("@{} vs @{}", ga.name(), gb.name()), a, b))
                .flatten(),
            (ExprKind::Op(oa), ExprKind::Op(ob)) => (oa.name != ob.name)
                .then(|| diff(format!("operator {} vs {}", oa.name, ob.name), a, b))
                .flatten(),
            (ExprKind::Constructor(ca), ExprKind::Constructor(cb)) => (ca != cb)
                .then(|| diff(format!("constructor {} vs {}", ca.name(), cb.name()), a, b))
                .flatten(),
            (ExprKind::Constant(ta), ExprKind::Constant(tb)) => {
                if ta.dtype != tb.dtype || ta.shape != tb.shape || ta.data != tb.data {
                    diff("the constants differ", a, b)
                } else {
                    None
                }
            }
            (ExprKind::Tuple(fa), ExprKind::Tuple(fb)) => {
                if fa.len() != fb.len() {
                    diff(
                        format!("a tuple of {} vs {} fields", fa.len(), fb.len()),
                        a,
                        b,
                    )
                } else {
                    push.extend(
                        fa.iter()
                            .zip(fb)
                            .map(|(x, y)| Task::Expr(x.clone(), y.clone())),
                    );
                    None
                }
            }
            (
                ExprKind::TupleGetItem {
                    tuple: ta,
                    index: ia,
                },
                ExprKind::TupleGetItem {
                    tuple: tb,
                    index: ib,
                },
            ) => {
                if ia != ib {
                    diff(format!("projection .{ia} vs .{ib}"), a, b)
                } else {
                    push.push(Task::Expr(ta.clone(), tb.clone()));
                    None
                }
            }
            (ExprKind::Call(ca), ExprKind::Call(cb)) => {
                if ca.args.len() != cb.args.len() {
                    diff(
                        format!(
                            "a call with {} vs {} arguments",
                            ca.args.len(),
                            cb.args.len()
                        ),
                        a,
                        b,
                    )
                } else if !self.attrs_equal(ca.attrs.as_ref(), cb.attrs.as_ref()) {
                    diff("the call attributes differ", a, b)
                } else if ca.type_args.len() != cb.type_args.len()
                    || !ca
                        .type_args
                        .iter()
                        .zip(&cb.type_args)
                        .all(|(x, y)| self.types_equal(x, y))
                {
                    diff("the type arguments differ", a, b)
                } else {
                    push.push(Task::Expr(ca.callee.clone(), cb.callee.clone()));
                    push.extend(
                        ca.args
                            .iter()
                            .zip(&cb.args)
                            .map(|(x, y)| Task::Expr(x.clone(), y.clone())),
                    );
                    None
                }
            }
            (
                ExprKind::Let {
                    var: va,
                    value: xa,
                    body: ba,
                },
                ExprKind::Let {
                    var: vb,
                    value: xb,
                    body: bb,
                },
            ) => {
                push.push(Task::Bind(va.clone(), vb.clone()));
                push.push(Task::Expr(xa.clone(), xb.clone()));
                push.push(Task::Expr(ba.clone(), bb.clone()));
                None
            }
            (
                ExprKind::If {
                    cond: ca,
                    then_branch: ta,
                    else_branch: ea,
                },
                ExprKind::If {
                    cond: cb,
                    then_branch: tb,
                    else_branch: eb,
                },
            ) => {
                push.push(Task::Expr(ca.clone(), cb.clone()));
                push.push(Task::Expr(ta.clone(), tb.clone()));
                push.push(Task::Expr(ea.clone(), eb.clone()));
                None
            }
            (ExprKind::Function(fa), ExprKind::Function(fb)) => {
                if fa.params.len() != fb.params.len() {
                    diff(
                        format!(
                            "a function of {} vs {} parameters",
                            fa.params.len(),
                            fb.params.len()
                        ),
                        a,
                        b,
                    )
                } else if fa.type_params.len() != fb.type_params.len() {
                    diff("the type parameters differ", a, b)
                } else {
                    for (x, y) in fa.type_params.iter().zip(&fb.type_params) {
                        bind(&mut self.type_vars, &mut self.type_vars_rev, x.id(), y.id());
                    }
                    let ret_equal = match (&fa.ret_type, &fb.ret_type) {
                        (None, None) => true,
                        (Some(x), Some(y)) => self.types_equal(x, y),
                        _ => false,
                    };
                    if !ret_equal {
                        diff("the return types differ", a, b)
                    } else if !self.dict_equal(&fa.attrs, &fb.attrs) {
                        diff("the function attributes differ", a, b)
                    } else {
                        push.extend(
                            fa.params
                                .iter()
                                .zip(&fb.params)
                                .map(|(x, y)| Task::Bind(x.clone(), y.clone())),
                        );
                        push.push(Task::Expr(fa.body.clone(), fb.body.clone()));
                        None
                    }
                }
            }
            (
                ExprKind::Match {
                    data: da,
                    clauses: ca,
                    complete: pa,
                },
                ExprKind::Match {
                    data: db,
                    clauses: cb,
                    complete: pb,
                },
            ) => {
                if pa != pb || ca.len() != cb.len() {
                    diff("the match expressions differ", a, b)
                } else {
                    push.push(Task::Expr(da.clone(), db.clone()));
                    let mut ok = true;
                    for (x, y) in ca.iter().zip(cb) {
                        ok &= self.patterns(&x.pattern, &y.pattern, &mut push);
                        push.push(Task::Expr(x.rhs.clone(), y.rhs.clone()));
                    }
                    if ok {
                        None
                    } else {
                        diff("the match patterns differ", a, b)
                    }
                }
            }
            (ExprKind::RefCreate(xa), ExprKind::RefCreate(xb))
            | (ExprKind::RefRead(xa), ExprKind::RefRead(xb)) => {
                push.push(Task::Expr(xa.clone(), xb.clone()));
                None
            }
            (
                ExprKind::RefWrite {
                    reference: ra,
                    value: xa,
                },
                ExprKind::RefWrite {
                    reference: rb,
                    value: xb,
                },
            ) => {
                push.push(Task::Expr(ra.clone(), rb.clone()));
                push.push(Task::Expr(xa.clone(), xb.clone()));
                None
            }
            _ => diff(
                format!("{} vs {}", kind_name(a.kind()), kind_name(b.kind())),
                a,
                b,
            ),
        };
        stack.extend(push.into_iter().rev());
        result
    }

    fn patterns(&mut self, a: &Pattern, b: &Pattern, push: &mut Vec<Task>) -> bool {
        match (a, b) {
            (Pattern::Wildcard, Pattern::Wildcard) => true,
            (Pattern::Var(x), Pattern::Var(y)) => {
                push.push(Task::Bind(x.clone(), y.clone()));
                true
            }
            (Pattern::Constructor(ca, fa), Pattern::Constructor(cb, fb)) => {
                ca == cb
                    && fa.len() == fb.len()
                    && fa.iter().zip(fb).all(|(x, y)| self.patterns(x, y, push))
            }
            (Pattern::Tuple(fa), Pattern::Tuple(fb)) => {
                fa.len() == fb.len() && fa.iter().zip(fb).all(|(x, y)| self.patterns(x, y, push))
            }
            _ => false,
        }
    }

    fn type_var_equal(&mut self, a: &TypeVar, b: &TypeVar) -> bool {
        match self.type_vars.get(&a.id()) {
            Some(mapped) => *mapped == b.id(),
            None if self.type_vars_rev.contains_key(&b.id()) => false,
            None => {
                a.id() == b.id()
                    || (self.map_free_vars
                        && a.name() == b.name()
                        && bind(&mut self.type_vars, &mut self.type_vars_rev, a.id(), b.id()))
            }
        }
    }

    fn types_equal(&mut self, a: &Type, b: &Type) -> bool {
        if a.ptr_eq(b) {
            return true;
        }
        match (a.kind(), b.kind()) {
            (TypeKind::Tensor(x), TypeKind::Tensor(y)) => {
                x.dtype == y.dtype
                    && x.shape.len() == y.shape.len()
                    && x.shape.iter().zip(&y.shape).all(|(p, q)| dims_equal(p, q))
            }
            (TypeKind::Tuple(x), TypeKind::Tuple(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| self.types_equal(p, q))
            }
            (TypeKind::Func(x), TypeKind::Func(y)) => {
                if x.params.len() != y.params.len() || x.type_params.len() != y.type_params.len() {
                    return false;
                }
                for (p, q) in x.type_params.iter().zip(&y.type_params) {
                    bind(&mut self.type_vars, &mut self.type_vars_rev, p.id(), q.id());
                }
                x.params
                    .iter()
                    .zip(&y.params)
                    .all(|(p, q)| self.types_equal(p, q))
                    && self.types_equal(&x.ret, &y.ret)
            }
            (TypeKind::Var(x), TypeKind::Var(y)) => self.type_var_equal(x, y),
            (TypeKind::GlobalVar(x), TypeKind::GlobalVar(y)) => x == y,
            (TypeKind::Call { func: fx, args: ax }, TypeKind::Call { func: fy, args: ay }) => {
                ax.len() == ay.len()
                    && self.types_equal(fx, fy)
                    && ax.iter().zip(ay).all(|(p, q)| self.types_equal(p, q))
            }
            (TypeKind::Ref(x), TypeKind::Ref(y)) => self.types_equal(x, y),
            (TypeKind::Incomplete(x), TypeKind::Incomplete(y)) => {
                bind(&mut self.incomplete, &mut self.incomplete_rev, x.0, y.0)
            }
            _ => false,
        }
    }

    fn type_data_equal(&mut self, a: &TypeData, b: &TypeData) -> bool {
        if a.header != b.header
            || a.type_vars.len() != b.type_vars.len()
            || a.constructors.len() != b.constructors.len()
        {
            return false;
        }
        for (x, y) in a.type_vars.iter().zip(&b.type_vars) {
            bind(&mut self.type_vars, &mut self.type_vars_rev, x.id(), y.id());
        }
        a.constructors.iter().zip(&b.constructors).all(|(x, y)| {
            let (dx, dy) = (x.data(), y.data());
            dx.name == dy.name
                && dx.inputs.len() == dy.inputs.len()
                && dx
                    .inputs
                    .iter()
                    .zip(&dy.inputs)
                    .all(|(p, q)| self.types_equal(p, q))
        })
    }

    fn attrs_equal(&mut self, a: Option<&Attrs>, b: Option<&Attrs>) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(x), Some(y)) => {
                x.type_key() == y.type_key()
                    && x.fields().len() == y.fields().len()
                    && x.fields()
                        .iter()
                        .zip(y.fields())
                        .all(|((kx, vx), (ky, vy))| kx == ky && self.values_equal(vx, vy))
            }
            _ => false,
        }
    }

    fn dict_equal(&mut self, a: &DictAttrs, b: &DictAttrs) -> bool {
        a.entries().len() == b.entries().len()
            && a.entries().iter().all(|(k, v)| match b.get(k) {
                Some(w) => self.values_equal(v, w),
                None => false,
            })
    }

    fn values_equal(&mut self, a: &AttrValue, b: &AttrValue) -> bool {
        use AttrValue as V;
        match (a, b) {
            (V::Null, V::Null) | (V::Any, V::Any) => true,
            (V::Int(x), V::Int(y)) => x == y,
            (V::Double(x), V::Double(y)) => doubles_equal(*x, *y),
            (V::Bool(x), V::Bool(y)) => x == y,
            (V::Str(x), V::Str(y)) => x == y,
            (V::DataType(x), V::DataType(y)) => x == y,
            (
                V::IntImm {
                    value: x,
                    dtype: dx,
                },
                V::IntImm {
                    value: y,
                    dtype: dy,
                },
            ) => x == y && dx == dy,
            (
                V::FloatImm {
                    value: x,
                    dtype: dx,
                },
                V::FloatImm {
                    value: y,
                    dtype: dy,
                },
            ) => doubles_equal(*x, *y) && dx == dy,
            (V::Array(x), V::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| self.values_equal(p, q))
            }
            (V::Map(x), V::Map(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((kp, p), (kq, q))| kp == kq && self.values_equal(p, q))
            }
            (V::Expr(x), V::Expr(y)) => {
                let mut inner = Comparer::new(self.map_free_vars);
                inner.compare_exprs(x, y).is_none()
            }
            (V::Meta(x), V::Meta(y)) => {
                x == y || crate::meta::subgraphs_equal(&x.graph, x.index, &y.graph, y.index)
            }
            _ => false,
        }
    }
}

fn doubles_equal(x: f64, y: f64) -> bool {
    x == y || (x - y).abs() < 1e-9 || (x.is_nan() && y.is_nan())
}

fn dims_equal(a: &Dim, b: &Dim) -> bool {
    match (a, b) {
        (
            Dim::Int {
                value: x,
                dtype: dx,
            },
            Dim::Int {
                value: y,
                dtype: dy,
            },
        ) => x == y && dx == dy,
        (Dim::Any, Dim::Any) => true,
        (Dim::Meta(x), Dim::Meta(y)) => {
            x == y || crate::meta::subgraphs_equal(&x.graph, x.index, &y.graph, y.index)
        }
        _ => false,
    }
}

fn kind_name(kind: &ExprKind) -> &'static str {
    match kind {
        ExprKind::Var(_) => "a variable",
        ExprKind::GlobalVar(_) => "a global",
        ExprKind::Constant(_) => "a constant",
        ExprKind::Tuple(_) => "a tuple",
        ExprKind::TupleGetItem { .. } => "a projection",
        ExprKind::Call(_) => "a call",
        ExprKind::Let { .. } => "a let",
        ExprKind::If { .. } => "an if",
        ExprKind::Function(_) => "a function",
        ExprKind::Match { .. } => "a match",
        ExprKind::RefCreate(_) => "ref",
        ExprKind::RefRead(_) => "ref_read",
        ExprKind::RefWrite { .. } => "ref_write",
        ExprKind::Constructor(_) => "a constructor",
        ExprKind::Op(_) => "an operator",
    }
}

/// A structural hash consistent with [`structural_equal`]: bound variables
/// hash by binding order, free ones by name (with `map_free_vars`) or id.
pub fn structural_hash(expr: &Expr, map_free_vars: bool) -> u64 {
    // Binding order: the order binding sites appear in a pre-order walk.
    let mut binding_index: HashMap<VarId, u64> = HashMap::new();
    let order = crate::ir::rewrite::post_order(expr);
    // Walk in reverse post-order (parents first) to number binding sites
    // the way the equality walk meets them.
    for node in order.iter().rev() {
        let mut bind_sites: Vec<&Var> = Vec::new();
        match node.kind() {
            ExprKind::Let { var, .. } => bind_sites.push(var),
            ExprKind::Function(f) => bind_sites.extend(&f.params),
            ExprKind::Match { clauses, .. } => {
                for clause in clauses {
                    collect_pattern_vars(&clause.pattern, &mut bind_sites);
                }
            }
            _ => {}
        }
        for var in bind_sites {
            let next = binding_index.len() as u64;
            binding_index.entry(var.id()).or_insert(next);
        }
    }
    let mut memo: HashMap<usize, u64> = HashMap::new();
    for node in &order {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        kind_name(node.kind()).hash(&mut h);
        match node.kind() {
            ExprKind::Var(data) => match binding_index.get(&data.id) {
                Some(i) => i.hash(&mut h),
                None if map_free_vars => data.name.hash(&mut h),
                None => data.id.hash(&mut h),
            },
            ExprKind::GlobalVar(g) => g.name().hash(&mut h),
            ExprKind::Op(op) => op.name.hash(&mut h),
            ExprKind::Constructor(c) => c.name().hash(&mut h),
            ExprKind::Constant(t) => {
                t.dtype.to_tvm_string().hash(&mut h);
                t.shape.hash(&mut h);
                t.data.hash(&mut h);
            }
            ExprKind::TupleGetItem { index, .. } => index.hash(&mut h),
            ExprKind::Call(call) => {
                if let Some(attrs) = &call.attrs {
                    attrs.type_key().hash(&mut h);
                    for (key, _) in attrs.fields() {
                        key.hash(&mut h);
                    }
                }
            }
            ExprKind::Match { complete, .. } => complete.hash(&mut h),
            _ => {}
        }
        for child in crate::ir::rewrite::children(node) {
            memo.get(&child.addr()).copied().unwrap_or(0).hash(&mut h);
        }
        memo.insert(node.addr(), h.finish());
    }
    memo.get(&expr.addr()).copied().unwrap_or(0)
}

fn collect_pattern_vars<'a>(pattern: &'a Pattern, out: &mut Vec<&'a Var>) {
    match pattern {
        Pattern::Wildcard => {}
        Pattern::Var(var) => out.push(var),
        Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
            for field in fields {
                collect_pattern_vars(field, out);
            }
        }
    }
}

/// Whether two types are equal up to renaming of bound type parameters.
pub fn types_equal(a: &Type, b: &Type) -> bool {
    Comparer::new(false).types_equal(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;
    use crate::ir::{Function, FunctionData};

    fn identity(name: &str) -> Expr {
        let x = Var::new(name, Some(Type::scalar(DataType::FLOAT32)), None);
        Function::new(
            FunctionData {
                params: vec![x.clone()],
                body: x.into_expr(),
                ret_type: None,
                type_params: vec![],
                attrs: DictAttrs::default(),
                virtual_device: None,
            },
            None,
        )
        .into_expr()
    }

    #[test]
    fn alpha_equivalent_functions_are_equal() {
        let a = identity("x");
        let b = identity("y");
        assert!(structural_equal(&a, &b, false));
        assert_eq!(structural_hash(&a, false), structural_hash(&b, false));
    }

    #[test]
    fn free_vars_need_the_flag() {
        let a = Var::new("x", None, None).into_expr();
        let b = Var::new("x", None, None).into_expr();
        assert!(!structural_equal(&a, &b, false));
        assert!(structural_equal(&a, &b, true));
        assert_eq!(structural_hash(&a, true), structural_hash(&b, true));
        let c = Var::new("z", None, None).into_expr();
        assert!(!structural_equal(&a, &c, true));
    }

    #[test]
    fn a_difference_names_the_spot() {
        let add = crate::op::lookup("add").unwrap();
        let mul = crate::op::lookup("multiply").unwrap();
        let x = Var::new("x", None, None);
        let a = Expr::call(
            Expr::op(add, None),
            vec![x.expr().clone(), x.expr().clone()],
            None,
            None,
        );
        let b = Expr::call(
            Expr::op(mul, None),
            vec![x.expr().clone(), x.expr().clone()],
            None,
            None,
        );
        let d = first_difference(&a, &b, false).unwrap();
        assert_eq!(d.reason, "operator add vs multiply");
    }
}
