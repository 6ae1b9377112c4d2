//! Match patterns: `_` ([`WildcardPat`]), `%x: T` ([`VarPat`]),
//! `Ctor(p, …)` ([`CtorPat`]), `(p, …)` ([`TuplePat`]), gathered in the
//! [`Pattern`] enum.

use crate::ast::TreeNode;
use crate::ast::{child, children, token, typed_token, AstChildren, Ident, Local, Type};
use crate::SyntaxKind;

ast_enum! {
    /// Any pattern.
    Pattern {
        WildcardPat(WildcardPat),
        VarPat(VarPat),
        CtorPat(CtorPat),
        TuplePat(TuplePat),
    }
}

ast_node! {
    /// `_`: matches anything, binds nothing.
    WildcardPat: WILDCARD_PAT
}

impl<N: TreeNode> WildcardPat<N> {
    /// The `_` token.
    pub fn underscore_token(&self) -> Option<N::Token> {
        token(&self.syntax, SyntaxKind::UNDERSCORE)
    }
}

ast_node! {
    /// `%x` or `%x: T`: binds a variable.
    VarPat: VAR_PAT
}

impl<N: TreeNode> VarPat<N> {
    /// The bound variable.
    pub fn name(&self) -> Option<Local<N::Token>> {
        typed_token(&self.syntax)
    }

    /// The type annotation after `:`.
    pub fn ty(&self) -> Option<Type<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `Ctor` or `Ctor(p, …)`.
    CtorPat: CTOR_PAT
}

impl<N: TreeNode> CtorPat<N> {
    /// The constructor's name.
    pub fn name(&self) -> Option<Ident<N::Token>> {
        typed_token(&self.syntax)
    }

    /// `(p, …)` after the name.
    pub fn pat_list(&self) -> Option<PatList<N>> {
        child(&self.syntax)
    }

    /// The field patterns (none without a list).
    pub fn fields(&self) -> impl Iterator<Item = Pattern<N>> {
        self.pat_list().into_iter().flat_map(|list| list.patterns())
    }
}

ast_node! {
    /// `(p, …)`: matches a tuple.
    TuplePat: TUPLE_PAT
}

impl<N: TreeNode> TuplePat<N> {
    /// `(p, …)`.
    pub fn pat_list(&self) -> Option<PatList<N>> {
        child(&self.syntax)
    }

    /// The field patterns.
    pub fn fields(&self) -> impl Iterator<Item = Pattern<N>> {
        self.pat_list().into_iter().flat_map(|list| list.patterns())
    }
}

ast_node! {
    /// `(p, …)` of a constructor or tuple pattern.
    PatList: PAT_LIST
}

impl<N: TreeNode> PatList<N> {
    /// The patterns, in order.
    pub fn patterns(&self) -> AstChildren<Pattern<N>> {
        children(&self.syntax)
    }
}
