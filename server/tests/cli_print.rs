//! `relay print` end to end, through the built binary (`relay fmt`: cli_fmt.rs).

use std::path::PathBuf;
use std::process::Command;

fn relay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_relay"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relay-cli-print-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const MESSY: &str = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) { add(%x,   %x) /* ty=Tensor[(2), float32] */ }\n";
const CANONICAL: &str =
    "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, %x)\n}\n";

#[test]
fn print_writes_the_canonical_form() {
    let dir = scratch("print");
    let file = dir.join("m.relay");
    std::fs::write(&file, MESSY).unwrap();
    let out = relay().arg("print").arg(&file).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), CANONICAL);

    let expr = dir.join("e.relay");
    std::fs::write(&expr, "#[version = \"0.0.5\"]\nlet %a = 1; (%a, %a)").unwrap();
    let out = relay()
        .args(["print", "--expr"])
        .arg(&expr)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "#[version = \"0.0.5\"]\nlet %a = 1;\n(%a, %a)\n"
    );
}

#[test]
fn print_without_metadata() {
    let file =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../passes/test_data/print/meta.relay");
    let out = relay().arg("print").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.contains("meta[relay.Constant][1])\n}\n\n#[metadata]\n{"),
        "{text}"
    );
    let out = relay()
        .args(["print", "--show-meta-data=false"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.contains("meta[relay.Constant][1])\n}\n\n/* For debugging purposes"),
        "{text}"
    );
    assert!(!text.contains("#[metadata]"), "{text}");
}

#[test]
fn print_reports_errors() {
    let dir = scratch("errors");
    let file = dir.join("bad.relay");
    std::fs::write(&file, "#[version = \"0.0.5\"]\ndef @main() { %y }\n").unwrap();
    let out = relay().arg("print").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("error"));
    let out = relay()
        .arg("print")
        .arg(dir.join("missing.relay"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A `match` bound by a `let`: `relay print` and `relay opt` write TVM's
/// `astext()`, which leaves it bare (`let %y = match …`, text neither TVM's
/// parser nor ours reads); the editor's edits parenthesise it
/// (`lsp_pass_edits::a_normal_form_of_a_match_reads_back`).
#[test]
fn a_let_bound_match_prints_bare_as_tvm_prints_it() {
    let dir = scratch("let-match");
    let file = dir.join("m.relay");
    std::fs::write(
        &file,
        "#[version = \"0.0.5\"]\ntype T { A, B }\n\
         def @main(%x: T) -> int32 {\n  let %y = (match (%x) {\n    A => 1,\n    B => 2,\n  });\n  %y\n}\n",
    )
    .unwrap();
    for args in [vec!["print"], vec!["opt", "-p", "InferType"]] {
        let out = relay().args(&args).arg(&file).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(" = match (%x) {"), "{args:?}: {text}");
        assert!(!text.contains("(match"), "{args:?}: {text}");
    }
}
