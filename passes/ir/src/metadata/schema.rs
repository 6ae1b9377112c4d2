//! The reflected fields of the TVM object types that Relay metadata sections use, in the
//! order TVM's `VisitAttrs` visits them.
//!
//! TVM serialises an ordinary object (not an `Array`, a `Map` or an object with a compact
//! representation such as `runtime.String`) by visiting its fields with an `AttrVisitor`.
//! The visiting order matters twice:
//!
//! * the node indexer numbers the nodes in depth-first pre-order, taking each object field
//!   in this order (see [`super`] for the details), and
//! * the JSON loader needs every field (it aborts on a missing one) and follows object
//!   fields to sort the nodes topologically.
//!
//! The JSON `attrs` map itself is written sorted by field name, so the order here is *not*
//! the order of the written attributes.
//!
//! Only types that Relay's text format can put in a metadata section, or that such objects
//! point to, are listed, read from TVM v0.13.0's headers (`include/tvm/relay/expr.h`,
//! `function.h`, `adt.h`, `include/tvm/ir/*.h`, `include/tvm/tir/expr.h`, `var.h`,
//! `include/tvm/target/*.h`), plus the four operator attribute types that appear in the
//! conformance corpus. Operator attribute types (`relay.attrs.*`) list their fields in
//! `TVM_ATTR_FIELD` order.

/// How TVM writes a field in a node's `attrs` (all values are JSON strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// `ObjectRef` (also `String`, `Array`, `Map`, `Optional`): the decimal index of the
    /// referenced node, `0` for null.
    Object,
    /// `runtime::NDArray`: the decimal index of a blob in `b64ndarrays`.
    NdArray,
    /// `int`, `int64_t`, `uint64_t` or an enum: decimal.
    Int,
    /// `bool`: `0` or `1`.
    Bool,
    /// `double`: 17 significant digits, as `printf("%.17g")`.
    Float,
    /// `DataType`: `DLDataType2String`, e.g. `float32`, and `""` for `void`.
    DataType,
    /// `std::string`: the text itself.
    Str,
}

use FieldKind::{Bool, DataType as Dt, Float, Int, NdArray, Object as Obj, Str};

