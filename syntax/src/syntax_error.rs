//! A syntax error: what kind of problem it is, a message, the exact byte
//! range it is about, and related places (the opening bracket of a group
//! that is never closed).

use rowan::TextRange;
use std::fmt;

/// What kind of syntax error this is: the stable error codes of later
/// stages (`relay explain`) are chosen from it, so each kind is one
/// explanation a user can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SyntaxErrorKind {
    /// Text that is no token of the format: a stray character, an
    /// unterminated string, comment or attribute, a malformed `meta[…]`.
    Lexical,
    /// A number literal that is malformed or out of range.
    Number,
    /// A token the grammar does not allow where it stands (TVM's
    /// ``expected … found …``).
    Unexpected,
    /// A `(`, `[` or `{` whose closing bracket never comes.
    Unclosed,
    /// The `#[version = "0.0.5"]` header is missing or names another version.
    Version,
    /// The text nests deeper, or chains more operators, than the parser
    /// follows.
    Limit,
    /// Not an error of the text: the formatter (`relay_syntax::format`)
    /// refuses a construct it cannot lay out without changing the text's
    /// tokens, rather than lose any of them.
    Unformattable,
}

/// A secondary place of a syntax error, with what it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxLabel {
    pub range: TextRange,
    pub message: String,
}

/// An error found while lexing or parsing, with the range it covers (an empty
/// range marks a point, e.g. where a token is missing at the end of the text).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    kind: SyntaxErrorKind,
    message: String,
    range: TextRange,
    labels: Vec<SyntaxLabel>,
}

impl SyntaxError {
    pub fn new(kind: SyntaxErrorKind, message: impl Into<String>, range: TextRange) -> SyntaxError {
        SyntaxError {
            kind,
            message: message.into(),
            range,
            labels: Vec::new(),
        }
    }

    /// Adds a related place.
    pub fn with_label(mut self, range: TextRange, message: impl Into<String>) -> SyntaxError {
        self.labels.push(SyntaxLabel {
            range,
            message: message.into(),
        });
        self
    }

    pub fn kind(&self) -> SyntaxErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn range(&self) -> TextRange {
        self.range
    }

    pub fn labels(&self) -> &[SyntaxLabel] {
        &self.labels
    }

    /// The same error with its range and its labels' ranges mapped by `f`
    /// (moved by an edit before them).
    pub fn map_ranges(&self, f: impl Fn(TextRange) -> TextRange) -> SyntaxError {
        SyntaxError {
            kind: self.kind,
            message: self.message.clone(),
            range: f(self.range),
            labels: self
                .labels
                .iter()
                .map(|l| SyntaxLabel {
                    range: f(l.range),
                    message: l.message.clone(),
                })
                .collect(),
        }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
