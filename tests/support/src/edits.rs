//! Random edits of text for the random-edit tests: offsets on character
//! boundaries (an edit never splits a UTF-8 character) and keystrokes.

use crate::rng::Rng;
use std::ops::Range;

/// The last character boundary of `text` at or before `at` (the text's
/// length when `at` is past it).
pub fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The first character boundary of `text` at or after `at` (the text's
/// length when `at` is past it).
pub fn ceil_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// A random offset in `0..=text.len()` on a character boundary.
pub fn random_offset(rng: &mut Rng, text: &str) -> usize {
    floor_char_boundary(text, rng.below(text.len() + 1))
}

/// What a keystroke types: letters, digits, a space and the punctuation of
/// names and argument lists.
pub const KEYS: &[u8] = b"abcxyz019 ,.%()_";

/// A keystroke at a random place: one character of [`KEYS`] typed, or (one
/// time in three) the character there deleted. The bytes to replace and
/// what replaces them.
pub fn keystroke(rng: &mut Rng, text: &str) -> (Range<usize>, String) {
    let at = random_offset(rng, text);
    if rng.below(3) == 0 && at < text.len() {
        return (at..ceil_char_boundary(text, at + 1), String::new());
    }
    let key = KEYS[rng.below(KEYS.len())] as char;
    (at..at, key.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_never_split_a_character() {
        let text = "a\u{e9}b\u{1d11e}";
        assert_eq!(floor_char_boundary(text, 2), 1);
        assert_eq!(ceil_char_boundary(text, 2), 3);
        assert_eq!(floor_char_boundary(text, 6), 4);
        assert_eq!(ceil_char_boundary(text, 6), 8);
        assert_eq!(floor_char_boundary(text, 99), text.len());
        assert_eq!(ceil_char_boundary(text, 99), text.len());
    }

    #[test]
    fn keystrokes_type_or_delete_one_character() {
        let text = "\u{e9}\u{e9}\u{e9}";
        let mut rng = Rng(7);
        let (mut typed, mut deleted) = (0, 0);
        for _ in 0..200 {
            let (range, insert) = keystroke(&mut rng, text);
            assert!(text.is_char_boundary(range.start) && text.is_char_boundary(range.end));
            if insert.is_empty() {
                assert_eq!(text[range].chars().count(), 1);
                deleted += 1;
            } else {
                assert!(range.is_empty() && insert.len() == 1);
                typed += 1;
            }
        }
        assert!(typed > 0 && deleted > 0);
    }
}
