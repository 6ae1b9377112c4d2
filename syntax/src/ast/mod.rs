//! The typed AST: cheap, hand-written wrappers over syntax nodes and tokens,
//! in the style of rust-analyzer.
//!
//! Every node kind of [`SyntaxKind`] (but `ERROR`) has a wrapper struct that
//! holds its [`SyntaxNode`] and nothing else; groups of kinds that may stand
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

use crate::{SyntaxElement, SyntaxKind, SyntaxNode, SyntaxToken, TextSize};

/// A typed view of a syntax node of one kind (or of one of a group of kinds).
pub trait AstNode: Sized {
    /// Whether a node of this kind can be viewed as `Self`.
    fn can_cast(kind: SyntaxKind) -> bool;
    /// Views `node` as `Self` if its kind fits.
    fn cast(node: SyntaxNode) -> Option<Self>;
    /// The underlying node.
    fn syntax(&self) -> &SyntaxNode;
}

/// A typed view of a syntax token of one kind.
pub trait AstToken: Sized {
    /// Whether a token of this kind can be viewed as `Self`.
    fn can_cast(kind: SyntaxKind) -> bool;
    /// Views `token` as `Self` if its kind fits.
    fn cast(token: SyntaxToken) -> Option<Self>;
    /// The underlying token.
    fn syntax(&self) -> &SyntaxToken;
    /// The token's text, exactly as written.
    fn text(&self) -> &str {
        self.syntax().text()
    }
}

/// The direct children of a node that cast to `N`, in order.
#[derive(Debug, Clone)]
pub struct AstChildren<N> {
    inner: rowan::SyntaxNodeChildren<crate::RelayLanguage>,
    ph: PhantomData<N>,
}

impl<N> AstChildren<N> {
    fn new(parent: &SyntaxNode) -> Self {
        AstChildren {
            inner: parent.children(),
            ph: PhantomData,
        }
    }
}

impl<N: AstNode> Iterator for AstChildren<N> {
    type Item = N;

    fn next(&mut self) -> Option<N> {
        self.inner.find_map(N::cast)
    }
}

/// The first direct child of `parent` that casts to `N`.
pub fn child<N: AstNode>(parent: &SyntaxNode) -> Option<N> {
    parent.children().find_map(N::cast)
}

/// The direct children of `parent` that cast to `N`.
pub fn children<N: AstNode>(parent: &SyntaxNode) -> AstChildren<N> {
    AstChildren::new(parent)
}

/// The first direct child token of `parent` of the given kind.
pub fn token(parent: &SyntaxNode, kind: SyntaxKind) -> Option<SyntaxToken> {
    parent
        .children_with_tokens()
        .filter_map(|it| it.into_token())
        .find(|it| it.kind() == kind)
}

/// The first direct child token of `parent` that casts to `T`.
pub fn typed_token<T: AstToken>(parent: &SyntaxNode) -> Option<T> {
    parent
        .children_with_tokens()
        .filter_map(|it| it.into_token())
        .find_map(T::cast)
}

/// The smallest node around `offset` that casts to `N` (for hover, rename,
/// completion: the node under the cursor). At a boundary between two tokens
/// both sides are considered.
pub fn find_node_at_offset<N: AstNode>(root: &SyntaxNode, offset: TextSize) -> Option<N> {
    if !root.text_range().contains_inclusive(offset) {
        return None;
    }
    root.token_at_offset(offset)
        .filter_map(|token| token.parent_ancestors().find_map(N::cast))
        .min_by_key(|node| node.syntax().text_range().len())
}

/// The direct child nodes of `parent` that cast to `N` and come before the
/// first direct child token whose kind is in `stops` (all of them if there is
/// no such token).
pub(crate) fn children_before<N: AstNode>(
    parent: &SyntaxNode,
    stops: &'static [SyntaxKind],
) -> impl Iterator<Item = N> {
    parent
        .children_with_tokens()
        .take_while(move |it| !is_stop(it, stops))
        .filter_map(|it| it.into_node())
        .filter_map(N::cast)
}

/// The first direct child node of `parent` that casts to `N` and comes after
/// the first direct child token whose kind is in `stops`.
pub(crate) fn child_after<N: AstNode>(
    parent: &SyntaxNode,
    stops: &'static [SyntaxKind],
) -> Option<N> {
    parent
        .children_with_tokens()
        .skip_while(|it| !is_stop(it, stops))
        .filter_map(|it| it.into_node())
        .find_map(N::cast)
}

