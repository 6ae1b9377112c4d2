//! Building metadata sections the way TVM's printer does.
//!
//! [`ObjectGraphBuilder`] holds an in-memory object graph (objects are identified by the
//! [`ObjRef`] handle the builder returns, as TVM identifies them by address) and serialises it
//! with TVM's node numbering (`NodeIndexer` in `src/node/serialization.cc`). See the
//! [module documentation of `meta`](super) for the numbering rules and for what a Relay
//! constant turns into.
//!
//! [`constants_section`] builds, in one call, the whole section TVM prints for a module
//! whose only meta entries are constants.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::graph::{Node, ObjectGraph};
use super::ndarray::TensorData;
use super::schema::{self, FieldKind};
use super::table::NodeRef;
use super::MetaError;
use crate::dtype::DataType;

/// A handle to an object added to an [`ObjectGraphBuilder`]. Two handles are the same object
/// only if they are equal: adding the same content twice makes two objects (and two nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjRef(usize);

/// A handle to a tensor blob added to an [`ObjectGraphBuilder`]; blobs are shared only
/// through the same handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlobRef(usize);

/// The value of a reflected field.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A null object reference (written `"0"`).
    Null,
    /// An object reference.
    Obj(ObjRef),
    /// An `NDArray` (written as its blob index).
    Tensor(BlobRef),
    /// `int`, `int64_t` or an enum.
    Int(i64),
    /// `uint64_t`.
    UInt(u64),
    /// `bool` (written `1`/`0`).
    Bool(bool),
    /// `double` (written with 17 significant digits).
    Float(f64),
    /// `DataType` (written with [`DataType::to_tvm_string`]).
    DType(DataType),
    /// `std::string`; also any value whose text should be written verbatim.
    Str(String),
}

impl From<ObjRef> for Value {
    fn from(r: ObjRef) -> Self {
        Value::Obj(r)
    }
}

impl From<Option<ObjRef>> for Value {
    fn from(r: Option<ObjRef>) -> Self {
        r.map_or(Value::Null, Value::Obj)
    }
}

/// A key of a builder `Map`.
#[derive(Debug, Clone, PartialEq)]
enum Key {
    Str(String),
    Obj(Option<ObjRef>),
}

#[derive(Debug, Clone, PartialEq)]
enum Obj {
    Repr {
        type_key: String,
        bytes: Vec<u8>,
    },
    Array(Vec<Option<ObjRef>>),
    Map(Vec<(Key, Option<ObjRef>)>),
    Fields {
        type_key: String,
        fields: Vec<(String, Value)>,
    },
}

/// Builds an object graph and serialises it in TVM's node order.
#[derive(Debug, Clone, Default)]
pub struct ObjectGraphBuilder {
    objects: Vec<Obj>,
    blobs: Vec<String>,
    unconstrained: Option<ObjRef>,
    source_names: HashMap<String, ObjRef>,
}

/// TVM's `std::ostream << double` with `precision(17)`: C's `%.17g`.
pub fn format_double(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    const P: i32 = 17;
    let sci = format!("{:.*e}", (P - 1) as usize, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..P).contains(&exp) {
        let mut out = strip(mantissa);
        let _ = write!(
            out,
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        );
        out
    } else {
        strip(&format!("{:.*}", (P - 1 - exp) as usize, v))
    }
}

impl Value {
    fn to_attr(&self, index: &HashMap<ObjRef, usize>, blobs: &HashMap<BlobRef, usize>) -> String {
        match self {
            Value::Null => "0".to_string(),
            Value::Obj(r) => index.get(r).copied().unwrap_or(0).to_string(),
            Value::Tensor(b) => blobs.get(b).copied().unwrap_or(0).to_string(),
            Value::Int(i) => i.to_string(),
            Value::UInt(u) => u.to_string(),
            Value::Bool(b) => u8::from(*b).to_string(),
            Value::Float(f) => format_double(*f),
            Value::DType(d) => d.to_tvm_string(),
            Value::Str(s) => s.clone(),
        }
    }
}

/// One step of the node indexer's depth-first walk.
enum Step {
    /// `MakeIndex(obj)`.
    Visit(ObjRef),
    /// Visiting an `NDArray` field.
    Blob(BlobRef),
    /// The `pre_visit` of a `Let` reached through another `Let`'s body.
    LetPre(ObjRef),
}

