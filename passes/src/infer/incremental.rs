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
//! use relay_passes::infer::IncrementalChecker;
//! use relay_passes::lower::parse_and_lower;
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
//!   (same variable names, annotations, attributes, constants; spans and
//!   variable identities may differ, as after lowering the text again);
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
//! A result is carried over to a new but equal definition by walking both
//! in the same order and rebuilding the new one with the cached types, and
//! diagnostic spans are moved the same way. Results that mention type
//! variables or metadata objects (whose identity changes with every
//! lowering), and diagnostics that point outside their function, are not
//! carried over: those functions are inferred again.

use super::generate::Inferencer;
use super::{relations, resolve::Resolver, unresolved_diagnostics};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::fxhash::FxMap as HashMap;
use crate::ir::equal::{structural_equal, types_equal};
use crate::ir::rewrite::{children, post_order, rebuild, NodeUpdate};
use crate::ir::{Dim, Expr, ExprKind, Function, IRModule, Type, TypeData, TypeKind, TypeVar};
use crate::source::Span;
use std::collections::BTreeSet;

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
    entries: HashMap<String, Entry>,
    type_definitions: Vec<TypeData>,
}

/// What a global function's check read from the rest of the module.
#[derive(Clone, PartialEq)]
struct Signature {
    params: Vec<Option<Type>>,
    ret: Option<Type>,
    type_params: Vec<TypeVar>,
    /// Diagnostics about calls point at the callee's parameters.
    param_spans: Vec<Option<Span>>,
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
}

/// The cached check of one global function.
struct Entry {
    /// The definition checked (kept so node identities stay meaningful).
    input: Function,
    /// The definition's nodes in post-order and what each became.
    order: Vec<Expr>,
    outputs: Vec<Expr>,
    output: Function,
    /// The inferred type of the function, for `@name` elsewhere.
    own_type: Option<Type>,
    diagnostics: Vec<Diagnostic>,
    /// The globals the definition mentions, with their signatures then.
    dependencies: Vec<(String, Option<Signature>)>,
    /// The inferred types those globals had (what `@g` nodes got).
    dependency_types: Vec<Option<Type>>,
    /// Whether the result can be rebuilt on another, equal definition:
    /// false when it mentions type variables or metadata objects.
    portable: bool,
}

/// How a function is obtained in this check.
enum Plan<'a> {
    /// The cached result as it is.
    Reuse(Entry),
    /// The cached result rebuilt on a new definition (`order` is its
    /// post-order, aligned with the entry's), with diagnostics moved.
    Remap {
        entry: Entry,
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

    /// Forgets every cached result.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.type_definitions.clear();
    }

    /// Infers the types of `module` like [`infer_module`](super::infer_module),
    /// reusing what earlier checks found where the module did not change.
    pub fn check(&mut self, module: &IRModule) -> (IRModule, Diagnostics, CheckStats) {
        let type_definitions: Vec<TypeData> =
            module.type_definitions().map(|(_, d)| d.clone()).collect();
        let types_identical = type_definitions == self.type_definitions;
        if !types_identical
            && !type_definitions_equivalent(&self.type_definitions, &type_definitions)
        {
            self.entries.clear();
        }
        self.type_definitions = type_definitions;

        let mut stats = CheckStats::default();
        let lookup: super::RelationLookup<'_> = &relations::by_name;
        let mut plans: Vec<(String, Function, Plan<'_>)> =
            Vec::with_capacity(module.function_count());
        let mut globals: super::GlobalTypes = HashMap::default();
        for (name, function) in module.functions() {
            let cached = self.entries.remove(name);
            let plan =
                cached.and_then(|entry| plan_reuse(entry, function, module, types_identical));
            let plan = match plan {
                Some(plan) => {
                    stats.reused += 1;
                    if matches!(plan, Plan::Remap { .. }) {
                        stats.remapped += 1;
                    }
                    if let Plan::Reuse(entry) | Plan::Remap { entry, .. } = &plan {
                        if let Some(t) = &entry.own_type {
                            globals.insert(name.to_string(), t.clone());
                        }
                    }
                    plan
                }
                None => {
                    stats.rechecked += 1;
                    let mut inferencer = Box::new(Inferencer::new(Some(module), lookup));
                    let failed = inferencer.run(function.expr()).is_err();
                    inferencer.solver.solve();
                    if let Some(t) = inferencer.type_of(function.expr()).cloned() {
                        globals.insert(name.to_string(), inferencer.solver.resolve(&t));
                    }
                    Plan::Infer { inferencer, failed }
                }
            };
            plans.push((name.to_string(), function.clone(), plan));
        }

        let mut out = module.clone();
        let mut diagnostics = Diagnostics::new();
        for (name, function, plan) in plans {
            let entry = match plan {
                Plan::Reuse(entry) if dependency_types_same(&entry, &globals) => entry,
                Plan::Reuse(entry) => {
                    let order = entry.order.clone();
                    let diagnostics = entry.diagnostics.clone();
                    remap(entry, order, diagnostics, module, &globals)
                }
                Plan::Remap {
                    entry,
                    order,
                    diagnostics,
                } => remap(entry, order, diagnostics, module, &globals),
                Plan::Infer {
                    mut inferencer,
                    failed,
                } => infer_entry(&mut inferencer, &function, module, &globals, failed),
            };
            diagnostics.extend(entry.diagnostics.iter().cloned());
            out.add_function(&name, entry.output.clone());
            self.entries.insert(name, entry);
        }
        (out, diagnostics, stats)
    }
}

