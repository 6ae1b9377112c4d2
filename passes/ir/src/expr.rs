//! Relay expressions.
//!
//! An [`Expr`] is an immutable node behind an `Arc`: cloning is cheap, a
//! graph binding used three times is one node used three times (a DAG), and
//! node identity ([`Expr::ptr_eq`], [`Expr::addr`]) is what memo tables key
//! on, as TVM keys on object pointers. Rewrites rebuild only the nodes whose
//! children changed (see `ir::rewrite`).
//!
//! Each node carries its source [`Span`] (kept through rewrites, so
//! diagnostics and editor features map back to the text) and, once type
//! inference has run, its checked type.

use crate::attrs::{Attrs, DictAttrs};
use crate::metadata::TensorData;
use crate::op::OpDef;
use crate::source::Span;
use crate::ty::{GlobalTypeVar, Type, TypeVar};
use crate::AttrValue;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A Relay expression.
#[derive(Clone)]
pub struct Expr(Arc<ExprNode>);

/// The node behind an [`Expr`].
#[derive(Debug)]
pub struct ExprNode {
    pub kind: ExprKind,
    pub span: Option<Span>,
    /// The type inference gave this node; `None` before InferType.
    pub checked_type: Option<Type>,
}

/// The forms of an expression.
#[derive(Debug)]
pub enum ExprKind {
    /// A local variable: its binding site and every use are the same node.
    Var(VarData),
    /// `@name`.
    GlobalVar(GlobalVar),
    /// A tensor constant (scalar literals are rank-0 constants).
    Constant(Arc<TensorData>),
    /// `(a, b)`.
    Tuple(Vec<Expr>),
    /// `t.0`.
    TupleGetItem { tuple: Expr, index: usize },
    /// `callee(args…, attrs…)`.
    Call(Call),
    /// `let %x = value; body`.
    Let { var: Var, value: Expr, body: Expr },
    /// `if (cond) { … } else { … }`.
    If {
        cond: Expr,
        then_branch: Expr,
        else_branch: Expr,
    },
    /// `fn (…) { … }`; global functions are these too. Boxed: a module
    /// has few functions and many other nodes, and every node is as large
    /// as the largest form.
    Function(Box<FunctionData>),
    /// `match (data) { … }` (complete) or `match? (data) { … }`.
    Match {
        data: Expr,
        clauses: Vec<Clause>,
        complete: bool,
    },
    /// `ref(value)`.
    RefCreate(Expr),
    /// `ref_read(r)`.
    RefRead(Expr),
    /// `ref_write(r, value)`.
    RefWrite { reference: Expr, value: Expr },
    /// An ADT constructor used as a value or callee.
    Constructor(Constructor),
    /// A primitive operator.
    Op(&'static OpDef),
}

/// A call.
#[derive(Debug)]
pub struct Call {
    pub callee: Expr,
    pub args: Vec<Expr>,
    /// The attrs object, `None` for callees without attributes.
    pub attrs: Option<Attrs>,
    /// Type arguments, filled in by type inference. A boxed slice, not a
    /// `Vec`: a call is one of the most common nodes, and a `Vec`'s
    /// capacity would make every node larger than the allocator's size
    /// class of 96 bytes (see `census sizes` in the `analysis_memory`
    /// bench).
    pub type_args: Box<[Type]>,
}

/// What a local variable is.
#[derive(Debug)]
pub struct VarData {
    pub id: VarId,
    /// TVM's `name_hint`; may be empty (`let` from `a; b`) or not a valid
    /// identifier (the printer handles both).
    pub name: String,
    pub type_annotation: Option<Type>,
    /// A `{virtual_device=…}` constraint from the text, kept as written
    /// (boxed: rare, and a variable is one of the most common nodes).
    pub virtual_device: Option<Box<AttrValue>>,
}

/// The identity of a local variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u64);

static NEXT_VAR: AtomicU64 = AtomicU64::new(1);

impl VarId {
    pub fn fresh() -> VarId {
        VarId(NEXT_VAR.fetch_add(1, Ordering::Relaxed))
    }
}

/// A function literal or global function.
///
/// A clone shares the nodes (only the attribute list is copied): a rewrite
/// that changes some fields writes `FunctionData { body, ..data.clone() }`.
#[derive(Debug, Clone)]
pub struct FunctionData {
    pub params: Vec<Var>,
    pub body: Expr,
    pub ret_type: Option<Type>,
    pub type_params: Vec<TypeVar>,
    pub attrs: DictAttrs,
    /// The function's `virtual_device=…`, kept as written.
    pub virtual_device: Option<AttrValue>,
}

/// One `pattern => rhs` of a match.
#[derive(Debug, Clone)]
pub struct Clause {
    pub pattern: Pattern,
    pub rhs: Expr,
}

/// A match pattern.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// `_`.
    Wildcard,
    /// `%x` (optionally annotated): binds the variable.
    Var(Var),
    /// `Ctor(p, …)`.
    Constructor(Constructor, Vec<Pattern>),
    /// `(p, …)`.
    Tuple(Vec<Pattern>),
}

