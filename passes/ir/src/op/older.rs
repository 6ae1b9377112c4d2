//! What calls written by other TVM versions meant, for a lenient reading:
//! the values that attributes v0.13 requires had before they existed, and
//! the attributes types of operators TVM prints with attributes but
//! registers without a type (so that its parser cannot read them back).

use crate::AttrValue;

/// The value a field of `type_key` that v0.13 requires, but that older
/// versions did not write, had in those versions, and which versions those
/// are (for the message).
pub fn older_default(type_key: &str, field: &str) -> Option<(AttrValue, &'static str)> {
    match (type_key, field) {
        // `axes` arrived with v0.9; before, a slice covered the leading axes.
        ("relay.attrs.StridedSliceAttrs", "axes") => Some((AttrValue::Null, "before v0.9")),
        // `units` became required; unset, it is inferred from the weight.
        ("relay.attrs.DenseAttrs" | "relay.attrs.DensePackAttrs", "units") => {
            Some((AttrValue::Null, "before v0.8"))
        }
        // Before v0.8, `nn.batch_matmul(x, y)` computed `x · yᵀ`.
        ("relay.attrs.BatchMatmulAttrs", "transpose_a") => {
            Some((AttrValue::Bool(false), "before v0.8"))
        }
        ("relay.attrs.BatchMatmulAttrs", "transpose_b") => {
            Some((AttrValue::Bool(true), "before v0.8"))
        }
        _ => None,
    }
}

/// The attributes type TVM builds calls of `op` with, for operators that
/// register none (TVM prints their attributes as metadata; its parser
/// cannot tell their type from keyword attributes): the table's
/// `call_attrs`.
pub fn untyped_op_attrs_type(op: &str) -> Option<&'static str> {
    let op = super::lookup(op)?;
    match op.attrs_type {
        Some(_) => None,
        None => op.call_attrs_type.as_deref(),
    }
}
