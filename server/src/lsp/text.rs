//! Positions: the editor speaks in lines and UTF-16 code units (or UTF-8
//! bytes when both sides agree on it); the library speaks in byte offsets.
//!
//! A [`Document`] is the editor's copy of a file, the snapshot that
//! incremental edits replace. A [`LineIndex`] belongs to one immutable snapshot of
//! the text and converts between byte offsets and LSP positions.

use std::mem::MaybeUninit;
use std::sync::Arc;
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

/// How the `character` of an LSP position counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 bytes (`positionEncoding: "utf-8"`).
    Utf8,
    /// UTF-16 code units, the LSP default.
    Utf16,
}

/// The text of an open file and its version.
///
/// The text is one immutable snapshot with its line starts, replaced by a
/// new one on each change: the snapshot an analysis reads is the
/// document's own (no second copy of a large file beside it), and a change
/// copies the text once. A rope would make a keystroke cheaper to apply,
/// but every analysis needs the whole text as one string anyway, so it
/// only added a copy of the file (12 MB for a 10 MB module).
#[derive(Debug, Clone)]
pub struct Document {
    lines: LineIndex,
    pub version: i32,
}

impl Document {
    pub fn new(text: &str, version: i32) -> Document {
        Document {
            lines: LineIndex::new(Arc::from(text), Encoding::Utf16),
            version,
        }
    }

    /// Applies one `didChange` content change (a range edit, or the whole
    /// text when the change has no range). Positions past the end of a
    /// line are clamped to its end, lines past the end of the text to the
    /// end (see [`LineIndex::offset`]).
    pub fn apply_change(&mut self, change: &TextDocumentContentChangeEvent, encoding: Encoding) {
        match change.range {
            None => self.lines = LineIndex::new(Arc::from(change.text.as_str()), Encoding::Utf16),
            Some(range) => {
                let start = self.lines.offset_in(range.start, encoding);
                let end = self.lines.offset_in(range.end, encoding).max(start);
                let old = self.lines.text();
                let (start_at, end_at) = (start as usize, end as usize);
                let text = joined(&[&old[..start_at], &change.text, &old[end_at..]]);
                let edit = relay_syntax::TextEdit {
                    delete: relay_syntax::TextRange::new(start.into(), end.into()),
                    insert_len: (change.text.len() as u32).into(),
                };
                self.lines = LineIndex::edited(&self.lines, text, edit);
            }
        }
    }

    /// The text, as the snapshot analyses share.
    pub fn text(&self) -> Arc<str> {
        self.lines.text.clone()
    }
}

/// The texts `parts` one after the other, as a snapshot, written straight
/// into its one allocation. (Joining them in a `String` first and making
/// that an `Arc<str>` copies a large file twice: two blocks of its size
/// per keystroke where one will do.)
fn joined(parts: &[&str]) -> Arc<str> {
    let len = parts.iter().map(|part| part.len()).sum();
    // Collected from an iterator of known length: allocated once, at its
    // final size, and not initialised (writing `uninit` is no work).
    let mut bytes: Arc<[MaybeUninit<u8>]> =
        std::iter::repeat_n(MaybeUninit::uninit(), len).collect();
    let slots = Arc::get_mut(&mut bytes).expect("a new Arc is not shared");
    let mut at = 0;
    for part in parts {
        let slot = &mut slots[at..at + part.len()];
        // SAFETY: `slot` is `part.len()` bytes of a block `part` is not in
        // (a new allocation); `MaybeUninit<u8>` has the layout of `u8`.
        unsafe {
            std::ptr::copy_nonoverlapping(part.as_ptr(), slot.as_mut_ptr().cast::<u8>(), part.len())
        };
        at += part.len();
    }
    debug_assert_eq!(at, len);
    // SAFETY: every byte was written above (the parts' lengths sum to
    // `len`), and strings written one after the other are valid UTF-8;
    // `[MaybeUninit<u8>]` and `str` have the same layout, so the pointer
    // keeps the `Arc`'s allocation and length.
    unsafe { Arc::from_raw(Arc::into_raw(bytes) as *const str) }
}

/// Line starts of a text, for converting offsets and positions.
#[derive(Debug, Clone)]
pub struct LineIndex {
    text: Arc<str>,
    /// Shared by the clones of the index (the document's last analysis
    /// and the state kept for the next one hold the same index).
    line_starts: Arc<[u32]>,
    /// Whether the text is ASCII only: then every encoding counts the same.
    ascii: bool,
    pub encoding: Encoding,
}

