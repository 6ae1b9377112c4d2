//! `relay opt --check-semantics` and `relay run` as a user meets them,
//! through the built binary: a deliberately wrong external pass (one `add`
//! turned into `subtract`) is caught at that pass with the report and a
//! reproducer that fails the same way; `--bisect` names the function; a
//! correct pipeline passes with its statistics; `relay run` reads and
//! writes `.npy`/`.npz`, prints as TVM prints an NDArray and reports
//! run-time errors with their span; `--semantics-cache` reuses outputs
//! without changing the report; a rounding change an ill-conditioned
//! module amplifies agrees within its sensitivity.

use relay_test_support::run::{run, Run};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_relay");

/// Two functions: `@a`, which the wrong pass rewrites harmlessly
/// (`multiply(%x, 2f)` to `add(%x, %x)`), and `@f`, whose `add` it turns
/// into `subtract`.
const MODULE: &str = r#"#[version = "0.0.5"]
def @a(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  multiply(%x, 2f)
}
def @f(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  add(%x, 1f)
}
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = @a(%x);
  %1 = @f(%0);
  nn.relu(%1)
}
"#;

const WRONG_PASS: &str = r#"
[passes.AddToSubtract]
command = ["sed", "-e", "s/add(/subtract(/", "-e", "s/multiply(%x, 2f)/add(%x, %x)/"]
required = ["InferType"]
"#;

fn project(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_check_semantics")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("relay.toml"), WRONG_PASS).unwrap();
    std::fs::write(dir.join("model.relay"), MODULE).unwrap();
    dir
}

fn relay_in(dir: &Path, args: &[&str]) -> Run {
    run(Path::new(BIN), args, "", Some(dir))
}

#[test]
fn a_wrong_pass_is_caught_with_a_reproducer() {
    let dir = project("wrong");
    let run = relay_in(
        &dir,
        &[
            "opt",
            "model.relay",
            "-p",
            "FoldConstant, AddToSubtract, DeadCodeElimination",
            "--check-semantics=2",
            "--reproducer",
            "repro",
        ],
    );
    assert_eq!(run.code(), 1, "{}", run.stderr);
    let stderr = run.stderr.replace(dir.to_str().unwrap(), "<dir>");
    insta::assert_snapshot!("wrong_pass", stderr);
    for file in [
        "before.relay",
        "pipeline.txt",
        "inputs/x2.npy",
        "output_before.npy",
        "output_after.npy",
    ] {
        assert!(dir.join("repro").join(file).exists(), "{file} is missing");
    }
    let pipeline = std::fs::read_to_string(dir.join("repro/pipeline.txt")).unwrap();
    assert_eq!(
        pipeline,
        "-p 'AddToSubtract' --opt-level 2 --check-semantics=end:1 --check-seed 0\n"
    );
    // The reproducer fails the same way, on the same input.
    let before = dir.join("repro/before.relay");
    let mut args = vec!["opt", before.to_str().unwrap(), "-p", "AddToSubtract"];
    args.extend([
        "--opt-level",
        "2",
        "--check-semantics=end:1",
        "--check-seed",
        "0",
        "--reproducer",
        "repro2",
    ]);
    let again = relay_in(&dir, &args);
    assert_eq!(again.code(), 1, "{}", again.stderr);
    let first_line = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("error:"))
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(first_line(&again.stderr), first_line(&run.stderr));
    // The saved input (named as before.relay names the parameter: the
    // printer numbers the three `%x`) runs through `relay run` to the
    // saved output.
    let out = relay_in(
        &dir,
        &[
            "run",
            before.to_str().unwrap(),
            "--input",
            "x2=repro/inputs/x2.npy",
            "-o",
            "rerun.npy",
        ],
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read(dir.join("rerun.npy")).unwrap(),
        std::fs::read(dir.join("repro/output_before.npy")).unwrap()
    );
}

#[test]
fn bisect_names_the_function_whose_rewrite_changed_the_result() {
    let dir = project("bisect");
    let run = relay_in(
        &dir,
        &[
            "opt",
            "model.relay",
            "-p",
            "AddToSubtract",
            "--check-semantics=1",
            "--bisect",
        ],
    );
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the first function whose rewrite changes it is @f"),
        "{}",
        run.stderr
    );
    // Without --reproducer the reproducer goes to ./relay-check-semantics.
    assert!(dir.join("relay-check-semantics/before.relay").exists());
}

