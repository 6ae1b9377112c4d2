//! Incremental re-parsing: after an edit inside one top-level `def`, only
//! that definition is lexed and parsed again and its new green node is
//! spliced into the old tree; everything else of the old tree (and its
//! errors, shifted) is kept. The result is the tree and the errors a full
//! parse of the new text gives — `tests/reparse.rs` checks that on thousands of random edits.
//!
//! A definition can be re-parsed alone when the edit cannot move its
//! boundaries:
//!
//! * the edit lies strictly inside the `def` (not touching its first or last
//!   byte, so the tokens around it cannot merge with its own);
//! * its new text, parsed alone, passes the checks of `lone_def.rs` (lexes
//!   cleanly, ends with the `}` of its body, is exactly one `def`, no error
//!   at its end, no leniency);
//! * nothing before it changes how it is parsed: no `extern type` precedes
//!   it (TVM stops reading definitions after one) and the old parse hit no
//!   nesting limit (that error is reported once per parse).
//!
//! Otherwise the whole text is parsed again.

use crate::lone_def::parse_lone_def;
use crate::syntax_error::SyntaxErrorKind;
use crate::{Parse, ParseOptions, SyntaxError, SyntaxKind, SyntaxNode};
use rowan::{TextRange, TextSize};

/// One replacement in a text: the bytes `delete` of the old text are
/// replaced by `insert_len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextEdit {
    pub delete: TextRange,
    pub insert_len: TextSize,
}

impl TextEdit {
    /// The smallest single edit turning `old` into `new` (their common
    /// prefix and suffix are kept), or `None` if the texts are equal. The
    /// edit's ends fall on character boundaries of both texts.
    pub fn between(old: &str, new: &str) -> Option<TextEdit> {
        if old == new {
            return None;
        }
        let (a, b) = (old.as_bytes(), new.as_bytes());
        let mut prefix = common_prefix(a, b);
        while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
            prefix -= 1;
        }
        let max_suffix = a.len().min(b.len()) - prefix;
        let mut suffix = common_suffix(&a[a.len() - max_suffix..], &b[b.len() - max_suffix..]);
        while !old.is_char_boundary(a.len() - suffix) || !new.is_char_boundary(b.len() - suffix) {
            suffix -= 1;
        }
        let size = |n: usize| TextSize::from(n as u32);
        Some(TextEdit {
            delete: TextRange::new(size(prefix), size(a.len() - suffix)),
            insert_len: size(b.len() - suffix - prefix),
        })
    }

    /// How much the edit moves the text after it (bytes, may be negative).
    pub fn delta(&self) -> i64 {
        i64::from(u32::from(self.insert_len)) - i64::from(u32::from(self.delete.len()))
    }
}

/// Compares in blocks (the bulk of a 10 MB text is equal) and then bytes.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[la - i - BLOCK..la - i] == b[lb - i - BLOCK..lb - i] {
        i += BLOCK;
    }
    while i < n && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

/// What [`reparse_module`] re-parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reparsed {
    /// The text did not change.
    Nothing,
    /// Only the top-level definition that was at `old` in the old text and
    /// is at `new` in the new one.
    Item { old: TextRange, new: TextRange },
    /// The whole text.
    Full,
}

/// The parse of `new_text`, which is the text of `old` (a module parse)
/// with `edit` applied: re-parses only the definition the edit is in when it
/// can (see the module docs), else the whole text. Equal to
/// [`parse_module`](crate::parse_module)`(new_text)` either way.
pub fn reparse_module(old: &Parse, edit: TextEdit, new_text: &str) -> (Parse, Reparsed) {
    reparse_module_with(old, edit, new_text, ParseOptions::STRICT)
}

/// [`reparse_module`] for a parse made with `options`: equal to
/// [`parse_with`](crate::parse_with)`(new_text, Entry::Module, options)`.
/// A lenient parse is re-parsed by definition only while the reading needs
/// no leniency (a clean 0.0.5 file, what the editor mostly holds); a file
/// or a definition that does is parsed in full, which keeps the
/// leniencies, sorted and one warning per name, exactly as a full parse
/// reports them.
pub fn reparse_module_with(
    old: &Parse,
    edit: TextEdit,
    new_text: &str,
    options: ParseOptions,
) -> (Parse, Reparsed) {
    let item = if old.leniencies().is_empty() {
        reparse_item(old, edit, new_text, options)
    } else {
        None
    };
    match item {
        Some(result) => result,
        None => (
            crate::parse_with(new_text, crate::Entry::Module, options),
            Reparsed::Full,
        ),
    }
}

