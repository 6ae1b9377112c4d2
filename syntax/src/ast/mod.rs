//! The typed AST: cheap wrappers over syntax nodes, whose accessors return
//! `Option` because the tree may be incomplete.

use crate::{SyntaxKind, SyntaxNode};

/// A typed view of a syntax node of one kind.
pub trait AstNode: Sized {
    fn can_cast(kind: SyntaxKind) -> bool;
    fn cast(node: SyntaxNode) -> Option<Self>;
    fn syntax(&self) -> &SyntaxNode;
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceFile(SyntaxNode);
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExprFile(SyntaxNode);

impl AstNode for SourceFile {
    fn can_cast(kind: SyntaxKind) -> bool { kind == SyntaxKind::SOURCE_FILE }
    fn cast(node: SyntaxNode) -> Option<Self> { Self::can_cast(node.kind()).then(|| Self(node)) }
    fn syntax(&self) -> &SyntaxNode { &self.0 }
}
impl AstNode for ExprFile {
    fn can_cast(kind: SyntaxKind) -> bool { kind == SyntaxKind::EXPR_FILE }
    fn cast(node: SyntaxNode) -> Option<Self> { Self::can_cast(node.kind()).then(|| Self(node)) }
    fn syntax(&self) -> &SyntaxNode { &self.0 }
}
