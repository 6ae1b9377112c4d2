//! Typed, read-only views of an [`ObjectGraph`]: the Relay meta table and node references.
//!
//! The root of a Relay metadata section is a `Map<String, Array<Object>>` from type key to
//! the list of objects that `meta[KEY][i]` refers to. [`MetaTable::get`] answers such a
//! reference with the parser's error wording (`src/relay/parser/parser.cc`,
//! `ParseMetaRef`). A [`NodeRef`] then reads the node's fields, checking every index.

use super::graph::{check_field, parse_float, parse_index, parse_int, Node, ObjectGraph};
use super::ndarray::TensorData;
use super::schema::FieldKind;
use super::MetaError;
use crate::dtype::DataType;

/// The root `Map<String, Array<Object>>` of a metadata section.
#[derive(Debug, Clone)]
pub struct MetaTable<'g> {
    graph: &'g ObjectGraph,
    /// (type key, index of its `Array` node), in the map's order.
    entries: Vec<(&'g str, usize)>,
}

impl<'g> MetaTable<'g> {
    /// Checks that the root is a string-keyed `Map` whose values are `Array`s.
    pub fn new(graph: &'g ObjectGraph) -> Result<MetaTable<'g>, MetaError> {
        let root = NodeRef::new(graph, graph.root)?;
        let pairs = root.map_entries().map_err(|_| MetaError::Node {
            node: root.index(),
            message: format!(
                "the root of the metadata must be a Map, found `{}`",
                root.type_key()
            ),
        })?;
        let mut entries = Vec::with_capacity(pairs.len());
        for (key, value) in pairs {
            let key_str = match key {
                MapKey::Str(s) => s,
                MapKey::Node(k) => k.as_str().map_err(|_| MetaError::Node {
                    node: k.index(),
                    message: "the keys of the meta table must be strings".to_string(),
                })?,
            };
            if !value.node().is_array() {
                return Err(MetaError::Node {
                    node: value.index(),
                    message: format!(
                        "the meta table entry for `{key_str}` must be an Array, found `{}`",
                        value.type_key()
                    ),
                });
            }
            // Check the elements once, so `entries` and `get` can hand out references.
            value.items()?;
            entries.push((key_str, value.index()));
        }
        Ok(MetaTable { graph, entries })
    }

    /// The graph this table reads.
    pub fn graph(&self) -> &'g ObjectGraph {
        self.graph
    }

    /// The type keys, in the map's order.
    pub fn keys(&self) -> impl Iterator<Item = &'g str> + '_ {
        self.entries.iter().map(|(k, _)| *k)
    }

    /// The objects listed under `key` (`None` if there is no such key). A key written twice
    /// (which TVM never does) resolves to its last occurrence, as TVM's loader does.
    pub fn entries(&self, key: &str) -> Option<Vec<NodeRef<'g>>> {
        let (_, array) = self.entries.iter().rev().find(|(k, _)| *k == key)?;
        let node = &self.graph.nodes[*array];
        Some(
            node.data
                .iter()
                .map(|&i| NodeRef {
                    graph: self.graph,
                    index: i,
                })
                .collect(),
        )
    }

    /// `meta[key][index]`, with TVM's messages when the key is missing ("no entry in the meta
    /// table for `K`") or the index too large ("the node index `i` is out of bounds for
    /// `K`").
    pub fn get(&self, key: &str, index: usize) -> Result<NodeRef<'g>, MetaError> {
        let entries = self.entries(key).ok_or_else(|| MetaError::NoEntry {
            type_key: key.to_string(),
        })?;
        entries
            .get(index)
            .copied()
            .ok_or_else(|| MetaError::IndexOutOfBounds {
                type_key: key.to_string(),
                index,
            })
    }

    /// Whether the table has no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A key of a `Map` node.
#[derive(Debug, Clone, Copy)]
pub enum MapKey<'g> {
    /// A key of a string-keyed map (`keys` in the JSON).
    Str(&'g str),
    /// A key object of another map.
    Node(NodeRef<'g>),
}

/// A checked reference to one node of a graph.
#[derive(Debug, Clone, Copy)]
pub struct NodeRef<'g> {
    graph: &'g ObjectGraph,
    index: usize,
}

impl PartialEq for NodeRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.graph, other.graph) && self.index == other.index
    }
}

impl Eq for NodeRef<'_> {}

impl<'g> NodeRef<'g> {
    /// A reference to node `index`, if it exists.
    pub fn new(graph: &'g ObjectGraph, index: usize) -> Result<NodeRef<'g>, MetaError> {
        if index < graph.nodes.len() {
            Ok(NodeRef { graph, index })
        } else {
            Err(MetaError::Invalid {
                node: None,
                message: format!(
                    "node index {index} is out of range ({} nodes)",
                    graph.nodes.len()
                ),
            })
        }
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, MetaError> {
        Err(MetaError::Node {
            node: self.index,
            message: message.into(),
        })
    }

    /// The graph.
    pub fn graph(&self) -> &'g ObjectGraph {
        self.graph
    }

    /// The node's index in the graph.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The node.
    pub fn node(&self) -> &'g Node {
        &self.graph.nodes[self.index]
    }

