//! What `relay opt` prints, the tool reads back: each case runs a pass
//! through the built binary on a small module (each one a fuzzing
//! finding, issue 15), checks what the output shows, then reads the output
//! again with `relay check` (it must be accepted) and with `relay opt -p
//! InferType` (it must print the same text again: the reread module is the
//! printed one). Cases the tool must refuse say so with their diagnostic.

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_relay");

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn relay(args: &[&str]) -> Run {
    let out = Command::new(BIN)
        .args(args)
        .output()
        .expect("the relay binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Writes `text` to a file of this test's own and returns its path.
fn input(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_readback");
    std::fs::create_dir_all(&dir).expect("the target's temporary directory is writable");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the input can be written");
    path
}

fn path_str(path: &std::path::Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// How exactly the output must read back.
#[derive(Clone, Copy, PartialEq)]
enum Reread {
    /// As the printed module itself: printing it again gives the same text.
    Same,
    /// As a tree of the printed graph: a node the graph shares between two
    /// scopes (a closure's body and the code after it, two branches) is
    /// printed in each, which no text can show as one node; the text
    /// printed from the reread module is then a fixed point.
    Unshared,
}

/// Runs `pipeline` on `module`, checks that the output contains each of
/// `expect`, and that it reads back (`how`).
fn assert_reads_back(name: &str, module: &str, pipeline: &str, expect: &[&str], how: Reread) {
    let file = input(&format!("{name}.relay"), module);
    let run = relay(&["opt", path_str(&file), "-p", pipeline]);
    assert_eq!(run.code, 0, "{name}: `relay opt` failed:\n{}", run.stderr);
    for text in expect {
        assert!(
            run.stdout.contains(text),
            "{name}: the output lacks `{text}`:\n{}",
            run.stdout
        );
    }
    let printed = input(&format!("{name}.out.relay"), &run.stdout);
    let check = relay(&["check", path_str(&printed)]);
    assert_eq!(
        check.code, 0,
        "{name}: the output does not read back:\n{}{}\n--- output:\n{}",
        check.stdout, check.stderr, run.stdout
    );
    let again = relay(&["opt", path_str(&printed), "-p", "InferType"]);
    assert_eq!(again.code, 0, "{name}: {}", again.stderr);
    let expected = match how {
        Reread::Same => run.stdout,
        Reread::Unshared => {
            let reprinted = input(&format!("{name}.again.relay"), &again.stdout);
            let third = relay(&["opt", path_str(&reprinted), "-p", "InferType"]);
            assert_eq!(third.code, 0, "{name}: {}", third.stderr);
            third.stdout
        }
    };
    assert_eq!(
        again.stdout, expected,
        "{name}: the output reads back as a different module"
    );
}

/// Non-finite constants print as TVM prints them (`inff`, `inff64`,
/// `nanf`, …) and read back with their dtype.
#[test]
fn folded_nan_and_infinity_read_back() {
    assert_reads_back(
        "non_finite",
        r#"#[version = "0.0.5"]
def @main() {
  (sqrt(-1f), rsqrt(0f64), divide(1f16, 0f16), log(0f), sqrt(-1f64))
}
"#,
        "FoldConstant",
        &["nanf", "inff64", "inff16", "-inff", "nanf64"],
        Reread::Same,
    );
}

/// DynamicToStatic folds what it can, infinities included (fuzzing seed
/// 1000388: `rsqrt(0f64)`).
#[test]
fn dynamic_to_static_output_reads_back() {
    assert_reads_back(
        "dynamic_to_static_inf",
        r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) {
  let %v = rsqrt(0f64);
  (dyn.reshape(%x, shape_of(%x), newshape=[]), %v)
}
"#,
        "DynamicToStatic",
        &["inff64"],
        Reread::Same,
    );
}

/// ToGraphNormalForm shares a node between a closure and the code after
/// it: the printer binds it again where it is used outside the closure
/// instead of naming a `%N` of the closure's body.
#[test]
fn graph_node_shared_with_a_closure_reads_back() {
    assert_reads_back(
        "graph_closure_sharing",
        r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) {
  let %s = sum(%x);
  let %t = add(%s, %s);
  let %f = fn (%q: float32) {
    %s
  };
  %f(%t)
}
"#,
        "ToGraphNormalForm",
        &["fn ("],
        Reread::Unshared,
    );
}

/// A closure shared by both branches of an `if` (fuzzing seed 1000491): as
/// TVM prints it, the first branch binds it and the second names its `%N`,
/// which reads back (graph bindings are not scoped by branches) to the same
/// text.
#[test]
fn graph_closure_shared_by_branches_reads_back() {
    assert_reads_back(
        "graph_branch_sharing",
        r#"#[version = "0.0.5"]
def @main(%c: bool, %x: Tensor[(2), int32]) {
  let %r = fn (%q: Tensor[(2), int32]) {
    let %e = negative(%q);
    (%e, %x)
  }(%x);
  let %p = %r.1;
  if (%c) {
    %p
  } else {
    %p
  }
}
"#,
        "ToGraphNormalForm",
        &["  } else {\n    %3\n  }"],
        Reread::Same,
    );
}

/// The void dtype (`zeros` without a dtype) prints as nothing, as in
/// TVM, and reads back as void; a rank-0 void tensor, which TVM prints as
/// nothing at all, prints as `Tensor[(), ]`.
#[test]
fn void_dtype_reads_back() {
    assert_reads_back(
        "void_dtype",
        r#"#[version = "0.0.5"]
def @main() {
  (zeros(shape=[3]), zeros(shape=[]))
}
"#,
        "InferType",
        &["-> (Tensor[(3), ], Tensor[(), ])"],
        Reread::Same,
    );
}

/// A parameter whose type nothing determines completely (a list of
/// unknown elements) cannot be written as an annotation: InferType says
/// so instead of printing `List[meta[IncompleteType][0]]`.
#[test]
fn an_incomplete_parameter_type_is_reported() {
    let file = input(
        "unconstrained_list.relay",
        r#"#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @length(%l) {
  match (%l) {
    Nil => 0,
    _ => 1,
  }
}
"#,
    );
    for args in [
        vec!["check", path_str(&file)],
        vec!["opt", path_str(&file), "-p", "InferType"],
    ] {
        let run = relay(&args);
        let output = format!("{}{}", run.stdout, run.stderr);
        assert_eq!(run.code, 1, "{args:?}:\n{output}");
        assert!(
            output.contains("unable to infer a type") && output.contains("%l"),
            "{args:?}:\n{output}"
        );
        assert!(!output.contains("IncompleteType"), "{args:?}:\n{output}");
    }
}