/// `libstdc++`'s iteration order of a `std::unordered_map<String, …>` with fewer than 14
/// entries, inserted in `first_use` order: 13 buckets (`hash % 13` of TVM's
/// `String::StableHashBytes`); a key whose bucket is empty goes to the front of the list,
/// otherwise to the front of its bucket's run.
fn unordered_map_order<'a>(first_use: &[&'a str]) -> Vec<&'a str> {
    let mut list: Vec<(&'a str, u64)> = Vec::new();
    for &k in first_use {
        if list.iter().any(|(e, _)| *e == k) {
            continue;
        }
        let bucket = stable_hash_bytes(k.as_bytes()) % 13;
        let at = list.iter().position(|(_, b)| *b == bucket).unwrap_or(0);
        list.insert(at, (k, bucket));
    }
    list.into_iter().map(|(k, _)| k).collect()
}

/// TVM's `String::StableHashBytes` (little-endian machine).
pub fn stable_hash_bytes(data: &[u8]) -> u64 {
    const MULTIPLIER: u64 = 1_099_511_628_211;
    const MOD: u64 = 2_147_483_647;
    let mut result: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        result = result
            .wrapping_mul(MULTIPLIER)
            .wrapping_add(u64::from_le_bytes(a))
            % MOD;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut a = [0u8; 8];
        a[..rest.len()].copy_from_slice(rest);
        result = result
            .wrapping_mul(MULTIPLIER)
            .wrapping_add(u64::from_le_bytes(a))
            % MOD;
    }
    result
}

/// The order of the type keys in the root `Map` of the metadata section TVM prints, given
/// the keys in the order the printer first put an object of each type in the meta table
/// (`TextMetaDataContext::GetMetaNode`).
///
/// TVM collects them in a `std::unordered_map` and copies it into a `Map`, which keeps the
/// copy order while it has fewer than four entries. With one key there is nothing to
/// order; with two the later key always comes first; with three the order depends on the
/// keys' hashes, which this function reproduces. With four or more keys TVM's `Map` is a
/// hash table whose order this function does **not** reproduce (it returns the
/// `unordered_map` order).
pub fn tvm_meta_key_order<'a>(first_use: &[&'a str]) -> Vec<&'a str> {
    unordered_map_order(first_use)
}

