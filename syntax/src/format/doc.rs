//! The layout document and the printer that fits it into a line width.
//!
//! The layout rules ([`super::layout`]) describe a file as a tree of
//! [`Doc`]s: texts, spaces, places where a line may break, groups that are
//! printed on one line when they fit and broken at every [`Doc::Line`] of
//! their own otherwise, and indentation. This is Wadler's "prettier printer"
//! as Prettier implements it: a group fits when its flat text and what
//! follows up to the next possible line break fit in the rest of the line.
//!
//! Comments are printed by the printer rather than by the rules, so that
//! their spacing is the same wherever a rule puts them: a space before one
//! (except at the start of a line or right after an opening bracket), a
//! space after a block comment before anything but a closing bracket or a
//! separator, and a line break after a line comment, or after any comment
//! the author ended a line with. A group that holds such a break, a hard
//! line or a comment spanning lines is never printed flat.

use crate::SyntaxToken;

/// Spaces per indentation level (TVM's printer uses two).
pub(crate) const INDENT: usize = 2;

/// One piece of the layout.
#[derive(Debug, Clone)]
pub(crate) enum Doc {
    /// The text of a token of the input.
    Token(SyntaxToken),
    /// Text the layout adds (a separator the input lacked).
    Static(&'static str),
    /// A comment of the input, and how many line breaks (0, 1 or 2 for a
    /// blank line) the author wrote after it.
    Comment {
        token: SyntaxToken,
        newlines_after: u8,
    },
    /// One space (dropped at the start of a line).
    Space,
    /// A space, or a line break when the enclosing group is broken.
    Line,
    /// Nothing, or a line break when the enclosing group is broken.
    SoftLine,
    /// Always a line break.
    HardLine,
    /// Always a line break with an empty line after it.
    BlankLine,
    /// The pieces in order; `hard` when one of them forces a line break.
    Concat { parts: Vec<Doc>, hard: bool },
    /// The piece indented one more level after each of its line breaks.
    Indent { inner: Box<Doc>, hard: bool },
    /// The piece flat when it fits, broken otherwise.
    Group { inner: Box<Doc>, hard: bool },
    /// Like a group, but only its own line breaks are decided together:
    /// they stay flat when the text up to the first possible break of the
    /// groups inside fits, and those groups then decide for themselves.
    /// (`%0 = f(` stays on one line and `f`'s arguments break.) Broken,
    /// the piece is indented one more level.
    ShallowGroup { inner: Box<Doc> },
}

impl Doc {
    /// Whether printing this piece certainly produces a line break.
    pub(crate) fn is_hard(&self) -> bool {
        match self {
            Doc::Token(token) => token.text().contains('\n'),
            Doc::Comment {
                token,
                newlines_after,
            } => *newlines_after > 0 || token.text().contains('\n'),
            Doc::HardLine | Doc::BlankLine => true,
            Doc::Static(_) | Doc::Space | Doc::Line | Doc::SoftLine => false,
            Doc::Concat { hard, .. } | Doc::Indent { hard, .. } | Doc::Group { hard, .. } => *hard,
            // Its own breaks are soft; a hard break inside belongs to an
            // inner piece and does not decide them.
            Doc::ShallowGroup { .. } => false,
        }
    }

    pub(crate) fn concat(parts: Vec<Doc>) -> Doc {
        let hard = parts.iter().any(Doc::is_hard);
        Doc::Concat { parts, hard }
    }

    pub(crate) fn indent(inner: Doc) -> Doc {
        let hard = inner.is_hard();
        Doc::Indent {
            inner: Box::new(inner),
            hard,
        }
    }

    pub(crate) fn shallow_group(inner: Doc) -> Doc {
        Doc::ShallowGroup {
            inner: Box::new(inner),
        }
    }

