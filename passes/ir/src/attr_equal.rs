//! Equality of attributes: call attribute objects (`relay.attrs.Conv2DAttrs`),
//! function attribute dictionaries and the values inside them. Structural
//! equality, `EliminateCommonSubexpr` and the `CombineParallel*` passes all
//! compare attributes here, with the variants as explicit options
//! ([`AttrEquality`]).
//!
//! The rules every variant shares are TVM v0.13's `StructuralEqual`
//! (`src/node/structural_equal.cc`, `include/tvm/node/structural_equal.h`):
//!
//! * Attribute objects: the same type key, then field by field in
//!   declaration order. Two objects of one type list the same fields; if
//!   their lists do not line up, fields are matched by name and a field only
//!   one side has makes them differ.
//! * String-keyed maps (function attributes, `Map` values) compare by key,
//!   whatever their order (TVM's map reducer looks each key up); arrays
//!   compare in order.
//! * Integers, booleans, strings and dtypes compare exactly; `IntImm` and
//!   `FloatImm` also compare their dtype.
//! * Doubles are equal when `==` holds (so `-0.0` equals `0.0`, and an
//!   infinity equals itself) or when they are closer than
//!   [`FLOAT_TOLERANCE`], an absolute tolerance (`1e-10` equals `2e-10`,
//!   `1e20` does not equal the next double). NaN follows [`NanRule`].
//! * Expressions inside attributes compare structurally
//!   ([`crate::equal`]) under the same options; metadata objects are
//!   equal when they are the same reference or equal object graphs.

use crate::equal::{expr_difference_with, kind_name, versus};
use crate::{AttrValue, Attrs, DictAttrs};

/// TVM's `BaseValueEqual` tolerance for doubles: values closer than this
/// (absolutely) are equal.
pub const FLOAT_TOLERANCE: f64 = 1e-9;

/// Whether NaN equals NaN; the one rule in which TVM versions differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NanRule {
    /// NaN equals nothing, itself included, as in TVM v0.13 (`lhs == rhs`
    /// then the tolerance test, both false for NaN). Equality is then not
    /// reflexive: an attribute object holding NaN differs from itself, so
    /// no "same object" shortcut is taken (TVM v0.13 takes none either).
    /// For passes whose decisions must match TVM v0.13's.
    NeverEqual,
    /// NaN equals NaN, whatever the payload, as TVM does from v0.18 on
    /// ("for the purpose of comparing IR representation"). For comparing
    /// modules (`relay diff`, the editor, incremental InferType), where a
    /// module must equal itself.
    EqualsNaN,
}

/// How attributes are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttrEquality {
    pub nan: NanRule,
    /// Whether free variables of expressions inside attributes may
    /// correspond by name (`map_free_vars` of `structural_equal`);
    /// otherwise they must be the same variable.
    pub map_free_vars: bool,
}

impl AttrEquality {
    /// TVM v0.13's `StructuralEqual()` as its passes call it
    /// (`EliminateCommonSubexpr`, `CombineParallel*`): NaN equals nothing
    /// and free variables are not mapped.
    pub const TVM_PASSES: AttrEquality = AttrEquality {
        nan: NanRule::NeverEqual,
        map_free_vars: false,
    };

    /// Comparing two pieces of IR for sameness (`structural_equal`):
    /// reflexive, so NaN equals NaN.
    pub const fn representation(map_free_vars: bool) -> AttrEquality {
        AttrEquality {
            nan: NanRule::EqualsNaN,
            map_free_vars,
        }
    }
}

/// Whether two doubles are equal under `nan` (see the module docs).
pub fn floats_equal(x: f64, y: f64, nan: NanRule) -> bool {
    if x.is_nan() || y.is_nan() {
        return nan == NanRule::EqualsNaN && x.is_nan() && y.is_nan();
    }
    x == y || (x - y).abs() < FLOAT_TOLERANCE
}

/// Whether two call attribute objects are equal (both absent is equal).
pub fn attrs_equal(a: Option<&Attrs>, b: Option<&Attrs>, rules: AttrEquality) -> bool {
    attrs_difference(a, b, rules).is_none()
}

/// Whether two function attribute dictionaries are equal.
pub fn dict_attrs_equal(a: &DictAttrs, b: &DictAttrs, rules: AttrEquality) -> bool {
    dict_attrs_difference(a, b, rules).is_none()
}

/// Whether two attribute values are equal.
pub fn values_equal(a: &AttrValue, b: &AttrValue, rules: AttrEquality) -> bool {
    use AttrValue as V;
    match (a, b) {
        (V::Null, V::Null) | (V::Any, V::Any) => true,
        (V::Int(x), V::Int(y)) => x == y,
        (V::Double(x), V::Double(y)) => floats_equal(*x, *y, rules.nan),
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        (V::DataType(x), V::DataType(y)) => x == y,
        (
            V::IntImm {
                value: x,
                dtype: dx,
                ..
            },
            V::IntImm {
                value: y,
                dtype: dy,
                ..
            },
        ) => x == y && dx == dy,
        (
            V::FloatImm {
                value: x,
                dtype: dx,
            },
            V::FloatImm {
                value: y,
                dtype: dy,
            },
        ) => floats_equal(*x, *y, rules.nan) && dx == dy,
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q, rules))
        }
        (V::Map(x), V::Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(key, p)| {
                    y.iter()
                        .find(|(other, _)| other == key)
                        .is_some_and(|(_, q)| values_equal(p, q, rules))
                })
        }
        (V::Expr(x), V::Expr(y)) => expr_difference_with(x, y, rules).is_none(),
        (V::Meta(x), V::Meta(y)) => {
            x == y || crate::metadata::subgraphs_equal(&x.graph, x.index, &y.graph, y.index)
        }
        _ => false,
    }
}

