//! Relay types: tensors with shapes, tuples, functions, type variables, ADT
//! handles and applications, references, and incomplete types.
//!
//! A [`Type`] is an immutable, reference-counted tree, cheap to clone and to
//! share between threads. Type variables are compared by identity (an id),
//! global type variables (ADT names) by name.

use crate::dtype::DataType;
use crate::MetaObject;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A Relay type.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Type(Arc<TypeKind>);

/// The forms of a type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// `Tensor[(d1, d2), dtype]`; a rank-0 tensor prints as its dtype.
    Tensor(TensorType),
    /// `(A, B)`; `()` is unit.
    Tuple(Vec<Type>),
    /// `fn [T](A, B) -> R`. Boxed: most types are tensors, and every type
    /// is as large as the largest form.
    Func(Box<FuncType>),
    /// A type parameter.
    Var(TypeVar),
    /// The name of an ADT (`List`), used as the head of a [`TypeKind::Call`].
    GlobalVar(GlobalTypeVar),
    /// An ADT applied to arguments: `List[A]` (also `List[]` with none).
    Call { func: Type, args: Vec<Type> },
    /// `ref(T)`.
    Ref(Type),
    /// A type left to inference (`_`, or a missing annotation).
    Incomplete(IncompleteId),
}

/// A tensor type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub shape: Vec<Dim>,
    pub dtype: DataType,
}

/// One dimension of a tensor shape.
///
/// A known size carries a [`DimId`]: in TVM every dimension is a `PrimExpr`
/// object, and which dimensions are the *same* object shows in the
/// `#[metadata]` section (an object met twice is serialised once). Equality
/// and hashing ignore the identity, so types compare structurally.
#[derive(Clone)]
pub enum Dim {
    /// A known size with the dtype of its IntImm (`3` is int32, `3i64` int64).
    Int {
        value: i64,
        dtype: DataType,
        id: DimId,
    },
    /// `?`: a size known only at run time (`tir.Any`).
    Any,
    /// A symbolic size or any other PrimExpr, from the metadata section.
    Meta(MetaObject),
    /// A PrimExpr a type relation computed from symbolic sizes (`n * 2`):
    /// a new object, printed as `meta[tir.Mul][k]`.
    Expr(Arc<DimExpr>),
}

/// A computed PrimExpr over dimensions, as TVM's arithmetic builds one when
/// constant folding does not apply (`src/tir/op/op.cc`).
#[derive(Debug, Clone)]
pub enum DimExpr {
    /// `tir.Add`, `tir.Mul`, … of two operands of dtype `dtype`.
    Binary {
        op: DimOp,
        a: Dim,
        b: Dim,
        dtype: DataType,
    },
    /// `tir.Cast` of a symbolic value to another integer dtype.
    Cast { value: Dim, dtype: DataType },
    /// `tir.if_then_else(cond, then_value, else_value)`: a `tir.Call` of
    /// that builtin, as `tvm::if_then_else` builds one when the condition
    /// is not a constant (padding a symbolic size to a multiple).
    IfThenElse {
        cond: Dim,
        then_value: Dim,
        else_value: Dim,
        dtype: DataType,
    },
}

/// The name of the builtin operator a [`DimExpr::IfThenElse`] calls.
pub const IF_THEN_ELSE_OP: &str = "tir.if_then_else";

/// The binary PrimExpr nodes relations build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DimOp {
    Add,
    Sub,
    Mul,
    /// `div` on integers: truncating division.
    Div,
    FloorDiv,
    FloorMod,
    Max,
    Min,
    /// `a != b`, of dtype `bool`.
    Ne,
}

impl DimOp {
    /// The TVM type key of the node.
    pub fn type_key(self) -> &'static str {
        match self {
            DimOp::Add => "tir.Add",
            DimOp::Sub => "tir.Sub",
            DimOp::Mul => "tir.Mul",
            DimOp::Div => "tir.Div",
            DimOp::FloorDiv => "tir.FloorDiv",
            DimOp::FloorMod => "tir.FloorMod",
            DimOp::Max => "tir.Max",
            DimOp::Min => "tir.Min",
            DimOp::Ne => "tir.NE",
        }
    }

    fn from_type_key(key: &str) -> Option<DimOp> {
        Some(match key {
            "tir.Add" => DimOp::Add,
            "tir.Sub" => DimOp::Sub,
            "tir.Mul" => DimOp::Mul,
            "tir.Div" => DimOp::Div,
            "tir.FloorDiv" => DimOp::FloorDiv,
            "tir.FloorMod" => DimOp::FloorMod,
            "tir.Max" => DimOp::Max,
            "tir.Min" => DimOp::Min,
            "tir.NE" => DimOp::Ne,
            _ => return None,
        })
    }
}

