//! The type solver: TVM's `TypeSolver` (`src/relay/analysis/type_solver.cc`).
//!
//! Types live in a union-find structure of type nodes. A type is found by
//! identity, as TVM keys its table on object pointers: an incomplete type by
//! its id, any other type by the address of its node. Unifying two nodes
//! merges them into the node of the unified type. Operator relations are
//! kept in a FIFO queue; each relation remembers the type nodes it mentions,
//! and merging a node re-queues the unresolved relations that mention it or
//! any type inside it. [`Solver::solve`] runs queued relations with their
//! arguments resolved until the queue is empty.
//!
//! Nothing here recurses on the size of an expression: types are nested only
//! as deep as the text nests them, and relations are run from the queue.

use super::display::{show_dim, show_type};
use super::relation::{RelationArgs, RelationFn, RelationOutcome};
use crate::diagnostic::{Diagnostic, Label, Layer};
use crate::ir::{
    Attrs, Dim, Expr, ExprKind, FuncType, MetaObject, TensorType, Type, TypeKind, TypeVar,
};
use crate::source::Span;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A fast hasher for integer keys (addresses and ids).
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A hash map keyed by addresses or ids.
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// The address of a type's node: its identity.
pub(crate) fn type_addr(t: &Type) -> usize {
    t.kind() as *const TypeKind as usize
}

/// What a relation computes.
#[derive(Clone)]
pub(crate) enum RelFunc {
    /// An operator's relation, with the operator's name for messages.
    Op { func: RelationFn, op: &'static str },
    /// TVM's built-in `TupleGetItem` relation with its index.
    TupleGetItem(usize),
}

impl RelFunc {
    fn same(&self, other: &RelFunc) -> bool {
        match (self, other) {
            (RelFunc::Op { op: a, .. }, RelFunc::Op { op: b, .. }) => a == b,
            (RelFunc::TupleGetItem(a), RelFunc::TupleGetItem(b)) => a == b,
            _ => false,
        }
    }
}

/// A type constraint of a polymorphic function type (an operator's type):
/// the relation over some of the type's variables.
#[derive(Clone)]
pub(crate) struct Constraint {
    pub func: RelFunc,
    pub args: Vec<Type>,
    pub num_inputs: usize,
}

/// Where a unification problem comes from: the span errors are reported at
/// and related locations.
#[derive(Clone, Default)]
pub(crate) struct Site {
    pub span: Option<Span>,
    pub labels: Vec<Label>,
}

impl Site {
    pub fn at(span: Option<Span>) -> Site {
        Site {
            span,
            labels: Vec::new(),
        }
    }

    pub fn label(mut self, span: Option<Span>, message: impl Into<String>) -> Site {
        if let Some(span) = span {
            self.labels.push(Label {
                span,
                message: message.into(),
            });
        }
        self
    }

    /// A label at `e` saying `what` it is. A variable's span is its
    /// declaration (every use is the same node), so the label says so.
    pub fn about(self, e: &Expr, what: &str) -> Site {
        let info = ArgInfo::of(e);
        let message = info.describe(what);
        self.label(info.span, message)
    }
}

/// Where an argument of a call is, for labels.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArgInfo {
    pub span: Option<Span>,
    /// The variable's name when the argument is a variable (whose span is
    /// its declaration).
    pub var: Option<String>,
}

impl ArgInfo {
    pub fn of(e: &Expr) -> ArgInfo {
        ArgInfo {
            span: e.span(),
            var: match e.kind() {
                ExprKind::Var(v) => Some(v.name.clone()),
                _ => None,
            },
        }
    }

    /// `what`, or for a variable, `what is `%x`, declared here`.
    pub fn describe(&self, what: &str) -> String {
        match &self.var {
            Some(name) if !name.is_empty() => format!("{what} is `%{name}`, declared here"),
            Some(_) => format!("{what} is a variable declared here"),
            None => what.to_string(),
        }
    }
}

/// A failed occurs check: unifying would make a type contain itself. TVM
/// aborts here; the inferencer reports it as an error.
#[derive(Debug, Clone)]
pub(crate) struct Occurs {
    pub incomplete: Type,
    pub inside: Type,
}