/// Why two call attribute objects differ, if they do: the first field (in
/// declaration order) whose values differ, e.g. `attribute strides: [1, 1]
/// vs [2, 2]`.
pub fn attrs_difference(
    a: Option<&Attrs>,
    b: Option<&Attrs>,
    rules: AttrEquality,
) -> Option<String> {
    let (x, y) = match (a, b) {
        (None, None) => return None,
        (Some(x), Some(y)) => (x, y),
        (x, y) => {
            let key = |attrs: Option<&Attrs>| {
                attrs.map_or_else(|| "none".to_string(), |a| a.type_key().to_string())
            };
            return Some(versus("attributes", key(x), key(y)));
        }
    };
    // One object equals itself only when equality is reflexive.
    if rules.nan == NanRule::EqualsNaN && x.ptr_eq(y) {
        return None;
    }
    if x.type_key() != y.type_key() {
        return Some(versus(
            "attributes type",
            x.type_key().to_string(),
            y.type_key().to_string(),
        ));
    }
    let field_difference = |key: &str, vx: Option<&AttrValue>, vy: Option<&AttrValue>| {
        versus(&format!("attribute {key}"), value_text(vx), value_text(vy))
    };
    // Objects of one type list the same fields in declaration order:
    // compared pairwise, without looking each name up.
    let aligned = x.fields().len() == y.fields().len()
        && x.fields().iter().zip(y.fields()).all(|(p, q)| p.0 == q.0);
    if aligned {
        return x
            .fields()
            .iter()
            .zip(y.fields())
            .find_map(|((key, vx), (_, vy))| {
                (!values_equal(vx, vy, rules)).then(|| field_difference(key, Some(vx), Some(vy)))
            });
    }
    for (key, vx) in x.fields() {
        match y.get(key) {
            Some(vy) if values_equal(vx, vy, rules) => {}
            vy => return Some(field_difference(key, Some(vx), vy)),
        }
    }
    let extra = y.fields().iter().find(|(key, _)| x.get(key).is_none());
    extra.map(|(key, vy)| field_difference(key, None, Some(vy)))
}

/// Why two function attribute dictionaries differ, if they do: the first
/// key of `a` whose value differs or is missing in `b`, else a key only `b`
/// has.
pub fn dict_attrs_difference(a: &DictAttrs, b: &DictAttrs, rules: AttrEquality) -> Option<String> {
    let entry_difference = |key: &str, va: Option<&AttrValue>, vb: Option<&AttrValue>| {
        versus(
            &format!("function attribute {key}"),
            value_text(va),
            value_text(vb),
        )
    };
    for (key, va) in a.entries() {
        match b.get(key) {
            Some(vb) if values_equal(va, vb, rules) => {}
            vb => return Some(entry_difference(key, Some(va), vb)),
        }
    }
    let extra = b.entries().iter().find(|(key, _)| a.get(key).is_none());
    extra.map(|(key, vb)| entry_difference(key, None, Some(vb)))
}

/// An attribute value in a message, close to how the printer writes it;
/// `missing` for an absent one.
fn value_text(value: Option<&AttrValue>) -> String {
    use AttrValue as V;
    let Some(value) = value else {
        return "missing".to_string();
    };
    match value {
        V::Null => "None".to_string(),
        V::Int(i) => i.to_string(),
        V::Double(f) => format!("{f}f"),
        V::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        V::Str(s) => format!("{s:?}"),
        V::DataType(d) => format!("{:?}", d.to_tvm_string()),
        V::IntImm { value, dtype, .. } if dtype.is_bool() => {
            if *value != 0 { "True" } else { "False" }.to_string()
        }
        V::IntImm { value, dtype, .. } if *dtype == crate::dtype::DataType::INT32 => {
            value.to_string()
        }
        V::IntImm { value, dtype, .. } => format!("{value}{}", dtype_suffix(*dtype)),
        V::FloatImm { value, dtype } if *dtype == crate::dtype::DataType::FLOAT32 => {
            format!("{value}f")
        }
        V::FloatImm { value, dtype } => format!("{value}{}", dtype_suffix(*dtype)),
        V::Array(items) => {
            let items: Vec<String> = items.iter().map(|i| value_text(Some(i))).collect();
            format!("[{}]", items.join(", "))
        }
        V::Map(entries) => {
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k:?}={}", value_text(Some(v))))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        V::Any => "?".to_string(),
        V::Expr(e) => format!("an expression ({})", kind_name(e.kind())),
        V::Meta(m) => format!("a {} object", m.type_key()),
    }
}

/// `i64` for int64, `f16` for float16: the literal suffix of a dtype.
fn dtype_suffix(dtype: crate::dtype::DataType) -> String {
    let name = dtype.to_tvm_string();
    match name
        .strip_prefix("int")
        .or_else(|| name.strip_prefix("float"))
    {
        Some(bits) => format!("{}{bits}", &name[..1]),
        None => format!(" ({name})"),
    }
}

#[cfg(test)]
mod tests;
