//! The text on nodes and edges: an operator call's key attributes (the
//! fields whose value differs from the operator table's default, so
//! `nn.conv2d` shows `strides=[2, 2]` but not `groups=1`), a constant's
//! shape, and the short form of a tensor type drawn on an edge.

use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::op::{AttrDefault, OpDef};
use relay_ir::printer::readable;
use relay_ir::{AttrValue, Attrs, Type};

/// Longest attribute value drawn before it is cut with `…`.
const MAX_VALUE_CHARS: usize = 32;

/// `name=value` for each attribute of the call that is not the default.
pub fn key_attributes(op: &OpDef, attrs: Option<&Attrs>) -> Vec<String> {
    let Some(attrs) = attrs else {
        return Vec::new();
    };
    let schema = op.attrs();
    attrs
        .fields()
        .iter()
        .filter(|(name, value)| {
            let default = schema.and_then(|s| s.field(name)).map(|f| &f.default);
            !default.is_some_and(|d| is_default(value, d))
        })
        .map(|(name, value)| format!("{name}={}", shorten(&attr_text(value))))
        .collect()
}

/// Whether `value` is what the field holds when the text leaves it out.
fn is_default(value: &AttrValue, default: &AttrDefault) -> bool {
    match default {
        AttrDefault::Required => false,
        AttrDefault::Null => value.is_null(),
        AttrDefault::Int(d) => value.as_int() == Some(*d),
        AttrDefault::Double(d) => value.as_f64() == Some(*d),
        AttrDefault::Bool(b) => value.as_int() == Some(i64::from(*b)),
        AttrDefault::Str(s) => value.as_str() == Some(s.as_str()),
        AttrDefault::DataType(name) => match value {
            AttrValue::DataType(dt) => (name.is_empty() && dt.is_void()) || dt.to_string() == *name,
            _ => false,
        },
        AttrDefault::Array(items) => value.as_array().is_some_and(|values| {
            values.len() == items.len() && values.iter().zip(items).all(|(v, d)| is_default(v, d))
        }),
        AttrDefault::EmptyMap => matches!(value, AttrValue::Map(m) if m.is_empty()),
        // A placement constraint nobody wrote: not worth a line on a node.
        AttrDefault::FullyUnconstrained => true,
    }
}

/// An attribute value as the text format writes it, roughly.
pub fn attr_text(value: &AttrValue) -> String {
    match value {
        AttrValue::Null => "None".to_string(),
        AttrValue::Int(v) => v.to_string(),
        AttrValue::Double(v) => format!("{v}"),
        AttrValue::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::DataType(dt) => dt.to_string(),
        AttrValue::IntImm { value, dtype, .. } if dtype.is_bool() => {
            if *value != 0 { "True" } else { "False" }.to_string()
        }
        AttrValue::IntImm { value, .. } => value.to_string(),
        AttrValue::FloatImm { value, .. } => format!("{value}"),
        AttrValue::Array(items) => {
            let items: Vec<String> = items.iter().map(attr_text).collect();
            format!("[{}]", items.join(", "))
        }
        AttrValue::Map(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k}: {}", attr_text(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        AttrValue::Any => "?".to_string(),
        AttrValue::Expr(_) => "<expr>".to_string(),
        AttrValue::Meta(_) => "<meta>".to_string(),
    }
}

/// Cuts a long value so one attribute cannot widen a node across the page.
pub fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_VALUE_CHARS {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(MAX_VALUE_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// A constant's label and details: a scalar shows its value, a tensor its
/// shape and dtype.
pub fn constant_text(data: &TensorData) -> (String, Vec<String>) {
    if data.shape.is_empty() {
        let value = if data.dtype.is_bool() || is_integer(data.dtype) {
            data.get_i64(0).map(|v| v.to_string())
        } else {
            data.get_f64(0).map(|v| format!("{v}"))
        };
        let value = value.unwrap_or_else(|_| "?".to_string());
        return (format!("{value} : {}", data.dtype), Vec::new());
    }
    let dims: Vec<String> = data.shape.iter().map(i64::to_string).collect();
    (
        "constant".to_string(),
        vec![format!("({}) {}", dims.join(", "), data.dtype)],
    )
}

fn is_integer(dtype: DataType) -> bool {
    let name = dtype.to_string();
    name.starts_with("int") || name.starts_with("uint")
}

/// The full type, in Relay syntax, for JSON and DOT.
pub fn type_text(ty: Option<&Type>) -> String {
    ty.map(readable::ty).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_with_an_ellipsis() {
        let long = "x".repeat(100);
        let cut = shorten(&long);
        assert_eq!(cut.chars().count(), MAX_VALUE_CHARS);
        assert!(cut.ends_with('…'));
        assert_eq!(shorten("[1, 1]"), "[1, 1]");
    }
}
