//! `relay-ir`: the Relay IR and everything that describes it without
//! analysing it — element types ([`dtype`]), source files and spans
//! ([`source`]), the one diagnostics type ([`diagnostic`]), the operator table
//! of TVM v0.13 with attribute schemas and defaults ([`op`]), metadata
//! sections and tensors ([`metadata`]), expressions, types, attributes and
//! modules (this crate's root), structural equality ([`equal`]), traversal
//! and rewriting ([`rewrite`]), resource limits ([`limits`]) and TVM's text
//! printer ([`printer`]).
//!
//! Architecture invariant: this crate knows nothing about the syntax tree,
//! type inference or passes; every other layer builds on it.
//!
//! Everything is immutable and reference counted, so modules are cheap to
//! clone and can be sent to other threads; passes build new nodes only where
//! something changed ([`rewrite`]).

pub mod diagnostic;
pub mod dim;
pub mod dtype;
pub mod fxhash;
pub mod index_map;
pub mod limits;
pub mod metadata;
pub mod op;
pub mod opaque;
pub mod printer;
pub mod source;

pub mod attr_equal;
pub mod attrs;
pub mod build;
pub mod equal;
pub mod expr;
pub mod interner;
pub mod module;
pub mod rewrite;
pub mod tvm_hash;
pub mod ty;

pub use attrs::{AttrValue, Attrs, DictAttrs};
pub use expr::{
    Call, Clause, Constructor, Expr, ExprKind, ExprNode, Function, FunctionData, GlobalVar,
    Pattern, Var, VarData, VarId,
};
pub use module::{IRModule, ModuleProperty};
pub use ty::{
    Dim, DimExpr, DimId, DimOp, FuncType, GlobalTypeVar, IncompleteId, TensorType, Type, TypeData,
    TypeKind, TypeVar, TypeVarKind, IF_THEN_ELSE_OP,
};

use crate::metadata::ObjectGraph;
use std::sync::Arc;

/// An object read from a metadata section that the IR keeps opaque (a
/// virtual device, a symbolic size, an attrs object of another type): the
/// graph it came from and its node index, so the printer can write it back.
#[derive(Debug, Clone)]
pub struct MetaObject {
    pub graph: Arc<ObjectGraph>,
    pub index: usize,
}

impl MetaObject {
    pub fn type_key(&self) -> &str {
        self.graph
            .nodes
            .get(self.index)
            .map_or("", |node| node.type_key.as_str())
    }
}

impl PartialEq for MetaObject {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.graph, &other.graph) && self.index == other.index
    }
}
impl Eq for MetaObject {}
impl std::hash::Hash for MetaObject {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.graph) as usize).hash(state);
        self.index.hash(state);
    }
}
