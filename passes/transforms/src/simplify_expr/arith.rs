//! The arithmetic rewrites of `SimplifyExpr`: `x + x` to `x * 2`,
//! `x / sqrt(y)` to `x * rsqrt(y)`, removal of additions of zero and
//! multiplications by one, folding of `full`/`ones`/`zeros` operands of
//! broadcasting operators into scalars, moving a constant multiplication
//! before a constant addition, merging two constant additions or
//! multiplications, and factoring `a·x² + b·xy + c·y²` into
//! `a·(x + p·y)·(x + q·y)`.

use super::engine::{NodeMap, Pattern, PatternId, Rewrite};
use super::{arg_type, op_name, rewritten, tensor_type};
use crate::fold_constant::{fold_constant_expr, FoldOptions};
use relay_ir::build::{op_call, scalar_constant, scalar_constant_f64};
use relay_ir::dtype::DataType;
use relay_ir::equal::types_equal;
use relay_ir::rewrite::rewrite_post_order;
use relay_ir::{Expr, ExprKind};

/// TVM's `FoldConstantExpr` on a small constant expression (QNN folding on,
/// as that helper's default is).
fn fold(expr: Expr) -> Expr {
    let options = FoldOptions {
        fold_qnn: true,
        ..FoldOptions::default()
    };
    fold_constant_expr(&expr, &options).0
}

/// `add(x, x)` becomes `multiply(x, 2)`.
pub(super) struct SimplifyAdd {
    pattern: Pattern,
    x: PatternId,
    y: PatternId,
}

impl SimplifyAdd {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let y = p.wildcard();
        let root = p.op_call("add", &[x, y]);
        SimplifyAdd {
            pattern: p.finish(root),
            x,
            y,
        }
    }
}

impl Rewrite for SimplifyAdd {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let dtype = tensor_type(pre)?.dtype;
        let x = rewritten(nodes, self.x)?;
        let y = rewritten(nodes, self.y)?;
        if !x.ptr_eq(y) {
            return None;
        }
        let two = scalar_constant(dtype, 2.0)?;
        Some(op_call("multiply", vec![detached_copy(x), two]))
    }
}

/// A copy of `expr` that shares no calls, tuples, projections or
/// constants with the graph it came from (variables and operators stay).
///
/// TVM types the product `x * 2` on its own before returning it, and its
/// type inference copies every node it annotates that is referenced from
/// elsewhere; so when `x` is also used outside the addition, TVM's result
/// holds a second copy of `x`'s computation, which the printer shows.
fn detached_copy(expr: &Expr) -> Expr {
    rewrite_post_order(expr, |_, post| match post.kind() {
        ExprKind::Call(call) => Expr::call(
            call.callee.clone(),
            call.args.clone(),
            call.attrs.clone(),
            post.span(),
        ),
        ExprKind::Tuple(fields) => Expr::tuple(fields.clone(), post.span()),
        ExprKind::TupleGetItem { tuple, index } => {
            Expr::tuple_get_item(tuple.clone(), *index, post.span())
        }
        ExprKind::Constant(data) => Expr::new(ExprKind::Constant(data.clone()), post.span()),
        _ => post,
    })
}

/// `divide(n, sqrt(x))` becomes `multiply(n, rsqrt(x))`.
pub(super) struct SimplifyRSqrt {
    pattern: Pattern,
    x: PatternId,
    numerator: PatternId,
}

impl SimplifyRSqrt {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let numerator = p.wildcard();
        let sqrt = p.op_call("sqrt", &[x]);
        let root = p.op_call("divide", &[numerator, sqrt]);
        SimplifyRSqrt {
            pattern: p.finish(root),
            x,
            numerator,
        }
    }
}

impl Rewrite for SimplifyRSqrt {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, _: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let x = rewritten(nodes, self.x)?.clone();
        let numerator = rewritten(nodes, self.numerator)?.clone();
        Some(op_call(
            "multiply",
            vec![numerator, op_call("rsqrt", vec![x])],
        ))
    }
}

/// `x + 0`, `x - 0`, `x * 1`, `x / 1` (with `zeros`, `ones`, their `_like`
/// forms, or a scalar constant) become `x` when that keeps the result type.
pub(super) struct EliminateIdentity {
    pattern: Pattern,
    x: PatternId,
    constant: PatternId,
}

