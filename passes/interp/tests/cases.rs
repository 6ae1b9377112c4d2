//! The interpreter on hand-written programs, one per construct
//! (`tests/cases/*.relay`): each is type-checked, its `@main` run on
//! random inputs of seed 0, and the inputs with the result (or the error
//! with the line and column of the failing expression) compared with the
//! snapshot `tests/snapshots/cases__<name>.snap`.

use relay_interp::{bind_arguments, print, run, Limits};
use std::path::Path;

fn run_case(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let (module, diagnostics) = relay_lower::parse_and_lower("case.relay", &text);
    assert!(!diagnostics.has_errors(), "{path:?}: {diagnostics:?}");
    let (module, diagnostics) = relay_infer::infer_module(&module);
    assert!(!diagnostics.has_errors(), "{path:?}: {diagnostics:?}");
    let main = module.function("main").expect("a @main");
    let args = bind_arguments(main, &[], Some(0), Limits::default()).unwrap();
    let mut out = String::new();
    for (param, arg) in main.params().iter().zip(&args) {
        out.push_str(&format!(
            "input %{} = {}",
            param.name(),
            print::value_text(arg)
        ));
    }
    match run(&module, "main", args, Limits::default()) {
        Ok(value) => out.push_str(&format!("output = {}", print::value_text(&value))),
        Err(error) => {
            let at = error.span.map(|span| {
                let file = module.sources.get(span.file).unwrap();
                let (line, col) = file.line_col(span.range.start());
                let end = usize::from(span.range.end()).min(text.len());
                let start = usize::from(span.range.start());
                let snippet = text[start..end].lines().next().unwrap_or("");
                format!("{}:{}: `{snippet}`", line + 1, col + 1)
            });
            out.push_str(&format!(
                "error at {}: {error}\n",
                at.unwrap_or_else(|| "<no span>".into())
            ));
        }
    }
    out
}

#[test]
fn every_case() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 15, "the cases are missing");
    for path in paths {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let out = run_case(&path);
        insta::with_settings!({ snapshot_suffix => name.clone(), prepend_module_to_snapshot => false, omit_expression => true }, {
            insta::assert_snapshot!("case", out);
        });
    }
}