    pub(crate) fn group(inner: Doc) -> Doc {
        let hard = inner.is_hard();
        Doc::Group {
            inner: Box::new(inner),
            hard,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Flat,
    /// Flat for the breaks of a [`Doc::ShallowGroup`]; groups inside decide.
    Shallow,
    Break,
}

/// A piece waiting to be printed, with its indentation and mode.
type Command<'d> = (usize, Mode, &'d Doc);

/// Prints `doc` into lines of at most `width` characters where the layout
/// allows a break; the text ends with one newline unless it ends with a
/// token that carries its own end (the metadata section).
pub(crate) fn print(doc: &Doc, width: usize) -> String {
    let mut printer = Printer {
        out: String::new(),
        column: 0,
        pending_newlines: 0,
        pending_indent: None,
        space_after_comment: false,
        width,
    };
    let mut stack: Vec<Command<'_>> = vec![(0, Mode::Break, doc)];
    while let Some((indent, mode, doc)) = stack.pop() {
        match doc {
            Doc::Token(token) => printer.text(token.text(), indent),
            Doc::Static(text) => printer.text(text, indent),
            Doc::Comment {
                token,
                newlines_after,
            } => printer.comment(token, *newlines_after, indent),
            Doc::Space => printer.space(),
            Doc::Line if mode != Mode::Break => printer.space(),
            Doc::SoftLine if mode != Mode::Break => {}
            Doc::Line | Doc::SoftLine | Doc::HardLine => printer.newline(1, indent),
            Doc::BlankLine => printer.newline(2, indent),
            Doc::Concat { parts, .. } => {
                stack.extend(parts.iter().rev().map(|part| (indent, mode, part)));
            }
            Doc::Indent { inner, .. } => stack.push((indent + INDENT, mode, inner)),
            Doc::Group { inner, hard } => {
                let mode = if mode == Mode::Flat
                    || !*hard && printer.fits((indent, Mode::Flat, inner), &stack, indent)
                {
                    Mode::Flat
                } else {
                    Mode::Break
                };
                stack.push((indent, mode, inner));
            }
            Doc::ShallowGroup { inner } => {
                if mode == Mode::Flat {
                    // Inside a flat group everything is flat already.
                    stack.push((indent, Mode::Flat, inner));
                } else if printer.fits((indent, Mode::Shallow, inner), &stack, indent) {
                    stack.push((indent, Mode::Shallow, inner));
                } else {
                    stack.push((indent + INDENT, Mode::Break, inner));
                }
            }
        }
    }
    printer.finish()
}

struct Printer {
    out: String,
    /// Characters on the current line.
    column: usize,
    /// Line breaks asked for and not yet written (they are written before
    /// the next text, so that a break and a comment's break merge).
    pending_newlines: u8,
    /// The indentation of the line after the pending breaks, when a break
    /// of the layout set it (a comment's break takes the next text's).
    pending_indent: Option<usize>,
    /// A block comment was just written: the next text is spaced from it.
    space_after_comment: bool,
    width: usize,
}

impl Printer {
    fn flush_newlines(&mut self, indent: usize) {
        if self.pending_newlines == 0 {
            return;
        }
        let indent = self.pending_indent.take().unwrap_or(indent);
        let newlines = self.pending_newlines;
        self.pending_newlines = 0;
        self.trim_trailing_spaces();
        // Nothing before: no leading empty lines.
        if !self.out.is_empty() {
            for _ in 0..newlines {
                self.out.push('\n');
            }
        }
        self.out.extend(std::iter::repeat_n(' ', indent));
        self.column = indent;
    }

    fn trim_trailing_spaces(&mut self) {
        let trimmed = self.out.trim_end_matches(' ').len();
        self.out.truncate(trimmed);
    }

    /// At the start of a line or after a space: a separating space would
    /// be one too many.
    fn spaced(&self) -> bool {
        self.out.is_empty() || self.out.ends_with('\n') || self.out.ends_with(' ')
    }

