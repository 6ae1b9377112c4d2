//! `relay opt` as a user sees it, in insta snapshots: the built binary is run
//! on small modules written here, and its report channels are snapshotted —
//! `--time-passes` (durations and percentages redacted, the nesting, the
//! pass names and the skipped passes kept), `--print-ir-after-change` (unified diffs),
//! `--print-ir-before/--print-ir-after`, `--explain`, `--count-passes`, and
//! pipeline syntax errors with their caret.
//!
//! Function passes are checked in-process through the library entry point
//! the binary uses (`relay_server::cli::run`), with a closure pass
//! registered as a downstream crate would (see `examples/embed`).

use relay_test_support::run::{run, Run};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_relay");

/// Constant folding, a common subexpression and a dead binding: each of
/// `FoldConstant, EliminateCommonSubexpr, DeadCodeElimination` changes it.
const SMALL: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  %1 = multiply(%x, %0);
  %2 = multiply(%x, %0);
  let %unused = negative(%x);
  add(%1, %2)
}
"#;

const PIPELINE: &str = "FoldConstant, EliminateCommonSubexpr, DeadCodeElimination";

/// Writes `text` to a file of this test's own and returns its path.
fn input(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_opt_snapshots");
    std::fs::create_dir_all(&dir).expect("the target's temporary directory is writable");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the input can be written");
    path
}

fn relay(args: &[&str]) -> Run {
    run(Path::new(BIN), args, "", None)
}

fn opt(file: &std::path::Path, extra: &[&str]) -> Run {
    let mut args = vec!["opt", file.to_str().expect("a UTF-8 path")];
    args.extend_from_slice(extra);
    relay(&args)
}

