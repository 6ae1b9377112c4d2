//! Data-driven pass tests: hand-written cases in
//! `test_data/passes/<PassName>/<case>.relay`, one folder per registered
//! pass (the registry's constructor name). Each case names its pipeline (and
//! optionally its opt_level and target) in leading comments:
//!
//! ```text
//! // pipeline: SimplifyInference, FoldConstant
//! // opt-level: 3
//! // target: llvm
//! // config: relay.ToMixedPrecision.keep_orig_output_dtype=true
//! // target.test: nn.relu, concatenate
//! // target.dnnl: nn.max_pool2d = nn.max_pool2d(*) {ceil_mode=False}, add
//! ```
//!
//! A `// target.<name>:` line declares what the BYOC target `<name>`
//! supports for AnnotateTarget (as `relay.toml`'s `[targets.<name>]`, TVM's
//! `register_op_attr(op, "target.<name>")`): operators, each optionally
//! `= <check pattern>` or `= False`; the case's targets are forgotten after
//! it.
//!
//! The module is parsed, type-checked (as `relay opt` does), run through the
//! pipeline and printed with its types; the output is an insta snapshot
//! `tests/snapshots/passes/<PassName>/<case>.snap`. A case whose pipeline
//! fails snapshots the rendered error messages instead, so expected failures
//! are tested too. A registered pass without a folder holding at least one
//! case fails `every_registered_pass_has_cases`.

use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::config::{self, ConfigValue};
use relay_passes::pass_manager::registry;
use relay_passes::pass_manager::{pipeline_from_text, run_pass, PassContext, PassContextOptions};
use relay_passes::patterns::targets::{register_target, unregister_target, OpSupport, TargetOps};
use relay_passes::patterns::text::no_named_patterns;
use relay_passes::printer::{print_module, PrintOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The value of a `// key: value` header line.
fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .take_while(|line| line.starts_with("//"))
        .find_map(|line| {
            let rest = line.trim_start_matches('/').trim();
            rest.strip_prefix(key)
                .and_then(|r| r.strip_prefix(':'))
                .map(|v| v.trim().to_string())
        })
}

/// The `// target.<name>: op, op = check, …` header lines, registered;
/// returns the names registered.
fn register_case_targets(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines().take_while(|line| line.starts_with("//")) {
        let rest = line.trim_start_matches('/').trim();
        let Some((name, ops)) = rest.strip_prefix("target.").and_then(|r| r.split_once(':')) else {
            continue;
        };
        let mut declared = TargetOps::new();
        for entry in split_top_level(ops) {
            let (op, check) = match entry.split_once('=') {
                Some((op, check)) => (op.trim(), Some(check.trim())),
                None => (entry.trim(), None),
            };
            let support = match check {
                Some("False") => OpSupport::Constant(false),
                Some("True") => OpSupport::Constant(true),
                check => OpSupport::parse(check, &no_named_patterns)
                    .unwrap_or_else(|e| panic!("target.{name}: {op}: {}", e.message)),
            };
            declared.insert(op.to_string(), support);
        }
        register_target(name.trim(), declared);
        names.push(name.trim().to_string());
    }
    names
}

/// `text` split at the commas outside brackets and quotes.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    let mut parts = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth -= 1,
            ',' if depth == 0 && !quoted => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

fn run_case(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("the case is readable");
    let targets = register_case_targets(&text);
    let output = run_case_text(path, &text);
    for name in targets {
        unregister_target(&name);
    }
    output
}

fn run_case_text(path: &Path, text: &str) -> String {
    relay_passes::register_builtin_passes();
    // Each case is named as `relay opt` (a process per module) names it,
    // whichever cases ran before.
    relay_passes::ir::build::reset_fresh_let_variables();
    let pipeline = header(text, "pipeline").unwrap_or_else(|| {
        panic!("{} has no `// pipeline:` header", path.display());
    });
    let opt_level = header(text, "opt-level").map_or(2, |v| v.parse().expect("opt-level"));
    let target = header(text, "target");
    let config = header(text, "config")
        .map(|entry| {
            let (key, value) = entry.split_once('=').expect("config: KEY=VALUE");
            let ty = config::config_type(key.trim()).expect("a registered config key");
            let value = ConfigValue::parse_for(value.trim(), ty).expect("a valid config value");
            BTreeMap::from([(key.trim().to_string(), value)])
        })
        .unwrap_or_default();
    let (module, diagnostics) = parse_and_lower(&path.display().to_string(), text);
    assert!(
        !diagnostics.has_errors(),
        "{} does not lower: {:?}",
        path.display(),
        diagnostics.iter().next()
    );
    let pass = pipeline_from_text(&pipeline).expect("the pipeline parses");
    let infer = pipeline_from_text("InferType").expect("InferType exists");
    let ctx = PassContext::new(PassContextOptions {
        opt_level,
        target,
        config,
        ..Default::default()
    })
    .expect("the context is valid");
    let _scope = ctx.enter().expect("the context can be entered");
    let result = run_pass(&*infer, module, &ctx).and_then(|m| run_pass(&*pass, m, &ctx));
    match result {
        Ok(module) => print_module(&module, &PrintOptions::default()),
        Err(error) => {
            let details: Vec<String> = error
                .diagnostics
                .iter()
                .map(|d| d.message.clone())
                .collect();
            format!(
                "error in {}: {}\n{}",
                error.pass,
                error.message,
                details.join("\n")
            )
        }
    }
}

/// `test_data/passes`: one folder per pass.
fn cases_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/passes")
}

/// The `.relay` files directly in `dir`, sorted.
fn relay_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|entry| entry.expect("readable entry").path())
                .filter(|path| path.extension().is_some_and(|e| e == "relay"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Every pass folder with its cases, sorted by pass name.
fn pass_folders() -> Vec<(String, Vec<PathBuf>)> {
    let root = cases_root();
    let mut folders: Vec<(String, Vec<PathBuf>)> = std::fs::read_dir(&root)
        .expect("test_data/passes exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.is_dir())
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            (name, relay_files(&dir))
        })
        .collect();
    folders.sort();
    folders
}

#[test]
fn pass_cases() {
    let folders = pass_folders();
    assert!(
        !folders.is_empty(),
        "no pass folders in {}",
        cases_root().display()
    );
    for (pass, cases) in &folders {
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.set_snapshot_path(format!("snapshots/passes/{pass}"));
        settings.bind(|| {
            for path in cases {
                let name = path.file_stem().unwrap().to_string_lossy().to_string();
                let output = run_case(path);
                insta::assert_snapshot!(name, output);
            }
        });
    }
}

/// Every pass of the builtin registry has a folder of hand-written cases,
/// and every folder names a registered pass (a renamed pass must take its
/// cases along).
#[test]
fn every_registered_pass_has_cases() {
    relay_passes::register_builtin_passes();
    let registered: Vec<String> = registry::all().into_iter().map(|spec| spec.name).collect();
    assert!(!registered.is_empty(), "the builtin registry is empty");
    let folders = pass_folders();
    let without: Vec<&String> = registered
        .iter()
        .filter(|name| {
            !folders
                .iter()
                .any(|(folder, cases)| folder == *name && !cases.is_empty())
        })
        .collect();
    assert!(
        without.is_empty(),
        "registered passes without a case in {}/<PassName>/*.relay: {without:?}",
        cases_root().display()
    );
    let unknown: Vec<&String> = folders
        .iter()
        .map(|(folder, _)| folder)
        .filter(|folder| !registered.contains(folder))
        .collect();
    assert!(
        unknown.is_empty(),
        "case folders that name no registered pass: {unknown:?}"
    );
}