impl LineIndex {
    pub fn new(text: Arc<str>, encoding: Encoding) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(memchr_newlines(text.as_bytes()).map(|i| i as u32 + 1));
        let ascii = text.is_ascii();
        LineIndex {
            text,
            line_starts: line_starts.into(),
            ascii,
            encoding,
        }
    }

    /// The index of `text`, made from `before`, the index of the text
    /// before `edit`: the line starts before the edit are copied, those
    /// after it shifted, and only the inserted text is searched for line
    /// breaks (a keystroke in a 10 MB module does not read the module).
    pub fn edited(before: &LineIndex, text: Arc<str>, edit: relay_syntax::TextEdit) -> LineIndex {
        let start = u32::from(edit.delete.start());
        let old_end = u32::from(edit.delete.end());
        let new_end = start + u32::from(edit.insert_len);
        let inserted = &text.as_bytes()[start as usize..new_end as usize];
        // A line starts after each line break: those before the edit stay,
        // those in the deleted text go, those after it move.
        let kept = before.line_starts.partition_point(|&s| s <= start);
        let moved = before.line_starts.partition_point(|&s| s <= old_end);
        // Written straight into the shared slice, allocated once at its
        // final size (a `Vec` made into an `Arc` is copied: a second block
        // of a MB for a large file, per keystroke).
        let added = memchr_newlines(inserted).count();
        let len = kept + added + (before.line_starts.len() - moved);
        let mut line_starts: Arc<[u32]> = std::iter::repeat_n(0, len).collect();
        let slots = Arc::get_mut(&mut line_starts).expect("a new Arc is not shared");
        let (head, rest) = slots.split_at_mut(kept);
        let (middle, tail) = rest.split_at_mut(added);
        head.copy_from_slice(&before.line_starts[..kept]);
        for (slot, i) in middle.iter_mut().zip(memchr_newlines(inserted)) {
            *slot = start + i as u32 + 1;
        }
        for (slot, &s) in tail.iter_mut().zip(&before.line_starts[moved..]) {
            *slot = s - old_end + new_end;
        }
        // Deleting the only non-ASCII text keeps the slower, still correct
        // counting.
        let ascii = before.ascii && inserted.is_ascii();
        LineIndex {
            text,
            line_starts,
            ascii,
            encoding: before.encoding,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether this is the index of the very snapshot `text`.
    pub fn is_of(&self, text: &Arc<str>) -> bool {
        Arc::ptr_eq(&self.text, text)
    }

    /// The LSP position of a byte offset (clamped to the text, and moved
    /// back to a char boundary).
    pub fn position(&self, offset: u32) -> Position {
        let mut offset = (offset as usize).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.line_starts.binary_search(&(offset as u32)) {
            Ok(line) => line,
            Err(next) => next - 1,
        };
        let start = self.line_starts[line] as usize;
        let character = if self.ascii || self.encoding == Encoding::Utf8 {
            offset - start
        } else {
            self.text[start..offset].encode_utf16().count()
        };
        Position::new(line as u32, character as u32)
    }

    /// The line of a byte offset (clamped to the text): the same in every
    /// encoding.
    pub fn line(&self, offset: u32) -> u32 {
        let offset = offset.min(self.text.len() as u32);
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line as u32,
            Err(next) => next as u32 - 1,
        }
    }

    /// The LSP range of a byte range.
    pub fn range(&self, range: relay_syntax::TextRange) -> Range {
        Range::new(
            self.position(range.start().into()),
            self.position(range.end().into()),
        )
    }

    /// The byte offset of an LSP position; positions past the end of a
    /// line are clamped to its end, lines past the end of the text to the
    /// end, a column inside a character to its start.
    pub fn offset(&self, position: Position) -> u32 {
        self.offset_in(position, self.encoding)
    }

    /// [`LineIndex::offset`] of a position whose columns count in
    /// `encoding`.
    fn offset_in(&self, position: Position, encoding: Encoding) -> u32 {
        let line = position.line as usize;
        if line >= self.line_starts.len() {
            return self.text.len() as u32;
        }
        let start = self.line_starts[line] as usize;
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |&next| next as usize);
        let line_text = self.text[start..end].trim_end_matches(['\n', '\r']);
        let column = position.character as usize;
        let bytes = if self.ascii || encoding == Encoding::Utf8 {
            let mut column = column.min(line_text.len());
            while !line_text.is_char_boundary(column) {
                column -= 1;
            }
            column
        } else {
            let mut units = 0;
            let mut bytes = line_text.len();
            for (i, c) in line_text.char_indices() {
                // A column inside a surrogate pair means the char's start.
                if units >= column || units + c.len_utf16() > column {
                    bytes = i;
                    break;
                }
                units += c.len_utf16();
            }
            bytes
        };
        (start + bytes) as u32
    }

    /// The byte range of an LSP range.
    pub fn text_range(&self, range: Range) -> relay_syntax::TextRange {
        let start = self.offset(range.start);
        let end = self.offset(range.end).max(start);
        relay_syntax::TextRange::new(start.into(), end.into())
    }

    /// The number of lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

