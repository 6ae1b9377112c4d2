//! InferType against TVM's recorded results (`../shared/tvm`):
//!
//! * `passes/InferType/NNNN.{before,after}.relay`: the before text is parsed
//!   and lowered, inferred once (TVM's parser runs InferType), inferred
//!   again (the record's pipeline), printed with types, and compared with
//!   the after text, ignoring white space at line ends;
//! * `models/NAME.relay` → `models/NAME.typed.relay`, the same way;
//! * `parser/ok/NNNN.expected` of module entries (`relay opt X.expected -p
//!   InferType` must reproduce `X.expected`: the `parser.typed_roundtrip`
//!   metric of `shared/tools/conformance.py`).
//!
//! Each group must keep at least the number of cases it reached when this
//! test was written; a failure lists the first cases that differ.

mod common;

use common::{first_difference, first_error, normalize, read, sorted_files};
use relay_passes::infer::infer_module;
use relay_passes::lower::parse_and_lower;
use relay_passes::printer::{print_module, PrintOptions};
use std::path::Path;

/// Cases that must pass, per group (raise these when more pass).
const MIN_INFER_TYPE: usize = 738;
const MIN_MODELS: usize = 17;
const MIN_TYPED_ROUNDTRIP: usize = 171;

/// `relay opt FILE -p InferType`: parse, lower, InferType (the parser's),
/// InferType again, print. `Err` when anything reports an error.
fn opt_infer_type(name: &str, text: &str) -> Result<String, String> {
    let (m, d) = parse_and_lower(name, text);
    if d.has_errors() {
        return Err(format!("lowering: {}", first_error(&d)));
    }
    let (m, d) = infer_module(&m);
    if d.has_errors() {
        return Err(format!("parser's InferType: {}", first_error(&d)));
    }
    let (m, d) = infer_module(&m);
    if d.has_errors() {
        return Err(format!("InferType: {}", first_error(&d)));
    }
    Ok(print_module(&m, &PrintOptions::default()))
}

struct Tally {
    group: &'static str,
    passed: usize,
    total: usize,
    failures: Vec<String>,
}

impl Tally {
    fn new(group: &'static str) -> Tally {
        Tally {
            group,
            passed: 0,
            total: 0,
            failures: Vec::new(),
        }
    }

    fn check(&mut self, case: &str, input: &str, expected: &str) {
        self.total += 1;
        let name = case.to_string();
        let input = input.to_string();
        // Large inputs are lowered and printed on a thread with room.
        let result = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || opt_infer_type(&name, &input))
            .expect("spawn")
            .join()
            .unwrap_or_else(|_| Err("panicked".to_string()));
        match result {
            Ok(out) if normalize(&out) == normalize(expected) => self.passed += 1,
            Ok(out) => self.failures.push(format!(
                "{case}: {}",
                first_difference(&normalize(&out), &normalize(expected))
            )),
            Err(e) => self.failures.push(format!("{case}: {e}")),
        }
    }

    fn report(&self, min: usize) -> bool {
        eprintln!("{}: {}/{} equal", self.group, self.passed, self.total);
        for f in self.failures.iter().take(15) {
            eprintln!("  FAIL {f}");
        }
        self.passed >= min
    }
}

#[test]
fn infer_type_records() {
    let Some(root) = common::corpus("infer_corpus") else {
        return;
    };
    let mut tally = Tally::new("passes/InferType");
    for json in sorted_files(&root.join("passes/InferType"), ".json") {
        let meta = read(&json);
        let base = json.to_string_lossy().trim_end_matches(".json").to_string();
        if meta.contains("\"error\"") {
            continue;
        }
        let before = read(Path::new(&format!("{base}.before.relay")));
        let after = read(Path::new(&format!("{base}.after.relay")));
        let name = Path::new(&base)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        tally.check(&name, &before, &after);
    }
    assert!(
        tally.report(MIN_INFER_TYPE),
        "fewer InferType records pass than before"
    );
}

#[test]
fn typed_models() {
    let Some(root) = common::corpus("infer_corpus") else {
        return;
    };
    let mut tally = Tally::new("models (typed)");
    for model in sorted_files(&root.join("models"), ".relay") {
        let file = model.file_name().unwrap().to_string_lossy().to_string();
        if file.matches('.').count() != 1 {
            continue;
        }
        let typed = model.with_extension("typed.relay");
        if !typed.exists() {
            continue;
        }
        tally.check(&file, &read(&model), &read(&typed));
    }
    assert!(
        tally.report(MIN_MODELS),
        "fewer typed models pass than before"
    );
}

#[test]
fn parser_typed_roundtrip() {
    let Some(root) = common::corpus("infer_corpus") else {
        return;
    };
    let mut tally = Tally::new("parser.typed_roundtrip");
    for json in sorted_files(&root.join("parser/ok"), ".json") {
        let meta = read(&json);
        let compact: String = meta.chars().filter(|c| !c.is_whitespace()).collect();
        if compact.contains("\"entry\":\"expr\"") || compact.contains("\"tvm_roundtrip\":false") {
            continue;
        }
        let expected = json.with_extension("expected");
        let text = read(&expected);
        let name = expected.file_name().unwrap().to_string_lossy().to_string();
        tally.check(&name, &text, &text);
    }
    assert!(
        tally.report(MIN_TYPED_ROUNDTRIP),
        "fewer typed round trips pass than before"
    );
}
