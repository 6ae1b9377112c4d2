//! `relay.toml` as a user meets it, through the built binary: found from a
//! relative path in a subfolder, external passes run in the project's
//! directory with the PassContext in their environment, the file's
//! `opt_level` kept unless `--opt-level` is given, named pipelines inside
//! lists, errors in an external pass's output pointing into that output
//! (once), reproducers that keep the context, and `--no-external`.

use relay_test_support::run::{run, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_relay");

/// `add(1f, 2f)` folds to `3f` when FoldConstant runs.
const MODULE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
"#;

fn relay_in(dir: &Path, args: &[&str]) -> Run {
    run(Path::new(BIN), args, "", Some(dir))
}

fn project(name: &str, toml: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_project")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("relay.toml"), toml).unwrap();
    std::fs::write(dir.join("sub/model.relay"), MODULE).unwrap();
    dir
}

/// An external pass that records its environment in `env.txt` (in the
/// directory it runs in) and gives its input back unchanged.
const RECORDING_PASS: &str = r#"
[passes.Record]
command = ["sh", "-c", "printf '%s|%s|%s|%s' \"$RELAY_PASS\" \"$RELAY_OPT_LEVEL\" \"$RELAY_TARGET\" \"$RELAY_CONFIG\" > env.txt; cat"]
"#;

#[test]
fn a_relative_path_from_a_subfolder_finds_the_project() {
    let dir = project(
        "relative",
        "opt_level = 3\n[pipelines]\ncleanup = \"FoldConstant, DeadCodeElimination\"\n",
    );
    let run = relay_in(&dir.join("sub"), &["opt", "model.relay", "-p", "cleanup"]);
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(run.stdout.contains("3f"), "not folded:\n{}", run.stdout);
}

#[test]
fn external_passes_run_in_the_project_directory_with_the_context() {
    let dir = project("context", &format!("opt_level = 3\n{RECORDING_PASS}"));
    // From the project's root, with a path relative to it.
    let run = relay_in(
        &dir,
        &[
            "opt",
            "sub/model.relay",
            "-p",
            "Record",
            "--target",
            "llvm",
            "--config",
            "relay.FuseOps.max_depth=16",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let env = std::fs::read_to_string(dir.join("env.txt")).expect("the pass ran in the project");
    assert_eq!(env, r#"Record|3|llvm|{"relay.FuseOps.max_depth":16}"#);
}

#[test]
fn opt_level_of_relay_toml_holds_unless_the_flag_is_given() {
    let dir = project("opt_level", &format!("opt_level = 0\n{RECORDING_PASS}"));
    let file = "sub/model.relay";
    // FoldConstant has opt_level 2: in a list, opt_level 0 skips it.
    let run = relay_in(&dir, &["opt", file, "-p", "Record, FoldConstant"]);
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(run.stdout.contains("add(1f, 2f)"), "{}", run.stdout);
    let env = std::fs::read_to_string(dir.join("env.txt")).unwrap();
    assert!(env.starts_with("Record|0|"), "{env}");
    let run = relay_in(
        &dir,
        &[
            "opt",
            file,
            "-p",
            "Record, FoldConstant",
            "--opt-level",
            "2",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(run.stdout.contains("3f"), "{}", run.stdout);
    let env = std::fs::read_to_string(dir.join("env.txt")).unwrap();
    assert!(env.starts_with("Record|2|"), "{env}");
}

#[test]
fn a_named_pipeline_stands_inside_a_list() {
    let dir = project(
        "named",
        &format!("[pipelines]\ncleanup = \"FoldConstant, DeadCodeElimination\"\n{RECORDING_PASS}"),
    );
    let run = relay_in(&dir, &["opt", "sub/model.relay", "-p", "Record, cleanup"]);
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(run.stdout.contains("3f"), "{}", run.stdout);
    assert!(dir.join("env.txt").exists());
    // `relay check --pipeline` reads pipelines the same way.
    let run = relay_in(
        &dir,
        &["check", "sub/model.relay", "--pipeline", "Record, cleanup"],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
}

#[test]
fn errors_in_an_external_pass_output_point_into_that_output_once() {
    // Writes a module whose second line uses an undeclared `%y`.
    let dir = project(
        "bad_output",
        r##"[passes.Garble]
command = ['sh', '-c', 'cat > /dev/null; printf "#[version = \"0.0.5\"]\ndef @main() { %%y }\n"']
"##,
    );
    let run = relay_in(&dir, &["opt", "sub/model.relay", "-p", "Garble"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("<output of Garble>:2:"),
        "the error does not point into the output:\n{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("model.relay:"),
        "the error points into the input:\n{}",
        run.stderr
    );
    assert_eq!(
        run.stderr
            .matches("external pass Garble wrote a module that does not read back")
            .count(),
        1,
        "{}",
        run.stderr
    );
}

#[test]
fn a_reproducer_keeps_the_context() {
    let dir = project(
        "reproducer",
        "[passes.Fail]\ncommand = [\"sh\", \"-c\", \"cat > /dev/null; echo broken >&2; exit 3\"]\n",
    );
    let repro = dir.join("repro");
    let run = relay_in(
        &dir,
        &[
            "opt",
            "sub/model.relay",
            "-p",
            "InferType, Fail",
            "--opt-level",
            "3",
            "--target",
            "llvm",
            "--config",
            "relay.FuseOps.max_depth=16",
            "--reproducer",
            repro.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), 1, "{}", run.stderr);
    let args = std::fs::read_to_string(repro.join("pipeline.txt")).unwrap();
    assert_eq!(
        args.trim_end(),
        "-p 'Fail' --opt-level 3 --target 'llvm' --config 'relay.FuseOps.max_depth=16'"
    );
    // The command the note prints fails the same way.
    let note = run
        .stderr
        .lines()
        .find_map(|l| l.split_once(": eval ").map(|(_, c)| c.to_string()))
        .unwrap_or_else(|| panic!("no reproducer note:\n{}", run.stderr));
    let command = note.trim_matches('"').replacen("relay", BIN, 1);
    let again = Command::new("sh")
        .arg("-c")
        .arg(format!("eval \"{command}\""))
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("external pass Fail failed"), "{stderr}");
}

#[test]
fn no_external_skips_the_commands_with_a_warning() {
    let dir = project("no_external", RECORDING_PASS);
    let run = relay_in(
        &dir,
        &["opt", "sub/model.relay", "-p", "Record", "--no-external"],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(!dir.join("env.txt").exists(), "the command ran");
    assert!(
        run.stderr
            .contains("external pass Record was not run (--no-external)"),
        "{}",
        run.stderr
    );
}
