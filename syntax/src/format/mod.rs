//! The formatter: lays a file out in TVM's printed style (what `astext()`
//! writes) from its lossless syntax tree, keeping every comment.
//!
//! * Every comment stays with the element it is written next to (see
//!   `comments.rs`), including `/* ty=… */` and `/* span=… */` comments, and
//!   the metadata section is kept byte for byte.
//! * Lists that do not fit in [`FormatOptions::width`] (parameters, call
//!   arguments, tuples, types) are broken one element per line; nothing else
//!   changes a line, so a line is longer than the width only where one token
//!   or an unbreakable run of them is.
//! * Only layout changes: the result has the same tokens in the same order
//!   (match arms and constructors gain the trailing comma TVM prints). This
//!   is checked on every run by parsing the result; a file with syntax
//!   errors, or a construct the rules do not handle, is refused with an
//!   error at its place and nothing is formatted.
//!
//! ```
//! use relay_syntax::format::{format, FormatOptions};
//! use relay_syntax::Entry;
//!
//! let text = "#[version = \"0.0.5\"]\ndef @main(%x: float32) { // the body\n  add(%x,%x) }";
//! let formatted = format(text, Entry::Module, &FormatOptions::default()).unwrap();
//! assert_eq!(
//!     formatted,
//!     "#[version = \"0.0.5\"]\ndef @main(%x: float32) { // the body\n  add(%x, %x)\n}\n"
//! );
//! ```

mod comments;
mod doc;
mod layout;
mod verify;

use crate::{parse_with, Entry, ParseOptions, SyntaxError, SyntaxErrorKind, TextRange};

/// The default line width, in characters.
pub const DEFAULT_WIDTH: usize = 100;

/// How to format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatOptions {
    /// The line width lists are broken at (indentation is always two spaces
    /// per level, as TVM prints).
    pub width: usize,
}

impl Default for FormatOptions {
    fn default() -> Self {
        FormatOptions {
            width: DEFAULT_WIDTH,
        }
    }
}

/// Why a text was not formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The text does not parse; these are its syntax errors.
    Syntax(Vec<SyntaxError>),
    /// A construct the formatter does not lay out (or, should it ever
    /// happen, a layout that would not keep the text's meaning).
    Unsupported { message: String, range: TextRange },
}

impl FormatError {
    pub(crate) fn unsupported(message: String, range: TextRange) -> FormatError {
        FormatError::Unsupported { message, range }
    }

    /// Each problem as a message and the range of the input it is about.
    pub fn errors(&self) -> Vec<SyntaxError> {
        match self {
            FormatError::Syntax(errors) => errors.clone(),
            FormatError::Unsupported { message, range } => {
                vec![SyntaxError::new(
                    SyntaxErrorKind::Unformattable,
                    message.clone(),
                    *range,
                )]
            }
        }
    }
}

/// `text` laid out in canonical form, read with the entry point `entry`.
pub fn format(text: &str, entry: Entry, options: &FormatOptions) -> Result<String, FormatError> {
    format_with(text, entry, options, ParseOptions::STRICT)
}

/// [`format`](fn@format), reading the text with `parse_options` (a lenient reading
/// lays out what it accepts, and checks its result the same way).
pub fn format_with(
    text: &str,
    entry: Entry,
    options: &FormatOptions,
    parse_options: ParseOptions,
) -> Result<String, FormatError> {
    let parsed = parse_with(text, entry, parse_options);
    if !parsed.errors().is_empty() {
        return Err(FormatError::Syntax(parsed.errors().to_vec()));
    }
    let root = parsed.syntax_node();
    let doc = layout::file(&root)?;
    let formatted = doc::print(&doc, options.width.max(1));
    verify::same_tokens_with(&root, &formatted, entry, parse_options)?;
    Ok(formatted)
}
