//! The typed AST: cheap, hand-written wrappers over syntax nodes and tokens,
//! in the style of rust-analyzer.
//!
//! Every node kind of [`SyntaxKind`] (but `ERROR`) has a wrapper struct that
//! holds its node and nothing else: a [`SyntaxNode`] by default, or any other
//! [`TreeNode`] (the copy-free [`green_view::Node`](crate::green_view::Node)
//! that lowering reads), with the same accessors for both; groups of kinds that may stand
//! in the same place have an enum ([`Item`], [`Expr`], [`Stmt`], [`Pattern`],
//! [`Type`], [`AttrValue`]). Tokens that carry a value (names, numbers,
//! strings, meta references) have typed wrappers too ([`Local`], [`Global`],
//! [`IntNumber`], …).
//!
//! Trees may be incomplete (the parser never fails), so every accessor
//! returns an `Option`, or an iterator for repeated children, and never
//! panics. Accessors look at direct children only; trivia is never returned.
//!
//! ```
//! use relay_syntax::ast::{AstNode, Expr, Item};
//!
//! let parse = relay_syntax::parse_module(
//!     "#[version = \"0.0.5\"]\ndef @main(%x) { add(%x, 1) }",
//! );
//! let file = parse.source_file().unwrap();
//! let Some(Item::Def(def)) = file.items().next() else { panic!() };
//! assert_eq!(def.name().unwrap().name(), "main");
//! let Some(Expr::CallExpr(call)) = def.body().and_then(|b| b.expr()) else { panic!() };
//! assert_eq!(call.callee().unwrap().syntax().to_string(), "add");
//! assert_eq!(call.args().count(), 2);
//! ```

use std::marker::PhantomData;

use rowan::{NodeOrToken, TokenAtOffset};

use crate::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize};

pub use self::tree::{TreeNode, TreeToken};

/// A typed view of a syntax node of one kind (or of one of a group of kinds).
pub trait AstNode: Sized {
    /// The node representation the view holds ([`SyntaxNode`] unless it
    /// reads the green tree, see [`TreeNode`]).
    type Node: TreeNode;
    /// Whether a node of this kind can be viewed as `Self`.
    fn can_cast(kind: SyntaxKind) -> bool;
    /// Views `node` as `Self` if its kind fits.
    fn cast(node: Self::Node) -> Option<Self>;
    /// The underlying node.
    fn syntax(&self) -> &Self::Node;
}

/// A typed view of a syntax token of one kind.
pub trait AstToken: Sized {
    /// The token representation the view holds.
    type Token: TreeToken;
    /// Whether a token of this kind can be viewed as `Self`.
    fn can_cast(kind: SyntaxKind) -> bool;
    /// Views `token` as `Self` if its kind fits.
    fn cast(token: Self::Token) -> Option<Self>;
    /// The underlying token.
    fn syntax(&self) -> &Self::Token;
    /// The token's text, exactly as written.
    fn text(&self) -> &str {
        self.syntax().text()
    }
}

/// The direct children of a node that cast to `A`, in order.
pub struct AstChildren<A: AstNode> {
    inner: <A::Node as TreeNode>::Children,
    ph: PhantomData<A>,
}

impl<A: AstNode> Clone for AstChildren<A> {
    fn clone(&self) -> Self {
        AstChildren {
            inner: self.inner.clone(),
            ph: PhantomData,
        }
    }
}

impl<A: AstNode> std::fmt::Debug for AstChildren<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AstChildren").finish_non_exhaustive()
    }
}

impl<A: AstNode> Iterator for AstChildren<A> {
    type Item = A;

    #[inline]
    fn next(&mut self) -> Option<A> {
        self.inner.find_map(A::cast)
    }
}

/// The first direct child of `parent` that casts to `A`.
#[inline]
pub fn child<A: AstNode>(parent: &A::Node) -> Option<A> {
    parent.children().find_map(A::cast)
}

