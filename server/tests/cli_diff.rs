//! `relay diff` end to end, through the built binary, on the small
//! hand-written modules in `tests/diff_inputs`: equal inputs (another
//! layout, renamed bound variables), each kind of first difference as
//! rendered (snapshots), and inputs with errors.

use std::path::PathBuf;
use std::process::Command;

/// What one run printed.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `relay diff ARGS…` in the inputs directory, so file names in the
/// output are the short relative ones.
fn diff(args: &[&str]) -> Run {
    let inputs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/diff_inputs");
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .arg("diff")
        .args(args)
        .current_dir(inputs)
        .output()
        .expect("the relay binary runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The report of two inputs that differ (exit 1, nothing on stderr).
fn difference(args: &[&str]) -> String {
    let run = diff(args);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    run.stdout
}

fn assert_equal(args: &[&str]) {
    let run = diff(args);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout, "equal\n");
}

#[test]
fn the_same_module_in_another_layout_is_equal() {
    assert_equal(&["base.relay", "base.relay"]);
    // Different line breaks and nesting, a comment, an attribute left at
    // its default, the functions in another order.
    assert_equal(&["base.relay", "reformatted.relay"]);
}

#[test]
fn renamed_bound_variables_are_equal() {
    assert_equal(&["base.relay", "renamed.relay"]);
    assert_equal(&["renamed.relay", "base.relay"]);
}

#[test]
fn a_different_operator() {
    insta::assert_snapshot!("op", difference(&["base.relay", "dense.relay"]));
}

#[test]
fn a_different_attribute() {
    insta::assert_snapshot!("attribute", difference(&["base.relay", "strides.relay"]));
}

#[test]
fn a_different_metadata_constant() {
    insta::assert_snapshot!(
        "constant",
        difference(&["constants_a.relay", "constants_b.relay"])
    );
    assert_equal(&["constants_a.relay", "constants_a.relay"]);
}

#[test]
fn a_different_type_annotation() {
    insta::assert_snapshot!(
        "annotation",
        difference(&["base.relay", "annotation.relay"])
    );
}

#[test]
fn swapped_arguments() {
    insta::assert_snapshot!("swapped", difference(&["base.relay", "swapped.relay"]));
}

#[test]
fn a_missing_function() {
    insta::assert_snapshot!("missing_in_b", difference(&["base.relay", "missing.relay"]));
    insta::assert_snapshot!("missing_in_a", difference(&["missing.relay", "base.relay"]));
}

#[test]
fn free_variables_match_by_name_only_when_asked() {
    insta::assert_snapshot!(
        "free_vars",
        difference(&["--expr", "free_a.relay", "free_b.relay"])
    );
    assert_equal(&[
        "--expr",
        "--free-vars-by-name",
        "free_a.relay",
        "free_b.relay",
    ]);
}

#[test]
fn inputs_with_errors_exit_2() {
    let run = diff(&["base.relay", "bad.relay"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    insta::assert_snapshot!("input_error", run.stderr);

    let run = diff(&["base.relay", "no-such-file.relay"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("cannot read no-such-file.relay"),
        "{}",
        run.stderr
    );

    // A module read as an expression does not parse.
    let run = diff(&["--expr", "base.relay", "base.relay"]);
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    assert!(run.stderr.contains("error"), "{}", run.stderr);
}
