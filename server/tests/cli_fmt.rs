//! `relay fmt` through the built binary, as users and editors start it:
//! files rewritten in place, `-` as a filter, `--check`, `--diff`,
//! directories, `--width` and `relay.toml`'s `[format] width`, refusals.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn relay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_relay"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relay-cli-fmt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str], dir: &Path) -> Output {
    relay().args(args).current_dir(dir).output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Formats `input` through `relay fmt -` (stdin to stdout).
fn filter(args: &[&str], input: &str, dir: &Path) -> Output {
    let mut child = relay()
        .arg("fmt")
        .args(args)
        .arg("-")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A usage error ends the process before it reads its input: a write
    // into the closed pipe is then expected, not a failure.
    if let Err(error) = child.stdin.take().unwrap().write_all(input.as_bytes()) {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    child.wait_with_output().unwrap()
}

const MESSY: &str = "#[version = \"0.0.5\"]\n// the entry point\ndef @main(%x: Tensor[(2), float32]) { add(%x,   %x) /* ty=Tensor[(2), float32] */ // sum\n}\n";
const FORMATTED: &str = "#[version = \"0.0.5\"]\n// the entry point\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, %x) /* ty=Tensor[(2), float32] */ // sum\n}\n";

#[test]
fn files_are_rewritten_in_place_keeping_comments() {
    let dir = scratch("in-place");
    std::fs::write(dir.join("m.relay"), MESSY).unwrap();
    let out = run(&["fmt", "m.relay"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("m.relay")).unwrap(),
        FORMATTED
    );
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).contains("1 file reformatted, 0 files already formatted"),
        "{}",
        stderr(&out)
    );
    // Formatting again changes nothing.
    let out = run(&["fmt", "--check", "m.relay"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn dash_filters_standard_input_to_standard_output() {
    let dir = scratch("stdin");
    let out = filter(&[], MESSY, &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), FORMATTED);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    // Already formatted text comes back unchanged.
    let out = filter(&[], FORMATTED, &dir);
    assert_eq!(stdout(&out), FORMATTED);
    // `--expr` reads one expression.
    let out = filter(
        &["--expr"],
        "#[version = \"0.0.5\"]\nlet %a = 1; // one\n(%a,%a)",
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "#[version = \"0.0.5\"]\nlet %a = 1; // one\n(%a, %a)\n"
    );
    // A syntax error: nothing on stdout, the error with its place on stderr.
    let out = filter(
        &[],
        "#[version = \"0.0.5\"]\ndef @main() { add(1, }\n",
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    assert!(stderr(&out).contains("<stdin>:2:"), "{}", stderr(&out));
    assert!(stderr(&out).contains("not formatted"), "{}", stderr(&out));
}

#[test]
fn check_lists_the_files_that_would_change() {
    let dir = scratch("check");
    std::fs::write(dir.join("messy.relay"), MESSY).unwrap();
    std::fs::write(dir.join("tidy.relay"), FORMATTED).unwrap();
    let out = run(&["fmt", "--check", "messy.relay", "tidy.relay"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "would reformat messy.relay\n");
    assert!(stderr(&out).contains("1 file would be reformatted, 1 file already formatted"));
    assert_eq!(
        std::fs::read_to_string(dir.join("messy.relay")).unwrap(),
        MESSY,
        "--check must not write"
    );
    let out = run(&["fmt", "--check", "tidy.relay"], &dir);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).is_empty());
}

#[test]
fn diff_prints_a_unified_diff() {
    let dir = scratch("diff");
    std::fs::write(dir.join("messy.relay"), MESSY).unwrap();
    let out = run(&["fmt", "--diff", "messy.relay"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let diff = stdout(&out);
    assert!(
        diff.starts_with("--- messy.relay\n+++ messy.relay\n@@"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-def @main(%x: Tensor[(2), float32]) { add(%x,   %x)"),
        "{diff}"
    );
    assert!(
        diff.contains("\n+  add(%x, %x) /* ty=Tensor[(2), float32] */ // sum\n"),
        "{diff}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("messy.relay")).unwrap(),
        MESSY,
        "--diff must not write"
    );
    std::fs::write(dir.join("messy.relay"), FORMATTED).unwrap();
    let out = run(&["fmt", "--diff", "messy.relay"], &dir);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).is_empty());
}

#[test]
fn directories_stand_for_their_relay_files() {
    let dir = scratch("dirs");
    std::fs::create_dir_all(dir.join("models/deep")).unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join("models/a.relay"), MESSY).unwrap();
    std::fs::write(dir.join("models/deep/b.relay"), MESSY).unwrap();
    std::fs::write(dir.join("models/deep/notes.txt"), "not relay").unwrap();
    std::fs::write(dir.join(".git/c.relay"), MESSY).unwrap();
    let out = run(&["fmt", "--check", "."], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "would reformat ./models/a.relay\nwould reformat ./models/deep/b.relay\n"
    );
    let out = run(&["fmt", "models"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("2 files reformatted"),
        "{}",
        stderr(&out)
    );
    for file in ["models/a.relay", "models/deep/b.relay"] {
        assert_eq!(std::fs::read_to_string(dir.join(file)).unwrap(), FORMATTED);
    }
    assert_eq!(
        std::fs::read_to_string(dir.join(".git/c.relay")).unwrap(),
        MESSY
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("models/deep/notes.txt")).unwrap(),
        "not relay"
    );
    // `relay check` expands directories the same way.
    let out = run(&["check", "models"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::write(
        dir.join("models/deep/bad.relay"),
        "#[version = \"0.0.5\"]\ndef @main() { %y }\n",
    )
    .unwrap();
    let out = run(&["check", "models"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad.relay"), "{}", stderr(&out));
    // A path that names nothing is a usage error.
    let out = run(&["fmt", "missing.relay"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.relay"), "{}", stderr(&out));
}

const LONG: &str = "#[version = \"0.0.5\"]\ndef @main(%input_tensor: float32, %other_tensor: float32) {\n  add(%input_tensor, %other_tensor)\n}\n";
const BROKEN_AT_40: &str = "#[version = \"0.0.5\"]\ndef @main(\n  %input_tensor: float32,\n  %other_tensor: float32\n) {\n  add(%input_tensor, %other_tensor)\n}\n";

#[test]
fn the_width_comes_from_the_flag_or_relay_toml() {
    let dir = scratch("width");
    let out = filter(&["--width", "40"], LONG, &dir);
    assert_eq!(stdout(&out), BROKEN_AT_40, "{}", stderr(&out));
    let out = filter(&[], LONG, &dir);
    assert_eq!(stdout(&out), LONG);
    std::fs::create_dir_all(dir.join("project/src")).unwrap();
    std::fs::write(dir.join("project/relay.toml"), "[format]\nwidth = 40\n").unwrap();
    std::fs::write(dir.join("project/src/m.relay"), LONG).unwrap();
    let out = run(&["fmt", "project/src/m.relay"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("project/src/m.relay")).unwrap(),
        BROKEN_AT_40
    );
    // The flag wins over relay.toml.
    let out = run(&["fmt", "--width", "100", "project/src/m.relay"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("project/src/m.relay")).unwrap(),
        LONG
    );
    // A bad width is a usage error.
    let out = filter(&["--width", "0"], LONG, &dir);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn files_with_errors_are_left_unchanged() {
    let dir = scratch("errors");
    let bad = "#[version = \"0.0.5\"]\ndef @main() { add(1, // unclosed\n}\n";
    std::fs::write(dir.join("bad.relay"), bad).unwrap();
    std::fs::write(dir.join("good.relay"), MESSY).unwrap();
    let out = run(&["fmt", "bad.relay", "good.relay"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(dir.join("bad.relay")).unwrap(), bad);
    assert_eq!(
        std::fs::read_to_string(dir.join("good.relay")).unwrap(),
        FORMATTED
    );
    let err = stderr(&out);
    assert!(err.contains("bad.relay:3:1"), "{err}");
    assert!(
        err.contains(
            "1 file reformatted, 0 files already formatted, 1 file not formatted (errors)"
        ),
        "{err}"
    );
}

#[test]
fn the_example_is_formatted() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tiny_cnn.relay");
    let out = relay()
        .args(["fmt", "--check"])
        .arg(&example)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(std::fs::read_to_string(&example)
        .unwrap()
        .contains("// A small image classifier"));
}

#[test]
fn help_documents_the_conventions() {
    let out = relay().args(["fmt", "--help"]).output().unwrap();
    let help = stdout(&out);
    for needle in [
        "--check",
        "--diff",
        "--width",
        "standard input",
        "relay.toml",
        "FILE|DIR|-",
    ] {
        assert!(
            help.contains(needle),
            "`relay fmt --help` lacks {needle}:\n{help}"
        );
    }
}
