//! `relay graph` through the binary: formats by flag and by extension, the
//! diff summary on stderr, a missing function named with the ones there are.

use std::path::PathBuf;
use std::process::Command;

const SRC: &str = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32] {
  %0 = add(%x, 1f);
  %1 = exp(%0);
  nn.relu(%1)
}
";

fn relay(args: &[&str], dir: &PathBuf) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the relay binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relay-cli-graph-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.relay"), SRC).unwrap();
    dir
}

#[test]
fn formats_by_flag_and_by_output_extension() {
    let dir = workdir("formats");
    let (code, svg, _) = relay(&["graph", "m.relay"], &dir);
    assert_eq!(code, Some(0));
    assert!(
        svg.starts_with("<svg") && svg.contains(">nn.relu<"),
        "{svg}"
    );
    let (code, dot, _) = relay(&["graph", "m.relay", "--format", "dot"], &dir);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("graph_dot", dot);
    let (code, _, _) = relay(&["graph", "m.relay", "-o", "out.json"], &dir);
    assert_eq!(code, Some(0));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(json["counts"]["opCalls"], 3);
    let (code, _, _) = relay(&["graph", "m.relay", "-o", "out.html"], &dir);
    assert_eq!(code, Some(0));
    let html = std::fs::read_to_string(dir.join("out.html")).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains("<svg") && html.contains("<script>")
    );
}

#[test]
fn diff_prints_the_summary_and_marks_nothing_for_fusion() {
    let dir = workdir("diff");
    let (code, out, err) = relay(
        &[
            "graph", "m.relay", "-p", "FuseOps", "--diff", "--format", "json",
        ],
        &dir,
    );
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("graph_diff_stderr", err);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Fusion moves calls into a function: nothing is added, removed or rewritten.
    assert_eq!(json["stats"]["added"], 0);
    assert_eq!(json["stats"]["removed"], 0);
    assert_eq!(json["stats"]["rewritten"], 0);
    assert_eq!(json["after"]["clusters"][0]["kind"], "primitive");
}

#[test]
fn a_missing_function_and_a_bad_pipeline_are_usage_errors() {
    let dir = workdir("errors");
    let (code, _, err) = relay(&["graph", "m.relay", "--function", "nope"], &dir);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "error: the module has no function `@nope` (it has: @main)\n"
    );
    let (code, _, err) = relay(&["graph", "m.relay", "-p", "FuseOpz"], &dir);
    assert_eq!(code, Some(2));
    assert!(err.contains("FuseOpz"), "{err}");
    let (code, _, err) = relay(&["graph", "m.relay", "--diff"], &dir);
    assert_eq!(code, Some(2), "{err}");
}
