//! The bodies of the fuzz targets, shared by the cargo-fuzz binaries
//! (`fuzz/fuzz_targets/*.rs`, long campaigns under libFuzzer) and the
//! stable short runs of the test suite (`tests/tests/fuzz_smoke.rs`).
//!
//! Each takes the raw input bytes and panics when a property fails; the
//! returned counts say what the input exercised.

use super::calls::Limits;
use super::entropy::Entropy;
use super::program::generate;
use relay_passes::diagnostic::Diagnostic;
use relay_passes::infer::{infer_expr, infer_module};
use relay_passes::ir::equal::module_first_difference;
use relay_passes::ir::IRModule;
use relay_passes::lower::{parse_and_lower, parse_and_lower_expr};
use relay_passes::pass_manager::{registry, run_pass, PassContext, PassContextOptions};
use relay_passes::printer::{print_module, PrintOptions};
use relay_syntax::{parse, Entry, TextSize};
use std::sync::Arc;

/// Parses arbitrary text with both entry points: the tree gives back the
/// input byte for byte, and every error range lies inside the text.
pub fn parse_target(data: &[u8]) {
    // Invalid UTF-8 is made valid rather than skipped, so that every input
    // exercises the parser.
    let text = String::from_utf8_lossy(data);
    let len = TextSize::of(text.as_ref());
    for entry in [Entry::Module, Entry::Expr] {
        let parse = parse(&text, entry);
        let root = parse.syntax_node();
        assert_eq!(root.to_string(), text, "not lossless ({entry:?})");
        assert_eq!(root.text_range().end(), len);
        for error in parse.errors() {
            assert!(error.range().end() <= len, "error past the end: {error:?}");
            assert!(!error.message().is_empty());
        }
    }
}

/// Whether every location of `diagnostic` lies inside a text of `len` bytes.
fn assert_inside(diagnostic: &Diagnostic, len: usize, what: &str) {
    assert!(!diagnostic.message.is_empty(), "{what}: empty message");
    let spans = diagnostic
        .span
        .iter()
        .chain(diagnostic.labels.iter().map(|l| &l.span));
    for span in spans {
        assert!(
            usize::from(span.range.end()) <= len,
            "{what}: diagnostic past the end of the text: {diagnostic:?}"
        );
    }
}

/// What [`infer_target`] found.
#[derive(Debug, Default, Clone, Copy)]
pub struct InferOutcome {
    /// The text lowered without error (and was type-checked).
    pub lowered: bool,
    /// ... and InferType accepted it.
    pub well_typed: bool,
}

/// Lowers arbitrary text (as a module and as an expression) and runs
/// InferType on what lowers: diagnostics, never a panic, each inside the
/// text; a module that lowers prints as text that lowers again.
pub fn infer_target(data: &[u8]) -> InferOutcome {
    let text = String::from_utf8_lossy(data);
    let len = text.len();
    let mut outcome = InferOutcome::default();
    let (module, diagnostics) = parse_and_lower("fuzz.relay", &text);
    for d in diagnostics.iter() {
        assert_inside(d, len, "lowering");
    }
    if !diagnostics.has_errors() {
        outcome.lowered = true;
        let (typed, inferred) = infer_module(&module);
        for d in inferred.iter() {
            assert_inside(d, len, "InferType");
        }
        outcome.well_typed = !inferred.has_errors();
        let printed = print_module(&module, &PrintOptions::default());
        let (_, again) = parse_and_lower("printed.relay", &printed);
        assert!(
            !again.has_errors(),
            "the printed module does not lower again: {:?}\n--- printed:\n{printed}",
            again.iter().next()
        );
        let printed_typed = print_module(&typed, &PrintOptions::default());
        if outcome.well_typed {
            // The typed printing (with `ty=` comments) reads back too.
            let printed = printed_typed;
            let (_, again) = parse_and_lower("typed.relay", &printed);
            assert!(
                !again.has_errors(),
                "the typed module does not lower again: {:?}\n--- printed:\n{printed}",
                again.iter().next()
            );
        }
    }
    let (expr, diagnostics) = parse_and_lower_expr("fuzz.relay", &text);
    for d in diagnostics.iter() {
        assert_inside(d, len, "lowering (expression)");
    }
    if !diagnostics.has_errors() {
        let (_, inferred) = infer_expr(&expr, None);
        for d in inferred.iter() {
            assert_inside(d, len, "InferType (expression)");
        }
    }
    outcome
}

/// What [`passes_target`] found.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassesOutcome {
    pub well_typed: bool,
    pub calls_kept: usize,
    pub calls_proposed: usize,
    /// Passes that returned a result / reported an error.
    pub passes_ok: usize,
    pub passes_failed: usize,
}

/// The limits the campaigns use: everything the generator can propose,
/// huge values, rank mismatches and literal `if` conditions included.
pub fn campaign_limits() -> Limits {
    Limits::default()
}

/// Generates a module from `data` ([`generate`]), checks that the generator
/// kept its promise (well typed; rejected calls rejected with diagnostics),
/// then runs every registered pass on it: each returns a module or an
/// error, never panics; a returned module type-checks, prints, and reads
/// back structurally equal.
pub fn passes_target(data: &[u8], limits: Limits) -> PassesOutcome {
    let mut entropy = Entropy::from_bytes(data);
    passes_on_generated(&mut entropy, limits)
}

