//! Structural equality and hashing with alpha-equivalence, as TVM's
//! `StructuralEqual` / `StructuralHash` define them for Relay.
//!
//! * Bound variables (function parameters, `let` variables, pattern
//!   variables) and type parameters are matched by binding position, so
//!   `fn (%x) { %x }` equals `fn (%y) { %y }`.
//! * Free variables are equal when they are the same variable, or, with
//!   `map_free_vars`, when they have the same name (and map consistently).
//! * Spans and checked types are ignored; constants compare by dtype, shape
//!   and bytes; attributes as [`crate::attr_equal`] compares them, with
//!   NaN equal to NaN so that every module equals itself
//!   ([`AttrEquality::representation`]).
//!
//! Both walks use explicit worklists, so deep graphs cannot overflow the
//! stack, and shared nodes are compared or hashed once.
//!
//! Equality is the absence of a [`Difference`]: the one walk that decides
//! equality also says what differs first (`op nn.conv2d vs nn.dense`,
//! `attribute strides: [1, 1] vs [2, 2]`, `constant data differs at element
//! 17`, `function @main missing in B`) and where in each input, which is
//! what `relay diff` prints.

use crate::attr_equal::{self, attrs_difference, dict_attrs_difference, AttrEquality, NanRule};
use crate::metadata::TensorData;
use crate::source::Span;
use crate::{
    Attrs, DictAttrs, Dim, Expr, ExprKind, IRModule, Pattern, Type, TypeData, TypeKind, TypeVar,
    Var, VarData, VarId,
};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// The first place where two expressions or modules differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// What differs, e.g. `op nn.conv2d vs nn.dense` or
    /// `attribute strides: [1, 1] vs [2, 2]`.
    pub reason: String,
    /// Where, in the first input (the nearest node with a span).
    pub lhs: Option<Span>,
    /// Where, in the second input.
    pub rhs: Option<Span>,
    /// The global function the difference is in, for modules.
    pub global: Option<String>,
}

/// Whether `a` and `b` are structurally equal.
pub fn structural_equal(a: &Expr, b: &Expr, map_free_vars: bool) -> bool {
    first_difference(a, b, map_free_vars).is_none()
}

/// The first difference between `a` and `b` in pre-order, if any.
pub fn first_difference(a: &Expr, b: &Expr, map_free_vars: bool) -> Option<Difference> {
    Comparer::new(map_free_vars).compare_exprs(a, b)
}

/// The first difference between two modules, which correspond by global
/// names: type definitions in name order (one missing on either side, or
/// defined differently), then global functions in name order.
pub fn module_first_difference(
    a: &IRModule,
    b: &IRModule,
    map_free_vars: bool,
) -> Option<Difference> {
    let whole = |reason: String| Difference {
        reason,
        lhs: None,
        rhs: None,
        global: None,
    };
    let mut types_b = b.type_definitions().peekable();
    for (name, ta) in a.type_definitions() {
        // Both iterators are sorted by name: a name of B before this one is
        // missing in A.
        if let Some((name_b, _)) = types_b.peek() {
            if *name_b < name {
                return Some(whole(format!("type {name_b} missing in A")));
            }
        }
        match b.type_definition(name) {
            None => return Some(whole(format!("type {name} missing in B"))),
            Some(tb) => {
                types_b.next();
                if let Some(reason) = Comparer::new(map_free_vars).type_data_difference(ta, tb) {
                    return Some(whole(format!("type {name}: {reason}")));
                }
            }
        }
    }
    if let Some((name_b, _)) = types_b.next() {
        return Some(whole(format!("type {name_b} missing in A")));
    }
    let mut functions_b = b.functions().peekable();
    for (name, fa) in a.functions() {
        if let Some((name_b, fb)) = functions_b.peek() {
            if *name_b < name {
                return Some(Difference {
                    reason: format!("function @{name_b} missing in A"),
                    lhs: None,
                    rhs: fb.expr().span(),
                    global: None,
                });
            }
        }
        match b.function(name) {
            None => {
                return Some(Difference {
                    reason: format!("function @{name} missing in B"),
                    lhs: fa.expr().span(),
                    rhs: None,
                    global: None,
                })
            }
            Some(fb) => {
                functions_b.next();
                if let Some(mut difference) = first_difference(fa.expr(), fb.expr(), map_free_vars)
                {
                    difference.global = Some(name.to_string());
                    return Some(difference);
                }
            }
        }
    }
    functions_b.next().map(|(name_b, fb)| Difference {
        reason: format!("function @{name_b} missing in A"),
        lhs: None,
        rhs: fb.expr().span(),
        global: None,
    })
}