#[test]
fn the_standard_pipeline_keeps_the_result() {
    let dir = project("standard");
    let run = relay_in(
        &dir,
        &[
            "opt", "model.relay", "--opt-level", "3", "-p",
            "SimplifyInference, FoldConstant, FoldScaleAxis, CanonicalizeOps, EliminateCommonSubexpr, DeadCodeElimination, FuseOps(fuse_opt_level=2)",
            "--check-semantics",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("standard_pipeline", run.stderr);
}

/// A small dense network for the passes that change the result by design.
const DENSE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) -> Tensor[(2, 4), float32] {
  %0 = nn.dense(%x, %w, units=4);
  nn.relu(%0)
}
"#;

#[test]
fn passes_that_change_the_result_type_by_design_are_compared_by_their_contract() {
    let dir = project("contract");
    std::fs::write(dir.join("dense.relay"), DENSE).unwrap();
    // ToMixedPrecision returns float16 (as TVM does): compared within
    // float16's tolerance. FirstOrderGradient returns (value, gradients):
    // the value is compared. Both used to be reported as changing the result.
    for pass in ["ToMixedPrecision", "FirstOrderGradient"] {
        let run = relay_in(
            &dir,
            &[
                "opt",
                "dense.relay",
                "-p",
                pass,
                "--opt-level",
                "3",
                "--check-semantics=2",
            ],
        );
        assert_eq!(run.code(), 0, "{pass}: {}", run.stderr);
        // "semantic check: N pass(es) compared, N agree; …" with N ≥ 1.
        let summary = run
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("semantic check: "))
            .unwrap_or_else(|| panic!("{pass}: no summary in {}", run.stderr));
        let numbers: Vec<&str> = summary.split_whitespace().collect();
        assert!(
            numbers[0] != "0" && numbers[3] == numbers[0],
            "{pass}: {}",
            run.stderr
        );
    }
}

/// A result beyond float16's range on the random input (up to ~5·10⁵):
/// ToMixedPrecision's float16 result overflows, as TVM's does (its rewrite
/// of dqn, whose random-input result reaches 2·10⁵, is the same text as
/// ours).
const OVERFLOWING: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) -> Tensor[(2, 4), float32] {
  %0 = nn.dense(%x, %w, units=4);
  multiply(%0, 60000f)
}
"#;

fn check_semantics_of(dir: &Path, file: &str, pipeline: &str) -> Run {
    relay_in(
        dir,
        &[
            "opt",
            file,
            "-p",
            pipeline,
            "--opt-level",
            "3",
            "--check-semantics=1",
            "--reproducer",
            "repro",
        ],
    )
}

#[test]
fn a_float16_overflow_under_to_mixed_precision_agrees_within_range() {
    // A correct pass that changes where the computation overflows: the
    // results differ on the random input (float16 overflows to infinity)
    // and agree on the same input scaled down. Not "agree", not a plain
    // difference: the summary says which, exit 0.
    let dir = project("overflow");
    std::fs::write(dir.join("overflow.relay"), OVERFLOWING).unwrap();
    let run = check_semantics_of(&dir, "overflow.relay", "ToMixedPrecision");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("float16_range_agrees", run.stderr);
    // A constant beyond float16's range (1e5 becomes infinity in float16)
    // overflows on every input: no scale brings the results within range,
    // so it stays a difference, with the reason it may be a range effect.
    std::fs::write(
        dir.join("constant.relay"),
        OVERFLOWING.replace("60000f", "100000f"),
    )
    .unwrap();
    let run = check_semantics_of(&dir, "constant.relay", "ToMixedPrecision");
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("does on the input scaled by 2^-12 too: this may be a range effect"),
        "{}",
        run.stderr
    );
}

/// Overflows float16 inside and maps it back into range: the outputs
/// (booleans as floats) are in range on both sides and still differ.
const OVERFLOWING_INSIDE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) -> Tensor[(2, 4), float32] {
  %0 = nn.dense(%x, %w, units=4);
  %1 = multiply(%0, 60000f);
  cast(isfinite(%1), dtype="float32")
}
"#;