/// A reflected field: its name and kind.
pub type Field = (&'static str, FieldKind);

const EXPR_TAIL: [Field; 3] = [
    ("virtual_device_", Obj),
    ("span", Obj),
    ("_checked_type_", Obj),
];

macro_rules! with_expr_tail {
    ($($f:expr),* $(,)?) => {
        &[$($f,)* EXPR_TAIL[0], EXPR_TAIL[1], EXPR_TAIL[2]]
    };
}

const BINARY: &[Field] = &[("dtype", Dt), ("a", Obj), ("b", Obj), ("span", Obj)];

static SCHEMAS: &[(&str, &[Field])] = &[
    // Relay expressions (include/tvm/relay/expr.h, function.h, adt.h).
    ("relay.Constant", with_expr_tail!(("data", NdArray))),
    ("relay.Tuple", with_expr_tail!(("fields", Obj))),
    (
        "relay.Var",
        with_expr_tail!(("vid", Obj), ("type_annotation", Obj)),
    ),
    (
        "relay.Call",
        with_expr_tail!(
            ("op", Obj),
            ("args", Obj),
            ("attrs", Obj),
            ("type_args", Obj)
        ),
    ),
    (
        "relay.Let",
        with_expr_tail!(("var", Obj), ("value", Obj), ("body", Obj)),
    ),
    (
        "relay.If",
        with_expr_tail!(("cond", Obj), ("true_branch", Obj), ("false_branch", Obj)),
    ),
    (
        "relay.TupleGetItem",
        with_expr_tail!(("tuple_value", Obj), ("index", Int)),
    ),
    ("relay.RefCreate", with_expr_tail!(("value", Obj))),
    ("relay.RefRead", with_expr_tail!(("ref", Obj))),
    (
        "relay.RefWrite",
        with_expr_tail!(("ref", Obj), ("value", Obj)),
    ),
    (
        "relay.Function",
        with_expr_tail!(
            ("params", Obj),
            ("body", Obj),
            ("ret_type", Obj),
            ("type_params", Obj),
            ("attrs", Obj)
        ),
    ),
    (
        "relay.Match",
        with_expr_tail!(("data", Obj), ("clauses", Obj), ("complete", Bool)),
    ),
    ("relay.Clause", &[("lhs", Obj), ("rhs", Obj)]),
    ("relay.PatternWildcard", &[("span", Obj)]),
    ("relay.PatternVar", &[("var", Obj), ("span", Obj)]),
    (
        "relay.PatternConstructor",
        &[("constructor", Obj), ("patterns", Obj), ("span", Obj)],
    ),
    ("relay.PatternTuple", &[("patterns", Obj), ("span", Obj)]),
    ("relay.Id", &[("name_hint", Obj)]),
    ("GlobalVar", with_expr_tail!(("name_hint", Obj))),
    (
        "relay.Constructor",
        &[
            ("name_hint", Obj),
            ("inputs", Obj),
            ("belong_to", Obj),
            ("tag", Int),
            ("span", Obj),
            ("_checked_type_", Obj),
        ],
    ),
    (
        "relay.TypeData",
        &[
            ("header", Obj),
            ("type_vars", Obj),
            ("constructors", Obj),
            ("span", Obj),
        ],
    ),
    // Types (include/tvm/ir/type.h, tensor_type.h, type_relation.h).
    (
        "relay.TensorType",
        &[("shape", Obj), ("dtype", Dt), ("span", Obj)],
    ),
    ("PrimType", &[("dtype", Dt)]),
    (
        "PointerType",
        &[("element_type", Obj), ("storage_scope", Obj)],
    ),
    (
        "TypeVar",
        &[("name_hint", Obj), ("kind", Int), ("span", Obj)],
    ),
    ("GlobalTypeVar", &[("name_hint", Obj), ("kind", Int)]),
    ("TupleType", &[("fields", Obj), ("span", Obj)]),
    (
        "FuncType",
        &[
            ("arg_types", Obj),
            ("ret_type", Obj),
            ("type_params", Obj),
            ("type_constraints", Obj),
            ("span", Obj),
        ],
    ),
    ("IncompleteType", &[("kind", Int), ("span", Obj)]),
    ("relay.RefType", &[("value", Obj), ("span", Obj)]),
    ("TypeCall", &[("func", Obj), ("args", Obj), ("span", Obj)]),
    // Primitive expressions (include/tvm/ir/expr.h, include/tvm/tir/expr.h, var.h).
    ("IntImm", &[("dtype", Dt), ("value", Int), ("span", Obj)]),
    (
        "FloatImm",
        &[("dtype", Dt), ("value", Float), ("span", Obj)],
    ),
    ("Range", &[("min", Obj), ("extent", Obj), ("span", Obj)]),
    (
        "tir.Var",
        &[
            ("dtype", Dt),
            ("name", Obj),
            ("type_annotation", Obj),
            ("span", Obj),
        ],
    ),
    (
        "tir.SizeVar",
        &[
            ("dtype", Dt),
            ("name", Obj),
            ("type_annotation", Obj),
            ("span", Obj),
        ],
    ),
    (
        "tir.StringImm",
        &[("dtype", Dt), ("value", Obj), ("span", Obj)],
    ),
    ("tir.Cast", &[("dtype", Dt), ("value", Obj), ("span", Obj)]),
    // A call of a TIR intrinsic (`if_then_else` in computed sizes).
    (
        "tir.Call",
        &[("dtype", Dt), ("op", Obj), ("args", Obj), ("span", Obj)],
    ),
    ("tir.Add", BINARY),
    ("tir.Sub", BINARY),
    ("tir.Mul", BINARY),
    ("tir.Div", BINARY),
    ("tir.Mod", BINARY),
    ("tir.FloorDiv", BINARY),
    ("tir.FloorMod", BINARY),
    ("tir.Min", BINARY),
    ("tir.Max", BINARY),
    ("tir.EQ", BINARY),
    ("tir.NE", BINARY),
    ("tir.LT", BINARY),
    ("tir.LE", BINARY),
    ("tir.GT", BINARY),
    ("tir.GE", BINARY),
    ("tir.And", BINARY),
    ("tir.Or", BINARY),
    ("tir.Not", &[("dtype", Dt), ("a", Obj), ("span", Obj)]),
    ("tir.Any", &[("dtype", Dt), ("span", Obj)]),
    // Index maps (include/tvm/tir/index_map.h), `meta_schedule_layout_transform`'s attribute.
    (
        "tir.IndexMap",
        &[
            ("initial_indices", Obj),
            ("final_indices", Obj),
            ("inverse_index_map", Obj),
        ],
    ),
    // Source locations (include/tvm/ir/source_map.h).
    (
        "Span",
        &[
            ("source_name", Obj),
            ("line", Int),
            ("column", Int),
            ("end_line", Int),
            ("end_column", Int),
        ],
    ),
    // Devices and targets (include/tvm/target/virtual_device.h, target.h, target_kind.h).
    (
        "VirtualDevice",
        &[
            ("device_type_int", Int),
            ("virtual_device_id", Int),
            ("target", Obj),
            ("memory_scope", Obj),
        ],
    ),
    (
        "Target",
        &[
            ("kind", Obj),
            ("tag", Obj),
            ("keys", Obj),
            ("attrs", Obj),
            ("features", Obj),
            ("host", Obj),
        ],
    ),
    (
        "TargetKind",
        &[
            ("name", Obj),
            ("default_device_type", Int),
            ("default_keys", Obj),
        ],
    ),
    // Operator attributes seen in the corpus (include/tvm/relay/attrs/*.h).
    (
        "relay.attrs.DensePackAttrs",
        &[("units", Obj), ("out_dtype", Dt), ("weight_layout", Obj)],
    ),
    (
        "relay.attrs.ROIAlignAttrs",
        &[
            ("pooled_size", Obj),
            ("spatial_scale", Float),
            ("sample_ratio", Int),
            ("layout", Str),
            ("mode", Str),
        ],
    ),
    (
        "relay.attrs.ROIPoolAttrs",
        &[
            ("pooled_size", Obj),
            ("spatial_scale", Float),
            ("layout", Str),
        ],
    ),
    ("relay.attrs.InitOpAttrs", &[("shape", Obj), ("dtype", Dt)]),
    // The BYOC annotations' attrs (include/tvm/relay/attrs/annotation.h).
    ("relay.attrs.CompilerAttrs", &[("compiler", Str)]),
];

/// The type keys whose nodes carry a compact representation (`repr_str`/`repr_b64`, TVM's
/// `set_repr_bytes`) instead of fields: a string's bytes, an operator's or a source file's
/// name, an environment function's name, and the base64 text of a tensor or a shape tuple.
pub const REPR_TYPES: &[&str] = &[
    "runtime.String",
    "Op",
    "SourceName",
    "EnvFunc",
    "runtime.NDArray",
    "runtime.ShapeTuple",
];

/// The fields of `type_key` in `VisitAttrs` order, if this table knows the type. An
/// operator attribute type this table does not list takes its fields from the operator
/// table (`op/ops.def` declares them in `TVM_ATTR_FIELD` order): a section of any operator's
/// attrs reads and writes back.
pub fn fields(type_key: &str) -> Option<&'static [Field]> {
    SCHEMAS
        .iter()
        .find(|(k, _)| *k == type_key)
        .map(|(_, fields)| *fields)
        .or_else(|| operator_attrs_fields(type_key))
}

