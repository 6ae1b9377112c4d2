//! Which passes are worth offering as code actions where the cursor is: the
//! ones that would change the function under the cursor (or, outside any
//! function, the module). Offering every registered pass at every position
//! buries the few that do something; the full list stays one "Apply pass…"
//! action away.
//!
//! The check is the real thing, not a guess: each candidate runs on the
//! analysed (type-checked) module as "Apply X" would run it, and its result
//! is compared structurally with its input. A function pass runs on the
//! function under the cursor and the globals it reaches only, so a large
//! module with many functions costs what that function costs. The whole
//! check stops after a time budget (passes not reached are left to "Apply
//! pass…"), and its answer is kept with the analysis, so moving the cursor
//! inside a function costs nothing until the document changes.
//!
//! A pass that changes the function's signature (its parameters or result
//! type: the gradient passes, ToCPS, ToMixedPrecision) makes a different
//! program rather than rewriting this one; it is not an action at the cursor
//! but comes first in "Apply pass…" with the rewrites.

use super::analysis::{guarded, Analysis};
use crate::project::Project;
use relay_passes::ir::equal::{module_first_difference, structural_equal, types_equal};
use relay_passes::ir::rewrite::post_order_each;
use relay_passes::ir::{ExprKind, Function, IRModule, ModuleProperty, Type};
use relay_passes::pass_manager::registry::{self, PassKind};
use relay_passes::pass_manager::{run_pass, PassContext};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long one check may take: a code action request is answered within
/// about this, even on a large module.
pub const CHECK_BUDGET: Duration = Duration::from_millis(300);

/// What the check found for one place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applicability {
    /// The passes that rewrite the function (or module) and keep its
    /// signature, in registry order: offered at the cursor.
    pub changing: Vec<String>,
    /// The passes that change the function's signature, in registry order:
    /// listed first by "Apply pass…" (after `changing`), not at the cursor.
    pub changing_signature: Vec<String>,
    /// Candidates the budget did not reach.
    pub unchecked: Vec<String>,
}

/// The answers already computed for one analysis, by function (`None`: the
/// module as a whole).
#[derive(Default)]
pub struct ApplicabilityCache(Mutex<HashMap<Option<String>, Arc<Applicability>>>);

/// The passes that would change `function` (or the module), computed once
/// per analysis and function. The external passes of `relay.toml` are never
/// run here (they start programs). When the budget runs out, the answer has
/// `unchecked` passes and a background thread finishes the check (while the
/// document has not changed), so the next request at that place gets the
/// whole answer.
pub fn applicable_passes(
    analysis: &Arc<Analysis>,
    function: Option<&str>,
    project: Option<&Project>,
    budget: Duration,
) -> Arc<Applicability> {
    // Held while computing: a second request for the same place waits for
    // the first answer instead of doing the same work again.
    let mut cache = analysis
        .applicable
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let key = function.map(str::to_string);
    if let Some(found) = cache.get(&key) {
        return found.clone();
    }
    let candidates = candidates(project);
    let answer = match Checker::new(analysis, function, project) {
        Some(checker) => Arc::new(checker.run(candidates, budget)),
        None => Arc::new(Applicability {
            changing: Vec::new(),
            changing_signature: Vec::new(),
            unchecked: candidates.into_iter().map(|(name, _)| name).collect(),
        }),
    };
    cache.insert(key.clone(), answer.clone());
    drop(cache);
    if !answer.unchecked.is_empty() && !budget.is_zero() {
        finish_in_background(analysis, key, project.cloned(), answer.clone());
    }
    answer
}

