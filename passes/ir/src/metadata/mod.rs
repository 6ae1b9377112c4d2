//! TVM's `#[metadata]` section: the JSON object graph, tensor blobs, the meta table, and a
//! builder that writes sections exactly as TVM v0.13.0 prints them.
//!
//! A Relay text file may end with `#[metadata]`, a newline and a JSON document that runs to
//! the end of the file (the files in the conformance corpus have nothing after its closing
//! brace). The JSON is TVM's object-graph serialisation (`SaveJSON` in
//! `src/node/serialization.cc`); its root is a `Map<String, Array<Object>>` from type key to
//! the objects `meta[KEY][i]` refers to.
//!
//! * [`graph`]: [`ObjectGraph`], an untyped, faithful model of the JSON.
//!   [`ObjectGraph::parse`] reads the text after `#[metadata]` and never panics (errors
//!   carry a byte offset); [`ObjectGraph::to_json`] writes it back byte for byte as TVM
//!   does (every metadata section of the corpus round-trips exactly).
//! * [`ndarray`]: [`TensorData`], the `b64ndarrays` tensor blobs, decoded and re-encoded
//!   bit-exactly, with element accessors.
//! * [`table`]: [`MetaTable`] / [`NodeRef`], typed, checked reading of the root map and of
//!   node fields; [`MetaTable::get`] fails with the Relay parser's messages.
//! * [`builder`]: [`ObjectGraphBuilder`] builds new sections with TVM's node numbering;
//!   [`constants_section`] builds a whole constants-only section in one call.
//! * [`schema`]: the reflected fields (in `VisitAttrs` order) of the object types a Relay
//!   section uses; [`json`]: the offset-keeping JSON reader and the `dmlc::JSONWriter`
//!   emulation.
//!
//! # How TVM numbers the nodes
//!
//! `SaveJSON` first walks the object graph from the root (`NodeIndexer::MakeIndex`) and
//! numbers objects in depth-first **pre-order**: the null object is node 0; an object gets
//! the next number the first time the walk reaches it (objects are identified by address,
//! so one object reached twice is one node, and two equal objects are two nodes); then the
//! walk visits its children:
//!
//! * an `Array`: its elements in order;
//! * a `Map` whose keys are all `runtime.String`s: its values in iteration order (the keys
//!   are written inline in `keys`, they are not nodes); any other `Map`: key, value, key,
//!   value, …;
//! * an object with a compact representation (`runtime.String`, `SourceName`, `Op`, …, see
//!   [`schema::REPR_TYPES`]): nothing;
//! * a `relay.Let`: `var`, `value`, `span`, `_checked_type_`, then `body`; a chain of lets
//!   is expanded iteratively, each nested let numbered when reached as a body. Its
//!   `virtual_device_` is not visited (TVM aborts if nothing else reached it);
//! * any other object: its fields in `VisitAttrs` order ([`schema::fields`]). An `NDArray`
//!   field gets the next blob number (`b64ndarrays` index) the first time the walk meets
//!   that tensor.
//!
//! Each node is then written with its `attrs` sorted by name, whatever the visiting order.
//! [`ObjectGraphBuilder::build`] implements exactly this walk; importing each corpus section
//! into the builder (keeping its sharing) and rebuilding it reproduces all of them.
//!
//! # The order of the type keys
//!
//! The printer (`TextMetaDataContext` in `src/relay/printer/meta_data.h`) appends each
//! object it prints as `meta[…]` to a list per type key, kept in a `std::unordered_map`,
//! and copies that into a `Map` when it writes the section. A `Map` of fewer than four
//! entries keeps the copy order, so the key order is libstdc++'s iteration order: with two
//! keys, the key first used **last** comes first (all 18 two-key sections of the corpus:
//! e.g. `meta[relay.Var]` used before `meta[relay.Constant]` gives keys
//! `["relay.Constant", "relay.Var"]`). [`tvm_meta_key_order`] computes this, also for three
//! keys (from TVM's string hash); four or more keys are not reproduced. Inside a key the
//! objects are in first-use order, and the walk numbers everything under the first key
//! before the second key's `Array`.
//!
//! # What a constant turns into
//!
//! `meta[relay.Constant][i]` is a `relay.Constant` node with the fields (visiting order)
//! `data` (blob index), `virtual_device_`, `span`, `_checked_type_`:
//!
//! * `virtual_device_` is the `VirtualDevice::FullyUnconstrained()` **singleton**:
//!   `device_type_int` -1, `virtual_device_id` -1, `target` null, `memory_scope` an empty
//!   `runtime.String` (written with no `repr_str`). The whole section has one such
//!   `VirtualDevice` node and one such string, numbered right after the first constant.
//! * `span` is null, or a `Span` (`source_name`, `line`, `column`, `end_line`,
//!   `end_column`) whose `SourceName` (e.g. `"repr_str": "from_string"` for parsed text) is
//!   interned, so one node per file name.
//! * `_checked_type_` is null when type inference never saw the constant (e.g.
//!   `models/mlp.bound.relay`), otherwise a `relay.TensorType` (`shape`, `dtype`, `span`
//!   null) whose `shape` is an `Array` of `IntImm` (`dtype` `int32`, `value`, `span` null).
//!
//! So a section with one typed 2-D constant is: 0 null, 1 `Map`, 2 `Array`, 3
//! `relay.Constant`, 4 `VirtualDevice`, 5 `runtime.String`, 6 `relay.TensorType`, 7 `Array`,
//! 8–9 `IntImm`; each further constant adds `relay.Constant`, `Span` (if any),
//! `relay.TensorType`, `Array`, `IntImm`s. With spans, the first constant's `Span` and the
//! `SourceName` come right after the `VirtualDevice` and its string.
//!
//! **Sharing after type inference.** A constant's checked type is whatever the type
//! solver resolved, not necessarily the fresh type `ConstantNode::tensor_type()` makes;
//! judging by the corpus, resolved types can reuse dimension objects (and whole types)
//! that other expressions' types also use. Of the corpus's 139 sections holding only
//! constants, 106 have no sharing beyond the virtual device and source names (and
//! [`constants_section`] reproduces them byte for byte); in 32, constants' `TensorType`s
//! share `IntImm` dimension objects with each other, and in one (`models/lstm.bound.pipeline`)
//! constants share whole `TensorType` objects. To reproduce those, the printer must map
//! each distinct type or dimension object of its IR to one [`ObjRef`] (memoise by
//! identity) and use the builder directly.
//!
//! # Writing a section
//!
//! ```
//! use relay_ir::dtype::DataType;
//! use relay_ir::metadata::{ObjectGraphBuilder, TensorData};
//!
//! let tensor = TensorData::from_f64s(DataType::FLOAT32, vec![2], &[1.0, 2.0]).unwrap();
//! let mut b = ObjectGraphBuilder::new();
//! let blob = b.blob(&tensor);
//! let ty = b.constant_tensor_type(tensor.dtype, &tensor.shape);
//! let c = b.constant(blob, None, Some(ty));
//! let root = b.meta_table(vec![("relay.Constant", vec![c])]);
//! let section = format!("#[metadata]\n{}", b.build(root).to_json());
//! assert!(section.ends_with("\"attrs\": {\"tvm_version\": \"0.13.0\"}\n}"));
//! ```
//!
//! Attribute values follow TVM's `JSONAttrGetter`: object fields are node indices (`"0"`
//! for null), integers decimal, booleans `0`/`1`, doubles `%.17g` ([`format_double`]),
//! data types [`DataType::to_tvm_string`](crate::dtype::DataType::to_tvm_string) (`void` is
//! `""`), tensors blob indices, `std::string` fields the text itself.
//!
//! # Deviations from TVM when reading
//!
//! We reject some inputs TVM would accept or crash on: text after the JSON object,
//! truncated tensor data, negative dimensions, references out of range (TVM's bounds check
//! is off by one and then throws). We accept the standard JSON escapes besides dmlc's five.
//! Nodes of types [`schema`] does not know are kept but their fields cannot be checked.

