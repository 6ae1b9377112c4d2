//! Attribute values: call attributes (an attrs object of a registered type,
//! e.g. `relay.attrs.Conv2DAttrs`, fields in declaration order) and function
//! attributes (a dictionary).
//!
//! Values keep the distinctions TVM's printer makes: a C++ `int` field prints
//! `1`, an `IntImm` prints `1`, `1i64` or `True` depending on its dtype, a
//! `double` prints `1f`.

use crate::dtype::DataType;
use crate::{DimId, Expr, MetaObject};
use std::sync::Arc;

/// One attribute value.
#[derive(Debug, Clone)]
pub enum AttrValue {
    /// A null object (`None`).
    Null,
    /// A C++ integer field.
    Int(i64),
    /// A C++ `double` field.
    Double(f64),
    /// A C++ `bool` field.
    Bool(bool),
    /// A string (`std::string` field or `String` object).
    Str(String),
    /// A `DataType` field (void prints as `""`).
    DataType(DataType),
    /// An integer immediate (`IntImm`) with its dtype, and its identity:
    /// a relation that takes a dimension from an attribute (`units`,
    /// `kernel_size`) shares the attribute's object, see [`DimId`].
    IntImm {
        value: i64,
        dtype: DataType,
        id: DimId,
    },
    /// A float immediate (`FloatImm`) with its dtype.
    FloatImm { value: f64, dtype: DataType },
    /// `[v, …]`.
    Array(Vec<AttrValue>),
    /// A `Map<String, ObjectRef>`, in its order.
    Map(Vec<(String, AttrValue)>),
    /// `?` (`tir.Any`).
    Any,
    /// A Relay expression used as a value.
    Expr(Expr),
    /// Any other object, as read from the metadata section.
    Meta(MetaObject),
}

impl AttrValue {
    /// A new integer immediate (a new `IntImm` object).
    pub fn int_imm(value: i64, dtype: DataType) -> AttrValue {
        AttrValue::IntImm {
            value,
            dtype,
            id: DimId::fresh(),
        }
    }

    /// The integer, for `Int`, `IntImm` and `Bool` values.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            AttrValue::Int(v) | AttrValue::IntImm { value: v, .. } => Some(*v),
            AttrValue::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[AttrValue]> {
        match self {
            AttrValue::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The integers of an array of integers.
    pub fn as_int_array(&self) -> Option<Vec<i64>> {
        self.as_array()?.iter().map(AttrValue::as_int).collect()
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            AttrValue::Double(v) | AttrValue::FloatImm { value: v, .. } => Some(*v),
            other => other.as_int().map(|v| v as f64),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, AttrValue::Null)
    }
}

/// A call's attrs object: its registered type and its fields in declaration
/// order (every field of the schema, defaults included).
#[derive(Debug, Clone)]
pub struct Attrs(Arc<AttrsData>);

#[derive(Debug)]
pub struct AttrsData {
    pub type_key: String,
    pub fields: Vec<(String, AttrValue)>,
}

impl Attrs {
    pub fn new(type_key: impl Into<String>, fields: Vec<(String, AttrValue)>) -> Attrs {
        Attrs(Arc::new(AttrsData {
            type_key: type_key.into(),
            fields,
        }))
    }

    pub fn type_key(&self) -> &str {
        &self.0.type_key
    }

    pub fn fields(&self) -> &[(String, AttrValue)] {
        &self.0.fields
    }

    pub fn get(&self, name: &str) -> Option<&AttrValue> {
        self.0
            .fields
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }

    pub fn ptr_eq(&self, other: &Attrs) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// How many holders the object has (the interner drops what only it
    /// holds).
    pub(crate) fn strong_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

/// A function's attributes, in insertion order.
#[derive(Debug, Clone, Default)]
pub struct DictAttrs(Vec<(String, AttrValue)>);

impl DictAttrs {
    pub fn new(entries: Vec<(String, AttrValue)>) -> DictAttrs {
        DictAttrs(entries)
    }

    pub fn get(&self, key: &str) -> Option<&AttrValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`, keeping its position if it is present.
    pub fn set(&mut self, key: &str, value: AttrValue) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<AttrValue> {
        let index = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(index).1)
    }

    pub fn entries(&self) -> &[(String, AttrValue)] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