#[test]
fn a_float16_overflow_inside_the_module_is_found_when_the_outputs_are_in_range() {
    // Like a softmax after logits that overflowed float16 (resnet18 under
    // ToMixedPrecision): only the operator results show the overflow.
    let dir = project("overflow_inside");
    std::fs::write(dir.join("inside.relay"), OVERFLOWING_INSIDE).unwrap();
    let run = check_semantics_of(&dir, "inside.relay", "ToMixedPrecision");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("1 agree within range")
            && run
                .stderr
                .contains("after the pass, `multiply` gives -inf at result[0, 1]"),
        "{}",
        run.stderr
    );
}

/// Like gpt2 under ToMixedPrecision: `power` (never converted) stays in
/// float32 with values beyond float16's largest, while float16's rounding
/// of the dense layer, amplified by `sin(1000·x)`, changes the result. No
/// float16 result overflows, so this is a difference, not a range effect.
const WIDE_VALUES_KEPT_WIDE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) {
  %0 = power(multiply(%x, 400f), 2f);
  %1 = nn.dense(%x, %w, units=4);
  %2 = sin(multiply(%1, 1000f));
  (%0, %2)
}
"#;

#[test]
fn a_float32_value_the_pass_keeps_in_float32_is_no_range_effect() {
    let dir = project("kept_wide");
    std::fs::write(dir.join("kept.relay"), WIDE_VALUES_KEPT_WIDE).unwrap();
    let run = check_semantics_of(&dir, "kept.relay", "ToMixedPrecision");
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error: pass ToMixedPrecision changed the result on the input of seed 0")
            && !run.stderr.contains("range"),
        "{}",
        run.stderr
    );
}

/// float16 throughout, past its range on the random input; the wrong pass
/// (`AddToSubtract`) turns `add(…, 1000f16)` into a subtraction.
const FLOAT16_OVERFLOWING: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float16], %w: Tensor[(4, 8), float16]) -> Tensor[(2, 4), float16] {
  %0 = nn.dense(%x, %w, units=4);
  %1 = multiply(%0, 60000f16);
  add(%1, 1000f16)
}
"#;

#[test]
fn a_wrong_pass_on_a_float16_overflow_is_still_a_difference() {
    let dir = project("float16_wrong");
    std::fs::write(dir.join("half.relay"), FLOAT16_OVERFLOWING).unwrap();
    let run = check_semantics_of(&dir, "half.relay", "AddToSubtract");
    assert_eq!(run.code(), 1, "{}", run.stderr);
    insta::assert_snapshot!("float16_range_still_differs", run.stderr);
    // A correct pass on the same module leaves nothing to excuse.
    let run = check_semantics_of(&dir, "half.relay", "ToANormalForm");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(!run.stderr.contains("within range"), "{}", run.stderr);
}

/// float32 throughout: `exp(100·x)` overflows to infinity on the random
/// input (|x| < 1) and not on it scaled by 2^-4. The external passes
/// rewrite the quotient: `ExpQuotient` correctly, to `exp(100·x − 99·x)`,
/// which stays finite; `ExpQuotientWrong` wrongly, to `exp(100·x + 99·x)`.
const FLOAT32_OVERFLOWING: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32]) -> Tensor[(2, 8), float32] {
  %0 = multiply(%x, 100f);
  %1 = multiply(%x, 99f);
  divide(exp(%0), exp(%1))
}
"#;

const EXP_QUOTIENT_PASSES: &str = r#"
[passes.ExpQuotient]
command = ["sed", "-e", "s/divide(%2, %3)/exp(subtract(%0, %1))/"]
required = ["InferType"]

[passes.ExpQuotientWrong]
command = ["sed", "-e", "s/divide(%2, %3)/exp(add(%0, %1))/"]
required = ["InferType"]
"#;

fn float32_project(name: &str, module: &str) -> PathBuf {
    let dir = project(name);
    std::fs::write(dir.join("relay.toml"), EXP_QUOTIENT_PASSES).unwrap();
    std::fs::write(dir.join("single.relay"), module).unwrap();
    dir
}

