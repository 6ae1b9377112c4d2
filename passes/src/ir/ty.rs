//! Relay types: tensors with shapes, tuples, functions, type variables, ADT
//! handles and applications, references, and incomplete types.
//!
//! A [`Type`] is an immutable, reference-counted tree, cheap to clone and to
//! share between threads. Type variables are compared by identity (an id),
//! global type variables (ADT names) by name.

use crate::dtype::DataType;
use crate::ir::MetaObject;
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
    /// `fn [T](A, B) -> R`.
    Func(FuncType),
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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A known size with the dtype of its IntImm (`3` is int32, `3i64` int64).
    Int { value: i64, dtype: DataType },
    /// `?`: a size known only at run time (`tir.Any`).
    Any,
    /// A symbolic size or any other PrimExpr, from the metadata section.
    Meta(MetaObject),
}

impl Dim {
    pub fn int32(value: i64) -> Dim {
        Dim::Int {
            value,
            dtype: DataType::INT32,
        }
    }

    pub fn int64(value: i64) -> Dim {
        Dim::Int {
            value,
            dtype: DataType::INT64,
        }
    }

    /// The size, if it is a known integer.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Dim::Int { value, .. } => Some(*value),
            _ => None,
        }
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
        Type::new(TypeKind::Func(FuncType {
            params,
            ret,
            type_params,
        }))
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
        let mut stack = vec![self];
        while let Some(ty) = stack.pop() {
            match ty.kind() {
                TypeKind::Incomplete(_) => return true,
                TypeKind::Tuple(fields) => stack.extend(fields),
                TypeKind::Func(func) => {
                    stack.extend(&func.params);
                    stack.push(&func.ret);
                }
                TypeKind::Call { func, args } => {
                    stack.push(func);
                    stack.extend(args);
                }
                TypeKind::Ref(inner) => stack.push(inner),
                TypeKind::Tensor(_) | TypeKind::Var(_) | TypeKind::GlobalVar(_) => {}
            }
        }
        false
    }

    pub fn ptr_eq(&self, other: &Type) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
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
    pub constructors: Vec<crate::ir::Constructor>,
}
