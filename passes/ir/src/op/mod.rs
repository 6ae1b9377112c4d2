//! The operator registry: every Relay operator of TVM v0.13.0 with its
//! arguments, its call-attributes schema (fields in declaration order, with
//! types and defaults), its fusion pattern and flags, and a line of
//! documentation.
//!
//! The data lives in `ops.def`, a table in our own text format that is
//! compiled into the crate and parsed once on first use (see `table` for the
//! loader and the top of `ops.def` for the format). Attribute schemas are
//! shared: many operators use the same attrs type (e.g. all reductions use
//! `relay.attrs.ReduceAttrs`).
//!
//! ```
//! use relay_ir::op;
//!
//! let conv = op::lookup("nn.conv2d").unwrap();
//! let attrs = conv.attrs().unwrap();
//! assert_eq!(attrs.type_key, "relay.attrs.Conv2DAttrs");
//! assert_eq!(attrs.fields[0].name, "strides");
//! assert_eq!(op::suggest_op("nn.conv2"), Some("nn.conv2d"));
//! ```

pub mod custom;
mod defaults;
mod older;
mod opaque_ops;
mod schema;
mod suggest;
mod table;

#[cfg(test)]
mod tests;

pub use defaults::{default_value, unconstrained_virtual_device};
pub use older::{older_default, untyped_op_attrs_type};
pub use opaque_ops::{is_opaque_op, opaque_op};
pub use schema::{AttrDefault, AttrField, AttrType, AttrsSchema, OpArg, OpDef, OpPattern};
pub use suggest::{did_you_mean, edit_distance};

/// The operator called `name` (e.g. `nn.conv2d`, `add`, `qnn.requantize`).
pub fn lookup(name: &str) -> Option<&'static OpDef> {
    table::registry()
        .op(name)
        .or_else(|| custom::declared_op(name))
}

/// The call-attributes schema with type key `type_key`
/// (e.g. `relay.attrs.Conv2DAttrs`).
pub fn attrs_schema(type_key: &str) -> Option<&'static AttrsSchema> {
    table::registry()
        .schema(type_key)
        .or_else(|| custom::declared_schema(type_key))
}

/// Every operator, sorted by name.
pub fn all_ops() -> &'static [OpDef] {
    &table::registry().ops
}

/// Every attrs schema, sorted by type key.
pub fn all_attrs_schemas() -> &'static [AttrsSchema] {
    &table::registry().schemas
}

/// Whether `type_key` names an open dictionary (`DictAttrs`) rather than a
/// schema'd attrs type.
pub fn is_dict_attrs(type_key: &str) -> bool {
    type_key == table::DICT_ATTRS
}

/// The closest operator name to an unknown `name`, for
/// "unknown operator `nn.conv2`; did you mean `nn.conv2d`?".
pub fn suggest_op(name: &str) -> Option<&'static str> {
    did_you_mean(name, all_ops().iter().map(|op| op.name.as_str()))
}

/// The closest field of `schema` to an unknown attribute `key`.
pub fn suggest_attr(schema: &'static AttrsSchema, key: &str) -> Option<&'static str> {
    did_you_mean(key, schema.field_names())
}
