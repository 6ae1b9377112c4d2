//! What a user sees when a pass refuses its input, as TVM v0.13's pass does:
//! `relay opt -p PIPELINE FILE` is run on every `*_refused.relay` case of
//! `passes/test_data/passes/<Pass>/` (the pass-case tests check their
//! messages; this one the whole report), and its exit code and standard
//! error are snapshotted — the message with its span, and the notes and
//! help that say what TVM does there and what to run instead.

use relay_test_support::files::case_header;
use relay_test_support::files::sorted_files;
use relay_test_support::run::run;
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_relay");

/// The pass cases, beside this crate.
fn cases_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../passes/test_data/passes")
}

/// Every `<Pass>/<case>_refused.relay`, as a path relative to the root.
fn refusal_cases() -> Vec<String> {
    let root = cases_root();
    let mut cases = Vec::new();
    for pass_dir in sorted_files(&root, "") {
        for case in sorted_files(&pass_dir, "_refused.relay") {
            let relative = case.strip_prefix(&root).expect("under the root");
            cases.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    cases
}

#[test]
fn refused_inputs_are_reported_with_tvms_outcome() {
    let root = cases_root();
    let cases = refusal_cases();
    assert!(
        cases.len() >= 10,
        "the refusal cases were not found under {}",
        root.display()
    );
    for case in cases {
        let text = std::fs::read_to_string(root.join(&case)).expect("the case is readable");
        let pipeline =
            case_header(&text, "pipeline").unwrap_or_else(|| panic!("{case}: no pipeline"));
        let opt_level = case_header(&text, "opt-level").unwrap_or_else(|| "2".to_string());
        let args = ["opt", "--opt-level", &opt_level, "-p", &pipeline, &case];
        let result = run(Path::new(BIN), &args, "", Some(&root));
        assert_eq!(
            result.code(),
            1,
            "{case}: a refused input is an error (exit 1)\n{}",
            result.stderr
        );
        assert!(result.stdout.is_empty(), "{case}: no module is printed");
        let name = case.trim_end_matches(".relay").replace('/', "__");
        insta::assert_snapshot!(name, result.stderr);
    }
}
