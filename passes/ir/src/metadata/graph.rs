//! TVM's JSON object graph (`src/node/serialization.cc`, `SaveJSON`/`LoadJSON`): a faithful,
//! untyped model that reads any metadata section and writes it back byte for byte.
//!
//! The JSON holds
//!
//! * `root`: the index of the root node,
//! * `nodes`: the nodes; node 0 is the null object, `{"type_key": ""}`,
//! * `b64ndarrays`: the tensor blobs (see [`super::ndarray`]),
//! * `attrs`: global attributes, `{"tvm_version": "0.13.0"}`.
//!
//! Each node has a `type_key` and then, only when non-empty and in this order: `repr_str` or
//! `repr_b64` (objects with a compact byte representation, e.g. `runtime.String`: `repr_str`
//! when every byte is printable ASCII, otherwise `repr_b64`, the base64 of a `u64` length and
//! the bytes), `attrs` (field name → string, written sorted by name because TVM keeps them in a
//! `std::map`), `keys` (the keys of a string-keyed `Map`) and `data` (node indices: an
//! `Array`'s elements, a string-keyed `Map`'s values, or another `Map`'s keys and values
//! alternately).
//!
//! [`ObjectGraph::to_json`] writes exactly what TVM's `dmlc::JSONWriter` writes (layout rules
//! in [`super::json`]), so parsing a section TVM printed and writing it back gives the same
//! bytes. [`ObjectGraph::parse`] never panics: bad JSON, unknown fields, wrong value kinds,
//! indices out of range, missing fields of known types (see [`super::schema`]) and cycles are
//! all [`MetaError::Parse`] errors with a byte offset into the text.

use std::collections::BTreeMap;

use super::json::{self, Json, JsonValue, JsonWriter};
use super::ndarray::{decode_base64, encode_base64, TensorData};
use super::schema::{self, FieldKind};
use super::table::MetaTable;
use super::MetaError;
use crate::dtype::DataType;

/// The version TVM writes in the graph's `attrs`.
pub const TVM_VERSION: &str = "0.13.0";

/// One node of the object graph (TVM's `JSONNode`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Node {
    /// The object's type key; empty for the null object.
    pub type_key: String,
    /// The compact representation (`repr_str`, or the decoded `repr_b64`); empty if none.
    pub repr_bytes: Vec<u8>,
    /// Reflected fields, each written as a string (see [`schema::FieldKind`]).
    pub attrs: BTreeMap<String, String>,
    /// Keys of a string-keyed `Map`.
    pub keys: Vec<String>,
    /// Elements of an `Array`, values of a string-keyed `Map`, keys and values of another
    /// `Map`.
    pub data: Vec<usize>,
}

impl Node {
    /// The null node, `{"type_key": ""}`.
    pub fn null() -> Node {
        Node::default()
    }

    /// A node of the given type with nothing else.
    pub fn new(type_key: impl Into<String>) -> Node {
        Node {
            type_key: type_key.into(),
            ..Node::default()
        }
    }

    /// Whether this is the null object.
    pub fn is_null(&self) -> bool {
        self.type_key.is_empty()
    }

    /// Whether this is an `Array`.
    pub fn is_array(&self) -> bool {
        self.type_key == "Array"
    }

    /// Whether this is a `Map`.
    pub fn is_map(&self) -> bool {
        self.type_key == "Map"
    }

