//! TVM's own results for DeadCodeElimination and EliminateCommonSubexpr:
//! every record of `shared/tvm/passes/{DeadCodeElimination,
//! EliminateCommonSubexpr,Sequential-DeadCodeElimination}` is parsed,
//! lowered, type-checked once (as TVM's parser does), run through its
//! pipeline under its PassContext, printed with types and compared with
//! TVM's print: once without the `/* ty=… */` comments ("structure"), once
//! as is ("typed"). Records with `"error"` must fail.
//!
//! `RELAY_CORPUS_DIRS=A,B` runs other record directories instead (e.g. the
//! pipelines that also need FoldConstant); `RELAY_CORPUS_FILTER=substring`
//! restricts the records (by file name);
//! `RELAY_CORPUS_VERBOSE=1` prints the first differing line of each miss;
//! `RELAY_CORPUS_DUMP=dir` writes our print of each miss to `dir`.

mod common;

use common::{normalize, pass_records, strip_types, Tally};
use std::collections::BTreeMap;

const DIRS: [&str; 4] = [
    "DeadCodeElimination",
    "EliminateCommonSubexpr",
    "Sequential-DeadCodeElimination",
    "Sequential-DeadCodeElimination+InferType",
];

#[test]
fn dce_and_cse_match_tvm() {
    let Some(root) = common::corpus("dce_and_cse_match_tvm") else {
        return;
    };
    let dirs: Vec<String> = match std::env::var("RELAY_CORPUS_DIRS") {
        Ok(list) => list.split(',').map(|d| d.trim().to_string()).collect(),
        Err(_) => DIRS.iter().map(|d| d.to_string()).collect(),
    };
    let mut all: BTreeMap<&str, Tally> = BTreeMap::new();
    for dir in dirs.iter().map(String::as_str) {
        let tally = all.entry(dir).or_default();
        for record in pass_records(&root, dir) {
            match record {
                Ok(record) => tally.add(&record, common::run_record(&record)),
                Err(message) => tally.add_unreadable(message),
            }
        }
    }
    let mut failed = false;
    eprintln!();
    for (dir, tally) in &all {
        tally.report(dir);
        // A difference confined to the metadata section is the printer's
        // (the sharing of dimension objects between constants' checked
        // types, see `meta`); it is reported, not failed on here.
        failed |= tally.structure + tally.metadata_only < tally.expected_ok()
            || tally.errors_ok < tally.errors_expected
            || tally.found_nothing();
    }
    assert!(
        !failed,
        "some records do not match TVM's structure (see above)"
    );
}

// ---------------------------------------------------------------------------
// Behaviour on small programs (TVM's rules from `dead_code.cc` and
// `eliminate_common_subexpr.cc`), through the text pipeline.
// ---------------------------------------------------------------------------

/// Parses `body` (a module text without the version header), type-checks
/// it and runs `pipeline`; the result printed without types.
fn opt(body: &str, pipeline: &str) -> String {
    let text = format!("#[version = \"0.0.5\"]\n{body}");
    let json = serde_json::json!({
        "pipeline": pipeline,
        "ctx": {"opt_level": 3, "required_pass": [], "disabled_pass": [], "config": {}}
    });
    let record = common::PassRecord {
        dir: "inline".into(),
        stem: "test".into(),
        json,
        before: text.clone(),
        expected: None,
    };
    let printed = common::run_record(&record).unwrap_or_else(|e| panic!("{e}\n{text}"));
    normalize(&strip_types(&printed))
}

fn dce(body: &str) -> String {
    opt(body, "DeadCodeElimination")
}

fn nested_negatives(depth: usize) -> String {
    let mut e = "1f".to_string();
    for _ in 0..depth {
        e = format!("negative({e})");
    }
    e
}

#[test]
fn dce_removes_pure_dead_lets_and_keeps_used_ones() {
    let out = dce("def @main(%z: int32) { let %x = 1; let %y = 2; add(%x, %x) }");
    assert!(out.contains("let %x"), "{out}");
    assert!(!out.contains("let %y"), "{out}");
}