/// A global function name: the same name is the same global.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalVar(Arc<str>);

impl GlobalVar {
    pub fn new(name: &str) -> GlobalVar {
        GlobalVar(Arc::from(name))
    }

    pub fn name(&self) -> &str {
        &self.0
    }
}

/// An ADT constructor.
#[derive(Debug, Clone)]
pub struct Constructor(Arc<ConstructorData>);

#[derive(Debug)]
pub struct ConstructorData {
    pub name: String,
    /// The field types, in terms of the ADT's type variables.
    pub inputs: Vec<Type>,
    pub belong_to: GlobalTypeVar,
    /// The position of the constructor in its type definition.
    pub tag: usize,
}

impl Constructor {
    pub fn new(name: &str, inputs: Vec<Type>, belong_to: GlobalTypeVar, tag: usize) -> Constructor {
        Constructor(Arc::new(ConstructorData {
            name: name.to_string(),
            inputs,
            belong_to,
            tag,
        }))
    }

    pub fn data(&self) -> &ConstructorData {
        &self.0
    }

    pub fn name(&self) -> &str {
        &self.0.name
    }
}

impl PartialEq for Constructor {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name && self.0.belong_to == other.0.belong_to
    }
}
impl Eq for Constructor {}
impl std::hash::Hash for Constructor {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
        self.0.belong_to.hash(state);
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Option<Span>) -> Expr {
        Expr(Arc::new(ExprNode {
            kind,
            span,
            checked_type: None,
        }))
    }

    pub fn with_type(kind: ExprKind, span: Option<Span>, checked_type: Option<Type>) -> Expr {
        Expr(Arc::new(ExprNode {
            kind,
            span,
            checked_type,
        }))
    }

    pub fn node(&self) -> &ExprNode {
        &self.0
    }

    pub fn kind(&self) -> &ExprKind {
        &self.0.kind
    }

    pub fn span(&self) -> Option<Span> {
        self.0.span
    }

    pub fn checked_type(&self) -> Option<&Type> {
        self.0.checked_type.as_ref()
    }

    /// The same node identity: what TVM's pointer comparisons mean.
    pub fn ptr_eq(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The node's address, a key for memo tables (valid while it is alive).
    pub fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Whether this handle is the only one to its node. A walk that reaches
    /// such a node through its one parent reaches it exactly once, so it
    /// needs no entry in a table of visited nodes (most nodes of a dataflow
    /// graph have one user).
    pub(crate) fn is_unshared(&self) -> bool {
        Arc::strong_count(&self.0) == 1
    }

    // ---- constructors for each form ----

    pub fn global(name: &str, span: Option<Span>) -> Expr {
        Expr::new(ExprKind::GlobalVar(GlobalVar::new(name)), span)
    }

    pub fn constant(data: TensorData, span: Option<Span>) -> Expr {
        Expr::new(ExprKind::Constant(Arc::new(data)), span)
    }

    pub fn tuple(fields: Vec<Expr>, span: Option<Span>) -> Expr {
        Expr::new(ExprKind::Tuple(fields), span)
    }

    pub fn tuple_get_item(tuple: Expr, index: usize, span: Option<Span>) -> Expr {
        Expr::new(ExprKind::TupleGetItem { tuple, index }, span)
    }

    pub fn call(callee: Expr, args: Vec<Expr>, attrs: Option<Attrs>, span: Option<Span>) -> Expr {
        Expr::new(
            ExprKind::Call(Call {
                callee,
                args,
                attrs,
                type_args: Box::default(),
            }),
            span,
        )
    }

    pub fn op(op: &'static OpDef, span: Option<Span>) -> Expr {
        Expr::new(ExprKind::Op(op), span)
    }

    pub fn let_(var: Var, value: Expr, body: Expr, span: Option<Span>) -> Expr {
        Expr::new(ExprKind::Let { var, value, body }, span)
    }

    pub fn if_(cond: Expr, then_branch: Expr, else_branch: Expr, span: Option<Span>) -> Expr {
        Expr::new(
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            },
            span,
        )
    }

    // ---- views ----

    pub fn as_var(&self) -> Option<Var> {
        match self.kind() {
            ExprKind::Var(_) => Some(Var(self.clone())),
            _ => None,
        }
    }

    pub fn as_function(&self) -> Option<Function> {
        match self.kind() {
            ExprKind::Function(_) => Some(Function(self.clone())),
            _ => None,
        }
    }

    pub fn as_call(&self) -> Option<&Call> {
        match self.kind() {
            ExprKind::Call(call) => Some(call),
            _ => None,
        }
    }

    pub fn as_constant(&self) -> Option<&Arc<TensorData>> {
        match self.kind() {
            ExprKind::Constant(data) => Some(data),
            _ => None,
        }
    }

    pub fn as_op(&self) -> Option<&'static OpDef> {
        match self.kind() {
            ExprKind::Op(op) => Some(op),
            _ => None,
        }
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Expr@{:x}(", self.addr())?;
        self.0.kind.fmt(f)?;
        f.write_str(")")
    }
}

