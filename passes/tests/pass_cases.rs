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
//! // check-semantics: 3
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
//! `check-semantics: N` also runs the module before and after the whole
//! pipeline on N seeded random inputs with the reference interpreter (the
//! `--check-semantics=end` instrument) and fails unless the results agree —
//! what TVM's own tests check by running both modules (e.g.
//! `compare_fq_to_int`). A case whose module cannot run, or that the
//! pipeline leaves unchanged, fails too: the header must check something.
//!
//! `evaluate: @f ~= EXPR` runs the global function `@f` of the pipeline's
//! result with the reference interpreter on [`EVALUATE_SEEDS`] seeded random
//! arguments and compares its value with `EXPR` — a Relay expression over
//! `@f`'s parameters (as they are in the case's module), e.g.
//! `(multiply(%x, 2f), (full(2f, shape=[10, 10], dtype="float32"),))` —
//! evaluated on the same arguments: what TVM's tests check by comparing the
//! executor's result with NumPy values. A case whose result cannot run, or
//! whose value holds no tensor to compare, fails.
//!
//! A case may end with a `#[metadata]` section, as TVM's parser reads one:
//! virtual devices, tensor constants (`meta[relay.Constant][N]`, base64
//! NDArrays), attribute objects.
//!
//! The module is parsed, type-checked (as `relay opt` does), run through the
//! pipeline and printed with its types; the output is an insta snapshot
//! `tests/snapshots/passes/<PassName>/<case>.snap`. A case whose pipeline
//! fails snapshots the rendered error messages instead, so expected failures
//! are tested too. A registered pass without a folder holding at least one
//! case fails `every_registered_pass_has_cases`.

use relay_passes::interp::check::{CheckMode, CheckOptions, SemanticCheck};
use relay_passes::ir::metadata::{subgraphs_equal, ObjectGraph};
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::config::{self, ConfigValue};
use relay_passes::pass_manager::registry;
use relay_passes::pass_manager::{pipeline_from_text, run_pass, PassContext, PassContextOptions};
use relay_passes::patterns::targets::{register_target, unregister_target, OpSupport, TargetOps};
use relay_passes::patterns::text::no_named_patterns;
use relay_passes::printer::{print_module, PrintOptions};
use relay_test_support::files::case_header;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    let check = case_header(&text, "check-semantics").map(|inputs| {
        Arc::new(SemanticCheck::new(CheckOptions {
            mode: CheckMode::End,
            inputs: inputs.parse().expect("check-semantics: a number of inputs"),
            ..Default::default()
        }))
    });
    let targets = register_case_targets(&text);
    let result = run_pipeline(path, &text, &text, check.clone());
    for name in targets {
        unregister_target(&name);
    }
    if let Some(check) = &check {
        if let Some(report) = check.report() {
            panic!("{}: {report}", path.display());
        }
        let stats = check.stats();
        assert!(
            stats.checked > 0 && stats.checked == stats.agreed,
            "{}: `check-semantics` compared nothing: {}",
            path.display(),
            stats.render()
        );
    }
    if let Some(evaluate) = case_header(&text, "evaluate") {
        let module = result.as_ref().unwrap_or_else(|e| {
            panic!("{}: `evaluate` on a failing pipeline: {e}", path.display())
        });
        evaluate_result(path, &text, module, &evaluate);
    }
    match result {
        Ok(module) => print_module(&module, &PrintOptions::default()),
        Err(error) => error,
    }
}

/// How many seeded random argument lists `// evaluate:` runs on.
const EVALUATE_SEEDS: u64 = 2;

