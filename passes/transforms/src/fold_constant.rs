//! `FoldConstant(fold_qnn=false)`: TVM's constant folding
//! (`src/relay/transforms/fold_constant.cc`), a function pass at opt_level
//! 2 that requires nothing. Calls are evaluated with our own kernels
//! ([`relay_eval`]) instead of TVM's interpreter.
//!
//! The rewrite goes bottom-up over each function (iteratively: models are
//! chains of thousands of nodes), keeping every node it does not change:
//!
//! * A call is folded when its callee is an operator and every argument is
//!   a constant or a (nested) tuple of constants, either possibly wrapped in
//!   `on_device`. The result is a constant, or a tuple of constants for ops
//!   that return tuples, with its checked type set.
//! * Never folded: calls without arguments (`zeros(shape=…)` stays), calls
//!   of anything but an operator, stateful operators, non-computational
//!   operators (unless `fold_qnn` is on and the operator has a QNN
//!   canonicalisation), `device_copy`, `shape_of`, `vm.shape_of`,
//!   `ndarray_size`, and every call inside a function with `Primitive=1`.
//! * Except: `shape_of(x)`, `vm.shape_of(x)` and `ndarray_size(x)` are
//!   folded whatever `x` is when x's checked type (from before the rewrite)
//!   has a static shape; the value is computed as int32 and cast to the
//!   attrs' dtype. **Quirks kept:** `ndarray_size` of a rank-0 tensor is 0,
//!   and `shape_of` of a rank-0 tensor is a rank-0 constant (TVM's holds an
//!   uninitialised value; ours is 0).
//! * A `let` whose value becomes a constant (possibly in `on_device`) is
//!   dropped and the value substituted for the variable; an `if` whose
//!   condition is a constant becomes the branch its first byte selects; a
//!   projection out of a literal tuple (possibly in `on_device`, which is
//!   then kept around the field) becomes the field, constant or not.
//! * InferType runs afterwards (the function-pass infrastructure does it).
//!
//! **Deviation from TVM:** a call without arguments keeps its rewritten
//! callee. TVM v0.13 returns such a call as it was before the rewrite, so
//! in `let %s = add(1, 2); fn () { add(%s, %x) }()` the `let` is dropped
//! but `%s` stays inside the closure: an unbound variable.
//!
//! An operator without a kernel, or a call a kernel cannot evaluate, stays
//! as it is — silently, as a no-op; [`FoldStats`] lists them for tools and
//! tests.
//!
//! **Extension:** a call whose result would have more elements than a
//! limit stays unfolded, so folding cannot blow up a module with huge
//! constants (a `broadcast_to` of a scalar) nor allocate what a shape in the
//! text asks for (`full(1f, shape=[99999999999])`). The size is checked
//! from the call's checked type (and from the shape a kernel computes)
//! before anything is allocated. The limit is the config key
//! `relay.fold_constant.max_elements` (integer; unset, 0 or less: the
//! default, [`relay_ir::limits::DEFAULT_FOLD_MAX_ELEMENTS`], 16 Mi elements).
//! TVM v0.13 has no such limit.

