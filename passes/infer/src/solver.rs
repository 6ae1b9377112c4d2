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

use super::attr_span::attribute_value_span;
use super::display::{show_dim, show_type};
use super::relation_contract::{RelationArgs, RelationError, RelationFn, RelationOutcome};
use relay_ir::diagnostic::{Code, Diagnostic, Label};
use relay_ir::source::{SourceMap, Span};
use relay_ir::{
    Attrs, Dim, Expr, ExprKind, FuncType, MetaObject, TensorType, Type, TypeKind, TypeVar,
};
use std::collections::{HashMap, VecDeque};

/// A hash map keyed by addresses or ids.
pub(crate) type IdMap<K, V> = relay_ir::fxhash::FxMap<K, V>;

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
    /// `rels` as a set once it is long: a type every relation mentions
    /// (the answer type of a CPS module) would make each insertion scan a
    /// list as long as the module.
    rel_set: Option<relay_ir::fxhash::FxSet<u32>>,
}

struct RelationNode {
    func: RelFunc,
    /// The type node of each argument (inputs then the output).
    nodes: Vec<u32>,
    num_inputs: usize,
    attrs: Option<Attrs>,
    span: Option<Span>,
    /// The call (or `.i`) whose arguments are the inputs, for labels.
    site: Expr,
    inqueue: bool,
    resolved: bool,
    /// The error this relation last raised. A failed relation stays
    /// unsolved and runs again when one of its types changes (TVM's
    /// solver does the same); an error it already reported is not
    /// reported twice.
    failed_with: Option<String>,
    /// For a relation run ahead of its turn (see [`Solver::add_relation`]):
    /// what it saw and concluded, until its turn comes.
    ahead: Option<Ahead>,
}

/// A relation run when it was added, with its arguments resolved as they
/// were then (the outputs of earlier relations run ahead taken as
/// concluded). When its turn in the queue comes, the conclusion is applied
/// if every argument still resolves to the very types it saw (so the
/// relation would conclude the same), and the relation is run again
/// otherwise. Such a relation gets no type nodes: in the common case (an
/// operator applied to known types, its output used only by other such
/// relations) nothing is ever unified, its output is simply bound.
struct Ahead {
    /// The arguments as given (inputs then the output).
    args: Vec<Type>,
    /// The arguments as the relation saw them.
    seen: Vec<Type>,
    /// What it concluded.
    assigns: Vec<(usize, Type)>,
}

/// A relation to add to the solver.
pub(crate) struct NewRelation {
    pub func: RelFunc,
    pub args: Vec<Type>,
    pub num_inputs: usize,
    pub attrs: Option<Attrs>,
    pub span: Option<Span>,
    /// The call (or `.i`) whose arguments are the inputs, for labels.
    pub site: Expr,
}

/// Input `i` of a relation added for `site`: the call's argument, or the
/// tuple of a `.i`.
fn relation_input(site: &Expr, i: usize) -> Option<&Expr> {
    match site.kind() {
        ExprKind::Call(call) => call.args.get(i),
        ExprKind::TupleGetItem { tuple, .. } => (i == 0).then_some(tuple),
        _ => None,
    }
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
    /// Outputs of relations run ahead, bound to their type without a type
    /// node: what merging the output's node into the type's would do, as
    /// long as nothing else refers to the output's node (it has none).
    bound: IdMap<u64, Type>,
    /// Outputs of relations run ahead whose turn has not come yet, with the
    /// type they will be bound to (what later relations run ahead see).
    pending: IdMap<u64, Type>,
    rels: Vec<RelationNode>,
    queue: VecDeque<u32>,
    /// Relations that ran, could not conclude, and are not queued again:
    /// the only ones a merge can re-queue (see [`Solver::merge`]).
    waiting: relay_ir::fxhash::FxSet<u32>,
    /// TVM's `shape_uf_`: symbolic sizes bound to other sizes.
    shape_uf: HashMap<MetaObject, Dim>,
    /// Constraints of polymorphic function types, by the type's address.
    constraints: IdMap<usize, (Type, Vec<Constraint>)>,
    /// Composite types (tuples, functions, ...) found to hold no unknown
    /// type, by address (the value keeps the address taken): they resolve
    /// to themselves, so resolving one again is not a walk over its parts.
    /// Without it, the n projections of an n-field tuple (a `split`'s
    /// results) would each walk all n fields: quadratic.
    closed: IdMap<usize, Type>,
    /// How many types resolution has visited, for tests of its cost.
    #[cfg(test)]
    pub(crate) resolve_steps: u64,
    /// How many relation links merges have visited, for tests of their cost.
    #[cfg(test)]
    pub(crate) link_steps: u64,
    pub diagnostics: Vec<Diagnostic>,
    /// The texts spans point into, to find an attribute's value in a call
    /// for an error about it (none: such errors stay at the call).
    pub sources: Option<SourceMap>,
}

