//! The `*_like` rewrites of `SimplifyExpr`: an operator that takes its
//! output shape (or dtype) from another tensor is replaced by its explicit
//! form once type inference knows that shape statically, which drops the
//! dependency on the other tensor (`zeros_like(x)` → `zeros(shape=…)`,
//! `reshape_like(x, y)` → `reshape(x, newshape=…)`, `cast_like(x, y)` →
//! `cast(x, dtype=…)`, and so on).

use super::engine::{NodeMap, Pattern, PatternId, Rewrite};
use super::layout::static_shape_attr;
use super::{rewritten, tensor_type};
use relay_ir::build::{attrs_with, int32_vector_constant, op_call_with};
use relay_ir::{AttrValue, Expr};

/// Which `*_like` operator, and so what it becomes.
#[derive(Debug, Clone, Copy)]
pub(super) enum LikeOp {
    Zeros,
    Ones,
    Full,
    Reshape,
    CollapseSum,
    BroadcastTo,
}

impl LikeOp {
    fn name(self) -> &'static str {
        match self {
            LikeOp::Zeros => "zeros_like",
            LikeOp::Ones => "ones_like",
            LikeOp::Full => "full_like",
            LikeOp::Reshape => "reshape_like",
            LikeOp::CollapseSum => "collapse_sum_like",
            LikeOp::BroadcastTo => "broadcast_to_like",
        }
    }

    fn is_unary(self) -> bool {
        matches!(self, LikeOp::Zeros | LikeOp::Ones)
    }
}

/// A `*_like` call whose result type has a static shape becomes the
/// explicit-shape operator.
pub(super) struct ConcretizeLike {
    op: LikeOp,
    pattern: Pattern,
    data: PatternId,
    like: PatternId,
}

impl ConcretizeLike {
    pub(super) fn new(op: LikeOp) -> Self {
        let mut p = Pattern::default();
        let like = p.wildcard();
        let data = p.wildcard();
        let root = if op.is_unary() {
            p.op_call(op.name(), &[like])
        } else {
            p.op_call(op.name(), &[data, like])
        };
        ConcretizeLike {
            op,
            pattern: p.finish(root),
            data,
            like,
        }
    }
}

impl Rewrite for ConcretizeLike {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let ty = tensor_type(pre)?;
        let shape = static_shape_attr(&ty.shape)?;
        let dtype = AttrValue::DataType(ty.dtype);
        let init = |name: &str, args: Vec<Expr>| {
            op_call_with(
                name,
                args,
                &[("shape", shape.clone()), ("dtype", dtype.clone())],
            )
        };
        let data = || rewritten(nodes, self.data).cloned();
        Some(match self.op {
            LikeOp::Zeros => init("zeros", vec![]),
            LikeOp::Ones => init("ones", vec![]),
            // For `full_like` the second operand is the fill value.
            LikeOp::Full => init("full", vec![rewritten(nodes, self.like)?.clone()]),
            LikeOp::Reshape => op_call_with(
                "reshape",
                vec![data()?],
                &[("newshape", shape), ("allowzero", AttrValue::Bool(false))],
            ),
            LikeOp::CollapseSum => {
                let dims: Vec<i64> = ty.shape.iter().map(|d| d.as_int()).collect::<Option<_>>()?;
                let target = int32_vector_constant(&dims)?;
                let op = relay_ir::op::lookup("collapse_sum_to")?;
                let attrs = attrs_with("relay.attrs.InitOpAttrs", &[("shape", shape)]);
                Expr::call(Expr::op(op, None), vec![data()?, target], Some(attrs), None)
            }
            LikeOp::BroadcastTo => op_call_with("broadcast_to", vec![data()?], &[("shape", shape)]),
        })
    }
}

/// `cast_like(x, y)` becomes `cast(x, dtype=<y's dtype>)`, shape static or
/// not.
pub(super) struct ConcretizeCastLike {
    pattern: Pattern,
    data: PatternId,
}

impl ConcretizeCastLike {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let data = p.wildcard();
        let like = p.wildcard();
        let root = p.op_call("cast_like", &[data, like]);
        ConcretizeCastLike {
            pattern: p.finish(root),
            data,
        }
    }
}

impl Rewrite for ConcretizeCastLike {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let dtype = tensor_type(pre)?.dtype;
        let data = rewritten(nodes, self.data)?.clone();
        Some(op_call_with(
            "cast",
            vec![data],
            &[("dtype", AttrValue::DataType(dtype))],
        ))
    }
}