/// A local variable: an [`Expr`] whose kind is [`ExprKind::Var`]. Every use
/// of a variable is this same node.
#[derive(Clone, Debug)]
pub struct Var(Expr);

impl Var {
    pub fn new(name: impl Into<String>, type_annotation: Option<Type>, span: Option<Span>) -> Var {
        Var::with_id(VarId::fresh(), name, type_annotation, None, span)
    }

    pub fn with_id(
        id: VarId,
        name: impl Into<String>,
        type_annotation: Option<Type>,
        virtual_device: Option<AttrValue>,
        span: Option<Span>,
    ) -> Var {
        Var(Expr::new(
            ExprKind::Var(VarData {
                id,
                name: name.into(),
                type_annotation,
                virtual_device: virtual_device.map(Box::new),
            }),
            span,
        ))
    }

    /// The same variable (same id) with a checked type, for type inference.
    pub fn with_checked_type(&self, ty: Type) -> Var {
        let data = self.data();
        Var(Expr::with_type(
            ExprKind::Var(VarData {
                id: data.id,
                name: data.name.clone(),
                type_annotation: data.type_annotation.clone(),
                virtual_device: data.virtual_device.clone(),
            }),
            self.0.span(),
            Some(ty),
        ))
    }

    pub fn data(&self) -> &VarData {
        match self.0.kind() {
            ExprKind::Var(data) => data,
            _ => unreachable!("a Var always wraps a variable node"),
        }
    }

    pub fn id(&self) -> VarId {
        self.data().id
    }

    pub fn name(&self) -> &str {
        &self.data().name
    }

    pub fn type_annotation(&self) -> Option<&Type> {
        self.data().type_annotation.as_ref()
    }

    pub fn expr(&self) -> &Expr {
        &self.0
    }

    pub fn into_expr(self) -> Expr {
        self.0
    }
}

/// A function: an [`Expr`] whose kind is [`ExprKind::Function`].
#[derive(Clone, Debug)]
pub struct Function(Expr);

impl Function {
    pub fn new(data: FunctionData, span: Option<Span>) -> Function {
        Function(Expr::new(ExprKind::Function(Box::new(data)), span))
    }

    pub fn data(&self) -> &FunctionData {
        match self.0.kind() {
            ExprKind::Function(data) => data,
            _ => unreachable!("a Function always wraps a function node"),
        }
    }

    pub fn params(&self) -> &[Var] {
        &self.data().params
    }

    pub fn body(&self) -> &Expr {
        &self.data().body
    }

    pub fn expr(&self) -> &Expr {
        &self.0
    }

    pub fn into_expr(self) -> Expr {
        self.0
    }

    /// This function with another body: parameters, types, attributes,
    /// span and checked type kept. The same node when `body` is its body.
    pub fn with_body(&self, body: Expr) -> Function {
        if body.ptr_eq(self.body()) {
            return self.clone();
        }
        Function(Expr::with_type(
            ExprKind::Function(Box::new(FunctionData {
                body,
                ..self.data().clone()
            })),
            self.0.span(),
            self.0.checked_type().cloned(),
        ))
    }

