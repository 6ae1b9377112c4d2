//! TVM v0.13's `StructuralHash` of Relay expressions, value for value, so
//! that names TVM derives from it (`LambdaLift`'s `@lifted_nameN`) are ours
//! too.
//!
//! TVM hashes an object as its type key's hash (libstdc++'s
//! `std::hash<std::string>`) combined with the hashes of the values its
//! `SHashReduce` reports, last reported first. Graph nodes (variables,
//! calls, functions, lets, ifs, matches, references, non-empty tuples) also
//! combine a counter of the graph nodes finished so far, so a shared node
//! differs from two copies of it; every object's hash is memoised by
//! identity, so a shared node counts once. Variables a function or `let`
//! defines hash by the order they are met (a counter); the spans, checked
//! types, names of local variables and virtual devices are not hashed.
//!
//! What TVM hashes by a memory address we cannot reproduce: a free local
//! variable, a global variable or a type variable met while
//! `map_free_vars` is off (e.g. the variables a lifted closure captures).
//! We hash those by a separate counter in the order they are met, which is
//! deterministic, and document the difference where names come from it.
//! Objects the IR keeps opaque (metadata objects, computed symbolic sizes)
//! make the hash fail with [`Unhashable`].
//!
//! The walk keeps its own stacks, as TVM's does, so deep expressions cannot
//! overflow the call stack.

mod primitives;
#[cfg(test)]
mod tests;

pub use primitives::{
    c_int_value, data_type_value, fold_children, hash_combine, stable_hash_bytes, std_string_hash,
    string_object_hash, type_key_hash,
};

use crate::metadata::TensorData;
use crate::op::AttrType;
use crate::{
    AttrValue, Attrs, Clause, Constructor, DictAttrs, Dim, Expr, ExprKind, Pattern, Type, TypeKind,
    TypeVar, TypeVarKind, VarId,
};
use std::collections::HashMap;
use std::fmt;

/// A part of an expression whose TVM hash we cannot compute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unhashable {
    /// What it is, e.g. `the metadata object meta[tir.Var][0]`.
    pub what: String,
}

impl fmt::Display for Unhashable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TVM's structural hash of {} is not reproduced",
            self.what
        )
    }
}

impl std::error::Error for Unhashable {}

/// `tvm::StructuralHash` with `map_free_vars` (TVM's
/// `node.StructuralHash(expr, map_free_vars)`); `StructuralHash()(expr)` is
/// `map_free_vars = false`.
pub fn structural_hash(expr: &Expr, map_free_vars: bool) -> Result<u64, Unhashable> {
    Hasher::default().run(Item::Expr(expr, map_free_vars))
}

/// Identity of a memoised object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum MemoKey {
    Node(usize),
    Var(VarId),
    Id(VarId),
    TypeVar(u64),
    Global(String),
    GlobalType(String),
    Constructor(usize),
}

