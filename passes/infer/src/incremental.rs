//! Incremental type checking: re-checking a module after an edit infers
//! again only the functions whose result can have changed.
//!
//! # Use
//!
//! Keep one [`IncrementalChecker`] per document (it is `Send + Sync`, and
//! holds only reference-counted IR, so keeping it between edits costs the
//! memory of one typed module) and call [`IncrementalChecker::check`] with
//! each new lowered module instead of [`infer_module`](super::infer_module):
//!
//! ```
//! use relay_infer::IncrementalChecker;
//! use relay_lower::parse_and_lower;
//!
//! let text = |body: &str| format!(
//!     "#[version = \"0.0.5\"]\n\
//!      def @f(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {{ {body} }}\n\
//!      def @main(%y: Tensor[(2, 3), float32]) {{ @f(%y) }}"
//! );
//! let mut checker = IncrementalChecker::new();
//! let (module, _) = parse_and_lower("a.relay", &text("nn.relu(%x)"));
//! let (typed, diagnostics, stats) = checker.check(&module);
//! assert_eq!((stats.rechecked, stats.reused), (2, 0));
//! # let _ = (typed, diagnostics);
//!
//! // The editor changes @f; the text is lowered again.
//! let (module, _) = parse_and_lower("a.relay", &text("negative(%x)"));
//! let (typed, diagnostics, stats) = checker.check(&module);
//! assert_eq!((stats.rechecked, stats.reused), (1, 1));
//! assert!(!diagnostics.has_errors());
//! # let _ = typed;
//! ```
//!
//! The module and diagnostics are exactly those of `infer_module` on the
//! same module (same order of diagnostics, same spans, same types); only
//! the work differs. The language server can thus replace its
//! `infer_module(&lowered)` call by `checker.check(&lowered)` and keep the
//! checker next to the document. If a check panics, the checker only loses
//! cached results (it stays correct), so wrapping the call in
//! `catch_unwind(AssertUnwindSafe(..))` is fine.
//!
//! # What is reused
//!
//! The cache is per global function name. A function is inferred again
//! unless all of these still hold:
//!
//! * its definition is the same node, or one structurally equal to it
//!   (same variable names, annotations, attributes, constants and sharing
//!   of nodes; spans and variable identities may differ, as after lowering
//!   the text again);
//! * every global it mentions still exists with the same *signature* (the
//!   parameter and return annotations TVM types a call from: an edit that
//!   changes a callee's annotated type re-checks its callers, and through
//!   them nothing else, since a caller's own signature is its annotation);
//! * the type definitions (ADTs) are structurally the same; when they are
//!   not, everything is re-checked.
//!
//! A global mentioned as `@g` takes the *inferred* type of `g`: when that
//! changes (an unannotated callee's body changed), the caller's result is
//! refreshed from the cache without inferring it again.
//!
//! A result is carried over to a new but equal definition by one walk of
//! the new definition guided by the cached one's graph (each node's
//! children by post-order position), which both decides the equality and
//! aligns the new nodes with the cached ones; the new definition is then
//! rebuilt bottom-up with the cached types, and diagnostic spans are moved
//! the same way. Results that mention type variables or metadata objects
//! (whose identity changes with every lowering), and diagnostics that
//! point outside their function, are not carried over: those functions are
//! inferred again.
//!
//! # Cost
//!
//! A re-check costs the functions inferred again plus, for each reused
//! function, a few comparisons of pointers: cached results are kept in name
//! order and met in one merge walk with the module's functions, a global's
//! signature is read again only when its definition is a new node, the
//! types of globals are updated in place, and the result is the last one
//! with the changed functions replaced. A module lowered again costs one
//! guided walk and one rebuild per function.

use super::generate::Inferencer;
use super::resolve::{annotation_if_same, params_as_typed, Resolver};
use super::{relations, solve, unresolved_diagnostics, GlobalTypes};
use rayon::prelude::*;
use relay_ir::diagnostic::{Diagnostic, Diagnostics};
use relay_ir::equal::{attrs_equal, dict_attrs_equal, types_equal};
use relay_ir::fxhash::FxMap as HashMap;
use relay_ir::interner::Interner;
use relay_ir::rewrite::{self, for_each_child, rebuild, NodeUpdate};
use relay_ir::source::Span;
use relay_ir::{
    Dim, Expr, ExprKind, Function, IRModule, Pattern, Type, TypeData, TypeKind, TypeVar,
};
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

/// What one [`IncrementalChecker::check`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckStats {
    /// Functions inferred again.
    pub rechecked: usize,
    /// Functions whose cached result was used.
    pub reused: usize,
    /// Of the reused, those carried over to new (equal) nodes.
    pub remapped: usize,
}

/// Type inference that remembers, per global function, what it found, and
/// re-infers only what an edit can have changed (see the module docs).
#[derive(Default)]
pub struct IncrementalChecker {
    /// The cached checks, sorted by function name as modules list them, so
    /// a check finds them in one merge walk, without hashing names.
    /// Boxed: entries move from one check's list to the next.
    entries: Vec<(String, Box<Entry>)>,
    type_definitions: Vec<TypeData>,
    /// The inferred type of every function of the last check, updated in
    /// place (most do not change).
    globals: GlobalTypes,
    /// The last result, when some function's output was not its input (so
    /// the result has no module properties): the next result is this one
    /// with the changed functions replaced, instead of every function.
    output: Option<IRModule>,
    /// Shares equal result types between the nodes, when the checker was
    /// made [`IncrementalChecker::sharing_types`].
    interner: Option<Arc<Interner>>,
}

/// The functions of the module being checked, sorted by name.
type Functions<'m> = [(&'m str, &'m Function)];

