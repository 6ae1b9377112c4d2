//! Cuts long source lines around the carets before a diagnostic is drawn.
//!
//! codespan-reporting prints every source line a label touches in full; a
//! 16 KB line (generated code, a minified model) made each diagnostic 16 KB
//! of output. When a shown line is longer than [`MAX_LINE`] bytes, the
//! diagnostic is drawn from a small stand-in file holding just the lines it
//! shows, each long one cut to a window around its labels with `…` marking
//! the cuts. Line numbers, columns and file names stay those of the real
//! file: the stand-in maps every position back.

use super::SourceFiles;
use codespan_reporting::diagnostic::Diagnostic;
use codespan_reporting::files::{Error as FilesError, Files, Location};
use relay_passes::source::FileId;
use std::collections::HashMap;
use std::ops::Range;

/// The longest source line shown whole, in bytes.
pub const MAX_LINE: usize = 160;
/// Context kept before the first caret of a cut line.
const MARGIN: usize = 40;
const ELLIPSIS: &str = "…";

/// The diagnostic redrawn over cut lines, or `None` when every line it
/// shows is short (it is drawn from the real file then).
pub(super) fn crop<'a>(
    files: &'a SourceFiles<'a>,
    diagnostic: &Diagnostic<FileId>,
) -> Option<(CroppedFiles<'a>, Diagnostic<FileId>)> {
    let mut by_file: HashMap<FileId, Vec<usize>> = HashMap::new();
    for label in &diagnostic.labels {
        let points = by_file.entry(label.file_id).or_default();
        points.push(label.range.start);
        points.push(label.range.end);
    }
    let mut cropped = HashMap::new();
    for (file, points) in by_file {
        let source = files.source(file).ok()?;
        let lines: Vec<usize> = points
            .iter()
            .map(|&p| files.line_index(file, p))
            .collect::<Result<_, _>>()
            .ok()?;
        let (first, last) = (*lines.iter().min()?, *lines.iter().max()?);
        let long = (first..=last).any(|line| {
            files
                .line_range(file, line)
                .is_ok_and(|range| range.len() > MAX_LINE)
        });
        if long {
            cropped.insert(
                file,
                CroppedFile::new(files, file, source, first..last + 1, &points)?,
            );
        }
    }
    if cropped.is_empty() {
        return None;
    }
    let mut diagnostic = diagnostic.clone();
    for label in &mut diagnostic.labels {
        if let Some(file) = cropped.get(&label.file_id) {
            label.range = file.to_new(label.range.start)..file.to_new(label.range.end);
        }
    }
    Some((
        CroppedFiles {
            base: files,
            cropped,
        },
        diagnostic,
    ))
}

/// One shown line of a stand-in file.
#[derive(Debug)]
struct ShownLine {
    /// Its bytes in the real file (without the line break).
    orig: Range<usize>,
    /// The part kept (all of `orig` for a short line).
    window: Range<usize>,
    /// Where it starts in the stand-in text.
    new_start: usize,
    /// Bytes of `…` before the window in the stand-in.
    prefix: usize,
    /// Its whole range in the stand-in (line break included).
    new_range: Range<usize>,
}

/// The lines `first..end` of a file, long ones cut.
pub(super) struct CroppedFile {
    first_line: usize,
    text: String,
    lines: Vec<ShownLine>,
}

impl CroppedFile {
    fn new(
        files: &SourceFiles<'_>,
        file: FileId,
        source: &str,
        shown: Range<usize>,
        points: &[usize],
    ) -> Option<CroppedFile> {
        let mut text = String::new();
        let mut lines = Vec::new();
        for line in shown.clone() {
            let range = files.line_range(file, line).ok()?;
            let body = source[range.clone()].trim_end_matches(['\n', '\r']);
            let orig = range.start..range.start + body.len();
            let window = if orig.len() > MAX_LINE {
                let on_line: Vec<usize> = points
                    .iter()
                    .copied()
                    .filter(|p| orig.start <= *p && *p <= orig.end)
                    .collect();
                window(source, &orig, &on_line)
            } else {
                orig.clone()
            };
            let new_start = text.len();
            let prefix = if window.start > orig.start {
                text.push_str(ELLIPSIS);
                ELLIPSIS.len()
            } else {
                0
            };
            text.push_str(&source[window.clone()]);
            if window.end < orig.end {
                text.push_str(ELLIPSIS);
            }
            text.push('\n');
            lines.push(ShownLine {
                orig,
                window,
                new_start,
                prefix,
                new_range: new_start..text.len(),
            });
        }
        Some(CroppedFile {
            first_line: shown.start,
            text,
            lines,
        })
    }

    /// A position of the real file in the stand-in (clamped to the window
    /// of its line).
    fn to_new(&self, orig: usize) -> usize {
        let line = self
            .lines
            .iter()
            .rev()
            .find(|l| l.orig.start <= orig)
            .unwrap_or(&self.lines[0]);
        let clamped = orig.clamp(line.window.start, line.window.end);
        line.new_start + line.prefix + (clamped - line.window.start)
    }

