//! Type inference: TVM's `InferType` (`src/relay/transforms/type_infer.cc`,
//! `src/relay/analysis/type_solver.cc`).
//!
//! Each function is inferred on its own, in three phases:
//!
//! 1. **Constraints** (`generate`): expressions are visited children
//!    first, each node once; every node gets a type, made of known parts and
//!    unknown (incomplete) types. Operator calls add relation instances;
//!    other calls, `if`, `let`, `match` and annotations unify types.
//! 2. **Solving** (`solver`): union-find unification and a FIFO queue of
//!    relations, re-run when a type they mention is refined.
//! 3. **Resolution** (`resolve`): every expression is rebuilt with its
//!    checked type; unannotated variables and functions get the inferred
//!    annotations; calls get their type arguments.
//!
//! Errors are diagnostics of [`Layer::Type`](relay_ir::diagnostic::Layer)
//! at the offending expression, with types in Relay syntax. An error TVM
//! treats as fatal stops the inference of that function only; the other
//! functions of the module are still inferred, so every independent error
//! is reported. Nothing panics on malformed IR, and nothing recurses on the
//! size of the graph.
//!
//! ```
//! use relay_infer::infer_module;
//! use relay_lower::parse_and_lower;
//!
//! let (module, _) = parse_and_lower(
//!     "a.relay",
//!     "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }",
//! );
//! let (typed, diagnostics) = infer_module(&module);
//! assert!(!diagnostics.has_errors());
//! let main = typed.function("main").unwrap();
//! assert_eq!(
//!     relay_ir::printer::print_type(main.body().checked_type().unwrap()),
//!     "Tensor[(2, 3), float32]"
//! );
//! ```

pub mod checkable;
pub mod relation_contract;
pub mod relations;

mod attr_span;
mod display;
mod exhaust;
mod generate;
mod incremental;
mod kind;
pub mod local;
mod resolve;
mod solver;

pub use generate::RelationLookup;
pub use incremental::{CheckStats, IncrementalChecker};
pub use local::infer_type_local;

use generate::Inferencer;
use rayon::prelude::*;
use relay_ir::diagnostic::{Diagnostic, Diagnostics};
use relay_ir::{Expr, Function, IRModule, Type};
use resolve::Resolver;

/// The types of global functions, by name, as the functions of a module
/// see them while they are checked.
pub(crate) type GlobalTypes = relay_ir::fxhash::FxMap<String, Type>;

/// Infers the types of every Relay function of `m` (TVM's `InferType`
/// pass), with the operator relations of [`relations::by_name`].
///
/// Global functions are typed from the annotations of the callee, as TVM
/// does, so each function is inferred independently. The result has every
/// expression's `checked_type` set; a function with errors is returned with
/// the types that could be found.
pub fn infer_module(m: &IRModule) -> (IRModule, Diagnostics) {
    infer_module_with(m, &relations::by_name)
}