impl ObjectGraphBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, o: Obj) -> ObjRef {
        self.objects.push(o);
        ObjRef(self.objects.len() - 1)
    }

    /// Adds a tensor blob.
    pub fn blob(&mut self, tensor: &TensorData) -> BlobRef {
        self.blob_b64(tensor.to_base64())
    }

    /// Adds a tensor blob from its `b64ndarrays` text.
    pub fn blob_b64(&mut self, text: String) -> BlobRef {
        self.blobs.push(text);
        BlobRef(self.blobs.len() - 1)
    }

    /// Adds an object whose reflected fields are `fields`, **in `VisitAttrs` order** (see
    /// [`super::schema::fields`]); the order decides the node numbering.
    pub fn object(&mut self, type_key: &str, fields: Vec<(&str, Value)>) -> ObjRef {
        self.push(Obj::Fields {
            type_key: type_key.to_string(),
            fields: fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        })
    }

    /// Adds an object with a compact representation (`Op`, `SourceName`, ...).
    pub fn repr_object(&mut self, type_key: &str, bytes: Vec<u8>) -> ObjRef {
        self.push(Obj::Repr {
            type_key: type_key.to_string(),
            bytes,
        })
    }

    /// Adds a new `runtime.String` (every call makes a distinct object, as every TVM
    /// `String` construction does).
    pub fn string(&mut self, s: &str) -> ObjRef {
        self.repr_object("runtime.String", s.as_bytes().to_vec())
    }

    /// Adds an `Array`.
    pub fn array(&mut self, items: Vec<Option<ObjRef>>) -> ObjRef {
        self.push(Obj::Array(items))
    }

    /// Adds a `Map<String, …>` (entries in iteration order).
    pub fn str_map(&mut self, entries: Vec<(&str, Option<ObjRef>)>) -> ObjRef {
        self.push(Obj::Map(
            entries
                .into_iter()
                .map(|(k, v)| (Key::Str(k.to_string()), v))
                .collect(),
        ))
    }

    /// Adds a `Map` with object keys (entries in iteration order). If every key is a
    /// `runtime.String` it is written as a string-keyed map, as TVM does.
    pub fn map(&mut self, entries: Vec<(Option<ObjRef>, Option<ObjRef>)>) -> ObjRef {
        self.push(Obj::Map(
            entries.into_iter().map(|(k, v)| (Key::Obj(k), v)).collect(),
        ))
    }

    /// The `VirtualDevice::FullyUnconstrained()` singleton: device type -1, id -1, no target,
    /// memory scope "" (one object per builder, shared by every user, as in TVM).
    pub fn virtual_device_unconstrained(&mut self) -> ObjRef {
        if let Some(r) = self.unconstrained {
            return r;
        }
        let r = self.virtual_device(-1, -1, None, "");
        self.unconstrained = Some(r);
        r
    }

    /// A new `VirtualDevice`.
    pub fn virtual_device(
        &mut self,
        device_type: i64,
        virtual_device_id: i64,
        target: Option<ObjRef>,
        memory_scope: &str,
    ) -> ObjRef {
        let scope = self.string(memory_scope);
        self.object(
            "VirtualDevice",
            vec![
                ("device_type_int", Value::Int(device_type)),
                ("virtual_device_id", Value::Int(virtual_device_id)),
                ("target", target.into()),
                ("memory_scope", Value::Obj(scope)),
            ],
        )
    }

    /// The `SourceName` for `name`; TVM interns these, so each name is one object.
    pub fn source_name(&mut self, name: &str) -> ObjRef {
        if let Some(&r) = self.source_names.get(name) {
            return r;
        }
        let r = self.repr_object("SourceName", name.as_bytes().to_vec());
        self.source_names.insert(name.to_string(), r);
        r
    }

    /// A new `Span`.
    pub fn span(
        &mut self,
        source_name: ObjRef,
        line: i64,
        column: i64,
        end_line: i64,
        end_column: i64,
    ) -> ObjRef {
        self.object(
            "Span",
            vec![
                ("source_name", Value::Obj(source_name)),
                ("line", Value::Int(line)),
                ("column", Value::Int(column)),
                ("end_line", Value::Int(end_line)),
                ("end_column", Value::Int(end_column)),
            ],
        )
    }

    /// A new `IntImm` without a span.
    pub fn int_imm(&mut self, dtype: DataType, value: i64) -> ObjRef {
        self.object(
            "IntImm",
            vec![
                ("dtype", Value::DType(dtype)),
                ("value", Value::Int(value)),
                ("span", Value::Null),
            ],
        )
    }

    /// A new `FloatImm` without a span.
    pub fn float_imm(&mut self, dtype: DataType, value: f64) -> ObjRef {
        self.object(
            "FloatImm",
            vec![
                ("dtype", Value::DType(dtype)),
                ("value", Value::Float(value)),
                ("span", Value::Null),
            ],
        )
    }

    /// A new `relay.TensorType` without a span over the given dimension objects.
    pub fn tensor_type(&mut self, shape: Vec<Option<ObjRef>>, dtype: DataType) -> ObjRef {
        let shape = self.array(shape);
        self.object(
            "relay.TensorType",
            vec![
                ("shape", Value::Obj(shape)),
                ("dtype", Value::DType(dtype)),
                ("span", Value::Null),
            ],
        )
    }

    /// The type `ConstantNode::tensor_type()` gives (what type inference assigns to a
    /// constant): a new `relay.TensorType` whose dimensions are new `int32` `IntImm`s.
    pub fn constant_tensor_type(&mut self, dtype: DataType, shape: &[i64]) -> ObjRef {
        let dims = shape
            .iter()
            .map(|&d| Some(self.int_imm(DataType::INT32, d)))
            .collect();
        self.tensor_type(dims, dtype)
    }

    /// A new `PrimType`.
    pub fn prim_type(&mut self, dtype: DataType) -> ObjRef {
        self.object("PrimType", vec![("dtype", Value::DType(dtype))])
    }

    /// A new `relay.Constant` on the unconstrained virtual device.
    pub fn constant(
        &mut self,
        data: BlobRef,
        span: Option<ObjRef>,
        checked_type: Option<ObjRef>,
    ) -> ObjRef {
        let vd = self.virtual_device_unconstrained();
        self.constant_on(data, vd, span, checked_type)
    }

    /// A new `relay.Constant` with an explicit virtual device.
    pub fn constant_on(
        &mut self,
        data: BlobRef,
        virtual_device: ObjRef,
        span: Option<ObjRef>,
        checked_type: Option<ObjRef>,
    ) -> ObjRef {
        self.object(
            "relay.Constant",
            vec![
                ("data", Value::Tensor(data)),
                ("virtual_device_", Value::Obj(virtual_device)),
                ("span", span.into()),
                ("_checked_type_", checked_type.into()),
            ],
        )
    }

    /// The root of a Relay metadata section: `entries` are (type key, objects) in the order
    /// the printer first used each type key; the keys are put in TVM's order
    /// ([`tvm_meta_key_order`]) and each list becomes a new `Array`.
    pub fn meta_table(&mut self, entries: Vec<(&str, Vec<ObjRef>)>) -> ObjRef {
        let keys: Vec<&str> = entries.iter().map(|(k, _)| *k).collect();
        let order = tvm_meta_key_order(&keys);
        let mut pairs = Vec::with_capacity(order.len());
        for key in order {
            let items = entries
                .iter()
                .rev()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.iter().copied().map(Some).collect())
                .unwrap_or_default();
            let array = self.array(items);
            pairs.push((key, Some(array)));
        }
        self.str_map(pairs)
    }

    /// Adds every node of a parsed graph as an object and returns, for each node index, its
    /// handle (`None` for null nodes); blobs are added in order. Sharing is kept: a node
    /// referenced twice becomes one object referenced twice. Fields are put in `VisitAttrs`
    /// order using [`super::schema`]; attributes the schema does not list are dropped (TVM's
    /// loader ignores them too), and numbers keep their text. Fails for a type with fields
    /// that the schema does not know, since their order (and which of them are references)
    /// is unknown.
    pub fn import_graph(&mut self, graph: &ObjectGraph) -> Result<Vec<Option<ObjRef>>, MetaError> {
        let blobs: Vec<BlobRef> = graph
            .b64ndarrays
            .iter()
            .map(|b| self.blob_b64(b.clone()))
            .collect();
        let base = self.objects.len();
        let handle = |i: usize| -> Option<ObjRef> {
            graph
                .nodes
                .get(i)
                .filter(|n| !n.is_null())
                .map(|_| ObjRef(base + i))
        };
        let err = |i: usize, message: String| MetaError::Invalid {
            node: Some(i),
            message,
        };
        let mut objects = Vec::with_capacity(graph.nodes.len());
        for (i, node) in graph.nodes.iter().enumerate() {
            let check = |d: usize| {
                if d < graph.nodes.len() {
                    Ok(handle(d))
                } else {
                    Err(err(i, format!("node index {d} is out of range")))
                }
            };
            let obj = if node.is_null() {
                Obj::Array(Vec::new())
            } else if node.is_array() {
                Obj::Array(
                    node.data
                        .iter()
                        .map(|&d| check(d))
                        .collect::<Result<_, _>>()?,
                )
            } else if node.is_map() {
                if node.keys.is_empty() {
                    let mut entries = Vec::new();
                    for kv in node.data.chunks(2) {
                        let k = check(kv[0])?;
                        let v = match kv.get(1) {
                            Some(&v) => check(v)?,
                            None => return Err(err(i, "odd Map data".to_string())),
                        };
                        entries.push((Key::Obj(k), v));
                    }
                    Obj::Map(entries)
                } else {
                    if node.keys.len() != node.data.len() {
                        return Err(err(i, "Map keys and values differ in number".to_string()));
                    }
                    let mut entries = Vec::new();
                    for (k, &d) in node.keys.iter().zip(&node.data) {
                        entries.push((Key::Str(k.clone()), check(d)?));
                    }
                    Obj::Map(entries)
                }
            } else if !node.repr_bytes.is_empty()
                || schema::REPR_TYPES.contains(&node.type_key.as_str())
            {
                Obj::Repr {
                    type_key: node.type_key.clone(),
                    bytes: node.repr_bytes.clone(),
                }
            } else {
                let fields = match schema::fields(&node.type_key) {
                    Some(f) => f,
                    None if node.attrs.is_empty() => &[],
                    None => {
                        return Err(err(
                            i,
                            format!("the fields of `{}` are not known", node.type_key),
                        ))
                    }
                };
                let mut out = Vec::with_capacity(fields.len());
                for &(name, kind) in fields {
                    let Some(text) = node.attrs.get(name) else {
                        return Err(err(i, format!("missing field `{name}`")));
                    };
                    let value = match kind {
                        FieldKind::Object => {
                            let d = super::graph::parse_index(text)
                                .ok_or_else(|| err(i, format!("bad field `{name}`")))?;
                            check(d)?.into()
                        }
                        FieldKind::NdArray => {
                            let b = super::graph::parse_index(text)
                                .and_then(|b| blobs.get(b).copied())
                                .ok_or_else(|| err(i, format!("bad field `{name}`")))?;
                            Value::Tensor(b)
                        }
                        _ => Value::Str(text.clone()),
                    };
                    out.push((name.to_string(), value));
                }
                Obj::Fields {
                    type_key: node.type_key.clone(),
                    fields: out,
                }
            };
            objects.push(obj);
        }
        self.objects.extend(objects);
        Ok((0..graph.nodes.len()).map(handle).collect())
    }

    fn type_key_of(&self, r: ObjRef) -> &str {
        match self.objects.get(r.0) {
            Some(Obj::Repr { type_key, .. } | Obj::Fields { type_key, .. }) => type_key,
            Some(Obj::Array(_)) => "Array",
            Some(Obj::Map(_)) => "Map",
            None => "",
        }
    }

    fn field(&self, r: ObjRef, name: &str) -> Option<ObjRef> {
        match self.objects.get(r.0) {
            Some(Obj::Fields { fields, .. }) => fields.iter().find_map(|(k, v)| match v {
                Value::Obj(o) if k == name => Some(*o),
                _ => None,
            }),
            _ => None,
        }
    }

    fn is_str_map(&self, entries: &[(Key, Option<ObjRef>)]) -> bool {
        entries.iter().all(|(k, _)| match k {
            Key::Str(_) => true,
            Key::Obj(Some(o)) => self.type_key_of(*o) == "runtime.String",
            Key::Obj(None) => false,
        })
    }

    /// The steps `pre_visit` of `ExpandANormalForm` takes for a `Let` (after indexing it):
    /// var, value, span, checked type, then the body (another `Let` is expanded in turn).
    fn let_steps(&self, r: ObjRef) -> Vec<Step> {
        let mut steps: Vec<Step> = ["var", "value", "span", "_checked_type_"]
            .iter()
            .filter_map(|f| self.field(r, f).map(Step::Visit))
            .collect();
        if let Some(body) = self.field(r, "body") {
            if self.type_key_of(body) == "relay.Let" {
                steps.push(Step::LetPre(body));
            } else {
                steps.push(Step::Visit(body));
            }
        }
        steps
    }

    fn children(&self, r: ObjRef) -> Vec<Step> {
        let Some(obj) = self.objects.get(r.0) else {
            return Vec::new();
        };
        match obj {
            Obj::Repr { .. } => Vec::new(),
            Obj::Array(items) => items.iter().flatten().map(|&o| Step::Visit(o)).collect(),
            Obj::Map(entries) => {
                if self.is_str_map(entries) {
                    entries
                        .iter()
                        .filter_map(|(_, v)| v.map(Step::Visit))
                        .collect()
                } else {
                    let mut out = Vec::new();
                    for (k, v) in entries {
                        if let Key::Obj(Some(k)) = k {
                            out.push(Step::Visit(*k));
                        }
                        if let Some(v) = v {
                            out.push(Step::Visit(*v));
                        }
                    }
                    out
                }
            }
            Obj::Fields { type_key, .. } if type_key == "relay.Let" => self.let_steps(r),
            Obj::Fields { fields, .. } => fields
                .iter()
                .filter_map(|(_, v)| match v {
                    Value::Obj(o) => Some(Step::Visit(*o)),
                    Value::Tensor(b) => Some(Step::Blob(*b)),
                    _ => None,
                })
                .collect(),
        }
    }

    /// Serialises the graph reachable from `root` as TVM's `SaveJSON` would: nodes numbered
    /// by the node indexer's depth-first pre-order (null is 0), blobs numbered in the order
    /// the walk first meets them, `tvm_version` 0.13.0.
    ///
    /// Where TVM would abort — a `relay.Let` whose `virtual_device_` the walk never reached
    /// (its expansion skips that field) — the missing objects are numbered after all others.
    pub fn build(&self, root: ObjRef) -> ObjectGraph {
        let mut index: HashMap<ObjRef, usize> = HashMap::new();
        let mut order: Vec<ObjRef> = Vec::new();
        let mut blob_index: HashMap<BlobRef, usize> = HashMap::new();
        let mut blob_order: Vec<BlobRef> = Vec::new();
        let mut stack = vec![Step::Visit(root)];
        loop {
            while let Some(step) = stack.pop() {
                let (r, children) = match step {
                    Step::Blob(b) => {
                        if let std::collections::hash_map::Entry::Vacant(e) = blob_index.entry(b) {
                            e.insert(blob_order.len());
                            blob_order.push(b);
                        }
                        continue;
                    }
                    // Already numbered, or a handle from another builder (ignored).
                    Step::Visit(r) if index.contains_key(&r) || r.0 >= self.objects.len() => {
                        continue
                    }
                    Step::LetPre(r) if r.0 >= self.objects.len() => continue,
                    Step::Visit(r) => (r, self.children(r)),
                    Step::LetPre(r) => (r, self.let_steps(r)),
                };
                if let std::collections::hash_map::Entry::Vacant(e) = index.entry(r) {
                    e.insert(order.len() + 1);
                    order.push(r);
                }
                stack.extend(children.into_iter().rev());
            }
            // Objects referenced by fields but never reached (only possible through `Let`).
            let missing = order.iter().find_map(|&r| match self.objects.get(r.0) {
                Some(Obj::Fields { fields, .. }) => fields.iter().find_map(|(_, v)| match v {
                    Value::Obj(o) if !index.contains_key(o) && o.0 < self.objects.len() => Some(*o),
                    _ => None,
                }),
                _ => None,
            });
            match missing {
                Some(o) => stack.push(Step::Visit(o)),
                None => break,
            }
        }

        let mut nodes = Vec::with_capacity(order.len() + 1);
        nodes.push(Node::null());
        for &r in &order {
            let mut node = Node::new(self.type_key_of(r));
            let Some(obj) = self.objects.get(r.0) else {
                continue;
            };
            match obj {
                Obj::Repr { bytes, .. } => node.repr_bytes = bytes.clone(),
                Obj::Array(items) => {
                    node.data = items
                        .iter()
                        .map(|o| o.and_then(|o| index.get(&o).copied()).unwrap_or(0))
                        .collect();
                }
                Obj::Map(entries) => {
                    let at =
                        |o: &Option<ObjRef>| o.and_then(|o| index.get(&o).copied()).unwrap_or(0);
                    if self.is_str_map(entries) {
                        for (k, v) in entries {
                            let key = match k {
                                Key::Str(s) => s.clone(),
                                Key::Obj(Some(o)) => match self.objects.get(o.0) {
                                    Some(Obj::Repr { bytes, .. }) => {
                                        String::from_utf8_lossy(bytes).into_owned()
                                    }
                                    _ => String::new(),
                                },
                                Key::Obj(None) => String::new(),
                            };
                            node.keys.push(key);
                            node.data.push(at(v));
                        }
                    } else {
                        for (k, v) in entries {
                            let k = match k {
                                Key::Obj(o) => *o,
                                Key::Str(_) => None,
                            };
                            node.data.push(at(&k));
                            node.data.push(at(v));
                        }
                    }
                }
                Obj::Fields { fields, .. } => {
                    for (name, value) in fields {
                        node.attrs
                            .insert(name.clone(), value.to_attr(&index, &blob_index));
                    }
                }
            }
            nodes.push(node);
        }
        ObjectGraph {
            root: index.get(&root).copied().unwrap_or(0),
            nodes,
            b64ndarrays: blob_order
                .iter()
                .map(|b| self.blobs.get(b.0).cloned().unwrap_or_default())
                .collect(),
            ..ObjectGraph::default()
        }
    }
}

