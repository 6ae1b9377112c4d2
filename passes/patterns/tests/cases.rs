//! Data-driven tests of the pattern language.
//!
//! `test_data/match/<case>.relay`: a Relay expression (a function's body is
//! what patterns see) and header lines, each checked or run in order:
//!
//! ```text
//! // match: nn.conv2d(*, *)          the pattern must match the root
//! // no match: nn.dense(*, *)        … must not
//! // typed                           infer types before what follows
//! // rewrite: negative($x) => $x     rewrite with the rule; prints the result,
//! // partition: nn.relu(*)           partition; prints the result (later
//!                                    lines see the result)
//! // check: nn.relu(*)               later partitions only where the root
//!                                    also matches this (TVM's `check`)
//! // rule: add($x, 0f) => $x         collects a rule …
//! // rewrite-rules                   … and rewrites with all collected rules
//! ```
//!
//! `test_data/syntax/<case>.pat`: one pattern per line (`#` lines are
//! comments); a line that parses prints back in the canonical syntax, one
//! that does not prints its error with carets.
//!
//! Outputs are insta snapshots under `tests/snapshots/`; `match`/`no
//! match` lines are also asserted here.

use relay_ir::printer::{print_expr, PrintOptions};
use relay_ir::{Expr, ExprKind, Function, FunctionData};
use relay_patterns::rewrite::{partition, rewrite};
use relay_patterns::rule::parse_rewrite_rule;
use relay_patterns::text::{no_named_patterns, parse_pattern, render_error};
use relay_patterns::{matches, Pattern};
use std::path::{Path, PathBuf};

fn cases(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(dir);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no cases in {}", dir.display());
    out
}

fn parse(text: &str) -> Pattern {
    parse_pattern(text, &no_named_patterns)
        .unwrap_or_else(|e| panic!("{}", render_error(text, &e)))
        .pattern
}

/// The expression patterns see: the body of a function, else the root.
fn scope(root: &Expr) -> Expr {
    match root.kind() {
        ExprKind::Function(f) => f.body.clone(),
        _ => root.clone(),
    }
}

/// `root` with its scope replaced by `new`.
fn with_scope(root: &Expr, new: Expr) -> Expr {
    match root.as_function() {
        Some(f) => {
            let d = f.data();
            Function::new(
                FunctionData {
                    params: d.params.clone(),
                    body: new,
                    ret_type: d.ret_type.clone(),
                    type_params: d.type_params.clone(),
                    attrs: d.attrs.clone(),
                    virtual_device: d.virtual_device.clone(),
                },
                root.span(),
            )
            .into_expr()
        }
        None => new,
    }
}

fn print(e: &Expr) -> String {
    print_expr(e, &PrintOptions::default())
}

fn run_match_case(path: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("readable");
    let (mut root, diagnostics) =
        relay_lower::parse_and_lower_expr(&path.display().to_string(), &text);
    assert!(
        !diagnostics.iter().any(|d| d.is_error()),
        "{}: {:?}",
        path.display(),
        diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut rules: Vec<String> = Vec::new();
    let mut check: Option<Pattern> = None;
    for line in text.lines().take_while(|l| l.starts_with("//")) {
        let line = line.trim_start_matches('/').trim();
        if line == "rewrite-rules" {
            let callbacks: Vec<_> = rules
                .drain(..)
                .map(|r| {
                    parse_rewrite_rule(&r, &no_named_patterns)
                        .unwrap_or_else(|e| panic!("{}", render_error(&r, &e)))
                        .into_callback()
                })
                .collect();
            let out = rewrite(&callbacks, &scope(&root), None)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            root = with_scope(&root, out);
            report.push_str(&format!("rewrite with the rules above\n{}\n", print(&root)));
            continue;
        }
        if line == "typed" {
            let (typed, diags) = relay_infer::infer_expr(&root, None);
            assert!(
                !diags.iter().any(|d| d.is_error()),
                "{}: type errors",
                path.display()
            );
            root = typed;
            continue;
        }
        let Some((key, arg)) = line.split_once(':') else {
            continue;
        };
        let arg = arg.trim();
        match key.trim() {
            "match" | "no match" => {
                let want = key.trim() == "match";
                let got = matches(&parse(arg), &scope(&root));
                report.push_str(&format!("{key}: {arg} -> {got}\n"));
                if got != want {
                    failures.push(format!("{}: `{arg}` matched: {got}", path.display()));
                }
            }
            "rewrite" => {
                let rule = parse_rewrite_rule(arg, &no_named_patterns)
                    .unwrap_or_else(|e| panic!("{}", render_error(arg, &e)));
                let out = rewrite(&[rule.into_callback()], &scope(&root), None)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                root = with_scope(&root, out);
                report.push_str(&format!("rewrite: {arg}\n{}\n", print(&root)));
            }
            "rule" => rules.push(arg.to_string()),
            "check" => check = Some(parse(arg)),
            "partition" => {
                let out = match &check {
                    Some(c) => partition(&parse(arg), &scope(&root), &[], &|e| matches(c, e)),
                    None => partition(&parse(arg), &scope(&root), &[], &|_| true),
                };
                root = with_scope(&root, out);
                report.push_str(&format!("partition: {arg}\n{}\n", print(&root)));
            }
            _ => {}
        }
    }
    (report, failures)
}

#[test]
fn match_cases() {
    let mut failures = Vec::new();
    for path in cases("match", "relay") {
        let (report, failed) = run_match_case(&path);
        failures.extend(failed);
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        insta::with_settings!({snapshot_path => "snapshots/match", prepend_module_to_snapshot => false, omit_expression => true}, {
            insta::assert_snapshot!(name, report);
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn syntax_cases() {
    for path in cases("syntax", "pat") {
        let text = std::fs::read_to_string(&path).expect("readable");
        let mut report = String::new();
        for line in text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            report.push_str(&format!("> {line}\n"));
            match parse_pattern(line, &no_named_patterns) {
                Ok(parsed) => {
                    let printed = parsed.pattern.to_string();
                    // The canonical text reads back to the same text.
                    let again = parse(&printed).to_string();
                    assert_eq!(printed, again, "{}: {line}", path.display());
                    report.push_str(&format!("{printed}\n"));
                }
                Err(e) => report.push_str(&render_error(line, &e)),
            }
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        insta::with_settings!({snapshot_path => "snapshots/syntax", prepend_module_to_snapshot => false, omit_expression => true}, {
            insta::assert_snapshot!(name, report);
        });
    }
}
