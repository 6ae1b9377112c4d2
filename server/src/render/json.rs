//! `relay check --format json`: one JSON object per diagnostic, one per
//! line (JSON Lines), for editors, CI annotations and scripts.
//!
//! Positions are given both ways: `byte` is a 0-based byte offset into the
//! file (UTF-8), `line` and `column` are 1-based, the column counted in
//! Unicode characters (scalar values). A range's `end` is exclusive. The
//! format is documented in the README ("Machine-readable diagnostics").

use relay_passes::diagnostic::{Diagnostic, Severity};
use relay_passes::source::{SourceMap, Span};
use serde_json::{json, Value};

/// One diagnostic as a JSON object.
pub fn to_json(diagnostic: &Diagnostic, sources: &SourceMap) -> Value {
    let (file, place) = match diagnostic.span {
        Some(span) => (file_name(span, sources), range(span, sources)),
        None => (Value::Null, Value::Null),
    };
    let labels: Vec<Value> = diagnostic
        .labels
        .iter()
        .map(|label| {
            json!({
                "file": file_name(label.span, sources),
                "range": range(label.span, sources),
                "message": label.message,
            })
        })
        .collect();
    json!({
        "file": file,
        "range": place,
        "severity": severity(diagnostic.severity),
        "code": diagnostic.code.id(),
        "layer": diagnostic.layer.as_str(),
        "message": diagnostic.message,
        "labels": labels,
        "notes": diagnostic.notes,
        "help": diagnostic.help,
    })
}

/// Diagnostics as JSON Lines (each object on one line, `\n` after each).
pub fn render_json(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        out.push_str(&to_json(diagnostic, sources).to_string());
        out.push('\n');
    }
    out
}

fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
        Severity::Help => "help",
    }
}

fn file_name(span: Span, sources: &SourceMap) -> Value {
    sources
        .get(span.file)
        .map_or(Value::Null, |f| Value::String(f.name.clone()))
}

fn range(span: Span, sources: &SourceMap) -> Value {
    json!({
        "start": position(span, usize::from(span.range.start()), sources),
        "end": position(span, usize::from(span.range.end()), sources),
    })
}

/// `{"byte", "line", "column"}` of a byte offset of `span`'s file.
fn position(span: Span, byte: usize, sources: &SourceMap) -> Value {
    let Some(file) = sources.get(span.file) else {
        return json!({ "byte": byte });
    };
    let starts = file.line_starts();
    let line = match starts.binary_search(&(byte as u32).into()) {
        Ok(line) => line,
        Err(next) => next.saturating_sub(1),
    };
    let line_start = starts.get(line).map_or(0, |s| usize::from(*s));
    let text = &file.text;
    let column = text
        .get(line_start..byte.min(text.len()))
        .map_or(0, |s| s.chars().count());
    json!({ "byte": byte, "line": line + 1, "column": column + 1 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_passes::diagnostic::Code;
    use relay_syntax::{TextRange, TextSize};

    #[test]
    fn positions_are_bytes_and_one_based_lines_and_character_columns() {
        let mut sources = SourceMap::new();
        let text = "ab\n\u{e9}x %y\n";
        let file = sources.add("t.relay", text);
        let start = text.find("%y").unwrap();
        let span = Span::new(
            file,
            TextRange::at(TextSize::from(start as u32), TextSize::from(2)),
        );
        let d = Diagnostic::error(Code::UndeclaredLocal, "undeclared")
            .with_span(span)
            .with_label(span, "here")
            .with_help("declare it");
        let value = to_json(&d, &sources);
        assert_eq!(value["code"], "E0101");
        assert_eq!(value["severity"], "error");
        assert_eq!(value["file"], "t.relay");
        assert_eq!(
            value["range"]["start"],
            json!({"byte": 7, "line": 2, "column": 4})
        );
        assert_eq!(
            value["range"]["end"],
            json!({"byte": 9, "line": 2, "column": 6})
        );
        assert_eq!(value["labels"][0]["message"], "here");
        assert_eq!(value["help"], "declare it");
        assert_eq!(render_json(&[d], &sources).lines().count(), 1);
    }
}