/// The checked type of a constant, as type inference gives it: a tensor type whose
/// dimensions are `int32` `IntImm`s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorTypeSpec {
    /// Element type.
    pub dtype: DataType,
    /// Dimensions.
    pub shape: Vec<i64>,
}

impl TensorTypeSpec {
    /// The type `ConstantNode::tensor_type()` computes for `data`.
    pub fn of(data: &TensorData) -> TensorTypeSpec {
        TensorTypeSpec {
            dtype: data.dtype,
            shape: data.shape.clone(),
        }
    }
}

/// A source span (`Span` with its interned `SourceName`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanSpec {
    /// The source name (e.g. `from_string`).
    pub source_name: String,
    /// First line.
    pub line: i64,
    /// First column.
    pub column: i64,
    /// Last line.
    pub end_line: i64,
    /// Last column.
    pub end_column: i64,
}

/// A `relay.Constant` as the printer puts it in the meta table.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstantSpec {
    /// The value.
    pub data: TensorData,
    /// The checked type, if type inference has run on the constant.
    pub checked_type: Option<TensorTypeSpec>,
    /// The span, if any.
    pub span: Option<SpanSpec>,
}

impl ConstantSpec {
    /// Reads a `relay.Constant` node of a parsed section. Fails if the node is not a
    /// constant on the unconstrained virtual device, or its checked type is not a
    /// `relay.TensorType` with `int32` `IntImm` dimensions, or its span is not a plain `Span`.
    pub fn from_node(node: NodeRef<'_>) -> Result<ConstantSpec, MetaError> {
        let bad = |n: &NodeRef<'_>, what: &str| MetaError::Node {
            node: n.index(),
            message: format!("expected {what}, found `{}`", n.type_key()),
        };
        if node.type_key() != "relay.Constant" {
            return Err(bad(&node, "a relay.Constant"));
        }
        let data = node.tensor_field("data")?;
        let vd = node.field("virtual_device_")?;
        let unconstrained = vd.type_key() == "VirtualDevice"
            && vd.int_field("device_type_int")? == -1
            && vd.int_field("virtual_device_id")? == -1
            && vd.opt_field("target")?.is_none()
            && vd.field("memory_scope")?.as_str()?.is_empty();
        if !unconstrained {
            return Err(bad(&vd, "the unconstrained virtual device"));
        }
        let checked_type = match node.opt_field("_checked_type_")? {
            None => None,
            Some(t) if t.type_key() == "relay.TensorType" && t.opt_field("span")?.is_none() => {
                let mut shape = Vec::new();
                for d in t.field("shape")?.items()? {
                    if d.type_key() != "IntImm"
                        || d.dtype_field("dtype")? != DataType::INT32
                        || d.opt_field("span")?.is_some()
                    {
                        return Err(bad(&d, "an int32 IntImm without a span"));
                    }
                    shape.push(d.int_field("value")?);
                }
                Some(TensorTypeSpec {
                    dtype: t.dtype_field("dtype")?,
                    shape,
                })
            }
            Some(t) => return Err(bad(&t, "a relay.TensorType")),
        };
        let span = match node.opt_field("span")? {
            None => None,
            Some(s) if s.type_key() == "Span" => Some(SpanSpec {
                source_name: s.field("source_name")?.as_str()?.to_string(),
                line: s.int_field("line")?,
                column: s.int_field("column")?,
                end_line: s.int_field("end_line")?,
                end_column: s.int_field("end_column")?,
            }),
            Some(s) => return Err(bad(&s, "a Span")),
        };
        Ok(ConstantSpec {
            data,
            checked_type,
            span,
        })
    }
}