impl EliminateIdentity {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let constant = p.constant();
        let zeros = p.op_call("zeros", &[]);
        let like_data = p.wildcard();
        let zeros_like = p.op_call("zeros_like", &[like_data]);
        let zeros_expr = p.any_of(&[zeros, zeros_like, constant]);
        let ones = p.op_call("ones", &[]);
        let like_data = p.wildcard();
        let ones_like = p.op_call("ones_like", &[like_data]);
        let ones_expr = p.any_of(&[ones, ones_like, constant]);
        let add = p.op_call("add", &[x, zeros_expr]);
        let mul = p.op_call("multiply", &[x, ones_expr]);
        let sub = p.op_call("subtract", &[x, zeros_expr]);
        let div = p.op_call("divide", &[x, ones_expr]);
        let root = p.any_of(&[add, mul, sub, div]);
        EliminateIdentity {
            pattern: p.finish(root),
            x,
            constant,
        }
    }
}

/// Whether `constant` is a scalar (every dimension 1) equal to the identity
/// of `op`; unreadable dtypes are not.
fn is_identity_constant(op: &str, constant: &Expr) -> bool {
    let Some(data) = constant.as_constant() else {
        return false;
    };
    if data.shape.iter().any(|&d| d != 1) {
        return false;
    }
    let readable = data.dtype.is_int()
        || data.dtype.is_uint()
        || data.dtype.is_bool()
        || (data.dtype.is_float() && matches!(data.dtype.bits, 16 | 32 | 64));
    if !readable {
        return false;
    }
    let Ok(value) = data.get_f64(0) else {
        return false;
    };
    match op {
        "add" | "subtract" => value == 0.0,
        "multiply" | "divide" => value == 1.0,
        _ => false,
    }
}

/// Which argument of the matched binary call is the kept operand `x`:
/// `true` when it is the second (the rewritten call's second argument is
/// `x`).
fn x_is_second(post: &Expr, x: &Expr) -> Option<bool> {
    Some(post.as_call()?.args.get(1)?.ptr_eq(x))
}

impl Rewrite for EliminateIdentity {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, post: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let pre_type = pre.checked_type()?;
        tensor_type(pre)?;
        let x = rewritten(nodes, self.x)?;
        let x_type = arg_type(pre, if x_is_second(post, x)? { 1 } else { 0 })?;
        if let Some(constant) = rewritten(nodes, self.constant) {
            if !is_identity_constant(op_name(pre)?, constant) {
                return None;
            }
        }
        types_equal(x_type, pre_type).then(|| x.clone())
    }
}

/// A broadcasting operator with a `full`, `ones` or `zeros` operand (or
/// their `_like` forms) of the result's shape takes the fill value as a
/// scalar instead.
pub(super) struct FullElementwise {
    pattern: Pattern,
    x: PatternId,
    value: PatternId,
    full: PatternId,
    ones: PatternId,
    zeros: PatternId,
}

impl FullElementwise {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let data = p.wildcard();
        let value = p.constant();
        let full_op = p.op_call("full", &[value]);
        let full_like = p.op_call("full_like", &[data, value]);
        let full = p.any_of(&[full_op, full_like]);
        let ones_op = p.op_call("ones", &[]);
        let ones_like = p.op_call("ones_like", &[data]);
        let ones = p.any_of(&[ones_op, ones_like]);
        let zeros_op = p.op_call("zeros", &[]);
        let zeros_like = p.op_call("zeros_like", &[data]);
        let zeros = p.any_of(&[zeros_op, zeros_like]);
        let op = p.broadcast_op();
        let filled = p.any_of(&[full, ones, zeros]);
        let left = p.call(op, &[filled, x]);
        let right = p.call(op, &[x, filled]);
        let root = p.any_of(&[left, right]);
        FullElementwise {
            pattern: p.finish(root),
            x,
            value,
            full,
            ones,
            zeros,
        }
    }
}