/// The `// evaluate: @f ~= EXPR` check (see the module documentation):
/// `EXPR` becomes the body of a function `@__expected` with `@f`'s
/// parameters, added to the case's module.
fn evaluate_result(path: &Path, text: &str, result: &IRModule, evaluate: &str) {
    use relay_passes::interp::{compare::compare, print::value_text, random_arguments, Limits};
    let (entry, expected_text) = evaluate
        .strip_prefix('@')
        .and_then(|rest| rest.split_once("~="))
        .unwrap_or_else(|| panic!("{}: `evaluate: @f ~= EXPR` expected", path.display()));
    let entry = entry.trim();
    let typed = |source: &str| {
        let (module, diagnostics) = parse_and_lower(&path.display().to_string(), source);
        assert!(
            !diagnostics.has_errors(),
            "{}: does not lower: {:?}",
            path.display(),
            diagnostics.iter().next()
        );
        let (typed, diagnostics) = relay_passes::infer::infer_module(&module);
        assert!(
            !diagnostics.has_errors(),
            "{}: does not type-check: {:?}",
            path.display(),
            diagnostics.iter().next()
        );
        typed
    };
    let input = typed(text);
    let function = input
        .function(entry)
        .unwrap_or_else(|| panic!("{}: no @{entry} in the case's module", path.display()));
    let params: Vec<String> = (0..function.params().len())
        .map(|i| {
            let ty = relay_passes::interp::param_type(function, i).expect("typed parameters");
            format!(
                "%{}: {}",
                function.params()[i].name(),
                relay_passes::printer::print_type(&ty)
            )
        })
        .collect();
    // The new function goes before the metadata section, which ends a module.
    let (definitions, metadata) = match text.find("\n#[metadata]") {
        Some(at) => text.split_at(at),
        None => (text, ""),
    };
    let expected_module = typed(&format!(
        "{definitions}\ndef @__expected({}) {{\n  {}\n}}\n{metadata}",
        params.join(", "),
        expected_text.trim()
    ));
    let mut compared = 0;
    for seed in 0..EVALUATE_SEEDS {
        let args = random_arguments(function, seed, Limits::default())
            .unwrap_or_else(|e| panic!("{}: arguments: {e}", path.display()));
        let run = |module: &IRModule, name: &str| {
            relay_passes::interp::run(module, name, args.clone(), Limits::default())
                .unwrap_or_else(|e| panic!("{}: running @{name}: {}", path.display(), e.message))
        };
        let actual = run(result, entry);
        let expected = run(&expected_module, "__expected");
        if let Some(difference) = compare(&expected, &actual) {
            panic!(
                "{}: @{entry} on seed {seed} differs from the expected value: {difference}\n\
                 expected: {}\nactual: {}",
                path.display(),
                value_text(&expected),
                value_text(&actual)
            );
        }
        compared += expected.leaves().len();
    }
    assert!(
        compared > 0,
        "{}: `evaluate` compared no tensor",
        path.display()
    );
}