    /// A position of the stand-in in the real file.
    fn to_orig(&self, new: usize) -> usize {
        let line = self
            .lines
            .iter()
            .rev()
            .find(|l| l.new_start <= new)
            .unwrap_or(&self.lines[0]);
        let offset = new.saturating_sub(line.new_start + line.prefix);
        (line.window.start + offset).min(line.window.end)
    }

    fn local_line(&self, new: usize) -> usize {
        self.lines
            .iter()
            .rposition(|l| l.new_start <= new)
            .unwrap_or(0)
    }
}

/// A window of at most [`MAX_LINE`] bytes of the line `orig` showing the
/// label ends `points`: all of them if they fit, else the first (the
/// primary label's start).
fn window(source: &str, orig: &Range<usize>, points: &[usize]) -> Range<usize> {
    let (low, high) = match (points.iter().min(), points.iter().max()) {
        (Some(&low), Some(&high)) => (low, high),
        _ => (orig.start, orig.start),
    };
    let start = if high - low + 2 * MARGIN <= MAX_LINE {
        low.saturating_sub(MARGIN).max(orig.start)
    } else {
        let first = points.first().copied().unwrap_or(low);
        first.saturating_sub(MAX_LINE / 2).max(orig.start)
    };
    let end = (start + MAX_LINE).min(orig.end);
    let start = end.saturating_sub(MAX_LINE).max(orig.start).min(start);
    floor_char_boundary(source, start)..floor_char_boundary(source, end)
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The real files, with the stand-ins of the cut ones.
pub(super) struct CroppedFiles<'a> {
    base: &'a SourceFiles<'a>,
    cropped: HashMap<FileId, CroppedFile>,
}

impl<'a> Files<'a> for CroppedFiles<'a> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        self.base.name(id)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        match self.cropped.get(&id) {
            Some(file) => Ok(&file.text),
            None => self.base.source(id),
        }
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, FilesError> {
        match self.cropped.get(&id) {
            Some(file) => Ok(file.first_line + file.local_line(byte_index)),
            None => self.base.line_index(id, byte_index),
        }
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, FilesError> {
        match self.cropped.get(&id) {
            Some(file) => line_index
                .checked_sub(file.first_line)
                .and_then(|i| file.lines.get(i))
                .map(|l| l.new_range.clone())
                .ok_or(FilesError::LineTooLarge {
                    given: line_index,
                    max: file.first_line + file.lines.len(),
                }),
            None => self.base.line_range(id, line_index),
        }
    }

    fn location(&'a self, id: FileId, byte_index: usize) -> Result<Location, FilesError> {
        match self.cropped.get(&id) {
            Some(file) => self.base.location(id, file.to_orig(byte_index)),
            None => self.base.location(id, byte_index),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::render::render;
    use relay_passes::diagnostic::{Code, Diagnostic};
    use relay_passes::source::{SourceMap, Span};
    use relay_syntax::{TextRange, TextSize};

    fn at(file: relay_passes::source::FileId, start: usize, len: usize) -> Span {
        Span::new(
            file,
            TextRange::at(TextSize::from(start as u32), TextSize::from(len as u32)),
        )
    }

    #[test]
    fn a_long_line_is_cut_around_the_caret_and_keeps_its_column() {
        let line = format!("{}BAD{}", "a".repeat(5000), "b".repeat(5000));
        let text = format!("first line\n{line}\nlast\n");
        let mut sources = SourceMap::new();
        let file = sources.add("long.relay", text.as_str());
        let start = text.find("BAD").unwrap();
        let d = Diagnostic::error(Code::UnexpectedToken, "here").with_span(at(file, start, 3));
        let out = render(&[d], &sources);
        assert!(out.len() < 1000, "{} bytes:\n{out}", out.len());
        assert!(out.contains("long.relay:2:5001"), "{out}");
        assert!(
            out.contains("…aaaa") && out.contains("BADbbb") && out.contains("bbb…"),
            "{out}"
        );
        // The caret is under `BAD`.
        let source_line = out.lines().find(|l| l.contains("BAD")).unwrap();
        let caret_line = out.lines().find(|l| l.contains("^^^")).unwrap();
        assert_eq!(
            source_line
                .find("BAD")
                .map(|i| source_line[..i].chars().count()),
            caret_line
                .find("^^^")
                .map(|i| caret_line[..i].chars().count()),
            "{out}"
        );
    }

    #[test]
    fn short_lines_are_shown_whole() {
        let text = "def @main() { bad }\n";
        let mut sources = SourceMap::new();
        let file = sources.add("short.relay", text);
        let d = Diagnostic::error(Code::UnexpectedToken, "here").with_span(at(file, 14, 3));
        let out = render(&[d], &sources);
        assert!(out.contains("def @main() { bad }"), "{out}");
        assert!(!out.contains('…'), "{out}");
    }
}