use relay_eval::{self as eval, CallInfo, EvalError, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::op::OpDef;
use relay_ir::rewrite::{children, with_children};
use relay_ir::{Attrs, Dim, Expr, ExprKind, Function, IRModule, Type};
use relay_pass_manager::{ParamSpec, PassContext, PassSpec};
// The memo is consulted once or more per node: the fast hasher.
use relay_ir::fxhash::FxMap as HashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The configuration key of the optional size limit.
pub const MAX_ELEMENTS_CONFIG: &str = "relay.fold_constant.max_elements";

/// The QNN operators that have an `FTVMQnnCanonicalize` in TVM v0.13: with
/// `fold_qnn`, these are folded although they are non-computational.
const QNN_CANONICALIZED: &[&str] = &[
    "qnn.abs",
    "qnn.add",
    "qnn.avg_pool2d",
    "qnn.batch_matmul",
    "qnn.concatenate",
    "qnn.contrib_dense_pack",
    "qnn.conv2d",
    "qnn.dense",
    "qnn.dequantize",
    "qnn.erf",
    "qnn.exp",
    "qnn.hardswish",
    "qnn.leaky_relu",
    "qnn.log",
    "qnn.mul",
    "qnn.quantize",
    "qnn.requantize",
    "qnn.rsqrt",
    "qnn.sigmoid",
    "qnn.softmax",
    "qnn.sqrt",
    "qnn.subtract",
    "qnn.tanh",
];

/// Whether `op` has a QNN canonicalisation in TVM.
pub fn has_qnn_canonicalization(op: &str) -> bool {
    QNN_CANONICALIZED.contains(&op)
}

/// How to fold.
#[derive(Debug, Clone, Copy)]
pub struct FoldOptions {
    /// Fold QNN operators through their canonicalisation.
    pub fold_qnn: bool,
    /// Leave calls whose result has more elements than this unfolded.
    pub max_elements: u64,
}

impl Default for FoldOptions {
    fn default() -> FoldOptions {
        FoldOptions {
            fold_qnn: false,
            max_elements: relay_ir::limits::DEFAULT_FOLD_MAX_ELEMENTS,
        }
    }
}

impl FoldOptions {
    /// The options of a pass run: `fold_qnn` and the context's
    /// `relay.fold_constant.max_elements`.
    pub fn from_context(fold_qnn: bool, ctx: &PassContext) -> FoldOptions {
        let limit = ctx.config_int(MAX_ELEMENTS_CONFIG, 0);
        FoldOptions {
            fold_qnn,
            max_elements: u64::try_from(limit)
                .ok()
                .filter(|&n| n > 0)
                .unwrap_or(relay_ir::limits::DEFAULT_FOLD_MAX_ELEMENTS),
        }
    }
}

/// What a fold did: how many calls became constants, and which calls with
/// constant arguments stayed (by operator: why, and how often).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoldStats {
    pub folded: usize,
    /// Operators without a kernel, with the number of calls left.
    pub missing_kernels: BTreeMap<String, usize>,
    /// Calls a kernel could not evaluate: operator and reason.
    pub failed: BTreeMap<String, String>,
    /// Calls left because of `max_elements`.
    pub too_large: usize,
}

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("FoldConstant", 2)
        .param(ParamSpec::bool(
            "fold_qnn",
            false,
            "also fold QNN operators (through their canonicalisation) when their arguments are constants",
        ))
        .doc(
            "Evaluate calls of operators on constant arguments, substitute constant let \
             bindings, choose the branch of an if with a constant condition, and project \
             fields out of literal tuples",
        )
        .build(|args| {
            let fold_qnn = args.bool("fold_qnn");
            Ok(move |function: Function, _module: &IRModule, ctx: &PassContext| {
                let options = FoldOptions::from_context(fold_qnn, ctx);
                Ok(fold_constant_function(&function, &options).0)
            })
        })
}

/// Folds the constants of one function (TVM's `FoldConstantExpr` on it).
pub fn fold_constant_function(function: &Function, options: &FoldOptions) -> (Function, FoldStats) {
    let (expr, stats) = fold_constant_expr(function.expr(), options);
    let function = expr
        .as_function()
        .expect("folding a function gives a function");
    (function, stats)
}

/// Folds the constants of an expression.
pub fn fold_constant_expr(expr: &Expr, options: &FoldOptions) -> (Expr, FoldStats) {
    let mut folder = Folder {
        options: *options,
        memo: HashMap::default(),
        stats: FoldStats::default(),
    };
    let result = folder.run(expr);
    (result, folder.stats)
}

struct Folder {
    options: FoldOptions,
    /// Rewritten node for each visited original node, by address (the
    /// originals stay alive for the whole rewrite).
    memo: HashMap<usize, Expr>,
    stats: FoldStats,
}