/// One value or object to hash; the flag is the reducer's `map_free_vars`.
enum Item<'a> {
    Value(u64),
    Expr(&'a Expr, bool),
    Type(&'a Type, bool),
    TypeVar(&'a TypeVar, bool),
    /// An `Array` object of these elements.
    Array(Vec<Item<'a>>),
    Id(VarId, bool),
    /// The free-variable value of the object being hashed.
    FreeVar(bool),
    GlobalVar(&'a str, bool),
    GlobalTypeVar(&'a str, bool),
    Attrs(&'a Attrs, bool),
    Dict(&'a DictAttrs, bool),
    /// A `Map<String, ObjectRef>`.
    Map(Vec<(&'a str, &'a AttrValue)>, bool),
    /// An attribute value that is an object (`ObjectRef` field, map value,
    /// array element).
    Object(&'a AttrValue, bool),
    Clause(&'a Clause, bool),
    Pattern(&'a Pattern, bool),
    Constructor(&'a Constructor, bool),
}

/// What visiting an item gives: a finished value, or an object whose
/// children are still to hash.
enum Expansion<'a> {
    Done(u64),
    /// The item is hashed as this other item (e.g. a type that is a type
    /// variable, an attribute value that is an expression).
    Forward(Item<'a>),
    Object {
        seed: u64,
        graph: bool,
        children: Vec<Item<'a>>,
    },
}

enum Frame<'a> {
    Visit(Item<'a>),
    Finish {
        seed: u64,
        graph: bool,
        start: usize,
        memo: Option<MemoKey>,
    },
}

#[derive(Default)]
struct Hasher {
    free_var_counter: u64,
    unmapped_counter: u64,
    graph_node_counter: u64,
    memo: HashMap<MemoKey, u64>,
}

impl Hasher {
    fn run(mut self, root: Item<'_>) -> Result<u64, Unhashable> {
        let mut frames = vec![Frame::Visit(root)];
        let mut results: Vec<u64> = Vec::new();
        while let Some(frame) = frames.pop() {
            match frame {
                Frame::Visit(item) => {
                    let key = memo_key(&item);
                    if let Some(hash) = key.as_ref().and_then(|key| self.memo.get(key)) {
                        results.push(*hash);
                        continue;
                    }
                    match self.expand(item)? {
                        Expansion::Done(hash) => results.push(hash),
                        Expansion::Forward(item) => frames.push(Frame::Visit(item)),
                        Expansion::Object {
                            seed,
                            graph,
                            children,
                        } => {
                            frames.push(Frame::Finish {
                                seed,
                                graph,
                                start: results.len(),
                                memo: key,
                            });
                            frames.extend(children.into_iter().rev().map(Frame::Visit));
                        }
                    }
                }
                Frame::Finish {
                    seed,
                    graph,
                    start,
                    memo,
                } => {
                    let mut hash = results[start..]
                        .iter()
                        .rev()
                        .fold(seed, |hash, &child| hash_combine(hash, child));
                    results.truncate(start);
                    if graph {
                        hash = hash_combine(hash, self.graph_node_counter);
                        self.graph_node_counter += 1;
                    }
                    if let Some(key) = memo {
                        self.memo.insert(key, hash);
                    }
                    results.push(hash);
                }
            }
        }
        Ok(results.pop().expect("the root's hash"))
    }

    /// A variable that is not (yet) defined: by occurrence when mapping free
    /// variables, as TVM does; otherwise TVM uses its address, for which we
    /// substitute a separate occurrence counter.
    fn free_var_value(&mut self, map_free_vars: bool) -> u64 {
        if map_free_vars {
            self.free_var_counter += 1;
            self.free_var_counter - 1
        } else {
            self.unmapped_counter += 1;
            hash_combine(
                type_key_hash("unmapped free variable"),
                self.unmapped_counter,
            )
        }
    }

    fn expand<'a>(&mut self, item: Item<'a>) -> Result<Expansion<'a>, Unhashable> {
        Ok(match item {
            Item::Value(value) => Expansion::Done(value),
            Item::Expr(expr, map) => expand_expr(expr, map)?,
            Item::Type(ty, map) => expand_type(ty, map)?,
            Item::FreeVar(map) => Expansion::Done(self.free_var_value(map)),
            Item::TypeVar(var, map) => object(
                "TypeVar",
                false,
                vec![
                    Item::Value(type_var_kind_value(var.kind())),
                    Item::FreeVar(map),
                ],
            ),
            Item::GlobalVar(name, map) => object(
                "GlobalVar",
                false,
                vec![Item::Value(string_object_hash(name)), Item::FreeVar(map)],
            ),
            Item::GlobalTypeVar(name, map) => object(
                "GlobalTypeVar",
                false,
                vec![Item::Value(string_object_hash(name)), Item::FreeVar(map)],
            ),
            Item::Id(_, map) => object("relay.Id", false, vec![Item::FreeVar(map)]),
            Item::Array(elements) => {
                let mut children = Vec::with_capacity(elements.len() + 1);
                children.push(Item::Value(elements.len() as u64));
                children.extend(elements);
                object("Array", false, children)
            }
            Item::Attrs(attrs, map) => object(attrs.type_key(), false, attrs_fields(attrs, map)?),
            Item::Dict(dict, map) => {
                let entries = dict.entries().iter().map(|(k, v)| (k.as_str(), v));
                object("DictAttrs", false, vec![Item::Map(entries.collect(), map)])
            }
            Item::Map(mut entries, map) => {
                // A map with string keys hashes its entries in key order.
                entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                let mut children = vec![Item::Value(entries.len() as u64)];
                for (key, value) in entries {
                    children.push(Item::Value(string_object_hash(key)));
                    children.push(Item::Object(value, map));
                }
                object("Map", false, children)
            }
            Item::Object(value, map) => attr_object(value, map)?,
            Item::Clause(clause, map) => object(
                "relay.Clause",
                false,
                vec![
                    Item::Pattern(&clause.pattern, map),
                    Item::Expr(&clause.rhs, map),
                ],
            ),
            Item::Pattern(pattern, map) => match pattern {
                Pattern::Wildcard => Expansion::Done(type_key_hash("relay.PatternWildcard")),
                Pattern::Var(var) => object(
                    "relay.PatternVar",
                    false,
                    vec![Item::Expr(var.expr(), true)],
                ),
                Pattern::Constructor(constructor, patterns) => object(
                    "relay.PatternConstructor",
                    false,
                    vec![
                        Item::Constructor(constructor, map),
                        Item::Array(patterns.iter().map(|p| Item::Pattern(p, map)).collect()),
                    ],
                ),
                Pattern::Tuple(patterns) => object(
                    "relay.PatternTuple",
                    false,
                    vec![Item::Array(
                        patterns.iter().map(|p| Item::Pattern(p, map)).collect(),
                    )],
                ),
            },
            Item::Constructor(constructor, map) => object(
                "relay.Constructor",
                false,
                vec![
                    Item::Value(string_object_hash(constructor.name())),
                    Item::Array(
                        constructor
                            .data()
                            .inputs
                            .iter()
                            .map(|ty| Item::Type(ty, map))
                            .collect(),
                    ),
                ],
            ),
        })
    }
}

/// An object of type `type_key` whose children are still to hash.
fn object<'a>(type_key: &str, graph: bool, children: Vec<Item<'a>>) -> Expansion<'a> {
    Expansion::Object {
        seed: type_key_hash(type_key),
        graph,
        children,
    }
}

fn memo_key(item: &Item<'_>) -> Option<MemoKey> {
    match item {
        Item::Expr(expr, _) => match expr.kind() {
            ExprKind::Var(data) => Some(MemoKey::Var(data.id)),
            // Forwarded to their own items, which have the keys.
            ExprKind::GlobalVar(_) | ExprKind::Constructor(_) => None,
            _ => Some(MemoKey::Node(expr.addr())),
        },
        Item::Id(id, _) => Some(MemoKey::Id(*id)),
        Item::TypeVar(var, _) => Some(MemoKey::TypeVar(var.id())),
        Item::GlobalVar(name, _) => Some(MemoKey::Global(name.to_string())),
        Item::GlobalTypeVar(name, _) => Some(MemoKey::GlobalType(name.to_string())),
        Item::Constructor(constructor, _) => {
            Some(MemoKey::Constructor(constructor.data() as *const _ as usize))
        }
        _ => None,
    }
}

fn expand_expr<'a>(expr: &'a Expr, map: bool) -> Result<Expansion<'a>, Unhashable> {
    let exprs = |items: &'a [Expr]| Item::Array(items.iter().map(|e| Item::Expr(e, map)).collect());
    Ok(match expr.kind() {
        ExprKind::Var(data) => object(
            "relay.Var",
            true,
            vec![
                data.type_annotation
                    .as_ref()
                    .map_or(Item::Value(0), |ty| Item::Type(ty, map)),
                Item::Id(data.id, map),
            ],
        ),
        ExprKind::GlobalVar(global) => Expansion::Forward(Item::GlobalVar(global.name(), map)),
        ExprKind::Constant(data) => {
            Expansion::Done(fold_children("relay.Constant", &[ndarray_hash(data)]))
        }
        ExprKind::Tuple(fields) if fields.is_empty() => {
            Expansion::Done(type_key_hash("relay.Tuple"))
        }
        ExprKind::Tuple(fields) => object("relay.Tuple", true, vec![exprs(fields)]),
        ExprKind::TupleGetItem { tuple, index } => object(
            "relay.TupleGetItem",
            false,
            vec![
                Item::Expr(tuple, map),
                Item::Value(c_int_value(*index as i64)),
            ],
        ),
        ExprKind::Call(call) => {
            let mut children = vec![
                Item::Expr(&call.callee, map),
                exprs(&call.args),
                call.attrs
                    .as_ref()
                    .map_or(Item::Value(0), |attrs| Item::Attrs(attrs, map)),
            ];
            // TVM skips the type arguments of a call to a primitive operator
            // (one with a type relation).
            let primitive = call.callee.as_op().is_some_and(|op| op.type_rel.is_some());
            if !primitive {
                children.push(Item::Array(
                    call.type_args
                        .iter()
                        .map(|ty| Item::Type(ty, map))
                        .collect(),
                ));
            }
            object("relay.Call", true, children)
        }
        ExprKind::Let { var, value, body } => object(
            "relay.Let",
            true,
            vec![
                Item::Expr(var.expr(), true),
                Item::Expr(value, map),
                Item::Expr(body, map),
            ],
        ),
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => object(
            "relay.If",
            true,
            vec![
                Item::Expr(cond, map),
                Item::Expr(then_branch, map),
                Item::Expr(else_branch, map),
            ],
        ),
        ExprKind::Function(function) => object(
            "relay.Function",
            true,
            vec![
                Item::Array(
                    function
                        .params
                        .iter()
                        .map(|param| Item::Expr(param.expr(), true))
                        .collect(),
                ),
                Item::Array(
                    function
                        .type_params
                        .iter()
                        .map(|var| Item::TypeVar(var, true))
                        .collect(),
                ),
                function
                    .ret_type
                    .as_ref()
                    .map_or(Item::Value(0), |ty| Item::Type(ty, map)),
                // TVM's parser leaves a function without attributes with
                // null attrs, which hash as 0.
                if function.attrs.is_empty() {
                    Item::Value(0)
                } else {
                    Item::Dict(&function.attrs, map)
                },
                Item::Expr(&function.body, map),
            ],
        ),
        ExprKind::Match {
            data,
            clauses,
            complete,
        } => object(
            "relay.Match",
            true,
            vec![
                Item::Expr(data, map),
                Item::Array(clauses.iter().map(|c| Item::Clause(c, map)).collect()),
                Item::Value(u64::from(*complete)),
            ],
        ),
        ExprKind::RefCreate(value) => object("relay.RefCreate", true, vec![Item::Expr(value, map)]),
        ExprKind::RefRead(reference) => {
            object("relay.RefRead", true, vec![Item::Expr(reference, map)])
        }
        ExprKind::RefWrite { reference, value } => object(
            "relay.RefWrite",
            true,
            vec![Item::Expr(reference, map), Item::Expr(value, map)],
        ),
        ExprKind::Constructor(constructor) => {
            Expansion::Forward(Item::Constructor(constructor, map))
        }
        ExprKind::Op(op) => Expansion::Done(fold_children("Op", &[string_object_hash(&op.name)])),
    })
}

fn expand_type<'a>(ty: &'a Type, map: bool) -> Result<Expansion<'a>, Unhashable> {
    let types = |items: &'a [Type]| Item::Array(items.iter().map(|t| Item::Type(t, map)).collect());
    Ok(match ty.kind() {
        TypeKind::Tensor(tensor) => {
            let mut shape = vec![tensor.shape.len() as u64];
            for dim in &tensor.shape {
                shape.push(dim_hash(dim)?);
            }
            Expansion::Done(fold_children(
                "relay.TensorType",
                &[
                    fold_children("Array", &shape),
                    data_type_value(tensor.dtype),
                ],
            ))
        }
        TypeKind::Tuple(fields) => object("TupleType", false, vec![types(fields)]),
        TypeKind::Func(func) => object(
            "FuncType",
            false,
            vec![
                Item::Array(
                    func.type_params
                        .iter()
                        .map(|var| Item::TypeVar(var, true))
                        .collect(),
                ),
                types(&func.params),
                Item::Type(&func.ret, map),
                Item::Array(Vec::new()),
            ],
        ),
        TypeKind::Var(var) => Expansion::Forward(Item::TypeVar(var, map)),
        TypeKind::GlobalVar(global) => Expansion::Forward(Item::GlobalTypeVar(global.name(), map)),
        TypeKind::Call { func, args } => {
            object("TypeCall", false, vec![Item::Type(func, map), types(args)])
        }
        TypeKind::Ref(value) => object("relay.RefType", false, vec![Item::Type(value, map)]),
        TypeKind::Incomplete(_) => Expansion::Done(fold_children("IncompleteType", &[0])),
    })
}

/// TVM's `TypeKind` enum values.
fn type_var_kind_value(kind: TypeVarKind) -> u64 {
    match kind {
        TypeVarKind::Type => 0,
        TypeVarKind::ShapeVar => 1,
        TypeVarKind::Constraint => 4,
        TypeVarKind::AdtHandle => 5,
        TypeVarKind::TypeData => 6,
    }
}

/// A shape dimension: an `IntImm` (dtype, then value) or `tir.Any`.
fn dim_hash(dim: &Dim) -> Result<u64, Unhashable> {
    match dim {
        Dim::Int { value, dtype, .. } => Ok(fold_children(
            "IntImm",
            &[data_type_value(*dtype), *value as u64],
        )),
        Dim::Any => Ok(type_key_hash("tir.Any")),
        Dim::Meta(meta) => Err(Unhashable {
            what: format!("the metadata dimension meta[{}]", meta.type_key()),
        }),
        Dim::Expr(_) => Err(Unhashable {
            what: "a computed symbolic dimension".to_string(),
        }),
    }
}

/// A constant's `NDArray`: dtype, rank, each extent, then the data bytes.
fn ndarray_hash(data: &TensorData) -> u64 {
    let mut children = vec![
        data_type_value(data.dtype),
        c_int_value(data.shape.len() as i64),
    ];
    children.extend(data.shape.iter().map(|&extent| extent as u64));
    children.push(stable_hash_bytes(&data.data));
    fold_children("runtime.NDArray", &children)
}

/// The fields of a call's attrs object in declaration order, each hashed as
/// its C++ type hashes (a plain `int` by its 32 bits, a `std::string` by its
/// bytes, objects as objects).
fn attrs_fields(attrs: &Attrs, map: bool) -> Result<Vec<Item<'_>>, Unhashable> {
    let schema = crate::op::attrs_schema(attrs.type_key());
    let mut children = Vec::with_capacity(attrs.fields().len());
    for (name, value) in attrs.fields() {
        let ty = schema
            .and_then(|schema| schema.field(name))
            .map(|field| &field.ty);
        let mismatch = || Unhashable {
            what: format!("the attribute {name}={value:?} of {}", attrs.type_key()),
        };
        children.push(match ty {
            Some(AttrType::Int) => Item::Value(c_int_value(value.as_int().ok_or_else(mismatch)?)),
            Some(AttrType::UInt64) => Item::Value(value.as_int().ok_or_else(mismatch)? as u64),
            Some(AttrType::Double) => Item::Value(value.as_f64().ok_or_else(mismatch)?.to_bits()),
            Some(AttrType::Bool) => Item::Value(value.as_int().ok_or_else(mismatch)? as u64),
            Some(AttrType::StdString) => Item::Value(stable_hash_bytes(
                value.as_str().ok_or_else(mismatch)?.as_bytes(),
            )),
            Some(AttrType::DataType) => match value {
                AttrValue::DataType(dtype) => Item::Value(data_type_value(*dtype)),
                _ => return Err(mismatch()),
            },
            _ => Item::Object(value, map),
        });
    }
    Ok(children)
}

/// An attribute value in an object position.
fn attr_object(value: &AttrValue, map: bool) -> Result<Expansion<'_>, Unhashable> {
    let int_imm =
        |dtype, value: i64| fold_children("IntImm", &[data_type_value(dtype), value as u64]);
    Ok(match value {
        AttrValue::Null => Expansion::Done(0),
        AttrValue::Int(v) => Expansion::Done(int_imm(crate::dtype::DataType::INT32, *v)),
        AttrValue::Bool(b) => Expansion::Done(int_imm(
            crate::dtype::DataType::new(crate::dtype::TypeCode::UInt, 1, 1),
            *b as i64,
        )),
        AttrValue::Double(v) => Expansion::Done(fold_children(
            "FloatImm",
            &[
                data_type_value(crate::dtype::DataType::float(64)),
                v.to_bits(),
            ],
        )),
        AttrValue::Str(text) => Expansion::Done(string_object_hash(text)),
        AttrValue::DataType(dtype) => Expansion::Done(data_type_value(*dtype)),
        AttrValue::IntImm { value, dtype, .. } => Expansion::Done(int_imm(*dtype, *value)),
        AttrValue::FloatImm { value, dtype } => Expansion::Done(fold_children(
            "FloatImm",
            &[data_type_value(*dtype), value.to_bits()],
        )),
        AttrValue::Array(items) => Expansion::Forward(Item::Array(
            items.iter().map(|item| Item::Object(item, map)).collect(),
        )),
        AttrValue::Map(entries) => Expansion::Forward(Item::Map(
            entries.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            map,
        )),
        AttrValue::Any => Expansion::Done(type_key_hash("tir.Any")),
        AttrValue::Expr(expr) => Expansion::Forward(Item::Expr(expr, map)),
        AttrValue::Meta(meta) => {
            return Err(Unhashable {
                what: format!("the metadata object meta[{}]", meta.type_key()),
            })
        }
    })
}