impl Rewrite for FullElementwise {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, post: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let call = pre.as_call()?;
        let pre_type = pre.checked_type()?;
        let dtype = tensor_type(pre)?.dtype;
        let x = rewritten(nodes, self.x)?;
        let x_second = x_is_second(post, x)?;
        let x_type = arg_type(pre, if x_second { 1 } else { 0 })?;
        if !types_equal(x_type, pre_type) {
            return None;
        }
        let value = if nodes.contains_key(&self.full) {
            let value = rewritten(nodes, self.value)?;
            // TVM insists the fill value is a scalar constant.
            if value.as_constant()?.ndim() != 0 {
                return None;
            }
            value.clone()
        } else if nodes.contains_key(&self.ones) {
            scalar_constant(dtype, 1.0)?
        } else if nodes.contains_key(&self.zeros) {
            scalar_constant(dtype, 0.0)?
        } else {
            return None;
        };
        let args = if x_second {
            vec![value, x.clone()]
        } else {
            vec![x.clone(), value]
        };
        Some(Expr::call(
            call.callee.clone(),
            args,
            call.attrs.clone(),
            pre.span(),
        ))
    }
}

/// `(x + c1) * c2` becomes `x * c2 + (c1 * c2)`, the constant product
/// folded, so scale folding sees the multiplication first.
pub(super) struct SwitchAddMultiply {
    pattern: Pattern,
    x: PatternId,
    c1: PatternId,
    c2: PatternId,
}

impl SwitchAddMultiply {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let c1 = p.constant();
        let c2 = p.constant();
        let add = p.op_call("add", &[x, c1]);
        let root = p.op_call("multiply", &[add, c2]);
        SwitchAddMultiply {
            pattern: p.finish(root),
            x,
            c1,
            c2,
        }
    }
}

impl Rewrite for SwitchAddMultiply {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, _: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let x = rewritten(nodes, self.x)?;
        let c1 = rewritten(nodes, self.c1)?.clone();
        let c2 = rewritten(nodes, self.c2)?.clone();
        if x.as_constant().is_some() {
            return None;
        }
        let product = fold(op_call("multiply", vec![c1, c2.clone()]));
        Some(op_call(
            "add",
            vec![op_call("multiply", vec![x.clone(), c2]), product],
        ))
    }
}

/// `x * c1 * c2` and `x + c1 + c2` become `x * (c1 * c2)` and
/// `x + (c1 + c2)`, the constant part folded.
pub(super) struct SimplifyAdjacentMultiplyOrAdd {
    pattern: Pattern,
    x: PatternId,
    c1: PatternId,
    c2: PatternId,
}

impl SimplifyAdjacentMultiplyOrAdd {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let c1 = p.constant();
        let c2 = p.constant();
        let inner_mul = p.op_call("multiply", &[x, c1]);
        let mul = p.op_call("multiply", &[inner_mul, c2]);
        let inner_add = p.op_call("add", &[x, c1]);
        let add = p.op_call("add", &[inner_add, c2]);
        let root = p.any_of(&[mul, add]);
        SimplifyAdjacentMultiplyOrAdd {
            pattern: p.finish(root),
            x,
            c1,
            c2,
        }
    }
}

impl Rewrite for SimplifyAdjacentMultiplyOrAdd {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let op = pre.as_call()?.callee.clone();
        let x = rewritten(nodes, self.x)?;
        let c1 = rewritten(nodes, self.c1)?.clone();
        let c2 = rewritten(nodes, self.c2)?.clone();
        if x.as_constant().is_some() {
            return None;
        }
        let combined = fold(Expr::call(op.clone(), vec![c1, c2], None, None));
        Some(Expr::call(op, vec![x.clone(), combined], None, None))
    }
}

/// `a·x·x + b·x·y + c·y·y` (in any of the orders TVM lists, each
/// coefficient optional) becomes `a·((x + p·y)·(x + q·y))` with `p`, `q` the
/// roots of `a·t² − b·t + c`, when they are real.
pub(super) struct SimplifyBinomial {
    pattern: Pattern,
    x: PatternId,
    y: PatternId,
    a: PatternId,
    b: PatternId,
    c: PatternId,
}