#[test]
fn dce_call_depth_cut_off_is_25() {
    // 25 nested calls are analysed (pure, removed); the 26th is assumed
    // impure, so the binding stays.
    let pure = dce(&format!(
        "def @main() {{ let %x = {}; 0 }}",
        nested_negatives(25)
    ));
    assert!(!pure.contains("let %x"), "{pure}");
    let deep = dce(&format!(
        "def @main() {{ let %x = {}; 0 }}",
        nested_negatives(26)
    ));
    assert!(deep.contains("let %x"), "{deep}");
}

#[test]
fn dce_keeps_calls_of_higher_order_parameters() {
    let out = dce("def @main(%f: fn (int32) -> int32) { let %x = %f(1); 0 }");
    assert!(out.contains("let %x"), "{out}");
}

#[test]
fn dce_ref_read_and_write_are_impure_ref_create_is_pure() {
    let out = dce(
        "def @main() { let %r = ref(1); let %s = ref(2); let %v = ref_read(%r); \
         let %w = ref_write(%r, 3); 0 }",
    );
    assert!(out.contains("let %r"), "{out}");
    assert!(!out.contains("let %s"), "{out}");
    assert!(out.contains("let %v"), "{out}");
    assert!(out.contains("let %w"), "{out}");
}

#[test]
fn dce_stateful_ops_unless_impurity_is_ignored() {
    let body = "def @main(%a: Tensor[(2), float32]) { let %d = nn.dropout(%a); 0 }";
    assert!(dce(body).contains("let %d"));
    let ignored = opt(body, "DeadCodeElimination(ignore_impurity=true)");
    assert!(!ignored.contains("let %d"), "{ignored}");
}

#[test]
fn dce_global_calls_take_the_callee_purity() {
    let out = dce("def @pure(%x: int32) -> int32 { %x }\n\
         def @impure(%r: ref(int32)) -> int32 { ref_read(%r) }\n\
         def @main(%r: ref(int32)) { let %a = @pure(1); let %b = @impure(%r); 0 }");
    assert!(!out.contains("let %a"), "{out}");
    assert!(out.contains("let %b"), "{out}");
}

#[test]
fn dce_functions_from_tuples_and_adts_are_call_impure() {
    let out = dce("type Option[A] { Some(A), None, }\n\
         def @main(%o: Option[fn (int32) -> int32]) {\n\
           let %t = (fn (%y: int32) { %y },);\n\
           let %x = %t.0(1);\n\
           match (%o) { Some(%g) => { let %z = %g(2); 0 }, None => 0 }\n\
         }");
    assert!(out.contains("let %x"), "{out}");
    assert!(out.contains("let %z"), "{out}");
}

#[test]
fn dce_inline_once_but_not_into_nested_functions() {
    let body = "def @main() {\n\
                  let %x = add(1, 1);\n\
                  let %f = fn (%y: int32) { let %z = add(%y, %y); add(%x, %z) };\n\
                  (%f(2), %f(3))\n\
                }";
    let out = opt(body, "DeadCodeElimination(inline_once=true)");
    // %x is used inside %f (two uses), %f twice: both stay; %z is inlined.
    assert!(out.contains("let %x"), "{out}");
    assert!(out.contains("let %f"), "{out}");
    assert!(!out.contains("let %z"), "{out}");
    // Without inline_once nothing moves.
    assert!(dce(body).contains("let %z"));
}

#[test]
fn dce_recursive_local_function_is_kept() {
    let out = opt(
        "def @main() {\n\
           let %f = fn (%n: int32) -> int32 { if (equal(%n, 0)) { 0 } else { %f(subtract(%n, 1)) } };\n\
           %f(3)\n\
         }",
        "DeadCodeElimination(inline_once=true)",
    );
    assert!(out.contains("let %f"), "{out}");
}

#[test]
fn cse_merges_calls_and_not_stateful_ones() {
    let out = opt(
        "def @main(%a: Tensor[(2), float32]) {\n\
           %0 = negative(%a); %1 = negative(%a);\n\
           %2 = nn.dropout(%a); %3 = nn.dropout(%a);\n\
           (%0, %1, %2.0, %3.0)\n\
         }",
        "EliminateCommonSubexpr",
    );
    assert_eq!(out.matches("negative(").count(), 1, "{out}");
    assert_eq!(out.matches("nn.dropout(").count(), 2, "{out}");
}
