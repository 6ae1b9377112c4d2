//! Renders diagnostics for a terminal with codespan-reporting: the code and
//! message (`error[E0101]: …`), the file, line and column, the source line,
//! carets under the span, related labels, notes. Colour is the caller's
//! choice ([`Style`]); source lines longer than a screen are cut around the
//! carets (`crop`), so one long line cannot turn each diagnostic into
//! kilobytes of output. JSON output is in [`json`].

mod crop;
pub mod json;

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, termcolor, Styles, StylesWriter};
use relay_passes::diagnostic::{Diagnostic, Severity};
use relay_passes::source::{FileId, SourceMap};
use std::ops::Range;

/// Whether rendered text carries ANSI colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Color,
}

/// `--color auto|always|never`, as cargo and ripgrep read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when standard error is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// The style for standard error: `auto` colours a terminal unless the
    /// `NO_COLOR` environment variable is set to anything non-empty
    /// (<https://no-color.org>).
    pub fn for_stderr(self) -> Style {
        use std::io::IsTerminal;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        match self {
            ColorChoice::Always => Style::Color,
            ColorChoice::Never => Style::Plain,
            ColorChoice::Auto if !no_color && std::io::stderr().is_terminal() => Style::Color,
            ColorChoice::Auto => Style::Plain,
        }
    }
}

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
        .with_code(diagnostic.code.id())
        .with_message(diagnostic.message.clone())
        .with_labels(labels)
        .with_notes(notes)
}

/// Renders diagnostics as plain text, one block each.
pub fn render(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    render_styled(diagnostics, sources, Style::Plain)
}

/// Renders diagnostics, one block each, in `style`.
pub fn render_styled(diagnostics: &[Diagnostic], sources: &SourceMap, style: Style) -> String {
    let files = SourceFiles(sources);
    let config = term::Config::default();
    let styles = Styles::default();
    let mut out = String::new();
    for diagnostic in diagnostics {
        let diagnostic = to_codespan(diagnostic);
        // Long lines are shown cut around the carets.
        let cropped = crop::crop(&files, &diagnostic);
        let rendered = match &cropped {
            Some((files, diagnostic)) => emit(files, diagnostic, &config, &styles, style),
            None => emit(&files, &diagnostic, &config, &styles, style),
        };
        match rendered {
            Some(text) => out.push_str(&text),
            // A span outside its file cannot be drawn; say it plainly.
            None => out.push_str(&format!(
                "{}[{}]: {}\n",
                severity_word(diagnostic.severity),
                diagnostic.code.as_deref().unwrap_or(""),
                diagnostic.message
            )),
        }
    }
    out
}

fn severity_word(severity: cs::Severity) -> &'static str {
    match severity {
        cs::Severity::Bug => "bug",
        cs::Severity::Error => "error",
        cs::Severity::Warning => "warning",
        cs::Severity::Note => "note",
        cs::Severity::Help => "help",
    }
}

fn emit<'a, F: Files<'a, FileId = FileId>>(
    files: &'a F,
    diagnostic: &cs::Diagnostic<FileId>,
    config: &term::Config,
    styles: &Styles,
    style: Style,
) -> Option<String> {
    match style {
        Style::Plain => term::emit_into_string(config, files, diagnostic).ok(),
        Style::Color => {
            let mut buffer = termcolor::Buffer::ansi();
            let mut writer = StylesWriter::new(&mut buffer, styles);
            term::emit_to_write_style(&mut writer, config, files, diagnostic).ok()?;
            String::from_utf8(buffer.into_inner()).ok()
        }
    }
}

/// A note for the diagnostics left out by a limit (`--max-errors`).
pub fn more_errors_line(left_out_errors: usize, left_out_warnings: usize) -> String {
    let mut parts = Vec::new();
    if left_out_errors > 0 {
        parts.push(plural(left_out_errors, "more error"));
    }
    if left_out_warnings > 0 {
        parts.push(plural(left_out_warnings, "more warning"));
    }
    format!("{} not shown (--max-errors)\n", parts.join(" and "))
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("{n} {what}")
    } else {
        format!("{n} {what}s")
    }
}
