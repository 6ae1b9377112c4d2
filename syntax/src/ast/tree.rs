//! What the typed AST needs of a tree: [`TreeNode`] and [`TreeToken`].
//!
//! The wrappers of [`crate::ast`] are generic over the node they hold, so
//! each accessor ("the callee of a call is its first expression child") is
//! written once and reads two representations of the same tree:
//!
//! * [`SyntaxNode`] / [`SyntaxToken`], rowan's cursors (the default type
//!   parameter): they know their parents and siblings, which the language
//!   server and the formatter need;
//! * [`green_view::Node`](crate::green_view::Node) /
//!   [`green_view::Token`](crate::green_view::Token), references into the
//!   immutable green tree: copying one is free and stepping through children
//!   allocates nothing, which lowering a large model needs.

use std::fmt::Debug;
use std::hash::Hash;

use rowan::NodeOrToken;

use crate::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange};

/// A node of the syntax tree, as the typed AST reads it: its kind, its
/// range and its direct children.
pub trait TreeNode: Clone + Eq + Hash + Debug {
    /// The tokens of the tree.
    type Token: TreeToken;
    /// The child nodes, in order.
    type Children: Iterator<Item = Self> + Clone;
    /// The children, nodes and tokens (trivia included), in order.
    type Elements: Iterator<Item = NodeOrToken<Self, Self::Token>>;

    fn kind(&self) -> SyntaxKind;
    fn text_range(&self) -> TextRange;
    fn children(&self) -> Self::Children;
    fn children_with_tokens(&self) -> Self::Elements;
}

/// A token of the syntax tree, as the typed AST reads it.
pub trait TreeToken: Clone + Eq + Hash + Debug {
    fn kind(&self) -> SyntaxKind;
    fn text(&self) -> &str;
    fn text_range(&self) -> TextRange;
}

impl TreeNode for SyntaxNode {
    type Token = SyntaxToken;
    type Children = rowan::SyntaxNodeChildren<crate::RelayLanguage>;
    type Elements = rowan::SyntaxElementChildren<crate::RelayLanguage>;

    #[inline]
    fn kind(&self) -> SyntaxKind {
        SyntaxNode::kind(self)
    }
    #[inline]
    fn text_range(&self) -> TextRange {
        SyntaxNode::text_range(self)
    }
    #[inline]
    fn children(&self) -> Self::Children {
        SyntaxNode::children(self)
    }
    #[inline]
    fn children_with_tokens(&self) -> Self::Elements {
        SyntaxNode::children_with_tokens(self)
    }
}

impl TreeToken for SyntaxToken {
    #[inline]
    fn kind(&self) -> SyntaxKind {
        SyntaxToken::kind(self)
    }
    #[inline]
    fn text(&self) -> &str {
        SyntaxToken::text(self)
    }
    #[inline]
    fn text_range(&self) -> TextRange {
        SyntaxToken::text_range(self)
    }
}
