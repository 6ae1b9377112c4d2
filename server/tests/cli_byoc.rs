//! The BYOC example (`examples/byoc/`) through the built binary: the
//! commands its `relay.toml` documents, run in that directory, partition the
//! example models for DNNL and CMSIS-NN (snapshots of the partitioned
//! modules); DNNL's operator checks (no int64, no `ceil_mode` pooling) as
//! AnnotateTarget applies them; and the errors of a bad `[targets.…]`.

use relay_test_support::run::{run, Run};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_relay");

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/byoc")
}

fn relay_in(dir: &Path, args: &[&str]) -> Run {
    run(Path::new(BIN), args, "", Some(dir))
}

/// The `relay …` commands of the comment at the top of the example's
/// `relay.toml`, without the comment after each.
fn documented_commands() -> Vec<Vec<String>> {
    let toml = std::fs::read_to_string(example_dir().join("relay.toml")).unwrap();
    toml.lines()
        .take_while(|line| line.starts_with('#'))
        .filter_map(|line| line.trim_start_matches('#').trim().strip_prefix("relay "))
        .map(|command| {
            let command = command.split('#').next().unwrap_or_default();
            command.split_whitespace().map(str::to_string).collect()
        })
        .collect()
}

#[test]
fn the_documented_commands_partition_the_examples() {
    let commands = documented_commands();
    assert_eq!(
        commands.len(),
        2,
        "the example documents the DNNL and the CMSIS-NN flow: {commands:?}"
    );
    for command in commands {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let run = relay_in(&example_dir(), &args);
        assert_eq!(run.code(), 0, "relay {}: {}", command.join(" "), run.stderr);
        assert!(
            run.stdout.contains("Compiler="),
            "relay {} offloads nothing:\n{}",
            command.join(" "),
            run.stdout
        );
        let name = command[1].trim_end_matches(".relay").to_string();
        insta::assert_snapshot!(format!("byoc_{name}"), run.stdout);
    }
}

#[test]
fn dnnl_refuses_int64_and_ceil_mode_pooling() {
    // The example's [targets.dnnl] as AnnotateTarget sees it: the float32
    // add and the floor-mode pooling go to dnnl, the int64 add and the
    // ceil-mode pooling stay `default`.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_byoc_checks");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(example_dir().join("relay.toml"), dir.join("relay.toml")).unwrap();
    std::fs::write(
        dir.join("ops.relay"),
        r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 1, 5, 5), float32], %i: Tensor[(4), int64]) {
  %0 = add(%x, %x);
  %1 = nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2]);
  %2 = nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2], ceil_mode=True);
  %3 = add(%i, %i);
  (%1, %2, %3)
}
"#,
    )
    .unwrap();
    let run = relay_in(
        &dir,
        &[
            "opt",
            "ops.relay",
            "-p",
            "AnnotateTarget(targets=[\"dnnl\"])",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("byoc_dnnl_checks", run.stdout);
}

#[test]
fn a_bad_target_declaration_is_an_error() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_byoc_bad");
    let cases = [
        ("unknown_op", "[targets.t]\nops = [\"nn.not_an_op\"]\n"),
        (
            "bad_check",
            "[targets.t]\nops = [{ op = \"nn.relu\", check = \"nn.relu(*\" }]\n",
        ),
        ("twice", "[targets.t]\nops = [\"nn.relu\", \"nn.relu\"]\n"),
    ];
    for (name, toml) in cases {
        let case = dir.join(name);
        let _ = std::fs::remove_dir_all(&case);
        std::fs::create_dir_all(&case).unwrap();
        std::fs::write(case.join("relay.toml"), toml).unwrap();
        std::fs::write(
            case.join("m.relay"),
            "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) { nn.relu(%x) }\n",
        )
        .unwrap();
        let run = relay_in(&case, &["opt", "m.relay", "-p", "InferType"]);
        assert_ne!(run.code(), 0, "{name}: {}", run.stdout);
        // The project's path differs from one target directory to another.
        let stderr = run.stderr.replace(&case.display().to_string(), "<project>");
        insta::assert_snapshot!(format!("byoc_error_{name}"), stderr);
    }
}
