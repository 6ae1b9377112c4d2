//! A read-only view of the syntax tree that walks rowan's green tree
//! directly: the reader for consumers that read a whole file once, front to
//! back (lowering to the IR).
//!
//! The typed AST of `relay_syntax` goes through rowan's cursors, which
//! allocate (and later free) an object for every child they step over, and
//! each of its accessors looks for its child from the first one again.
//! Lowering a large model spent more time there than in lowering proper. A
//! [`Node`] here is a reference into the immutable green tree plus the
//! node's offset: copying it is free, and stepping through the children of
//! a node is a walk over a slice.
//!
//! The accessors mirror the typed AST's (`ast::child`, `ast::typed_token`,
//! …) and classify kinds with the typed AST's own `can_cast`, so both read
//! the same tree the same way. Where lowering hands a node to code written
//! against the typed AST (metadata references), [`Node::to_syntax`] finds
//! the cursor node under a root.

use crate::ast::{self, AstNode, AstToken};
use crate::{
    RelayLanguage, SyntaxElement, SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize,
};
use rowan::{GreenNodeData, GreenTokenData, Language, NodeOrToken};
use std::sync::OnceLock;

/// A node of the tree, at its offset in the text.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    green: &'a GreenNodeData,
    start: TextSize,
}

/// A token of the tree, at its offset in the text.
#[derive(Clone, Copy)]
pub struct Token<'a> {
    green: &'a GreenTokenData,
    start: TextSize,
}

/// A child of a node: a node or a token.
#[derive(Clone, Copy)]
pub enum Element<'a> {
    Node(Node<'a>),
    Token(Token<'a>),
}

impl<'a> Element<'a> {
    #[inline]
    pub fn into_node(self) -> Option<Node<'a>> {
        match self {
            Element::Node(node) => Some(node),
            Element::Token(_) => None,
        }
    }

    #[inline]
    pub fn into_token(self) -> Option<Token<'a>> {
        match self {
            Element::Token(token) => Some(token),
            Element::Node(_) => None,
        }
    }
}

/// The children of a node, with their offsets.
#[derive(Clone)]
pub struct Elements<'a> {
    children: rowan::Children<'a>,
    offset: TextSize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Element<'a>;

    #[inline]
    fn next(&mut self) -> Option<Element<'a>> {
        let start = self.offset;
        Some(match self.children.next()? {
            NodeOrToken::Node(green) => {
                self.offset += green.text_len();
                Element::Node(Node { green, start })
            }
            NodeOrToken::Token(green) => {
                self.offset += green.text_len();
                Element::Token(Token { green, start })
            }
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.children.size_hint()
    }
}

impl<'a> Node<'a> {
    /// The view of a cursor node (borrowing its green node).
    #[inline]
    pub fn of(node: &'a SyntaxNode) -> Node<'a> {
        Node {
            green: node.green(),
            start: node.text_range().start(),
        }
    }

    #[inline]
    pub fn kind(self) -> SyntaxKind {
        kind_of(self.green.kind())
    }

    #[inline]
    pub fn range(self) -> TextRange {
        TextRange::at(self.start, self.green.text_len())
    }

    /// The children, nodes and tokens, trivia included.
    #[inline]
    pub fn elements(self) -> Elements<'a> {
        Elements {
            children: self.green.children(),
            offset: self.start,
        }
    }