/// Runs the pipeline the `// …:` headers of `headers` name on the module
/// `module_text` (after InferType, as `relay opt` does), with the semantic
/// `check` among the pipeline's instruments when given; an error is the
/// rendered messages.
fn run_pipeline(
    path: &Path,
    headers: &str,
    module_text: &str,
    check: Option<Arc<SemanticCheck>>,
) -> Result<IRModule, String> {
    relay_passes::register_builtin_passes();
    // Each case is named as `relay opt` (a process per module) names it,
    // whichever cases ran before.
    relay_passes::ir::build::reset_fresh_let_variables();
    let text = headers;
    let pipeline = case_header(text, "pipeline").unwrap_or_else(|| {
        panic!("{} has no `// pipeline:` header", path.display());
    });
    let opt_level = case_header(text, "opt-level").map_or(2, |v| v.parse().expect("opt-level"));
    let target = case_header(text, "target");
    let config = case_header(text, "config")
        .map(|entry| {
            let (key, value) = entry.split_once('=').expect("config: KEY=VALUE");
            let ty = config::config_type(key.trim()).expect("a registered config key");
            let value = ConfigValue::parse_for(value.trim(), ty).expect("a valid config value");
            BTreeMap::from([(key.trim().to_string(), value)])
        })
        .unwrap_or_default();
    let (module, diagnostics) = parse_and_lower(&path.display().to_string(), module_text);
    assert!(
        !diagnostics.has_errors(),
        "{} does not lower: {:?}",
        path.display(),
        diagnostics.iter().next()
    );
    let pass = pipeline_from_text(&pipeline).expect("the pipeline parses");
    let infer = pipeline_from_text("InferType").expect("InferType exists");
    // InferType runs outside the instrumented context: the check compares
    // around the case's pipeline only.
    let typed = {
        let ctx = PassContext::new(PassContextOptions::default()).expect("a context");
        run_pass(&*infer, module, &ctx)
    };
    let ctx = PassContext::new(PassContextOptions {
        opt_level,
        target,
        config,
        instruments: check.into_iter().map(|c| c as _).collect(),
        ..Default::default()
    })
    .expect("the context is valid");
    let _scope = ctx.enter().expect("the context can be entered");
    typed
        .and_then(|m| run_pass(&*pass, m, &ctx))
        .map_err(|error| {
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
        })
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

/// `module` typed and printed, split into its text and the objects of its
/// metadata table by key (compared structurally: two printings number
/// their objects differently).
fn typed_print(path: &Path, module: IRModule) -> (String, ObjectGraph) {
    let (typed, diagnostics) = relay_passes::infer::infer_module(&module);
    assert!(
        !diagnostics.has_errors(),
        "{}: the result does not type-check: {:?}",
        path.display(),
        diagnostics.iter().next()
    );
    let printed = print_module(&typed, &PrintOptions::default());
    match printed.split_once("#[metadata]") {
        Some((text, meta)) => (
            text.to_string(),
            ObjectGraph::parse(meta).expect("the printed metadata reads back"),
        ),
        None => (
            printed,
            ObjectGraph::parse("{\"root\": 0, \"nodes\": [{\"type_key\": \"\"}]}").expect("empty"),
        ),
    }
}

/// The two printings with each `meta[KEY][i]` replaced by `meta[KEY]<n>`,
/// `n` numbering the objects of both tables up to structural equality: TVM
/// compares virtual devices structurally, while the printer numbers
/// objects by identity (a device the pass made and an equal one it kept
/// are two objects).
fn normalized(a: &(String, ObjectGraph), b: &(String, ObjectGraph)) -> (String, String) {
    let mut classes: Vec<(usize, usize)> = Vec::new(); // (graph 0|1, node)
    let graphs = [&a.1, &b.1];
    let mut rename = |which: usize, text: &str| -> String {
        let Ok(table) = graphs[which].table() else {
            return text.to_string();
        };
        let mut out = text.to_string();
        let keys: Vec<&str> = table.keys().collect();
        for key in keys {
            let entries = table.entries(key).unwrap_or_default();
            // Highest index first, so `[1]` does not rewrite part of `[10]`.
            for (i, node) in entries.iter().enumerate().rev() {
                let class = classes
                    .iter()
                    .position(|&(g, n)| subgraphs_equal(graphs[g], n, graphs[which], node.index()))
                    .unwrap_or_else(|| {
                        classes.push((which, node.index()));
                        classes.len() - 1
                    });
                out = out.replace(
                    &format!("meta[{key}][{i}]"),
                    &format!("meta[{key}]<{class}>"),
                );
            }
        }
        out
    };
    let na = rename(0, &a.0);
    let nb = rename(1, &b.0);
    (na, nb)
}

/// A case with a file of the same name under `expected/` (the module the
/// TVM test it ports expects) must give that module, typed, and give it
/// back when run on it (TVM's tests check both: correctness and
/// idempotence).
#[test]
fn cases_give_their_expected_modules() {
    let mut checked = 0;
    for (_, cases) in pass_folders() {
        for path in cases {
            let expected_path = path
                .parent()
                .unwrap()
                .join("expected")
                .join(path.file_name().unwrap());
            let Ok(expected_text) = std::fs::read_to_string(&expected_path) else {
                continue;
            };
            let text = std::fs::read_to_string(&path).expect("the case is readable");
            let (module, _) = parse_and_lower(&expected_path.display().to_string(), &expected_text);
            let expected = typed_print(&expected_path, module);
            for (what, input) in [("input", &text), ("expected module", &expected_text)] {
                let actual = run_pipeline(&path, &text, input, None)
                    .unwrap_or_else(|e| panic!("{} ({what}): {e}", path.display()));
                let actual = typed_print(&path, actual);
                let (actual, expected) = normalized(&actual, &expected);
                assert_eq!(
                    actual,
                    expected,
                    "{} ({what}) differs from {}",
                    path.display(),
                    expected_path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no case has an expected module");
}