/// The direct children of `parent` that cast to `A`.
#[inline]
pub fn children<A: AstNode>(parent: &A::Node) -> AstChildren<A> {
    AstChildren {
        inner: parent.children(),
        ph: PhantomData,
    }
}

/// The direct child tokens of `parent`, trivia included.
#[inline]
pub fn tokens<N: TreeNode>(parent: &N) -> impl Iterator<Item = N::Token> {
    parent
        .children_with_tokens()
        .filter_map(NodeOrToken::into_token)
}

/// The first direct child token of `parent` of the given kind.
#[inline]
pub fn token<N: TreeNode>(parent: &N, kind: SyntaxKind) -> Option<N::Token> {
    tokens(parent).find(|it| it.kind() == kind)
}

/// The first direct child token of `parent` that casts to `T`.
#[inline]
pub fn typed_token<N: TreeNode, T: AstToken<Token = N::Token>>(parent: &N) -> Option<T> {
    tokens(parent).find_map(T::cast)
}

/// The smallest node around `offset` that casts to `A` (for hover, rename,
/// completion: the node under the cursor). At a boundary between two tokens
/// both sides are considered.
pub fn find_node_at_offset<A: AstNode<Node = SyntaxNode>>(
    root: &SyntaxNode,
    offset: TextSize,
) -> Option<A> {
    if !root.text_range().contains_inclusive(offset) {
        return None;
    }
    token_at_offset(root, offset)
        .filter_map(|token| token.parent_ancestors().find_map(A::cast))
        .min_by_key(|node| node.syntax().text_range().len())
}

/// The token at `offset` under `node`, or the two that meet there: what
/// rowan's `SyntaxNode::token_at_offset` answers (`None` outside `node`
/// instead of a panic), found by binary search among each node's children.
/// rowan's walks every child of every node on the way down, so a lookup
/// in a function body of thousands of bindings cost thousands of cursors;
/// the editor makes one per hover, and hundreds per completion.
pub fn token_at_offset(node: &SyntaxNode, offset: TextSize) -> TokenAtOffset<SyntaxToken> {
    let range = node.text_range();
    if !range.contains_inclusive(offset) || range.is_empty() {
        return TokenAtOffset::None;
    }
    // The token holding the byte at `at` (tokens are never empty, and
    // cover the text without gaps).
    let holding = |at: TextSize| match node.covering_element(TextRange::at(at, 1.into())) {
        NodeOrToken::Token(token) => Some(token),
        NodeOrToken::Node(_) => None,
    };
    let right = (offset < range.end()).then(|| holding(offset)).flatten();
    let left = (offset > range.start())
        .then(|| holding(offset - TextSize::from(1)))
        .flatten();
    match (left, right) {
        (Some(left), Some(right)) if left == right => TokenAtOffset::Single(left),
        (Some(left), Some(right)) => TokenAtOffset::Between(left, right),
        (Some(token), None) | (None, Some(token)) => TokenAtOffset::Single(token),
        (None, None) => TokenAtOffset::None,
    }
}

/// The first direct child node of `parent` that casts to `A` and comes
/// before the first direct child token whose kind is in `stops`.
#[inline]
pub(crate) fn child_before<A: AstNode>(
    parent: &A::Node,
    stops: &'static [SyntaxKind],
) -> Option<A> {
    for element in parent.children_with_tokens() {
        match element {
            NodeOrToken::Token(t) if stops.contains(&t.kind()) => return None,
            NodeOrToken::Node(n) => {
                if let Some(it) = A::cast(n) {
                    return Some(it);
                }
            }
            NodeOrToken::Token(_) => {}
        }
    }
    None
}

/// The first direct child node of `parent` that casts to `A` and comes after
/// the first direct child token whose kind is in `stops`.
#[inline]
pub(crate) fn child_after<A: AstNode>(parent: &A::Node, stops: &'static [SyntaxKind]) -> Option<A> {
    let mut elements = parent.children_with_tokens();
    elements
        .by_ref()
        .find(|it| matches!(it, NodeOrToken::Token(t) if stops.contains(&t.kind())))?;
    elements
        .filter_map(NodeOrToken::into_node)
        .find_map(A::cast)
}