/// Spans to report a difference at when a node has none of its own (or is a
/// variable, whose one node is its binding site): the nearest enclosing
/// node's.
#[derive(Clone, Copy, Default)]
struct Context {
    lhs: Option<Span>,
    rhs: Option<Span>,
}

enum Task {
    Expr(Expr, Expr, Context),
    Bind(Var, Var),
}

struct Comparer {
    map_free_vars: bool,
    /// How NaN in attributes compares (see [`crate::attr_equal`]).
    nan: NanRule,
    vars: HashMap<VarId, VarId>,
    vars_rev: HashMap<VarId, VarId>,
    type_vars: HashMap<u64, u64>,
    type_vars_rev: HashMap<u64, u64>,
    incomplete: HashMap<u64, u64>,
    incomplete_rev: HashMap<u64, u64>,
    visited: HashSet<(usize, usize)>,
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

/// `x vs y` when the two texts differ.
pub(crate) fn versus(what: &str, x: String, y: String) -> String {
    format!("{what}: {x} vs {y}")
}

/// A type in a message.
fn type_text(t: Option<&Type>) -> String {
    t.map_or_else(|| "none".to_string(), crate::printer::print_type)
}

impl Comparer {
    fn new(map_free_vars: bool) -> Comparer {
        Comparer::with_rules(AttrEquality::representation(map_free_vars))
    }

    fn with_rules(rules: AttrEquality) -> Comparer {
        Comparer {
            map_free_vars: rules.map_free_vars,
            nan: rules.nan,
            vars: HashMap::new(),
            vars_rev: HashMap::new(),
            type_vars: HashMap::new(),
            type_vars_rev: HashMap::new(),
            incomplete: HashMap::new(),
            incomplete_rev: HashMap::new(),
            visited: HashSet::new(),
        }
    }

    /// The attribute rules of this comparison.
    fn attr_rules(&self) -> AttrEquality {
        AttrEquality {
            nan: self.nan,
            map_free_vars: self.map_free_vars,
        }
    }

