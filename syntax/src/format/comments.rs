//! Which element each comment belongs to.
//!
//! The tree keeps comments as trivia between the significant children of a
//! node (never at a node's edge, except at the file's). Before laying a node
//! out, its children are grouped into [`Item`]s: one significant child with
//! the comments that lead it (written on the lines before it, or before it on
//! its line after a line break) and those that trail it (written after it on
//! the same line). The layout then places each item and its comments move
//! with it, so no comment can be lost or reordered by a layout rule.

use super::doc::Doc;
use crate::{SyntaxElement, SyntaxKind, SyntaxNode, SyntaxToken};

/// A comment and the line breaks written after it (at most 2: a blank line).
#[derive(Debug, Clone)]
pub(crate) struct Comment {
    pub(crate) token: SyntaxToken,
    pub(crate) newlines_after: u8,
}

impl Comment {
    pub(crate) fn doc(&self) -> Doc {
        Doc::Comment {
            token: self.token.clone(),
            newlines_after: self.newlines_after,
        }
    }
}

/// A significant child of a node with its comments.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub(crate) leading: Vec<Comment>,
    pub(crate) element: SyntaxElement,
    pub(crate) trailing: Vec<Comment>,
    /// The author left an empty line before the item (or its comments).
    pub(crate) blank_before: bool,
}

impl Item {
    pub(crate) fn kind(&self) -> SyntaxKind {
        self.element.kind()
    }
}

/// The items of `node`, and the comments after its last significant child
/// (only the root has those) with whether an empty line precedes them.
pub(crate) fn items(node: &SyntaxNode) -> (Vec<Item>, Vec<Comment>, bool) {
    let mut items: Vec<Item> = Vec::new();
    let mut leading: Vec<Comment> = Vec::new();
    let mut leading_blank = false;
    // Line breaks since the last item or comment.
    let mut newlines = 0usize;
    // Whether the last thing seen was a comment, and where it went.
    let mut last_comment: Option<(bool, usize)> = None; // (trailing?, index)
    let mut line_broken_since_item = true;
    for child in node.children_with_tokens() {
        match child.kind() {
            SyntaxKind::WHITESPACE => {
                let count = child
                    .as_token()
                    .map_or(0, |t| t.text().matches('\n').count());
                newlines += count;
                if count > 0 {
                    line_broken_since_item = true;
                }
                if let Some((trailing, index)) = last_comment.take() {
                    let target = if trailing {
                        items
                            .last_mut()
                            .and_then(|item| item.trailing.get_mut(index))
                    } else {
                        leading.get_mut(index)
                    };
                    if let Some(comment) = target {
                        comment.newlines_after = comment.newlines_after.max(count.min(2) as u8);
                    }
                }
            }
            SyntaxKind::LINE_COMMENT | SyntaxKind::BLOCK_COMMENT => {
                let Some(token) = child.into_token() else {
                    continue;
                };
                // A line comment ends its line even at the end of the file.
                let newlines_after = u8::from(token.kind() == SyntaxKind::LINE_COMMENT);
                let comment = Comment {
                    token,
                    newlines_after,
                };
                match items.last_mut() {
                    Some(item) if !line_broken_since_item => {
                        item.trailing.push(comment);
                        last_comment = Some((true, item.trailing.len() - 1));
                    }
                    _ => {
                        if leading.is_empty() {
                            leading_blank = newlines >= 2;
                        }
                        leading.push(comment);
                        last_comment = Some((false, leading.len() - 1));
                    }
                }
                newlines = 0;
            }
            _ => {
                let blank_before = if leading.is_empty() {
                    newlines >= 2
                } else {
                    leading_blank
                };
                items.push(Item {
                    leading: std::mem::take(&mut leading),
                    element: child,
                    trailing: Vec::new(),
                    blank_before,
                });
                newlines = 0;
                last_comment = None;
                line_broken_since_item = false;
            }
        }
    }
    move_line_comments_past_separators(&mut items);
    (items, leading, leading_blank)
}

/// `a // note` followed on the next line by `,` or `;` reads as a comment on
/// the separator's line once the separator follows `a` directly: the comment
/// moves after the separator (its text and order among comments unchanged).
fn move_line_comments_past_separators(items: &mut [Item]) {
    for index in 1..items.len() {
        let (before, after) = items.split_at_mut(index);
        let previous = &mut before[index - 1];
        let separator = &mut after[0];
        let moves = matches!(separator.kind(), SyntaxKind::COMMA | SyntaxKind::SEMICOLON)
            && separator.leading.is_empty()
            && separator.trailing.is_empty()
            && previous.trailing.len() == 1
            && previous.trailing[0].token.kind() == SyntaxKind::LINE_COMMENT;
        if moves {
            separator.trailing = std::mem::take(&mut previous.trailing);
        }
    }
}