/// The globals `root` mentions, sorted.
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

/// Whether the cached `entry` can stand for `function` in `module`, and how.
fn plan_reuse<'a>(
    entry: Entry,
    function: &Function,
    module: &IRModule,
    types_identical: bool,
) -> Option<Plan<'a>> {
    let has_diagnostics = !entry.diagnostics.is_empty();
    let mut dependencies_identical = true;
    for (name, signature) in &entry.dependencies {
        let now = module.function(name).map(Signature::of);
        match (signature, &now) {
            (None, None) => {}
            (Some(old), Some(new)) if old == new => {}
            (Some(old), Some(new)) if old.equivalent(new, has_diagnostics) => {
                dependencies_identical = false;
            }
            _ => return None,
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
    Some(Plan::Remap {
        entry,
        order,
        diagnostics,
    })
}

/// The post-order of `function`, when it corresponds node for node to the
/// cached definition's: structurally equal, with the same names, sharing
/// and (absent) checked types.
fn corresponding_order(entry: &Entry, function: &Function) -> Option<Vec<Expr>> {
    if !structural_equal(entry.input.expr(), function.expr(), true) {
        return None;
    }
    let order = post_order(function.expr());
    if order.len() != entry.order.len() {
        return None;
    }
    let same_node = |old: &Expr, new: &Expr| {
        std::mem::discriminant(old.kind()) == std::mem::discriminant(new.kind())
            && match (old.kind(), new.kind()) {
                (ExprKind::Var(a), ExprKind::Var(b)) => a.name == b.name,
                _ => true,
            }
            && match (old.checked_type(), new.checked_type()) {
                (None, None) => true,
                (Some(a), Some(b)) => a == b,
                _ => false,
            }
    };
    entry
        .order
        .iter()
        .zip(&order)
        .all(|(old, new)| same_node(old, new))
        .then_some(order)
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
/// was given.
fn dependency_types_same(entry: &Entry, globals: &super::GlobalTypes) -> bool {
    entry
        .dependencies
        .iter()
        .zip(&entry.dependency_types)
        .all(|((name, _), seen)| globals.get(name) == seen.as_ref())
}

/// The cached result rebuilt on `order` (the new definition's post-order,
/// aligned with the entry's), with `@g` nodes typed from `globals`.
fn remap(
    entry: Entry,
    order: Vec<Expr>,
    diagnostics: Vec<Diagnostic>,
    module: &IRModule,
    globals: &super::GlobalTypes,
) -> Entry {
    let mut memo: HashMap<usize, Expr> =
        HashMap::with_capacity_and_hasher(order.len(), Default::default());
    let mut vars: HashMap<u64, Expr> = HashMap::default();
    let lookup = |memo: &HashMap<usize, Expr>, vars: &HashMap<u64, Expr>, e: &Expr| {
        let found = match e.kind() {
            ExprKind::Var(v) => vars.get(&v.id.0),
            _ => memo.get(&e.addr()),
        };
        found.cloned().unwrap_or_else(|| e.clone())
    };
    let mut outputs = Vec::with_capacity(order.len());
    for (new, cached) in order.iter().zip(&entry.outputs) {
        let built = match new.kind() {
            ExprKind::Var(v) if vars.contains_key(&v.id.0) => vars[&v.id.0].clone(),
            ExprKind::GlobalVar(g) => match globals.get(g.name()) {
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
                let new_children: Vec<Expr> = children(new)
                    .into_iter()
                    .map(|c| lookup(&memo, &vars, c))
                    .collect();
                rebuild(new, &new_children, update_from(cached))
            }
        };
        match new.kind() {
            ExprKind::Var(v) => {
                vars.insert(v.id.0, built.clone());
            }
            _ => {
                memo.insert(new.addr(), built.clone());
            }
        }
        outputs.push(built);
    }
    let input = order
        .last()
        .and_then(Expr::as_function)
        .unwrap_or_else(|| entry.input.clone());
    let output = outputs
        .last()
        .and_then(Expr::as_function)
        .unwrap_or_else(|| entry.output.clone());
    let dependency_types = entry
        .dependencies
        .iter()
        .map(|(name, _)| globals.get(name).cloned())
        .collect();
    // The signatures as they are now (they were found equivalent).
    let dependencies = entry
        .dependencies
        .into_iter()
        .map(|(name, _)| {
            let signature = module.function(&name).map(Signature::of);
            (name, signature)
        })
        .collect();
    Entry {
        input,
        order,
        outputs,
        output,
        own_type: entry.own_type,
        diagnostics,
        dependencies,
        dependency_types,
        portable: entry.portable,
    }
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
    module: &IRModule,
    globals: &super::GlobalTypes,
    failed: bool,
) -> Entry {
    let own_type = inferencer
        .type_of(function.expr())
        .cloned()
        .map(|t| inferencer.solver.resolve(&t));
    let mut resolver = Resolver::new(inferencer, globals);
    let (root, order, outputs) = resolver.run_recording(function.expr());
    let unresolved = std::mem::take(&mut resolver.unresolved);
    let diagnostics = unresolved_diagnostics(inferencer, unresolved, failed);
    let output = root.as_function().unwrap_or_else(|| function.clone());
    let names = mentioned_globals(&order);
    let dependency_types = names.iter().map(|n| globals.get(n).cloned()).collect();
    let dependencies = names
        .into_iter()
        .map(|name| {
            let signature = module.function(&name).map(Signature::of);
            (name, signature)
        })
        .collect();
    let portable = outputs.iter().all(portable_node)
        && own_type
            .as_ref()
            .is_none_or(|t| portable_type(t, &mut HashMap::default()));
    Entry {
        input: function.clone(),
        order,
        outputs,
        output,
        own_type,
        diagnostics,
        dependencies,
        dependency_types,
        portable,
    }
}

/// Whether the types a node carries can be copied to an equal node of
/// another lowering (no type variables, no metadata objects).
fn portable_node(e: &Expr) -> bool {
    let mut memo = HashMap::default();
    let mut ok = |t: &Type| portable_type(t, &mut memo);
    e.checked_type().is_none_or(&mut ok)
        && match e.kind() {
            ExprKind::Call(call) => call.type_args.iter().all(&mut ok),
            ExprKind::Function(f) => f.ret_type.as_ref().is_none_or(&mut ok),
            ExprKind::Var(v) => v.type_annotation.as_ref().is_none_or(&mut ok),
            _ => true,
        }
}

/// See [`portable_node`]; `memo` remembers shared subtrees by address.
fn portable_type(t: &Type, memo: &mut HashMap<usize, bool>) -> bool {
    let key = t.kind() as *const TypeKind as usize;
    if let Some(&known) = memo.get(&key) {
        return known;
    }
    let result = match t.kind() {
        TypeKind::Tensor(tt) => !tt
            .shape
            .iter()
            .any(|d| matches!(d, Dim::Meta(_) | Dim::Expr(_))),
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