    /// The child nodes.
    #[inline]
    pub fn nodes(self) -> impl Iterator<Item = Node<'a>> {
        self.elements().filter_map(Element::into_node)
    }

    /// The child tokens.
    #[inline]
    pub fn tokens(self) -> impl Iterator<Item = Token<'a>> {
        self.elements().filter_map(Element::into_token)
    }

    /// `ast::child`: the first child node whose kind passes `is`.
    #[inline]
    pub fn child(self, is: fn(SyntaxKind) -> bool) -> Option<Node<'a>> {
        self.nodes().find(|n| is(n.kind()))
    }

    /// The first child node of kind `kind`.
    #[inline]
    pub fn child_of(self, kind: SyntaxKind) -> Option<Node<'a>> {
        self.nodes().find(|n| n.kind() == kind)
    }

    /// `ast::children`: the child nodes whose kind passes `is`.
    #[inline]
    pub fn children(self, is: fn(SyntaxKind) -> bool) -> impl Iterator<Item = Node<'a>> {
        self.nodes().filter(move |n| is(n.kind()))
    }

    /// The child nodes of kind `kind`.
    #[inline]
    pub fn children_of(self, kind: SyntaxKind) -> impl Iterator<Item = Node<'a>> {
        self.nodes().filter(move |n| n.kind() == kind)
    }

    /// Whether both views are the same node of the same tree.
    #[inline]
    pub fn same(self, other: Node<'_>) -> bool {
        std::ptr::eq(self.green, other.green) && self.start == other.start
    }

    /// `ast::token` / `ast::typed_token`: the first child token of `kind`.
    #[inline]
    pub fn token(self, kind: SyntaxKind) -> Option<Token<'a>> {
        self.tokens().find(|t| t.kind() == kind)
    }

    /// `ast::children_before(…).next()`: the first child node passing `is`
    /// before the first child token whose kind is in `stops`.
    #[inline]
    pub fn child_before(
        self,
        stops: &[SyntaxKind],
        is: fn(SyntaxKind) -> bool,
    ) -> Option<Node<'a>> {
        for element in self.elements() {
            match element {
                Element::Token(t) if stops.contains(&t.kind()) => return None,
                Element::Node(n) if is(n.kind()) => return Some(n),
                _ => {}
            }
        }
        None
    }

    /// `ast::child_after`: the first child node passing `is` after the
    /// first child token whose kind is in `stops`.
    #[inline]
    pub fn child_after(self, stops: &[SyntaxKind], is: fn(SyntaxKind) -> bool) -> Option<Node<'a>> {
        let mut elements = self.elements();
        elements.by_ref().find(|e| match e {
            Element::Token(t) => stops.contains(&t.kind()),
            Element::Node(_) => false,
        })?;
        elements
            .filter_map(Element::into_node)
            .find(|n| is(n.kind()))
    }

    /// `PathExpr::name`, `AttrKey::name`: the `IDENT` and `.` tokens joined
    /// without trivia. Borrowed when the name is one token (`add`).
    #[inline]
    pub fn dotted_text(self) -> std::borrow::Cow<'a, str> {
        let mut parts = self
            .tokens()
            .filter(|t| matches!(t.kind(), SyntaxKind::IDENT | SyntaxKind::DOT));
        let Some(first) = parts.next() else {
            return std::borrow::Cow::Borrowed("");
        };
        let Some(second) = parts.next() else {
            return std::borrow::Cow::Borrowed(first.text());
        };
        let mut name = String::with_capacity(self.range().len().into());
        name.push_str(first.text());
        name.push_str(second.text());
        for part in parts {
            name.push_str(part.text());
        }
        std::borrow::Cow::Owned(name)
    }

    /// The cursor node this view stands for, found from `root` (the root
    /// of the tree the view was made from), for code written against the
    /// typed AST. `None` only if the view is not in that tree.
    #[inline]
    pub fn to_syntax(self, root: &SyntaxNode) -> Option<SyntaxNode> {
        let range = self.range();
        let is_me = |n: &SyntaxNode| {
            std::ptr::eq(n.green(), self.green) && n.text_range().start() == self.start
        };
        // Down the nodes covering the range (a binary search at each level).
        if !range.is_empty() && root.text_range().contains_range(range) {
            let mut current = root.clone();
            loop {
                if is_me(&current) {
                    return Some(current);
                }
                match current.child_or_token_at_range(range) {
                    Some(SyntaxElement::Node(child)) => current = child,
                    _ => break,
                }
            }
        }
        // Empty nodes are not found by range; walk the whole tree.
        root.descendants().find(is_me)
    }

    /// The typed AST node of this view.
    #[inline]
    pub fn to_ast<N: AstNode>(self, root: &SyntaxNode) -> Option<N> {
        self.to_syntax(root).and_then(N::cast)
    }
}

impl<'a> Token<'a> {
    #[inline]
    pub fn kind(self) -> SyntaxKind {
        kind_of(self.green.kind())
    }

    #[inline]
    pub fn text(self) -> &'a str {
        self.green.text()
    }

    #[inline]
    pub fn range(self) -> TextRange {
        TextRange::at(self.start, self.green.text_len())
    }

    /// A name token without its sigil (`Local::name`, `Global::name`).
    #[inline]
    pub fn name_after(self, sigil: char) -> &'a str {
        let text = self.text();
        text.strip_prefix(sigil).unwrap_or(text)
    }

    /// The cursor token this view stands for, found from `root`.
    #[inline]
    pub fn to_syntax(self, root: &SyntaxNode) -> Option<SyntaxToken> {
        let range = self.range();
        let is_me = |t: &SyntaxToken| {
            std::ptr::eq(t.green(), self.green) && t.text_range().start() == self.start
        };
        if !range.is_empty() && root.text_range().contains_range(range) {
            if let SyntaxElement::Token(token) = root.covering_element(range) {
                if is_me(&token) {
                    return Some(token);
                }
            }
        }
        root.descendants_with_tokens()
            .filter_map(SyntaxElement::into_token)
            .find(is_me)
    }

    /// The typed AST token of this view.
    #[inline]
    pub fn to_ast<T: AstToken>(self, root: &SyntaxNode) -> Option<T> {
        self.to_syntax(root).and_then(T::cast)
    }
}

/// Every kind by its raw number, and the groups of the typed AST's enums
/// it is in, computed once from the syntax crate (`kind_from_raw` and the
/// `can_cast`s are calls into another crate; the walks ask them for every
/// child they step over).
struct KindTable {
    kinds: Vec<SyntaxKind>,
    groups: Vec<u8>,
}

const EXPR: u8 = 1;
const TYPE: u8 = 2;
const STMT: u8 = 4;
const PATTERN: u8 = 8;
const ATTR_VALUE: u8 = 16;

