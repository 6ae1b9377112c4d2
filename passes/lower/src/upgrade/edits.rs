//! The edits an upgrade makes to a text: replacements of byte ranges,
//! applied at once, refused when two would touch the same bytes.

use super::Refusal;
use relay_syntax::{TextRange, TextSize};

/// Replacements of ranges of the original text (an insertion is an empty
/// range).
#[derive(Debug, Default)]
pub(super) struct Edits {
    items: Vec<(TextRange, String)>,
}

impl Edits {
    pub fn insert(&mut self, at: TextSize, text: String) {
        self.items.push((TextRange::empty(at), text));
    }

    pub fn replace(&mut self, range: TextRange, text: impl Into<String>) {
        self.items.push((range, text.into()));
    }

    pub fn remove(&mut self, range: TextRange) {
        self.items.push((range, String::new()));
    }

    /// `text` with every edit made. Insertions at one place keep the order
    /// they were made in; the same edit made twice is made once.
    pub fn apply(mut self, text: &str) -> Result<String, Refusal> {
        self.items
            .sort_by_key(|(range, _)| (range.start(), range.end()));
        self.items.dedup();
        let mut out = String::with_capacity(text.len() + 64);
        let mut done = TextSize::from(0);
        for (range, replacement) in &self.items {
            if range.start() < done {
                return Err(Refusal::new(
                    *range,
                    "two rewrites of the upgrade touch this text; make one of them by hand \
                     and upgrade again",
                ));
            }
            out.push_str(&text[TextRange::new(done, range.start())]);
            out.push_str(replacement);
            done = range.end();
        }
        out.push_str(&text[usize::from(done)..]);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_in_order_and_refuse_overlaps() {
        let mut edits = Edits::default();
        edits.insert(0.into(), "<".to_string());
        edits.replace(TextRange::new(2.into(), 4.into()), "X");
        edits.remove(TextRange::new(5.into(), 6.into()));
        edits.insert(6.into(), ">".to_string());
        edits.replace(TextRange::new(2.into(), 4.into()), "X");
        assert_eq!(edits.apply("abcdefg").ok().as_deref(), Some("<abXe>g"));

        let mut overlapping = Edits::default();
        overlapping.replace(TextRange::new(1.into(), 4.into()), "X");
        overlapping.remove(TextRange::new(3.into(), 5.into()));
        assert!(overlapping.apply("abcdefg").is_err());
    }
}
