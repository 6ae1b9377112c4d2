//! What a lenient reading accepts that TVM v0.13's parser rejects: each
//! acceptance is a [`Leniency`], a warning with its own kind (and, in later
//! stages, its own stable code), never a silent change of meaning.
//!
//! Strict parsing (the default, [`ParseOptions::default`]) reads exactly
//! what TVM reads; with [`ParseOptions::lenient`] the parser also reads the
//! Relay text people actually have: files without a version header or with
//! an older one, a bare `fn (…) { … }` expression given as a module, and
//! names as frontends produce them (`%conv1.weight`, `%input_tensor:0`,
//! `%1_bn.gamma`, `@foo.bar`).

use rowan::TextRange;

/// How to read a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ParseOptions {
    /// Read what other TVM versions, frontends and dumps write, reporting
    /// each such reading as a [`Leniency`] instead of an error.
    pub lenient: bool,
}

impl ParseOptions {
    /// TVM v0.13's reading, exactly (the default).
    pub const STRICT: ParseOptions = ParseOptions { lenient: false };
    /// The lenient reading.
    pub const LENIENT: ParseOptions = ParseOptions { lenient: true };
}

/// What a lenient reading accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LeniencyKind {
    /// No `#[version = "0.0.5"]` header: read as 0.0.5.
    MissingVersion,
    /// A header naming another version (`"0.0.4"`): read as 0.0.5.
    OtherVersion,
    /// A module file that is one `fn (…) { … }` expression: read as that
    /// expression (the module's `@main`).
    ExpressionFile,
    /// A name with `.`, `:N` or a leading digit, read as one name.
    FrontendName,
}

/// One acceptance of a lenient reading: its kind, a message and the text it
/// is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Leniency {
    pub kind: LeniencyKind,
    pub message: String,
    pub range: TextRange,
}

impl Leniency {
    pub fn new(kind: LeniencyKind, message: impl Into<String>, range: TextRange) -> Leniency {
        Leniency {
            kind,
            message: message.into(),
            range,
        }
    }
}