impl Solver {
    pub fn new() -> Solver {
        Solver {
            nodes: Vec::new(),
            by_addr: IdMap::default(),
            by_incomplete: IdMap::default(),
            bound: IdMap::default(),
            pending: IdMap::default(),
            rels: Vec::new(),
            queue: VecDeque::new(),
            waiting: Default::default(),
            shape_uf: HashMap::new(),
            constraints: IdMap::default(),
            closed: IdMap::default(),
            #[cfg(test)]
            resolve_steps: 0,
            #[cfg(test)]
            link_steps: 0,
            diagnostics: Vec::new(),
            sources: None,
        }
    }

    /// Room for about `relations` relations (and their outputs) without
    /// growing the tables on the way.
    pub fn reserve(&mut self, relations: usize) {
        self.rels.reserve(relations);
        self.queue.reserve(relations);
        self.pending.reserve(relations);
        self.bound.reserve(relations);
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
            TypeKind::Incomplete(id) => match self.by_incomplete.get(&id.0) {
                Some(&n) => Some(n),
                None => {
                    if let Some(to) = self.bound.get(&id.0).cloned() {
                        // A bound output: its node would have been merged
                        // into the bound type's.
                        return self.node_of(&to);
                    }
                    None
                }
            },
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
                    rel_set: None,
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
        /// From this length on, membership is answered by the set.
        const LONG: usize = 32;
        let type_node = &mut self.nodes[node as usize];
        let rels = &mut type_node.rels;
        if rels.len() < LONG {
            if rels.contains(&rel) {
                return;
            }
        } else {
            let set = type_node
                .rel_set
                .get_or_insert_with(|| rels.iter().copied().collect());
            if set.contains(&rel) {
                return;
            }
        }
        if rels.len() >= LONG && rels.len().is_power_of_two() {
            let resolved: Vec<bool> = rels
                .iter()
                .map(|&r| self.rels[r as usize].resolved)
                .collect();
            let mut i = 0;
            rels.retain(|_| {
                i += 1;
                !resolved[i - 1]
            });
            type_node.rel_set = None;
        }
        rels.push(rel);
        if rels.len() >= LONG {
            let set = type_node
                .rel_set
                .get_or_insert_with(|| rels.iter().copied().collect());
            set.insert(rel);
        }
    }

    fn add_to_queue(&mut self, rel: u32) {
        let r = &mut self.rels[rel as usize];
        if r.inqueue || r.resolved {
            return;
        }
        r.inqueue = true;
        self.queue.push_back(rel);
        self.waiting.remove(&rel);
    }