/// Replaces the numbers of a timing line (`\tName: 12us [3us] (1.00%;
/// 2.00%)`) by placeholders, after checking that the line has exactly that
/// form: the snapshot keeps the tree (tabs) and the pass names.
fn redact_timing(report: &str) -> String {
    let mut out = String::new();
    for line in report.lines() {
        // Skipped passes have no numbers: `\tInferType: skipped: <why>`.
        if line
            .trim_start()
            .split_once(": ")
            .is_some_and(|(_, rest)| rest.starts_with("skipped: "))
        {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let (head, numbers) = line
            .rsplit_once(": ")
            .unwrap_or_else(|| panic!("not a timing line: {line:?}"));
        let shape: String = numbers
            .chars()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect();
        // Collapse runs of digits so that any number matches.
        let mut collapsed = String::new();
        for c in shape.chars() {
            if !(c == '9' && collapsed.ends_with('9')) {
                collapsed.push(c);
            }
        }
        let collapsed = collapsed.replace("[-9", "[9");
        assert_eq!(
            collapsed, "9us [9us] (9.9%; 9.9%)",
            "timing line {line:?} has an unexpected form"
        );
        out.push_str(&format!("{head}: <total>us [<self>us] (<pct>%; <pct>%)\n"));
    }
    out
}

#[test]
fn time_passes_shows_the_nested_tree() {
    let file = input("time.relay", SMALL);
    let run = opt(
        &file,
        &["-p", PIPELINE, "--opt-level", "3", "--time-passes"],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("time_passes", redact_timing(&run.stderr));
}

#[test]
fn print_ir_after_change_prints_unified_diffs() {
    let file = input("change.relay", SMALL);
    let run = opt(
        &file,
        &[
            "-p",
            PIPELINE,
            "--opt-level",
            "3",
            "--print-ir-after-change",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("\n+++ after FoldConstant"),
        "{}",
        run.stderr
    );
    insta::assert_snapshot!("print_ir_after_change", run.stderr);
}

#[test]
fn print_ir_before_and_after_named_passes() {
    let file = input("named.relay", SMALL);
    let run = opt(
        &file,
        &[
            "-p",
            PIPELINE,
            "--opt-level",
            "3",
            "--print-ir-before",
            "FoldConstant",
            "--print-ir-after",
            "DeadCodeElimination",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("print_ir_before_after", run.stderr);
    // The IR after the last pass is what is printed on stdout.
    let after = run
        .stderr
        .split("// IR after DeadCodeElimination\n")
        .nth(1)
        .expect("the IR after DeadCodeElimination is printed");
    assert_eq!(after.trim_end(), run.stdout.trim_end());
}

#[test]
fn explain_says_why_each_pass_ran_or_not() {
    let file = input("explain.relay", SMALL);
    let run = opt(
        &file,
        &[
            "-p",
            "FoldConstant, EliminateCommonSubexpr, DeadCodeElimination, Sequential(InferType, opt_level=4)",
            "--opt-level",
            "2",
            "--disabled-pass",
            "EliminateCommonSubexpr",
            "--explain",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("explain", run.stderr);
}

#[test]
fn count_passes_with_and_without_the_cache() {
    let file = input("count.relay", SMALL);
    let cached = opt(
        &file,
        &["-p", PIPELINE, "--opt-level", "3", "--count-passes"],
    );
    let exact = opt(
        &file,
        &[
            "-p",
            PIPELINE,
            "--opt-level",
            "3",
            "--count-passes",
            "--tvm-exact",
        ],
    );
    assert_eq!(cached.code(), 0, "{}", cached.stderr);
    assert_eq!(exact.code(), 0, "{}", exact.stderr);
    assert_eq!(cached.stdout, exact.stdout, "the cache changed the result");
    insta::assert_snapshot!(
        "count_passes",
        format!(
            "with the cache:\n{}\nwith --tvm-exact:\n{}",
            cached.stderr, exact.stderr
        )
    );
}

#[test]
fn pipeline_errors_point_at_the_bad_spot() {
    let file = input("errors.relay", SMALL);
    let cases = [
        ("unknown pass", "InferType, FoldConstnt"),
        ("unknown parameter", "DeadCodeElimination(inline_onse=true)"),
        ("not a keyword", "DeadCodeElimination(2)"),
        (
            "unclosed parenthesis",
            "DeadCodeElimination(inline_once=true",
        ),
        ("wrong value type", "DeadCodeElimination(inline_once=1)"),
        ("bare word as value", "DeadCodeElimination(inline_once=yes)"),
        ("missing value", "DeadCodeElimination(inline_once=)"),
        ("empty item between commas", "InferType,, FoldConstant"),
        (
            "trailing comma in a list",
            "Sequential(InferType, required=[\"InferType\",])",
        ),
        ("missing comma", "InferType FoldConstant"),
        ("stray character", "InferType; FoldConstant"),
        ("unclosed string", "Sequential(InferType, name=\"x)"),
        ("passes given to a pass", "FoldConstant(InferType)"),
        (
            "argument given twice",
            "DeadCodeElimination(inline_once=true, inline_once=false)",
        ),
    ];
    let mut report = String::new();
    for (what, pipeline) in cases {
        let run = opt(&file, &["-p", pipeline]);
        assert_eq!(run.code(), 2, "{what}: {pipeline}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{what}: printed a module");
        assert!(run.stderr.contains('^'), "{what}: no caret: {}", run.stderr);
        report.push_str(&format!("== {what}: -p '{pipeline}'\n{}\n", run.stderr));
    }
    insta::assert_snapshot!("pipeline_errors", report);
}

// ---- function passes through the library entry point ----

/// Functions a function pass must leave alone (`Compiler`, non-zero
/// `Extern`, non-zero `SkipOptimization`) next to ones it must rewrite.
const FUNCTIONS: &str = r#"#[version = "0.0.5"]
def @plain(%x: float32) -> float32 {
  add(%x, 1f)
}

def @offloaded(%x: float32, Compiler="ccompiler", global_symbol="offloaded") -> float32 {
  add(%x, 1f)
}

def @external(%x: float32, Extern=1) -> float32 {
  add(%x, 1f)
}

def @kept(%x: float32, SkipOptimization=1) -> float32 {
  add(%x, 1f)
}

def @optimised(%x: float32, SkipOptimization=0) -> float32 {
  add(%x, 1f)
}

def @main(%x: float32) -> float32 {
  @plain(%x)
}
"#;

/// Registers `NegateBodies`, a function pass made from a closure that
/// wraps every body it is given in `negative(…)`.
fn register_negate_bodies() {
    use relay_passes::diagnostic::Diagnostic;
    use relay_passes::ir::{Expr, Function, FunctionData};
    use relay_passes::pass_manager::registry::{register, PassKind};
    use relay_passes::pass_manager::{function_pass, PassInfo, PassSpec};
    use std::sync::Arc;

    register(PassSpec {
        name: "NegateBodies".into(),
        info: PassInfo::new("NegateBodies", 1, &[]),
        kind: PassKind::Function,
        params: Vec::new(),
        description: "Negate the body of every function (a test pass).".into(),
        factory: Arc::new(|_args| {
            Ok(function_pass("NegateBodies", 1, &[], |f, _module, _ctx| {
                let negative = relay_passes::op::lookup("negative")
                    .ok_or_else(|| Diagnostic::pass_failed("`negative` is not registered"))?;
                let data = f.data();
                let body = Expr::call(
                    Expr::op(negative, None),
                    vec![data.body.clone()],
                    None,
                    None,
                );
                Ok(Function::new(
                    FunctionData {
                        params: data.params.clone(),
                        body,
                        ret_type: data.ret_type.clone(),
                        type_params: data.type_params.clone(),
                        attrs: data.attrs.clone(),
                        virtual_device: data.virtual_device.clone(),
                    },
                    None,
                ))
            }))
        }),
    });
}

/// The printed text of function `name`, from `def` to its closing brace.
fn function_text<'a>(module: &'a str, name: &str) -> &'a str {
    let start = module
        .find(&format!("def @{name}("))
        .unwrap_or_else(|| panic!("no @{name} in\n{module}"));
    let rest = &module[start..];
    let end = rest.find("\n}").map_or(rest.len(), |i| i + 2);
    &rest[..end]
}

#[test]
fn function_passes_skip_external_and_unoptimisable_functions() {
    register_negate_bodies();
    let file = input("functions.relay", FUNCTIONS);
    let out = input("functions.out.relay", "");
    let status = relay_server::cli::run([
        "relay",
        "opt",
        file.to_str().expect("a UTF-8 path"),
        "-p",
        "NegateBodies",
        "-o",
        out.to_str().expect("a UTF-8 path"),
    ]);
    assert_eq!(status, 0);
    let printed = std::fs::read_to_string(&out).expect("the output was written");
    // Rewritten and written back into the module …
    for name in ["plain", "optimised", "main"] {
        assert!(
            function_text(&printed, name).contains("negative("),
            "@{name} was not rewritten:\n{printed}"
        );
    }
    // … and left alone.
    for name in ["offloaded", "external", "kept"] {
        assert!(
            !function_text(&printed, name).contains("negative("),
            "@{name} was rewritten:\n{printed}"
        );
    }
    insta::assert_snapshot!("function_pass", printed);
}