    /// A function attribute by key.
    pub fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.data().attrs.get(key)
    }

    /// Whether a function pass may visit this function: not for functions
    /// with a `Compiler` attribute, a non-zero `Extern` or a non-zero
    /// `SkipOptimization` (TVM's `AsOptimizableFunctionNode`).
    pub fn is_optimizable(&self) -> bool {
        let nonzero = |key: &str| self.attr(key).is_some_and(|v| v.as_int() != Some(0));
        self.attr("Compiler").is_none() && !nonzero("Extern") && !nonzero("SkipOptimization")
    }

    /// Whether the function is a fused primitive (`Primitive=1`).
    pub fn is_primitive(&self) -> bool {
        self.attr("Primitive")
            .is_some_and(|v| v.as_int() == Some(1))
    }
}

/// Dropping a chain of nodes one inside the other would recurse once per
/// level and overflow the stack on deep graphs; instead the children of a
/// node that is being freed are detached and freed from a worklist.
impl Drop for ExprNode {
    fn drop(&mut self) {
        // Leaves, and the nodes emptied below, have nothing to detach.
        if !has_children(&self.kind) {
            return;
        }
        let mut worklist = Vec::new();
        detach_children(&mut self.kind, &mut worklist);
        while let Some(mut expr) = worklist.pop() {
            // The last reference: empty the node in place (rather than
            // moving it out of its allocation) before it is freed.
            if let Some(node) = Arc::get_mut(&mut expr.0) {
                if has_children(&node.kind) {
                    detach_children(&mut node.kind, &mut worklist);
                }
            }
            // `expr` is dropped here, with no children left if it was the
            // last reference.
        }
    }
}

/// Whether a node has sub-expressions (`Tuple([])` is what a detached node
/// is left with).
fn has_children(kind: &ExprKind) -> bool {
    match kind {
        ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Constant(_)
        | ExprKind::Constructor(_)
        | ExprKind::Op(_) => false,
        ExprKind::Tuple(fields) => !fields.is_empty(),
        _ => true,
    }
}

fn detach_children(kind: &mut ExprKind, out: &mut Vec<Expr>) {
    match std::mem::replace(kind, ExprKind::Tuple(Vec::new())) {
        ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Constant(_)
        | ExprKind::Constructor(_)
        | ExprKind::Op(_) => {}
        ExprKind::Tuple(fields) => out.extend(fields),
        ExprKind::TupleGetItem { tuple, .. } => out.push(tuple),
        ExprKind::Call(call) => {
            out.push(call.callee);
            out.extend(call.args);
        }
        ExprKind::Let { var, value, body } => out.extend([var.0, value, body]),
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => out.extend([cond, then_branch, else_branch]),
        ExprKind::Function(f) => {
            out.extend(f.params.into_iter().map(|v| v.0));
            out.push(f.body);
        }
        ExprKind::Match { data, clauses, .. } => {
            out.push(data);
            for clause in clauses {
                out.push(clause.rhs);
                detach_pattern(clause.pattern, out);
            }
        }
        ExprKind::RefCreate(value) | ExprKind::RefRead(value) => out.push(value),
        ExprKind::RefWrite { reference, value } => out.extend([reference, value]),
    }
}

fn detach_pattern(pattern: Pattern, out: &mut Vec<Expr>) {
    match pattern {
        Pattern::Wildcard => {}
        Pattern::Var(var) => out.push(var.0),
        Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
            for field in fields {
                detach_pattern(field, out);
            }
        }
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;
    use crate::ty::TypeKind;
    use std::mem::size_of;

    /// An open 10 MB module holds ~130,000 expression nodes and ~190,000
    /// types twice (lowered and typed): a node is as large as the largest
    /// form of its enum, so a large, rare form (a function, a function
    /// type, a variable's virtual device) is boxed. Before, a node was 144
    /// bytes (a function's data inline) and a type 56. A node is held in
    /// an `Arc` (two counts, 16 bytes): at 80 bytes it is in mimalloc's
    /// 96-byte size class, at 88 in the 112-byte one (what a call's type
    /// arguments as a `Vec` instead of a boxed slice cost: 3.6 MB of the
    /// 10 MB module's lowered and typed nodes).
    #[test]
    fn nodes_and_types_stay_small() {
        println!(
            "ExprNode {} ExprKind {} VarData {} Call {} TypeKind {}",
            size_of::<ExprNode>(),
            size_of::<ExprKind>(),
            size_of::<VarData>(),
            size_of::<Call>(),
            size_of::<TypeKind>()
        );
        assert!(size_of::<ExprNode>() <= 80, "{}", size_of::<ExprNode>());
        assert!(size_of::<TypeKind>() <= 40, "{}", size_of::<TypeKind>());
    }
}
