//! The printer's meta table (`TextMetaDataContext` in
//! `src/relay/printer/meta_data.h`) and the `#[metadata]` section it turns
//! into.
//!
//! Every object the text cannot spell is printed as `meta[KEY][k]`: `k`
//! counts the objects of type `KEY` in the order the printer first meets
//! them, and one object met twice (by identity) is one entry. At the end the
//! entries are serialised with [`ObjectGraphBuilder`], which numbers nodes
//! exactly as TVM's `SaveJSON` does (see [`crate::metadata`]).

use crate::dtype::DataType;
use crate::metadata::{
    BlobRef, NodeRef, ObjRef, ObjectGraph, ObjectGraphBuilder, TensorData, Value,
};
use crate::op::AttrType;
use crate::{
    AttrValue, Attrs, Dim, DimExpr, DimId, Expr, ExprKind, MetaObject, Type, TypeKind, TypeVarKind,
    IF_THEN_ELSE_OP,
};
use std::collections::HashMap;
use std::sync::Arc;

/// An object in the meta table.
#[derive(Debug, Clone)]
pub(crate) enum MetaItem {
    /// A constant of our IR, serialised from its value and checked type.
    Constant(Expr),
    /// An object read from a metadata section, written back as it was.
    Object(MetaObject),
    /// A constant read from a metadata section through a `meta[…]`
    /// reference: TVM's parser wrote the reference's span onto the object
    /// and type inference copied it with its checked type, so it is written
    /// as a new constant with the section's tensor and virtual device, that
    /// span (`[line, column, end_line, end_column]` in the source TVM
    /// would have named `source`) and the checked type.
    Reparsed {
        origin: MetaObject,
        expr: Expr,
        span: [i64; 4],
        source: &'static str,
    },
    /// A type the text cannot spell (an incomplete type).
    Type(Type),
    /// A call attrs object whose type is not the operator's.
    Attrs(Attrs),
    /// An attribute value the text cannot spell (a map, a global, an
    /// expression).
    Value(AttrValue),
    /// A dimension computed by type inference (`meta[tir.Mul][k]`).
    Dim(Dim),
}

/// The identity of a meta table entry: TVM memoises on object addresses.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum MetaKey {
    Expr(usize),
    Object(usize, usize),
    Type(usize),
    Attrs(usize),
    /// A value without identity of its own: the address of the `AttrValue`
    /// in the IR.
    Value(usize),
    /// A computed dimension, by the address of its expression node.
    Dim(usize),
}

impl MetaKey {
    pub(crate) fn object(m: &MetaObject) -> MetaKey {
        MetaKey::Object(Arc::as_ptr(&m.graph) as usize, m.index)
    }

    pub(crate) fn dim_expr(e: &Arc<DimExpr>) -> MetaKey {
        MetaKey::Dim(Arc::as_ptr(e) as usize)
    }
}

#[derive(Debug, Default)]
pub(crate) struct MetaContext {
    /// Type keys in first-use order, each with its objects.
    entries: Vec<(String, Vec<MetaItem>)>,
    memo: HashMap<MetaKey, String>,
}

impl MetaContext {
    /// `GetMetaNode`: the `meta[KEY][k]` text of an object, adding it to the
    /// table the first time.
    pub(crate) fn node(
        &mut self,
        key: MetaKey,
        type_key: &str,
        item: impl FnOnce() -> MetaItem,
    ) -> String {
        if let Some(text) = self.memo.get(&key) {
            return text.clone();
        }
        let list = match self.entries.iter().position(|(k, _)| k == type_key) {
            Some(i) => &mut self.entries[i].1,
            None => {
                self.entries.push((type_key.to_string(), Vec::new()));
                &mut self.entries.last_mut().expect("just pushed").1
            }
        };
        let text = format!("meta[{type_key}][{}]", list.len());
        list.push(item());
        self.memo.insert(key, text.clone());
        text
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The JSON of the `#[metadata]` section, as TVM's `SaveJSON` writes it.
    pub(crate) fn section(&self) -> String {
        let mut w = Writer::default();
        let mut lists = Vec::with_capacity(self.entries.len());
        for (key, items) in &self.entries {
            let refs: Vec<ObjRef> = items.iter().filter_map(|item| w.item(item)).collect();
            lists.push((key.as_str(), refs));
        }
        let root = w.b.meta_table(lists);
        w.b.build(root).to_json()
    }
}

/// Turns IR values into builder objects, keeping sharing by identity.
#[derive(Default)]
struct Writer {
    b: ObjectGraphBuilder,
    /// Imported metadata graphs (equal graphs are imported once, so objects
    /// that two readers of one file share stay shared).
    imports: Vec<(Arc<ObjectGraph>, Vec<Option<ObjRef>>)>,
    types: HashMap<usize, ObjRef>,
    type_vars: HashMap<u64, ObjRef>,
    blobs: HashMap<usize, BlobRef>,
    exprs: HashMap<usize, ObjRef>,
    /// `IntImm` objects by identity: a dimension shared by several types
    /// (or taken from an attribute) is one node, as in TVM.
    int_imms: HashMap<DimId, ObjRef>,
    /// Computed dimension expressions, by node address.
    dim_exprs: HashMap<usize, ObjRef>,
    /// How deep inside a computed expression the writer is, and the
    /// `tir.Any` node of the outermost one: an expression a relation builds
    /// from one unknown size (`? + if_then_else(? % 4 != 0, …)`) refers to
    /// that size's one object in TVM, so its `?`s share one node there.
    expr_depth: usize,
    expr_any: Option<ObjRef>,
}

impl Writer {
    fn item(&mut self, item: &MetaItem) -> Option<ObjRef> {
        match item {
            MetaItem::Constant(e) => self.expr(e),
            MetaItem::Object(m) => self.import(m),
            MetaItem::Reparsed {
                origin,
                expr,
                span,
                source,
            } => self.reparsed(origin, expr, *span, source),
            MetaItem::Type(t) => Some(self.ty(t)),
            MetaItem::Attrs(a) => Some(self.attrs(a)),
            MetaItem::Value(v) => self.value(v),
            MetaItem::Dim(d) => self.dim(d),
        }
    }

