//! Renders diagnostics for a terminal with codespan-reporting: the file, line
//! and column, the source line, carets under the span, related labels, notes.

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term;
use relay_passes::diagnostic::{Diagnostic, Severity};
use relay_passes::source::{FileId, SourceMap};
use std::ops::Range;

/// Adapts a [`SourceMap`] to codespan's file database.
struct SourceFiles<'a>(&'a SourceMap);

impl<'a> Files<'a> for SourceFiles<'a> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        self.0
            .get(id)
            .map(|f| f.name.as_str())
            .ok_or(FilesError::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        self.0
            .get(id)
            .map(|f| &*f.text)
            .ok_or(FilesError::FileMissing)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, FilesError> {
        let file = self.0.get(id).ok_or(FilesError::FileMissing)?;
        let starts = file.line_starts();
        Ok(match starts.binary_search(&(byte_index as u32).into()) {
            Ok(line) => line,
            Err(next) => next.saturating_sub(1),
        })
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, FilesError> {
        let file = self.0.get(id).ok_or(FilesError::FileMissing)?;
        let starts = file.line_starts();
        let start = *starts.get(line_index).ok_or(FilesError::LineTooLarge {
            given: line_index,
            max: starts.len() - 1,
        })?;
        let end = starts
            .get(line_index + 1)
            .copied()
            .unwrap_or_else(|| (file.text.len() as u32).into());
        Ok(usize::from(start)..usize::from(end))
    }
}

fn to_codespan(diagnostic: &Diagnostic) -> cs::Diagnostic<FileId> {
    let severity = match diagnostic.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
        Severity::Help => cs::Severity::Help,
    };
    let mut labels = Vec::new();
    if let Some(span) = diagnostic.span {
        labels.push(cs::Label::primary(span.file, span.range));
    }
    for label in &diagnostic.labels {
        labels.push(
            cs::Label::secondary(label.span.file, label.span.range)
                .with_message(label.message.clone()),
        );
    }
    let mut notes = diagnostic.notes.clone();
    if let Some(help) = &diagnostic.help {
        notes.push(format!("help: {help}"));
    }
    cs::Diagnostic::new(severity)
        .with_message(diagnostic.message.clone())
        .with_labels(labels)
        .with_notes(notes)
}

/// Renders diagnostics as plain text, one block each.
pub fn render(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    let files = SourceFiles(sources);
    let config = term::Config::default();
    let mut out = String::new();
    for diagnostic in diagnostics {
        match term::emit_into_string(&config, &files, &to_codespan(diagnostic)) {
            Ok(text) => out.push_str(&text),
            // A span outside its file cannot be drawn; say it plainly.
            Err(_) => out.push_str(&format!("{diagnostic}\n")),
        }
    }
    out
}