#[test]
fn a_float32_overflow_under_a_correct_rewrite_agrees_within_range() {
    // Unscaled, the module before the pass gives inf/inf = NaN or inf
    // where exp(100·x) overflows and the one after it exp(x): they differ.
    // Scaled by 2^-4 both are exp(x) within float32's tolerance.
    let dir = float32_project("float32_overflow", FLOAT32_OVERFLOWING);
    let run = check_semantics_of(&dir, "single.relay", "ExpQuotient");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("float32_range_agrees", run.stderr);
}

#[test]
fn a_float32_overflow_inside_the_module_is_found_when_the_outputs_are_in_range() {
    // The outputs are 0 or 1 (whether the quotient is finite): in range on
    // both sides, different unscaled; only the range watch over the
    // operator results shows `exp` giving inf.
    let inside = FLOAT32_OVERFLOWING.replace(
        "divide(exp(%0), exp(%1))",
        "%2 = divide(exp(%0), exp(%1));\n  cast(isfinite(%2), dtype=\"float32\")",
    );
    let dir = float32_project("float32_overflow_inside", &inside);
    let run = check_semantics_of(&dir, "single.relay", "ExpQuotient");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("1 agree within range")
            && run.stderr.contains(
                "the float32 computation goes out of range (before the pass, `exp` gives inf at \
                 result["
            )
            && run
                .stderr
                .contains("both results are within float32's range and agree"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_wrong_pass_on_a_float32_overflow_is_still_a_difference() {
    let dir = float32_project("float32_wrong", FLOAT32_OVERFLOWING);
    let run = check_semantics_of(&dir, "single.relay", "ExpQuotientWrong");
    assert_eq!(run.code(), 1, "{}", run.stderr);
    insta::assert_snapshot!("float32_range_still_differs", run.stderr);
    // The reproducer holds the module before the pass and the inputs.
    assert!(dir.join("repro/before.relay").exists(), "{}", run.stderr);
    assert!(dir.join("repro/inputs/x.npy").exists(), "{}", run.stderr);
}

/// Ill-conditioned: `SimplifyExpr` rewrites `divide(%x, sqrt(%y))` to
/// `multiply(%x, rsqrt(%y))`, exact in real numbers, about one unit in the
/// last place in float32; `sin` of it times 1e4 amplifies that beyond the
/// tolerance, and as much as a rounding unit of the inputs does.
const ILL_CONDITIONED: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(64), float32], %y: Tensor[(64), float32]) -> Tensor[(64), float32] {
  %0 = divide(%x, sqrt(%y));
  sin(multiply(%0, 1e4f))
}
"#;

/// A wrong rewrite of the ill-conditioned module: `cos` for `sin`.
const SCALE_WRONG_PASS: &str = r#"
[passes.ScaleWrong]
command = ["sed", "-e", "s/sin(/cos(/"]
required = ["InferType"]
"#;

#[test]
fn a_rounding_change_amplified_by_an_ill_conditioned_module_agrees_within_sensitivity() {
    let dir = project("ill_conditioned");
    std::fs::write(dir.join("relay.toml"), SCALE_WRONG_PASS).unwrap();
    std::fs::write(dir.join("ill.relay"), ILL_CONDITIONED).unwrap();
    let run = check_semantics_of(&dir, "ill.relay", "SimplifyExpr");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("ill_conditioned_agrees_within_sensitivity", run.stderr);
    // A real change on the same module is far beyond its sensitivity: a
    // difference, which states the sensitivity measured.
    let run = check_semantics_of(&dir, "ill.relay", "ScaleWrong");
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("changed the result")
            && run.stderr.contains(
                "beyond the module's sensitivity: output moves by up to 1.767e-3 when the float \
                 inputs move by one rounding unit; the pass moved it by up to"
            )
            && !run.stderr.contains("agree within sensitivity"),
        "{}",
        run.stderr
    );
}

