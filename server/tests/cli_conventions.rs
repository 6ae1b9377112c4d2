//! The conventions users of rustfmt, ruff and mlir-opt expect, through the
//! built binary: `-` reads standard input (named `<stdin>`), `relay
//! completions SHELL`, `relay --version` with the commit, and reports of
//! `relay opt` that show nesting and skipped passes (`--time-passes`, its
//! JSON form, `--print-ir-after-all`).

use relay_test_support::run::{run, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_relay");

const MODULE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
"#;

/// SimplifyInference removes the dropout, so the InferType it runs after
/// itself has work to do.
const DROPOUT: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = nn.dropout(%x);
  %0.0
}
"#;

/// `%y` is not declared.
const BROKEN: &str = r#"#[version = "0.0.5"]
def @main(%x: float32) {
  add(%x, %y)
}
"#;

fn relay_with_stdin(args: &[&str], stdin: &str) -> Run {
    run(Path::new(BIN), args, stdin, None)
}

fn relay(args: &[&str]) -> Run {
    relay_with_stdin(args, "")
}

fn file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_conventions");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_dash_reads_standard_input() {
    let printed = relay_with_stdin(&["print", "-"], MODULE);
    assert_eq!(printed.code, Some(0), "{}", printed.stderr);
    assert!(printed.stdout.contains("add(1f, 2f)"), "{}", printed.stdout);

    let optimised = relay_with_stdin(&["opt", "-", "-p", "FoldConstant"], MODULE);
    assert_eq!(optimised.code, Some(0), "{}", optimised.stderr);
    assert!(optimised.stdout.contains("3f"), "{}", optimised.stdout);

    let checked = relay_with_stdin(&["check", "-"], BROKEN);
    assert_eq!(checked.code, Some(1), "{}", checked.stderr);
    assert!(checked.stderr.contains("<stdin>:3:"), "{}", checked.stderr);

    let other = file("same.relay", MODULE);
    let diffed = relay_with_stdin(&["diff", "-", other.to_str().unwrap()], MODULE);
    assert_eq!(diffed.code, Some(0), "{}", diffed.stderr);
    assert_eq!(diffed.stdout.trim(), "equal");
    let both = relay_with_stdin(&["diff", "-", "-"], MODULE);
    assert_eq!(both.code, Some(2), "{}", both.stderr);
    assert!(both
        .stderr
        .contains("only one of the two inputs can be `-`"));
}

#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef relay"),
        ("fish", "complete -c relay"),
    ] {
        let run = relay(&["completions", shell]);
        assert_eq!(run.code, Some(0), "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(marker), "{shell}:\n{}", run.stdout);
        // Subcommands and their flags are completed.
        assert!(run.stdout.contains("opt"), "{shell}");
        assert!(run.stdout.contains("--time-passes"), "{shell}");
    }
    let run = relay(&["completions", "tcsh"]);
    assert_eq!(run.code, Some(2));
}

#[test]
fn version_names_the_commit() {
    let run = relay(&["--version"]);
    assert_eq!(run.code, Some(0));
    let line = run.stdout.trim();
    assert!(
        line.starts_with(&format!("relay {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match head {
        Ok(head) if head.status.success() => {
            let commit = String::from_utf8_lossy(&head.stdout).trim().to_string();
            assert_eq!(
                line,
                format!("relay {} (commit {commit})", env!("CARGO_PKG_VERSION"))
            );
        }
        _ => assert!(line.contains("commit unknown"), "{line}"),
    }
}

#[test]
fn time_passes_lists_skipped_passes_and_speaks_json() {
    let input = file("timing.relay", MODULE);
    let path = input.to_str().unwrap();
    // The module is type-checked on reading, so InferType is skipped.
    let text = relay(&["opt", path, "-p", "InferType", "--time-passes"]);
    assert_eq!(text.code, Some(0), "{}", text.stderr);
    assert!(
        text.stderr
            .contains("InferType: skipped: the module is already TypeChecked"),
        "{}",
        text.stderr
    );
    let json = relay(&[
        "opt",
        path,
        "-p",
        "FoldConstant, InferType",
        "--time-passes=json",
    ]);
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(json.stderr.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", json.stderr));
    let top = &report[0];
    assert_eq!(top["pass"], "sequential");
    assert!(top["total_us"].as_f64().is_some(), "{report}");
    let children = top["children"].as_array().unwrap();
    let names: Vec<&str> = children
        .iter()
        .map(|c| c["pass"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["FoldConstant", "InferType"], "{report}");
    assert!(
        children[1]["skipped"].as_str().is_some(),
        "InferType after FoldConstant (which keeps the module typed) is skipped: {report}"
    );
}

#[test]
fn print_ir_headers_show_nesting_and_skips() {
    let input = file("print_ir.relay", DROPOUT);
    let run = relay(&[
        "opt",
        input.to_str().unwrap(),
        "-p",
        "SimplifyInference",
        "--print-ir-after-all",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let headers: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("// "))
        .collect();
    assert!(
        headers.contains(&"// IR after SimplifyInference > InferType"),
        "{headers:?}"
    );
    assert!(
        headers.contains(&"// IR after SimplifyInference"),
        "{headers:?}"
    );
    let skipped = relay(&[
        "opt",
        input.to_str().unwrap(),
        "-p",
        "InferType",
        "--print-ir-after-all",
    ]);
    assert!(
        skipped.stderr.starts_with(
            "// InferType was skipped (the module is already TypeChecked and has not changed since); the IR is unchanged"
        ),
        "{}",
        skipped.stderr
    );
}