impl SimplifyBinomial {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let y = p.wildcard();
        let a = p.constant();
        let b = p.constant();
        let c = p.constant();
        // `coef * (u * v)`, `u * (coef * v)`, and so on, as TVM spells them.
        let mul = |p: &mut Pattern, l: PatternId, r: PatternId| p.op_call("multiply", &[l, r]);
        let xx = mul(&mut p, x, x);
        let a_xx = mul(&mut p, a, xx);
        let ax = mul(&mut p, a, x);
        let x_ax = mul(&mut p, x, ax);
        let xx_plain = mul(&mut p, x, x);
        let x_sq = p.any_of(&[a_xx, x_ax, xx_plain]);
        let xy = mul(&mut p, x, y);
        let b_xy = mul(&mut p, b, xy);
        let by = mul(&mut p, b, y);
        let x_by = mul(&mut p, x, by);
        let bx = mul(&mut p, b, x);
        let y_bx = mul(&mut p, y, bx);
        let xy_plain = mul(&mut p, x, y);
        let xy_term = p.any_of(&[b_xy, x_by, y_bx, xy_plain]);
        let yy = mul(&mut p, y, y);
        let c_yy = mul(&mut p, c, yy);
        let cy = mul(&mut p, c, y);
        let y_cy = mul(&mut p, y, cy);
        let yy_plain = mul(&mut p, y, y);
        let y_sq = p.any_of(&[c_yy, y_cy, yy_plain]);
        let add = |p: &mut Pattern, l: PatternId, r: PatternId| p.op_call("add", &[l, r]);
        let first_inner = add(&mut p, xy_term, x_sq);
        let first = add(&mut p, first_inner, y_sq);
        let second_inner = add(&mut p, xy_term, y_sq);
        let second = add(&mut p, second_inner, x_sq);
        let third_inner = add(&mut p, x_sq, y_sq);
        let third = add(&mut p, third_inner, xy_term);
        let root = p.any_of(&[first, second, third]);
        SimplifyBinomial {
            pattern: p.finish(root),
            x,
            y,
            a,
            b,
            c,
        }
    }

    /// A matched coefficient as TVM reads it: the first element
    /// reinterpreted in the call's dtype, for int32, float32 and float64
    /// calls only; 1 otherwise.
    fn coefficient(nodes: &NodeMap, id: PatternId, dtype: DataType) -> f64 {
        let readable = [DataType::INT32, DataType::FLOAT32, DataType::float(64)];
        let value = rewritten(nodes, id)
            .and_then(|c| c.as_constant())
            .filter(|data| data.dtype == dtype && readable.contains(&dtype))
            .and_then(|data| data.get_f64(0).ok());
        value.unwrap_or(1.0)
    }
}

impl Rewrite for SimplifyBinomial {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let dtype = tensor_type(pre)?.dtype;
        let mut x = rewritten(nodes, self.x)?.clone();
        let mut y = rewritten(nodes, self.y)?.clone();
        let mut a = Self::coefficient(nodes, self.a, dtype);
        let b = Self::coefficient(nodes, self.b, dtype);
        let mut c = Self::coefficient(nodes, self.c, dtype);
        if c == 1.0 && a > 1.0 {
            std::mem::swap(&mut x, &mut y);
            // TVM parks the old `a` in a C++ float on the way.
            let old_a = f64::from(a as f32);
            a = c;
            c = old_a;
        }
        let discriminant_sq = b * b - 4.0 * a * c;
        if discriminant_sq < 0.0 {
            // TVM hands back the unrewritten original node here.
            return Some(pre.clone());
        }
        let same_roots = discriminant_sq < 10e-5;
        let discriminant = discriminant_sq.sqrt();
        let first_root = scalar_constant_f64(dtype, (b + discriminant) / (2.0 * a))?;
        let factor = |root: Expr| {
            op_call(
                "add",
                vec![x.clone(), op_call("multiply", vec![y.clone(), root])],
            )
        };
        let first = factor(first_root);
        let second = if same_roots {
            first.clone()
        } else {
            factor(scalar_constant_f64(dtype, (b - discriminant) / (2.0 * a))?)
        };
        let leading = scalar_constant_f64(dtype, a)?;
        Some(op_call(
            "multiply",
            vec![leading, op_call("multiply", vec![first, second])],
        ))
    }
}
