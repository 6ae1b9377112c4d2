//! The Markdown the features write (hover text, operator documentation).

/// `text` as a fenced block of Relay code.
pub fn code_block(text: &str) -> String {
    format!("```relay\n{text}\n```")
}