/// What a global function's check read from the rest of the module.
#[derive(Clone, PartialEq)]
struct Signature {
    params: Vec<Option<Type>>,
    ret: Option<Type>,
    type_params: Vec<TypeVar>,
    /// Diagnostics about calls point at the callee's parameters.
    param_spans: Vec<Option<Span>>,
}

/// How a global's signature compares with the one a cached check read.
#[derive(PartialEq)]
enum SignatureChange {
    Same,
    /// Equivalent for the cached result (see [`Signature::equivalent`]).
    Equivalent,
    Different,
}

impl Signature {
    fn of(function: &Function) -> Signature {
        let data = function.data();
        Signature {
            params: data
                .params
                .iter()
                .map(|p| p.type_annotation().cloned())
                .collect(),
            ret: data.ret_type.clone(),
            type_params: data.type_params.clone(),
            param_spans: data.params.iter().map(|p| p.expr().span()).collect(),
        }
    }

    /// The type inference gives the global at a call (unannotated parts
    /// unknown), for comparisons up to renaming.
    fn as_type(&self) -> Type {
        let or_unknown = |t: &Option<Type>| t.clone().unwrap_or_else(Type::incomplete);
        Type::func(
            self.params.iter().map(or_unknown).collect(),
            or_unknown(&self.ret),
            self.type_params.clone(),
        )
    }

    /// Equal up to renaming of type parameters (and, unless `with_spans`,
    /// to the parameters' positions).
    fn equivalent(&self, other: &Signature, with_spans: bool) -> bool {
        let names = |s: &Signature| {
            s.type_params
                .iter()
                .map(|v| v.name().to_string())
                .collect::<Vec<_>>()
        };
        // Names matter: diagnostics print them.
        (!with_spans || self.param_spans == other.param_spans)
            && names(self) == names(other)
            && types_equal(&self.as_type(), &other.as_type())
    }

    /// How `function`'s signature compares with this one, read without
    /// building it in the common cases (the same, or only moved).
    fn change_to(&self, function: &Function, with_spans: bool) -> SignatureChange {
        let data = function.data();
        let types_same = self.params.len() == data.params.len()
            && self
                .params
                .iter()
                .zip(&data.params)
                .all(|(a, p)| a.as_ref() == p.type_annotation())
            && self.ret == data.ret_type
            && self.type_params == data.type_params;
        let spans_same = || {
            self.param_spans
                .iter()
                .zip(&data.params)
                .all(|(s, p)| *s == p.expr().span())
        };
        if types_same && spans_same() {
            SignatureChange::Same
        } else if (types_same && !with_spans)
            || self.equivalent(&Signature::of(function), with_spans)
        {
            // The first test is `equivalent` where only spans moved (a
            // function above was edited), without building types.
            SignatureChange::Equivalent
        } else {
            SignatureChange::Different
        }
    }
}

/// A global a cached check mentions.
struct Dependency {
    name: String,
    /// Where the global was in the module's sorted functions: looking it up
    /// there first finds it without a search while no function is added
    /// or removed before it.
    index: usize,
    /// The definition `signature` was read from, or a later one found to
    /// have the same signature: while the global is still this node, its
    /// signature needs no reading (kept alive, so the node's address cannot
    /// be reused by another).
    function: Option<Function>,
    /// The signature then; `None` if the global did not exist.
    signature: Option<Signature>,
    /// The inferred type it had (what `@g` nodes got).
    ty: Option<Type>,
}

impl Dependency {
    fn now(name: String, functions: &Functions<'_>, own_types: &[Option<Type>]) -> Dependency {
        let mut index = 0;
        let function = locate(functions, &name, &mut index).cloned();
        Dependency {
            signature: function.as_ref().map(Signature::of),
            ty: function.as_ref().and_then(|_| own_types[index].clone()),
            name,
            index,
            function,
        }
    }
}

/// The function `name` of `functions`, looked up at `hint` first; `hint`
/// becomes its position.
fn locate<'m>(functions: &Functions<'m>, name: &str, hint: &mut usize) -> Option<&'m Function> {
    if let Some((n, f)) = functions.get(*hint) {
        if *n == name {
            return Some(f);
        }
    }
    let i = functions.binary_search_by(|(n, _)| n.cmp(&name)).ok()?;
    *hint = i;
    Some(functions[i].1)
}

/// The structure of a definition's graph: for each node of its post-order,
/// the positions of its children (in [`for_each_child`] order) in the
/// post-order, all before the node's own.
struct Shape {
    /// Node `i`'s children are `children[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    children: Vec<u32>,
    /// Variable nodes with the id of an earlier one, and that one's
    /// position, in order (a variable has one node, so this is empty but
    /// in malformed graphs, where resolution types them as one).
    aliases: Vec<(u32, u32)>,
    /// Whether the post-order is one of a whole graph, each node once (it
    /// always is; otherwise children not before their parent are
    /// [`Shape::KEEP`] and the result is not carried over to other nodes).
    complete: bool,
}

impl Shape {
    /// A child not found before its parent: rebuilding keeps it.
    const KEEP: u32 = u32::MAX;

    fn of(order: &[Expr]) -> Shape {
        let mut position: HashMap<usize, u32> =
            HashMap::with_capacity_and_hasher(order.len(), Default::default());
        let mut vars: HashMap<u64, u32> = HashMap::default();
        let mut starts = Vec::with_capacity(order.len() + 1);
        let mut children = Vec::with_capacity(order.len() * 2);
        let mut aliases = Vec::new();
        let mut complete = true;
        for (i, node) in order.iter().enumerate() {
            let i = i as u32;
            starts.push(children.len() as u32);
            for_each_child(node, |c| {
                let p = position.get(&c.addr()).copied();
                complete &= p.is_some();
                children.push(p.unwrap_or(Shape::KEEP));
            });
            complete &= position.insert(node.addr(), i).is_none();
            if let ExprKind::Var(v) = node.kind() {
                let first = *vars.entry(v.id.0).or_insert(i);
                if first != i {
                    aliases.push((i, first));
                }
            }
        }
        starts.push(children.len() as u32);
        // Kept with the cached result: without the spare room reserved.
        children.shrink_to_fit();
        Shape {
            starts,
            children,
            aliases,
            complete,
        }
    }