    /// The compact representation as text, if it is UTF-8 (it is for `runtime.String`).
    /// An empty representation (an empty string) gives `Some("")`.
    pub fn repr_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.repr_bytes).ok()
    }

    /// Whether TVM writes the representation as `repr_str` (every byte printable ASCII, C's
    /// `isprint`) rather than `repr_b64`.
    pub fn repr_is_printable(&self) -> bool {
        self.repr_bytes.iter().all(|b| (0x20..0x7f).contains(b))
    }

    fn save(&self, w: &mut JsonWriter) {
        w.begin_object(true);
        w.key("type_key");
        w.string(&self.type_key);
        if !self.repr_bytes.is_empty() {
            if self.repr_is_printable() {
                w.key("repr_str");
                // Printable ASCII is valid UTF-8.
                w.string(std::str::from_utf8(&self.repr_bytes).unwrap_or_default());
            } else {
                w.key("repr_b64");
                w.string(&encode_repr_b64(&self.repr_bytes));
            }
        }
        if !self.attrs.is_empty() {
            w.key("attrs");
            w.string_map(self.attrs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        if !self.keys.is_empty() {
            w.key("keys");
            w.string_array(&self.keys);
        }
        if !self.data.is_empty() {
            w.key("data");
            w.index_array(&self.data);
        }
        w.end_object();
    }
}

/// TVM's `Base64Encode` of a `std::string`: dmlc writes a `u64` length before the bytes.
fn encode_repr_b64(bytes: &[u8]) -> String {
    let mut buf = Vec::with_capacity(8 + bytes.len());
    buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    buf.extend_from_slice(bytes);
    encode_base64(&buf)
}

/// The inverse of [`encode_repr_b64`]; errors are (offset in `text`, message).
fn decode_repr_b64(text: &str) -> Result<Vec<u8>, (usize, String)> {
    let bytes = decode_base64(text)?;
    let len = bytes
        .get(..8)
        .map(|l| u64::from_le_bytes(l.try_into().unwrap_or_default()));
    match len {
        Some(n) if (n as u128) <= (bytes.len() as u128 - 8) => {
            Ok(bytes[8..8 + n as usize].to_vec())
        }
        _ => Err((0, "repr_b64 is shorter than its length prefix".to_string())),
    }
}

/// A whole metadata section: TVM's `JSONGraph`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectGraph {
    /// Index of the root node.
    pub root: usize,
    /// The nodes; node 0 is normally the null node.
    pub nodes: Vec<Node>,
    /// Tensor blobs, base64 text exactly as in the file (decode with
    /// [`ObjectGraph::tensor`]).
    pub b64ndarrays: Vec<String>,
    /// Global attributes (`tvm_version`).
    pub attrs: BTreeMap<String, String>,
}

impl Default for ObjectGraph {
    /// A graph whose root is the null node, with TVM's version attribute.
    fn default() -> Self {
        ObjectGraph {
            root: 0,
            nodes: vec![Node::null()],
            b64ndarrays: Vec::new(),
            attrs: BTreeMap::from([("tvm_version".to_string(), TVM_VERSION.to_string())]),
        }
    }
}

/// Where in the graph a validation problem is, to find its offset in the source text.
#[derive(Debug, Clone)]
enum Place {
    Root,
    Node(usize),
    Attr(usize, String),
    Data(usize, usize),
}

struct Invalid {
    place: Place,
    message: String,
}

fn invalid<T>(place: Place, message: impl Into<String>) -> Result<T, Invalid> {
    Err(Invalid {
        place,
        message: message.into(),
    })
}

/// Parses a decimal index as TVM writes it (digits only).
pub(crate) fn parse_index(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses an integer field value (`int`, `int64_t`).
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses a `double` field value (TVM also accepts `inf` and `-inf`).
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    match s {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        "-nan" => Some(-f64::NAN),
        _ if s
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) =>
        {
            s.parse().ok()
        }
        _ => None,
    }
}

/// Checks a field value against its kind. Returns the referenced node index for object
/// fields.
pub(crate) fn check_field(
    graph: &ObjectGraph,
    kind: FieldKind,
    value: &str,
) -> Result<Option<usize>, String> {
    match kind {
        FieldKind::Object => match parse_index(value) {
            Some(i) if i < graph.nodes.len() => Ok(Some(i)),
            Some(i) => Err(format!(
                "node index {i} is out of range ({} nodes)",
                graph.nodes.len()
            )),
            None => Err(format!("`{value}` is not a node index")),
        },
        FieldKind::NdArray => match parse_index(value) {
            Some(i) if i < graph.b64ndarrays.len() => Ok(None),
            Some(i) => Err(format!(
                "tensor index {i} is out of range ({} tensors)",
                graph.b64ndarrays.len()
            )),
            None => Err(format!("`{value}` is not a tensor index")),
        },
        FieldKind::Int => parse_int(value)
            .map(|_| None)
            .ok_or_else(|| format!("`{value}` is not an integer")),
        FieldKind::Bool => match value {
            "0" | "1" => Ok(None),
            _ => Err(format!("`{value}` is not a boolean (0 or 1)")),
        },
        FieldKind::Float => parse_float(value)
            .map(|_| None)
            .ok_or_else(|| format!("`{value}` is not a number")),
        FieldKind::DataType => DataType::parse(value)
            .map(|_| None)
            .map_err(|e| e.to_string()),
        FieldKind::Str => Ok(None),
    }
}

