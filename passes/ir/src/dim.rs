//! Facts about one dimension with the dtype rules of TVM's `IntImm`: its
//! dtype, its value when known, immediates of a given width. The arithmetic
//! that builds output shapes lives with the type relations; these are the
//! parts the printer and the relations share.

use crate::dtype::DataType;
use crate::{Dim, MetaObject};

/// `int32`, the dtype of C++ integer literals turned into `PrimExpr`s.
pub const I32: DataType = DataType::INT32;
/// `int64`.
pub const I64: DataType = DataType::INT64;

/// A C++ `int` turned into a `PrimExpr`: an `int32` immediate.
pub fn c_int(value: i64) -> Dim {
    Dim::int(wrap(value, I32), I32)
}

/// An immediate of the given dtype (`make_const(dtype, value)`).
pub fn int_of(value: i64, dtype: DataType) -> Dim {
    Dim::int(wrap(value, dtype), dtype)
}

/// The dtype TVM gives a dimension: an immediate's own dtype, `int32` for
/// `Any`, and the `dtype` field of a symbolic size (`int32` if it has none).
pub fn dim_dtype(dim: &Dim) -> DataType {
    match dim {
        Dim::Int { dtype, .. } => *dtype,
        Dim::Any => I32,
        Dim::Meta(meta) => meta_field(meta, "dtype")
            .and_then(|text| text.parse().ok())
            .unwrap_or(I32),
        Dim::Expr(e) => e.dtype(),
    }
}

fn meta_field<'a>(meta: &'a MetaObject, field: &str) -> Option<&'a str> {
    meta.graph
        .nodes
        .get(meta.index)
        .and_then(|node| node.attrs.get(field))
        .map(String::as_str)
}

/// An `IntImm` stored in the metadata section is an immediate like any other.
pub fn normalize(dim: &Dim) -> Dim {
    if let Dim::Meta(meta) = dim {
        if meta.type_key() == "IntImm" {
            if let Some(value) = meta_field(meta, "value").and_then(|v| v.parse::<i64>().ok()) {
                return int_of(value, dim_dtype(dim));
            }
        }
    }
    dim.clone()
}

/// The value of a known size (`tir::as_const_int`).
pub fn const_int(dim: &Dim) -> Option<i64> {
    if let Dim::Int { value, .. } = dim {
        return Some(*value);
    }
    normalize(dim).as_int()
}

/// Whether the dimension is `?` (`as<AnyNode>()`).
pub fn is_any(dim: &Dim) -> bool {
    matches!(dim, Dim::Any)
}

/// Whether the dimension is an integer immediate (`as<IntImmNode>()`).
pub fn is_int_imm(dim: &Dim) -> bool {
    const_int(dim).is_some()
}

/// `BinaryOpMatchTypes` for integer dtypes: the wider one wins.
pub fn promote(a: DataType, b: DataType) -> DataType {
    if a == b || a.bits >= b.bits {
        a
    } else {
        b
    }
}

/// Truncates `value` to the dtype's width (`GetFoldResultInt64Repr`).
pub fn wrap(value: i64, dtype: DataType) -> i64 {
    match dtype.bits {
        0 | 64.. => value,
        bits if dtype.is_uint() => value & ((1i64 << bits) - 1),
        bits => {
            let shift = 64 - u32::from(bits);
            (value << shift) >> shift
        }
    }
}