    fn children(&self, i: usize) -> &[u32] {
        &self.children[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

/// The cached check of one global function.
struct Entry {
    /// The definition checked (kept so node identities stay meaningful).
    input: Function,
    /// The definition's nodes in post-order and what each became.
    order: Vec<Expr>,
    outputs: Vec<Expr>,
    /// The structure of `order`.
    shape: Shape,
    output: Function,
    /// The inferred type of the function, for `@name` elsewhere.
    own_type: Option<Type>,
    diagnostics: Vec<Diagnostic>,
    /// The globals the definition mentions, sorted by name.
    dependencies: Vec<Dependency>,
    /// Whether the result can be rebuilt on another, equal definition:
    /// false when it mentions type variables or metadata objects.
    portable: bool,
}

/// How a function is obtained in this check.
enum Plan<'a> {
    /// The cached result as it is.
    Reuse(Box<Entry>),
    /// The cached result rebuilt on a new definition (`order` is its
    /// post-order, aligned with the entry's), with diagnostics moved.
    Remap {
        entry: Box<Entry>,
        order: Vec<Expr>,
        diagnostics: Vec<Diagnostic>,
    },
    /// Inferred again.
    Infer {
        inferencer: Box<Inferencer<'a>>,
        failed: bool,
    },
}

impl IncrementalChecker {
    pub fn new() -> IncrementalChecker {
        IncrementalChecker::default()
    }

    /// A checker that gives equal tensor and tuple types of the result one
    /// object from `interner` (the editor's: the one its lowering shares
    /// annotations and attributes through, see `relay_ir::interner`). A
    /// model repeated in a module computes the same result types in every
    /// copy, one object each without sharing. The result is equal to
    /// [`infer_module`](super::infer_module)'s; only which types are the
    /// same object differs, and with them the `IntImm`s of their
    /// dimensions, which a printed `#[metadata]` section shows (so the
    /// CLI's InferType never shares).
    pub fn sharing_types(interner: Arc<Interner>) -> IncrementalChecker {
        IncrementalChecker {
            interner: Some(interner),
            ..IncrementalChecker::default()
        }
    }

    /// Forgets every cached result.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.type_definitions.clear();
        self.globals.clear();
        self.output = None;
    }

    /// Infers the types of `module` like [`infer_module`](super::infer_module),
    /// reusing what earlier checks found where the module did not change.
    pub fn check(&mut self, module: &IRModule) -> (IRModule, Diagnostics, CheckStats) {
        // Taken out while checking: a check that panics leaves the checker
        // empty, which is still correct.
        let mut cached = std::mem::take(&mut self.entries);
        let mut globals = std::mem::take(&mut self.globals);
        let previous_output = self.output.take();
        let type_definitions: Vec<TypeData> =
            module.type_definitions().map(|(_, d)| d.clone()).collect();
        let types_identical = type_definitions == self.type_definitions;
        if !types_identical
            && !type_definitions_equivalent(&self.type_definitions, &type_definitions)
        {
            cached.clear();
            globals.clear();
        }
        self.type_definitions = type_definitions;

        let mut stats = CheckStats::default();
        let lookup: super::RelationLookup<'_> = &relations::by_name;
        let functions: Vec<(&str, &Function)> = module.functions().collect();
        // `None`: to be inferred again (after this walk, in parallel).
        let mut plans: Vec<(String, &Function, Option<Plan<'_>>)> =
            Vec::with_capacity(functions.len());
        // The inferred type of each function, by position in `functions`
        // (what `globals` has by name).
        let mut own_types: Vec<Option<Type>> = Vec::with_capacity(functions.len());
        // Whether the module has the same functions as the last result.
        let mut same_names = previous_output.is_some();
        let mut cached = cached.into_iter().peekable();
        for &(name, function) in &functions {
            // Both lists are sorted: cached names before this one are gone.
            let mut found = None;
            while let Some((cached_name, _)) = cached.peek() {
                match cached_name.as_str().cmp(name) {
                    Ordering::Less => {
                        if let Some((gone, _)) = cached.next() {
                            globals.remove(&gone);
                        }
                        same_names = false;
                    }
                    Ordering::Equal => {
                        found = cached.next();
                        break;
                    }
                    Ordering::Greater => break,
                }
            }
            let (key, entry) = match found {
                Some((key, entry)) => (key, Some(entry)),
                None => {
                    same_names = false;
                    (name.to_string(), None)
                }
            };
            let plan =
                entry.and_then(|entry| plan_reuse(entry, function, &functions, types_identical));
            let (plan, own_type) = match plan {
                // `globals` has its type since the last check.
                Some(Plan::Reuse(entry)) => {
                    stats.reused += 1;
                    own_types.push(entry.own_type.clone());
                    plans.push((key, function, Some(Plan::Reuse(entry))));
                    continue;
                }
                Some(Plan::Remap {
                    entry,
                    order,
                    diagnostics,
                }) => {
                    stats.reused += 1;
                    stats.remapped += 1;
                    let own_type = entry.own_type.clone();
                    let plan = Plan::Remap {
                        entry,
                        order,
                        diagnostics,
                    };
                    (Some(plan), own_type)
                }
                Some(Plan::Infer { .. }) | None => {
                    stats.rechecked += 1;
                    (None, None)
                }
            };
            if plan.is_some() {
                set_global(&mut globals, name, own_type.as_ref());
            }
            own_types.push(own_type);
            plans.push((key, function, plan));
        }
        for (gone, _) in cached {
            globals.remove(&gone);
            same_names = false;
        }
        // The functions inferred again, each on its own (a call of a global
        // reads the callee's annotations), in parallel when there are
        // several (handing one function to another thread only adds the
        // hand-over to an edit's latency).
        let infer = |i: usize, function: &Function| {
            let (mut inferencer, failed) = solve(Some(module), lookup, function.expr());
            let own_type = inferencer.resolved_type_of(function.expr());
            let inferencer = Box::new(inferencer);
            (i, Plan::Infer { inferencer, failed }, own_type)
        };
        let pending: Vec<(usize, &Function)> = plans
            .iter()
            .enumerate()
            .filter(|(_, (_, _, plan))| plan.is_none())
            .map(|(i, &(_, function, _))| (i, function))
            .collect();
        let inferred: Vec<(usize, Plan<'_>, Option<Type>)> = if pending.len() > 1 {
            pending.par_iter().map(|&(i, f)| infer(i, f)).collect()
        } else {
            pending.iter().map(|&(i, f)| infer(i, f)).collect()
        };
        for (i, plan, own_type) in inferred {
            set_global(&mut globals, functions[i].0, own_type.as_ref());
            own_types[i] = own_type;
            plans[i].2 = Some(plan);
        }

        let context = Context {
            functions: &functions,
            own_types: &own_types,
            globals: &globals,
            interner: self.interner.as_deref(),
        };
        // Each function's result, finished on its own, in parallel when
        // more than one is more than a cached result taken as it is.
        let finish = |(key, function, plan): (String, &Function, Option<Plan<'_>>)| {
            let plan = plan.expect("every function has a plan once inferred");
            let (entry, same_output) = finish_plan(plan, function, &context);
            (key, entry, same_output)
        };
        let work = plans
            .iter()
            .filter(|(_, _, plan)| !matches!(plan, Some(Plan::Reuse(_))))
            .count();
        let finished: Vec<(String, Box<Entry>, bool)> = if work > 1 {
            plans.into_par_iter().map(finish).collect()
        } else {
            plans.into_iter().map(finish).collect()
        };
        let mut entries = Vec::with_capacity(finished.len());
        let mut diagnostics = Diagnostics::new();
        // The outputs that are not those of the last result.
        let mut changed: Vec<(&str, Function)> = Vec::new();
        // Whether some output is not its input (the result then loses the
        // module's properties, as `add_function` makes it).
        let mut retyped = false;
        for ((key, entry, same_output), &(name, function)) in finished.into_iter().zip(&functions) {
            diagnostics.extend(entry.diagnostics.iter().cloned());
            retyped |= !entry.output.expr().ptr_eq(function.expr());
            if !same_output {
                changed.push((name, entry.output.clone()));
            }
            entries.push((key, entry));
        }

        let out = match previous_output {
            // The last result has the same functions, type definitions and
            // (no) properties: only sources and changed outputs differ.
            Some(mut out) if same_names && types_identical && retyped => {
                out.sources = module.sources.clone();
                for (name, output) in changed {
                    out.add_function(name, output);
                }
                out
            }
            _ => {
                let mut out = module.clone();
                for (name, entry) in &entries {
                    out.add_function(name, entry.output.clone());
                }
                out
            }
        };
        self.entries = entries;
        self.globals = globals;
        self.output = retyped.then(|| out.clone());
        (out, diagnostics, stats)
    }
}

/// A function's result as `plan` obtains it (and whether it is the cached
/// output unchanged).
fn finish_plan(
    plan: Plan<'_>,
    function: &Function,
    context: &Context<'_, '_>,
) -> (Box<Entry>, bool) {
    match plan {
        Plan::Reuse(entry) if dependency_types_same(&entry, context.own_types) => (entry, true),
        Plan::Reuse(entry) => {
            let order = entry.order.clone();
            let diagnostics = entry.diagnostics.clone();
            (remap(entry, order, diagnostics, context), false)
        }
        Plan::Remap {
            entry,
            order,
            diagnostics,
        } => (remap(entry, order, diagnostics, context), false),
        Plan::Infer {
            mut inferencer,
            failed,
        } => (
            infer_entry(&mut inferencer, function, context, failed),
            false,
        ),
    }
}

/// Records the inferred type of `name` in `globals`, allocating nothing
/// when the name is there already.
fn set_global(globals: &mut GlobalTypes, name: &str, ty: Option<&Type>) {
    match (globals.get_mut(name), ty) {
        (Some(slot), Some(t)) => {
            if !slot.ptr_eq(t) {
                *slot = t.clone();
            }
        }
        (None, Some(t)) => {
            globals.insert(name.to_string(), t.clone());
        }
        (Some(_), None) => {
            globals.remove(name);
        }
        (None, None) => {}
    }
}

/// What finishing a function's check reads of the whole module.
struct Context<'c, 'm> {
    functions: &'c Functions<'m>,
    own_types: &'c [Option<Type>],
    globals: &'c GlobalTypes,
    interner: Option<&'c Interner>,
}

/// The globals `order` mentions, sorted.
fn mentioned_globals(order: &[Expr]) -> Vec<String> {
    let names: BTreeSet<&str> = order
        .iter()
        .filter_map(|e| match e.kind() {
            ExprKind::GlobalVar(g) => Some(g.name()),
            _ => None,
        })
        .collect();
    names.into_iter().map(str::to_string).collect()
}

/// Whether the cached `entry` can stand for `function` in `functions`, and
/// how.
fn plan_reuse<'a>(
    mut entry: Box<Entry>,
    function: &Function,
    functions: &Functions<'_>,
    types_identical: bool,
) -> Option<Plan<'a>> {
    let has_diagnostics = !entry.diagnostics.is_empty();
    let mut dependencies_identical = true;
    // The globals with equivalent signatures, read for a remapped result.
    let mut now_read: Vec<(usize, &Function)> = Vec::new();
    for (i, dependency) in entry.dependencies.iter_mut().enumerate() {
        let now = locate(functions, &dependency.name, &mut dependency.index);
        let (old, new) = match (&dependency.signature, now) {
            (None, None) => continue,
            (Some(old), Some(new)) => (old, new),
            _ => return None,
        };
        if dependency
            .function
            .as_ref()
            .is_some_and(|f| f.expr().ptr_eq(new.expr()))
        {
            continue;
        }
        match old.change_to(new, has_diagnostics) {
            SignatureChange::Same => dependency.function = Some(new.clone()),
            SignatureChange::Equivalent => {
                dependencies_identical = false;
                now_read.push((i, new));
            }
            SignatureChange::Different => return None,
        }
    }
    if entry.input.expr().ptr_eq(function.expr()) {
        if (types_identical && dependencies_identical) || entry.portable {
            return Some(Plan::Reuse(entry));
        }
        return None;
    }
    if !entry.portable {
        return None;
    }
    let order = corresponding_order(&entry, function)?;
    let diagnostics = if has_diagnostics {
        move_diagnostics(&entry.diagnostics, &entry.order, &order)?
    } else {
        Vec::new()
    };
    // The remapped result reads the signatures as they are now.
    for (i, function) in now_read {
        let dependency = &mut entry.dependencies[i];
        dependency.function = Some(function.clone());
        dependency.signature = Some(Signature::of(function));
    }
    Some(Plan::Remap {
        entry,
        order,
        diagnostics,
    })
}