pub mod builder;
pub mod compare;
pub mod graph;
pub mod json;
pub mod ndarray;
pub mod schema;
pub mod summary;
pub mod table;

use std::fmt;

pub use builder::{
    constants_section, format_double, stable_hash_bytes, tvm_meta_key_order, BlobRef, ConstantSpec,
    ObjRef, ObjectGraphBuilder, SpanSpec, TensorTypeSpec, Value,
};
pub use compare::subgraphs_equal;
pub use graph::{Node, ObjectGraph, SectionLayout, TVM_VERSION};
pub use ndarray::{saved_byte_size, NdArrayError, TensorData, DEVICE_CPU, NDARRAY_MAGIC};
pub use summary::ValueSummary;
pub use table::{MapKey, MetaTable, NodeRef};

/// Errors from reading metadata and from meta table lookups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaError {
    /// The metadata text is not a valid object graph: bad JSON, a wrong field, a reference
    /// out of range, a cycle. `offset` is a byte offset in the text given to
    /// [`ObjectGraph::parse`].
    Parse {
        /// Byte offset in the parsed text.
        offset: usize,
        /// What went wrong.
        message: String,
    },
    /// A graph built in memory failed [`ObjectGraph::validate`].
    Invalid {
        /// The node at fault, if the problem is in a node.
        node: Option<usize>,
        /// What went wrong.
        message: String,
    },
    /// A node does not have the shape a typed accessor expects.
    Node {
        /// The node's index.
        node: usize,
        /// What went wrong.
        message: String,
    },
    /// `meta[K][i]` where the table has no key `K`.
    NoEntry {
        /// The type key.
        type_key: String,
    },
    /// `meta[K][i]` where the list for `K` has `i` or fewer entries.
    IndexOutOfBounds {
        /// The type key.
        type_key: String,
        /// The index.
        index: usize,
    },
    /// A tensor blob could not be decoded.
    Tensor {
        /// Index in `b64ndarrays`.
        index: usize,
        /// The problem.
        error: NdArrayError,
    },
}

