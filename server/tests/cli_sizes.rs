//! Sizes from user text never become allocations, and type relations never
//! index past a shape: `relay check` and `relay opt` through the built
//! binary, under a 4 GB address-space limit (`ulimit -v`), on modules whose
//! shapes, axes and attribute lists ask for impossible sizes. Each case
//! says how the command must end (exit code) and what it must print.

use std::path::PathBuf;
use std::process::Command;

/// One run of the binary on one module.
struct Case {
    name: &'static str,
    module: &'static str,
    /// The arguments after the file name (`check` puts none).
    command: &'static [&'static str],
    exit_code: i32,
    /// Text the output (stdout and stderr together) must contain.
    expect: &'static [&'static str],
    /// Text it must not contain.
    reject: &'static [&'static str],
}

const FOLDING_PIPELINES: &[&str] = &[
    "FoldConstant",
    "DynamicToStatic",
    "FoldScaleAxis",
    "InferType, FoldConstant, EliminateCommonSubexpr, DeadCodeElimination",
    "SimplifyExpr, FoldConstant",
];

const CASES: &[Case] = &[
    Case {
        name: "global_pool_rank2",
        module: "def @main(%a: Tensor[(3, 7), float32]) { nn.global_max_pool2d(%a) }",
        command: &["check"],
        exit_code: 1,
        expect: &["IndexError: indexing 2 on an array of size 2"],
        reject: &["panicked"],
    },
    Case {
        name: "adaptive_pool_rank2",
        module: "def @main(%a: Tensor[(6, 5), float32]) { nn.adaptive_max_pool2d(%a) }",
        command: &["check"],
        exit_code: 1,
        expect: &["IndexError: indexing 2 on an array of size 2"],
        reject: &["panicked"],
    },
    Case {
        name: "adaptive_pool_rank2_output_size",
        module: "def @main(%a: Tensor[(6, 5), float32]) { nn.adaptive_avg_pool2d(%a, output_size=[3]) }",
        command: &["check"],
        exit_code: 1,
        expect: &["IndexError: indexing 2 on an array of size 2"],
        reject: &["panicked"],
    },
    Case {
        name: "avg_pool_rank2",
        module: "def @main(%a: Tensor[(4, 4), float32]) { nn.avg_pool2d(%a, pool_size=[2, 2]) }",
        command: &["check"],
        exit_code: 1,
        expect: &["IndexError: indexing 2 on an array of size 2"],
        reject: &["panicked"],
    },
    Case {
        name: "adaptive_pool3d_short_output_size",
        module: "def @main(%a: Tensor[(1, 2, 6, 6, 6), float32]) { nn.adaptive_avg_pool3d(%a, output_size=[3, 3]) }",
        command: &["check"],
        exit_code: 1,
        expect: &["IndexError: indexing 2 on an array of size 2"],
        reject: &["panicked"],
    },
    Case {
        name: "expand_dims_billions_of_axes",
        module: "def @main(%a: Tensor[(3, 4), float32]) { expand_dims(%a, axis=1, num_newaxis=5000000000) }",
        command: &["check"],
        exit_code: 1,
        expect: &["dimensions a tensor type can have"],
        reject: &["panicked", "memory allocation"],
    },
    Case {
        name: "dynamic_reshape_rank_from_a_shape",
        module: "def @main(%a: Tensor[(3, 4), float32], %s: Tensor[(70000000000), int64]) { dyn.reshape(%a, %s, newshape=[12]) }",
        command: &["check"],
        exit_code: 1,
        expect: &["dimensions a tensor type can have"],
        reject: &["panicked", "memory allocation"],
    },
    Case {
        name: "shape_beyond_any_memory",
        module: "def @main() { zeros(shape=[70000000000, 70000000000, 70000000000], dtype=\"int8\") }",
        command: &["check"],
        exit_code: 1,
        expect: &["more elements than a tensor can hold"],
        reject: &["panicked", "capacity overflow"],
    },
];

fn relay() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_relay"))
}

/// Runs `relay FILE-ARGS` in a shell with the address space limited to
/// about 4 GB: an allocation sized by the text fails there at once instead
/// of filling the machine's memory.
fn run_limited(file: &PathBuf, command: &[&str]) -> (Option<i32>, String) {
    let (sub, rest) = command.split_first().expect("a subcommand");
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000; exec \"$@\"")
        .arg("sh")
        .arg(relay())
        .arg(sub)
        .arg(file)
        .args(rest)
        .output()
        .expect("run relay");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relay-cli-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}.relay"))
}

fn check_case(case: &Case) {
    let file = scratch(case.name);
    std::fs::write(&file, format!("#[version = \"0.0.5\"]\n{}\n", case.module)).unwrap();
    let (code, text) = run_limited(&file, case.command);
    assert_eq!(
        code,
        Some(case.exit_code),
        "{}: `relay {}` ended with {code:?}:\n{text}",
        case.name,
        case.command.join(" ")
    );
    for needle in case.expect {
        assert!(
            text.contains(needle),
            "{}: no `{needle}` in:\n{text}",
            case.name
        );
    }
    for needle in case.reject {
        assert!(
            !text.contains(needle),
            "{}: `{needle}` in:\n{text}",
            case.name
        );
    }
}

#[test]
fn impossible_sizes_are_type_errors() {
    for case in CASES {
        check_case(case);
    }
}

/// A call whose result would be 70 billion elements is left as it is by
/// every pipeline that folds constants; a small one next to it is folded.
#[test]
fn folding_leaves_huge_results_alone() {
    let module = "#[version = \"0.0.5\"]\n\
        def @main(%a: Tensor[(2), float32]) {\n  \
          %0 = full(2f, shape=[70000000000], dtype=\"float32\");\n  \
          %1 = add(1f, 2f);\n  \
          (%0, multiply(%a, %1))\n}\n";
    let file = scratch("huge_full");
    std::fs::write(&file, module).unwrap();
    for pipeline in FOLDING_PIPELINES {
        let (code, text) = run_limited(&file, &["opt", "-p", pipeline]);
        assert_eq!(code, Some(0), "{pipeline}:\n{text}");
        assert!(
            text.contains("full(2f /* ty=float32 */, shape=[70000000000i64]"),
            "{pipeline}: the huge call is gone:\n{text}"
        );
        assert!(!text.contains("memory allocation"), "{pipeline}:\n{text}");
    }
    // The small call is folded where FoldConstant runs.
    let (_, text) = run_limited(&file, &["opt", "-p", "FoldConstant"]);
    assert!(!text.contains("add(1f, 2f)"), "{text}");
}

/// `relay.fold_constant.max_elements` moves the limit both ways.
#[test]
fn the_fold_limit_is_configurable() {
    let module = "#[version = \"0.0.5\"]\ndef @main() { broadcast_to(3f, shape=[4, 4]) }\n";
    let file = scratch("configured_limit");
    std::fs::write(&file, module).unwrap();
    let (code, text) = run_limited(&file, &["opt", "-p", "FoldConstant"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("broadcast_to"), "folded by default:\n{text}");
    let (code, text) = run_limited(
        &file,
        &[
            "opt",
            "-p",
            "FoldConstant",
            "--config",
            "relay.fold_constant.max_elements=8",
        ],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("broadcast_to"),
        "left under a limit of 8:\n{text}"
    );
}