/// The post-order of `function`, aligned with the cached definition's,
/// when the two correspond node for node: the same graph (children and
/// sharing) with, at each node, the same kind, names, attributes,
/// annotations and (absent) checked types. This is structural equality
/// (free variables mapped by name), only stricter where it renames type
/// variables, which a carried-over result cannot mention anyway; one walk
/// of the new definition decides it, guided by the cached shape.
fn corresponding_order(entry: &Entry, function: &Function) -> Option<Vec<Expr>> {
    let shape = &entry.shape;
    if !shape.complete {
        return None;
    }
    let n = entry.order.len();
    let mut order: Vec<Option<&Expr>> = vec![None; n];
    // The variables (old id, new id) met, to check they pair one to one.
    let mut vars: Vec<(u64, u64)> = Vec::new();
    let mut stack: Vec<(u32, &Expr)> = vec![(n.checked_sub(1)? as u32, function.expr())];
    let mut children: Vec<&Expr> = Vec::new();
    while let Some((position, new)) = stack.pop() {
        let slot = &mut order[position as usize];
        match slot {
            // Shared in both graphs.
            Some(seen) if seen.ptr_eq(new) => continue,
            Some(_) => return None,
            None => *slot = Some(new),
        }
        let old = &entry.order[position as usize];
        if !same_node(old, new) {
            return None;
        }
        if let (ExprKind::Var(a), ExprKind::Var(b)) = (old.kind(), new.kind()) {
            vars.push((a.id.0, b.id.0));
        }
        for_each_child(new, |c| children.push(c));
        let expected = shape.children(position as usize);
        if children.len() != expected.len() {
            return None;
        }
        for (&p, c) in expected.iter().zip(&children) {
            stack.push((p, c));
        }
        children.clear();
    }
    let order: Vec<Expr> = order
        .into_iter()
        .map(|e| e.cloned())
        .collect::<Option<_>>()?;
    // Each position has one node; each node must have one position too (a
    // node shared in the new graph only would have two).
    let mut addresses: Vec<usize> = order.iter().map(Expr::addr).collect();
    addresses.sort_unstable();
    let distinct = addresses.windows(2).all(|w| w[0] != w[1]);
    (distinct && one_to_one(&mut vars)).then_some(order)
}