    /// The node's type key (empty for null).
    pub fn type_key(&self) -> &'g str {
        &self.node().type_key
    }

    /// Whether this is the null object.
    pub fn is_null(&self) -> bool {
        self.node().is_null()
    }

    /// The raw text of field `name`, if present.
    pub fn attr(&self, name: &str) -> Option<&'g str> {
        self.node().attrs.get(name).map(String::as_str)
    }

    fn required(&self, name: &str) -> Result<&'g str, MetaError> {
        match self.attr(name) {
            Some(v) => Ok(v),
            None => self.err(format!("`{}` has no field `{name}`", self.type_key())),
        }
    }

    fn bad_field<T>(&self, name: &str, message: String) -> Result<T, MetaError> {
        self.err(format!(
            "field `{name}` of `{}`: {message}",
            self.type_key()
        ))
    }

    /// The object field `name` (possibly the null node).
    pub fn field(&self, name: &str) -> Result<NodeRef<'g>, MetaError> {
        let v = self.required(name)?;
        match check_field(self.graph, FieldKind::Object, v) {
            Ok(Some(index)) => Ok(NodeRef {
                graph: self.graph,
                index,
            }),
            Ok(None) => self.bad_field(name, "not an object".to_string()),
            Err(m) => self.bad_field(name, m),
        }
    }

    /// The object field `name`, or `None` when it is null.
    pub fn opt_field(&self, name: &str) -> Result<Option<NodeRef<'g>>, MetaError> {
        let f = self.field(name)?;
        Ok((!f.is_null()).then_some(f))
    }

    /// An integer field (`int`, `int64_t`, enums).
    pub fn int_field(&self, name: &str) -> Result<i64, MetaError> {
        let v = self.required(name)?;
        parse_int(v).map_or_else(
            || self.bad_field(name, format!("`{v}` is not an integer")),
            Ok,
        )
    }

    /// A `bool` field (`0` or `1`).
    pub fn bool_field(&self, name: &str) -> Result<bool, MetaError> {
        match self.required(name)? {
            "0" => Ok(false),
            "1" => Ok(true),
            v => self.bad_field(name, format!("`{v}` is not a boolean (0 or 1)")),
        }
    }

    /// A `double` field.
    pub fn float_field(&self, name: &str) -> Result<f64, MetaError> {
        let v = self.required(name)?;
        parse_float(v).map_or_else(
            || self.bad_field(name, format!("`{v}` is not a number")),
            Ok,
        )
    }

    /// A `DataType` field (`""` is `void`).
    pub fn dtype_field(&self, name: &str) -> Result<DataType, MetaError> {
        let v = self.required(name)?;
        DataType::parse(v).or_else(|e| self.bad_field(name, e.to_string()))
    }

    /// A `std::string` field, as written.
    pub fn str_field(&self, name: &str) -> Result<&'g str, MetaError> {
        self.required(name)
    }

    /// The blob index of an `NDArray` field.
    pub fn tensor_index(&self, name: &str) -> Result<usize, MetaError> {
        let v = self.required(name)?;
        match parse_index(v) {
            Some(i) if i < self.graph.b64ndarrays.len() => Ok(i),
            _ => self.bad_field(
                name,
                format!(
                    "`{v}` is not a tensor index ({} tensors)",
                    self.graph.b64ndarrays.len()
                ),
            ),
        }
    }

    /// The decoded tensor of an `NDArray` field.
    pub fn tensor_field(&self, name: &str) -> Result<TensorData, MetaError> {
        self.graph.tensor(self.tensor_index(name)?)
    }

    /// The elements of an `Array` node.
    pub fn items(&self) -> Result<Vec<NodeRef<'g>>, MetaError> {
        if !self.node().is_array() {
            return self.err(format!("expected an Array, found `{}`", self.type_key()));
        }
        self.node()
            .data
            .iter()
            .map(|&i| NodeRef::new(self.graph, i))
            .collect()
    }

    /// The entries of a `Map` node, in order.
    pub fn map_entries(&self) -> Result<Vec<(MapKey<'g>, NodeRef<'g>)>, MetaError> {
        let node = self.node();
        if !node.is_map() {
            return self.err(format!("expected a Map, found `{}`", self.type_key()));
        }
        let refs: Vec<NodeRef<'g>> = node
            .data
            .iter()
            .map(|&i| NodeRef::new(self.graph, i))
            .collect::<Result<_, _>>()?;
        if !node.keys.is_empty() {
            if node.keys.len() != refs.len() {
                return self.err("a Map's keys and values differ in number");
            }
            Ok(node
                .keys
                .iter()
                .map(String::as_str)
                .map(MapKey::Str)
                .zip(refs)
                .collect())
        } else {
            if refs.len() & 1 == 1 {
                return self.err("a Map without keys needs an even number of data entries");
            }
            Ok(refs
                .chunks(2)
                .map(|kv| (MapKey::Node(kv[0]), kv[1]))
                .collect())
        }
    }

    /// The text of an object with a compact representation (`runtime.String`, `SourceName`,
    /// `Op`, ...).
    pub fn as_str(&self) -> Result<&'g str, MetaError> {
        let node = self.node();
        if node.is_null()
            || node.is_array()
            || node.is_map()
            || !node.attrs.is_empty()
            || !node.data.is_empty()
        {
            return self.err(format!("expected a string, found `{}`", self.type_key()));
        }
        match node.repr_str() {
            Some(s) => Ok(s),
            None => self.err("the string is not valid UTF-8"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph() -> ObjectGraph {
        // Map{"relay.Constant": [c], "tir.Var": []}; c's data is blob 0.
        let mut g = ObjectGraph::default();
        let mut map = Node::new("Map");
        map.keys = vec!["relay.Constant".into(), "tir.Var".into()];
        map.data = vec![2, 6];
        let mut arr = Node::new("Array");
        arr.data = vec![3];
        let mut c = Node::new("relay.Constant");
        for (k, v) in [
            ("data", "0"),
            ("virtual_device_", "4"),
            ("span", "0"),
            ("_checked_type_", "0"),
        ] {
            c.attrs.insert(k.into(), v.into());
        }
        let mut vd = Node::new("VirtualDevice");
        for (k, v) in [
            ("device_type_int", "-1"),
            ("virtual_device_id", "-1"),
            ("target", "0"),
            ("memory_scope", "5"),
        ] {
            vd.attrs.insert(k.into(), v.into());
        }
        let s = Node::new("runtime.String");
        g.nodes.extend([map, arr, c, vd, s, Node::new("Array")]);
        g.root = 1;
        g.b64ndarrays
            .push("P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAAAAAAEIAQABAAAAAAAAAAA=".into());
        g.validate().unwrap();
        g
    }

    #[test]
    fn lookups_and_tvm_messages() {
        let g = graph();
        let t = g.table().unwrap();
        assert_eq!(t.keys().collect::<Vec<_>>(), ["relay.Constant", "tir.Var"]);
        let c = t.get("relay.Constant", 0).unwrap();
        assert_eq!(c.type_key(), "relay.Constant");
        assert_eq!(c.index(), 3);
        assert_eq!(
            t.get("relay.Constant", 1).unwrap_err().to_string(),
            "the node index `1` is out of bounds for `relay.Constant`"
        );
        assert_eq!(
            t.get("relay.Var", 0).unwrap_err().to_string(),
            "no entry in the meta table for `relay.Var`"
        );
        assert!(t.get("tir.Var", 0).is_err());
        assert_eq!(t.entries("tir.Var").unwrap().len(), 0);
    }

    #[test]
    fn fields() {
        let g = graph();
        let c = g.table().unwrap().get("relay.Constant", 0).unwrap();
        let vd = c.field("virtual_device_").unwrap();
        assert_eq!(vd.int_field("device_type_int").unwrap(), -1);
        assert!(vd.opt_field("target").unwrap().is_none());
        assert_eq!(vd.field("memory_scope").unwrap().as_str().unwrap(), "");
        assert!(c.opt_field("_checked_type_").unwrap().is_none());
        let t = c.tensor_field("data").unwrap();
        assert_eq!(t.dtype, DataType::uint(8));
        assert_eq!(c.tensor_index("data").unwrap(), 0);
        assert!(c.field("nope").is_err());
        assert!(c.int_field("span").is_ok());
        assert!(c.dtype_field("data").is_err());
        assert!(c.items().is_err());
        assert!(c.as_str().is_err());
        assert!(vd.bool_field("target").is_ok());
        assert!(vd.bool_field("device_type_int").is_err());
        assert!(vd.float_field("device_type_int").is_ok());
    }

    #[test]
    fn bad_tables() {
        let mut g = graph();
        g.root = 2; // an Array
        assert!(g.table().is_err());
        let mut g = graph();
        g.nodes[1].data = vec![2, 3]; // a Constant where an Array belongs
        assert!(g.table().is_err());
        let mut g = graph();
        g.nodes[1].keys.clear(); // non-string map: keys must be String nodes
        g.nodes[1].data = vec![5, 2];
        assert_eq!(
            g.table().unwrap().keys().collect::<Vec<_>>(),
            [""],
            "a String node key is accepted"
        );
        g.nodes[1].data = vec![3, 2];
        assert!(g.table().is_err());
        let mut g = graph();
        g.root = 99;
        assert!(g.table().is_err());
    }
}