/// A metadata section read once to find where its entries are written (the
/// editor links each `meta[key][index]` to its object): the JSON with its
/// offsets and the graph it describes.
pub struct SectionLayout<'t> {
    text: &'t str,
    json: Json,
    graph: ObjectGraph,
}

impl<'t> SectionLayout<'t> {
    /// The layout of a section's text; `None` when it does not read.
    pub fn read(text: &'t str) -> Option<SectionLayout<'t>> {
        let (json, _) = json::parse_value(text).ok()?;
        let graph = ObjectGraph::from_json(&json).ok()?;
        Some(SectionLayout { text, json, graph })
    }

    /// The byte range, in the section's text, of the JSON object that
    /// `meta[key][index]` refers to; `None` when there is no such entry.
    pub fn entry_range(&self, key: &str, index: usize) -> Option<std::ops::Range<usize>> {
        let node = MetaTable::new(&self.graph)
            .ok()?
            .get(key, index)
            .ok()?
            .index();
        let start = locate(&self.json, &Place::Node(node));
        let (_, length) = json::parse_value(self.text.get(start..)?).ok()?;
        Some(start..start + length)
    }
}

impl ObjectGraph {
    /// Reads a metadata section: the JSON text after `#[metadata]` (leading and trailing
    /// whitespace allowed; anything else after the JSON object is an error). Error offsets
    /// are byte offsets in `text`.
    pub fn parse(text: &str) -> Result<ObjectGraph, MetaError> {
        Self::parse_with(text, false)
    }

    /// [`parse`](Self::parse); with `lenient`, an attributes object
    /// (`relay.attrs.*`) may lack fields, as those saved by other TVM
    /// versions do (the reader of the object decides what they mean).
    pub fn parse_with(text: &str, lenient: bool) -> Result<ObjectGraph, MetaError> {
        let (json, end) = json::parse_value(text).map_err(|e| MetaError::Parse {
            offset: e.offset,
            message: e.message,
        })?;
        let after = json::skip_space(text, end);
        if after < text.len() {
            return Err(MetaError::Parse {
                offset: after,
                message: "unexpected text after the metadata JSON".to_string(),
            });
        }
        let graph = Self::from_json(&json)?;
        graph.check(lenient).map_err(|e| MetaError::Parse {
            offset: locate(&json, &e.place),
            message: e.message,
        })?;
        Ok(graph)
    }

    fn from_json(json: &Json) -> Result<ObjectGraph, MetaError> {
        let err = |offset: usize, message: String| MetaError::Parse { offset, message };
        let JsonValue::Object(members) = &json.value else {
            return Err(err(
                json.offset,
                format!(
                    "expected the metadata to be a JSON object, found {}",
                    json.value.kind()
                ),
            ));
        };
        let mut root = None;
        let mut nodes = None;
        let mut b64ndarrays = Vec::new();
        let mut attrs = BTreeMap::new();
        for (key_offset, key, value) in members {
            match key.as_str() {
                "root" => root = Some(read_index(value)?),
                "nodes" => {
                    let JsonValue::Array(items) = &value.value else {
                        return Err(expected(value, "an array of nodes"));
                    };
                    nodes = Some(items.iter().map(read_node).collect::<Result<Vec<_>, _>>()?);
                }
                "b64ndarrays" => b64ndarrays = read_string_array(value)?,
                "attrs" => attrs = read_string_map(value)?,
                _ => {
                    return Err(err(
                        *key_offset,
                        format!(
                            "unknown field `{key}` in the metadata graph (expected `root`, \
                             `nodes`, `b64ndarrays` or `attrs`)"
                        ),
                    ))
                }
            }
        }
        let root = root.ok_or_else(|| err(json.offset, "missing field `root`".to_string()))?;
        let nodes = nodes.ok_or_else(|| err(json.offset, "missing field `nodes`".to_string()))?;
        Ok(ObjectGraph {
            root,
            nodes,
            b64ndarrays,
            attrs,
        })
    }

