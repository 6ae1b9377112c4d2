//! Attributes: the `key=value` items of calls, parameter lists and
//! parameter annotations ([`Attr`]), their dotted keys ([`AttrKey`]) and
//! their values ([`AttrValue`]).

use crate::ast::{
    child, children, typed_token, AstChildren, Expr, Ident, Literal, MetaExpr, TreeNode,
};

ast_node! {
    /// `key=value`.
    Attr: ATTR
}

impl<N: TreeNode> Attr<N> {
    /// The key as TVM reads it: segments joined by `.` (`relay.reshape_only`).
    pub fn key(&self) -> Option<String> {
        self.key_node().map(|key| key.name())
    }

    /// The key node.
    pub fn key_node(&self) -> Option<AttrKey<N>> {
        child(&self.syntax)
    }

    /// The value after `=`.
    pub fn value(&self) -> Option<AttrValue<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// The (possibly dotted) key of an attribute: `axis`, `relay.reshape_only`.
    AttrKey: ATTR_KEY
}

dotted_name_accessors!(AttrKey);

ast_enum! {
    /// The value of an attribute. Literals and meta references are listed
    /// before the catch-all [`Expr`], so they never come out as
    /// `AttrValue::Expr`.
    AttrValue {
        Literal(Literal),
        MetaExpr(MetaExpr),
        AttrListValue(AttrListValue),
        AttrParenValue(AttrParenValue),
        AttrNullValue(AttrNullValue),
        /// Any other (atomic) expression: a path, a variable, a `fn`, …
        Expr(Expr),
    }
}

ast_node! {
    /// `[v, …]` as an attribute value.
    AttrListValue: ATTR_LIST_VALUE
}

impl<N: TreeNode> AttrListValue<N> {
    /// The elements, in order.
    pub fn values(&self) -> AstChildren<AttrValue<N>> {
        children(&self.syntax)
    }
}

ast_node! {
    /// `(v)` as an attribute value.
    AttrParenValue: ATTR_PAREN_VALUE
}

impl<N: TreeNode> AttrParenValue<N> {
    /// The value inside the parentheses.
    pub fn value(&self) -> Option<AttrValue<N>> {
        child(&self.syntax)
    }
}

ast_node! {
    /// `None` or `nullptr` as an attribute value.
    AttrNullValue: ATTR_NULL_VALUE
}

impl<N: TreeNode> AttrNullValue<N> {
    /// The `None` or `nullptr` identifier.
    pub fn ident(&self) -> Option<Ident<N::Token>> {
        typed_token(&self.syntax)
    }
}
