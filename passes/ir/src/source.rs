//! Source files and spans: every IR node and diagnostic points back into the
//! text it came from through a [`Span`] (a [`FileId`] and a byte range).
//!
//! A [`SourceMap`] owns the texts. It is cheap to clone (texts are shared) and
//! can be sent across threads, so the language server can analyse a snapshot
//! while the editor goes on typing.

use relay_syntax::{TextRange, TextSize};
use std::sync::{Arc, OnceLock};

/// The source name TVM gives text it printed itself (`AnnotateSpans`
/// re-reads the printed module under this name; the printer writes spans
/// of such files differently).
pub const GENERATED_SOURCE: &str = "GeneratedSource";

/// A file registered in a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u32);

/// A byte range in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub range: TextRange,
}

impl Span {
    pub fn new(file: FileId, range: TextRange) -> Span {
        Span { file, range }
    }

    /// The smallest span covering both (which must be in the same file).
    pub fn cover(self, other: Span) -> Span {
        debug_assert_eq!(self.file, other.file);
        Span {
            file: self.file,
            range: self.range.cover(other.range),
        }
    }
}

/// One source text with its name and line starts.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: Arc<str>,
    /// Computed on first use: most files are read, lowered and printed
    /// without a line/column ever being asked for.
    line_starts: OnceLock<Vec<TextSize>>,
}

impl SourceFile {
    fn new(name: String, text: Arc<str>) -> SourceFile {
        SourceFile {
            name,
            text,
            line_starts: OnceLock::new(),
        }
    }

    /// Zero-based line and byte column of an offset.
    pub fn line_col(&self, offset: TextSize) -> (usize, usize) {
        let line_starts = self.line_starts();
        let line = match line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        };
        let col = usize::from(offset - line_starts[line]);
        (line, col)
    }

    /// Byte offsets where lines start.
    pub fn line_starts(&self) -> &[TextSize] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![TextSize::from(0)];
            starts.extend(
                memchr::memchr_iter(b'\n', self.text.as_bytes())
                    .map(|i| TextSize::from(i as u32 + 1)),
            );
            starts
        })
    }
}

/// The texts that spans point into.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<Arc<SourceFile>>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Registers a text and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files
            .push(Arc::new(SourceFile::new(name.into(), text.into())));
        id
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize).map(|f| &**f)
    }

    pub fn name(&self, id: FileId) -> &str {
        self.get(id).map_or("<unknown>", |f| f.name.as_str())
    }

    pub fn text(&self, id: FileId) -> &str {
        self.get(id).map_or("", |f| &f.text)
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), &**f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col() {
        let mut map = SourceMap::new();
        let id = map.add("a.relay", "ab\ncd\n\nx");
        let file = map.get(id).unwrap();
        assert_eq!(file.line_col(TextSize::from(0)), (0, 0));
        assert_eq!(file.line_col(TextSize::from(2)), (0, 2));
        assert_eq!(file.line_col(TextSize::from(3)), (1, 0));
        assert_eq!(file.line_col(TextSize::from(7)), (3, 0));
        assert_eq!(map.name(id), "a.relay");
    }
}