    /// Checks the references of a graph (for graphs built in memory; [`parse`](Self::parse)
    /// does this already): the root, `data` indices, `Map` key/value counts, the fields of
    /// known types (present and well-formed, indices in range) and the absence of cycles.
    pub fn validate(&self) -> Result<(), MetaError> {
        self.check(false).map_err(|e| {
            let node = match e.place {
                Place::Root => None,
                Place::Node(n) | Place::Attr(n, _) | Place::Data(n, _) => Some(n),
            };
            MetaError::Invalid {
                node,
                message: e.message,
            }
        })
    }

    fn check(&self, lenient: bool) -> Result<(), Invalid> {
        let n = self.nodes.len();
        if self.root >= n {
            return invalid(
                Place::Root,
                format!("the root index {} is out of range ({n} nodes)", self.root),
            );
        }
        // Edges for the cycle check: `data` of every node plus the object fields of known
        // types, like TVM's `TopoSort`.
        let mut edges: Vec<Vec<usize>> = Vec::with_capacity(n);
        for (i, node) in self.nodes.iter().enumerate() {
            let mut out = Vec::new();
            for (j, &d) in node.data.iter().enumerate() {
                if d >= n {
                    return invalid(
                        Place::Data(i, j),
                        format!("node index {d} is out of range ({n} nodes)"),
                    );
                }
                out.push(d);
            }
            if node.is_map() {
                if !node.keys.is_empty() && node.keys.len() != node.data.len() {
                    return invalid(
                        Place::Node(i),
                        format!(
                            "a Map has {} keys but {} values",
                            node.keys.len(),
                            node.data.len()
                        ),
                    );
                }
                if node.keys.is_empty() && node.data.len() & 1 == 1 {
                    return invalid(
                        Place::Node(i),
                        "a Map without `keys` needs an even number of `data` entries",
                    );
                }
            }
            if node.repr_bytes.is_empty() && !node.is_array() && !node.is_map() {
                if let Some(fields) = schema::fields(&node.type_key) {
                    for &(name, kind) in fields {
                        let Some(value) = node.attrs.get(name) else {
                            if lenient && node.type_key.starts_with("relay.attrs.") {
                                continue;
                            }
                            return invalid(
                                Place::Node(i),
                                format!("missing field `{name}` of `{}`", node.type_key),
                            );
                        };
                        match check_field(self, kind, value) {
                            Ok(Some(target)) => out.push(target),
                            Ok(None) => {}
                            Err(message) => {
                                return invalid(
                                    Place::Attr(i, name.to_string()),
                                    format!("field `{name}` of `{}`: {message}", node.type_key),
                                )
                            }
                        }
                    }
                }
            }
            edges.push(out);
        }
        // Kahn's algorithm.
        let mut in_degree = vec![0usize; n];
        for out in &edges {
            for &t in out {
                in_degree[t] += 1;
            }
        }
        let mut queue: Vec<usize> = (0..n).filter(|&i| in_degree[i] == 0).collect();
        let mut p = 0;
        while p < queue.len() {
            let i = queue[p];
            p += 1;
            for &t in &edges[i] {
                in_degree[t] -= 1;
                if in_degree[t] == 0 {
                    queue.push(t);
                }
            }
        }
        if queue.len() != n {
            let first = (0..n).find(|&i| in_degree[i] != 0).unwrap_or(0);
            return invalid(
                Place::Node(first),
                "cyclic reference detected in the metadata graph",
            );
        }
        Ok(())
    }