impl fmt::Display for MetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaError::Parse { offset, message } => {
                write!(f, "invalid metadata section at byte {offset}: {message}")
            }
            MetaError::Invalid {
                node: Some(n),
                message,
            } => write!(f, "invalid metadata graph (node {n}): {message}"),
            MetaError::Invalid {
                node: None,
                message,
            } => {
                write!(f, "invalid metadata graph: {message}")
            }
            MetaError::Node { node, message } => write!(f, "metadata node {node}: {message}"),
            MetaError::NoEntry { type_key } => {
                write!(f, "no entry in the meta table for `{type_key}`")
            }
            MetaError::IndexOutOfBounds { type_key, index } => write!(
                f,
                "the node index `{index}` is out of bounds for `{type_key}`"
            ),
            MetaError::Tensor { index, error } => {
                write!(f, "tensor {index} of the metadata section: {error}")
            }
        }
    }
}

impl std::error::Error for MetaError {}

#[cfg(test)]
mod corpus_tests {
    //! Every metadata section of the TVM conformance corpus (`/work/shared/tvm`).

    use super::*;
    use std::path::{Path, PathBuf};

    fn corpus_dir() -> Option<PathBuf> {
        relay_test_support::tvm::root_or_skip("metadata corpus_tests")
    }

    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("relay" | "expected")
            ) {
                out.push(p);
            }
        }
    }

    /// (path, text after `#[metadata]`) of every corpus file with a metadata section.
    fn sections() -> Option<Vec<(PathBuf, String)>> {
        let dir = corpus_dir()?;
        let mut files = Vec::new();
        walk(&dir, &mut files);
        files.sort();
        let mut out = Vec::new();
        let mut awaiting = 0;
        for f in files {
            if awaiting_coverage(&f) {
                awaiting += 1;
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            if let Some(pos) = text.find("#[metadata]") {
                // A newline that ends the file is the file's, not the
                // section's (TVM's writer ends the section at `}`; some
                // records were saved with a final newline).
                let section = &text[pos + "#[metadata]".len()..];
                let section = section.strip_suffix('\n').unwrap_or(section);
                out.push((f, section.to_string()));
            }
        }
        eprintln!("metadata corpus: {awaiting} files of records awaiting coverage left out");
        Some(out)
    }

    /// Records this project does not cover yet (see
    /// `relay_test_support::tvm::awaiting_coverage`).
    fn awaiting_coverage(path: &Path) -> bool {
        // The metadata of TVM's records on single operators uses attrs types
        // and TIR nodes of operators our tables may not describe yet; this
        // crate cannot ask relay-infer which ones have relations, so those
        // records count as awaiting here (`lower_corpus` and
        // `roundtrip_corpus` check each of them once its relation exists).
        relay_test_support::tvm::awaiting_coverage(path, &|_| false).is_some()
    }

    #[test]
    fn corpus_sections_round_trip_byte_exactly() {
        let Some(sections) = sections() else {
            return;
        };
        assert!(!sections.is_empty(), "no metadata sections found");
        let mut failures = Vec::new();
        let (mut exact, mut reindexed, mut blobs) = (0, 0, 0);
        let (mut const_only, mut const_exact, mut const_shared) = (0, 0, 0);
        for (path, text) in &sections {
            let name = path.display();
            let graph = match ObjectGraph::parse(text) {
                Ok(g) => g,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            // Byte-exact writing.
            if format!("\n{}", graph.to_json()) == *text {
                exact += 1;
            } else {
                failures.push(format!("{name}: written text differs"));
            }
            // Blobs decode and re-encode bit-exactly; every element is readable.
            for (i, b64) in graph.b64ndarrays.iter().enumerate() {
                match graph.tensor(i) {
                    Ok(t) if t.to_base64() == *b64 && t.to_f64_vec().is_ok() => blobs += 1,
                    Ok(_) => failures.push(format!("{name}: blob {i} differs")),
                    Err(e) => failures.push(format!("{name}: {e}")),
                }
            }
            // The builder's node numbering reproduces TVM's.
            let mut b = ObjectGraphBuilder::new();
            match b.import_graph(&graph) {
                Ok(map) => match map[graph.root] {
                    Some(root) if b.build(root) == graph => reindexed += 1,
                    _ => failures.push(format!("{name}: re-indexed graph differs")),
                },
                Err(e) => failures.push(format!("{name}: import: {e}")),
            }
            // The meta table view.
            let table = match graph.table() {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            for key in table.keys() {
                let n = table.entries(key).map_or(0, |e| e.len());
                for i in 0..n {
                    if let Err(e) = table.get(key, i) {
                        failures.push(format!("{name}: {e}"));
                    }
                }
                assert!(matches!(
                    table.get(key, n),
                    Err(MetaError::IndexOutOfBounds { .. })
                ));
            }
            // Constants-only sections, rebuilt from plain values.
            if table.keys().collect::<Vec<_>>() == ["relay.Constant"] {
                const_only += 1;
                let specs: Result<Vec<_>, _> = table
                    .entries("relay.Constant")
                    .unwrap_or_default()
                    .into_iter()
                    .map(ConstantSpec::from_node)
                    .collect();
                let specs = match specs {
                    Ok(s) => s,
                    Err(e) => {
                        failures.push(format!("{name}: {e}"));
                        continue;
                    }
                };
                let rebuilt = constants_section(&specs);
                if rebuilt == graph {
                    const_exact += 1;
                } else {
                    // The only acceptable difference is object sharing in checked types.
                    let again: Result<Vec<_>, _> = rebuilt.table().and_then(|t| {
                        t.entries("relay.Constant")
                            .unwrap_or_default()
                            .into_iter()
                            .map(ConstantSpec::from_node)
                            .collect()
                    });
                    // Or of virtual devices: constants read from a section keep
                    // its `VirtualDevice` object, constants a pass made (PartialEvaluate's
                    // folded values) share TVM's unconstrained singleton, so TVM writes
                    // two equal `VirtualDevice` nodes where one rebuilt section has one.
                    let virtual_devices = |g: &ObjectGraph| {
                        g.nodes
                            .iter()
                            .filter(|n| n.type_key == "VirtualDevice")
                            .count()
                    };
                    if again.as_ref() == Ok(&specs)
                        && (rebuilt.nodes.len() > graph.nodes.len()
                            || virtual_devices(&graph) > virtual_devices(&rebuilt))
                    {
                        const_shared += 1;
                    } else {
                        failures.push(format!("{name}: constants section differs"));
                    }
                }
            }
        }
        eprintln!(
            "metadata corpus: {} sections, {exact} written byte-exactly, {reindexed} re-indexed \
             exactly, {blobs} blobs bit-exact; {const_only} constants-only sections: \
             {const_exact} rebuilt exactly from values, {const_shared} differ only by TVM's \
             sharing of checked-type objects",
            sections.len()
        );
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert_eq!(exact, sections.len());
        assert_eq!(reindexed, sections.len());
    }

    #[test]
    fn corpus_two_key_tables_list_the_last_used_key_first() {
        let Some(sections) = sections() else {
            return;
        };
        let mut checked = 0;
        for (path, text) in &sections {
            let Ok(graph) = ObjectGraph::parse(text) else {
                continue;
            };
            let Ok(table) = graph.table() else {
                continue;
            };
            let keys: Vec<&str> = table.keys().collect();
            if keys.len() < 2 {
                continue;
            }
            // First textual use of each key in the module text.
            let Ok(full) = std::fs::read_to_string(path) else {
                continue;
            };
            let body = &full[..full.find("#[metadata]").unwrap_or(full.len())];
            let mut first_use: Vec<(usize, &str)> = keys
                .iter()
                .filter_map(|k| body.find(&format!("meta[{k}]")).map(|p| (p, *k)))
                .collect();
            first_use.sort();
            let order: Vec<&str> = first_use.into_iter().map(|(_, k)| k).collect();
            assert_eq!(tvm_meta_key_order(&order), keys, "{}", path.display());
            checked += 1;
        }
        eprintln!("metadata corpus: {checked} multi-key tables checked");
    }

    #[test]
    fn corrupted_corpus_sections_never_panic() {
        let Some(sections) = sections() else {
            return;
        };
        // Truncations and byte flips of a spread of small sections.
        let small: Vec<&String> = sections
            .iter()
            .map(|(_, t)| t)
            .filter(|t| t.len() < 20_000)
            .collect();
        for text in small.iter().step_by((small.len() / 10).max(1)) {
            let text = text.as_str();
            let step = (text.len() / 97).max(1);
            for cut in (0..text.len()).step_by(step) {
                if text.is_char_boundary(cut) {
                    let _ = ObjectGraph::parse(&text[..cut]);
                    let mut s = text.to_string();
                    s.replace_range(
                        cut..text[cut..]
                            .chars()
                            .next()
                            .map_or(cut, |c| cut + c.len_utf8()),
                        "7",
                    );
                    if let Ok(g) = ObjectGraph::parse(&s) {
                        let _ = g.table();
                        for i in 0..g.b64ndarrays.len() {
                            let _ = g.tensor(i);
                        }
                    }
                }
            }
        }
    }
}