impl DimExpr {
    /// The TVM type key of the node (`tir.Mul`, `tir.Cast`, …).
    pub fn type_key(&self) -> &'static str {
        match self {
            DimExpr::Binary { op, .. } => op.type_key(),
            DimExpr::Cast { .. } => "tir.Cast",
            DimExpr::IfThenElse { .. } => "tir.Call",
        }
    }

    pub fn dtype(&self) -> DataType {
        match self {
            DimExpr::Binary { dtype, .. }
            | DimExpr::Cast { dtype, .. }
            | DimExpr::IfThenElse { dtype, .. } => *dtype,
        }
    }
}

/// The identity of an integer dimension (of a TVM `IntImm` object).
///
/// Copying a [`Dim`] keeps its identity, as copying an `ObjectRef` does in
/// TVM; making one ([`Dim::int`], [`DimId::fresh`]) is a new object. The id
/// is a number from a process-wide counter, so identities cost no
/// allocation and are never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DimId(u64);

static NEXT_DIM: AtomicU64 = AtomicU64::new(1);

impl DimId {
    /// A new identity, different from every other.
    pub fn fresh() -> DimId {
        DimId(NEXT_DIM.fetch_add(1, Ordering::Relaxed))
    }

    /// `count` new identities in a row; this is the first, see
    /// [`DimId::nth`] (one per node of a metadata section).
    pub fn reserve(count: usize) -> DimId {
        DimId(NEXT_DIM.fetch_add(count.max(1) as u64, Ordering::Relaxed))
    }