fn is_stop(element: &SyntaxElement, stops: &[SyntaxKind]) -> bool {
    matches!(element, SyntaxElement::Token(t) if stops.contains(&t.kind()))
}

/// Declares a wrapper struct for one node kind.
macro_rules! ast_node {
    ($(#[$meta:meta])* $name:ident: $kind:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name {
            pub(crate) syntax: $crate::SyntaxNode,
        }

        impl $crate::ast::AstNode for $name {
            fn can_cast(kind: $crate::SyntaxKind) -> bool {
                kind == $crate::SyntaxKind::$kind
            }
            fn cast(syntax: $crate::SyntaxNode) -> Option<Self> {
                if Self::can_cast(syntax.kind()) {
                    Some($name { syntax })
                } else {
                    None
                }
            }
            fn syntax(&self) -> &$crate::SyntaxNode {
                &self.syntax
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.syntax, f)
            }
        }
    };
}

/// Declares an enum over wrapper types; casting tries the variants in order,
/// so a more specific variant listed first wins over a catch-all.
macro_rules! ast_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$vmeta:meta])* $variant:ident($ty:ty)),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant($ty),)*
        }

        impl $crate::ast::AstNode for $name {
            fn can_cast(kind: $crate::SyntaxKind) -> bool {
                $(<$ty as $crate::ast::AstNode>::can_cast(kind))||*
            }
            fn cast(syntax: $crate::SyntaxNode) -> Option<Self> {
                $(
                    if <$ty as $crate::ast::AstNode>::can_cast(syntax.kind()) {
                        return <$ty as $crate::ast::AstNode>::cast(syntax).map($name::$variant);
                    }
                )*
                None
            }
            fn syntax(&self) -> &$crate::SyntaxNode {
                match self {
                    $($name::$variant(it) => it.syntax(),)*
                }
            }
        }

        $(
            impl From<$ty> for $name {
                fn from(it: $ty) -> $name {
                    $name::$variant(it)
                }
            }
        )*

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt($crate::ast::AstNode::syntax(self), f)
            }
        }
    };
}

/// Declares a wrapper struct for one or more token kinds.
macro_rules! ast_token {
    ($(#[$meta:meta])* $name:ident: $($kind:ident)|+) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name {
            pub(crate) syntax: $crate::SyntaxToken,
        }

        impl $crate::ast::AstToken for $name {
            fn can_cast(kind: $crate::SyntaxKind) -> bool {
                matches!(kind, $($crate::SyntaxKind::$kind)|+)
            }
            fn cast(syntax: $crate::SyntaxToken) -> Option<Self> {
                if Self::can_cast(syntax.kind()) {
                    Some($name { syntax })
                } else {
                    None
                }
            }
            fn syntax(&self) -> &$crate::SyntaxToken {
                &self.syntax
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.syntax.text())
            }
        }
    };
}

/// The accessors shared by `def` and `fn`: type parameters, parameters,
/// return type and body.
macro_rules! fn_signature_accessors {
    ($name:ident) => {
        impl $name {
            /// `[A, B]` after the name or `fn`.
            pub fn type_param_list(&self) -> Option<$crate::ast::TypeParamList> {
                $crate::ast::child(&self.syntax)
            }

            /// The type parameters (none without a list).
            pub fn type_params(&self) -> impl Iterator<Item = $crate::ast::TypeParam> {
                self.type_param_list()
                    .into_iter()
                    .flat_map(|list| list.type_params())
            }

            /// `(%x: T, …, attr=v)`.
            pub fn param_list(&self) -> Option<$crate::ast::ParamList> {
                $crate::ast::child(&self.syntax)
            }

            /// The parameters (none without a list).
            pub fn params(&self) -> impl Iterator<Item = $crate::ast::Param> {
                self.param_list().into_iter().flat_map(|list| list.params())
            }

            /// The function attributes after the parameters.
            pub fn attrs(&self) -> impl Iterator<Item = $crate::ast::Attr> {
                self.param_list().into_iter().flat_map(|list| list.attrs())
            }

            /// `-> T`.
            pub fn ret_type(&self) -> Option<$crate::ast::RetType> {
                $crate::ast::child(&self.syntax)
            }

            /// The `{ … }` body.
            pub fn body(&self) -> Option<$crate::ast::BlockExpr> {
                $crate::ast::child(&self.syntax)
            }
        }
    };
}

mod nodes;
mod tokens;

pub use nodes::*;
pub use tokens::*;

#[cfg(test)]
mod tests;
