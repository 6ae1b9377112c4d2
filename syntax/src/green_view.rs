//! The typed AST over rowan's green tree: a node representation for the
//! wrappers of [`crate::ast`] for consumers that read a whole file once,
//! front to back (lowering to the IR).
//!
//! rowan's cursors ([`SyntaxNode`]) allocate (and later free) an object for
//! every child they step over; lowering a large model spent more time there
//! than in lowering proper. A [`Node`] here is a reference into the
//! immutable green tree plus the node's offset: copying it is free, and
//! stepping through the children of a node is a walk over a slice.
//!
//! There are no accessors here: `Node` and `Token` implement
//! [`TreeNode`] and [`TreeToken`], so the typed AST's own accessors read
//! them (`ast::CallExpr<Node<'_>>::callee`). What this module adds is
//! text that borrows from the tree for as long as the tree lives
//! ([`Token::text`], [`joined_text`]), where the typed AST's accessors
//! borrow from the token.
//!
//! ```
//! use relay_syntax::ast::{self, AstNode};
//! use relay_syntax::green_view::Node;
//!
//! let parse = relay_syntax::parse_module("#[version = \"0.0.5\"]\ndef @main(%x) { add(%x, 1) }");
//! let root = parse.syntax_node();
//! let file = ast::SourceFile::cast(Node::of(&root)).unwrap();
//! // or, from the cursor-based typed AST: `parse.source_file().unwrap().to_green()`
//! let def = file.defs().next().unwrap();
//! assert_eq!(def.name().unwrap().name(), "main");
//! let Some(ast::Expr::CallExpr(call)) = def.body().and_then(|b| b.expr()) else { panic!() };
//! assert_eq!(call.args().count(), 2);
//! ```

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::ast::{TreeNode, TreeToken};
use crate::{RelayLanguage, SyntaxKind, SyntaxNode, TextRange, TextSize};
use rowan::{GreenNodeData, GreenTokenData, Language, NodeOrToken};

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
pub type Element<'a> = NodeOrToken<Node<'a>, Token<'a>>;

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
                NodeOrToken::Node(Node { green, start })
            }
            NodeOrToken::Token(green) => {
                self.offset += green.text_len();
                NodeOrToken::Token(Token { green, start })
            }
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.children.size_hint()
    }
}

/// The child nodes of a node, with their offsets.
#[derive(Clone)]
pub struct Nodes<'a>(Elements<'a>);

impl<'a> Iterator for Nodes<'a> {
    type Item = Node<'a>;

    #[inline]
    fn next(&mut self) -> Option<Node<'a>> {
        self.0.find_map(NodeOrToken::into_node)
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

    /// The green node (its address tells whether an incremental re-parse
    /// kept it).
    #[inline]
    pub fn green(self) -> &'a GreenNodeData {
        self.green
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
    pub fn nodes(self) -> Nodes<'a> {
        Nodes(self.elements())
    }
}

impl<'a> Token<'a> {
    #[inline]
    pub fn kind(self) -> SyntaxKind {
        kind_of(self.green.kind())
    }

    /// The token's text, borrowed from the tree (not from `self`, as
    /// [`TreeToken::text`] must).
    #[inline]
    pub fn text(self) -> &'a str {
        self.green.text()
    }

    #[inline]
    pub fn range(self) -> TextRange {
        TextRange::at(self.start, self.green.text_len())
    }
}

/// The texts of `tokens` joined, borrowed from the tree when there is one
/// token (the dotted names of the typed AST, `PathExpr::name_tokens`,
/// `AttrKey::name_tokens`: `add` borrows, `nn.conv2d` allocates).
#[inline]
pub fn joined_text<'a>(mut tokens: impl Iterator<Item = Token<'a>>) -> Cow<'a, str> {
    let Some(first) = tokens.next() else {
        return Cow::Borrowed("");
    };
    let Some(second) = tokens.next() else {
        return Cow::Borrowed(first.text());
    };
    let mut joined = String::from(first.text());
    joined.push_str(second.text());
    for token in tokens {
        joined.push_str(token.text());
    }
    Cow::Owned(joined)
}

impl<'a> TreeNode for Node<'a> {
    type Token = Token<'a>;
    type Children = Nodes<'a>;
    type Elements = Elements<'a>;

    #[inline]
    fn kind(&self) -> SyntaxKind {
        Node::kind(*self)
    }
    #[inline]
    fn text_range(&self) -> TextRange {
        self.range()
    }
    #[inline]
    fn children(&self) -> Nodes<'a> {
        self.nodes()
    }
    #[inline]
    fn children_with_tokens(&self) -> Elements<'a> {
        self.elements()
    }
}

impl TreeToken for Token<'_> {
    #[inline]
    fn kind(&self) -> SyntaxKind {
        Token::kind(*self)
    }
    #[inline]
    fn text(&self) -> &str {
        self.green.text()
    }
    #[inline]
    fn text_range(&self) -> TextRange {
        self.range()
    }
}

// Two views are equal when they are the same node (or token) of the same
// tree: the same green data at the same offset, as cursors compare.
macro_rules! identity_by_place {
    ($($view:ident),*) => {$(
        impl PartialEq for $view<'_> {
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                std::ptr::eq(self.green, other.green) && self.start == other.start
            }
        }

        impl Eq for $view<'_> {}

        impl Hash for $view<'_> {
            fn hash<H: Hasher>(&self, state: &mut H) {
                std::ptr::hash(self.green, state);
                self.start.hash(state);
            }
        }
    )*};
}

