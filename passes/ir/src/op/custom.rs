//! Operators a project declares (`[ops.NAME]` in `relay.toml`): argument
//! names, attributes with types and defaults, a fusion pattern and a
//! declarative type rule. A declared operator is found by
//! [`super::lookup`] like a built-in one (hover, completion, `relay ops`,
//! lowering with its attribute defaults, fusion), and type inference
//! applies its [`OutputRule`].
//!
//! The declaration is written in the operator table's own format
//! (`ops.def`) and read by the same loader, so its types, defaults and
//! patterns are checked as the built-in table's are. Declarations live for
//! the process; declaring a name again with another table text or rule
//! replaces the declaration (the language server re-reads a `relay.toml`
//! that changed while it runs), the same declaration again keeps it.

use super::table::parse_table;
use super::{AttrsSchema, OpDef};
use crate::Type;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The relation name of declared operators whose rule type inference
/// applies itself (see [`OutputRule`]).
pub const DECLARED_RELATION: &str = "Declared";

/// A declared operator's type rule.
#[derive(Debug, Clone)]
pub enum OutputRule {
    /// The output has input `i`'s type.
    SameAs(usize),
    /// The broadcast of the inputs (TVM's `Broadcast` relation).
    Broadcast,
    /// Always this type.
    Fixed(Type),
    /// A tensor of these dimensions, with input `dtype_of`'s dtype.
    Shape { dims: Vec<DimRule>, dtype_of: usize },
}

/// One dimension of a [`OutputRule::Shape`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimRule {
    /// A number.
    Const(i64),
    /// Dimension `axis` of input `input` (`in0[1]`; a negative axis counts
    /// from the end).
    Input { input: usize, axis: i64 },
    /// An integer attribute of the call.
    Attr(String),
}

/// A declaration: the table text of the operator (and its attributes
/// schema), and its rule.
#[derive(Debug, Clone)]
pub struct Declaration {
    pub table_text: String,
    pub rule: OutputRule,
}

struct Declared {
    /// What it was declared from, to tell a changed declaration.
    table_text: String,
    rule_text: String,
    op: &'static OpDef,
    schema: Option<&'static AttrsSchema>,
    rule: &'static OutputRule,
}

fn declared() -> std::sync::MutexGuard<'static, HashMap<String, Declared>> {
    static DECLARED: OnceLock<Mutex<HashMap<String, Declared>>> = OnceLock::new();
    DECLARED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Declares the operator of `declaration`; returns it. A name the built-in
/// table has cannot be declared; a name declared before keeps its
/// declaration when this one is the same, and takes this one otherwise
/// (what was built from the earlier one keeps it: declarations are never
/// freed).
pub fn declare(declaration: Declaration) -> Result<&'static OpDef, String> {
    let registry = parse_table(&declaration.table_text).map_err(|e| e.to_string())?;
    let [op]: [OpDef; 1] = registry
        .ops
        .try_into()
        .map_err(|_| "a declaration defines one operator".to_string())?;
    if super::table::registry().op(&op.name).is_some() {
        return Err(format!(
            "`{}` is a TVM operator; a project cannot declare it again",
            op.name
        ));
    }
    let rule_text = format!("{:?}", declaration.rule);
    let mut declared = declared();
    if let Some(existing) = declared.get(&op.name) {
        if existing.table_text == declaration.table_text && existing.rule_text == rule_text {
            return Ok(existing.op);
        }
    }
    let schema = registry
        .schemas
        .into_iter()
        .next()
        .map(|s| &*Box::leak(Box::new(s)));
    let name = op.name.clone();
    let op: &'static OpDef = Box::leak(Box::new(op));
    let rule: &'static OutputRule = Box::leak(Box::new(declaration.rule));
    declared.insert(
        name,
        Declared {
            table_text: declaration.table_text,
            rule_text,
            op,
            schema,
            rule,
        },
    );
    Ok(op)
}

/// The declared operator called `name`.
pub fn declared_op(name: &str) -> Option<&'static OpDef> {
    declared().get(name).map(|d| d.op)
}

/// The attributes schema of a declared operator, by its type key.
pub fn declared_schema(type_key: &str) -> Option<&'static AttrsSchema> {
    declared()
        .values()
        .find_map(|d| d.schema.filter(|s| s.type_key == type_key))
}

/// The type rule of a declared operator.
pub fn declared_rule(name: &str) -> Option<&'static OutputRule> {
    declared().get(name).map(|d| d.rule)
}

/// Every declared operator, sorted by name.
pub fn declared_ops() -> Vec<&'static OpDef> {
    let mut ops: Vec<&'static OpDef> = declared().values().map(|d| d.op).collect();
    ops.sort_by(|a, b| a.name.cmp(&b.name));
    ops
}
