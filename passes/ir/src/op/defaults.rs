//! The values of attribute defaults: what a field declared in the operator
//! table ([`AttrDefault`]) holds when a call does not give it. Lowering fills
//! omitted attributes with these; building calls in passes does the same.

use super::{AttrDefault, AttrType};
use crate::dtype::DataType;
use crate::metadata::ObjectGraph;
use crate::metadata::ObjectGraphBuilder;
use crate::{AttrValue, MetaObject};
use std::sync::{Arc, OnceLock};

/// The value of a field's declared default (see [`AttrDefault`] for what
/// each form means for each field type).
pub fn default_value(default: &AttrDefault, ty: &AttrType) -> AttrValue {
    let ty = match ty {
        AttrType::Optional(inner) => inner,
        ty => ty,
    };
    match default {
        AttrDefault::Required | AttrDefault::Null => AttrValue::Null,
        AttrDefault::Int(v) => match ty {
            AttrType::Int | AttrType::UInt64 => AttrValue::Int(*v),
            AttrType::Double => AttrValue::Double(*v as f64),
            AttrType::Bool => AttrValue::Bool(*v != 0),
            AttrType::FloatImm => AttrValue::FloatImm {
                value: *v as f32 as f64,
                dtype: DataType::FLOAT32,
            },
            _ => AttrValue::int_imm(*v, DataType::INT32),
        },
        AttrDefault::Double(v) => match ty {
            AttrType::Double => AttrValue::Double(*v),
            // A float32 `FloatImm` built from a C++ `float`.
            _ => AttrValue::FloatImm {
                value: *v as f32 as f64,
                dtype: DataType::FLOAT32,
            },
        },
        AttrDefault::Bool(b) => match ty {
            AttrType::Bool => AttrValue::Bool(*b),
            _ => AttrValue::int_imm(i64::from(*b), DataType::bool()),
        },
        AttrDefault::Str(s) => match ty {
            AttrType::DataType => AttrValue::DataType(DataType::parse(s).unwrap_or_default()),
            _ => AttrValue::Str(s.clone()),
        },
        AttrDefault::DataType(name) => {
            AttrValue::DataType(DataType::parse(name).unwrap_or_default())
        }
        AttrDefault::Array(items) => {
            let element = ty.element_type().unwrap_or(&AttrType::ObjectRef);
            AttrValue::Array(
                items
                    .iter()
                    .map(|item| default_value(item, element))
                    .collect(),
            )
        }
        AttrDefault::EmptyMap => AttrValue::Map(Vec::new()),
        AttrDefault::FullyUnconstrained => unconstrained_virtual_device(),
    }
}

/// The `VirtualDevice::FullyUnconstrained()` object, for defaults.
pub fn unconstrained_virtual_device() -> AttrValue {
    static GRAPH: OnceLock<Arc<ObjectGraph>> = OnceLock::new();
    let graph = GRAPH.get_or_init(|| {
        let mut builder = ObjectGraphBuilder::new();
        let device = builder.virtual_device_unconstrained();
        Arc::new(builder.build(device))
    });
    AttrValue::Meta(MetaObject {
        graph: Arc::clone(graph),
        index: graph.root,
    })
}