/// Whether the pairs match ids one to one (one node per variable, so this
/// only guards against malformed graphs).
fn one_to_one(pairs: &mut [(u64, u64)]) -> bool {
    let consistent = |pairs: &[(u64, u64)]| {
        pairs
            .windows(2)
            .all(|w| (w[0].0 == w[1].0) == (w[0].1 == w[1].1))
    };
    pairs.sort_unstable();
    if !consistent(pairs) {
        return false;
    }
    pairs.sort_unstable_by_key(|&(a, b)| (b, a));
    consistent(pairs)
}

/// Whether two nodes are the same apart from their children (compared by
/// position) and spans.
fn same_node(old: &Expr, new: &Expr) -> bool {
    if old.checked_type() != new.checked_type() {
        return false;
    }
    match (old.kind(), new.kind()) {
        (ExprKind::Var(a), ExprKind::Var(b)) => {
            // `_` and no annotation both leave the type to inference.
            fn given(t: &Option<Type>) -> Option<&Type> {
                t.as_ref().filter(|t| !t.is_incomplete())
            }
            a.name == b.name && given(&a.type_annotation) == given(&b.type_annotation)
        }
        (ExprKind::GlobalVar(a), ExprKind::GlobalVar(b)) => a == b,
        (ExprKind::Constant(a), ExprKind::Constant(b)) => {
            a.dtype == b.dtype && a.shape == b.shape && a.data == b.data
        }
        (ExprKind::Tuple(_), ExprKind::Tuple(_))
        | (ExprKind::Let { .. }, ExprKind::Let { .. })
        | (ExprKind::If { .. }, ExprKind::If { .. })
        | (ExprKind::RefCreate(_), ExprKind::RefCreate(_))
        | (ExprKind::RefRead(_), ExprKind::RefRead(_))
        | (ExprKind::RefWrite { .. }, ExprKind::RefWrite { .. }) => true,
        (ExprKind::TupleGetItem { index: a, .. }, ExprKind::TupleGetItem { index: b, .. }) => {
            a == b
        }
        (ExprKind::Call(a), ExprKind::Call(b)) => {
            a.type_args == b.type_args && attrs_equal(a.attrs.as_ref(), b.attrs.as_ref())
        }
        (ExprKind::Function(a), ExprKind::Function(b)) => {
            a.type_params == b.type_params
                && a.ret_type == b.ret_type
                && dict_attrs_equal(&a.attrs, &b.attrs)
        }
        (
            ExprKind::Match {
                clauses: a,
                complete: x,
                ..
            },
            ExprKind::Match {
                clauses: b,
                complete: y,
                ..
            },
        ) => {
            x == y
                && a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(p, q)| same_pattern(&p.pattern, &q.pattern))
        }
        (ExprKind::Constructor(a), ExprKind::Constructor(b)) => a == b,
        (ExprKind::Op(a), ExprKind::Op(b)) => a.name == b.name,
        _ => false,
    }
}

