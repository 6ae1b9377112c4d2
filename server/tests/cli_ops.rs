//! `relay ops` end to end, through the built binary: the text entry of a
//! few operators (snapshot), the JSON shape (snapshot of one operator, and
//! every object's keys), the summary line against the JSON's own counts,
//! and an unknown operator name.

use std::process::Command;

/// (exit code, stdout, stderr) of `relay ops ARGS…`.
fn ops(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .arg("ops")
        .args(args)
        .output()
        .expect("the relay binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> Vec<serde_json::Value> {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let (code, stdout, stderr) = ops(&full);
    assert_eq!(code, Some(0), "{stderr}");
    serde_json::from_str(&stdout).expect("`relay ops --json` prints JSON")
}

#[test]
fn named_operators_are_listed_in_the_order_given() {
    let (code, stdout, stderr) = ops(&["nn.conv2d", "add", "concatenate"]);
    assert_eq!(code, Some(0), "{stderr}");
    insta::assert_snapshot!(stdout);
}

#[test]
fn json_shape_of_one_operator() {
    let list = json(&["nn.softmax"]);
    insta::assert_snapshot!(serde_json::to_string_pretty(&list).unwrap());
}

#[test]
fn every_operator_has_the_documented_keys() {
    let list = json(&[]);
    assert!(
        list.len() > 250,
        "the whole table is listed: {}",
        list.len()
    );
    let keys = [
        "name",
        "arguments",
        "num_inputs",
        "attrs_type",
        "call_attrs_type",
        "attrs",
        "pattern",
        "support_level",
        "stateful",
        "non_computational",
        "relation",
        "relation_implemented",
        "evaluator",
        "never_folded",
        "layout_inference",
        "layout_conversion",
        "alter_layout",
        "description",
    ];
    for op in &list {
        let object = op.as_object().expect("each operator is an object");
        let mut found: Vec<&str> = object.keys().map(String::as_str).collect();
        found.sort_unstable();
        let mut expected = keys.to_vec();
        expected.sort_unstable();
        assert_eq!(found, expected, "{}", op["name"]);
        // Calls of an operator TVM registers without an attributes type
        // may still carry one (`cumsum`: ScanopAttrs), never both.
        if op["call_attrs_type"].is_string() {
            assert!(op["attrs_type"].is_null(), "{}", op["name"]);
            assert!(op["attrs"].is_array(), "{}", op["name"]);
        }
        // An operator TVM never folds needs no kernel and has none.
        if op["never_folded"].is_string() {
            assert_eq!(op["evaluator"], false, "{}", op["name"]);
        }
        // An implemented relation implies a declared one.
        if op["relation_implemented"] == true {
            assert!(op["relation"].is_string(), "{}", op["name"]);
        }
    }
    let names: Vec<&str> = list.iter().map(|o| o["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "the whole table is sorted by name");
}

#[test]
fn the_summary_counts_what_the_json_says() {
    let list = json(&[]);
    let count = |key: &str| list.iter().filter(|o| o[key] == true).count();
    let declared = list.iter().filter(|o| o["relation"].is_string()).count();
    let never_folded = list
        .iter()
        .filter(|o| o["never_folded"].is_string())
        .count();
    let (code, stdout, _) = ops(&[]);
    assert_eq!(code, Some(0));
    let last = stdout.lines().last().expect("a summary line");
    assert_eq!(
        last,
        format!(
            "{} operators: {} with a type relation (of {declared} that declare one), \
             {} with an evaluation kernel ({never_folded} never folded by TVM), \
             {} with layout inference",
            list.len(),
            count("relation_implemented"),
            count("evaluator"),
            count("layout_inference"),
        )
    );
}

#[test]
fn an_operator_tvm_never_folds_says_why() {
    let list = json(&["nn.dropout", "nn.dense"]);
    assert_eq!(list[0]["evaluator"], false);
    assert!(list[0]["never_folded"]
        .as_str()
        .is_some_and(|r| r.contains("stateful")));
    assert_eq!(list[1]["evaluator"], true);
    assert!(list[1]["never_folded"].is_null());
    let (code, stdout, _) = ops(&["nn.dropout"]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("kernel no (never folded by TVM: stateful"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_operator_is_a_usage_error_with_a_suggestion() {
    let (code, stdout, stderr) = ops(&["nn.conv2", "add"]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr.trim_end(),
        "error: unknown operator `nn.conv2` (did you mean `nn.conv2d`?)"
    );
}