/// [`infer_module`] with another way to find operator relations (tests use
/// a few simple ones).
pub fn infer_module_with(m: &IRModule, lookup: RelationLookup<'_>) -> (IRModule, Diagnostics) {
    struct State<'a> {
        name: &'a str,
        function: &'a Function,
        inferencer: Inferencer<'a>,
        failed: bool,
        own_type: Option<Type>,
    }
    // Each function's constraints are generated and solved on its own (a
    // call of a global reads the callee's annotations), so the functions
    // are inferred in parallel; only resolution needs every function's
    // type, and it too is per function once they are all known. The order
    // of the results (and of the diagnostics) is the module's.
    let functions: Vec<(&str, &Function)> = m.functions().collect();
    // One function is inferred on this thread: handing it to another
    // would only add the hand-over.
    let parallel = functions.len() > 1;
    fn start<'a>(
        m: &'a IRModule,
        lookup: RelationLookup<'a>,
        (name, function): (&'a str, &'a Function),
    ) -> State<'a> {
        let (mut inferencer, failed) = solve(Some(m), lookup, function.expr());
        let own_type = inferencer.resolved_type_of(function.expr());
        State {
            name,
            function,
            inferencer,
            failed,
            own_type,
        }
    }
    fn end<'a>(mut state: State<'a>, globals: &GlobalTypes) -> (&'a str, Expr, Vec<Diagnostic>) {
        let (expr, diagnostics) = finish(
            &mut state.inferencer,
            state.function.expr(),
            globals,
            state.failed,
        );
        (state.name, expr, diagnostics)
    }
    let states: Vec<State<'_>> = if parallel {
        functions.par_iter().map(|&f| start(m, lookup, f)).collect()
    } else {
        functions.iter().map(|&f| start(m, lookup, f)).collect()
    };
    let mut globals = GlobalTypes::default();
    for state in &states {
        if let Some(t) = &state.own_type {
            globals.insert(state.name.to_string(), t.clone());
        }
    }
    let finished: Vec<(&str, Expr, Vec<Diagnostic>)> = if parallel {
        states.into_par_iter().map(|s| end(s, &globals)).collect()
    } else {
        states.into_iter().map(|s| end(s, &globals)).collect()
    };
    let mut out = m.clone();
    let mut diagnostics = Diagnostics::new();
    for (name, expr, diags) in finished {
        diagnostics.extend(diags);
        if let Some(f) = expr.as_function() {
            out.add_function(name, f);
        }
    }
    (out, diagnostics)
}

/// Infers the types in one expression (TVM's `InferType` on an
/// expression). Global functions and ADTs are looked up in `m`.
pub fn infer_expr(e: &Expr, m: Option<&IRModule>) -> (Expr, Diagnostics) {
    infer_expr_with(e, m, &relations::by_name)
}

/// [`infer_expr`] with another way to find operator relations.
pub fn infer_expr_with(
    e: &Expr,
    m: Option<&IRModule>,
    lookup: RelationLookup<'_>,
) -> (Expr, Diagnostics) {
    let (mut inferencer, failed) = solve(m, lookup, e);
    let globals = GlobalTypes::default();
    let (expr, diags) = finish(&mut inferencer, e, &globals, failed);
    (expr, diags.into_iter().collect())
}

/// Everything of InferType on `root` but resolution (which needs the types
/// of the other functions): constraints generated and solved. Also whether
/// generation stopped at a fatal error.
fn solve<'a>(
    module: Option<&'a IRModule>,
    lookup: RelationLookup<'a>,
    root: &Expr,
) -> (Inferencer<'a>, bool) {
    let mut inferencer = Inferencer::new(module, lookup);
    let failed = inferencer.run(root).is_err();
    inferencer.solver.solve();
    (inferencer, failed)
}

/// Resolution, and the diagnostics of one function in the order found.
fn finish(
    inferencer: &mut Inferencer<'_>,
    root: &Expr,
    globals: &GlobalTypes,
    failed: bool,
) -> (Expr, Vec<Diagnostic>) {
    let mut resolver = Resolver::new(inferencer, globals);
    let expr = resolver.run(root);
    let unresolved = std::mem::take(&mut resolver.unresolved);
    (expr, unresolved_diagnostics(inferencer, unresolved, failed))
}

/// The diagnostics of one resolved function in the order found.
fn unresolved_diagnostics(
    inferencer: &mut Inferencer<'_>,
    unresolved: resolve::Unresolved,
    failed: bool,
) -> Vec<Diagnostic> {
    let mut diags = std::mem::take(&mut inferencer.solver.diagnostics);
    // An unknown type is almost always the consequence of an error already
    // reported; alone, it is reported once, at the innermost expression.
    // Below a call of an opaque operator, types are unknown by design.
    if diags.is_empty() && !failed && !inferencer.opaque_calls {
        diags.extend(unresolved.diagnostic());
    }
    diags
}

#[cfg(test)]
mod identity_tests;
#[cfg(test)]
mod tests;