/// The whole metadata section TVM prints for a module whose meta table holds only these
/// constants (`meta[relay.Constant][0]`, `[1]`, … in this order), each with its own tensor,
/// the shared unconstrained virtual device, its own checked type and span objects, and
/// interned source names.
pub fn constants_section(constants: &[ConstantSpec]) -> ObjectGraph {
    let mut b = ObjectGraphBuilder::new();
    let mut items = Vec::with_capacity(constants.len());
    for c in constants {
        let blob = b.blob(&c.data);
        let span = c.span.as_ref().map(|s| {
            let name = b.source_name(&s.source_name);
            b.span(name, s.line, s.column, s.end_line, s.end_column)
        });
        let ty = c
            .checked_type
            .as_ref()
            .map(|t| b.constant_tensor_type(t.dtype, &t.shape));
        items.push(b.constant(blob, span, ty));
    }
    let root = b.meta_table(vec![("relay.Constant", items)]);
    b.build(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_like_printf() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (0.0625, "0.0625"),
            (0.1, "0.10000000000000001"),
            (1.5e-5, "1.5e-05"),
            (1e-4, "0.0001"),
            (1e16, "10000000000000000"),
            (1e17, "1e+17"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (1e300, "1.0000000000000001e+300"),
            (-2.5, "-2.5"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (5e-324, "4.9406564584124654e-324"),
        ];
        for &(v, s) in cases {
            assert_eq!(format_double(v), s, "{v:e}");
        }
    }

    #[test]
    fn stable_hash() {
        // Values worked out by hand from TVM's definition.
        assert_eq!(stable_hash_bytes(b""), 0);
        assert_eq!(stable_hash_bytes(b"a"), 97);
        assert_eq!(stable_hash_bytes(b"ab"), 97 + 98 * 256);
    }

    #[test]
    fn two_keys_come_out_reversed() {
        for (a, b) in [
            ("relay.Var", "relay.Constant"),
            ("relay.Constant", "relay.attrs.DensePackAttrs"),
            ("tir.SizeVar", "tir.Mul"),
            ("VirtualDevice", "relay.Constant"),
        ] {
            assert_eq!(tvm_meta_key_order(&[a, b]), vec![b, a]);
        }
        assert_eq!(tvm_meta_key_order(&["x"]), vec!["x"]);
    }

    #[test]
    fn dfs_numbering_and_sharing() {
        let mut b = ObjectGraphBuilder::new();
        let t = TensorData::from_f64s(DataType::FLOAT32, vec![2], &[1.0, 2.0]).unwrap();
        let blob = b.blob(&t);
        let ty = b.constant_tensor_type(DataType::FLOAT32, &[2]);
        let c0 = b.constant(blob, None, Some(ty));
        let c1 = b.constant(blob, None, None);
        let root = b.meta_table(vec![("relay.Constant", vec![c0, c1, c0])]);
        let g = b.build(root);
        let keys: Vec<&str> = g.nodes.iter().map(|n| n.type_key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "",
                "Map",
                "Array",
                "relay.Constant",
                "VirtualDevice",
                "runtime.String",
                "relay.TensorType",
                "Array",
                "IntImm",
                "relay.Constant",
            ]
        );
        assert_eq!(g.nodes[2].data, vec![3, 9, 3]);
        assert_eq!(g.nodes[9].attrs["virtual_device_"], "4");
        assert_eq!(g.nodes[9].attrs["data"], "0");
        assert_eq!(g.b64ndarrays.len(), 1);
        assert_eq!(g.nodes[8].attrs["dtype"], "int32");
        g.validate().unwrap();
        assert_eq!(ObjectGraph::parse(&g.to_json()).unwrap(), g);
    }

    #[test]
    fn let_chains_follow_the_anf_expansion() {
        let mut b = ObjectGraphBuilder::new();
        let vd = b.virtual_device_unconstrained();
        let mk_var = |b: &mut ObjectGraphBuilder, name: &str| {
            let n = b.string(name);
            let id = b.object("relay.Id", vec![("name_hint", Value::Obj(n))]);
            b.object(
                "relay.Var",
                vec![
                    ("vid", Value::Obj(id)),
                    ("type_annotation", Value::Null),
                    ("virtual_device_", Value::Obj(vd)),
                    ("span", Value::Null),
                    ("_checked_type_", Value::Null),
                ],
            )
        };
        let x = mk_var(&mut b, "x");
        let y = mk_var(&mut b, "y");
        let mk_let = |b: &mut ObjectGraphBuilder, var, value, body| {
            b.object(
                "relay.Let",
                vec![
                    ("var", Value::Obj(var)),
                    ("value", Value::Obj(value)),
                    ("body", Value::Obj(body)),
                    ("virtual_device_", Value::Obj(vd)),
                    ("span", Value::Null),
                    ("_checked_type_", Value::Null),
                ],
            )
        };
        let inner = mk_let(&mut b, y, x, y);
        let outer = mk_let(&mut b, x, x, inner);
        let g = b.build(outer);
        let keys: Vec<&str> = g.nodes.iter().map(|n| n.type_key.as_str()).collect();
        // outer, x (its Id, String, VirtualDevice, String), inner, y (Id, String).
        assert_eq!(
            keys,
            [
                "",
                "relay.Let",
                "relay.Var",
                "relay.Id",
                "runtime.String",
                "VirtualDevice",
                "runtime.String",
                "relay.Let",
                "relay.Var",
                "relay.Id",
                "runtime.String",
            ]
        );
        g.validate().unwrap();
    }

    #[test]
    fn foreign_handles_do_not_panic() {
        let mut a = ObjectGraphBuilder::new();
        for _ in 0..5 {
            a.prim_type(DataType::FLOAT32);
        }
        let foreign = a.prim_type(DataType::FLOAT32);
        let mut b = ObjectGraphBuilder::new();
        let arr = b.array(vec![Some(foreign)]);
        let g = b.build(arr);
        assert_eq!(g.nodes.len(), 2);
        assert_eq!(g.nodes[1].data, vec![0]);
        assert_eq!(b.build(foreign).root, 0);
    }

    #[test]
    fn maps_with_string_object_keys_are_string_maps() {
        let mut b = ObjectGraphBuilder::new();
        let k = b.string("key");
        let v = b.int_imm(DataType::INT64, 7);
        let m = b.map(vec![(Some(k), Some(v))]);
        let g = b.build(m);
        assert_eq!(g.nodes[1].keys, vec!["key".to_string()]);
        assert_eq!(g.nodes[1].data, vec![2]);
        assert_eq!(g.nodes.len(), 3);
        let mut b = ObjectGraphBuilder::new();
        let k = b.int_imm(DataType::INT64, 1);
        let v = b.string("v");
        let m = b.map(vec![(Some(k), Some(v))]);
        let g = b.build(m);
        assert!(g.nodes[1].keys.is_empty());
        assert_eq!(g.nodes[1].data, vec![2, 3]);
    }
}