    fn import(&mut self, m: &MetaObject) -> Option<ObjRef> {
        let pos = self
            .imports
            .iter()
            .position(|(g, _)| Arc::ptr_eq(g, &m.graph) || **g == *m.graph);
        let handles = match pos {
            Some(i) => &self.imports[i].1,
            None => {
                let handles = self.b.import_graph(&m.graph).ok()?;
                self.imports.push((m.graph.clone(), handles));
                &self.imports.last().expect("just pushed").1
            }
        };
        handles.get(m.index).copied().flatten()
    }

    /// A constant of a metadata section as TVM prints it after parsing (see
    /// [`MetaItem::Reparsed`]). Its checked type is the one inference gave
    /// (TVM's inference replaces the section's type object with its own,
    /// whose dimension objects the writer shares by identity); the
    /// section's is kept only for a constant inference never saw.
    fn reparsed(
        &mut self,
        origin: &MetaObject,
        e: &Expr,
        span: [i64; 4],
        source: &str,
    ) -> Option<ObjRef> {
        let ExprKind::Constant(data) = e.kind() else {
            return self.import(origin);
        };
        let node = NodeRef::new(&origin.graph, origin.index).ok()?;
        let handle = |this: &mut Writer, field: &str| -> Option<ObjRef> {
            let index = node.field(field).ok()?.index();
            this.import(&MetaObject {
                graph: origin.graph.clone(),
                index,
            })
        };
        let device = match handle(self, "virtual_device_") {
            Some(device) => device,
            None => self.b.virtual_device_unconstrained(),
        };
        let checked_type = match e.checked_type() {
            Some(t) => Some(self.ty(t)),
            None => handle(self, "_checked_type_"),
        };
        let blob = self.blob(data);
        let source = self.b.source_name(source);
        let [line, column, end_line, end_column] = span;
        let span = self.b.span(source, line, column, end_line, end_column);
        Some(self.b.constant_on(blob, device, Some(span), checked_type))
    }

    fn blob(&mut self, data: &Arc<TensorData>) -> BlobRef {
        let key = Arc::as_ptr(data) as usize;
        if let Some(&b) = self.blobs.get(&key) {
            return b;
        }
        let b = self.b.blob(data);
        self.blobs.insert(key, b);
        b
    }

    /// A Relay expression as an object: constants (with their checked
    /// type), globals and operators. Other expressions have no object form
    /// here.
    fn expr(&mut self, e: &Expr) -> Option<ObjRef> {
        if let Some(&r) = self.exprs.get(&e.addr()) {
            return Some(r);
        }
        let r = match e.kind() {
            ExprKind::Constant(data) => {
                let blob = self.blob(data);
                let ty = e.checked_type().map(|t| self.ty(t));
                self.b.constant(blob, None, ty)
            }
            ExprKind::GlobalVar(g) => {
                let name = self.b.string(g.name());
                let ty = e.checked_type().map(|t| self.ty(t));
                self.b.object(
                    "GlobalVar",
                    vec![
                        ("name_hint", Value::Obj(name)),
                        ("virtual_device_", Value::Null),
                        ("span", Value::Null),
                        ("_checked_type_", ty.into()),
                    ],
                )
            }
            ExprKind::Op(op) => self.b.repr_object("Op", op.name.as_bytes().to_vec()),
            _ => return None,
        };
        self.exprs.insert(e.addr(), r);
        Some(r)
    }

