//! LSP request parameters as the features take them: positions and ranges
//! become byte offsets into the analysed text (the conversion itself is
//! [`LineIndex`]'s), URIs become paths, code action kinds become
//! [`Wanted`].

use super::features::code_actions::Wanted;
use super::text::LineIndex;
use relay_syntax::{TextRange, TextSize};
use std::path::PathBuf;
use tower_lsp_server::ls_types::{CodeActionKind, Position, Range, Uri};

pub fn offset(lines: &LineIndex, position: Position) -> TextSize {
    TextSize::from(lines.offset(position))
}

pub fn text_range(lines: &LineIndex, range: Range) -> TextRange {
    lines.text_range(range)
}

/// The file a URI names, if it is a file.
pub fn uri_path(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

/// The name diagnostics and printed modules use for a document: its path,
/// else its URI.
pub fn doc_name(uri: &Uri) -> String {
    uri_path(uri).map_or_else(|| uri.as_str().to_string(), |p| p.display().to_string())
}

/// Which actions `context.only` asks for (all when absent): a kind is asked
/// for when it or a kind it refines (`refactor` for `refactor.rewrite`) is
/// listed.
pub fn wanted_actions(only: Option<&Vec<CodeActionKind>>) -> Wanted {
    let wants = |kind: &CodeActionKind| match only {
        None => true,
        Some(kinds) => kinds.iter().any(|k| {
            kind.as_str() == k.as_str() || kind.as_str().starts_with(&format!("{}.", k.as_str()))
        }),
    };
    Wanted {
        quick_fixes: wants(&CodeActionKind::QUICKFIX),
        rewrites: wants(&CodeActionKind::REFACTOR_REWRITE),
    }
}