fn memchr_newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(range: Option<Range>, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range,
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn incremental_edits_in_both_encodings() {
        let text = "// é😀\nab%x\n";
        let mut doc = Document::new(text, 1);
        // After `// é😀` on line 0: UTF-16 column 6 (é is 1 unit, 😀 2), UTF-8 column 9.
        let r16 = Range::new(Position::new(0, 6), Position::new(0, 6));
        doc.apply_change(&change(Some(r16), "!"), Encoding::Utf16);
        assert_eq!(doc.text().as_ref(), "// é😀!\nab%x\n");
        let r8 = Range::new(Position::new(0, 9), Position::new(0, 10));
        doc.apply_change(&change(Some(r8), "?"), Encoding::Utf8);
        assert_eq!(doc.text().as_ref(), "// é😀?\nab%x\n");
        // A column past the end of a line is its end.
        let past = Range::new(Position::new(1, 99), Position::new(1, 99));
        doc.apply_change(&change(Some(past), "y"), Encoding::Utf16);
        assert_eq!(doc.text().as_ref(), "// é😀?\nab%xy\n");
        doc.apply_change(&change(None, "new"), Encoding::Utf16);
        assert_eq!(doc.text().as_ref(), "new");
    }

    /// An index made from the last one and an edit equals one made from
    /// the text, for edits adding, removing and keeping line breaks.
    #[test]
    fn an_edited_index_equals_a_new_one() {
        let texts = [
            "a\nbc\n\ndé\nf",
            "a\nbX\nc\n\ndé\nf",
            "a\nc\n\ndé\nf",
            "\n",
            "",
            "a\r\nb\n",
            "a\r\nb\nc",
        ];
        for old in texts {
            for new in texts {
                let before = LineIndex::new(Arc::from(old), Encoding::Utf16);
                let edit =
                    relay_syntax::TextEdit::between(old, new).unwrap_or(relay_syntax::TextEdit {
                        delete: relay_syntax::TextRange::empty(0.into()),
                        insert_len: 0.into(),
                    });
                let edited = LineIndex::edited(&before, Arc::from(new), edit);
                let fresh = LineIndex::new(Arc::from(new), Encoding::Utf16);
                assert_eq!(edited.line_starts, fresh.line_starts, "{old:?} -> {new:?}");
                for offset in 0..=new.len() as u32 {
                    assert_eq!(edited.position(offset), fresh.position(offset));
                }
            }
        }
    }

    #[test]
    fn offsets_and_positions() {
        let text: Arc<str> = Arc::from("// é😀\nab%x\r\nz");
        let u16 = LineIndex::new(text.clone(), Encoding::Utf16);
        let u8 = LineIndex::new(text.clone(), Encoding::Utf8);
        let end_of_comment = "// é😀".len() as u32;
        assert_eq!(u16.position(end_of_comment), Position::new(0, 6));
        assert_eq!(u8.position(end_of_comment), Position::new(0, 9));
        assert_eq!(u16.offset(Position::new(0, 6)), end_of_comment);
        assert_eq!(u8.offset(Position::new(0, 9)), end_of_comment);
        // Inside the surrogate pair: back to the start of the emoji.
        assert_eq!(u16.offset(Position::new(0, 5)), "// é".len() as u32);
        let x = text.find("%x").unwrap() as u32;
        assert_eq!(u16.position(x), Position::new(1, 2));
        assert_eq!(u16.offset(Position::new(1, 99)), x + 2);
        assert_eq!(u16.offset(Position::new(2, 0)), text.len() as u32 - 1);
        assert_eq!(u16.offset(Position::new(9, 0)), text.len() as u32);
        for offset in 0..=text.len() as u32 + 3 {
            assert_eq!(u16.line(offset), u16.position(offset).line, "at {offset}");
        }
    }
}