#[test]
fn relay_run_gives_question_mark_dimensions_a_size() {
    let dir = project("any_dims");
    std::fs::write(
        dir.join("any.relay"),
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(?, 2), float32]) -> Tensor[(?, 2), float32] {\n  nn.relu(%x)\n}\n",
    )
    .unwrap();
    let run = relay_in(&dir, &["run", "any.relay", "--random", "0"]);
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("<tvm.nd.NDArray shape=(4, 2), cpu(0)>"),
        "{}",
        run.stdout
    );
}

#[test]
fn relay_run_prints_writes_and_reads_arrays() {
    let dir = project("run");
    let printed = relay_in(&dir, &["run", "model.relay", "--random", "7"]);
    assert_eq!(printed.code(), 0, "{}", printed.stderr);
    insta::assert_snapshot!("run_random_7", printed.stdout);
    let written = relay_in(
        &dir,
        &["run", "model.relay", "--random", "7", "-o", "out.npz"],
    );
    assert_eq!(written.code(), 0, "{}", written.stderr);
    assert!(std::fs::read(dir.join("out.npz"))
        .unwrap()
        .starts_with(b"PK\x03\x04"));
    // An .npy input: x = ones(2, 3) in float32, written by hand.
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    let pad = (64 - (10 + header.len() + 1) % 64) % 64;
    let header = format!("{header}{}\n", " ".repeat(pad));
    npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    for _ in 0..6 {
        npy.extend_from_slice(&1f32.to_le_bytes());
    }
    std::fs::write(dir.join("ones.npy"), npy).unwrap();
    let ones = relay_in(&dir, &["run", "model.relay", "--input", "x=ones.npy"]);
    assert_eq!(ones.code(), 0, "{}", ones.stderr);
    assert_eq!(
        ones.stdout,
        "<tvm.nd.NDArray shape=(2, 3), cpu(0)>\narray([[3., 3., 3.],\n       [3., 3., 3.]], dtype=float32)\n"
    );
}

#[test]
fn relay_run_errors_are_clear() {
    let dir = project("run_errors");
    let missing = relay_in(&dir, &["run", "model.relay"]);
    assert_eq!(missing.code(), 2);
    assert_eq!(
        missing.stderr,
        "error: no input for %x: give --input NAME=FILE.npy, or --random SEED for random values\n"
    );
    let unknown = relay_in(&dir, &["run", "model.relay", "--input", "y=none.npy"]);
    assert_eq!(unknown.code(), 2);
    assert!(
        unknown.stderr.contains("cannot read none.npy"),
        "{}",
        unknown.stderr
    );
    std::fs::write(
        dir.join("bad.relay"),
        "#[version = \"0.0.5\"]\ndef @main(%i: int32) -> float32 {\n  %0 = add(%i, 10);\n  take(ones(shape=[3], dtype=\"float32\"), %0, axis=0, mode=\"fast\")\n}\n",
    )
    .unwrap();
    let failing = relay_in(&dir, &["run", "bad.relay", "--random", "1"]);
    insta::assert_snapshot!(
        "run_time_error",
        format!("exit {}\n{}", failing.code(), failing.stderr)
    );
}

/// `@main(%a, %b)` where `%u` is unused, for passes that reorder, rename
/// or drop parameters.
const PARAMS: &str = r#"#[version = "0.0.5"]
def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32], %u: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  subtract(%a, %b)
}
"#;

/// External passes that keep the result but change `@main`'s parameters
/// as TVM's passes may (DenseToSparse and SimplifyFCTranspose rebuild
/// `@main` from its free variables, in a new order, some new).
const PARAMETER_PASSES: &str = r#"
[passes.SwapParams]
command = ["sed", "-e", "s/%a: \\(Tensor[^]]*]\\), %b: \\(Tensor[^]]*]\\)/%b: \\2, %a: \\1/"]
required = ["InferType"]

[passes.RenameParam]
command = ["sed", "-e", "s/%b/%c/g"]
required = ["InferType"]

[passes.DropUnused]
command = ["sed", "-e", "s/, %u: Tensor[^]]*]//"]
required = ["InferType"]
"#;