/// The fields of an operator attribute type, as the operator table declares them, with
/// the kind TVM's reflection writes for each C++ type.
fn operator_attrs_fields(type_key: &str) -> Option<&'static [Field]> {
    use crate::op::AttrType;
    use std::sync::OnceLock;
    static FROM_OPS: OnceLock<Vec<(&'static str, Vec<Field>)>> = OnceLock::new();
    let table = FROM_OPS.get_or_init(|| {
        crate::op::all_attrs_schemas()
            .iter()
            .map(|schema| {
                let fields = schema
                    .fields
                    .iter()
                    .map(|f| {
                        let kind = match f.ty {
                            AttrType::Int | AttrType::UInt64 => FieldKind::Int,
                            AttrType::Double => FieldKind::Float,
                            AttrType::Bool => FieldKind::Bool,
                            AttrType::StdString => FieldKind::Str,
                            AttrType::DataType => FieldKind::DataType,
                            // Every other field is an object reference.
                            _ => FieldKind::Object,
                        };
                        (f.name.as_str(), kind)
                    })
                    .collect();
                (schema.type_key.as_str(), fields)
            })
            .collect()
    });
    table
        .iter()
        .find(|(k, _)| *k == type_key)
        .map(|(_, fields)| fields.as_slice())
}

/// The kind of field `name` of `type_key`, if known.
pub fn field_kind(type_key: &str, name: &str) -> Option<FieldKind> {
    fields(type_key)?
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, k)| *k)
}

/// Every type key this table knows.
pub fn known_type_keys() -> impl Iterator<Item = &'static str> {
    SCHEMAS.iter().map(|(k, _)| *k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_attribute_types_come_from_the_operator_table() {
        let scan = fields("relay.attrs.ScanopAttrs").expect("declared in ops.def");
        assert_eq!(
            scan,
            &[
                ("axis", FieldKind::Object),
                ("dtype", FieldKind::DataType),
                ("exclusive", FieldKind::Object),
            ]
        );
        let mask = fields("relay.attrs.SequenceMaskAttrs").unwrap();
        assert_eq!(
            mask,
            &[("mask_value", FieldKind::Float), ("axis", FieldKind::Int)]
        );
        assert_eq!(fields("relay.attrs.NoSuchAttrs"), None);
    }

    #[test]
    fn lookups() {
        let c = fields("relay.Constant").unwrap();
        let names: Vec<_> = c.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["data", "virtual_device_", "span", "_checked_type_"]);
        assert_eq!(field_kind("relay.Constant", "data"), Some(NdArray));
        assert_eq!(field_kind("IntImm", "value"), Some(Int));
        assert_eq!(field_kind("IntImm", "nope"), None);
        assert!(fields("no.such.Type").is_none());
        assert_eq!(
            field_kind("relay.attrs.CompilerAttrs", "compiler"),
            Some(Str)
        );
    }

    #[test]
    fn keys_are_unique() {
        let mut keys: Vec<_> = known_type_keys().collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n);
    }
}
