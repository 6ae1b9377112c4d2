//! The incremental checker (`relay_passes::infer::IncrementalChecker`)
//! gives exactly what a full `infer_module` gives: printed module and
//! diagnostics, on every InferType record and model of `../shared/tvm`,
//! after a no-op (the same text lowered again) and after editing one
//! function (an edit that keeps its type and one that changes it). Small
//! hand-written modules check what is re-inferred.

use relay_passes::diagnostic::Diagnostics;
use relay_passes::infer::{infer_module, CheckStats, IncrementalChecker};
use relay_passes::ir::{Expr, Function, FunctionData, IRModule, Var};
use relay_passes::lower::parse_and_lower;
use relay_passes::printer::{print_module, PrintOptions};
use relay_test_support::files::sorted_files;
use relay_test_support::tvm::root_or_skip;

fn lower(name: &str, text: &str) -> Option<IRModule> {
    let (module, diagnostics) = parse_and_lower(name, text);
    (!diagnostics.has_errors()).then_some(module)
}

/// Printed module and diagnostics: what must not differ.
fn observable(module: &IRModule, diagnostics: &Diagnostics) -> (String, Diagnostics) {
    (
        print_module(module, &PrintOptions::default()),
        diagnostics.clone(),
    )
}

/// Checks `module` both ways; a description of the difference if any.
fn compare(
    checker: &mut IncrementalChecker,
    module: &IRModule,
    what: &str,
) -> Result<CheckStats, String> {
    let (full, full_diagnostics) = infer_module(module);
    let (incremental, incremental_diagnostics, stats) = checker.check(module);
    let want = observable(&full, &full_diagnostics);
    let got = observable(&incremental, &incremental_diagnostics);
    if got.1 != want.1 {
        return Err(format!(
            "{what}: diagnostics differ:\n  incremental {:?}\n  full        {:?}",
            got.1, want.1
        ));
    }
    if got.0 != want.0 {
        let line = got
            .0
            .lines()
            .zip(want.0.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(format!(
            "{what}: printed modules differ at line {}",
            line + 1
        ));
    }
    Ok(stats)
}

/// `module` with the body of `name` replaced by `edit(function)`.
fn edited(module: &IRModule, name: &str, edit: impl Fn(&Function) -> Expr) -> IRModule {
    let mut out = module.clone();
    if let Some(f) = module.function(name) {
        let data = f.data();
        let new = Function::new(
            FunctionData {
                params: data.params.clone(),
                body: edit(f),
                ret_type: data.ret_type.clone(),
                type_params: data.type_params.clone(),
                attrs: data.attrs.clone(),
                virtual_device: data.virtual_device.clone(),
            },
            f.expr().span(),
        );
        out.add_function(name, new);
    }
    out
}

/// `let %edited = body; %edited`: same type, new nodes.
fn keep_type(f: &Function) -> Expr {
    let var = Var::new("edited", None, None);
    Expr::let_(var.clone(), f.body().clone(), var.into_expr(), None)
}

/// The first parameter (or `()`): usually another type.
fn change_type(f: &Function) -> Expr {
    match f.params().first() {
        Some(p) => p.expr().clone(),
        None => Expr::tuple(Vec::new(), None),
    }
}

/// Every comparison for one text; `Err` describes the first difference.
/// `Ok(false)` when the text does not lower (nothing to compare).
fn check_text(name: &str, text: &str) -> Result<bool, String> {
    let Some(module) = lower(name, text) else {
        return Ok(false);
    };
    let count = module.function_count();
    let mut checker = IncrementalChecker::new();
    let stats = compare(&mut checker, &module, "first check")?;
    assert_eq!(stats.rechecked, count, "{name}: first check infers all");
    // The same module again: everything reused as it is.
    let stats = compare(&mut checker, &module, "same module")?;
    assert_eq!(stats.reused, count, "{name}: same module reuses all");
    // The text lowered again: new nodes, same results.
    let relowered = lower(name, text).ok_or("lowers once only")?;
    compare(&mut checker, &relowered, "text lowered again")?;
    let Some(target) = relowered
        .functions()
        .map(|(n, _)| n.to_string())
        .find(|n| n == "main")
        .or_else(|| relowered.functions().next().map(|(n, _)| n.to_string()))
    else {
        return Ok(true);
    };
    let kept = edited(&relowered, &target, keep_type);
    compare(&mut checker, &kept, "edit keeping the type")?;
    let changed = edited(&kept, &target, change_type);
    compare(&mut checker, &changed, "edit changing the type")?;
    // And back to the original text.
    compare(&mut checker, &module, "back to the original")?;
    Ok(true)
}

fn run_on_big_stack(name: String, text: String) -> Result<bool, String> {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || check_text(&name, &text))
        .map_err(|e| e.to_string())?
        .join()
        .unwrap_or_else(|_| Err("panicked".to_string()))
}