/// Checks the passes `partial` left unchecked on a thread of its own and
/// replaces the cached answer with the complete one. Stops as soon as this
/// thread is the analysis's only holder (the document changed).
fn finish_in_background(
    analysis: &Arc<Analysis>,
    function: Option<String>,
    project: Option<Project>,
    partial: Arc<Applicability>,
) {
    let weak = Arc::downgrade(analysis);
    let spawned = std::thread::Builder::new()
        .name("relay-applicable".into())
        // Passes recurse on the nesting of the IR, as on the server's pool.
        .stack_size(64 << 20)
        .spawn(move || {
            let still_current = || {
                weak.upgrade()
                    .is_some_and(|analysis| Arc::strong_count(&analysis) > 1)
            };
            let checker = {
                let Some(analysis) = weak.upgrade() else {
                    return;
                };
                match Checker::new(&analysis, function.as_deref(), project.as_ref()) {
                    Some(checker) => checker,
                    None => return,
                }
            };
            let candidates = candidates(project.as_ref());
            let mut complete = Applicability::default();
            for (name, kind) in &candidates {
                let change = if partial.changing.contains(name) {
                    Change::Rewrite
                } else if partial.changing_signature.contains(name) {
                    Change::Signature
                } else if partial.unchecked.contains(name) {
                    if !still_current() {
                        return;
                    }
                    checker.change(name, *kind)
                } else {
                    Change::None
                };
                complete.record(name, change);
            }
            if let Some(analysis) = weak.upgrade() {
                analysis
                    .applicable
                    .0
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(function, Arc::new(complete));
            }
        });
    if let Err(error) = spawned {
        eprintln!("relay lsp: cannot start the applicable-passes thread: {error}");
    }
}

/// The candidates: every registered pass but PrintIR (it only logs),
/// InferType (the module is already type-checked) and external passes.
fn candidates(project: Option<&Project>) -> Vec<(String, PassKind)> {
    let external: BTreeSet<&str> = project
        .map(|p| p.passes.keys().map(String::as_str).collect())
        .unwrap_or_default();
    registry::all()
        .into_iter()
        .filter(|spec| !matches!(spec.name.as_str(), "PrintIR" | "InferType"))
        .filter(|spec| !external.contains(spec.name.as_str()))
        .map(|spec| (spec.name, spec.kind))
        .collect()
}

/// What a check runs passes on: the type-checked module, the focused
/// module for function passes, and the pass context "Apply X" would use.
struct Checker {
    typed: IRModule,
    focused: Option<IRModule>,
    function: Option<String>,
    ctx: Arc<PassContext>,
}

impl Checker {
    /// `None` when passes cannot run: the module has errors ("Apply X"
    /// fails too) or the project's context options are invalid.
    fn new(
        analysis: &Analysis,
        function: Option<&str>,
        project: Option<&Project>,
    ) -> Option<Checker> {
        // Without errors the analysis's types are InferType's (the same
        // inference), so the module is what InferType would give.
        let mut typed = match &analysis.typed {
            Some(typed) if !analysis.has_errors() => typed.clone(),
            _ => return None,
        };
        typed.set_property(ModuleProperty::TypeChecked);
        let options = project.map(Project::context_options).unwrap_or_default();
        let ctx = PassContext::new(options).ok()?;
        let focused = function
            .filter(|f| typed.function(f).is_some())
            .map(|f| reachable_from(&typed, f));
        Some(Checker {
            typed,
            focused,
            function: function.map(str::to_string),
            ctx,
        })
    }

    /// Checks `candidates` in order until `budget` is spent.
    fn run(&self, candidates: Vec<(String, PassKind)>, budget: Duration) -> Applicability {
        let start = Instant::now();
        let mut result = Applicability::default();
        for (name, kind) in candidates {
            if start.elapsed() >= budget {
                result.unchecked.push(name);
            } else {
                let change = self.change(&name, kind);
                result.record(&name, change);
            }
        }
        result
    }

    fn change(&self, name: &str, kind: PassKind) -> Change {
        // A function pass changes each function on its own: running it on
        // the focused function alone says the same, for less.
        let input = match (&self.focused, kind) {
            (Some(focused), PassKind::Function) => focused,
            _ => &self.typed,
        };
        change(name, input, self.function.as_deref(), &self.ctx)
    }
}

/// What a pass does to the function (or module) under the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    None,
    /// A rewrite: the function keeps its parameters and result type.
    Rewrite,
    /// A different program: the parameters or the result type changed.
    Signature,
}

impl Applicability {
    fn record(&mut self, name: &str, change: Change) {
        match change {
            Change::None => {}
            Change::Rewrite => self.changing.push(name.to_string()),
            Change::Signature => self.changing_signature.push(name.to_string()),
        }
    }

