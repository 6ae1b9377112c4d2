//! Checks on the finished tree that the grammar does not express: the value
//! of the version header.

use crate::{Leniency, LeniencyKind, SyntaxError, SyntaxErrorKind, SyntaxKind, SyntaxNode};

/// The only version of the format TVM v0.13 reads.
pub const SUPPORTED_VERSION: &str = "\"0.0.5\"";

/// Checks the tree; with `lenient` (a lenient reading), a header naming
/// another version is a leniency instead of an error.
pub(crate) fn validate(
    root: &SyntaxNode,
    errors: &mut Vec<SyntaxError>,
    lenient: Option<&mut Vec<Leniency>>,
) {
    let Some(version) = root.children().find(|n| n.kind() == SyntaxKind::VERSION) else {
        return;
    };
    let Some(token) = version.first_token() else {
        return;
    };
    let value = version_value(token.text());
    if value != SUPPORTED_VERSION {
        if let Some(leniencies) = lenient {
            leniencies.push(Leniency::new(
                LeniencyKind::OtherVersion,
                format!(
                    "version {value} is not the version TVM v0.13 reads ({SUPPORTED_VERSION}); \
                     read as {SUPPORTED_VERSION}"
                ),
                token.text_range(),
            ));
            return;
        }
        errors.push(SyntaxError::new(
            SyntaxErrorKind::Version,
            format!("invalid semantic version `{value}`"),
            token.text_range(),
        ));
    }
}

/// What TVM takes for the version: the text after the first `=`, trimmed,
/// quotes included (`#[version = "0.0.5"]` gives `"0.0.5"`).
pub fn version_value(attr: &str) -> &str {
    let inner = attr
        .strip_prefix("#[")
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(attr);
    let inner = trim(inner);
    match inner.find('=') {
        Some(i) => trim(&inner[i + 1..]),
        None => inner,
    }
}

/// Trims the characters C's `isspace` accepts.
fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'))
}