    /// The `i`-th identity of a block from [`DimId::reserve`].
    pub fn nth(self, i: usize) -> DimId {
        DimId(self.0 + i as u64)
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

impl PartialEq for Dim {
    fn eq(&self, other: &Dim) -> bool {
        match (self, other) {
            (
                Dim::Int {
                    value: a,
                    dtype: da,
                    ..
                },
                Dim::Int {
                    value: b,
                    dtype: db,
                    ..
                },
            ) => a == b && da == db,
            (Dim::Any, Dim::Any) => true,
            (Dim::Meta(a), Dim::Meta(b)) => a == b,
            (Dim::Expr(a), Dim::Expr(b)) => Arc::ptr_eq(a, b) || exprs_equal(a, b),
            // A computed expression equals the same expression read from a
            // metadata section (TVM's `StructuralEqual`: an annotation
            // `meta[tir.Mul][0]` matches the size a relation computes).
            (Dim::Expr(e), Dim::Meta(m)) | (Dim::Meta(m), Dim::Expr(e)) => meta_equals_expr(m, e),
            _ => false,
        }
    }
}

fn exprs_equal(a: &DimExpr, b: &DimExpr) -> bool {
    match (a, b) {
        (
            DimExpr::Binary {
                op: oa,
                a: aa,
                b: ba,
                dtype: da,
            },
            DimExpr::Binary {
                op: ob,
                a: ab,
                b: bb,
                dtype: db,
            },
        ) => oa == ob && da == db && aa == ab && ba == bb,
        (
            DimExpr::Cast {
                value: va,
                dtype: da,
            },
            DimExpr::Cast {
                value: vb,
                dtype: db,
            },
        ) => da == db && va == vb,
        (
            DimExpr::IfThenElse {
                cond: ca,
                then_value: ta,
                else_value: ea,
                dtype: da,
            },
            DimExpr::IfThenElse {
                cond: cb,
                then_value: tb,
                else_value: eb,
                dtype: db,
            },
        ) => da == db && ca == cb && ta == tb && ea == eb,
        _ => false,
    }
}

/// Whether node `m` of a metadata section is the expression `e`, structurally
/// (variables by identity, immediates by value).
fn meta_equals_expr(m: &MetaObject, e: &DimExpr) -> bool {
    let Some(node) = m.graph.nodes.get(m.index) else {
        return false;
    };
    let field = |name: &str| node.attrs.get(name).map(String::as_str);
    if field("dtype").and_then(|d| d.parse::<DataType>().ok()) != Some(e.dtype()) {
        return false;
    }
    let child = |name: &str| -> Option<Dim> {
        let index = field(name)?.parse::<usize>().ok()?;
        node_dim(m, index)
    };
    match e {
        DimExpr::Binary { op, a, b, .. } => {
            DimOp::from_type_key(&node.type_key) == Some(*op)
                && child("a").is_some_and(|x| x == *a)
                && child("b").is_some_and(|x| x == *b)
        }
        DimExpr::Cast { value, .. } => {
            node.type_key == "tir.Cast" && child("value").is_some_and(|x| x == *value)
        }
        DimExpr::IfThenElse {
            cond,
            then_value,
            else_value,
            ..
        } => {
            let graph = &m.graph.nodes;
            let index = |name: &str| field(name).and_then(|i| i.parse::<usize>().ok());
            let is_if_then_else = node.type_key == "tir.Call"
                && index("op")
                    .and_then(|op| graph.get(op))
                    .and_then(|op| op.repr_str())
                    == Some(IF_THEN_ELSE_OP);
            let args = index("args")
                .and_then(|args| graph.get(args))
                .filter(|args| args.is_array())
                .map(|args| args.data.clone())
                .unwrap_or_default();
            is_if_then_else
                && args.len() == 3
                && [cond, then_value, else_value]
                    .iter()
                    .zip(&args)
                    .all(|(want, &index)| node_dim(m, index).is_some_and(|x| x == **want))
        }
    }
}

/// Node `index` of `m`'s metadata section as a dimension.
fn node_dim(m: &MetaObject, index: usize) -> Option<Dim> {
    let child = m.graph.nodes.get(index)?;
    // `tir.Any` inside an expression (`? * 3` of a flattened `(?, 3)`)
    // is the computed expression's `Dim::Any`.
    if child.type_key == "tir.Any" {
        return Some(Dim::Any);
    }
    if child.type_key == "IntImm" {
        let value = child.attrs.get("value")?.parse().ok()?;
        let dtype = child.attrs.get("dtype")?.parse().ok()?;
        return Some(Dim::int(value, dtype));
    }
    Some(Dim::Meta(MetaObject {
        graph: m.graph.clone(),
        index,
    }))
}

impl Eq for Dim {}

impl std::hash::Hash for Dim {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            Dim::Meta(_) | Dim::Expr(_) => 2u8.hash(state),
            other => std::mem::discriminant(other).hash(state),
        }
        match self {
            Dim::Int { value, dtype, .. } => {
                value.hash(state);
                dtype.hash(state);
            }
            // Symbolic sizes compare structurally across the two forms (see
            // `eq`), so they hash alike: they are rare.
            Dim::Any | Dim::Meta(_) | Dim::Expr(_) => {}
        }
    }
}

// Without the identity, which is noise in test failures.
impl fmt::Debug for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Int { value, dtype, .. } => f
                .debug_struct("Int")
                .field("value", value)
                .field("dtype", dtype)
                .finish(),
            Dim::Any => f.write_str("Any"),
            Dim::Meta(m) => f.debug_tuple("Meta").field(m).finish(),
            Dim::Expr(e) => f.debug_tuple("Expr").field(e).finish(),
        }
    }
}

impl Dim {
    /// A new integer dimension (a new `IntImm` object).
    pub fn int(value: i64, dtype: DataType) -> Dim {
        Dim::Int {
            value,
            dtype,
            id: DimId::fresh(),
        }
    }

    pub fn int32(value: i64) -> Dim {
        Dim::int(value, DataType::INT32)
    }

    pub fn int64(value: i64) -> Dim {
        Dim::int(value, DataType::INT64)
    }

    /// The size, if it is a known integer.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Dim::Int { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// The size and dtype of a known integer (an `IntImm`).
    pub fn as_int_imm(&self) -> Option<(i64, DataType)> {
        match self {
            Dim::Int { value, dtype, .. } => Some((*value, *dtype)),
            _ => None,
        }
    }