    fn dim(&mut self, d: &Dim) -> Option<ObjRef> {
        match d {
            Dim::Int { value, dtype, id } => Some(self.int_imm(*id, *dtype, *value)),
            Dim::Any if self.expr_depth > 0 => {
                let any = match self.expr_any {
                    Some(any) => any,
                    None => self.any(),
                };
                self.expr_any = Some(any);
                Some(any)
            }
            Dim::Any => Some(self.any()),
            Dim::Meta(m) => self.import(m),
            Dim::Expr(e) => {
                self.expr_depth += 1;
                let r = self.dim_expr(e);
                self.expr_depth -= 1;
                if self.expr_depth == 0 {
                    self.expr_any = None;
                }
                r
            }
        }
    }

    /// A `tir` expression node, its fields in `VisitAttrs` order.
    fn dim_expr(&mut self, e: &Arc<DimExpr>) -> Option<ObjRef> {
        let key = Arc::as_ptr(e) as usize;
        if let Some(&r) = self.dim_exprs.get(&key) {
            return Some(r);
        }
        let r = match &**e {
            DimExpr::Binary { a, b, dtype, .. } => {
                let a = self.dim(a);
                let b = self.dim(b);
                self.b.object(
                    e.type_key(),
                    vec![
                        ("dtype", Value::DType(*dtype)),
                        ("a", a.into()),
                        ("b", b.into()),
                        ("span", Value::Null),
                    ],
                )
            }
            DimExpr::Cast { value, dtype } => {
                let value = self.dim(value);
                self.b.object(
                    e.type_key(),
                    vec![
                        ("dtype", Value::DType(*dtype)),
                        ("value", value.into()),
                        ("span", Value::Null),
                    ],
                )
            }
            DimExpr::IfThenElse {
                cond,
                then_value,
                else_value,
                dtype,
            } => {
                let op = self
                    .b
                    .repr_object("Op", IF_THEN_ELSE_OP.as_bytes().to_vec());
                let args = [cond, then_value, else_value]
                    .into_iter()
                    .map(|d| self.dim(d))
                    .collect();
                let args = self.b.array(args);
                self.b.object(
                    e.type_key(),
                    vec![
                        ("dtype", Value::DType(*dtype)),
                        ("op", Value::Obj(op)),
                        ("args", Value::Obj(args)),
                        ("span", Value::Null),
                    ],
                )
            }
        };
        self.dim_exprs.insert(key, r);
        Some(r)
    }

    fn int_imm(&mut self, id: DimId, dtype: DataType, value: i64) -> ObjRef {
        if let Some(&r) = self.int_imms.get(&id) {
            return r;
        }
        let r = self.b.int_imm(dtype, value);
        self.int_imms.insert(id, r);
        r
    }

    fn any(&mut self) -> ObjRef {
        self.b.object(
            "tir.Any",
            vec![
                ("dtype", Value::DType(DataType::INT32)),
                ("span", Value::Null),
            ],
        )
    }

    fn type_var(&mut self, name: &str, kind: TypeVarKind, id: Option<u64>) -> ObjRef {
        if let Some(r) = id.and_then(|id| self.type_vars.get(&id)) {
            return *r;
        }
        let code = match kind {
            TypeVarKind::Type => 0,
            TypeVarKind::ShapeVar => 1,
            TypeVarKind::Constraint => 4,
            TypeVarKind::AdtHandle => 5,
            TypeVarKind::TypeData => 6,
        };
        let name = self.b.string(name);
        match id {
            Some(id) => {
                let r = self.b.object(
                    "TypeVar",
                    vec![
                        ("name_hint", Value::Obj(name)),
                        ("kind", Value::Int(code)),
                        ("span", Value::Null),
                    ],
                );
                self.type_vars.insert(id, r);
                r
            }
            None => self.b.object(
                "GlobalTypeVar",
                vec![("name_hint", Value::Obj(name)), ("kind", Value::Int(code))],
            ),
        }
    }

    fn types(&mut self, ts: &[Type]) -> ObjRef {
        let items = ts.iter().map(|t| Some(self.ty(t))).collect();
        self.b.array(items)
    }