enum Task {
    /// Visit a node (and, first, its children); `bool`: inside a primitive
    /// function.
    Visit(Expr, bool),
    /// All children are rewritten: rebuild the node.
    Build(Expr, bool),
    /// A let's value is rewritten: decide about its variable, then visit
    /// the body.
    LetBody(Expr, bool),
}

/// `AsIgnoringOnDevice`: the expression, or the body of an `on_device`
/// call around it.
fn ignoring_on_device(expr: &Expr) -> &Expr {
    on_device_body(expr).unwrap_or(expr)
}

/// The argument of an `on_device(…)` call.
fn on_device_body(expr: &Expr) -> Option<&Expr> {
    let call = expr.as_call()?;
    let op = call.callee.as_op()?;
    (op.name == "on_device" && call.args.len() == 1).then(|| &call.args[0])
}

fn is_simple_constant(expr: &Expr) -> bool {
    ignoring_on_device(expr).as_constant().is_some()
}

/// A constant, or a tuple (possibly in `on_device`) of such, recursively.
fn is_complex_constant(expr: &Expr) -> bool {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if is_simple_constant(e) {
            continue;
        }
        match ignoring_on_device(e).kind() {
            ExprKind::Tuple(fields) => stack.extend(fields),
            _ => return false,
        }
    }
    true
}

/// The value of a complex constant.
fn to_value(expr: &Expr) -> Value {
    let e = ignoring_on_device(expr);
    match e.kind() {
        ExprKind::Constant(data) => Value::Tensor(Arc::clone(data)),
        ExprKind::Tuple(fields) => Value::Tuple(fields.iter().map(to_value).collect()),
        _ => unreachable!("checked by is_complex_constant"),
    }
}

/// The type of a constant: its shape with int32 dimensions (as TVM's
/// `ConstantNode::tensor_type`).
fn constant_type(data: &TensorData) -> Type {
    Type::tensor(
        data.shape.iter().map(|&d| Dim::int32(d)).collect(),
        data.dtype,
    )
}

/// A value as an expression with its checked type. Like TVM's, the new
/// constants have no span.
fn value_to_expr(value: Value) -> Expr {
    let span = None;
    match value {
        Value::Tensor(data) => {
            let ty = constant_type(&data);
            Expr::with_type(ExprKind::Constant(data), span, Some(ty))
        }
        Value::Tuple(fields) => {
            let fields: Vec<Expr> = fields.into_iter().map(value_to_expr).collect();
            let ty = Type::tuple(
                fields
                    .iter()
                    .map(|f| f.checked_type().cloned().unwrap_or_else(Type::unit))
                    .collect(),
            );
            Expr::with_type(ExprKind::Tuple(fields), span, Some(ty))
        }
    }
}

impl Folder {
    fn get(&self, expr: &Expr) -> Expr {
        self.memo
            .get(&expr.addr())
            .cloned()
            .unwrap_or_else(|| expr.clone())
    }

    fn run(&mut self, root: &Expr) -> Expr {
        let mut stack = vec![Task::Visit(root.clone(), false)];
        while let Some(task) = stack.pop() {
            match task {
                Task::Visit(expr, prim) => {
                    if self.memo.contains_key(&expr.addr()) {
                        continue;
                    }
                    match expr.kind() {
                        ExprKind::Var(_)
                        | ExprKind::GlobalVar(_)
                        | ExprKind::Constant(_)
                        | ExprKind::Op(_)
                        | ExprKind::Constructor(_) => {
                            self.memo.insert(expr.addr(), expr.clone());
                        }
                        ExprKind::Let { value, .. } => {
                            let value = value.clone();
                            stack.push(Task::LetBody(expr, prim));
                            stack.push(Task::Visit(value, prim));
                        }
                        _ => {
                            let inner =
                                prim || expr.as_function().is_some_and(|f| f.is_primitive());
                            let kids: Vec<Expr> = children(&expr).into_iter().cloned().collect();
                            stack.push(Task::Build(expr, prim));
                            for child in kids.into_iter().rev() {
                                stack.push(Task::Visit(child, inner));
                            }
                        }
                    }
                }
                Task::LetBody(expr, prim) => {
                    let ExprKind::Let { var, value, body } = expr.kind() else {
                        unreachable!("a let")
                    };
                    let new_value = self.get(value);
                    if is_simple_constant(&new_value) {
                        // Substitute the value at every use.
                        self.memo.insert(var.expr().addr(), new_value);
                    } else {
                        self.memo
                            .entry(var.expr().addr())
                            .or_insert_with(|| var.expr().clone());
                    }
                    let body = body.clone();
                    stack.push(Task::Build(expr, prim));
                    stack.push(Task::Visit(body, prim));
                }
                Task::Build(expr, prim) => {
                    let result = self.build(&expr, prim);
                    self.memo.insert(expr.addr(), result);
                }
            }
        }
        self.get(root)
    }

