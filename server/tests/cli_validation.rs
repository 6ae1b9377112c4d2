//! Command-line values checked before anything runs, through the built
//! binary: pipeline nesting is bounded (no stack overflow, a caret at the
//! point), pass parameters are checked against their declared ranges, and
//! `--opt-level` and `--target` against what exists — each with a caret
//! under the offending value and exit status 2.

use relay_test_support::run::{run, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_relay");

const MODULE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  add(%x, %x)
}
"#;

/// The module, in a file of the calling test's own (tests run in parallel).
fn input() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_validation");
    std::fs::create_dir_all(&dir).unwrap();
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("main").replace("::", "_");
    let path = dir.join(format!("{name}.relay"));
    std::fs::write(&path, MODULE).unwrap();
    path
}

fn relay(args: &[&str]) -> Run {
    run(Path::new(BIN), args, "", None)
}

fn opt(extra: &[&str]) -> Run {
    let file = input();
    let mut args = vec!["opt", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    relay(&args)
}

/// The column of the first caret of a rendered error, and the text above it.
fn caret_under(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start_matches("  | ").trim_start().starts_with('^'))
        .unwrap_or_else(|| panic!("no caret in:\n{stderr}"));
    let caret = lines[at].strip_prefix("  | ").unwrap();
    let text = lines[at - 1].strip_prefix("  | ").unwrap();
    let start = caret.find('^').unwrap();
    let end = start + caret[start..].chars().take_while(|c| *c == '^').count();
    text.chars().skip(start).take(end - start).collect()
}

fn nested(depth: usize) -> String {
    format!(
        "InferType, {}FoldConstant{}",
        "Sequential(".repeat(depth),
        ")".repeat(depth)
    )
}

#[test]
fn a_deeply_nested_pipeline_is_an_error_not_a_crash() {
    let run = opt(&["-p", &nested(5000)]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error: the pipeline nests deeper than 64 levels here"),
        "{}",
        run.stderr
    );
    assert_eq!(caret_under(&run.stderr), "(");
    // As deep as allowed still runs.
    let run = opt(&["-p", &nested(63)]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // `relay check --pipeline` reads pipelines the same way.
    let file = input();
    let run = relay(&["check", file.to_str().unwrap(), "--pipeline", &nested(5000)]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("nests deeper than 64 levels"),
        "{}",
        run.stderr
    );
    // Lists nest too.
    let lists = format!(
        "RemoveUnusedFunctions(entry_functions={}{})",
        "[".repeat(40_000),
        "]".repeat(40_000)
    );
    let run = opt(&["-p", &lists]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
}

#[test]
fn pass_parameters_are_checked_against_their_ranges() {
    let run = opt(&["-p", "FuseOps(fuse_opt_level=99999999999)"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`fuse_opt_level` of FuseOps must be in -1..=4, not 99999999999"),
        "{}",
        run.stderr
    );
    assert_eq!(caret_under(&run.stderr), "99999999999");
    let run = opt(&["-p", "InferType, CombineParallelDense(min_num_branches=-5)"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`min_num_branches` of CombineParallelDense must be in 0.., not -5"),
        "{}",
        run.stderr
    );
    assert_eq!(caret_under(&run.stderr), "-5");
    let run = opt(&["-p", "Sequential(FoldConstant, opt_level=7)"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(caret_under(&run.stderr), "7");
    // `relay passes` shows the ranges.
    let out = Command::new(BIN).args(["passes"]).output().unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing.contains("fuse_opt_level=-1  (an integer in -1..=4)"),
        "{listing}"
    );
}

#[test]
fn opt_level_and_target_are_checked() {
    let run = opt(&["-p", "FoldConstant", "--opt-level", "256"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("opt_level must be in 0..=4, not 256"),
        "{}",
        run.stderr
    );
    assert_eq!(caret_under(&run.stderr), "256");
    for (target, message) in [
        ("cuda", "target `cuda` has no rules here"),
        ("c", "target `c` has no rules here"),
        ("nope", "unknown target `nope`"),
        ("", "the target is empty"),
    ] {
        let run = opt(&["-p", "FoldConstant", "--target", target]);
        assert_eq!(run.code, Some(2), "--target {target:?}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{}", run.stderr);
        assert!(
            run.stderr.contains("the known targets are `llvm`"),
            "{}",
            run.stderr
        );
        if !target.is_empty() {
            assert_eq!(caret_under(&run.stderr), target);
        }
    }
    let run = opt(&["-p", "FoldConstant", "--target", "llvm", "--opt-level", "4"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// `relay passes` accounts for every name of TVM v0.13's `relay.transform`
/// (the checked-in list read from TVM's transform.py): each starts a line,
/// either as a registered pass or in the closing list of names that are not
/// passes here, with the reason.
#[test]
fn passes_lists_every_name_of_tvm_relay_transform() {
    let names = include_str!("../../passes/transforms/data/tvm_relay_transform_names.txt");
    let out = Command::new(BIN).args(["passes"]).output().unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    let (registered, not_registered) = listing
        .split_once("Not registered (")
        .expect("the listing ends with the names that are not registered");
    for name in names
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let starts_a_line = |text: &str| {
            text.lines()
                .any(|line| line.split_whitespace().next() == Some(name))
        };
        let explained = not_registered.lines().any(|line| {
            line.split_whitespace().next() == Some(name) && line.len() > name.len() + 10
        });
        assert!(
            starts_a_line(registered) || explained,
            "`relay passes` neither lists {name} nor says why it is not a pass"
        );
    }
}
