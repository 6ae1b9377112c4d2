//! Diagnostics as exception text: `file:line:col: error[E…]: message` per
//! diagnostic, with the offending source line and a caret, so a parse or
//! type error raised in Python points at the text as the CLI does.

use relay_passes::diagnostic::Diagnostic;
use relay_passes::source::SourceMap;

/// All diagnostics, one block each.
pub fn format_diagnostics(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    diagnostics
        .iter()
        .map(|d| format_one(d, sources))
        .collect::<Vec<_>>()
        .join("\n")
}

fn format_one(d: &Diagnostic, sources: &SourceMap) -> String {
    let severity = if d.is_error() { "error" } else { "warning" };
    let head = format!("{severity}[{}]: {}", d.code.id(), d.message);
    let Some(span) = d.span else {
        return head;
    };
    let Some(file) = sources.get(span.file) else {
        return head;
    };
    let (line, col) = file.line_col(span.range.start());
    let text = sources.text(span.file);
    let line_text = text.lines().nth(line).unwrap_or("");
    let width = usize::from(span.range.len()).clamp(1, line_text.len().saturating_sub(col).max(1));
    let mut out = format!(
        "{}:{}:{}: {head}\n  {line_text}\n  {}{}",
        sources.name(span.file),
        line + 1,
        col + 1,
        " ".repeat(col),
        "^".repeat(width)
    );
    for note in &d.notes {
        out.push_str(&format!("\n  note: {note}"));
    }
    out
}