#[test]
fn arguments_bind_to_the_parameters_after_the_pass_by_name() {
    let dir = project("by_name");
    std::fs::write(dir.join("relay.toml"), PARAMETER_PASSES).unwrap();
    std::fs::write(dir.join("params.relay"), PARAMS).unwrap();
    let check = |pass: &str| {
        let run = relay_in(
            &dir,
            &["opt", "params.relay", "-p", pass, "--check-semantics=2"],
        );
        assert_eq!(run.code(), 0, "{pass}: {}", run.stderr);
        run.stderr
    };
    // Reordered: `%a` still gets `%a`'s value (by position it got `%b`'s,
    // and subtract's result changed sign).
    let swapped = check("SwapParams");
    assert!(
        swapped.contains("semantic check: 1 pass compared, 1 agree"),
        "{swapped}"
    );
    // Dropped: compared without it, and said so (by position the module
    // after it got one argument too many).
    let dropped = check("DropUnused");
    assert!(
        dropped.contains("semantic check: 1 pass compared, 1 agree")
            && dropped
                .contains("note: DropUnused removed @main's parameter %u; compared without it"),
        "{dropped}"
    );
    // Added: nothing to give it, so not checked, with the reason.
    let renamed = check("RenameParam");
    assert!(
        renamed.contains("not checked (RenameParam): the pass added parameter %c to @main (no value to compare with) and removed %b"),
        "{renamed}"
    );
}

/// `nn.dropout` and `nn.conv2d_backward_weight` have no FoldConstant
/// kernel (TVM never folds them) but TVM's executors run them after their
/// Legalize/SimplifyInference prefix: the check runs them too (the sweep
/// used to skip such pairs as "no kernel").
#[test]
fn operators_executors_run_but_never_fold_are_checked() {
    let dir = project("executor_only");
    std::fs::write(
        dir.join("drop.relay"),
        r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = nn.dropout(%x, rate=0.5f);
  nn.relu(%0.0)
}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("conv.relay"),
        r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 5, 5), float32], %w: Tensor[(3, 2, 3, 3), float32]) -> Tensor[(1, 3, 3, 3), float32] {
  nn.conv2d(%x, %w, padding=[0, 0, 0, 0], channels=3, kernel_size=[3, 3])
}
"#,
    )
    .unwrap();
    for (file, pass) in [
        ("drop.relay", "SimplifyInference"),
        ("conv.relay", "FirstOrderGradient"),
    ] {
        let run = check_semantics_of(&dir, file, pass);
        assert_eq!(run.code(), 0, "{pass}: {}", run.stderr);
        assert!(
            run.stderr.contains("1 pass compared, 1 agree;")
                && run.stderr.contains("0 not checked"),
            "{pass}: {}",
            run.stderr
        );
    }
}

/// `DENSE` after a gradient pass, written by hand: the gradients of
/// S = Σ relu(x·wᵀ) are mask·w for `%x` and maskᵀ·x for `%w` (mask: where
/// the product is positive). `GRADIENT_X` is what `%x`'s gradient is
/// multiplied by.
fn dense_gradient(gradient_x: &str) -> String {
    format!(
        r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) {{
  %0 = nn.dense(%x, %w, units=4);
  %1 = cast(greater(%0, 0f), dtype="float32");
  %2 = nn.dense(%1, transpose(%w, axes=None), units=8);
  %3 = nn.dense(transpose(%1, axes=None), transpose(%x, axes=None), units=8);
  (nn.relu(%0), (multiply(%2, {gradient_x}), %3))
}}
"#
    )
}

/// An external pass that stands in for FirstOrderGradient (a project's
/// pass of a registered name replaces it): it prints `gradient.relay`.
const HAND_WRITTEN_GRADIENT: &str = r#"
[passes.FirstOrderGradient]
command = ["sh", "-c", "cat > /dev/null; cat gradient.relay"]
required = ["InferType"]
"#;