#[test]
fn incremental_equals_full_on_infer_type_records() {
    let Some(root) = root_or_skip("infer_incremental") else {
        return;
    };
    let mut failures = Vec::new();
    let mut total = 0;
    let mut compared = 0;
    for before in sorted_files(&root.join("passes/InferType"), ".before.relay") {
        total += 1;
        let text = std::fs::read_to_string(&before).unwrap_or_default();
        let name = before.file_name().unwrap().to_string_lossy().to_string();
        match run_on_big_stack(name.clone(), text) {
            Ok(lowered) => compared += usize::from(lowered),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    eprintln!("incremental vs full: {compared} of {total} InferType records compared");
    assert!(compared * 10 >= total * 9, "too few records lower");
    assert!(
        failures.is_empty(),
        "{} of {total} records differ:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn incremental_equals_full_on_models() {
    let Some(root) = root_or_skip("infer_incremental") else {
        return;
    };
    let mut failures = Vec::new();
    let mut total = 0;
    let mut compared = 0;
    for model in sorted_files(&root.join("models"), ".relay") {
        let file = model.file_name().unwrap().to_string_lossy().to_string();
        if file.matches('.').count() != 1 {
            continue;
        }
        total += 1;
        let text = std::fs::read_to_string(&model).unwrap_or_default();
        match run_on_big_stack(file.clone(), text) {
            Ok(lowered) => compared += usize::from(lowered),
            Err(e) => failures.push(format!("{file}: {e}")),
        }
    }
    eprintln!("incremental vs full: {compared} of {total} models compared");
    assert!(compared * 10 >= total * 9, "too few models lower");
    assert!(
        failures.is_empty(),
        "{} of {total} models differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const HEADER: &str = "#[version = \"0.0.5\"]\n";

fn module(text: &str) -> IRModule {
    let text = format!("{HEADER}{text}");
    let (module, diagnostics) = parse_and_lower("t.relay", &text);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    module
}

fn check_both(checker: &mut IncrementalChecker, text: &str) -> CheckStats {
    let m = module(text);
    compare(checker, &m, text).unwrap()
}

/// [`check_both`] on a module without type errors.
fn check_clean(checker: &mut IncrementalChecker, text: &str) -> CheckStats {
    let m = module(text);
    let (_, diagnostics, _) = IncrementalChecker::new().check(&m);
    assert!(!diagnostics.has_errors(), "{text}: {diagnostics:?}");
    compare(checker, &m, text).unwrap()
}

#[test]
fn only_the_edited_function_is_inferred_again() {
    let a = "def @a(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] { nn.relu(%x) }\n";
    let b = "def @b(%y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] { negative(%y) }\n";
    let main = "def @main(%z: Tensor[(2, 3), float32]) { add(@a(%z), @b(%z)) }\n";
    let mut checker = IncrementalChecker::new();
    let stats = check_clean(&mut checker, &format!("{a}{b}{main}"));
    assert_eq!((stats.rechecked, stats.reused), (3, 0));
    // Relowered, nothing changed: all carried over.
    let stats = check_clean(&mut checker, &format!("{a}{b}{main}"));
    assert_eq!((stats.rechecked, stats.reused, stats.remapped), (0, 3, 3));
    // @a's body changes, not its type: only @a.
    let a2 =
        "def @a(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] { nn.relu(nn.relu(%x)) }\n";
    let stats = check_clean(&mut checker, &format!("{a2}{b}{main}"));
    assert_eq!((stats.rechecked, stats.reused), (1, 2));
}

#[test]
fn a_changed_signature_rechecks_the_callers() {
    let main = "def @main(%z: Tensor[(2, 3), float32]) { @a(%z) }\n";
    let other = "def @other(%w: Tensor[(4), float32]) { %w }\n";
    let mut checker = IncrementalChecker::new();
    let a = "def @a(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }\n";
    check_both(&mut checker, &format!("{a}{main}{other}"));
    // The parameter type changes: @main calls it wrongly now.
    let a2 = "def @a(%x: Tensor[(3, 2), float32]) { nn.relu(%x) }\n";
    let stats = check_both(&mut checker, &format!("{a2}{main}{other}"));
    assert_eq!((stats.rechecked, stats.reused), (2, 1));
}

#[test]
fn an_inferred_return_type_reaches_callers_without_reinference() {
    // @a has no return annotation: @main's `@a` node shows what @a infers.
    let main = "def @main(%z: Tensor[(2, 3), float32]) { @a(%z) }\n";
    let mut checker = IncrementalChecker::new();
    let a = "def @a(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }\n";
    check_both(&mut checker, &format!("{a}{main}"));
    let a2 = "def @a(%x: Tensor[(2, 3), float32]) { sum(%x) }\n";
    let stats = check_both(&mut checker, &format!("{a2}{main}"));
    assert_eq!(stats.rechecked, 1);
}

#[test]
fn errors_are_reported_the_same_after_moving() {
    let bad =
        "def @bad(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 5), float32]) { add(%x, %y) }\n";
    let ok = "def @ok(%x: Tensor[(2, 3), float32]) { %x }\n";
    let mut checker = IncrementalChecker::new();
    check_both(&mut checker, &format!("{bad}{ok}"));
    // Text inserted above shifts every span of @bad.
    let stats = check_both(
        &mut checker,
        &format!("def @aaa(%q: float32) {{ %q }}\n{bad}{ok}"),
    );
    assert_eq!(stats.rechecked, 1);
}

#[test]
fn type_definitions_changing_rechecks_everything() {
    let adt = "type Box[A] { MkBox(A) }\n";
    let adt2 = "type Box[A] { MkBox(A), Empty }\n";
    let f = "def @f(%x: float32) { MkBox(%x) }\ndef @g(%y: float32) { %y }\n";
    let mut checker = IncrementalChecker::new();
    let m = module(&format!("{adt}{f}"));
    compare(&mut checker, &m, "first").unwrap();
    let stats = compare(&mut checker, &m, "again").unwrap();
    assert_eq!(stats.rechecked, 0);
    let stats = check_both(&mut checker, &format!("{adt2}{f}"));
    assert_eq!(stats.rechecked, 2);
}

#[test]
fn the_checker_can_move_between_threads() {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<IncrementalChecker>();
}