    /// The JSON text TVM's `SaveJSON` writes for this graph (no trailing newline).
    pub fn to_json(&self) -> String {
        let mut w = JsonWriter::new();
        w.begin_object(true);
        w.key("root");
        w.number(self.root);
        w.key("nodes");
        w.begin_array(true);
        for node in &self.nodes {
            w.array_item();
            node.save(&mut w);
        }
        w.end_array();
        w.key("b64ndarrays");
        w.string_array(&self.b64ndarrays);
        if !self.attrs.is_empty() {
            w.key("attrs");
            w.string_map(self.attrs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        w.end_object();
        w.finish()
    }

    /// Node `i`, if it exists.
    pub fn node(&self, i: usize) -> Option<&Node> {
        self.nodes.get(i)
    }

    /// Decodes tensor blob `i`.
    pub fn tensor(&self, i: usize) -> Result<TensorData, MetaError> {
        let blob = self.b64ndarrays.get(i).ok_or_else(|| MetaError::Invalid {
            node: None,
            message: format!(
                "tensor index {i} is out of range ({} tensors)",
                self.b64ndarrays.len()
            ),
        })?;
        TensorData::from_base64(blob).map_err(|error| MetaError::Tensor { index: i, error })
    }

    /// The typed view of the root as a Relay meta table.
    pub fn table(&self) -> Result<MetaTable<'_>, MetaError> {
        MetaTable::new(self)
    }
}

/// The offset of a validation problem in the parsed JSON.
fn locate(json: &Json, place: &Place) -> usize {
    let JsonValue::Object(members) = &json.value else {
        return json.offset;
    };
    let member = |name: &str| {
        members
            .iter()
            .rev()
            .find(|(_, k, _)| k == name)
            .map(|m| &m.2)
    };
    let node_json = |i: usize| match member("nodes").map(|v| &v.value) {
        Some(JsonValue::Array(items)) => items.get(i),
        _ => None,
    };
    match place {
        Place::Root => member("root").map_or(json.offset, |v| v.offset),
        Place::Node(i) => node_json(*i).map_or(json.offset, |v| v.offset),
        Place::Attr(i, name) => {
            let Some(node) = node_json(*i) else {
                return json.offset;
            };
            let attrs = match &node.value {
                JsonValue::Object(m) => m.iter().rev().find(|(_, k, _)| k == "attrs"),
                _ => None,
            };
            let value = attrs.and_then(|(_, _, a)| match &a.value {
                JsonValue::Object(m) => m.iter().rev().find(|(_, k, _)| k == name),
                _ => None,
            });
            value.map_or(node.offset, |(_, _, v)| v.offset)
        }
        Place::Data(i, j) => {
            let Some(node) = node_json(*i) else {
                return json.offset;
            };
            let data = match &node.value {
                JsonValue::Object(m) => m.iter().rev().find(|(_, k, _)| k == "data"),
                _ => None,
            };
            match data.map(|(_, _, d)| &d.value) {
                Some(JsonValue::Array(items)) => items.get(*j).map_or(node.offset, |v| v.offset),
                _ => node.offset,
            }
        }
    }
}

fn expected(value: &Json, what: &str) -> MetaError {
    MetaError::Parse {
        offset: value.offset,
        message: format!("expected {what}, found {}", value.value.kind()),
    }
}

fn read_index(value: &Json) -> Result<usize, MetaError> {
    match &value.value {
        JsonValue::Number(s) => parse_index(s).ok_or_else(|| MetaError::Parse {
            offset: value.offset,
            message: format!("expected a node index, found `{s}`"),
        }),
        _ => Err(expected(value, "a node index")),
    }
}

fn read_string(value: &Json) -> Result<String, MetaError> {
    match &value.value {
        JsonValue::String(s) => Ok(s.clone()),
        _ => Err(expected(value, "a string")),
    }
}

fn read_string_array(value: &Json) -> Result<Vec<String>, MetaError> {
    match &value.value {
        JsonValue::Array(items) => items.iter().map(read_string).collect(),
        _ => Err(expected(value, "an array of strings")),
    }
}

fn read_string_map(value: &Json) -> Result<BTreeMap<String, String>, MetaError> {
    match &value.value {
        JsonValue::Object(members) => members
            .iter()
            .map(|(_, k, v)| Ok((k.clone(), read_string(v)?)))
            .collect(),
        _ => Err(expected(value, "an object of strings")),
    }
}

fn read_node(json: &Json) -> Result<Node, MetaError> {
    let JsonValue::Object(members) = &json.value else {
        return Err(expected(json, "a node object"));
    };
    let mut node = Node::default();
    let mut repr_str = String::new();
    let mut repr_b64: Option<(String, usize)> = None;
    for (key_offset, key, value) in members {
        match key.as_str() {
            "type_key" => node.type_key = read_string(value)?,
            "repr_str" => repr_str = read_string(value)?,
            "repr_b64" => repr_b64 = Some((read_string(value)?, value.offset)),
            "attrs" => node.attrs = read_string_map(value)?,
            "keys" => node.keys = read_string_array(value)?,
            "data" => {
                let JsonValue::Array(items) = &value.value else {
                    return Err(expected(value, "an array of node indices"));
                };
                node.data = items.iter().map(read_index).collect::<Result<_, _>>()?;
            }
            _ => {
                return Err(MetaError::Parse {
                    offset: *key_offset,
                    message: format!(
                        "unknown field `{key}` in a node (expected `type_key`, `repr_str`, \
                         `repr_b64`, `attrs`, `keys` or `data`)"
                    ),
                })
            }
        }
    }
    let repr_b64 = repr_b64.filter(|(s, _)| !s.is_empty());
    if !repr_str.is_empty() {
        if let Some((_, offset)) = repr_b64 {
            return Err(MetaError::Parse {
                offset,
                message: "a node has both `repr_str` and `repr_b64`".to_string(),
            });
        }
        node.repr_bytes = repr_str.into_bytes();
    } else if let Some((text, offset)) = repr_b64 {
        // `offset` is the opening quote; base64 text has no escapes.
        node.repr_bytes = decode_repr_b64(&text).map_err(|(at, message)| MetaError::Parse {
            offset: offset + 1 + at,
            message,
        })?;
    }
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"{
  "root": 1, 
  "nodes": [
    {
      "type_key": ""
    }, 
    {
      "type_key": "Map", 
      "keys": [
        "relay.attrs.DensePackAttrs"
      ], 
      "data": [2]
    }, 
    {
      "type_key": "Array", 
      "data": [3]
    }, 
    {
      "type_key": "relay.attrs.DensePackAttrs", 
      "attrs": {
        "out_dtype": "float32", 
        "units": "0", 
        "weight_layout": "4"
      }
    }, 
    {
      "type_key": "runtime.String", 
      "repr_str": "NC8n"
    }
  ], 
  "b64ndarrays": [], 
  "attrs": {"tvm_version": "0.13.0"}
}"#;