identity_by_place!(Node, Token);

impl fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}@{:?}", self.kind(), self.range())
    }
}

impl fmt::Debug for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}@{:?} {:?}", self.kind(), self.range(), self.text())
    }
}

impl fmt::Display for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.green, f)
    }
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

#[inline]
fn kind_of(raw: rowan::SyntaxKind) -> SyntaxKind {
    RelayLanguage::kind_from_raw(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{self, AstNode, AstToken};

    /// Every node and token of a tree, by the view and by the cursors, in
    /// preorder: the same kinds, ranges and texts.
    #[test]
    fn view_matches_cursors() {
        let text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 2), float32]) {\n  %0 = nn.relu(%x) /* c */;\n  let %y = (%0, meta[relay.Constant][0]);\n  %y.1\n}\n";
        let parse = crate::parse_module(text);
        let root = parse.syntax_node();
        let mut viewed = Vec::new();
        fn walk(node: Node<'_>, out: &mut Vec<(SyntaxKind, TextRange, String)>) {
            out.push((node.kind(), node.range(), node.to_string()));
            for element in node.elements() {
                match element {
                    Element::Node(n) => walk(n, out),
                    Element::Token(t) => {
                        out.push((t.kind(), t.range(), t.text().to_string()));
                    }
                }
            }
        }
        walk(Node::of(&root), &mut viewed);
        let cursors: Vec<(SyntaxKind, TextRange, String)> = root
            .preorder_with_tokens()
            .filter_map(|event| match event {
                rowan::WalkEvent::Enter(element) => {
                    Some((element.kind(), element.text_range(), element.to_string()))
                }
                rowan::WalkEvent::Leave(_) => None,
            })
            .collect();
        assert_eq!(viewed, cursors);
    }

    /// The typed AST reads the same answers from both representations.
    #[test]
    fn typed_ast_reads_both_alike() {
        let text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 2), float32], %y) -> float32 {\n  %0 = nn.relu(%x, axis=1) /* c */;\n  %1 = %0 <= %y;\n  if (%1) { %0.1 } else { fn (%z) { %z } }\n}\n";
        let parse = crate::parse_module(text);
        let root = parse.syntax_node();
        let by_cursor = ast::SourceFile::cast(root.clone()).unwrap();
        let by_view = ast::SourceFile::cast(Node::of(&root)).unwrap();
        assert_eq!(by_cursor.to_green(), by_view);
        let (c, v) = (
            by_cursor.defs().next().unwrap(),
            by_view.defs().next().unwrap(),
        );
        assert_eq!(c.name().unwrap().name(), v.name().unwrap().name());
        let params = |names: Vec<String>| names.join(",");
        assert_eq!(
            params(
                c.params()
                    .map(|p| p.name().unwrap().name().to_string())
                    .collect()
            ),
            params(
                v.params()
                    .map(|p| p.name().unwrap().name().to_string())
                    .collect()
            ),
        );
        let (cb, vb) = (c.body().unwrap(), v.body().unwrap());
        let (cs, vs): (Vec<_>, Vec<_>) = (cb.stmts().collect(), vb.stmts().collect());
        assert_eq!(cs.len(), 2);
        assert_eq!(vs.len(), 2);
        let Some(ast::Stmt::GraphBinding(binding)) = vs.first().cloned() else {
            panic!()
        };
        let Some(ast::Expr::CallExpr(call)) = binding.value() else {
            panic!()
        };
        let Some(ast::Expr::PathExpr(path)) = call.callee() else {
            panic!()
        };
        assert_eq!(joined_text(path.name_tokens()), "nn.relu");
        assert_eq!(path.name(), "nn.relu");
        let attr = call.attrs().next().unwrap();
        assert_eq!(attr.key().as_deref(), Some("axis"));
        let Some(ast::Stmt::GraphBinding(cmp)) = vs.get(1).cloned() else {
            panic!()
        };
        let Some(ast::Expr::BinExpr(bin)) = cmp.value() else {
            panic!()
        };
        let Some(ast::Stmt::GraphBinding(cmp_c)) = cs.get(1).cloned() else {
            panic!()
        };
        let Some(ast::Expr::BinExpr(bin_c)) = cmp_c.value() else {
            panic!()
        };
        assert_eq!(bin.op_details(), bin_c.op_details());
        assert_eq!(bin.op(), Some(ast::BinOp::Le));
        let Some(ast::Expr::IfExpr(if_)) = vb.tail_expr() else {
            panic!()
        };
        assert!(if_.then_branch().is_some());
        assert!(matches!(
            if_.else_branch().and_then(|b| b.tail_expr()),
            Some(ast::Expr::FnExpr(_))
        ));
        let Some(ast::Type::TensorType(tensor)) = v.params().next().and_then(|p| p.ty()) else {
            panic!()
        };
        assert_eq!(tensor.dtype().unwrap().text(), "float32");
        assert_eq!(
            tensor.dims().filter_map(|d| d.value()).collect::<Vec<_>>(),
            [1, 2]
        );
        // Nodes compare as cursors do: the same node of the same tree.
        assert_eq!(v.body(), v.body());
        assert_ne!(v.body().map(|b| *b.syntax()), Some(Node::of(&root)));
    }
}