    fn build(&mut self, pre: &Expr, prim: bool) -> Expr {
        if let ExprKind::Let { var, value, body } = pre.kind() {
            let new_value = self.get(value);
            let new_body = self.get(body);
            if is_simple_constant(&new_value) {
                // The binding is dropped.
                return new_body;
            }
            let new_var = self.get(var.expr());
            if new_var.ptr_eq(var.expr()) && new_value.ptr_eq(value) && new_body.ptr_eq(body) {
                return pre.clone();
            }
            return with_children(pre, &[new_var, new_value, new_body]);
        }
        let new_children: Vec<Expr> = children(pre).into_iter().map(|c| self.get(c)).collect();
        let post = with_children(pre, &new_children);
        match pre.kind() {
            ExprKind::Call(_) => {
                if prim {
                    pre.clone()
                } else {
                    self.fold_call(pre, post)
                }
            }
            ExprKind::If { .. } => {
                let ExprKind::If {
                    cond,
                    then_branch,
                    else_branch,
                } = post.kind()
                else {
                    return post;
                };
                match ignoring_on_device(cond).as_constant() {
                    Some(data) if !data.data.is_empty() => {
                        if data.data[0] != 0 {
                            then_branch.clone()
                        } else {
                            else_branch.clone()
                        }
                    }
                    _ => post,
                }
            }
            ExprKind::TupleGetItem { index, .. } => {
                let ExprKind::TupleGetItem { tuple, .. } = post.kind() else {
                    return post;
                };
                let ExprKind::Tuple(fields) = ignoring_on_device(tuple).kind() else {
                    return post;
                };
                let Some(field) = fields.get(*index).cloned() else {
                    return post;
                };
                match tuple.as_call() {
                    // (on_device((x, y), …)).1 ==> on_device(y, …)
                    Some(wrapper) if on_device_body(tuple).is_some() => {
                        maybe_on_device(field, wrapper.callee.clone(), wrapper.attrs.clone())
                    }
                    _ => field,
                }
            }
            _ => post,
        }
    }

    /// `Rewrite_(const CallNode*)` of TVM's `ConstantFolder`.
    fn fold_call(&mut self, pre: &Expr, post: Expr) -> Expr {
        let Some(call) = post.as_call() else {
            return post;
        };
        if call.args.is_empty() {
            // TVM returns the call as it was before its children were
            // rewritten; for a closure called without arguments that drops
            // the substitutions made inside it, leaving variables whose
            // `let`s were removed (an ill-formed module). We keep the
            // rewritten call.
            return if call.callee.as_op().is_some() {
                pre.clone()
            } else {
                post
            };
        }
        let Some(op) = call.callee.as_op() else {
            return post;
        };
        if op.stateful {
            return post;
        }
        if let Some(folded) = self.evaluate_shape_of(pre, op) {
            return folded;
        }
        if op.non_computational && !(self.options.fold_qnn && has_qnn_canonicalization(&op.name)) {
            return post;
        }
        if matches!(
            op.name.as_str(),
            "device_copy" | "shape_of" | "vm.shape_of" | "ndarray_size"
        ) {
            return post;
        }
        if !call.args.iter().all(is_complex_constant) {
            return post;
        }
        let args: Vec<Value> = call.args.iter().map(to_value).collect();
        let info = CallInfo {
            op: &op.name,
            attrs: call.attrs.as_ref(),
            ret_type: pre.checked_type(),
            max_elements: self.options.max_elements,
        };
        match eval::eval_call(&info, &args) {
            Ok(value) => {
                // Kernels check the sizes they compute; a call without a
                // checked type may still give more (a tuple's fields).
                if u64::try_from(value.num_elements())
                    .map_or(true, |n| n > self.options.max_elements)
                {
                    self.stats.too_large += 1;
                    return post;
                }
                self.stats.folded += 1;
                value_to_expr(value)
            }
            Err(EvalError::NoKernel(name)) => {
                *self.stats.missing_kernels.entry(name).or_default() += 1;
                post
            }
            Err(EvalError::TooLarge(_)) => {
                self.stats.too_large += 1;
                post
            }
            Err(EvalError::Unsupported(why)) => {
                self.stats.failed.entry(op.name.clone()).or_insert(why);
                post
            }
        }
    }