    /// Every pass that changes something, rewrites first: the head of the
    /// "Apply pass…" list.
    pub fn all_changing(&self) -> Vec<String> {
        self.changing
            .iter()
            .chain(&self.changing_signature)
            .cloned()
            .collect()
    }
}

/// What running `name` on `input` does to `function` (or the module). A
/// pass that fails or panics changes nothing worth offering.
fn change(name: &str, input: &IRModule, function: Option<&str>, ctx: &Arc<PassContext>) -> Change {
    let run = || -> Option<IRModule> {
        let pass = registry::create_by_name(name).ok()?;
        let guard = ctx.enter().ok()?;
        let output = run_pass(&*pass, input.clone(), ctx);
        guard.exit().ok()?;
        output.ok()
    };
    let Ok(Some(output)) = guarded(run) else {
        return Change::None;
    };
    // What the pass reported (warnings of a pass that ran) is not wanted here.
    drop(ctx.take_diagnostics());
    match function {
        Some(f) => match (input.function(f), output.function(f)) {
            (Some(before), Some(after)) if structural_equal(before.expr(), after.expr(), false) => {
                Change::None
            }
            (Some(before), Some(after)) if !same_signature(before, after) => Change::Signature,
            (None, None) => Change::None,
            _ => Change::Rewrite,
        },
        None => match module_first_difference(input, &output, false) {
            Some(_) => Change::Rewrite,
            None => Change::None,
        },
    }
}

/// Whether `after` takes the parameters `before` takes and returns what it
/// returns, as far as both say: the same type parameters, parameter count
/// and annotations, and result type. A side that does not annotate a
/// parameter or the result agrees with any type there.
fn same_signature(before: &Function, after: &Function) -> bool {
    let (b, a) = (before.data(), after.data());
    let agree = |x: Option<&Type>, y: Option<&Type>| match (x, y) {
        (Some(x), Some(y)) => types_equal(x, y),
        _ => true,
    };
    b.type_params.len() == a.type_params.len()
        && b.params.len() == a.params.len()
        && b.params
            .iter()
            .zip(&a.params)
            .all(|(x, y)| agree(x.type_annotation(), y.type_annotation()))
        && agree(b.ret_type.as_ref(), a.ret_type.as_ref())
}

