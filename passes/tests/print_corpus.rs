//! The printer against TVM's own prints (`../shared/tvm`): reading a text
//! TVM printed and printing it again must give the same text, without its
//! `/* ty=… */` comments (no type inference runs here), white space at line
//! ends and at the end ignored. This is the `parser.roundtrip` metric of
//! `shared/tools/conformance.py`, plus the same check on every model file.
//! Metadata sections are compared byte for byte as part of the text.
//!
//! The test prints the counts and fails when fewer cases pass than the
//! numbers recorded below (raise them when the printer gets better).

use relay_passes::lower::{parse_and_lower, parse_and_lower_expr};
use relay_passes::printer::{print_expr, print_module, PrintOptions};
use std::path::{Path, PathBuf};

/// Cases of `parser/ok` (not marked `"tvm_roundtrip": false`) that must pass.
const PARSER_MIN: usize = 278;
/// Files of `models/` that must pass.
const MODELS_MIN: usize = 58;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tvm")
}

/// Removes every ` /* ty=… */` comment (the regex
/// ` ?/\* ty=(?:[^*]|\*(?!/))* \*/` of the conformance script).
fn strip_types(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("/* ty=") {
        // The comment runs to the first `*/`; it must end with ` */`.
        let Some(len) = rest[at..].find("*/") else {
            break;
        };
        let end = at + len + 2;
        if !rest[..end].ends_with(" */") {
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        let start = if rest[..at].ends_with(' ') {
            at - 1
        } else {
            at
        };
        out.push_str(&rest[..start]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// White space at line ends and at the end of the text does not count.
fn norm(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let mut lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

const OPTIONS: PrintOptions = PrintOptions {
    show_meta_data: true,
    show_types: false,
};

fn errors(diagnostics: &relay_passes::diagnostic::Diagnostics) -> String {
    diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Prints `text` after reading it; `Err` with the errors if it does not
/// read.
fn reprint(name: &str, text: &str, expr: bool) -> Result<String, String> {
    if expr {
        let (e, diagnostics) = parse_and_lower_expr(name, text);
        if diagnostics.has_errors() {
            return Err(errors(&diagnostics));
        }
        Ok(print_expr(&e, &OPTIONS))
    } else {
        let (m, diagnostics) = parse_and_lower(name, text);
        if diagnostics.has_errors() {
            return Err(errors(&diagnostics));
        }
        Ok(print_module(&m, &OPTIONS))
    }
}

/// The first differing line of two texts, for the failure report.
fn first_difference(got: &str, want: &str) -> String {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    for i in 0..g.len().max(w.len()) {
        let (a, b) = (g.get(i).copied(), w.get(i).copied());
        if a != b {
            let cut =
                |s: Option<&str>| s.map_or("<none>".to_string(), |s| s.chars().take(200).collect());
            return format!(
                "line {}:\n      got:  {}\n      want: {}",
                i + 1,
                cut(a),
                cut(b)
            );
        }
    }
    String::new()
}

fn check(name: &str, text: &str, expr: bool, failures: &mut Vec<String>) -> bool {
    let want = norm(&strip_types(text));
    match reprint(name, text, expr) {
        Ok(got) if norm(&got) == want => true,
        Ok(got) => {
            failures.push(format!("{name}: {}", first_difference(&norm(&got), &want)));
            false
        }
        Err(e) => {
            failures.push(format!(
                "{name}: does not read: {}",
                e.chars().take(300).collect::<String>()
            ));
            false
        }
    }
}

fn skip_loudly(dir: &Path) {
    eprintln!(
        "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
         !!! TVM corpus not found at {}: printer corpus tests SKIPPED !!!\n\
         !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n",
        dir.display()
    );
}

fn sorted_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn parser_corpus_round_trips() {
    let dir = corpus_dir().join("parser/ok");
    if !dir.is_dir() {
        skip_loudly(&dir);
        return;
    }
    let (mut total, mut passed) = (0, 0);
    let mut failures = Vec::new();
    for json_path in sorted_files(&dir, ".json") {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        if json.get("tvm_roundtrip") == Some(&serde_json::Value::Bool(false)) {
            continue;
        }
        let expr = json.get("entry").and_then(|e| e.as_str()) == Some("expr");
        let expected_path = json_path.with_extension("expected");
        let Ok(text) = std::fs::read_to_string(&expected_path) else {
            continue;
        };
        total += 1;
        let name = expected_path.file_name().unwrap().to_string_lossy();
        if check(&name, &text, expr, &mut failures) {
            passed += 1;
        }
    }
    eprintln!("printer round trip, parser/ok: {passed}/{total} pass");
    for f in &failures {
        eprintln!("  FAIL {f}");
    }
    assert!(total > 0, "no cases in {}", dir.display());
    assert!(
        passed >= PARSER_MIN,
        "only {passed}/{total} parser cases round-trip (at least {PARSER_MIN} did before)"
    );
}

#[test]
fn model_corpus_round_trips() {
    let dir = corpus_dir().join("models");
    if !dir.is_dir() {
        skip_loudly(&dir);
        return;
    }
    let (mut total, mut passed) = (0, 0);
    let mut failures = Vec::new();
    for path in sorted_files(&dir, ".relay") {
        let text = std::fs::read_to_string(&path).unwrap();
        total += 1;
        let name = path.file_name().unwrap().to_string_lossy();
        if check(&name, &text, false, &mut failures) {
            passed += 1;
        }
    }
    eprintln!("printer round trip, models: {passed}/{total} pass");
    for f in &failures {
        eprintln!("  FAIL {f}");
    }
    assert!(total > 0, "no models in {}", dir.display());
    assert!(
        passed >= MODELS_MIN,
        "only {passed}/{total} models round-trip (at least {MODELS_MIN} did before)"
    );
}

#[test]
fn strip_types_matches_the_conformance_regex() {
    assert_eq!(strip_types("%0 = f(%x) /* ty=int32 */;"), "%0 = f(%x);");
    assert_eq!(strip_types("fn (%x /* ty=int32 */) {"), "fn (%x) {");
    assert_eq!(strip_types("a /* ty=fn (A) -> B */ b"), "a b");
    assert_eq!(strip_types("/* ty=x*/ a"), "/* ty=x*/ a");
    assert_eq!(norm("a  \nb\n\n"), "a\nb");
}