    fn compare_exprs(&mut self, a: &Expr, b: &Expr) -> Option<Difference> {
        let mut stack = vec![Task::Expr(a.clone(), b.clone(), Context::default())];
        while let Some(task) = stack.pop() {
            let found = match task {
                Task::Bind(va, vb) => self.bind_var(&va, &vb),
                Task::Expr(ea, eb, context) => self.step(&ea, &eb, context, &mut stack),
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn bind_var(&mut self, a: &Var, b: &Var) -> Option<Difference> {
        let at = |reason: String| {
            Some(Difference {
                reason,
                lhs: a.expr().span(),
                rhs: b.expr().span(),
                global: None,
            })
        };
        if !bind(&mut self.vars, &mut self.vars_rev, a.id(), b.id()) {
            return at(format!(
                "%{} and %{} are bound at different places",
                a.name(),
                b.name()
            ));
        }
        // `_` (an incomplete type, as `a; b` binds its `let` variable) and
        // no annotation both leave the type to inference; the printer
        // writes neither, so they must be equal for a print to read back.
        fn given(var: &Var) -> Option<&Type> {
            var.type_annotation().filter(|t| !t.is_incomplete())
        }
        let equal = match (given(a), given(b)) {
            (None, None) => true,
            (Some(ta), Some(tb)) => self.types_equal(ta, tb),
            _ => false,
        };
        if equal {
            None
        } else {
            at(versus(
                &format!("type annotation of %{}", a.name()),
                type_text(a.type_annotation()),
                type_text(b.type_annotation()),
            ))
        }
    }

    /// Compares the node itself and schedules its children (first child on top).
    fn step(
        &mut self,
        a: &Expr,
        b: &Expr,
        context: Context,
        stack: &mut Vec<Task>,
    ) -> Option<Difference> {
        if !self.visited.insert((a.addr(), b.addr())) {
            return None;
        }
        let is_var = matches!(a.kind(), ExprKind::Var(_));
        // Children report at this node when they have no span of their own;
        // a variable reports at its use, not its binding site.
        let here = Context {
            lhs: a.span().filter(|_| !is_var).or(context.lhs),
            rhs: b
                .span()
                .filter(|_| !matches!(b.kind(), ExprKind::Var(_)))
                .or(context.rhs),
        };
        let differ = |reason: String| {
            Some(Difference {
                reason,
                lhs: here.lhs,
                rhs: here.rhs,
                global: None,
            })
        };
        let mut push = Vec::new();
        let result = match (a.kind(), b.kind()) {
            (ExprKind::Var(da), ExprKind::Var(db)) => self.var_difference(da, db).and_then(differ),
            (ExprKind::GlobalVar(ga), ExprKind::GlobalVar(gb)) => (ga != gb)
                .then(|| format!("global @{} vs @{}", ga.name(), gb.name()))
                .and_then(differ),
            (ExprKind::Op(oa), ExprKind::Op(ob)) => (oa.name != ob.name)
                .then(|| format!("op {} vs {}", oa.name, ob.name))
                .and_then(differ),
            (ExprKind::Constructor(ca), ExprKind::Constructor(cb)) => (ca != cb)
                .then(|| format!("constructor {} vs {}", ca.name(), cb.name()))
                .and_then(differ),
            (ExprKind::Constant(ta), ExprKind::Constant(tb)) => {
                constant_difference(ta, tb).and_then(differ)
            }
            (ExprKind::Tuple(fa), ExprKind::Tuple(fb)) => {
                if fa.len() != fb.len() {
                    differ(format!("a tuple of {} vs {} fields", fa.len(), fb.len()))
                } else {
                    push.extend(
                        fa.iter()
                            .zip(fb)
                            .map(|(x, y)| Task::Expr(x.clone(), y.clone(), here)),
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
                    differ(format!("projection .{ia} vs .{ib}"))
                } else {
                    push.push(Task::Expr(ta.clone(), tb.clone(), here));
                    None
                }
            }
            (ExprKind::Call(ca), ExprKind::Call(cb)) => {
                // Calls of different operators differ in their attributes
                // and arguments too; the operator is what to report.
                let different_ops = match (ca.callee.as_op(), cb.callee.as_op()) {
                    (Some(x), Some(y)) => (x.name != y.name).then_some((x, y)),
                    _ => None,
                };
                if let Some((x, y)) = different_ops {
                    let at = Context {
                        lhs: ca.callee.span().or(here.lhs),
                        rhs: cb.callee.span().or(here.rhs),
                    };
                    Some(Difference {
                        reason: format!("op {} vs {}", x.name, y.name),
                        lhs: at.lhs,
                        rhs: at.rhs,
                        global: None,
                    })
                } else if ca.args.len() != cb.args.len() {
                    differ(format!(
                        "a call with {} vs {} arguments",
                        ca.args.len(),
                        cb.args.len()
                    ))
                } else if let Some(reason) =
                    attrs_difference(ca.attrs.as_ref(), cb.attrs.as_ref(), self.attr_rules())
                {
                    differ(reason)
                } else if ca.type_args.len() != cb.type_args.len()
                    || !ca
                        .type_args
                        .iter()
                        .zip(&cb.type_args)
                        .all(|(x, y)| self.types_equal(x, y))
                {
                    let list = |ts: &[Type]| {
                        let texts: Vec<String> =
                            ts.iter().map(crate::printer::print_type).collect();
                        format!("[{}]", texts.join(", "))
                    };
                    differ(versus(
                        "type arguments",
                        list(&ca.type_args),
                        list(&cb.type_args),
                    ))
                } else {
                    push.push(Task::Expr(ca.callee.clone(), cb.callee.clone(), here));
                    push.extend(
                        ca.args
                            .iter()
                            .zip(&cb.args)
                            .map(|(x, y)| Task::Expr(x.clone(), y.clone(), here)),
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
                push.push(Task::Expr(xa.clone(), xb.clone(), here));
                push.push(Task::Expr(ba.clone(), bb.clone(), here));
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
                push.push(Task::Expr(ca.clone(), cb.clone(), here));
                push.push(Task::Expr(ta.clone(), tb.clone(), here));
                push.push(Task::Expr(ea.clone(), eb.clone(), here));
                None
            }
            (ExprKind::Function(fa), ExprKind::Function(fb)) => {
                if fa.params.len() != fb.params.len() {
                    differ(format!(
                        "a function of {} vs {} parameters",
                        fa.params.len(),
                        fb.params.len()
                    ))
                } else if fa.type_params.len() != fb.type_params.len() {
                    differ(format!(
                        "a function of {} vs {} type parameters",
                        fa.type_params.len(),
                        fb.type_params.len()
                    ))
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
                        differ(versus(
                            "return type",
                            type_text(fa.ret_type.as_ref()),
                            type_text(fb.ret_type.as_ref()),
                        ))
                    } else if let Some(reason) =
                        dict_attrs_difference(&fa.attrs, &fb.attrs, self.attr_rules())
                    {
                        differ(reason)
                    } else {
                        push.extend(
                            fa.params
                                .iter()
                                .zip(&fb.params)
                                .map(|(x, y)| Task::Bind(x.clone(), y.clone())),
                        );
                        push.push(Task::Expr(fa.body.clone(), fb.body.clone(), here));
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
                let word = |complete: bool| if complete { "match" } else { "match?" };
                if pa != pb {
                    differ(format!("{} vs {}", word(*pa), word(*pb)))
                } else if ca.len() != cb.len() {
                    differ(format!("a match of {} vs {} clauses", ca.len(), cb.len()))
                } else {
                    push.push(Task::Expr(da.clone(), db.clone(), here));
                    let mut differing_clause = None;
                    for (i, (x, y)) in ca.iter().zip(cb).enumerate() {
                        if !self.patterns(&x.pattern, &y.pattern, &mut push) {
                            differing_clause.get_or_insert(i);
                        }
                        push.push(Task::Expr(x.rhs.clone(), y.rhs.clone(), here));
                    }
                    match differing_clause {
                        Some(i) => differ(format!("the patterns of clause {} differ", i + 1)),
                        None => None,
                    }
                }
            }
            (ExprKind::RefCreate(xa), ExprKind::RefCreate(xb))
            | (ExprKind::RefRead(xa), ExprKind::RefRead(xb)) => {
                push.push(Task::Expr(xa.clone(), xb.clone(), here));
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
                push.push(Task::Expr(ra.clone(), rb.clone(), here));
                push.push(Task::Expr(xa.clone(), xb.clone(), here));
                None
            }
            _ => differ(format!(
                "{} vs {}",
                kind_name(a.kind()),
                kind_name(b.kind())
            )),
        };
        stack.extend(push.into_iter().rev());
        result
    }

    /// Why two variable occurrences do not correspond, if they do not.
    fn var_difference(&mut self, a: &VarData, b: &VarData) -> Option<String> {
        let ok = match self.vars.get(&a.id) {
            Some(mapped) => *mapped == b.id,
            None if self.vars_rev.contains_key(&b.id) => false,
            None if a.id == b.id => true,
            None if self.map_free_vars && a.name == b.name => {
                bind(&mut self.vars, &mut self.vars_rev, a.id, b.id)
            }
            None => false,
        };
        if ok {
            return None;
        }
        let bound_a = self.vars.contains_key(&a.id);
        let bound_b = self.vars_rev.contains_key(&b.id);
        Some(match (bound_a, bound_b) {
            (false, false) if a.name == b.name => format!(
                "free variable %{} vs %{}: not the same variable (free variables match by \
                 name only when asked to)",
                a.name, b.name
            ),
            (false, false) => format!("free variable %{} vs %{}", a.name, b.name),
            (true, false) => format!("variable %{} vs free variable %{}", a.name, b.name),
            (false, true) => format!("free variable %{} vs variable %{}", a.name, b.name),
            (true, true) => format!(
                "variable %{} vs %{}: they are bound at different places",
                a.name, b.name
            ),
        })
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

    /// Why two definitions of the same ADT differ, if they do.
    fn type_data_difference(&mut self, a: &TypeData, b: &TypeData) -> Option<String> {
        if a.header != b.header {
            return Some(format!("{} vs {}", a.header.name(), b.header.name()));
        }
        if a.type_vars.len() != b.type_vars.len() {
            return Some(format!(
                "{} vs {} type parameters",
                a.type_vars.len(),
                b.type_vars.len()
            ));
        }
        for (x, y) in a.type_vars.iter().zip(&b.type_vars) {
            bind(&mut self.type_vars, &mut self.type_vars_rev, x.id(), y.id());
        }
        let names = |data: &TypeData| {
            let names: Vec<&str> = data.constructors.iter().map(|c| c.name()).collect();
            format!("[{}]", names.join(", "))
        };
        if a.constructors.len() != b.constructors.len()
            || a.constructors
                .iter()
                .zip(&b.constructors)
                .any(|(x, y)| x.name() != y.name())
        {
            return Some(versus("constructors", names(a), names(b)));
        }
        for (x, y) in a.constructors.iter().zip(&b.constructors) {
            let (dx, dy) = (x.data(), y.data());
            let equal = dx.inputs.len() == dy.inputs.len()
                && dx
                    .inputs
                    .iter()
                    .zip(&dy.inputs)
                    .all(|(p, q)| self.types_equal(p, q));
            if !equal {
                let list = |ts: &[Type]| {
                    let texts: Vec<String> = ts.iter().map(crate::printer::print_type).collect();
                    format!("({})", texts.join(", "))
                };
                return Some(versus(
                    &format!("fields of constructor {}", dx.name),
                    list(&dx.inputs),
                    list(&dy.inputs),
                ));
            }
        }
        None
    }
}

/// Why two constants differ, if they do: dtype, shape, then the first
/// element whose bytes differ (constants compare bit for bit).
fn constant_difference(a: &TensorData, b: &TensorData) -> Option<String> {
    if a.dtype != b.dtype {
        return Some(versus(
            "constant dtype",
            a.dtype.to_tvm_string(),
            b.dtype.to_tvm_string(),
        ));
    }
    if a.shape != b.shape {
        let shape = |s: &[i64]| format!("{s:?}");
        return Some(versus("constant shape", shape(&a.shape), shape(&b.shape)));
    }
    if a.data == b.data {
        return None;
    }
    let element_bytes = a.dtype.bytes().max(1);
    let first_byte = a
        .data
        .iter()
        .zip(&b.data)
        .position(|(x, y)| x != y)
        .unwrap_or(a.data.len().min(b.data.len()));
    Some(format!(
        "constant data differs at element {}",
        first_byte / element_bytes
    ))
}

fn dims_equal(a: &Dim, b: &Dim) -> bool {
    match (a, b) {
        (Dim::Int { .. }, Dim::Int { .. }) => a.as_int_imm() == b.as_int_imm(),
        (Dim::Any, Dim::Any) => true,
        (Dim::Meta(x), Dim::Meta(y)) => {
            x == y || crate::metadata::subgraphs_equal(&x.graph, x.index, &y.graph, y.index)
        }
        // Computed sizes compare structurally, also with a metadata object.
        (Dim::Expr(_), Dim::Expr(_) | Dim::Meta(_)) | (Dim::Meta(_), Dim::Expr(_)) => a == b,
        _ => false,
    }
}

pub(crate) fn kind_name(kind: &ExprKind) -> &'static str {
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
    let order = crate::rewrite::post_order(expr);
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
        for child in crate::rewrite::children(node) {
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

/// Why two expressions differ under `rules` (expressions inside
/// attributes compare with the attributes' rules).
pub(crate) fn expr_difference_with(a: &Expr, b: &Expr, rules: AttrEquality) -> Option<Difference> {
    Comparer::with_rules(rules).compare_exprs(a, b)
}

/// Whether two call attribute objects are equal as [`structural_equal`]
/// compares them (with `map_free_vars` for expressions inside).
pub fn attrs_equal(a: Option<&Attrs>, b: Option<&Attrs>) -> bool {
    attr_equal::attrs_equal(a, b, AttrEquality::representation(true))
}

/// Whether two function attribute dictionaries are equal as
/// [`structural_equal`] compares them.
pub fn dict_attrs_equal(a: &DictAttrs, b: &DictAttrs) -> bool {
    (a.entries().is_empty() && b.entries().is_empty())
        || attr_equal::dict_attrs_equal(a, b, AttrEquality::representation(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;
    use crate::{Function, FunctionData};

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
        assert_eq!(d.reason, "op add vs multiply");
    }
}
