//! Lowering's diagnostics for hand-written texts with name errors
//! (`test_data/lower_err/*.relay`), snapshotted in a plain rendering: the
//! severity, layer and message, the span as `line:col-line:col` (1-based,
//! columns in characters) with the text it covers, then labels, notes and
//! help.

use relay_passes::diagnostic::{Diagnostic, Layer};
use relay_passes::lower::parse_and_lower;
use relay_passes::source::Span;
use std::fmt::Write;
use std::path::Path;

/// 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn show_span(text: &str, span: Span) -> String {
    let (start, end) = (
        usize::from(span.range.start()),
        usize::from(span.range.end()),
    );
    let (l1, c1) = line_col(text, start);
    let (l2, c2) = line_col(text, end);
    let covered = text.get(start..end).unwrap_or("");
    let covered = covered.lines().next().unwrap_or("");
    let covered: String = if covered.chars().count() > 40 {
        format!("{}…", covered.chars().take(40).collect::<String>())
    } else {
        covered.to_string()
    };
    format!("{l1}:{c1}-{l2}:{c2} `{covered}`")
}

fn render(text: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let _ = writeln!(out, "{}[{}]: {}", d.severity, d.layer.as_str(), d.message);
        if let Some(span) = d.span {
            let _ = writeln!(out, "  --> {}", show_span(text, span));
        }
        for label in &d.labels {
            let _ = writeln!(
                out,
                "  label {}: {}",
                show_span(text, label.span),
                label.message
            );
        }
        for note in &d.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        if let Some(help) = &d.help {
            let _ = writeln!(out, "  help: {help}");
        }
    }
    out
}

#[test]
fn lowering_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lower_err");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("test_data/lower_err")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 15, "only {} test files", paths.len());
    for path in paths {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let (_, diagnostics) = parse_and_lower(&format!("{stem}.relay"), &text);
        let diagnostics = diagnostics.into_vec();
        assert!(
            !diagnostics.iter().any(|d| d.layer == Layer::Syntax),
            "{stem}: syntax errors:\n{}",
            render(&text, &diagnostics)
        );
        assert!(
            diagnostics
                .iter()
                .any(|d| d.is_error() && d.layer == Layer::Name),
            "{stem}: no name error"
        );
        insta::with_settings!({ input_file => &path, omit_expression => true }, {
            insta::assert_snapshot!(stem.as_str(), render(&text, &diagnostics));
        });
    }
}