    /// `EvaluateShapeOf` / `EvaluateNdarraySize`, on the original call (its
    /// argument still has its checked type).
    fn evaluate_shape_of(&mut self, pre: &Expr, op: &OpDef) -> Option<Expr> {
        let is_shape_of = matches!(op.name.as_str(), "shape_of" | "vm.shape_of");
        if !is_shape_of && op.name != "ndarray_size" {
            return None;
        }
        let call = pre.as_call()?;
        if call.args.len() != 1 {
            return None;
        }
        let dtype = call_dtype(call.attrs.as_ref())?;
        let shape = constant_shape(&call.args[0])?;
        let value = if is_shape_of {
            if shape.is_empty() {
                TensorData::zeros(DataType::INT32, Vec::new()).ok()?
            } else {
                let dims: Vec<i64> = shape.iter().map(|&d| i64::from(d as i32)).collect();
                TensorData::from_i64s(DataType::INT32, vec![dims.len() as i64], &dims).ok()?
            }
        } else {
            let size = if shape.is_empty() {
                0
            } else {
                shape
                    .iter()
                    .fold(1i32, |acc, &d| acc.wrapping_mul(d as i32))
            };
            TensorData::from_i64s(DataType::INT32, Vec::new(), &[i64::from(size)]).ok()?
        };
        let value = eval::cast_tensor(&value, dtype).ok()?;
        self.stats.folded += 1;
        Some(value_to_expr(Value::tensor(value)))
    }
}

/// The `dtype` attribute of `shape_of` / `ndarray_size`.
fn call_dtype(attrs: Option<&Attrs>) -> Option<DataType> {
    CallInfo::new("shape_of", attrs)
        .dtype("dtype")
        .ok()
        .flatten()
}

/// `GetConstantShape`: the static shape of a constant (possibly in
/// `on_device`) or of an expression's checked tensor type.
fn constant_shape(input: &Expr) -> Option<Vec<i64>> {
    if let Some(data) = ignoring_on_device(input).as_constant() {
        return Some(data.shape.clone());
    }
    let tensor = input.checked_type()?.as_tensor()?;
    tensor.shape.iter().map(Dim::as_int).collect()
}

/// `MaybeOnDevice`: wraps `body` in the same `on_device` call, except
/// atomic expressions, whose device is known from elsewhere.
fn maybe_on_device(body: Expr, callee: Expr, attrs: Option<Attrs>) -> Expr {
    match body.kind() {
        ExprKind::Op(_)
        | ExprKind::Constructor(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Var(_)
        | ExprKind::Function(_) => body,
        _ => {
            let span = body.span();
            let ty = body.checked_type().cloned();
            Expr::with_type(
                ExprKind::Call(relay_ir::Call {
                    callee,
                    args: vec![body],
                    attrs,
                    type_args: Box::default(),
                }),
                span,
                ty,
            )
        }
    }
}

#[cfg(test)]
mod tests;
