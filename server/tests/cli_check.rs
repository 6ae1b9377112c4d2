//! `relay check` and `relay explain` end to end, through the built binary:
//! every diagnostic code's example really produces that code; one name
//! error does not hide other functions' type errors; diagnostics are sorted
//! by position, limited per file, cut on long lines, coloured on request
//! and available as JSON Lines; floods of errors from one unclosed group
//! stay small.

use relay_passes::diagnostic::codes::{Code, Run};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn relay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_relay"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relay-cli-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn text_of(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The codes of `relay check --format json FILE`, in output order.
fn json_codes(file: &Path) -> Vec<String> {
    let out = relay()
        .args(["check", "--format", "json"])
        .arg(file)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["code"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn every_code_has_an_explanation_and_an_example_that_produces_it() {
    let mut ids = std::collections::HashSet::new();
    let mut failures = Vec::new();
    for &code in Code::ALL {
        let info = code.info();
        assert!(ids.insert(info.id), "{} is given twice", info.id);
        let well_formed = info.id.len() == 5
            && (info.id.starts_with('E') || info.id.starts_with('W'))
            && info.id[1..].chars().all(|c| c.is_ascii_digit());
        assert!(well_formed, "{}: not a code like E0101", info.id);
        assert!(
            !info.title.is_empty() && info.explanation.len() > 40,
            "{}",
            info.id
        );

        let dir = scratch(info.id);
        let example = info.example;
        let file = write(&dir, "example.relay", example.text);
        let out = match example.run {
            Run::Check => {
                let codes = json_codes(&file);
                if !codes.iter().any(|c| c == info.id) {
                    failures.push(format!("{}: JSON reports {codes:?}", info.id));
                }
                relay().arg("check").arg(&file).output().unwrap()
            }
            Run::Pipeline(pipeline) => relay()
                .args(["check", "--pipeline", pipeline])
                .arg(&file)
                .output()
                .unwrap(),
            Run::Project {
                relay_toml,
                pipeline,
            } => {
                write(&dir, "relay.toml", relay_toml);
                relay()
                    .args(["check", "--pipeline", pipeline])
                    .arg(&file)
                    .output()
                    .unwrap()
            }
            Run::Opt(args) => relay().arg("opt").arg(&file).args(args).output().unwrap(),
            Run::Lenient => {
                // Strict reading keeps TVM's verdict: the warning is only
                // given when reading leniently.
                let strict = relay().arg("check").arg(&file).output().unwrap();
                if text_of(&strict).contains(&format!("[{}]", info.id)) {
                    failures.push(format!("{}: reported without --lenient", info.id));
                }
                relay()
                    .args(["check", "--lenient"])
                    .arg(&file)
                    .output()
                    .unwrap()
            }
            Run::Upgrade => relay()
                .args(["fmt", "--upgrade"])
                .arg(&file)
                .output()
                .unwrap(),
            Run::DiffWith(other) => {
                let other = write(&dir, "other.relay", other);
                relay().arg("diff").arg(&file).arg(&other).output().unwrap()
            }
            Run::Run(args) => relay().arg("run").arg(&file).args(args).output().unwrap(),
            // Only a bug of relay itself produces it.
            Run::NotReproducible => {
                assert_eq!(
                    code,
                    Code::InternalError,
                    "only internal errors lack an example"
                );
                continue;
            }
        };
        let text = text_of(&out);
        let severity = if code.is_warning() {
            "warning"
        } else {
            "error"
        };
        if !text.contains(&format!("{severity}[{}]", info.id)) {
            failures.push(format!("{}: the example reports\n{text}", info.id));
        }

        // `relay explain` prints the paragraph's start and the example.
        let out = relay().args(["explain", info.id]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let explained = String::from_utf8_lossy(&out.stdout);
        assert!(explained.starts_with(&format!("{}: {}", info.id, info.title)));
        let first_words: String = info
            .explanation
            .split_whitespace()
            .take(4)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(explained.contains(&first_words), "{explained}");
        let first_line = example.text.lines().next().unwrap();
        assert!(explained.contains(first_line), "{explained}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn explain_reads_codes_as_rustc_does_and_rejects_unknown_ones() {
    let out = relay().args(["explain", "e0101"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("E0101: undeclared local variable"));
    let out = relay().args(["explain", "E9999"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = relay().arg("explain").output().unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(listed.lines().count(), Code::ALL.len(), "{listed}");
}

/// Issue 14, defect 4: an undeclared `%y` (or an unknown operator) in one
/// function hid every type error of the others.
#[test]
fn a_name_error_does_not_hide_type_errors_of_other_functions() {
    let dir = scratch("per-definition");
    let good =
        "def @good(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) { add(%a, %b) }\n";
    for bad in ["add(%x, %y)", "nn.rleu(%x)"] {
        let file = write(
            &dir,
            "m.relay",
            &format!("#[version = \"0.0.5\"]\n{good}def @bad(%x: float32) {{ {bad} }}\n"),
        );
        let codes = json_codes(&file);
        // Sorted by position: the type error of @good comes first.
        assert_eq!(codes[0], "E0202", "{bad}: {codes:?}");
        assert!(
            codes[1] == "E0101" || codes[1] == "E0103",
            "{bad}: {codes:?}"
        );
        assert_eq!(codes.len(), 2, "{codes:?}");
    }
}

#[test]
fn an_unclosed_group_is_labelled_at_its_opener() {
    let dir = scratch("unclosed");
    let file = write(
        &dir,
        "m.relay",
        "#[version = \"0.0.5\"]\ndef @main(%x: float32) {\n  add(%x, %x\n}\n",
    );
    let out = relay()
        .args(["check", "--color", "never"])
        .arg(&file)
        .output()
        .unwrap();
    let text = text_of(&out);
    assert!(
        text.contains("error[E0004]: expected `)` found `}`"),
        "{text}"
    );
    assert!(text.contains("this `(` is never closed"), "{text}");
    assert!(
        text.contains("3 │   add(%x, %x\n  │      - this `(`"),
        "{text}"
    );
}

/// Issue 14, defect 4: a type error about an attribute is shown at the
/// attribute's value, with the call labelled; the message is TVM's.
#[test]
fn an_attribute_error_points_at_the_value() {
    let dir = scratch("attribute");
    let file = write(
        &dir,
        "m.relay",
        "#[version = \"0.0.5\"]\n\
         def @main(%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]) {\n  \
         nn.bias_add(%x, %b, axis=4)\n}\n",
    );
    let out = relay()
        .args(["check", "--color", "never"])
        .arg(&file)
        .output()
        .unwrap();
    let text = text_of(&out);
    assert!(
        text.contains("error[E0202]: The axis in bias_add must be in range for the shape; attempted to access index 4 of [2, 3]"),
        "{text}"
    );
    // The caret under `4`, the call underlined and labelled.
    assert!(
        text.contains("m.relay:3:28\n")
            && text
                .contains("3 │   nn.bias_add(%x, %b, axis=4)\n  │   -------------------------^-\n")
            && text.contains("in this call"),
        "{text}"
    );
}

/// Issue 15, item 4: `def @main(` and 16,000 `(` printed 386 MB of errors;
/// 8,000 `let`s the same.
#[test]
fn floods_of_errors_stay_small() {
    let dir = scratch("floods");
    let parens = write(
        &dir,
        "parens.relay",
        &format!("#[version = \"0.0.5\"]\ndef @main({}\n", "(".repeat(16_000)),
    );
    let lets = write(
        &dir,
        "lets.relay",
        &format!(
            "#[version = \"0.0.5\"]\ndef @main() {{ {}}}\n",
            "let ".repeat(8_000)
        ),
    );
    for file in [parens, lets] {
        let out = relay().arg("check").arg(&file).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(
            out.stderr.len() < 2_000,
            "{} bytes of errors:\n{}",
            out.stderr.len(),
            String::from_utf8_lossy(&out.stderr[..out.stderr.len().min(3000)])
        );
        // Every shown source line is cut.
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(text.lines().all(|l| l.chars().count() < 200), "{text}");
    }
}

#[test]
fn errors_are_limited_per_file() {
    let dir = scratch("limit");
    let uses: Vec<String> = (0..150).map(|i| format!("%u{i}")).collect();
    let file = write(
        &dir,
        "m.relay",
        &format!(
            "#[version = \"0.0.5\"]\ndef @main() {{\n  ({})\n}}\n",
            uses.join(",\n   ")
        ),
    );
    let count = |args: &[&str]| {
        let out = relay().arg("check").args(args).arg(&file).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8_lossy(&out.stderr).to_string();
        (text.matches("error[E0101]").count(), text)
    };
    let (shown, text) = count(&[]);
    assert_eq!(shown, 100);
    assert!(
        text.contains("50 more errors not shown (--max-errors)"),
        "{text}"
    );
    let (shown, text) = count(&["--max-errors", "3"]);
    assert_eq!(shown, 3);
    assert!(text.contains("147 more errors not shown"), "{text}");
    let (shown, text) = count(&["--max-errors", "0"]);
    assert_eq!(shown, 150);
    assert!(!text.contains("not shown"));
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let dir = scratch("colour");
    let file = write(
        &dir,
        "m.relay",
        "#[version = \"0.0.5\"]\ndef @main() { %y }\n",
    );
    let has_escape = |out: Output| out.stderr.contains(&0x1b);
    // Piped (as here): plain, whatever NO_COLOR says.
    assert!(!has_escape(
        relay().arg("check").arg(&file).output().unwrap()
    ));
    assert!(!has_escape(
        relay()
            .args(["check", "--color", "never"])
            .arg(&file)
            .output()
            .unwrap()
    ));
    assert!(has_escape(
        relay()
            .args(["check", "--color", "always"])
            .arg(&file)
            .output()
            .unwrap()
    ));
    assert!(has_escape(
        relay()
            .args(["check", "--color", "always"])
            .env("NO_COLOR", "1")
            .arg(&file)
            .output()
            .unwrap()
    ));
}

#[test]
fn json_output_has_one_object_per_diagnostic() {
    let dir = scratch("json");
    let file = write(
        &dir,
        "m.relay",
        "#[version = \"0.0.5\"]\ndef @main(%x: float32) {\n  add(%x, %y)\n}\n",
    );
    let out = relay()
        .args(["check", "--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let objects: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects.len(), 1, "{stdout}");
    let d = &objects[0];
    assert_eq!(d["code"], "E0101");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["file"], file.display().to_string());
    assert_eq!(
        d["message"],
        "this local variable has not been previously declared"
    );
    assert_eq!(d["range"]["start"]["line"], 3);
    assert_eq!(d["range"]["start"]["column"], 11);
    let byte = "#[version = \"0.0.5\"]\ndef @main(%x: float32) {\n  add(%x, ".len();
    assert_eq!(d["range"]["start"]["byte"], byte);
    assert_eq!(d["range"]["end"]["byte"], byte + 2);
    assert!(d.get("help").is_some(), "{d}");
    assert!(d["labels"].is_array() && d["notes"].is_array());
}