    /// The identity of an integer dimension.
    pub fn id(&self) -> Option<DimId> {
        match self {
            Dim::Int { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// Whether two dimensions are the same object (TVM's `same_as`): the
    /// same integer identity, or the same metadata object.
    pub fn same_as(&self, other: &Dim) -> bool {
        match (self, other) {
            (Dim::Int { id: a, .. }, Dim::Int { id: b, .. }) => a == b,
            (Dim::Meta(a), Dim::Meta(b)) => a == b,
            (Dim::Expr(a), Dim::Expr(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// A new expression node.
    pub fn expr(e: DimExpr) -> Dim {
        Dim::Expr(Arc::new(e))
    }
}

/// A function type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FuncType {
    pub params: Vec<Type>,
    pub ret: Type,
    pub type_params: Vec<TypeVar>,
}

/// The kind of a type variable, as in TVM (`TypeKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeVarKind {
    Type,
    ShapeVar,
    Constraint,
    AdtHandle,
    TypeData,
}

/// A type parameter, identified by its id (two `A`s in different functions
/// are different variables).
#[derive(Debug, Clone)]
pub struct TypeVar(Arc<TypeVarData>);

#[derive(Debug)]
pub struct TypeVarData {
    pub id: u64,
    pub name: String,
    pub kind: TypeVarKind,
}

static NEXT_TYPE_VAR: AtomicU64 = AtomicU64::new(1);

impl TypeVar {
    pub fn new(name: impl Into<String>, kind: TypeVarKind) -> TypeVar {
        TypeVar(Arc::new(TypeVarData {
            id: NEXT_TYPE_VAR.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            kind,
        }))
    }

    pub fn id(&self) -> u64 {
        self.0.id
    }

    pub fn name(&self) -> &str {
        &self.0.name
    }

    pub fn kind(&self) -> TypeVarKind {
        self.0.kind
    }
}

impl PartialEq for TypeVar {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}
impl Eq for TypeVar {}
impl std::hash::Hash for TypeVar {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.id.hash(state)
    }
}

/// The name of an ADT; equal names are the same type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalTypeVar(Arc<str>);

impl GlobalTypeVar {
    pub fn new(name: &str) -> GlobalTypeVar {
        GlobalTypeVar(Arc::from(name))
    }

    pub fn name(&self) -> &str {
        &self.0
    }
}

/// The identity of an incomplete type; each `_` is a fresh one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IncompleteId(pub u64);

static NEXT_INCOMPLETE: AtomicU64 = AtomicU64::new(1);

impl Type {
    pub fn new(kind: TypeKind) -> Type {
        Type(Arc::new(kind))
    }

    pub fn kind(&self) -> &TypeKind {
        &self.0
    }

    pub fn tensor(shape: Vec<Dim>, dtype: DataType) -> Type {
        Type::new(TypeKind::Tensor(TensorType { shape, dtype }))
    }

    /// A rank-0 tensor of `dtype`.
    pub fn scalar(dtype: DataType) -> Type {
        Type::tensor(Vec::new(), dtype)
    }

    pub fn tuple(fields: Vec<Type>) -> Type {
        Type::new(TypeKind::Tuple(fields))
    }

    /// `()`.
    pub fn unit() -> Type {
        Type::tuple(Vec::new())
    }

    pub fn func(params: Vec<Type>, ret: Type, type_params: Vec<TypeVar>) -> Type {
        Type::new(TypeKind::Func(Box::new(FuncType {
            params,
            ret,
            type_params,
        })))
    }

    /// A fresh incomplete type.
    pub fn incomplete() -> Type {
        Type::new(TypeKind::Incomplete(IncompleteId(
            NEXT_INCOMPLETE.fetch_add(1, Ordering::Relaxed),
        )))
    }

    pub fn var(var: TypeVar) -> Type {
        Type::new(TypeKind::Var(var))
    }

    pub fn as_tensor(&self) -> Option<&TensorType> {
        match self.kind() {
            TypeKind::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// TVM's `IsDynamic`: some tensor anywhere in the type has a dimension
    /// that is not a known integer (`?`, a symbolic size or an expression
    /// of them).
    pub fn is_dynamic(&self) -> bool {
        self.any_part(|t| {
            t.as_tensor()
                .is_some_and(|tensor| tensor.shape.iter().any(|d| !matches!(d, Dim::Int { .. })))
        })
    }

    /// Whether `pred` holds for this type or any type inside it (tuple
    /// fields, function parameters and results, type call arguments,
    /// referenced types), looked at without recursion.
    pub fn any_part(&self, mut pred: impl FnMut(&Type) -> bool) -> bool {
        if pred(self) {
            return true;
        }
        // Most types are tensors: no work list for them.
        let mut pending = match self.kind() {
            TypeKind::Tensor(_)
            | TypeKind::Var(_)
            | TypeKind::GlobalVar(_)
            | TypeKind::Incomplete(_) => return false,
            _ => vec![self],
        };
        let mut first = true;
        while let Some(ty) = pending.pop() {
            // `self` was asked first, above.
            if !std::mem::take(&mut first) && pred(ty) {
                return true;
            }
            match ty.kind() {
                TypeKind::Tuple(fields) => pending.extend(fields),
                TypeKind::Func(func) => {
                    pending.extend(&func.params);
                    pending.push(&func.ret);
                }
                TypeKind::Call { func, args } => {
                    pending.push(func);
                    pending.extend(args);
                }
                TypeKind::Ref(inner) => pending.push(inner),
                TypeKind::Tensor(_)
                | TypeKind::Var(_)
                | TypeKind::GlobalVar(_)
                | TypeKind::Incomplete(_) => {}
            }
        }
        false
    }

    pub fn as_tuple(&self) -> Option<&[Type]> {
        match self.kind() {
            TypeKind::Tuple(fields) => Some(fields),
            _ => None,
        }
    }

    pub fn as_func(&self) -> Option<&FuncType> {
        match self.kind() {
            TypeKind::Func(f) => Some(f),
            _ => None,
        }
    }

    pub fn is_incomplete(&self) -> bool {
        matches!(self.kind(), TypeKind::Incomplete(_))
    }

    /// Whether an incomplete type (`_`) occurs anywhere in this type.
    pub fn contains_incomplete(&self) -> bool {
        self.any_part(Type::is_incomplete)
    }

    pub fn ptr_eq(&self, other: &Type) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// How many holders the type has (the interner drops what only it
    /// holds).
    pub(crate) fn strong_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An algebraic data type: `type List[A] { Cons(A, List[A]), Nil }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeData {
    pub header: GlobalTypeVar,
    pub type_vars: Vec<TypeVar>,
    pub constructors: Vec<crate::Constructor>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_types_have_a_dimension_that_is_not_a_known_integer() {
        let f32 = DataType::float(32);
        let fixed = Type::tensor(vec![Dim::int(1, DataType::INT32), Dim::int64(3)], f32);
        assert!(!fixed.is_dynamic());
        assert!(!Type::scalar(f32).is_dynamic());
        let any = Type::tensor(vec![Dim::int(1, DataType::INT32), Dim::Any], f32);
        assert!(any.is_dynamic());
        // Found anywhere inside: tuple fields, function results, references.
        let nested = Type::func(
            vec![fixed.clone()],
            Type::tuple(vec![fixed.clone(), Type::new(TypeKind::Ref(any))]),
            Vec::new(),
        );
        assert!(nested.is_dynamic());
        // A computed size is not a known integer either.
        let computed = Dim::Expr(Arc::new(DimExpr::Cast {
            value: Dim::Any,
            dtype: DataType::INT64,
        }));
        assert!(Type::tensor(vec![computed], f32).is_dynamic());
    }

    #[test]
    fn a_computed_size_around_any_equals_its_metadata_form() {
        // `meta[tir.Mul][0]` = `? * 3`, as TVM prints a flattened `(?, 3)`.
        let graph = crate::metadata::ObjectGraph::parse(
            r#"{"root": 1, "nodes": [
                {"type_key": ""},
                {"type_key": "tir.Mul", "attrs": {"a": "2", "b": "3", "dtype": "int32", "span": "0"}},
                {"type_key": "tir.Any", "attrs": {"dtype": "int32", "span": "0"}},
                {"type_key": "IntImm", "attrs": {"dtype": "int32", "span": "0", "value": "3"}}
            ], "b64ndarrays": [], "attrs": {"tvm_version": "0.13.0"}}"#,
        )
        .unwrap();
        let meta = Dim::Meta(MetaObject {
            graph: Arc::new(graph),
            index: 1,
        });
        let computed = Dim::expr(DimExpr::Binary {
            op: DimOp::Mul,
            a: Dim::Any,
            b: Dim::int(3, DataType::INT32),
            dtype: DataType::INT32,
        });
        assert_eq!(computed, meta);
    }
}