const NONE: u32 = u32::MAX;

struct TypeNode {
    /// The type this node was made for; the root's is the resolved type.
    ty: Type,
    parent: u32,
    /// Relations that mention this type (resolved ones may linger).
    rels: Vec<u32>,
}

struct RelationNode {
    func: RelFunc,
    /// The type node of each argument (inputs then the output).
    nodes: Vec<u32>,
    num_inputs: usize,
    attrs: Option<Attrs>,
    span: Option<Span>,
    /// The call's arguments, for labels.
    inputs: Vec<ArgInfo>,
    inqueue: bool,
    resolved: bool,
}

/// A relation to add to the solver.
pub(crate) struct NewRelation {
    pub func: RelFunc,
    pub args: Vec<Type>,
    pub num_inputs: usize,
    pub attrs: Option<Attrs>,
    pub span: Option<Span>,
    pub inputs: Vec<ArgInfo>,
}

/// The outcome of unifying two concrete types structurally.
enum Structural {
    Unified(Type),
    /// No match; the caller reports the generic message.
    Mismatch,
    /// No match, and a more precise error was already reported.
    Reported,
}

pub(crate) struct Solver {
    nodes: Vec<TypeNode>,
    by_addr: IdMap<usize, u32>,
    by_incomplete: IdMap<u64, u32>,
    rels: Vec<RelationNode>,
    queue: VecDeque<u32>,
    /// TVM's `shape_uf_`: symbolic sizes bound to other sizes.
    shape_uf: HashMap<MetaObject, Dim>,
    /// Constraints of polymorphic function types, by the type's address.
    constraints: IdMap<usize, (Type, Vec<Constraint>)>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Solver {
    pub fn new() -> Solver {
        Solver {
            nodes: Vec::new(),
            by_addr: IdMap::default(),
            by_incomplete: IdMap::default(),
            rels: Vec::new(),
            queue: VecDeque::new(),
            shape_uf: HashMap::new(),
            constraints: IdMap::default(),
            diagnostics: Vec::new(),
        }
    }

    // ---- constraints of function types ----

    /// Records the constraints of a polymorphic function type.
    pub fn set_constraints(&mut self, t: &Type, constraints: Vec<Constraint>) {
        if !constraints.is_empty() {
            self.constraints
                .insert(type_addr(t), (t.clone(), constraints));
        }
    }

    /// The constraints of a function type (none for most).
    pub fn constraints(&self, t: &Type) -> &[Constraint] {
        self.constraints
            .get(&type_addr(t))
            .map_or(&[], |(_, cs)| cs.as_slice())
    }

    // ---- union-find ----

    fn find(&mut self, mut n: u32) -> u32 {
        let mut root = n;
        while self.nodes[root as usize].parent != NONE {
            root = self.nodes[root as usize].parent;
        }
        while self.nodes[n as usize].parent != NONE {
            let next = self.nodes[n as usize].parent;
            self.nodes[n as usize].parent = root;
            n = next;
        }
        root
    }

    /// TVM's `GetTypeNode`: the root of the node of `t`, made if new.
    fn node_of(&mut self, t: &Type) -> u32 {
        let existing = match t.kind() {
            TypeKind::Incomplete(id) => self.by_incomplete.get(&id.0).copied(),
            _ => self.by_addr.get(&type_addr(t)).copied(),
        };
        match existing {
            Some(n) => self.find(n),
            None => {
                let n = self.nodes.len() as u32;
                self.nodes.push(TypeNode {
                    ty: t.clone(),
                    parent: NONE,
                    rels: Vec::new(),
                });
                match t.kind() {
                    TypeKind::Incomplete(id) => {
                        self.by_incomplete.insert(id.0, n);
                    }
                    _ => {
                        self.by_addr.insert(type_addr(t), n);
                    }
                }
                n
            }
        }
    }

    fn insert_rel(&mut self, node: u32, rel: u32) {
        let rels = &mut self.nodes[node as usize].rels;
        if rels.contains(&rel) {
            return;
        }
        if rels.len() >= 32 && rels.len().is_power_of_two() {
            let resolved: Vec<bool> = rels
                .iter()
                .map(|&r| self.rels[r as usize].resolved)
                .collect();
            let mut i = 0;
            rels.retain(|_| {
                i += 1;
                !resolved[i - 1]
            });
        }
        rels.push(rel);
    }

    fn add_to_queue(&mut self, rel: u32) {
        let r = &mut self.rels[rel as usize];
        if r.inqueue || r.resolved {
            return;
        }
        r.inqueue = true;
        self.queue.push_back(rel);
    }

    /// TVM's `Propagator`: links `rels` to `t` and to the types inside it
    /// (not inside a reference type, as in TVM).
    fn propagate(&mut self, t: &Type, rels: &[u32]) {
        if rels.is_empty() {
            return;
        }
        let n = self.node_of(t);
        for &r in rels {
            self.insert_rel(n, r);
        }
        match t.kind() {
            TypeKind::Tuple(fields) => {
                for f in fields {
                    self.propagate(f, rels);
                }
            }
            TypeKind::Func(f) => {
                self.propagate(&f.ret, rels);
                for p in &f.params {
                    self.propagate(p, rels);
                }
            }
            TypeKind::Call { func, args } => {
                self.propagate(func, rels);
                for a in args {
                    self.propagate(a, rels);
                }
            }
            _ => {}
        }
    }

    /// TVM's `Merger::TransferLinks` over `t` and its tuple and function
    /// parts: unresolved relations of those nodes are re-queued and linked
    /// to `dst`.
    fn transfer_links(&mut self, t: &Type, dst: u32) {
        let src = self.node_of(t);
        if src != dst {
            let rels = self.nodes[src as usize].rels.clone();
            for r in rels {
                if !self.rels[r as usize].resolved {
                    self.add_to_queue(r);
                    self.insert_rel(dst, r);
                }
            }
        }
        match t.kind() {
            TypeKind::Tuple(fields) => {
                for f in fields {
                    self.transfer_links(f, dst);
                }
            }
            TypeKind::Func(f) => {
                self.transfer_links(&f.ret, dst);
                for p in &f.params {
                    self.transfer_links(p, dst);
                }
            }
            _ => {}
        }
    }

    /// TVM's `MergeFromTo`.
    fn merge(&mut self, src: u32, dst: u32) {
        let src = self.find(src);
        let dst = self.find(dst);
        if src == dst {
            return;
        }
        let ty = self.nodes[src as usize].ty.clone();
        self.transfer_links(&ty, dst);
        self.nodes[src as usize].parent = dst;
        let rels: Vec<u32> = self.nodes[dst as usize]
            .rels
            .iter()
            .copied()
            .filter(|&r| !self.rels[r as usize].resolved)
            .collect();
        let dst_ty = self.nodes[dst as usize].ty.clone();
        self.propagate(&dst_ty, &rels);
    }

    // ---- unification ----

    /// Unifies `lhs` with `rhs` and returns the unified type. A mismatch is
    /// reported at `site` and `lhs`'s current type is returned; only a
    /// failed occurs check is an `Err`. `assign_lhs` / `assign_rhs` say
    /// whether each side's node takes the unified type (a call's argument
    /// keeps its own, more precise type when it meets a `?` parameter).
    pub fn unify(
        &mut self,
        lhs: &Type,
        rhs: &Type,
        site: &Site,
        assign_lhs: bool,
        assign_rhs: bool,
    ) -> Result<Type, Occurs> {
        let l = self.node_of(lhs);
        let r = self.node_of(rhs);
        if l == r {
            return Ok(self.nodes[l as usize].ty.clone());
        }
        let lty = self.nodes[l as usize].ty.clone();
        let rty = self.nodes[r as usize].ty.clone();
        if lty.is_incomplete() {
            if self.occurs(l, &rty) {
                return Err(Occurs {
                    incomplete: lty,
                    inside: rty,
                });
            }
            self.merge(l, r);
            return Ok(rty);
        }
        if rty.is_incomplete() {
            if self.occurs(r, &lty) {
                return Err(Occurs {
                    incomplete: rty,
                    inside: lty,
                });
            }
            self.merge(r, l);
            return Ok(lty);
        }
        match self.structural(&rty, &lty, site)? {
            Structural::Unified(resolved) => {
                let top = self.node_of(&resolved);
                if assign_lhs {
                    self.merge(l, top);
                }
                if assign_rhs {
                    self.merge(r, top);
                }
                Ok(resolved)
            }
            Structural::Mismatch => {
                self.error(
                    site,
                    format!(
                        "The Relay type checker is unable to show the following types match.\n\
                         In particular `{}` does not match `{}`",
                        show_type(&lty),
                        show_type(&rty)
                    ),
                );
                Ok(lty)
            }
            Structural::Reported => Ok(lty),
        }
    }

    fn error(&mut self, site: &Site, message: String) {
        let mut d = Diagnostic::error(Layer::Type, message);
        d.span = site.span;
        d.labels = site.labels.clone();
        self.diagnostics.push(d);
    }

    /// Whether the incomplete type of node `var` occurs in `t`.
    fn occurs(&mut self, var: u32, t: &Type) -> bool {
        match t.kind() {
            TypeKind::Incomplete(_) => {
                let n = self.node_of(t);
                n == self.find(var)
            }
            TypeKind::Tensor(_) | TypeKind::Var(_) | TypeKind::GlobalVar(_) => false,
            TypeKind::Tuple(fields) => fields.iter().any(|f| self.occurs(var, f)),
            TypeKind::Func(f) => {
                let mut found =
                    f.params.iter().any(|p| self.occurs(var, p)) || self.occurs(var, &f.ret);
                if !found {
                    let cs: Vec<Type> = self
                        .constraints(t)
                        .iter()
                        .flat_map(|c| c.args.iter().cloned())
                        .collect();
                    found = cs.iter().any(|a| self.occurs(var, a));
                }
                found
            }
            TypeKind::Call { func, args } => {
                self.occurs(var, func) || args.iter().any(|a| self.occurs(var, a))
            }
            TypeKind::Ref(inner) => self.occurs(var, inner),
        }
    }

    /// TVM's `Unifier::VisitType(rhs, lhs)`: `op` is the right-hand side's
    /// type, `tn` the left-hand side's (TVM visits them in this order, which
    /// decides the order of the types in messages and of nested calls).
    fn structural(&mut self, op: &Type, tn: &Type, site: &Site) -> Result<Structural, Occurs> {
        match op.kind() {
            TypeKind::Tensor(a) => {
                let TypeKind::Tensor(b) = tn.kind() else {
                    return Ok(Structural::Mismatch);
                };
                Ok(self.unify_tensors(op, a, tn, b, site))
            }
            TypeKind::Tuple(fa) => {
                let TypeKind::Tuple(fb) = tn.kind() else {
                    return Ok(Structural::Mismatch);
                };
                if fa.len() != fb.len() {
                    return Ok(Structural::Mismatch);
                }
                let mut fields = Vec::with_capacity(fa.len());
                for (a, b) in fa.iter().zip(fb) {
                    fields.push(self.unify(a, b, site, true, true)?);
                }
                Ok(Structural::Unified(Type::tuple(fields)))
            }
            TypeKind::Func(fa) => {
                let TypeKind::Func(fb) = tn.kind() else {
                    return Ok(Structural::Mismatch);
                };
                self.unify_funcs(op, fa, tn, fb, site)
            }
            TypeKind::Ref(a) => {
                let TypeKind::Ref(b) = tn.kind() else {
                    return Ok(Structural::Mismatch);
                };
                let inner = self.unify(a, b, site, true, true)?;
                Ok(Structural::Unified(Type::new(TypeKind::Ref(inner))))
            }
            TypeKind::Call { func, args } => {
                let TypeKind::Call {
                    func: tfunc,
                    args: targs,
                } = tn.kind()
                else {
                    return Ok(Structural::Mismatch);
                };
                if args.len() != targs.len() {
                    return Ok(Structural::Mismatch);
                }
                let func = self.unify(func, tfunc, site, true, true)?;
                let mut new_args = Vec::with_capacity(args.len());
                for (a, b) in args.iter().zip(targs) {
                    new_args.push(self.unify(a, b, site, true, true)?);
                }
                Ok(Structural::Unified(Type::new(TypeKind::Call {
                    func,
                    args: new_args,
                })))
            }
            TypeKind::Var(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => {
                if op == tn {
                    Ok(Structural::Unified(op.clone()))
                } else {
                    Ok(Structural::Mismatch)
                }
            }
        }
    }

    fn unify_tensors(
        &mut self,
        op: &Type,
        a: &TensorType,
        tn: &Type,
        b: &TensorType,
        site: &Site,
    ) -> Structural {
        if a == b {
            return Structural::Unified(op.clone());
        }
        if a.dtype != b.dtype {
            return Structural::Mismatch;
        }
        if a.shape.len() != b.shape.len() {
            self.error(
                site,
                format!(
                    "tensor type `{}` has {} dimensions, while `{}` has {} dimensions",
                    show_type(op),
                    a.shape.len(),
                    show_type(tn),
                    b.shape.len()
                ),
            );
            return Structural::Reported;
        }
        let mut shape = Vec::with_capacity(a.shape.len());
        let mut mismatches = Vec::new();
        for (i, (da, db)) in a.shape.iter().zip(&b.shape).enumerate() {
            match self.unify_dim(da, db) {
                Some(d) => shape.push(d),
                None => {
                    shape.push(da.clone());
                    mismatches.push((i, da, db));
                }
            }
        }
        if !mismatches.is_empty() {
            let mut message = format!(
                "The Relay type checker is unable to show the following types match:\n  {}\n  {}\nIn particular:",
                show_type(op),
                show_type(tn)
            );
            for (i, da, db) in mismatches {
                message.push_str(&format!(
                    "\n  dimension {i} conflicts: {} does not match {}.",
                    show_dim(da),
                    show_dim(db)
                ));
            }
            self.error(site, message);
            return Structural::Reported;
        }
        Structural::Unified(Type::tensor(shape, a.dtype))
    }

    fn shape_root(&self, d: &Dim) -> Dim {
        let mut d = d.clone();
        // Bounded: bindings only go from a variable to something else.
        for _ in 0..=self.shape_uf.len() {
            let Dim::Meta(m) = &d else { break };
            match self.shape_uf.get(m) {
                Some(next) => d = next.clone(),
                None => break,
            }
        }
        d
    }

    /// TVM's `UnifyDim`.
    fn unify_dim(&mut self, l: &Dim, r: &Dim) -> Option<Dim> {
        let ul = self.shape_root(l);
        let ur = self.shape_root(r);
        // `same_as`: symbolic sizes unify only with the same object (equal
        // immediates are handled below).
        if ul.same_as(&ur) {
            return Some(ul);
        }
        if matches!(ul, Dim::Any) || matches!(ur, Dim::Any) {
            return Some(Dim::Any);
        }
        let is_var = |d: &Dim| matches!(d, Dim::Meta(m) if m.type_key() == "tir.Var");
        match (&ul, &ur) {
            (Dim::Meta(m), Dim::Int { .. }) if is_var(&ul) => {
                self.shape_uf.insert(m.clone(), ur.clone());
                Some(ur)
            }
            (Dim::Int { .. }, Dim::Meta(m)) if is_var(&ur) => {
                self.shape_uf.insert(m.clone(), ul.clone());
                Some(ul)
            }
            (Dim::Int { value: a, .. }, Dim::Int { value: b, .. }) if a == b => Some(ul),
            _ => None,
        }
    }

    fn unify_funcs(
        &mut self,
        op: &Type,
        fa: &FuncType,
        tn: &Type,
        fb: &FuncType,
        site: &Site,
    ) -> Result<Structural, Occurs> {
        let ca = self.constraints(op).to_vec();
        let cb = self.constraints(tn).to_vec();
        if fa.params.len() != fb.params.len() || ca.len() != cb.len() {
            return Ok(Structural::Mismatch);
        }
        if fa.type_params.len() < fb.type_params.len() {
            return self.unify_funcs(tn, fb, op, fa, site);
        }
        // Rename `op`'s type parameters to `tn`'s; extra ones become unknown.
        let mut map: IdMap<u64, Type> = IdMap::default();
        for (i, tv) in fa.type_params.iter().enumerate() {
            let to = match fb.type_params.get(i) {
                Some(other) => Type::var(other.clone()),
                None => Type::incomplete(),
            };
            map.insert(tv.id(), to);
        }
        let ret1 = subst(&fa.ret, &map);
        let params1: Vec<Type> = fa.params.iter().map(|p| subst(p, &map)).collect();
        let ret = self.unify(&ret1, &fb.ret, site, true, true)?;
        let mut params = Vec::with_capacity(params1.len());
        for (a, b) in params1.iter().zip(&fb.params) {
            params.push(self.unify(a, b, site, true, true)?);
        }
        let mut constraints = Vec::with_capacity(ca.len());
        for (a, b) in ca.iter().zip(&cb) {
            let args1: Vec<Type> = a.args.iter().map(|t| subst(t, &map)).collect();
            if !a.func.same(&b.func) || a.num_inputs != b.num_inputs || args1 != b.args {
                return Ok(Structural::Mismatch);
            }
            constraints.push(b.clone());
        }
        let result = Type::func(params, ret, fb.type_params.clone());
        self.set_constraints(&result, constraints);
        Ok(Structural::Unified(result))
    }

    // ---- relations ----

    /// TVM's `AddConstraint` for a relation: links it to its arguments'
    /// nodes and queues it.
    pub fn add_relation(&mut self, rel: NewRelation) {
        let id = self.rels.len() as u32;
        let mut nodes = Vec::with_capacity(rel.args.len());
        self.rels.push(RelationNode {
            func: rel.func,
            nodes: Vec::new(),
            num_inputs: rel.num_inputs,
            attrs: rel.attrs,
            span: rel.span,
            inputs: rel.inputs,
            inqueue: false,
            resolved: false,
        });
        for arg in &rel.args {
            let n = self.node_of(arg);
            nodes.push(n);
            let ty = self.nodes[n as usize].ty.clone();
            self.propagate(&ty, &[id]);
        }
        self.rels[id as usize].nodes = nodes;
        self.add_to_queue(id);
    }

    /// TVM's `Solve`: runs queued relations until none is left.
    pub fn solve(&mut self) {
        while let Some(id) = self.queue.pop_front() {
            let (func, nodes, num_inputs, attrs) = {
                let r = &self.rels[id as usize];
                (
                    r.func.clone(),
                    r.nodes.clone(),
                    r.num_inputs,
                    r.attrs.clone(),
                )
            };
            let mut args = Vec::with_capacity(nodes.len());
            for n in nodes {
                let root = self.find(n);
                let ty = self.nodes[root as usize].ty.clone();
                args.push(self.resolve(&ty));
            }
            let resolved = self.run_relation(id, &func, &args, num_inputs, attrs.as_ref());
            let r = &mut self.rels[id as usize];
            r.resolved = resolved;
            r.inqueue = false;
        }
    }

    /// Calls one relation and applies what it concludes; returns whether
    /// the relation is done.
    fn run_relation(
        &mut self,
        id: u32,
        func: &RelFunc,
        args: &[Type],
        num_inputs: usize,
        attrs: Option<&Attrs>,
    ) -> bool {
        let span = self.rels[id as usize].span;
        let outcome = match func {
            RelFunc::TupleGetItem(index) => tuple_get_item_rel(*index, args),
            RelFunc::Op { func, .. } => {
                if args.len() <= num_inputs {
                    return true;
                }
                let rel_args = RelationArgs {
                    inputs: &args[..num_inputs],
                    output: &args[num_inputs],
                    attrs,
                };
                func(&rel_args).map_err(|e| (e.message, e.input))
            }
        };
        match outcome {
            Ok(RelationOutcome::NotReady) => false,
            Ok(RelationOutcome::Solved(assignments)) => {
                for (slot, ty) in assignments {
                    let Some(dst) = args.get(slot) else {
                        let op = match func {
                            RelFunc::Op { op, .. } => *op,
                            RelFunc::TupleGetItem(_) => "TupleGetItem",
                        };
                        self.error(
                            &Site::at(span),
                            format!("internal error: the type relation of `{op}` assigned slot {slot} of {}", args.len()),
                        );
                        continue;
                    };
                    let input = if slot < num_inputs {
                        self.rels[id as usize].inputs.get(slot).cloned()
                    } else {
                        None
                    };
                    let site = match input {
                        Some(info) => Site::at(span)
                            .label(info.span, info.describe(&format!("argument {slot}"))),
                        None => Site::at(span),
                    };
                    if let Err(occurs) = self.unify(dst, &ty, &site, true, true) {
                        self.error(
                            &site,
                            format!(
                                "Error unifying `{}` and `{}`: {}",
                                show_type(dst),
                                show_type(&ty),
                                occurs.describe()
                            ),
                        );
                    }
                }
                true
            }
            Err((message, input)) => {
                let info = input.and_then(|i| self.rels[id as usize].inputs.get(i).cloned());
                let site = match (input, info) {
                    (Some(i), Some(info)) => {
                        let ty = args.get(i).map_or(String::new(), show_type);
                        let role = match func {
                            RelFunc::TupleGetItem(_) => "the tuple".to_string(),
                            RelFunc::Op { .. } => format!("argument {i}"),
                        };
                        let what = info.describe(&role);
                        Site::at(span).label(info.span, format!("{what}; its type is `{ty}`"))
                    }
                    _ => Site::at(span),
                };
                self.error(&site, message);
                false
            }
        }
    }

    // ---- resolution ----

    /// TVM's `Resolve`: the current solution of `t`, with every incomplete
    /// type inside replaced by its solution. The same node is returned
    /// when nothing changed.
    pub fn resolve(&mut self, t: &Type) -> Type {
        let known = match t.kind() {
            TypeKind::Incomplete(id) => self.by_incomplete.get(&id.0).copied(),
            _ => self.by_addr.get(&type_addr(t)).copied(),
        };
        let top = match known {
            Some(n) => {
                let root = self.find(n);
                self.nodes[root as usize].ty.clone()
            }
            None => t.clone(),
        };
        let mut expanding = Vec::new();
        self.resolve_inner(&top, &mut expanding)
    }

    fn resolve_inner(&mut self, t: &Type, expanding: &mut Vec<u64>) -> Type {
        match t.kind() {
            TypeKind::Tensor(_) | TypeKind::Var(_) | TypeKind::GlobalVar(_) => t.clone(),
            TypeKind::Incomplete(id) => {
                if expanding.contains(&id.0) {
                    return t.clone();
                }
                let Some(&n) = self.by_incomplete.get(&id.0) else {
                    return t.clone();
                };
                let root = self.find(n);
                let solved = self.nodes[root as usize].ty.clone();
                if solved.is_incomplete() {
                    return solved;
                }
                expanding.push(id.0);
                let out = self.resolve_inner(&solved, expanding);
                expanding.pop();
                out
            }
            TypeKind::Tuple(fields) => {
                let new: Vec<Type> = fields
                    .iter()
                    .map(|f| self.resolve_inner(f, expanding))
                    .collect();
                if new.iter().zip(fields).all(|(a, b)| a.ptr_eq(b)) {
                    t.clone()
                } else {
                    Type::tuple(new)
                }
            }
            TypeKind::Func(f) => {
                let params: Vec<Type> = f
                    .params
                    .iter()
                    .map(|p| self.resolve_inner(p, expanding))
                    .collect();
                let ret = self.resolve_inner(&f.ret, expanding);
                if ret.ptr_eq(&f.ret) && params.iter().zip(&f.params).all(|(a, b)| a.ptr_eq(b)) {
                    return t.clone();
                }
                let new = Type::func(params, ret, f.type_params.clone());
                let cs: Vec<Constraint> = self.constraints(t).to_vec();
                if !cs.is_empty() {
                    let cs = cs
                        .into_iter()
                        .map(|c| Constraint {
                            args: c
                                .args
                                .iter()
                                .map(|a| self.resolve_inner(a, expanding))
                                .collect(),
                            ..c
                        })
                        .collect();
                    self.set_constraints(&new, cs);
                }
                new
            }
            TypeKind::Call { func, args } => {
                let nf = self.resolve_inner(func, expanding);
                let na: Vec<Type> = args
                    .iter()
                    .map(|a| self.resolve_inner(a, expanding))
                    .collect();
                if nf.ptr_eq(func) && na.iter().zip(args).all(|(a, b)| a.ptr_eq(b)) {
                    t.clone()
                } else {
                    Type::new(TypeKind::Call { func: nf, args: na })
                }
            }
            TypeKind::Ref(inner) => {
                let ni = self.resolve_inner(inner, expanding);
                if ni.ptr_eq(inner) {
                    t.clone()
                } else {
                    Type::new(TypeKind::Ref(ni))
                }
            }
        }
    }
}

impl Occurs {
    pub fn describe(&self) -> String {
        format!(
            "the unknown type `{}` occurs in `{}`, so the type would contain itself",
            show_type(&self.incomplete),
            show_type(&self.inside)
        )
    }
}

/// Substitutes type variables (by id) in `t`; the same node when nothing
/// changes. Type parameters bound by a function type inside `t` are not
/// substituted under it.
pub(crate) fn subst(t: &Type, map: &IdMap<u64, Type>) -> Type {
    if map.is_empty() {
        return t.clone();
    }
    match t.kind() {
        TypeKind::Var(tv) => map.get(&tv.id()).cloned().unwrap_or_else(|| t.clone()),
        TypeKind::Tensor(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => t.clone(),
        TypeKind::Tuple(fields) => {
            let new: Vec<Type> = fields.iter().map(|f| subst(f, map)).collect();
            if new.iter().zip(fields).all(|(a, b)| a.ptr_eq(b)) {
                t.clone()
            } else {
                Type::tuple(new)
            }
        }
        TypeKind::Func(f) => {
            let shadowed = f
                .type_params
                .iter()
                .any(|tv: &TypeVar| map.contains_key(&tv.id()));
            let inner;
            let map = if shadowed {
                let mut m = map.clone();
                for tv in &f.type_params {
                    m.remove(&tv.id());
                }
                inner = m;
                &inner
            } else {
                map
            };
            let params: Vec<Type> = f.params.iter().map(|p| subst(p, map)).collect();
            let ret = subst(&f.ret, map);
            if ret.ptr_eq(&f.ret) && params.iter().zip(&f.params).all(|(a, b)| a.ptr_eq(b)) {
                t.clone()
            } else {
                Type::func(params, ret, f.type_params.clone())
            }
        }
        TypeKind::Call { func, args } => {
            let nf = subst(func, map);
            let na: Vec<Type> = args.iter().map(|a| subst(a, map)).collect();
            if nf.ptr_eq(func) && na.iter().zip(args).all(|(a, b)| a.ptr_eq(b)) {
                t.clone()
            } else {
                Type::new(TypeKind::Call { func: nf, args: na })
            }
        }
        TypeKind::Ref(inner) => {
            let ni = subst(inner, map);
            if ni.ptr_eq(inner) {
                t.clone()
            } else {
                Type::new(TypeKind::Ref(ni))
            }
        }
    }
}

/// TVM's `TupleGetItemRel`: waits for the tuple's type, then gives the
/// field's type to the output.
fn tuple_get_item_rel(
    index: usize,
    args: &[Type],
) -> Result<RelationOutcome, (String, Option<usize>)> {
    let (Some(tuple), Some(_)) = (args.first(), args.get(1)) else {
        return Ok(RelationOutcome::Solved(Vec::new()));
    };
    match tuple.kind() {
        TypeKind::Incomplete(_) => Ok(RelationOutcome::NotReady),
        TypeKind::Tuple(fields) => match fields.get(index) {
            Some(field) => Ok(RelationOutcome::Solved(vec![(1, field.clone())])),
            None => Err((
                format!(
                    "index {index} is out of range for a tuple of {} field{}, of type `{}`",
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" },
                    show_type(tuple)
                ),
                Some(0),
            )),
        },
        _ => Err((
            format!(
                "`.{index}` needs a tuple, but the expression has type `{}`",
                show_type(tuple)
            ),
            Some(0),
        )),
    }
}
