//! The text syntax of patterns (documented in `docs/patterns.md`): a
//! lexer, a parser with ranged errors, and the rendering of an error under
//! the line it is about.

mod display;
mod lexer;
mod parser;

pub use display::pattern_to_text;

pub use parser::{parse_pattern, parse_rule, NamedPatterns, ParsedPattern, PatternError};

/// No named patterns (for patterns that use no `@name`).
pub fn no_named_patterns(_: &str) -> Option<crate::Pattern> {
    None
}

/// `error: message` and the line of `text` with carets under the range,
/// as the CLI shows pattern errors.
pub fn render_error(text: &str, error: &PatternError) -> String {
    let start = usize::from(error.range.start()).min(text.len());
    let end = usize::from(error.range.end()).clamp(start, text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line_no = text[..start].matches('\n').count() + 1;
    let line = &text[line_start..line_end];
    let col = text[line_start..start].chars().count();
    let width = text[start..end.min(line_end)].chars().count().max(1);
    let gutter = " ".repeat(line_no.to_string().len());
    format!(
        "error: {}\n{gutter} |\n{line_no} | {line}\n{gutter} | {}{}\n",
        error.message,
        " ".repeat(col),
        "^".repeat(width)
    )
}