/// `module` with only `root` and the global functions it calls, directly or
/// not (type definitions and properties kept).
fn reachable_from(module: &IRModule, root: &str) -> IRModule {
    let mut keep: BTreeSet<String> = BTreeSet::new();
    let mut work = vec![root.to_string()];
    while let Some(name) = work.pop() {
        if !keep.insert(name.clone()) {
            continue;
        }
        if let Some(function) = module.function(&name) {
            post_order_each(function.expr(), |expr| {
                if let ExprKind::GlobalVar(global) = expr.kind() {
                    if !keep.contains(global.name()) {
                        work.push(global.name().to_string());
                    }
                }
            });
        }
    }
    let mut focused = module.clone();
    let unreachable: Vec<String> = module
        .functions()
        .map(|(name, _)| name.to_string())
        .filter(|name| !keep.contains(name))
        .collect();
    for name in unreachable {
        focused.remove_function(&name);
    }
    focused
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::analysis::analyze;
    use crate::lsp::text::Encoding;

    fn analysis(text: &str) -> Arc<Analysis> {
        relay_passes::register_builtin_passes();
        Arc::new(
            analyze("t.relay", Arc::from(text), 1, Encoding::Utf16, &|| false).expect("analysed"),
        )
    }

    const TWO_FUNCTIONS: &str = "#[version = \"0.0.5\"]
def @helper(%a: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  negative(%a)
}

def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
";

    #[test]
    fn fold_constant_is_offered_where_it_folds_and_not_elsewhere() {
        let a = analysis(TWO_FUNCTIONS);
        let main = applicable_passes(&a, Some("main"), None, Duration::from_secs(60));
        assert!(main.unchecked.is_empty(), "{main:?}");
        assert!(
            main.changing.contains(&"FoldConstant".to_string()),
            "{main:?}"
        );
        let helper = applicable_passes(&a, Some("helper"), None, Duration::from_secs(60));
        assert!(
            !helper.changing.contains(&"FoldConstant".to_string()),
            "{helper:?}"
        );
        // Not every pass changes @main: the list is a selection.
        let all = candidates(None).len();
        assert!(
            main.changing.len() < all / 2,
            "{} of {all}: {main:?}",
            main.changing.len()
        );
    }

    #[test]
    fn passes_that_change_the_signature_are_kept_apart() {
        let a = analysis(TWO_FUNCTIONS);
        let main = applicable_passes(&a, Some("main"), None, Duration::from_secs(60));
        // Gradient returns the gradients too; ToCPS takes a continuation.
        for name in ["Gradient", "ToCPS"] {
            assert!(
                main.changing_signature.contains(&name.to_string()),
                "{name}: {main:?}"
            );
            assert!(
                !main.changing.contains(&name.to_string()),
                "{name}: {main:?}"
            );
        }
        let all = main.all_changing();
        assert_eq!(all.first(), main.changing.first(), "{all:?}");
        assert_eq!(
            all.len(),
            main.changing.len() + main.changing_signature.len()
        );
    }

    #[test]
    fn a_pass_that_removes_the_function_changes_it() {
        let a = analysis(TWO_FUNCTIONS);
        // @helper is never called: RemoveUnusedFunctions deletes it.
        let helper = applicable_passes(&a, Some("helper"), None, Duration::from_secs(60));
        assert!(
            helper
                .changing
                .contains(&"RemoveUnusedFunctions".to_string()),
            "{helper:?}"
        );
        let main = applicable_passes(&a, Some("main"), None, Duration::from_secs(60));
        assert!(
            !main.changing.contains(&"RemoveUnusedFunctions".to_string()),
            "{main:?}"
        );
    }

    #[test]
    fn answers_are_cached_per_analysis_and_function() {
        let a = analysis(TWO_FUNCTIONS);
        let first = applicable_passes(&a, Some("main"), None, Duration::from_secs(60));
        let second = applicable_passes(&a, Some("main"), None, Duration::from_secs(60));
        assert!(Arc::ptr_eq(&first, &second));
    }

    #[test]
    fn a_spent_budget_leaves_the_rest_unchecked() {
        let a = analysis(TWO_FUNCTIONS);
        let none = applicable_passes(&a, Some("main"), None, Duration::ZERO);
        assert!(none.changing.is_empty());
        assert_eq!(none.unchecked.len(), candidates(None).len());
    }

    #[test]
    fn a_check_cut_short_is_finished_in_the_background() {
        let a = analysis(TWO_FUNCTIONS);
        // A budget that ends after the first candidate.
        let partial = applicable_passes(&a, Some("main"), None, Duration::from_nanos(1));
        assert!(!partial.unchecked.is_empty(), "{partial:?}");
        let complete = applicable_passes(&a, Some("main"), None, Duration::from_secs(60));
        let full = Checker::new(&a, Some("main"), None)
            .unwrap()
            .run(candidates(None), Duration::from_secs(60));
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut latest = complete;
        while !latest.unchecked.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            latest = applicable_passes(&a, Some("main"), None, Duration::from_secs(60));
        }
        assert_eq!(*latest, full);
    }

    #[test]
    fn nothing_is_run_on_a_module_with_errors() {
        let a = analysis(
            "#[version = \"0.0.5\"]
def @main(%x: Tensor[(2, 2), float32]) {
  add(%x, %y)
}
",
        );
        let main = applicable_passes(&a, Some("main"), None, Duration::from_secs(60));
        assert!(main.changing.is_empty(), "{main:?}");
    }

    #[test]
    fn only_the_reachable_globals_are_kept() {
        let a = analysis(
            "#[version = \"0.0.5\"]
def @a(%x: float32) -> float32 { @b(%x) }
def @b(%x: float32) -> float32 { negative(%x) }
def @c(%x: float32) -> float32 { @a(%x) }
",
        );
        let typed = a.typed.as_ref().unwrap();
        let names = |m: &IRModule| {
            m.functions()
                .map(|(n, _)| n.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&reachable_from(typed, "a")), ["a", "b"]);
        assert_eq!(names(&reachable_from(typed, "c")), ["a", "b", "c"]);
    }
}
