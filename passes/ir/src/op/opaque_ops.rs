//! Operators no table knows, read leniently (vendor forks' `accelerator_call`,
//! in-house operators): each name gets one operator definition, opaque to
//! every layer. Its calls take any arguments and any attributes (kept as a
//! dictionary), type inference gives them an unknown type without an error,
//! fusion treats them as opaque. They are not found by [`super::lookup`]:
//! a strict reading of the same text still reports the unknown operator.
//!
//! Definitions live for the process (one small leaked [`OpDef`] per
//! distinct name, as operators are `'static` everywhere).

use super::{OpDef, OpPattern};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The relation name that marks an opaque operator.
const OPAQUE_RELATION: &str = "(unknown operator)";

/// The opaque operator called `name` (the same definition for every call).
pub fn opaque_op(name: &str) -> &'static OpDef {
    static OPS: OnceLock<Mutex<HashMap<String, &'static OpDef>>> = OnceLock::new();
    let mut ops = OPS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(op) = ops.get(name) {
        return op;
    }
    let op: &'static OpDef = Box::leak(Box::new(OpDef {
        name: name.to_string(),
        num_inputs: -1,
        arguments: Vec::new(),
        attrs_type: Some("DictAttrs".to_string()),
        call_attrs_type: None,
        pattern: Some(OpPattern::Opaque),
        stateful: false,
        non_computational: false,
        support_level: None,
        type_rel: Some(OPAQUE_RELATION.to_string()),
        description: "An operator this build does not know, read leniently: its calls have \
                      an unknown type."
            .to_string(),
    }));
    ops.insert(name.to_string(), op);
    op
}

/// Whether `op` is an opaque operator (see [`opaque_op`]).
pub fn is_opaque_op(op: &OpDef) -> bool {
    op.type_rel.as_deref() == Some(OPAQUE_RELATION)
}