/// Whether two patterns have the same form (their variables are children,
/// compared by position).
fn same_pattern(a: &Pattern, b: &Pattern) -> bool {
    match (a, b) {
        (Pattern::Wildcard, Pattern::Wildcard) | (Pattern::Var(_), Pattern::Var(_)) => true,
        (Pattern::Constructor(x, xs), Pattern::Constructor(y, ys)) => {
            x == y && xs.len() == ys.len() && xs.iter().zip(ys).all(|(p, q)| same_pattern(p, q))
        }
        (Pattern::Tuple(xs), Pattern::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(p, q)| same_pattern(p, q))
        }
        _ => false,
    }
}

/// The diagnostics with their spans moved from the old nodes to the new
/// ones; `None` if one points at something else.
fn move_diagnostics(
    diagnostics: &[Diagnostic],
    old_order: &[Expr],
    new_order: &[Expr],
) -> Option<Vec<Diagnostic>> {
    let mut moved: HashMap<Span, Span> = HashMap::default();
    for (old, new) in old_order.iter().zip(new_order) {
        if let (Some(a), Some(b)) = (old.span(), new.span()) {
            if *moved.entry(a).or_insert(b) != b {
                // One old place, two new ones: ambiguous.
                return None;
            }
        }
    }
    let move_span = |span: Span| moved.get(&span).copied();
    diagnostics
        .iter()
        .map(|d| {
            let mut d = d.clone();
            if let Some(span) = d.span {
                d.span = Some(move_span(span)?);
            }
            for label in &mut d.labels {
                label.span = move_span(label.span)?;
            }
            Some(d)
        })
        .collect()
}

/// Whether every `@g` the cached result mentions still has the type it
/// was given (`plan_reuse` found each where it was before).
fn dependency_types_same(entry: &Entry, own_types: &[Option<Type>]) -> bool {
    entry.dependencies.iter().all(|d| {
        let now = d
            .signature
            .as_ref()
            .and_then(|_| own_types[d.index].as_ref());
        now == d.ty.as_ref()
    })
}

/// The cached result rebuilt on `order` (the new definition's post-order,
/// aligned with the entry's), with `@g` nodes typed from the globals.
fn remap(
    mut entry: Box<Entry>,
    order: Vec<Expr>,
    diagnostics: Vec<Diagnostic>,
    context: &Context<'_, '_>,
) -> Box<Entry> {
    let shape = &entry.shape;
    let mut outputs: Vec<Expr> = Vec::with_capacity(order.len());
    let mut aliases = shape.aliases.iter().peekable();
    let mut children: Vec<Expr> = Vec::new();
    for (i, (new, cached)) in order.iter().zip(&entry.outputs).enumerate() {
        let built = match new.kind() {
            // The node built for the variable's first node (`corresponding_order`
            // checked the new graph repeats ids where the old one does).
            ExprKind::Var(_) if aliases.peek().is_some_and(|(a, _)| *a as usize == i) => {
                let (_, first) = aliases.next().copied().unwrap_or_default();
                outputs[first as usize].clone()
            }
            ExprKind::GlobalVar(g) => match context.globals.get(g.name()) {
                Some(ty) => rebuild(
                    new,
                    &[],
                    NodeUpdate {
                        checked_type: Some(ty.clone()),
                        ..NodeUpdate::default()
                    },
                ),
                None => new.clone(),
            },
            _ => {
                children.clear();
                children.extend(shape.children(i).iter().enumerate().map(|(k, &p)| {
                    match outputs.get(p as usize) {
                        Some(output) => output.clone(),
                        // `Shape::KEEP`: the node's own child.
                        None => rewrite::children(new)[k].clone(),
                    }
                }));
                rebuild(new, &children, update_for(new, &children, cached))
            }
        };
        outputs.push(built);
    }
    if let Some(input) = order.last().and_then(Expr::as_function) {
        entry.input = input;
    }
    if let Some(output) = outputs.last().and_then(Expr::as_function) {
        entry.output = output;
    }
    entry.order = order;
    entry.outputs = outputs;
    entry.diagnostics = diagnostics;
    // The signatures as they are now (they were found equivalent), and the
    // types the globals have now.
    for dependency in &mut entry.dependencies {
        let now = locate(context.functions, &dependency.name, &mut dependency.index);
        let read = dependency.function.as_ref().map(Function::expr);
        if now
            .map(Function::expr)
            .zip(read)
            .is_none_or(|(a, b)| !a.ptr_eq(b))
        {
            dependency.function = now.cloned();
            dependency.signature = now.map(Signature::of);
        }
        dependency.ty = now.and_then(|_| context.own_types[dependency.index].clone());
    }
    entry
}