    fn text(&mut self, text: &str, indent: usize) {
        if self.pending_newlines > 0 {
            self.flush_newlines(indent);
        } else if self.space_after_comment
            && !text.starts_with([')', ']', '}', ',', ';'])
            && !self.spaced()
        {
            self.out.push(' ');
            self.column += 1;
        }
        self.space_after_comment = false;
        self.push(text);
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
        match text.rfind('\n') {
            Some(last) => self.column = text[last + 1..].chars().count(),
            None => self.column += text.chars().count(),
        }
    }

    fn comment(&mut self, token: &SyntaxToken, newlines_after: u8, indent: usize) {
        let text = token.text();
        if self.pending_newlines > 0 {
            self.flush_newlines(indent);
        } else {
            let after_open = self.out.ends_with(['(', '[', '{']);
            let is_line = text.starts_with("//");
            if !self.spaced() && (is_line || !after_open) {
                self.out.push(' ');
                self.column += 1;
            }
        }
        self.space_after_comment = false;
        self.push(text);
        if newlines_after > 0 || text.starts_with("//") {
            self.pending_newlines = self.pending_newlines.max(newlines_after.max(1));
        } else {
            self.space_after_comment = true;
        }
    }

    fn space(&mut self) {
        self.space_after_comment = false;
        if self.pending_newlines == 0 && !self.spaced() {
            self.out.push(' ');
            self.column += 1;
        }
    }

    fn newline(&mut self, count: u8, indent: usize) {
        self.space_after_comment = false;
        self.pending_newlines = self.pending_newlines.max(count);
        self.pending_indent = Some(indent);
    }

    fn finish(mut self) -> String {
        if self.pending_newlines > 0 {
            self.trim_trailing_spaces();
            if !self.out.is_empty() {
                self.out.push('\n');
            }
        }
        self.out
    }

    /// Whether `next` printed flat, and what follows it up to the next line
    /// break, fits in the rest of the line.
    fn fits(&self, next: Command<'_>, rest: &[Command<'_>], indent: usize) -> bool {
        let column = if self.pending_newlines > 0 {
            self.pending_indent.unwrap_or(indent)
        } else {
            self.column
        };
        let mut left = self.width as isize - column as isize;
        let mut stack = vec![next];
        let mut rest = rest.iter().rev();
        while left >= 0 {
            let (indent, mode, doc) = match stack.pop() {
                Some(command) => command,
                None => match rest.next() {
                    Some(&command) => command,
                    None => return true,
                },
            };
            match doc {
                Doc::Token(token) => {
                    // A token spanning lines (the metadata section) ends
                    // the measured line.
                    let text = token.text();
                    let first = text.split('\n').next().unwrap_or_default();
                    left -= first.chars().count() as isize;
                    if text.contains('\n') {
                        return left >= 0;
                    }
                }
                Doc::Static(text) => left -= text.len() as isize,
                Doc::Comment {
                    token,
                    newlines_after,
                } => {
                    let text = token.text();
                    let first = text.split('\n').next().unwrap_or_default();
                    left -= first.chars().count() as isize + 1;
                    if *newlines_after > 0 || text.contains('\n') || text.starts_with("//") {
                        return left >= 0;
                    }
                }
                Doc::Space => left -= 1,
                Doc::Line if mode != Mode::Break => left -= 1,
                Doc::SoftLine if mode != Mode::Break => {}
                Doc::Line | Doc::SoftLine | Doc::HardLine | Doc::BlankLine => return true,
                Doc::Concat { parts, .. } => {
                    stack.extend(parts.iter().rev().map(|part| (indent, mode, part)));
                }
                Doc::Indent { inner, .. } => stack.push((indent + INDENT, mode, inner)),
                Doc::Group { inner, hard } => {
                    // Inside a shallow group, the groups are measured up to
                    // their first break.
                    let mode = if *hard || mode == Mode::Shallow {
                        Mode::Break
                    } else {
                        mode
                    };
                    stack.push((indent, mode, inner));
                }
                Doc::ShallowGroup { inner } => {
                    let mode = if mode == Mode::Flat {
                        Mode::Flat
                    } else {
                        Mode::Shallow
                    };
                    stack.push((indent, mode, inner));
                }
            }
        }
        false
    }
}
