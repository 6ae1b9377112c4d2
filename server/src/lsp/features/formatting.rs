//! Formatting: the file laid out by the formatter `relay fmt` uses
//! (comments kept), at a given width, as one replacement of the stretch
//! that changes.

use super::Replacement;
use crate::lsp::analysis::Analysis;
use relay_syntax::format::{format, FormatError, FormatOptions};
use relay_syntax::{TextRange, TextSize};

/// The formatted file as one replacement that covers only the stretch
/// between the first and the last character that change (none when nothing
/// changes), or why the formatter refused the text.
pub fn format_edits(analysis: &Analysis, width: usize) -> Result<Vec<Replacement>, FormatError> {
    let text = analysis.text();
    let formatted = format(text, relay_syntax::Entry::Module, &FormatOptions { width })?;
    let Some((range, new_text)) = changed_stretch(text, &formatted) else {
        return Ok(Vec::new());
    };
    Ok(vec![Replacement {
        range,
        text: new_text.to_string(),
    }])
}

/// The range of `old` that differs from `new` and its replacement, trimmed
/// of the common start and end (on character boundaries).
fn changed_stretch<'n>(old: &str, new: &'n str) -> Option<(TextRange, &'n str)> {
    if old == new {
        return None;
    }
    let mut prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    let range = TextRange::new(
        TextSize::from(prefix as u32),
        TextSize::from((old.len() - suffix) as u32),
    );
    Some((range, &new[prefix..new.len() - suffix]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    #[test]
    fn the_edit_covers_only_what_changes() {
        let (range, text) = changed_stretch("add(%x,%x)\n", "add(%x, %x)\n").unwrap();
        assert_eq!((u32::from(range.start()), u32::from(range.end())), (7, 7));
        assert_eq!(text, " ");
        let (range, text) = changed_stretch("é1é", "é22é").unwrap();
        assert_eq!((u32::from(range.start()), u32::from(range.end())), (2, 3));
        assert_eq!(text, "22");
        assert!(changed_stretch("same", "same").is_none());
    }

    /// The fixture marks the replaced stretch as `<to TEXT>`.
    fn check(marked: &str, width: usize) {
        fixture::check(marked, |analysis, _| {
            format_edits(analysis, width)
                .expect("the text formats")
                .into_iter()
                .map(|r| (r.range, format!("to {}", r.text)))
                .collect()
        });
    }

    #[test]
    fn one_replacement_of_the_changed_stretch_and_comments_stay() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) {\n  \
               // kept\n  \
               add(%x,<to  ></to>%x)\n\
             }\n",
            100,
        );
        check(
            "#[version = \"0.0.5\"]\ndef @f(%x: float32) {\n  %x\n}\n",
            100,
        );
    }

    #[test]
    fn syntax_errors_are_refused() {
        let analysis = fixture::analysis("#[version = \"0.0.5\"]\ndef @f( {");
        assert!(matches!(
            format_edits(&analysis, 100),
            Err(FormatError::Syntax(_))
        ));
    }
}