/// [`update_from`] for `new`, whose rebuilt children are `children`, with
/// the types shared as inference itself shares them: an annotated variable
/// typed by its (new) annotation, a function type by its new parameters'
/// types (see `resolve::annotation_if_same`). A carried-over result is
/// thus what inferring the new definition gives, and does not keep the
/// last lowering's annotations alive beside the new ones.
fn update_for(new: &Expr, children: &[Expr], cached: &Expr) -> NodeUpdate {
    let mut update = update_from(cached);
    update.checked_type = update.checked_type.map(|t| match new.kind() {
        ExprKind::Var(v) => annotation_if_same(v.type_annotation.as_ref(), t),
        ExprKind::Function(f) => params_as_typed(t, children.get(..f.params.len()).unwrap_or(&[])),
        _ => t,
    });
    update
}

/// What a cached output node tells about its node: its type, its call's
/// type arguments, its function's return type, its variable's annotation.
fn update_from(cached: &Expr) -> NodeUpdate {
    NodeUpdate {
        checked_type: cached.checked_type().cloned(),
        type_args: match cached.kind() {
            ExprKind::Call(call) => Some(call.type_args.clone()),
            _ => None,
        },
        ret_type: match cached.kind() {
            ExprKind::Function(f) => f.ret_type.clone(),
            _ => None,
        },
        var_annotation: match cached.kind() {
            ExprKind::Var(v) => v.type_annotation.clone(),
            _ => None,
        },
    }
}

/// Resolution of a re-inferred function, kept as a cache entry.
fn infer_entry(
    inferencer: &mut Inferencer<'_>,
    function: &Function,
    context: &Context<'_, '_>,
    failed: bool,
) -> Box<Entry> {
    let own_type = inferencer.resolved_type_of(function.expr());
    let mut resolver = Resolver::new(inferencer, context.globals).sharing_types(context.interner);
    let (root, mut order, outputs) = resolver.run_recording(function.expr());
    // Kept until the function changes: without the spare room of growing.
    order.shrink_to_fit();
    let unresolved = std::mem::take(&mut resolver.unresolved);
    let diagnostics = unresolved_diagnostics(inferencer, unresolved, failed);
    let output = root.as_function().unwrap_or_else(|| function.clone());
    let dependencies = mentioned_globals(&order)
        .into_iter()
        .map(|name| Dependency::now(name, context.functions, context.own_types))
        .collect();
    let shape = Shape::of(&order);
    let mut memo = HashMap::default();
    let portable = shape.complete
        && outputs.iter().all(|e| portable_node(e, &mut memo))
        && own_type
            .as_ref()
            .is_none_or(|t| portable_type(t, &mut memo));
    Box::new(Entry {
        input: function.clone(),
        order,
        outputs,
        shape,
        output,
        own_type,
        diagnostics,
        dependencies,
        portable,
    })
}

/// Whether the types a node carries can be copied to an equal node of
/// another lowering (no type variables, no metadata objects).
fn portable_node(e: &Expr, memo: &mut HashMap<usize, bool>) -> bool {
    let mut ok = |t: &Type| portable_type(t, memo);
    e.checked_type().is_none_or(&mut ok)
        && match e.kind() {
            ExprKind::Call(call) => call.type_args.iter().all(&mut ok),
            ExprKind::Function(f) => f.ret_type.as_ref().is_none_or(&mut ok),
            ExprKind::Var(v) => v.type_annotation.as_ref().is_none_or(&mut ok),
            _ => true,
        }
}

/// See [`portable_node`]; `memo` remembers shared subtrees by address
/// (they are all alive while it is used, so addresses are not reused).
fn portable_type(t: &Type, memo: &mut HashMap<usize, bool>) -> bool {
    // Tensors, most types, are cheaper to look at than to look up.
    let tensor = |d: &Dim| !matches!(d, Dim::Meta(_) | Dim::Expr(_));
    if let TypeKind::Tensor(tt) = t.kind() {
        return tt.shape.iter().all(tensor);
    }
    let key = t.kind() as *const TypeKind as usize;
    if let Some(&known) = memo.get(&key) {
        return known;
    }
    let result = match t.kind() {
        TypeKind::Tensor(tt) => tt.shape.iter().all(tensor),
        TypeKind::Tuple(fields) => fields.iter().all(|f| portable_type(f, memo)),
        TypeKind::Func(ft) => {
            ft.type_params.is_empty()
                && ft.params.iter().all(|p| portable_type(p, memo))
                && portable_type(&ft.ret, memo)
        }
        TypeKind::Var(_) => false,
        TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => true,
        TypeKind::Call { func, args } => {
            portable_type(func, memo) && args.iter().all(|a| portable_type(a, memo))
        }
        TypeKind::Ref(inner) => portable_type(inner, memo),
    };
    memo.insert(key, result);
    result
}

