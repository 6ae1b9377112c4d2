//! Annotated fixtures for the feature tests, in the manner of
//! rust-analyzer's: the input text carries the request and the expected
//! answer as marks, so a test is one string.
//!
//! - `$0` is the cursor (at most one).
//! - `<tag>…</tag>` marks a range the feature is expected to answer;
//!   `<tag words…>` carries what the feature says about it (a fold's kind,
//!   a token's type, a diagnostic's code). A tag's name is its first
//!   letters, digits and `_` (`<hint: float32>` is closed by `</hint>`);
//!   it starts with a letter: a `<` followed by anything else is text
//!   (Relay's `%a < %b`).
//!
//! A test parses the fixture ([`parse`]), analyses the clean text
//! ([`analysis`]), renders the feature's answer as marks into the clean
//! text ([`annotate`]) and compares that with the fixture ([`check`]): on a
//! mismatch, the assertion shows both texts.

use crate::lsp::analysis::{analyze, Analysis};
use crate::lsp::text::Encoding;
use relay_syntax::{TextRange, TextSize};

/// A fixture with its marks taken out.
#[derive(Debug)]
pub struct Fixture {
    /// The text without marks: what is analysed.
    pub text: String,
    /// Where `$0` was.
    pub cursor: Option<TextSize>,
    /// The marked ranges, in the order their opening tags appear, each with
    /// its tag's words (`fold comment` for `<fold comment>`).
    pub ranges: Vec<(TextRange, String)>,
}

impl Fixture {
    /// The cursor; panics (a broken test) when the fixture has none.
    pub fn cursor(&self) -> TextSize {
        self.cursor.expect("the fixture has no `$0` cursor")
    }

    /// The one range marked with `tag`; panics when there is not exactly one.
    pub fn range(&self, tag: &str) -> TextRange {
        let found: Vec<TextRange> = self
            .ranges
            .iter()
            .filter(|(_, t)| t == tag)
            .map(|(r, _)| *r)
            .collect();
        assert_eq!(found.len(), 1, "the fixture marks `<{tag}>` once");
        found[0]
    }
}

/// The tag starting at `at` (just after a `<`): `(closing, words, length)`
/// with the length up to and including the `>`.
fn tag_at(rest: &str) -> Option<(bool, &str, usize)> {
    let (closing, body) = match rest.strip_prefix('/') {
        Some(body) => (true, body),
        None => (false, rest),
    };
    if !body.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let end = body.find(['>', '<', '\n'])?;
    if !body[end..].starts_with('>') {
        return None;
    }
    let words = &body[..end];
    Some((closing, words, usize::from(closing) + end + 1))
}

/// The name of a tag: its words up to the first character that is not a
/// letter, digit or `_` (`hint` of `<hint: float32>`).
fn tag_name(words: &str) -> &str {
    let end = words
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(words.len());
    &words[..end]
}

/// Takes the marks out of `marked`.
pub fn parse(marked: &str) -> Fixture {
    let mut text = String::with_capacity(marked.len());
    let mut cursor = None;
    let mut ranges: Vec<(TextRange, String)> = Vec::new();
    // Open tags: (name, index into `ranges`).
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut rest = marked;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("$0") {
            assert!(cursor.is_none(), "the fixture has two `$0` cursors");
            cursor = Some(TextSize::from(text.len() as u32));
            rest = after;
            continue;
        }
        if c == '<' {
            if let Some((closing, words, len)) = tag_at(&rest[1..]) {
                let at = TextSize::from(text.len() as u32);
                if closing {
                    let i = open
                        .iter()
                        .rposition(|(name, _)| name == words)
                        .unwrap_or_else(|| panic!("`</{words}>` closes no open tag"));
                    let (_, index) = open.remove(i);
                    let start = ranges[index].0.start();
                    ranges[index].0 = TextRange::new(start, at);
                } else {
                    open.push((tag_name(words).to_string(), ranges.len()));
                    ranges.push((TextRange::empty(at), words.to_string()));
                }
                rest = &rest[1 + len..];
                continue;
            }
        }
        text.push(c);
        rest = &rest[c.len_utf8()..];
    }
    assert!(open.is_empty(), "unclosed tags in the fixture: {open:?}");
    Fixture {
        text,
        cursor,
        ranges,
    }
}

/// `text` with `ranges` marked as tags and the cursor as `$0`: the inverse
/// of [`parse`]. At one offset come closing tags (innermost first), then
/// opening tags (outermost first), then the cursor.
pub fn annotate(text: &str, cursor: Option<TextSize>, ranges: &[(TextRange, String)]) -> String {
    // (offset, phase, order, text): phase 0 closes, 1 opens, 2 the cursor.
    let mut marks: Vec<(u32, u8, (u32, usize), String)> = Vec::new();
    for (i, (range, words)) in ranges.iter().enumerate() {
        let (start, end) = (u32::from(range.start()), u32::from(range.end()));
        let name = tag_name(words);
        if range.is_empty() {
            marks.push((start, 1, (u32::MAX - end, i), format!("<{words}></{name}>")));
            continue;
        }
        marks.push((start, 1, (u32::MAX - end, i), format!("<{words}>")));
        marks.push((
            end,
            0,
            (u32::MAX - start, usize::MAX - i),
            format!("</{name}>"),
        ));
    }
    if let Some(cursor) = cursor {
        marks.push((cursor.into(), 2, (0, 0), "$0".to_string()));
    }
    marks.sort_by_key(|a| (a.0, a.1, a.2));
    let mut out = String::with_capacity(text.len() + marks.len() * 8);
    let mut at = 0;
    for (offset, _, _, mark) in marks {
        let offset = offset as usize;
        out.push_str(&text[at..offset]);
        out.push_str(&mark);
        at = offset;
    }
    out.push_str(&text[at..]);
    out
}

/// The analysis of `text`, as the server makes it.
pub fn analysis(text: &str) -> Analysis {
    // As the server does when it starts (`router::service`): features that
    // offer passes must see them whichever tests ran before.
    relay_passes::register_builtin_passes();
    analyze("fixture.relay", text.into(), 1, Encoding::Utf16, &|| false)
        .expect("nothing makes a fixture's analysis obsolete")
}

/// Runs `feature` on the fixture's text and cursor and checks that its
/// answer, marked into the text, gives the fixture back.
pub fn check(
    marked: &str,
    feature: impl FnOnce(&Analysis, Option<TextSize>) -> Vec<(TextRange, String)>,
) {
    let fixture = parse(marked);
    let analysis = analysis(&fixture.text);
    let answer = feature(&analysis, fixture.cursor);
    let got = annotate(&fixture.text, fixture.cursor, &answer);
    assert!(
        got == marked,
        "the feature's answer differs from the fixture\n--- expected\n{marked}\n--- got\n{got}\n"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_round_trip() {
        let marked = "<a>x<b k>$0y</b><e></e>é</a> %p < %q <c>z</c>";
        let fixture = parse(marked);
        assert_eq!(fixture.text, "xyé %p < %q z");
        assert_eq!(fixture.cursor, Some(1.into()));
        assert_eq!(fixture.range("c"), TextRange::new(13.into(), 14.into()));
        assert_eq!(fixture.ranges[1].1, "b k");
        assert_eq!(
            annotate(&fixture.text, fixture.cursor, &fixture.ranges),
            marked
        );
    }

    #[test]
    #[should_panic(expected = "closes no open tag")]
    fn a_stray_closing_tag_is_a_broken_fixture() {
        parse("x</a>");
    }
}