/// [`passes_target`] with the choices from `entropy`.
pub fn passes_on_generated(entropy: &mut Entropy, limits: Limits) -> PassesOutcome {
    relay_passes::register_builtin_passes();
    let generated = generate(entropy, limits);
    assert!(
        generated.silent_rejections.is_empty(),
        "InferType neither typed nor rejected:\n{}",
        generated.silent_rejections[0]
    );
    for rejected in &generated.rejected {
        let (module, diagnostics) = parse_and_lower("rejected.relay", rejected);
        let (_, inferred) = infer_module(&module);
        assert!(
            diagnostics.has_errors() || inferred.has_errors(),
            "a rejected call is accepted on a second look:\n{rejected}"
        );
    }
    let mut outcome = PassesOutcome {
        well_typed: generated.well_typed,
        calls_kept: generated.calls_kept,
        calls_proposed: generated.calls_proposed,
        ..PassesOutcome::default()
    };
    assert!(
        generated.well_typed,
        "a generated module of well-typed parts does not type-check:\n{}",
        generated.text
    );
    let (module, diagnostics) = parse_and_lower("generated.relay", &generated.text);
    assert!(!diagnostics.has_errors());
    let module = typed(module).expect("the generated module type-checks");
    for spec in registry::all() {
        match run_one(&spec.name, &module) {
            Ok(result) => {
                outcome.passes_ok += 1;
                check_result(&spec.name, &generated.text, &result);
            }
            Err(_) => outcome.passes_failed += 1,
        }
    }
    outcome
}

fn quiet_context(opt_level: u32) -> Arc<PassContext> {
    let options = PassContextOptions {
        opt_level,
        log: Some(Arc::new(|_: &str| {})),
        ..PassContextOptions::default()
    };
    PassContext::new(options).expect("a valid context")
}

/// InferType, as `relay opt` runs it before the pipeline.
fn typed(module: IRModule) -> Result<IRModule, String> {
    relay_passes::register_builtin_passes();
    let ctx = quiet_context(2);
    let infer = registry::create_by_name("InferType")?;
    run_pass(&*infer, module, &ctx).map_err(|e| e.message)
}

/// Runs the pass `name` with its default parameters at opt_level 3.
pub fn run_one(name: &str, module: &IRModule) -> Result<IRModule, String> {
    relay_passes::register_builtin_passes();
    let pass = registry::create_by_name(name)?;
    let ctx = quiet_context(3);
    let guard = ctx.enter().map_err(|e| e.message)?;
    let result = run_pass(&*pass, module.clone(), &ctx);
    guard.exit().map_err(|e| e.message)?;
    result.map_err(|e| e.message)
}

/// A pass result type-checks, prints, and the printed text reads back as
/// the same module.
fn check_result(pass: &str, input: &str, result: &IRModule) {
    let printed = print_module(result, &PrintOptions::default());
    let (reread, diagnostics) = parse_and_lower("pass-output.relay", &printed);
    assert!(
        !diagnostics.has_errors(),
        "{pass}: the output does not read back: {:?}\n--- input:\n{input}\n--- output:\n{printed}",
        diagnostics.iter().next()
    );
    let (reread, inferred) = infer_module(&reread);
    assert!(
        !inferred.has_errors(),
        "{pass}: the output does not type-check: {:?}\n--- input:\n{input}\n--- output:\n{printed}",
        inferred.iter().next()
    );
    // Both sides typed: a call's type arguments are part of the comparison.
    let (result, _) = infer_module(result);
    let difference = module_first_difference(&result, &reread, false).filter(|_| {
        // Scalar constants print with six significant digits, as in TVM:
        // a difference the text cannot show is not a round-trip failure.
        !same_text_but_spans(
            &print_module(&result, &PrintOptions::default()),
            &print_module(&reread, &PrintOptions::default()),
        )
    });
    // A node the result shares between two scopes (a closure used in both
    // branches of an `if`, as ToGraphNormalForm makes) is printed in each
    // scope, its parameters bound anew: the reread module is a tree of the
    // result's graph, and its variables are "bound at different places".
    // Text cannot show that sharing; what it must do is read back as itself
    // from there on.
    let difference = difference.filter(|d| {
        !(d.reason.ends_with("are bound at different places") && is_fixed_point(&reread))
    });
    if let Some(difference) = difference {
        panic!(
            "{pass}: the printed output reads back as a different module: {}\n--- input:\n{input}\n--- output:\n{printed}",
            difference.reason
        );
    }
}

/// Whether `module` prints as text that reads back structurally equal.
fn is_fixed_point(module: &IRModule) -> bool {
    let printed = print_module(module, &PrintOptions::default());
    let (again, diagnostics) = parse_and_lower("reprinted.relay", &printed);
    if diagnostics.has_errors() {
        return false;
    }
    let (again, _) = infer_module(&again);
    let (module, _) = infer_module(module);
    module_first_difference(&module, &again, false).is_none()
}

/// Whether two printed modules are the same text, except for the spans the
/// metadata section records (a reread constant has one, a folded one has
/// none, which shifts the section's node numbers): the module bodies are
/// equal, and so are the constants' contents (the section's
/// `b64ndarrays`, which hold every dtype, shape and byte).
fn same_text_but_spans(a: &str, b: &str) -> bool {
    fn split(text: &str) -> (&str, Option<&str>) {
        match text.find("#[metadata]") {
            Some(at) => (
                &text[..at],
                text[at..].find("\"b64ndarrays\"").map(|k| &text[at + k..]),
            ),
            None => (text, None),
        }
    }
    split(a) == split(b)
}