/// Declares a wrapper struct for one node kind, generic over the node
/// representation (rowan's cursors by default).
macro_rules! ast_node {
    ($(#[$meta:meta])* $name:ident: $kind:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name<N = $crate::SyntaxNode> {
            pub(crate) syntax: N,
        }

        impl<N: $crate::ast::TreeNode> $crate::ast::AstNode for $name<N> {
            type Node = N;
            #[inline]
            fn can_cast(kind: $crate::SyntaxKind) -> bool {
                kind == $crate::SyntaxKind::$kind
            }
            #[inline]
            fn cast(syntax: N) -> Option<Self> {
                if Self::can_cast($crate::ast::TreeNode::kind(&syntax)) {
                    Some($name { syntax })
                } else {
                    None
                }
            }
            #[inline]
            fn syntax(&self) -> &N {
                &self.syntax
            }
        }

        impl<N: std::fmt::Display> std::fmt::Display for $name<N> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.syntax, f)
            }
        }

        impl $name<$crate::SyntaxNode> {
            /// The same node over the green tree (copy-free, children only:
            /// see [`green_view`](crate::green_view)).
            #[inline]
            pub fn to_green(&self) -> $name<$crate::green_view::Node<'_>> {
                $name {
                    syntax: $crate::green_view::Node::of(&self.syntax),
                }
            }
        }
    };
}

/// Declares an enum over wrapper types; casting tries the variants in order,
/// so a more specific variant listed first wins over a catch-all.
macro_rules! ast_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$vmeta:meta])* $variant:ident($ty:ident)),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name<N = $crate::SyntaxNode> {
            $($(#[$vmeta])* $variant($ty<N>),)*
        }

        impl<N: $crate::ast::TreeNode> $crate::ast::AstNode for $name<N> {
            type Node = N;
            #[inline]
            fn can_cast(kind: $crate::SyntaxKind) -> bool {
                $(<$ty<N> as $crate::ast::AstNode>::can_cast(kind))||*
            }
            #[inline]
            fn cast(syntax: N) -> Option<Self> {
                let kind = $crate::ast::TreeNode::kind(&syntax);
                $(
                    if <$ty<N> as $crate::ast::AstNode>::can_cast(kind) {
                        return <$ty<N> as $crate::ast::AstNode>::cast(syntax).map($name::$variant);
                    }
                )*
                None
            }
            #[inline]
            fn syntax(&self) -> &N {
                match self {
                    $($name::$variant(it) => $crate::ast::AstNode::syntax(it),)*
                }
            }
        }

        $(
            impl<N> From<$ty<N>> for $name<N> {
                fn from(it: $ty<N>) -> $name<N> {
                    $name::$variant(it)
                }
            }
        )*

        impl<N: $crate::ast::TreeNode + std::fmt::Display> std::fmt::Display for $name<N> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt($crate::ast::AstNode::syntax(self), f)
            }
        }
    };
}

/// Declares a wrapper struct for one or more token kinds, generic over the
/// token representation (rowan's cursors by default).
macro_rules! ast_token {
    ($(#[$meta:meta])* $name:ident: $($kind:ident)|+) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name<T = $crate::SyntaxToken> {
            pub(crate) syntax: T,
        }

        impl<T: $crate::ast::TreeToken> $crate::ast::AstToken for $name<T> {
            type Token = T;
            #[inline]
            fn can_cast(kind: $crate::SyntaxKind) -> bool {
                matches!(kind, $($crate::SyntaxKind::$kind)|+)
            }
            #[inline]
            fn cast(syntax: T) -> Option<Self> {
                if Self::can_cast($crate::ast::TreeToken::kind(&syntax)) {
                    Some($name { syntax })
                } else {
                    None
                }
            }
            #[inline]
            fn syntax(&self) -> &T {
                &self.syntax
            }
        }

        impl<T: $crate::ast::TreeToken> std::fmt::Display for $name<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::ast::TreeToken::text(&self.syntax))
            }
        }
    };
}

