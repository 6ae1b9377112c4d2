//! Which call attributes the printer leaves out: TVM visits an attrs object
//! with `VisitNonDefaultAttrs`, which skips a field whose value is
//! structurally equal (`StructuralEqual`) to its declared default. A field
//! without a default is always printed.

use crate::dtype::DataType;
use crate::metadata::NodeRef;
use crate::op::{AttrDefault, AttrType};
use crate::AttrValue;

/// `StructuralEqual` on doubles: an absolute tolerance of 1e-9.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Whether `value` (of a field of type `ty`) equals the field's default.
pub(crate) fn is_default(value: &AttrValue, ty: &AttrType, default: &AttrDefault) -> bool {
    let ty = match ty {
        AttrType::Optional(inner) => inner.as_ref(),
        other => other,
    };
    match default {
        AttrDefault::Required => false,
        AttrDefault::Null => value.is_null(),
        AttrDefault::Int(d) => match (ty, value) {
            (AttrType::Int | AttrType::UInt64, AttrValue::Int(v)) => v == d,
            (AttrType::Int | AttrType::UInt64, AttrValue::IntImm { value: v, .. }) => v == d,
            (AttrType::Double, AttrValue::Double(v)) => close(*v, *d as f64),
            (AttrType::Bool, AttrValue::Bool(v)) => i64::from(*v) == *d,
            // An `Integer`/`PrimExpr` default built from a C++ int is an
            // int32 `IntImm`.
            (
                _,
                AttrValue::IntImm {
                    value: v, dtype, ..
                },
            ) => *dtype == DataType::INT32 && v == d,
            (_, AttrValue::Int(v)) => v == d,
            _ => false,
        },
        AttrDefault::Double(d) => match (ty, value) {
            (AttrType::Double, AttrValue::Double(v)) => close(*v, *d),
            (AttrType::Double, AttrValue::Int(v)) => close(*v as f64, *d),
            // A float `PrimExpr`/`FloatImm` default is a float32 `FloatImm`
            // built from a C++ float, so it holds the value rounded to f32.
            (_, AttrValue::FloatImm { value: v, dtype }) => {
                *dtype == DataType::FLOAT32 && close(*v, f64::from(*d as f32))
            }
            (_, AttrValue::Double(v)) => close(*v, *d),
            _ => false,
        },
        AttrDefault::Bool(d) => match value {
            AttrValue::Bool(v) => v == d,
            AttrValue::IntImm {
                value: v, dtype, ..
            } if *dtype == DataType::bool() => (*v != 0) == *d,
            AttrValue::Int(v) if matches!(ty, AttrType::Bool) => (*v != 0) == *d,
            _ => false,
        },
        AttrDefault::Str(d) => matches!(value, AttrValue::Str(v) if v == d),
        AttrDefault::DataType(d) => match value {
            AttrValue::DataType(v) => DataType::parse(d).is_ok_and(|dd| dd == *v),
            _ => false,
        },
        AttrDefault::Array(items) => {
            let Some(values) = value.as_array() else {
                return false;
            };
            let elem = ty.element_type().cloned().unwrap_or(AttrType::ObjectRef);
            values.len() == items.len()
                && values
                    .iter()
                    .zip(items)
                    .all(|(v, d)| is_default(v, &elem, d))
        }
        AttrDefault::EmptyMap => matches!(value, AttrValue::Map(entries) if entries.is_empty()),
        AttrDefault::FullyUnconstrained => is_unconstrained_virtual_device(value),
    }
}

/// `VirtualDevice::IsFullyUnconstrained()`: no device type, no id, no
/// target, no memory scope. A missing value (null) counts as unconstrained.
pub(crate) fn is_unconstrained_virtual_device(value: &AttrValue) -> bool {
    match value {
        AttrValue::Null => true,
        AttrValue::Meta(m) => {
            let Ok(node) = NodeRef::new(&m.graph, m.index) else {
                return false;
            };
            node.type_key() == "VirtualDevice"
                && node.int_field("device_type_int").ok() == Some(-1)
                && node.int_field("virtual_device_id").ok() == Some(-1)
                && node.opt_field("target").ok().flatten().is_none()
                && node
                    .opt_field("memory_scope")
                    .ok()
                    .flatten()
                    .is_none_or(|s| s.as_str().is_ok_and(str::is_empty))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op;

    fn field(op_name: &str, name: &str) -> &'static crate::op::AttrField {
        op::lookup(op_name)
            .unwrap()
            .attrs()
            .unwrap()
            .field(name)
            .unwrap()
    }

    fn check(op_name: &str, name: &str, value: AttrValue) -> bool {
        let f = field(op_name, name);
        is_default(&value, &f.ty, &f.default)
    }

    #[test]
    fn conv2d_defaults() {
        let ints = |v: &[i64]| {
            AttrValue::Array(
                v.iter()
                    .map(|&v| AttrValue::int_imm(v, DataType::INT32))
                    .collect(),
            )
        };
        assert!(check("nn.conv2d", "strides", ints(&[1, 1])));
        assert!(!check("nn.conv2d", "strides", ints(&[2, 2])));
        assert!(check("nn.conv2d", "padding", ints(&[0, 0])));
        assert!(!check("nn.conv2d", "padding", ints(&[0, 0, 0, 0])));
        assert!(check("nn.conv2d", "groups", AttrValue::Int(1)));
        assert!(check("nn.conv2d", "channels", AttrValue::Null));
        assert!(!check(
            "nn.conv2d",
            "channels",
            AttrValue::int_imm(64, DataType::INT32)
        ));
        assert!(check(
            "nn.conv2d",
            "data_layout",
            AttrValue::Str("NCHW".into())
        ));
        assert!(check(
            "nn.conv2d",
            "out_layout",
            AttrValue::Str(String::new())
        ));
        assert!(check(
            "nn.conv2d",
            "out_dtype",
            AttrValue::DataType(DataType::void())
        ));
        assert!(!check(
            "nn.conv2d",
            "out_dtype",
            AttrValue::DataType(DataType::INT32)
        ));
        assert!(check("nn.batch_norm", "epsilon", AttrValue::Double(1e-5)));
        assert!(!check("nn.batch_norm", "epsilon", AttrValue::Double(2e-5)));
        assert!(check("nn.batch_norm", "scale", AttrValue::Bool(true)));
    }
}
