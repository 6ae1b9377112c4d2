//! Data-driven pass tests: every `test_data/pass_cases/*.relay` names its
//! pipeline (and optionally its opt_level) in leading comments:
//!
//! ```text
//! // pipeline: SimplifyInference, FoldConstant
//! // opt-level: 3
//! // target: llvm
//! ```
//!
//! The module is parsed, type-checked (as `relay opt` does), run through the
//! pipeline and printed with its types; the output is an insta snapshot
//! named after the file. A case whose pipeline fails snapshots the rendered
//! error messages instead, so expected failures are tested too.

use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::{pipeline_from_text, run_pass, PassContext, PassContextOptions};
use relay_passes::printer::{print_module, PrintOptions};
use std::path::Path;

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

fn run_case(path: &Path) -> String {
    relay_passes::register_builtin_passes();
    let text = std::fs::read_to_string(path).expect("the case is readable");
    let pipeline = header(&text, "pipeline").unwrap_or_else(|| {
        panic!("{} has no `// pipeline:` header", path.display());
    });
    let opt_level = header(&text, "opt-level").map_or(2, |v| v.parse().expect("opt-level"));
    let target = header(&text, "target");
    let (module, diagnostics) = parse_and_lower(&path.display().to_string(), &text);
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

#[test]
fn pass_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/pass_cases");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("test_data/pass_cases exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "relay"))
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases in {}", dir.display());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots/pass_cases");
    settings.bind(|| {
        for path in &cases {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let output = run_case(path);
            insta::assert_snapshot!(name, output);
        }
    });
}