/// The accessors shared by `def` and `fn`: type parameters, parameters,
/// return type and body.
macro_rules! fn_signature_accessors {
    ($name:ident) => {
        impl<N: $crate::ast::TreeNode> $name<N> {
            /// `[A, B]` after the name or `fn`.
            pub fn type_param_list(&self) -> Option<$crate::ast::TypeParamList<N>> {
                $crate::ast::child(&self.syntax)
            }

            /// The type parameters (none without a list).
            pub fn type_params(&self) -> impl Iterator<Item = $crate::ast::TypeParam<N>> {
                self.type_param_list()
                    .into_iter()
                    .flat_map(|list| list.type_params())
            }

            /// `(%x: T, …, attr=v)`.
            pub fn param_list(&self) -> Option<$crate::ast::ParamList<N>> {
                $crate::ast::child(&self.syntax)
            }

            /// The parameters (none without a list).
            pub fn params(&self) -> impl Iterator<Item = $crate::ast::Param<N>> {
                self.param_list().into_iter().flat_map(|list| list.params())
            }

            /// The function attributes after the parameters.
            pub fn attrs(&self) -> impl Iterator<Item = $crate::ast::Attr<N>> {
                self.param_list().into_iter().flat_map(|list| list.attrs())
            }

            /// `-> T`.
            pub fn ret_type(&self) -> Option<$crate::ast::RetType<N>> {
                $crate::ast::child(&self.syntax)
            }

            /// The `{ … }` body.
            pub fn body(&self) -> Option<$crate::ast::BlockExpr<N>> {
                $crate::ast::child(&self.syntax)
            }
        }
    };
}

/// The accessors of a dotted name (`nn.conv2d`, `relay.reshape_only`):
/// operator paths and attribute keys.
macro_rules! dotted_name_accessors {
    ($name:ident) => {
        impl<N: $crate::ast::TreeNode> $name<N> {
            /// The identifiers, in order.
            pub fn segments(&self) -> impl Iterator<Item = $crate::ast::Ident<N::Token>> {
                $crate::ast::tokens(&self.syntax)
                    .filter_map(<$crate::ast::Ident<N::Token> as $crate::ast::AstToken>::cast)
            }

            /// The tokens the name is made of, `IDENT`s and `.`s without
            /// trivia, in order (what `name` joins).
            pub fn name_tokens(&self) -> impl Iterator<Item = N::Token> {
                $crate::ast::tokens(&self.syntax).filter(|it| {
                    matches!(
                        $crate::ast::TreeToken::kind(it),
                        $crate::SyntaxKind::IDENT | $crate::SyntaxKind::DOT
                    )
                })
            }

            /// The name as TVM reads it: segments joined by `.`
            /// (`nn.conv2d`). As in TVM, a trailing `.` the grammar consumed
            /// is kept (`nn.`).
            pub fn name(&self) -> String {
                self.name_tokens().fold(String::new(), |mut acc, it| {
                    acc.push_str($crate::ast::TreeToken::text(&it));
                    acc
                })
            }

            /// Whether the name ends with a `.` (an unfinished name).
            pub fn has_trailing_dot(&self) -> bool {
                $crate::ast::tokens(&self.syntax)
                    .filter(|it| !$crate::ast::TreeToken::kind(it).is_trivia())
                    .last()
                    .is_some_and(|it| $crate::ast::TreeToken::kind(&it) == $crate::SyntaxKind::DOT)
            }
        }
    };
}

mod nodes;
mod tokens;
mod tree;

pub use nodes::*;
pub use tokens::*;

#[cfg(test)]
mod tests;
