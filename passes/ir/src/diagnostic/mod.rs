//! The one diagnostics type of the project: what the parser, lowering, type
//! inference and passes report, what `relay check` renders with
//! codespan-reporting and what the language server publishes.
//!
//! A diagnostic says which layer found it ([`Layer`]: syntax errors are kept
//! apart from name and type errors, as taplo does), how bad it is, where it is
//! (a [`Span`]: a file of a [`SourceMap`](crate::source::SourceMap) and a byte range) and what else is
//! related to it (labels with their own spans, notes, a help line). Every
//! diagnostic has a stable [`Code`] from the one table in [`codes`]; the
//! constructors require it, and the layer follows from it.

pub mod codes;

pub use self::codes::Code;
use crate::source::{FileId, Span};
use crate::Expr;
use relay_syntax::{Leniency, LeniencyKind, SyntaxError, SyntaxErrorKind};
use std::fmt;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Note,
    Help,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Help => "help",
        })
    }
}

/// Which stage found a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// The lexer and parser: the text does not follow the grammar.
    Syntax,
    /// Lowering: names, operators, attributes, metadata references.
    Name,
    /// Type inference.
    Type,
    /// A pass or a pipeline.
    Pass,
}

impl Layer {
    /// A short name, used as the LSP `source` and in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Syntax => "relay syntax",
            Layer::Name => "relay names",
            Layer::Type => "relay types",
            Layer::Pass => "relay passes",
        }
    }

    /// One word: `syntax`, `names`, `types`, `passes`.
    pub fn short_name(self) -> &'static str {
        match self {
            Layer::Syntax => "syntax",
            Layer::Name => "names",
            Layer::Type => "types",
            Layer::Pass => "passes",
        }
    }
}

/// A secondary location with a message ("the parameter is declared here").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One problem found in Relay text or IR.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Its stable code ([`codes`]).
    pub code: Code,
    pub layer: Layer,
    pub message: String,
    /// Where the problem is; `None` for problems of a whole run.
    pub span: Option<Span>,
    /// Related locations.
    pub labels: Vec<Label>,
    /// Extra lines of explanation without a location.
    pub notes: Vec<String>,
    /// A suggestion, rendered as `help: …`.
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(severity: Severity, code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            code,
            layer: code.layer(),
            message: message.into(),
            span: None,
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn error(code: Code, message: impl Into<String>) -> Diagnostic {
        debug_assert!(!code.is_warning(), "{code} is a warning code");
        Diagnostic::new(Severity::Error, code, message)
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Diagnostic {
        debug_assert!(code.is_warning(), "{code} is an error code");
        Diagnostic::new(Severity::Warning, code, message)
    }

    /// A pass could not transform the program ([`Code::PassFailed`]), for a
    /// reason that is not one expression's.
    pub fn pass_failed(message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(Code::PassFailed, message)
    }

    /// A pass could not transform `expr` ([`Code::PassFailed`]): located at
    /// its span when it has one (nodes a pass built have none).
    pub fn pass_failed_at(expr: &Expr, message: impl Into<String>) -> Diagnostic {
        let diagnostic = Diagnostic::pass_failed(message);
        match expr.span() {
            Some(span) => diagnostic.with_span(span),
            None => diagnostic,
        }
    }

    pub fn with_span(mut self, span: Span) -> Diagnostic {
        self.span = Some(span);
        self
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The diagnostic without locations, each place (`<output of X>:3:5`)
    /// and line written into its message instead: for showing diagnostics
    /// whose text the reader does not have open (an external pass's
    /// output, in the editor of the input file).
    pub fn detached(&self, sources: &crate::source::SourceMap) -> Diagnostic {
        let place = |span: &Span| {
            let Some(file) = sources.get(span.file) else {
                return String::new();
            };
            let (line, column) = file.line_col(span.range.start());
            let text = file.text.lines().nth(line).unwrap_or_default().trim();
            format!("{}:{}:{}: `{text}`", file.name, line + 1, column + 1)
        };
        let mut out = self.clone();
        if let Some(span) = out.span.take() {
            out.message = format!("{}: {}", place(&span), out.message);
        }
        for label in std::mem::take(&mut out.labels) {
            out.notes
                .push(format!("{}: {}", place(&label.span), label.message));
        }
        out
    }

    /// A syntax error of `file` as a diagnostic.
    pub fn from_syntax_error(file: FileId, error: &SyntaxError) -> Diagnostic {
        let code = match error.kind() {
            SyntaxErrorKind::Lexical => Code::Lexical,
            SyntaxErrorKind::Number => Code::InvalidNumber,
            SyntaxErrorKind::Unexpected => Code::UnexpectedToken,
            SyntaxErrorKind::Unclosed => Code::UnclosedDelimiter,
            SyntaxErrorKind::Version => Code::VersionHeader,
            SyntaxErrorKind::Limit => Code::NestingLimit,
            SyntaxErrorKind::Unformattable => Code::InternalError,
        };
        let mut diagnostic =
            Diagnostic::error(code, error.message()).with_span(Span::new(file, error.range()));
        for label in error.labels() {
            diagnostic = diagnostic.with_label(Span::new(file, label.range), label.message.clone());
        }
        diagnostic
    }

    /// The warning for what a lenient reading accepted.
    pub fn from_leniency(file: FileId, leniency: &Leniency) -> Diagnostic {
        let code = match leniency.kind {
            LeniencyKind::MissingVersion => Code::NoVersionHeader,
            LeniencyKind::OtherVersion => Code::OtherVersionHeader,
            LeniencyKind::ExpressionFile => Code::ExpressionFile,
            LeniencyKind::FrontendName => Code::FrontendName,
        };
        Diagnostic::warning(code, leniency.message.clone())
            .with_span(Span::new(file, leniency.range))
    }

    /// The diagnostics of a parse: its errors, then (for a lenient reading)
    /// what it accepted, as warnings.
    pub fn of_parse(file: FileId, parse: &relay_syntax::Parse) -> Vec<Diagnostic> {
        parse
            .errors()
            .iter()
            .map(|e| Diagnostic::from_syntax_error(file, e))
            .chain(
                parse
                    .leniencies()
                    .iter()
                    .map(|l| Diagnostic::from_leniency(file, l)),
            )
            .collect()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity, self.message)
    }
}

/// Sorts diagnostics by position: file, then start, then end; diagnostics
/// without a place last. Stable, so diagnostics at one place keep the order
/// of the stages that found them (syntax, names, types, passes).
pub fn sort_by_position(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| match d.span {
        Some(span) => (
            0,
            span.file.0,
            u32::from(span.range.start()),
            u32::from(span.range.end()),
        ),
        None => (1, 0, 0, 0),
    });
}

/// Diagnostics collected during a run: TVM's ErrorReporter / DiagnosticContext.
/// Several errors can be reported; the run decides when to stop.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    pub fn extend(&mut self, diagnostics: impl IntoIterator<Item = Diagnostic>) {
        self.items.extend(diagnostics);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.items.iter()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Self {
        Diagnostics {
            items: iter.into_iter().collect(),
        }
    }
}