/// The summary lines of a gradient check, without the tolerance lines.
fn gradient_lines(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.starts_with("  tolerance"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn gradients_are_checked_against_finite_differences() {
    let dir = project("gradients");
    std::fs::write(dir.join("dense.relay"), DENSE).unwrap();
    for pass in ["Gradient", "FirstOrderGradient"] {
        let run = relay_in(
            &dir,
            &["opt", "dense.relay", "-p", pass, "--check-semantics=2"],
        );
        assert_eq!(run.code(), 0, "{pass}: {}", run.stderr);
        insta::assert_snapshot!(
            format!("gradient_agrees_{pass}"),
            gradient_lines(&run.stderr)
        );
    }
}

#[test]
fn a_wrong_gradient_is_caught() {
    let dir = project("wrong_gradient");
    std::fs::write(dir.join("relay.toml"), HAND_WRITTEN_GRADIENT).unwrap();
    std::fs::write(dir.join("dense.relay"), DENSE).unwrap();
    let check = |gradient_x: &str| {
        std::fs::write(dir.join("gradient.relay"), dense_gradient(gradient_x)).unwrap();
        relay_in(
            &dir,
            &[
                "opt",
                "dense.relay",
                "-p",
                "FirstOrderGradient",
                "--check-semantics=2",
                "--reproducer",
                "repro",
            ],
        )
    };
    // The hand-written gradients are right: they agree (on seed 1; on seed
    // 0 a product is -9e-5, a relu kink inside every step tried: "not
    // checked", as the snapshot of the agreeing passes shows).
    let right = check("1f");
    assert_eq!(right.code(), 0, "{}", right.stderr);
    assert!(
        right
            .stderr
            .contains("gradient (FirstOrderGradient): agrees with central finite differences on"),
        "{}",
        right.stderr
    );
    // %x's gradient doubled: the value agrees, the gradient does not.
    let wrong = check("2f");
    assert_eq!(wrong.code(), 1, "{}", wrong.stderr);
    let stderr = wrong.stderr.replace(dir.to_str().unwrap(), "<dir>");
    insta::assert_snapshot!("wrong_gradient", gradient_lines(&stderr));
    assert!(dir.join("repro/output_after.npz").exists());
}

/// `DENSE` in the CPS form ToCPS gives it, for the identity continuation.
#[test]
fn to_cps_is_compared_through_the_identity_continuation() {
    let dir = project("to_cps");
    std::fs::write(dir.join("dense.relay"), DENSE).unwrap();
    let run = relay_in(
        &dir,
        &["opt", "dense.relay", "-p", "ToCPS", "--check-semantics=2"],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    insta::assert_snapshot!("to_cps_identity_continuation", run.stderr);
}

#[test]
fn a_refused_feature_is_a_short_message_at_the_expression() {
    let dir = project("feature");
    std::fs::write(
        dir.join("graph.relay"),
        r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32]) {
  %0 = exp(%x);
  add(%0, %0)
}
"#,
    )
    .unwrap();
    let run = relay_in(&dir, &["opt", "graph.relay", "-p", "ToCPS"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    insta::assert_snapshot!("to_cps_graph_refused", run.stderr);
    // What the message says to do works.
    let fixed = relay_in(
        &dir,
        &[
            "opt",
            "graph.relay",
            "-p",
            "ToANormalForm, InferType, ToCPS",
            "--check-semantics=1",
        ],
    );
    assert_eq!(fixed.code(), 0, "{}", fixed.stderr);
}

#[test]
fn the_semantics_cache_gives_the_same_report_without_running_the_module_again() {
    let dir = project("cache");
    let check = |cache: Option<&str>| {
        let mut args = vec![
            "opt",
            "model.relay",
            "-p",
            "AddToSubtract",
            "--check-semantics=2",
            "--reproducer",
            "repro",
        ];
        if let Some(cache) = cache {
            args.extend(["--semantics-cache", cache]);
        }
        let run = relay_in(&dir, &args);
        assert_eq!(run.code(), 1, "{}", run.stderr);
        run.stderr
    };
    let plain = check(None);
    let first = check(Some("cache"));
    let entries = std::fs::read_dir(dir.join("cache")).unwrap().count();
    assert_eq!(entries, 2, "the module before and after the pass");
    let second = check(Some("cache"));
    assert_eq!(first, plain);
    assert_eq!(second, plain);
    // The second check read both entries: damaged ones would be computed
    // again with a note, so damage them and see the notes.
    for entry in std::fs::read_dir(dir.join("cache")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    }
    let damaged = check(Some("cache"));
    assert_eq!(
        damaged
            .matches("semantic-check cache entry not used")
            .count(),
        2,
        "{damaged}"
    );
    let notes_removed: String = damaged
        .lines()
        .filter(|l| !l.contains("semantic-check cache entry not used"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(notes_removed.trim_end(), plain.trim_end());
}

/// On the random input (uniform in [-1, 1)) `sqrt(%x - 2)` is NaN
/// everywhere: a pass that keeps it so (FoldConstant folds `1f + 1f`)
/// cannot be said to agree, and neither can one that changes the rest.
const ALL_NAN: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = sqrt(subtract(%x, 2f));
  add(%0, add(1f, 1f))
}
"#;

#[test]
fn a_result_that_is_nan_everywhere_is_not_counted_as_agreeing() {
    let dir = project("all_nan");
    std::fs::write(dir.join("nan.relay"), ALL_NAN).unwrap();
    let run = check_semantics_of(&dir, "nan.relay", "FoldConstant");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("semantic check: 0 passes compared, 0 agree;")
            && run.stderr.contains("; 1 not checked"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "not checked (FoldConstant): before the pass, no element of the result is finite"
        ),
        "{}",
        run.stderr
    );
}

/// `x · 10^40` overflows float32 for nearly every random `x`, `inf - inf`
/// is NaN and the sum is NaN: no element of the result is finite. On the
/// input scaled by 2^-8 nothing overflows, and there the results are
/// compared (they agree: FoldConstant only folds `1f + 1f`).
const OVERFLOWS_TO_NAN: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> float32 {
  %0 = multiply(multiply(%x, 1e20f), 1e20f);
  %1 = subtract(%0, %0);
  sum(add(%1, add(1f, 1f)))
}
"#;

#[test]
fn a_result_that_is_nan_everywhere_is_compared_on_the_scaled_input() {
    let dir = project("nan_scaled");
    std::fs::write(dir.join("nan.relay"), OVERFLOWS_TO_NAN).unwrap();
    let run = check_semantics_of(&dir, "nan.relay", "FoldConstant");
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("0 agree, 1 agree within range;"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("no element of the result before the pass is finite (NaN at output[]"),
        "{}",
        run.stderr
    );
}

/// A batch norm whose `%var` drawn uniform in [-1, 1) is a negative
/// variance, and a spelled-out variance `mean(power(x - mean(x), %e))`
/// whose random exponent `%e` makes a negative base NaN: from the types
/// alone every element of the result is NaN. The two are drawn in their
/// domains (a positive variance, an exponent of 2), and the result is
/// finite.
const DOMAINS: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 2, 2), float32], %gamma: Tensor[(3), float32], %beta: Tensor[(3), float32], %mean: Tensor[(3), float32], %var: Tensor[(3), float32], %e: float32) -> Tensor[(1, 1, 2, 2), float32] {
  %0 = nn.batch_norm(%x, %gamma, %beta, %mean, %var);
  %1 = %0.0;
  %2 = mean(%1, axis=[1], keepdims=True);
  %3 = subtract(%1, %2);
  %4 = power(%3, %e);
  %5 = mean(%4, axis=[1], keepdims=True);
  sqrt(add(%5, 1e-05f))
}
"#;

#[test]
fn relay_run_draws_a_variance_and_an_exponent_in_their_domains() {
    let dir = project("domains_run");
    std::fs::write(dir.join("norm.relay"), DOMAINS).unwrap();
    let run = relay_in(&dir, &["run", "norm.relay", "--random", "0"]);
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(!run.stdout.contains("nan"), "{}", run.stdout);
    insta::assert_snapshot!("run_random_domains", run.stdout);
}

#[test]
fn a_module_with_a_variance_and_an_exponent_is_compared() {
    let dir = project("domains_check");
    std::fs::write(dir.join("norm.relay"), DOMAINS).unwrap();
    // SimplifyInference spells the batch norm out (the variance then
    // feeds `add` before `sqrt`): the passes after it still get the
    // inputs of the pipeline's input, and agree.
    let run = check_semantics_of(
        &dir,
        "norm.relay",
        "SimplifyInference, FoldConstant, SimplifyExpr",
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(!run.stderr.contains("not checked ("), "{}", run.stderr);
    insta::assert_snapshot!("check_semantics_domains", run.stderr);
}