    #[test]
    fn round_trips_a_small_section() {
        let g = ObjectGraph::parse(SMALL).unwrap();
        assert_eq!(g.root, 1);
        assert_eq!(g.nodes.len(), 5);
        assert_eq!(g.nodes[4].repr_str(), Some("NC8n"));
        assert_eq!(g.nodes[3].attrs["weight_layout"], "4");
        assert_eq!(g.to_json(), SMALL);
        // Leading newline and trailing whitespace are fine.
        assert_eq!(ObjectGraph::parse(&format!("\n{SMALL}\n")).unwrap(), g);
    }

    #[test]
    fn an_entry_is_found_where_it_is_written() {
        let text = format!("\n{SMALL}\n");
        let layout = SectionLayout::read(&text).unwrap();
        let range = layout.entry_range("relay.attrs.DensePackAttrs", 0).unwrap();
        let entry = &text[range];
        assert!(
            entry.starts_with("{\n      \"type_key\": \"relay.attrs.DensePackAttrs\""),
            "{entry}"
        );
        assert!(entry.ends_with("}\n    }"), "{entry}");
        assert_eq!(layout.entry_range("relay.attrs.DensePackAttrs", 1), None);
        assert_eq!(layout.entry_range("relay.Constant", 0), None);
        assert!(SectionLayout::read("{ not json").is_none());
    }