/// Whether two lists of type definitions are the same up to renaming of
/// their type variables.
fn type_definitions_equivalent(a: &[TypeData], b: &[TypeData]) -> bool {
    // A definition as one type: its constructors' fields as function
    // parameters over its type variables, so `types_equal` renames them.
    let as_type = |d: &TypeData| {
        Type::func(
            d.constructors
                .iter()
                .map(|c| Type::tuple(c.data().inputs.clone()))
                .collect(),
            Type::unit(),
            d.type_vars.clone(),
        )
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.header == y.header
                && x.constructors.len() == y.constructors.len()
                && x.constructors
                    .iter()
                    .zip(&y.constructors)
                    .all(|(p, q)| p == q && p.data().tag == q.data().tag)
                && types_equal(&as_type(x), &as_type(y))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::printer::{print_module, PrintOptions};
    use relay_lower::parse_and_lower;

    const T: &str = "Tensor[(2, 3), float32]";

    fn module(text: &str) -> IRModule {
        let (module, diagnostics) =
            parse_and_lower("t.relay", &format!("#[version = \"0.0.5\"]\n{text}"));
        assert!(!diagnostics.has_errors(), "{diagnostics:?}");
        module
    }

    /// Checks `module` incrementally and in full; they must agree.
    fn check(checker: &mut IncrementalChecker, module: &IRModule) -> CheckStats {
        let (full, full_diagnostics) = super::super::infer_module(module);
        let (typed, diagnostics, stats) = checker.check(module);
        let print = |m: &IRModule| print_module(m, &PrintOptions::default());
        assert_eq!(print(&typed), print(&full));
        assert_eq!(diagnostics, full_diagnostics);
        let checked = |m: &IRModule| m.has_property(relay_ir::ModuleProperty::TypeChecked);
        assert_eq!(checked(&typed), checked(&full));
        stats
    }

    #[test]
    fn a_sharing_checker_gives_equal_results_with_one_object_per_type() {
        let text = format!(
            "def @f(%x: {T}, %y: Tensor[(3, 2), float32]) {{\n\
             %0 = negative(%x);\n\
             %1 = negative(%x);\n\
             %2 = (%0, %1);\n\
             %3 = (%1, %0);\n\
             %4 = transpose(%y, axes=[1, 0]);\n\
             (%2, %3, %4, %2.0)\n\
             }}\n"
        );
        let interner = std::sync::Arc::new(Interner::new());
        let mut checker = IncrementalChecker::sharing_types(interner.clone());
        let m = module(&text);
        check(&mut checker, &m);
        let (typed, _, _) = checker.check(&m);
        let body = typed.function("f").unwrap().body().clone();
        let ExprKind::Tuple(fields) = body.kind() else {
            panic!("a tuple body");
        };
        let ty = |e: &Expr| e.checked_type().unwrap().clone();
        // The two negatives and the tuple item: one tensor type object.
        let (t2, t3) = (ty(&fields[0]), ty(&fields[1]));
        let TypeKind::Tuple(items) = t2.kind() else {
            panic!("a tuple type");
        };
        assert!(items[0].ptr_eq(&items[1]));
        assert!(items[0].ptr_eq(&ty(&fields[3])));
        // Equal tuples are one object; `transpose`'s (3, 2) -> (2, 3) is the
        // same content too.
        assert!(t2.ptr_eq(&t3));
        assert!(ty(&fields[2]).ptr_eq(&items[0]));
        // A different type is another object.
        let param = typed.function("f").unwrap().params()[1].expr().clone();
        assert!(!ty(&param).ptr_eq(&items[0]));

        // The CLI's checker makes one object per call, as TVM does.
        let (plain, _, _) = IncrementalChecker::new().check(&m);
        let body = plain.function("f").unwrap().body().clone();
        let ExprKind::Tuple(fields) = body.kind() else {
            panic!("a tuple body");
        };
        assert!(!ty(&fields[0]).ptr_eq(&ty(&fields[1])));
    }

    #[test]
    fn a_definition_sharing_more_nodes_is_inferred_again() {
        let f = |body: &str| format!("def @f(%x: {T}) {{\n{body}\n}}\n");
        let mut checker = IncrementalChecker::new();
        let apart = f("%0 = negative(%x);\n%1 = negative(%x);\nadd(%0, %1)");
        check(&mut checker, &module(&apart));
        // Structurally equal, but one node where there were two.
        let shared = module(&f("%0 = negative(%x);\nadd(%0, %0)"));
        assert_eq!(check(&mut checker, &shared).rechecked, 1);
        // And back.
        assert_eq!(check(&mut checker, &module(&apart)).rechecked, 1);
    }

    #[test]
    fn changed_attributes_are_inferred_again() {
        let f = |axis: i32| format!("def @f(%x: {T}) {{ sum(%x, axis=[{axis}]) }}\n");
        let mut checker = IncrementalChecker::new();
        check(&mut checker, &module(&f(0)));
        assert_eq!(check(&mut checker, &module(&f(1))).rechecked, 1);
        let stats = check(&mut checker, &module(&f(1)));
        assert_eq!((stats.rechecked, stats.remapped), (0, 1));
    }

    #[test]
    fn functions_added_and_removed_between_checks() {
        let f = format!("def @f(%x: {T}) {{ negative(%x) }}\n");
        let g = format!("def @g(%y: {T}) {{ @f(%y) }}\n");
        let h = format!("def @h(%z: {T}) -> {T} {{ @g(%z) }}\n");
        let (fg, f_only, fgh) = (
            module(&format!("{f}{g}")),
            module(&f),
            module(&format!("{f}{g}{h}")),
        );
        let mut checker = IncrementalChecker::new();
        for m in [&fg, &f_only, &fgh, &fg, &fgh, &f_only, &f_only, &fg] {
            check(&mut checker, m);
        }
        // IR edits: the same nodes but for one function.
        let mut edited = fgh.clone();
        let other = module(&format!("def @f(%x: {T}) {{ nn.relu(%x) }}\n"));
        edited.add_function("f", other.function("f").unwrap().clone());
        for m in [&fgh, &edited, &fgh, &edited] {
            check(&mut checker, m);
        }
    }
}