fn kind_table() -> &'static KindTable {
    static TABLE: OnceLock<KindTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let kinds: Vec<SyntaxKind> = (0..=SyntaxKind::__LAST as u16)
            .map(|raw| RelayLanguage::kind_from_raw(rowan::SyntaxKind(raw)))
            .collect();
        let groups = kinds
            .iter()
            .map(|&kind| {
                let mut groups = 0;
                for (group, can_cast) in [
                    (EXPR, ast::Expr::can_cast as fn(SyntaxKind) -> bool),
                    (TYPE, ast::Type::can_cast),
                    (STMT, ast::Stmt::can_cast),
                    (PATTERN, ast::Pattern::can_cast),
                    (ATTR_VALUE, ast::AttrValue::can_cast),
                ] {
                    if can_cast(kind) {
                        groups |= group;
                    }
                }
                groups
            })
            .collect();
        KindTable { kinds, groups }
    })
}

#[inline]
fn kind_of(raw: rowan::SyntaxKind) -> SyntaxKind {
    match kind_table().kinds.get(usize::from(raw.0)) {
        Some(&kind) => kind,
        None => RelayLanguage::kind_from_raw(raw),
    }
}

#[inline]
fn in_group(kind: SyntaxKind, group: u8) -> bool {
    kind_table()
        .groups
        .get(kind as usize)
        .is_some_and(|groups| groups & group != 0)
}

// The groups of kinds of the typed AST's enums, as `child` predicates.

#[inline]
pub fn is_expr(kind: SyntaxKind) -> bool {
    in_group(kind, EXPR)
}

#[inline]
pub fn is_type(kind: SyntaxKind) -> bool {
    in_group(kind, TYPE)
}

#[inline]
pub fn is_stmt(kind: SyntaxKind) -> bool {
    in_group(kind, STMT)
}

#[inline]
pub fn is_pattern(kind: SyntaxKind) -> bool {
    in_group(kind, PATTERN)
}

#[inline]
pub fn is_attr_value(kind: SyntaxKind) -> bool {
    in_group(kind, ATTR_VALUE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node and token of a tree, by the view and by the cursors, in
    /// preorder: the same kinds, ranges and texts; and each view finds its
    /// cursor node again.
    #[test]
    fn groups_are_the_typed_ast_enums() {
        for raw in 0..=SyntaxKind::__LAST as u16 {
            let kind = RelayLanguage::kind_from_raw(rowan::SyntaxKind(raw));
            assert_eq!(kind_of(rowan::SyntaxKind(raw)), kind);
            assert_eq!(is_expr(kind), ast::Expr::can_cast(kind));
            assert_eq!(is_type(kind), ast::Type::can_cast(kind));
            assert_eq!(is_stmt(kind), ast::Stmt::can_cast(kind));
            assert_eq!(is_pattern(kind), ast::Pattern::can_cast(kind));
            assert_eq!(is_attr_value(kind), ast::AttrValue::can_cast(kind));
        }
    }

    #[test]
    fn view_matches_cursors() {
        let text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 2), float32]) {\n  %0 = nn.relu(%x) /* c */;\n  let %y = (%0, meta[relay.Constant][0]);\n  %y.1\n}\n";
        let parse = crate::parse_module(text);
        let root = parse.syntax_node();
        let mut viewed = Vec::new();
        fn walk(node: Node<'_>, out: &mut Vec<(SyntaxKind, TextRange)>) {
            out.push((node.kind(), node.range()));
            for element in node.elements() {
                match element {
                    Element::Node(n) => walk(n, out),
                    Element::Token(t) => {
                        assert_eq!(t.text().len(), usize::from(t.range().len()));
                        out.push((t.kind(), t.range()));
                    }
                }
            }
        }
        walk(Node::of(&root), &mut viewed);
        let cursors: Vec<(SyntaxKind, TextRange)> = root
            .preorder_with_tokens()
            .filter_map(|event| match event {
                rowan::WalkEvent::Enter(element) => Some((element.kind(), element.text_range())),
                rowan::WalkEvent::Leave(_) => None,
            })
            .collect();
        assert_eq!(viewed, cursors);

        fn check(node: Node<'_>, root: &SyntaxNode) {
            let found = node.to_syntax(root).expect("found");
            assert_eq!(
                (found.kind(), found.text_range()),
                (node.kind(), node.range())
            );
            for element in node.elements() {
                match element {
                    Element::Node(n) => check(n, root),
                    Element::Token(t) => {
                        let found = t.to_syntax(root).expect("found");
                        assert_eq!(found.text_range(), t.range());
                    }
                }
            }
        }
        check(Node::of(&root), &root);

        let def = Node::of(&root).child_of(SyntaxKind::DEF).unwrap();
        let body = def.child_of(SyntaxKind::BLOCK_EXPR).unwrap();
        let seq = body.child(is_expr).unwrap();
        let binding = seq.child(is_stmt).unwrap();
        let call = binding.child(is_expr).unwrap();
        let path = call.child(is_expr).unwrap();
        assert_eq!(path.dotted_text(), "nn.relu");
    }
}