    #[test]
    fn default_graph() {
        let g = ObjectGraph::default();
        assert_eq!(
            g.to_json(),
            "{\n  \"root\": 0, \n  \"nodes\": [\n    {\n      \"type_key\": \"\"\n    }\n  ], \n  \
             \"b64ndarrays\": [], \n  \"attrs\": {\"tvm_version\": \"0.13.0\"}\n}"
        );
        assert_eq!(ObjectGraph::parse(&g.to_json()).unwrap(), g);
    }

    #[test]
    fn repr_b64_for_unprintable_bytes() {
        let mut g = ObjectGraph::default();
        let mut s = Node::new("runtime.String");
        s.repr_bytes = "héllo\n".as_bytes().to_vec();
        g.nodes.push(s);
        g.root = 1;
        let text = g.to_json();
        assert!(text.contains("\"repr_b64\": \""), "{text}");
        let back = ObjectGraph::parse(&text).unwrap();
        assert_eq!(back, g);
        assert_eq!(back.nodes[1].repr_str(), Some("héllo\n"));
        assert_eq!(back.to_json(), text);
    }

    #[test]
    fn escapes_in_strings() {
        let mut g = ObjectGraph::default();
        let mut s = Node::new("runtime.String");
        s.repr_bytes = b"a\"b\\c".to_vec();
        g.nodes.push(s);
        let mut m = Node::new("Map");
        m.keys.push("tab\there".into());
        m.data.push(1);
        g.nodes.push(m);
        g.root = 2;
        let text = g.to_json();
        assert!(text.contains(r#""repr_str": "a\"b\\c""#));
        assert!(text.contains(r#""tab\there""#));
        assert_eq!(ObjectGraph::parse(&text).unwrap(), g);
    }

    #[test]
    fn long_data_arrays_are_multi_line() {
        let mut g = ObjectGraph::default();
        let mut a = Node::new("Array");
        a.data = vec![0; 11];
        g.nodes.push(a);
        g.root = 1;
        let text = g.to_json();
        assert!(
            text.contains("\"data\": [\n        0, \n        0, "),
            "{text}"
        );
        assert!(text.contains("0\n      ]\n    }"), "{text}");
        assert_eq!(ObjectGraph::parse(&text).unwrap().to_json(), text);
    }

    fn parse_err(text: &str) -> (usize, String) {
        match ObjectGraph::parse(text) {
            Err(MetaError::Parse { offset, message }) => (offset, message),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn errors_point_at_the_problem() {
        let at = |needle: &str| SMALL.find(needle).unwrap();
        // Bad JSON.
        let (o, _) = parse_err(&SMALL[..SMALL.len() - 1]);
        assert_eq!(o, SMALL.len() - 1);
        // Root out of range.
        let t = SMALL.replace("\"root\": 1", "\"root\": 9");
        let (o, m) = parse_err(&t);
        assert_eq!(o, at("\"root\": 1") + 8);
        assert!(m.contains("root index 9"), "{m}");
        // Data index out of range.
        let t = SMALL.replace("\"data\": [3]", "\"data\": [30]");
        let (o, m) = parse_err(&t);
        assert_eq!(o, at("\"data\": [3]") + 9);
        assert!(m.contains("30"), "{m}");
        // Field of a known type out of range.
        let t = SMALL.replace("\"weight_layout\": \"4\"", "\"weight_layout\": \"40\"");
        let (o, m) = parse_err(&t);
        assert_eq!(o, at("\"weight_layout\": \"4\"") + 17);
        assert!(m.contains("weight_layout"), "{m}");
        // Missing field.
        let t = SMALL.replace("\"units\": \"0\", ", "");
        let (o, m) = parse_err(&t);
        assert_eq!(&t[o..o + 1], "{");
        assert!(m.contains("missing field `units`"), "{m}");
        // Bad dtype.
        let t = SMALL.replace("\"float32\"", "\"floaty\"");
        let (_, m) = parse_err(&t);
        assert!(m.contains("unknown type floaty"), "{m}");
        // Unknown fields.
        let t = SMALL.replace("\"b64ndarrays\"", "\"b64\"");
        let (o, m) = parse_err(&t);
        assert_eq!(o, at("\"b64ndarrays\""));
        assert!(m.contains("unknown field `b64`"), "{m}");
        let t = SMALL.replace("\"repr_str\"", "\"repr\"");
        let (o, _) = parse_err(&t);
        assert_eq!(o, at("\"repr_str\""));
        // Wrong kinds.
        for (from, to) in [
            ("\"root\": 1", "\"root\": \"1\""),
            ("\"root\": 1", "\"root\": -1"),
            ("\"root\": 1", "\"root\": 1.5"),
            ("\"data\": [3]", "\"data\": 3"),
            ("\"data\": [3]", "\"data\": [\"3\"]"),
            ("\"b64ndarrays\": []", "\"b64ndarrays\": [1]"),
            ("{\"tvm_version\": \"0.13.0\"}", "{\"tvm_version\": 13}"),
            ("\"repr_str\": \"NC8n\"", "\"repr_str\": null"),
        ] {
            assert!(
                ObjectGraph::parse(&SMALL.replace(from, to)).is_err(),
                "{to}"
            );
        }
        // Missing root / nodes; not an object; trailing text.
        assert!(parse_err("{\"nodes\": []}").1.contains("root"));
        assert!(parse_err("{\"root\": 0}").1.contains("nodes"));
        assert_eq!(parse_err("[]").0, 0);
        assert_eq!(parse_err(&format!("{SMALL} x")).0, SMALL.len() + 1);
        // Map with mismatched keys.
        let t = SMALL.replace("\"data\": [2]", "\"data\": [2, 3]");
        assert!(parse_err(&t).1.contains("keys"));
        // Both reprs; bad base64.
        let t = SMALL.replace(
            "\"repr_str\": \"NC8n\"",
            "\"repr_str\": \"x\", \"repr_b64\": \"AAAA\"",
        );
        assert!(parse_err(&t).1.contains("both"));
        let t = SMALL.replace("\"repr_str\": \"NC8n\"", "\"repr_b64\": \"AA!A\"");
        let (o, _) = parse_err(&t);
        assert_eq!(&t[o..o + 1], "!");
        let t = SMALL.replace("\"repr_str\": \"NC8n\"", "\"repr_b64\": \"AAAA\"");
        assert!(parse_err(&t).1.contains("length"));
    }

    #[test]
    fn cycles_are_errors() {
        let mut g = ObjectGraph::default();
        let mut a = Node::new("Array");
        a.data = vec![2];
        let mut b = Node::new("Array");
        b.data = vec![1];
        g.nodes.push(a);
        g.nodes.push(b);
        g.root = 1;
        let (_, m) = parse_err(&g.to_json());
        assert!(m.contains("cyclic"), "{m}");
        assert!(matches!(
            g.validate(),
            Err(MetaError::Invalid { node: Some(1), .. })
        ));
        // Through a field of a known type.
        let mut g = ObjectGraph::default();
        let mut t = Node::new("TupleType");
        t.attrs.insert("fields".into(), "2".into());
        t.attrs.insert("span".into(), "0".into());
        let mut a = Node::new("Array");
        a.data = vec![1];
        g.nodes.push(t);
        g.nodes.push(a);
        g.root = 1;
        assert!(parse_err(&g.to_json()).1.contains("cyclic"));
    }

    #[test]
    fn garbage_never_panics() {
        let mut seeds = vec![SMALL.to_string()];
        for i in 0..SMALL.len() {
            if SMALL.is_char_boundary(i) {
                seeds.push(SMALL[..i].to_string());
                let mut s = SMALL.to_string();
                s.remove(i);
                seeds.push(s);
            }
        }
        for s in seeds {
            let _ = ObjectGraph::parse(&s);
        }
    }
}
