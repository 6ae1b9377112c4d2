//! Patterns in `relay.toml`, through the built binary: a composite table
//! used by `MergeComposite(pattern_table=…)`, a pass made of rewrite rules,
//! named patterns, and errors with carets for
//! a pattern that does not parse (in `relay.toml` and in a pipeline).

use relay_test_support::run::{run, Run};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_relay");

const MODULE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), float32]) {
  %0 = nn.relu(add(%x, %y));
  negative(negative(%0))
}
"#;

const PROJECT: &str = r#"
[patterns]
add_any = "add(*, *)"

[[composite.test]]
name = "test.add_relu"
pattern = "@add_any |> nn.relu(_)"
check = "nn.relu(add(*, *)).has_dtype(\"float32\")"

[rewrite.FoldDoubleNegative]
rules = ["negative(negative($x)) => $x"]
opt_level = 1
description = "negative(negative(x)) is x"
"#;

fn project(name: &str, toml: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_patterns")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("relay.toml"), toml).unwrap();
    std::fs::write(dir.join("model.relay"), MODULE).unwrap();
    dir
}

fn relay_in(dir: &Path, args: &[&str]) -> Run {
    run(Path::new(BIN), args, "", Some(dir))
}

#[test]
fn a_composite_table_and_a_rule_pass_from_relay_toml() {
    let dir = project("table", PROJECT);
    let run = relay_in(
        &dir,
        &[
            "opt",
            "model.relay",
            "-p",
            "InferType, FoldDoubleNegative, MergeComposite(pattern_table=\"test\")",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("table_and_rule", run.stdout);
    // FoldDoubleNegative ran: no `negative` is left.
    assert!(!run.stdout.contains("negative"), "{}", run.stdout);
}

#[test]
fn a_pattern_that_does_not_parse_in_relay_toml() {
    let dir = project(
        "bad",
        "[[composite.test]]\nname = \"test.relu\"\npattern = \"nn.conv2d(*, *) |> nn.relu(*)\"\n",
    );
    let run = relay_in(&dir, &["opt", "model.relay", "-p", "InferType"]);
    assert_ne!(run.code(), 0);
    insta::assert_snapshot!(
        "bad_table_pattern",
        run.stderr.replace(&dir.display().to_string(), "<dir>")
    );
}

#[test]
fn a_pattern_that_does_not_parse_in_a_pipeline_and_an_unknown_table() {
    let dir = project("pipeline", "");
    let bad = relay_in(
        &dir,
        &[
            "opt",
            "model.relay",
            "-p",
            "MergeComposite(patterns={\"r\": \"nn.relu(_)\"})",
        ],
    );
    assert_ne!(bad.code(), 0);
    let unknown = relay_in(
        &dir,
        &[
            "opt",
            "model.relay",
            "-p",
            "MergeComposite(pattern_table=\"nope\")",
        ],
    );
    assert_ne!(unknown.code(), 0);
    insta::assert_snapshot!(
        "pipeline_errors",
        format!("{}\n---\n{}", bad.stderr, unknown.stderr)
            .replace(&dir.display().to_string(), "<dir>")
    );
}