    fn ty(&mut self, t: &Type) -> ObjRef {
        let key = type_addr(t);
        if let Some(&r) = self.types.get(&key) {
            return r;
        }
        let r = match t.kind() {
            TypeKind::Tensor(tt) => {
                let dims = tt.shape.iter().map(|d| self.dim(d)).collect();
                self.b.tensor_type(dims, tt.dtype)
            }
            TypeKind::Tuple(fields) => {
                let fields = self.types(fields);
                self.b.object(
                    "TupleType",
                    vec![("fields", Value::Obj(fields)), ("span", Value::Null)],
                )
            }
            TypeKind::Func(f) => {
                let args = self.types(&f.params);
                let ret = self.ty(&f.ret);
                let tps = f
                    .type_params
                    .iter()
                    .map(|tv| Some(self.type_var(tv.name(), tv.kind(), Some(tv.id()))))
                    .collect();
                let tps = self.b.array(tps);
                let constraints = self.b.array(Vec::new());
                self.b.object(
                    "FuncType",
                    vec![
                        ("arg_types", Value::Obj(args)),
                        ("ret_type", Value::Obj(ret)),
                        ("type_params", Value::Obj(tps)),
                        ("type_constraints", Value::Obj(constraints)),
                        ("span", Value::Null),
                    ],
                )
            }
            TypeKind::Var(tv) => self.type_var(tv.name(), tv.kind(), Some(tv.id())),
            TypeKind::GlobalVar(g) => self.type_var(g.name(), TypeVarKind::AdtHandle, None),
            TypeKind::Call { func, args } => {
                let func = self.ty(func);
                let args = self.types(args);
                self.b.object(
                    "TypeCall",
                    vec![
                        ("func", Value::Obj(func)),
                        ("args", Value::Obj(args)),
                        ("span", Value::Null),
                    ],
                )
            }
            TypeKind::Ref(inner) => {
                let inner = self.ty(inner);
                self.b.object(
                    "relay.RefType",
                    vec![("value", Value::Obj(inner)), ("span", Value::Null)],
                )
            }
            TypeKind::Incomplete(_) => self.b.object(
                "IncompleteType",
                vec![("kind", Value::Int(0)), ("span", Value::Null)],
            ),
        };
        self.types.insert(key, r);
        r
    }

    /// An attrs object: its fields in declaration order, C++ scalars inline
    /// and everything else as objects.
    fn attrs(&mut self, attrs: &Attrs) -> ObjRef {
        let schema = super::text::attrs_schema(attrs.type_key());
        let mut fields = Vec::with_capacity(attrs.fields().len());
        for (name, value) in attrs.fields() {
            let ty = schema
                .and_then(|s| s.field(name))
                .map_or(AttrType::ObjectRef, |f| f.ty.clone());
            let v = match (&ty, value) {
                (AttrType::Int, v) | (AttrType::UInt64, v) if v.as_int().is_some() => {
                    Value::Int(v.as_int().unwrap_or(0))
                }
                (AttrType::Double, v) if v.as_f64().is_some() => {
                    Value::Float(v.as_f64().unwrap_or(0.0))
                }
                (AttrType::Bool, v) if v.as_int().is_some() => {
                    Value::Bool(v.as_int().unwrap_or(0) != 0)
                }
                (AttrType::StdString, AttrValue::Str(s)) => Value::Str(s.clone()),
                (AttrType::DataType, AttrValue::DataType(d)) => Value::DType(*d),
                (_, v) => self.value(v).into(),
            };
            fields.push((name.as_str(), v));
        }
        self.b.object(attrs.type_key(), fields)
    }

    /// An attribute value as an object (`None` for null).
    fn value(&mut self, v: &AttrValue) -> Option<ObjRef> {
        Some(match v {
            AttrValue::Null => return None,
            AttrValue::Int(i) => {
                let dtype = if i32::try_from(*i).is_ok() {
                    DataType::INT32
                } else {
                    DataType::INT64
                };
                self.b.int_imm(dtype, *i)
            }
            AttrValue::Double(f) => self.b.float_imm(DataType::FLOAT32, *f),
            AttrValue::Bool(b) => self.b.int_imm(DataType::bool(), i64::from(*b)),
            AttrValue::Str(s) => self.b.string(s),
            AttrValue::DataType(d) => self.b.string(&d.to_tvm_string()),
            AttrValue::IntImm { value, dtype, id } => self.int_imm(*id, *dtype, *value),
            AttrValue::FloatImm { value, dtype } => self.b.float_imm(*dtype, *value),
            AttrValue::Array(items) => {
                let items = items.iter().map(|i| self.value(i)).collect();
                self.b.array(items)
            }
            AttrValue::Map(entries) => {
                let values: Vec<Option<ObjRef>> =
                    entries.iter().map(|(_, v)| self.value(v)).collect();
                let entries = entries
                    .iter()
                    .zip(values)
                    .map(|((k, _), v)| (k.as_str(), v))
                    .collect();
                self.b.str_map(entries)
            }
            AttrValue::Any => self.any(),
            AttrValue::Expr(e) => return self.expr(e),
            AttrValue::Meta(m) => return self.import(m),
        })
    }
}

/// A type's identity: the address of its node (types are reference counted
/// and immutable, so this is stable while the type is alive).
pub(crate) fn type_addr(t: &Type) -> usize {
    t.kind() as *const TypeKind as usize
}