    /// Whether a relation linked to type node `node` is waiting (would be
    /// re-queued by a merge of the node), asked of whichever is smaller:
    /// the node's relations or the waiting ones.
    fn has_waiting(&self, node: u32) -> bool {
        if self.waiting.is_empty() {
            return false;
        }
        let type_node = &self.nodes[node as usize];
        match &type_node.rel_set {
            Some(set) if self.waiting.len() < type_node.rels.len() => {
                self.waiting.iter().any(|r| set.contains(r))
            }
            _ => type_node.rels.iter().any(|r| self.waiting.contains(r)),
        }
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
            #[cfg(test)]
            {
                self.link_steps += rels.len() as u64;
            }
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
    ///
    /// Two cases skip work that would change nothing, so that a type every
    /// relation mentions (the weight of n convolutions, merged into the
    /// equal type each relation concludes) does not make each merge walk
    /// all n relations: quadratic. When `src`'s type has no parts, `dst`
    /// has no relations and none of `src`'s is waiting, TVM's transfer
    /// would re-queue nothing and leave `dst` with `src`'s unresolved
    /// relations in `src`'s order: `src`'s list is moved as it is (the
    /// resolved relations it still holds are skipped by every reader).
    /// When `dst`'s type has no parts, propagating its relations to it
    /// inserts each where it already is.
    fn merge(&mut self, src: u32, dst: u32) {
        let src = self.find(src);
        let dst = self.find(dst);
        if src == dst {
            return;
        }
        let ty = self.nodes[src as usize].ty.clone();
        if is_leaf(&ty) && self.nodes[dst as usize].rels.is_empty() && !self.has_waiting(src) {
            let from = &mut self.nodes[src as usize];
            let rels = std::mem::take(&mut from.rels);
            let rel_set = from.rel_set.take();
            let to = &mut self.nodes[dst as usize];
            to.rels = rels;
            to.rel_set = rel_set;
        } else {
            self.transfer_links(&ty, dst);
        }
        self.nodes[src as usize].parent = dst;
        let dst_ty = self.nodes[dst as usize].ty.clone();
        if is_leaf(&dst_ty) {
            return;
        }
        #[cfg(test)]
        {
            self.link_steps += self.nodes[dst as usize].rels.len() as u64;
        }
        let rels: Vec<u32> = self.nodes[dst as usize]
            .rels
            .iter()
            .copied()
            .filter(|&r| !self.rels[r as usize].resolved)
            .collect();
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
                    Code::TypeMismatch,
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

    fn error(&mut self, code: Code, site: &Site, message: String) {
        let mut d = Diagnostic::error(code, message);
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
                Code::TypeMismatch,
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
            self.error(Code::TypeMismatch, site, message);
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
    ///
    /// A relation whose output is a fresh unknown type is first run right
    /// away, on its arguments as they resolve now; when it concludes, it is
    /// queued with its conclusion instead of being linked to type nodes
    /// (see [`Ahead`]). Its turn in the queue is unchanged, so everything
    /// happens in TVM's order.
    pub fn add_relation(&mut self, rel: NewRelation) {
        let id = self.rels.len() as u32;
        let mut ahead = None;
        if let Some((seen, assigns)) = self.run_ahead(&rel) {
            let out = &rel.args[rel.num_inputs];
            if let (TypeKind::Incomplete(out_id), Some((_, ty))) = (
                out.kind(),
                assigns.iter().find(|(slot, _)| *slot == rel.num_inputs),
            ) {
                if !has_incomplete(ty) {
                    self.pending.insert(out_id.0, ty.clone());
                }
            }
            ahead = Some((seen, assigns));
        }
        // A relation run ahead keeps its arguments with its conclusion;
        // any other is linked to its arguments' nodes.
        let (ahead, to_link) = match ahead {
            Some((seen, assigns)) => (
                Some(Ahead {
                    args: rel.args,
                    seen,
                    assigns,
                }),
                None,
            ),
            None => (None, Some(rel.args)),
        };
        self.rels.push(RelationNode {
            func: rel.func,
            nodes: Vec::new(),
            num_inputs: rel.num_inputs,
            attrs: rel.attrs,
            span: rel.span,
            site: rel.site,
            inqueue: false,
            resolved: false,
            failed_with: None,
            ahead,
        });
        if let Some(args) = to_link {
            self.link(id, &args);
        }
        self.add_to_queue(id);
    }

    /// Links relation `id` to the nodes of its arguments.
    fn link(&mut self, id: u32, args: &[Type]) {
        let mut nodes = Vec::with_capacity(args.len());
        for arg in args {
            let n = self.node_of(arg);
            nodes.push(n);
            let ty = self.nodes[n as usize].ty.clone();
            self.propagate(&ty, &[id]);
        }
        self.rels[id as usize].nodes = nodes;
    }

    /// Runs a new relation ahead of its turn: the arguments it saw and its
    /// conclusion, if it concludes and its output is a fresh unknown type.
    #[allow(clippy::type_complexity)]
    fn run_ahead(&mut self, rel: &NewRelation) -> Option<(Vec<Type>, Vec<(usize, Type)>)> {
        if rel.args.len() != rel.num_inputs + 1 {
            return None;
        }
        let TypeKind::Incomplete(out) = rel.args[rel.num_inputs].kind() else {
            return None;
        };
        if self.by_incomplete.contains_key(&out.0)
            || self.bound.contains_key(&out.0)
            || self.pending.contains_key(&out.0)
        {
            return None;
        }
        let seen: Vec<Type> = rel
            .args
            .iter()
            .map(|a| self.resolve_with(a, true))
            .collect();
        match evaluate(&rel.func, &seen, rel.num_inputs, rel.attrs.as_ref())? {
            Ok(RelationOutcome::Solved(assigns))
                if assigns.iter().all(|(slot, _)| *slot < seen.len()) =>
            {
                Some((seen, assigns))
            }
            _ => None,
        }
    }

    /// The turn of a relation run ahead: its conclusion is applied if its
    /// arguments still resolve to what it saw; otherwise it is run again
    /// (and linked to its arguments' nodes if it is not done).
    fn ahead_turn(&mut self, id: u32, ahead: Ahead) -> bool {
        let (func, num_inputs) = {
            let r = &self.rels[id as usize];
            (r.func.clone(), r.num_inputs)
        };
        if let TypeKind::Incomplete(out) = ahead.args[num_inputs].kind() {
            self.pending.remove(&out.0);
        }
        let mut same = true;
        for (arg, seen) in ahead.args.iter().zip(&ahead.seen) {
            if !self.resolves_to(arg, seen) {
                same = false;
                break;
            }
        }
        if same {
            return self.apply(
                id,
                &func,
                &ahead.seen,
                num_inputs,
                Ok(RelationOutcome::Solved(ahead.assigns)),
                Some(&ahead.args[num_inputs]),
            );
        }
        let attrs = self.rels[id as usize].attrs.clone();
        let args: Vec<Type> = ahead.args.iter().map(|a| self.resolve(a)).collect();
        let done = self.run_relation(id, &func, &args, num_inputs, attrs.as_ref());
        if !done {
            self.link(id, &ahead.args);
        }
        done
    }

    /// Whether `arg` resolves to `seen`: at once for a tensor type without
    /// a node, or an output bound to one (the common case), else by
    /// resolving it.
    fn resolves_to(&mut self, arg: &Type, seen: &Type) -> bool {
        let direct = match arg.kind() {
            TypeKind::Tensor(_) => Some(arg),
            TypeKind::Incomplete(id) if !self.by_incomplete.contains_key(&id.0) => {
                self.bound.get(&id.0).filter(|t| t.as_tensor().is_some())
            }
            _ => None,
        };
        if let Some(t) = direct {
            if !self.by_addr.contains_key(&type_addr(t)) {
                return t.ptr_eq(seen);
            }
        }
        let now = self.resolve(arg);
        same_resolution(&now, seen)
    }

    /// TVM's `Solve`: runs queued relations until none is left.
    pub fn solve(&mut self) {
        while let Some(id) = self.queue.pop_front() {
            let resolved = match self.rels[id as usize].ahead.take() {
                Some(ahead) => self.ahead_turn(id, ahead),
                None => {
                    let (func, num_inputs, attrs) = {
                        let r = &self.rels[id as usize];
                        (r.func.clone(), r.num_inputs, r.attrs.clone())
                    };
                    let mut args = Vec::with_capacity(self.rels[id as usize].nodes.len());
                    for i in 0..self.rels[id as usize].nodes.len() {
                        let n = self.rels[id as usize].nodes[i];
                        let root = self.find(n);
                        let ty = self.nodes[root as usize].ty.clone();
                        args.push(self.resolve(&ty));
                    }
                    self.run_relation(id, &func, &args, num_inputs, attrs.as_ref())
                }
            };
            let r = &mut self.rels[id as usize];
            r.resolved = resolved;
            r.inqueue = false;
            if !resolved {
                self.waiting.insert(id);
            }
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
        match evaluate(func, args, num_inputs, attrs) {
            None => true,
            Some(outcome) => self.apply(id, func, args, num_inputs, outcome, None),
        }
    }

    /// Applies what relation `id` concluded on `args`. `bind` is the output
    /// of a relation run ahead: when no type node refers to it, it is bound
    /// to its type instead of unified (the same outcome, see `bound`).
    fn apply(
        &mut self,
        id: u32,
        func: &RelFunc,
        args: &[Type],
        num_inputs: usize,
        outcome: Result<RelationOutcome, RelationError>,
        bind: Option<&Type>,
    ) -> bool {
        let span = self.rels[id as usize].span;
        let done = matches!(outcome, Ok(RelationOutcome::Solved(_)));
        match outcome {
            Ok(RelationOutcome::NotReady) => false,
            Ok(RelationOutcome::Solved(assignments) | RelationOutcome::Pending(assignments)) => {
                for (slot, ty) in assignments {
                    if slot == num_inputs {
                        if let Some(TypeKind::Incomplete(out)) = bind.map(Type::kind) {
                            if args.get(slot).is_some_and(|dst| dst.ptr_eq(bind.unwrap()))
                                && !self.by_incomplete.contains_key(&out.0)
                                && !self.bound.contains_key(&out.0)
                                && !has_incomplete(&ty)
                            {
                                self.bound.insert(out.0, ty);
                                continue;
                            }
                        }
                    }
                    let Some(dst) = args.get(slot) else {
                        let op = match func {
                            RelFunc::Op { op, .. } => *op,
                            RelFunc::TupleGetItem(_) => "TupleGetItem",
                        };
                        self.error(
                            Code::InternalError,
                            &Site::at(span),
                            format!("internal error: the type relation of `{op}` assigned slot {slot} of {}", args.len()),
                        );
                        continue;
                    };
                    // Errors are reported at the call, with a label at the
                    // argument for an input. The label is written only when
                    // there is an error: every error of this unification
                    // gets the site's labels, so they are added after.
                    let before = self.diagnostics.len();
                    let site = Site::at(span);
                    if let Err(occurs) = self.unify(dst, &ty, &site, true, true) {
                        self.error(
                            Code::TypeMismatch,
                            &site,
                            format!(
                                "Error unifying `{}` and `{}`: {}",
                                show_type(dst),
                                show_type(&ty),
                                occurs.describe()
                            ),
                        );
                    }
                    if self.diagnostics.len() > before && slot < num_inputs {
                        let input =
                            relation_input(&self.rels[id as usize].site, slot).map(ArgInfo::of);
                        if let Some(info) = input {
                            let labels = Site::at(span)
                                .label(info.span, info.describe(&format!("argument {slot}")))
                                .labels;
                            for d in &mut self.diagnostics[before..] {
                                d.labels = labels.clone();
                            }
                        }
                    }
                }
                done
            }
            Err(RelationError {
                message,
                input,
                attribute,
            }) => {
                let info = input
                    .and_then(|i| relation_input(&self.rels[id as usize].site, i).map(ArgInfo::of));
                // An error about an attribute is shown at its value, with
                // the call labelled; otherwise at the call.
                let value = attribute.zip(span).and_then(|(key, call)| {
                    attribute_value_span(self.sources.as_ref()?, call, key)
                });
                let site = match value {
                    Some(value) => Site::at(Some(value)).label(span, "in this call"),
                    None => Site::at(span),
                };
                let site = match (input, info) {
                    (Some(i), Some(info)) => {
                        let ty = args.get(i).map_or(String::new(), show_type);
                        let role = match func {
                            RelFunc::TupleGetItem(_) => "the tuple".to_string(),
                            RelFunc::Op { .. } => format!("argument {i}"),
                        };
                        let what = info.describe(&role);
                        site.label(info.span, format!("{what}; its type is `{ty}`"))
                    }
                    _ => site,
                };
                let rel = &mut self.rels[id as usize];
                if rel.failed_with.as_deref() != Some(message.as_str()) {
                    rel.failed_with = Some(message.clone());
                    self.error(Code::OperatorTypeError, &site, message);
                }
                false
            }
        }
    }

    // ---- resolution ----

    /// TVM's `Resolve`: the current solution of `t`, with every incomplete
    /// type inside replaced by its solution. The same node is returned
    /// when nothing changed.
    pub fn resolve(&mut self, t: &Type) -> Type {
        self.resolve_with(t, false)
    }

    /// [`Self::resolve`]; with `ahead`, the outputs of relations run ahead
    /// are taken as bound already (what a relation run ahead sees).
    fn resolve_with(&mut self, t: &Type, ahead: bool) -> Type {
        let top = self.current(t, ahead);
        if let TypeKind::Tensor(_) = top.kind() {
            return top;
        }
        let mut expanding = Vec::new();
        self.resolve_inner(&top, &mut expanding, ahead)
    }

    /// The type of the root of `t`'s node (`t` itself without a node).
    fn current(&mut self, t: &Type, ahead: bool) -> Type {
        // Followed by reference: only the answer is cloned. Bounded: bound
        // and pending types have no unknown type inside.
        let mut t = t;
        let known = loop {
            match t.kind() {
                TypeKind::Incomplete(id) => match self.by_incomplete.get(&id.0) {
                    Some(&n) => break Some(n),
                    None => {
                        let to = self
                            .bound
                            .get(&id.0)
                            .or_else(|| ahead.then(|| self.pending.get(&id.0)).flatten());
                        match to {
                            Some(to) => t = to,
                            None => break None,
                        }
                    }
                },
                _ => break self.by_addr.get(&type_addr(t)).copied(),
            }
        };
        match known {
            Some(n) => {
                let root = self.find(n);
                self.nodes[root as usize].ty.clone()
            }
            None => t.clone(),
        }
    }

    fn resolve_inner(&mut self, t: &Type, expanding: &mut Vec<u64>, ahead: bool) -> Type {
        #[cfg(test)]
        {
            self.resolve_steps += 1;
        }
        match t.kind() {
            TypeKind::Tensor(_) | TypeKind::Var(_) | TypeKind::GlobalVar(_) => t.clone(),
            TypeKind::Incomplete(_) => self.resolve_parts(t, expanding, ahead),
            _ => {
                let addr = type_addr(t);
                if self.closed.contains_key(&addr) {
                    return t.clone();
                }
                let out = self.resolve_parts(t, expanding, ahead);
                if out.ptr_eq(t) && self.parts_closed(t) {
                    self.closed.insert(addr, t.clone());
                }
                out
            }
        }
    }

    /// Whether every part of composite type `t` is known to hold no
    /// unknown type (a leaf type, or a composite type found closed).
    fn parts_closed(&self, t: &Type) -> bool {
        let closed = |p: &Type| match p.kind() {
            TypeKind::Tensor(_) | TypeKind::Var(_) | TypeKind::GlobalVar(_) => true,
            TypeKind::Incomplete(_) => false,
            _ => self.closed.contains_key(&type_addr(p)),
        };
        match t.kind() {
            TypeKind::Tuple(fields) => fields.iter().all(closed),
            TypeKind::Func(f) => closed(&f.ret) && f.params.iter().all(closed),
            TypeKind::Call { func, args } => closed(func) && args.iter().all(closed),
            TypeKind::Ref(inner) => closed(inner),
            _ => false,
        }
    }

    /// One step of [`Self::resolve_inner`]: `t` with its parts resolved.
    fn resolve_parts(&mut self, t: &Type, expanding: &mut Vec<u64>, ahead: bool) -> Type {
        match t.kind() {
            TypeKind::Tensor(_) | TypeKind::Var(_) | TypeKind::GlobalVar(_) => t.clone(),
            TypeKind::Incomplete(id) => {
                if expanding.contains(&id.0) {
                    return t.clone();
                }
                let solved = self.current(t, ahead);
                if solved.is_incomplete() {
                    return solved;
                }
                expanding.push(id.0);
                let out = self.resolve_inner(&solved, expanding, ahead);
                expanding.pop();
                out
            }
            TypeKind::Tuple(fields) => {
                let new: Vec<Type> = fields
                    .iter()
                    .map(|f| self.resolve_inner(f, expanding, ahead))
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
                    .map(|p| self.resolve_inner(p, expanding, ahead))
                    .collect();
                let ret = self.resolve_inner(&f.ret, expanding, ahead);
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
                                .map(|a| self.resolve_inner(a, expanding, ahead))
                                .collect(),
                            ..c
                        })
                        .collect();
                    self.set_constraints(&new, cs);
                }
                new
            }
            TypeKind::Call { func, args } => {
                let nf = self.resolve_inner(func, expanding, ahead);
                let na: Vec<Type> = args
                    .iter()
                    .map(|a| self.resolve_inner(a, expanding, ahead))
                    .collect();
                if nf.ptr_eq(func) && na.iter().zip(args).all(|(a, b)| a.ptr_eq(b)) {
                    t.clone()
                } else {
                    Type::new(TypeKind::Call { func: nf, args: na })
                }
            }
            TypeKind::Ref(inner) => {
                let ni = self.resolve_inner(inner, expanding, ahead);
                if ni.ptr_eq(inner) {
                    t.clone()
                } else {
                    Type::new(TypeKind::Ref(ni))
                }
            }
        }
    }
}

/// What running a relation on `args` gives (`None`: nothing to do).
fn evaluate(
    func: &RelFunc,
    args: &[Type],
    num_inputs: usize,
    attrs: Option<&Attrs>,
) -> Option<Result<RelationOutcome, RelationError>> {
    match func {
        RelFunc::TupleGetItem(index) => Some(tuple_get_item_rel(*index, args)),
        RelFunc::Op { func, .. } => {
            if args.len() <= num_inputs {
                return None;
            }
            let rel_args = RelationArgs::new(&args[..=num_inputs], attrs);
            Some(func(&rel_args).and_then(|outcome| match &outcome {
                RelationOutcome::Solved(assigns) | RelationOutcome::Pending(assigns) => {
                    match assigns.iter().find_map(|(_, ty)| impossible_shape(ty)) {
                        Some(message) => Err(RelationError::new(message)),
                        None => Ok(outcome),
                    }
                }
                RelationOutcome::NotReady => Ok(outcome),
            }))
        }
    }
}

/// Why a type a relation concluded holds a tensor no memory can hold (see
/// [`relay_ir::limits::shape_error`]): such a shape is a type error, reported
/// at the call that computes it, not a value for later passes to build.
fn impossible_shape(ty: &Type) -> Option<String> {
    match ty.kind() {
        TypeKind::Tensor(t) => relay_ir::limits::shape_error(&t.shape),
        TypeKind::Tuple(fields) => fields.iter().find_map(impossible_shape),
        _ => None,
    }
}

/// Whether two resolutions are the same types: the same nodes, or tuples
/// of the same nodes (resolving a tuple of solved outputs builds a new
/// tuple each time; a relation sees only its fields).
fn same_resolution(a: &Type, b: &Type) -> bool {
    if a.ptr_eq(b) {
        return true;
    }
    match (a.kind(), b.kind()) {
        (TypeKind::Tuple(fa), TypeKind::Tuple(fb)) => {
            fa.len() == fb.len() && fa.iter().zip(fb).all(|(x, y)| same_resolution(x, y))
        }
        _ => false,
    }
}

/// Whether `t` has no parts a type node is kept for (what
/// [`Solver::propagate`] and [`Solver::transfer_links`] walk into).
fn is_leaf(t: &Type) -> bool {
    !matches!(
        t.kind(),
        TypeKind::Tuple(_) | TypeKind::Func(_) | TypeKind::Call { .. }
    )
}

/// [`Type::contains_incomplete`], without its work list for tensors.
fn has_incomplete(t: &Type) -> bool {
    match t.kind() {
        TypeKind::Tensor(_) => false,
        _ => t.contains_incomplete(),
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
fn tuple_get_item_rel(index: usize, args: &[Type]) -> Result<RelationOutcome, RelationError> {
    let (Some(tuple), Some(_)) = (args.first(), args.get(1)) else {
        return Ok(RelationOutcome::Solved(Vec::new()));
    };
    match tuple.kind() {
        TypeKind::Incomplete(_) => Ok(RelationOutcome::NotReady),
        TypeKind::Tuple(fields) => match fields.get(index) {
            Some(field) => Ok(RelationOutcome::Solved(vec![(1, field.clone())])),
            None => Err(RelationError::at_input(
                format!(
                    "index {index} is out of range for a tuple of {} field{}, of type `{}`",
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" },
                    show_type(tuple)
                ),
                0,
            )),
        },
        _ => Err(RelationError::at_input(
            format!(
                "`.{index}` needs a tuple, but the expression has type `{}`",
                show_type(tuple)
            ),
            0,
        )),
    }
}

#[cfg(test)]
#[path = "solver_cost_tests.rs"]
mod cost_tests;
