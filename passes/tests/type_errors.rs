//! Snapshots of type errors: each `test_data/type_err/NAME.relay` is lowered
//! (without errors) and inferred; the diagnostics are rendered as plain
//! text (message, `line:col` range, labels, notes) and compared with the
//! snapshot `snapshots/type_errors__NAME.snap`.

use relay_passes::diagnostic::Diagnostic;
use relay_passes::infer::infer_module;
use relay_passes::lower::parse_and_lower;
use relay_passes::source::{SourceMap, Span};
use std::path::Path;

fn at(sources: &SourceMap, span: Option<Span>) -> String {
    let Some(span) = span else {
        return "(no location)".to_string();
    };
    let Some(file) = sources.get(span.file) else {
        return "(unknown file)".to_string();
    };
    let (l1, c1) = file.line_col(span.range.start());
    let (l2, c2) = file.line_col(span.range.end());
    format!("{}:{}-{}:{}", l1 + 1, c1 + 1, l2 + 1, c2 + 1)
}

fn render(sources: &SourceMap, d: &Diagnostic) -> String {
    let mut out = format!(
        "{} [{}] at {}\n",
        d.severity,
        d.layer.as_str(),
        at(sources, d.span)
    );
    for line in d.message.lines() {
        out.push_str(&format!("  | {line}\n"));
    }
    for label in &d.labels {
        out.push_str(&format!(
            "  label at {}: {}\n",
            at(sources, Some(label.span)),
            label.message
        ));
    }
    for note in &d.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    out
}

#[test]
fn type_error_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/type_err");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("test_data/type_err")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "expected at least 20 type error cases");
    let mut distinct = std::collections::BTreeSet::new();
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let (module, lowering) = parse_and_lower(&format!("{name}.relay"), &text);
        assert!(
            !lowering.has_errors(),
            "{name}: lowering failed: {:?}",
            lowering.iter().map(|d| &d.message).collect::<Vec<_>>()
        );
        let (_, diagnostics) = infer_module(&module);
        assert!(diagnostics.has_errors(), "{name}: no type error");
        let rendered: String = diagnostics
            .iter()
            .map(|d| render(&module.sources, d))
            .collect::<Vec<_>>()
            .join("\n");
        for d in diagnostics.iter() {
            distinct.insert(d.message.lines().next().unwrap_or("").to_string());
        }
        insta::assert_snapshot!(name, format!("{text}\n----\n{rendered}"));
    }
    assert!(
        distinct.len() >= 20,
        "only {} distinct messages",
        distinct.len()
    );
}