fn reparse_item(
    old: &Parse,
    edit: TextEdit,
    new_text: &str,
    options: ParseOptions,
) -> Option<(Parse, Reparsed)> {
    let root = old.syntax_node();
    if root.kind() != SyntaxKind::SOURCE_FILE {
        return None;
    }
    let old_len = u32::from(root.text_range().end()) as i64;
    if old_len + edit.delta() != new_text.len() as i64 {
        return None;
    }
    if old
        .errors()
        .iter()
        .any(|e| e.kind() == SyntaxErrorKind::Limit)
    {
        return None;
    }
    let def = enclosing_def(&root, edit.delete)?;
    let old_range = def.text_range();
    let new_end = u32::from(old_range.end()) as i64 + edit.delta();
    let new_range = TextRange::new(
        old_range.start(),
        TextSize::from(u32::try_from(new_end).ok()?),
    );
    let fragment = new_text.get(std::ops::Range::<usize>::from(new_range))?;
    let (green, errors) = parse_lone_def(fragment, options)?;
    // Where the next token after the definition starts: a definition whose
    // body the parser gave up on complains there, outside its own range.
    let next_token =
        std::iter::successors(def.next_sibling_or_token(), |e| e.next_sibling_or_token())
            .find(|e| !e.kind().is_trivia())
            .map_or(root.text_range().end(), |e| e.text_range().start());
    let new_root = def.replace_with(green);

    // The old errors before the definition, the fragment's in its place,
    // the old ones after it shifted: sorted and de-duplicated as a full
    // parse does.
    let (old_start, old_end) = (old_range.start(), old_range.end());
    let move_by = |range: TextRange, by: i64| {
        let start = (i64::from(u32::from(range.start())) + by) as u32;
        TextRange::at(TextSize::from(start), range.len())
    };
    let mut merged: Vec<SyntaxError> = Vec::with_capacity(old.errors().len() + errors.len());
    for error in old.errors() {
        let range = error.range();
        if range.start() < old_start {
            if range.end() > old_start {
                // Reaches into the definition from before it.
                return None;
            }
            merged.push(error.clone());
        } else if range.start() == old_start {
            // At the `def` keyword: the definition before it reported not
            // finding its end there (the definition's own parse never
            // complains at its first token).
            merged.push(error.clone());
        }
    }
    let offset = i64::from(u32::from(old_start));
    merged.extend(
        errors
            .into_iter()
            .map(|e| e.map_ranges(|r| move_by(r, offset))),
    );
    for error in old.errors() {
        let start = error.range().start();
        if start >= old_end && start <= next_token {
            // Perhaps the old definition's: cannot tell, parse in full.
            return None;
        }
    }
    for error in old.errors() {
        if error.range().start() >= old_end {
            merged.push(error.map_ranges(|r| {
                if r.start() >= old_end {
                    move_by(r, edit.delta())
                } else {
                    r
                }
            }));
        }
    }
    merged.sort_by_key(|e| e.range().start());
    merged.dedup_by_key(|e| e.range().start());
    Some((
        Parse {
            green: new_root,
            errors: merged,
            leniencies: Vec::new(),
        },
        Reparsed::Item {
            old: old_range,
            new: new_range,
        },
    ))
}

/// The top-level `def` strictly containing `range`, if nothing before it
/// changes how it is parsed.
fn enclosing_def(root: &SyntaxNode, range: TextRange) -> Option<SyntaxNode> {
    let mut found = None;
    for child in root.children() {
        match child.kind() {
            // TVM reads no definition after an `extern type`.
            SyntaxKind::EXTERN_TYPE_DEF if child.text_range().start() < range.start() => {
                return None
            }
            SyntaxKind::DEF => {
                let r = child.text_range();
                if r.start() < range.start() && range.end() < r.end() {
                    found = Some(child);
                    break;
                }
                if r.start() >= range.end() {
                    break;
                }
            }
            _ => {}
        }
    }
    found
}
