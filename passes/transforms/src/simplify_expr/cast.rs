//! The cast and clip rewrites of `SimplifyExpr`: a cast to the dtype the
//! data already has disappears; two casts in a row become one when the
//! first only widens; `clip → cast → cast` back to the clip's dtype drops
//! both casts when the clip already keeps values inside the middle dtype;
//! a clip whose bounds cover the whole range of its dtype disappears; and
//! `argmax` / `argmin` / `argsort` of a dequantized tensor look at the
//! quantized tensor directly (dequantizing preserves order).

use super::engine::{NodeMap, Pattern, PatternId, Rewrite};
use super::{arg_type, rewritten, tensor_type};
use relay_ir::build::attrs_with;
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::{AttrValue, Call, Expr, ExprKind, Type};

/// `cast_like(data, like)` or `cast(data)` whose result dtype is the data's
/// becomes `data`.
pub(super) struct SimplifySameCast {
    pattern: Pattern,
    data: PatternId,
}

impl SimplifySameCast {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let data = p.wildcard();
        let like = p.wildcard();
        let cast_like = p.op_call("cast_like", &[data, like]);
        let cast = p.op_call("cast", &[data]);
        let root = p.any_of(&[cast_like, cast]);
        SimplifySameCast {
            pattern: p.finish(root),
            data,
        }
    }
}

impl Rewrite for SimplifySameCast {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let data_dtype = arg_type(pre, 0)?.as_tensor()?.dtype;
        let result_dtype = tensor_type(pre)?.dtype;
        (data_dtype == result_dtype).then(|| rewritten(nodes, self.data).cloned())?
    }
}

/// `cast(cast(data))` (either may be `cast_like`) becomes one cast of
/// `data` when the first cast loses nothing.
pub(super) struct SimplifyConsecutiveCast {
    pattern: Pattern,
    data: PatternId,
    first_cast: PatternId,
}

impl SimplifyConsecutiveCast {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let data = p.wildcard();
        let like = p.wildcard();
        let first_like = p.op_call("cast_like", &[data, like]);
        let first_cast = p.op_call("cast", &[data]);
        let first = p.any_of(&[first_like, first_cast]);
        let like = p.wildcard();
        let second_like = p.op_call("cast_like", &[first, like]);
        let second_cast = p.op_call("cast", &[first]);
        let root = p.any_of(&[second_like, second_cast]);
        SimplifyConsecutiveCast {
            pattern: p.finish(root),
            data,
            first_cast: first,
        }
    }
}

/// Whether casting `from` to `to` keeps every value: same kind and at least
/// as many bits, or a later kind in int → uint → float with at least as
/// many bits (never through bfloat16).
fn is_widening(from: DataType, to: DataType) -> bool {
    if from.code == to.code && from.bits <= to.bits {
        return true;
    }
    if from.code == TypeCode::BFloat || to.code == TypeCode::BFloat {
        return false;
    }
    from.code.to_u8() < to.code.to_u8() && from.bits <= to.bits
}

impl Rewrite for SimplifyConsecutiveCast {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, post: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let data = rewritten(nodes, self.data)?;
        let first = rewritten(nodes, self.first_cast)?;
        // The rewritten nodes keep the types they were matched with; a cast
        // built earlier in this same sweep carries the type given below.
        let data_type = data.checked_type()?.as_tensor()?.clone();
        let first_dtype = first.checked_type()?.as_tensor()?.dtype;
        if !is_widening(data_type.dtype, first_dtype) {
            return None;
        }
        let target = post
            .checked_type()
            .or(pre.checked_type())?
            .as_tensor()?
            .dtype;
        let op = relay_ir::op::lookup("cast")?;
        let attrs = attrs_with(
            "relay.attrs.CastAttrs",
            &[("dtype", AttrValue::DataType(target))],
        );
        let call = Call {
            callee: Expr::op(op, None),
            args: vec![data.clone()],
            attrs: Some(attrs),
            type_args: Box::default(),
        };
        let ty = Type::tensor(data_type.shape, target);
        Some(Expr::with_type(ExprKind::Call(call), None, Some(ty)))
    }
}

/// The range of `dtype` as TVM's `min_value` / `max_value` give it, `None`
/// where TVM cannot tell (it would abort).
fn dtype_range(dtype: DataType) -> Option<(f64, f64)> {
    let bits = u32::from(dtype.bits);
    match dtype.code {
        TypeCode::Int => match bits {
            64 => Some((i64::MIN as f64, i64::MAX as f64)),
            1..=63 => {
                let half = 1i64 << (bits - 1);
                Some((-half as f64, (half - 1) as f64))
            }
            _ => None,
        },
        TypeCode::UInt => match bits {
            1..=63 => Some((0.0, ((1u64 << bits) - 1) as f64)),
            _ => None,
        },
        TypeCode::Float => match bits {
            64 => Some((f64::MIN, f64::MAX)),
            32 => Some((f64::from(f32::MIN), f64::from(f32::MAX))),
            16 => Some((-65504.0, 65504.0)),
            _ => None,
        },
        TypeCode::BFloat => Some((f64::from(f32::MIN), f64::from(f32::MAX))),
        _ => Some((0.0, 0.0)),
    }
}

/// Whether clipping to `[a_min, a_max]` covers the whole range of `dtype`.
fn clip_covers(dtype: DataType, a_min: f64, a_max: f64) -> Option<bool> {
    let (lower, upper) = dtype_range(dtype)?;
    Some(a_max >= upper && a_min <= lower)
}

fn clip_bounds(call: &Expr) -> Option<(f64, f64)> {
    let attrs = call.as_call()?.attrs.as_ref()?;
    Some((attrs.get("a_min")?.as_f64()?, attrs.get("a_max")?.as_f64()?))
}

/// `cast(cast(clip(x)))` back to the clip's dtype becomes the clip when the
/// clip bounds already fit the middle dtype.
pub(super) struct SimplifyClipAndConsecutiveCast {
    pattern: Pattern,
    clip: PatternId,
    first_cast: PatternId,
}

impl SimplifyClipAndConsecutiveCast {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let clip = p.op_call("clip", &[x]);
        let first_cast = p.op_call("cast", &[clip]);
        let root = p.op_call("cast", &[first_cast]);
        SimplifyClipAndConsecutiveCast {
            pattern: p.finish(root),
            clip,
            first_cast,
        }
    }
}

impl Rewrite for SimplifyClipAndConsecutiveCast {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, post: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let clip = rewritten(nodes, self.clip)?;
        let first = rewritten(nodes, self.first_cast)?;
        let (a_min, a_max) = clip_bounds(clip)?;
        let clip_dtype = clip.checked_type()?.as_tensor()?.dtype;
        let first_dtype = first.checked_type()?.as_tensor()?.dtype;
        let target = post
            .checked_type()
            .or(pre.checked_type())?
            .as_tensor()?
            .dtype;
        (clip_dtype == target && clip_covers(first_dtype, a_min, a_max)?).then(|| clip.clone())
    }
}

/// `clip(x)` whose bounds cover its dtype's whole range becomes `x` (except
/// after `qnn.requantize` / `qnn.add`, whose form DNNL legalization needs).
pub(super) struct SimplifyClip {
    pattern: Pattern,
    x: PatternId,
}

impl SimplifyClip {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let root = p.op_call("clip", &[x]);
        SimplifyClip {
            pattern: p.finish(root),
            x,
        }
    }
}

impl Rewrite for SimplifyClip {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, post: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let dtype = tensor_type(pre)?.dtype;
        let (a_min, a_max) = clip_bounds(post)?;
        let input = post.as_call()?.args.first()?;
        if let Some(op) = input.as_call().and_then(|c| c.callee.as_op()) {
            if op.name == "qnn.requantize" || op.name == "qnn.add" {
                return None;
            }
        }
        if clip_covers(dtype, a_min, a_max)? {
            return rewritten(nodes, self.x).cloned();
        }
        None
    }
}

/// `op(qnn.dequantize(x, scale, zero_point))` for an order-only `op`
/// becomes `op(x)` with the same attributes.
pub(super) struct SimplifyDequantizeArg {
    pattern: Pattern,
    op: &'static str,
    x: PatternId,
}

impl SimplifyDequantizeArg {
    pub(super) fn new(op: &'static str) -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let scale = p.wildcard();
        let zero_point = p.wildcard();
        let dequantize = p.op_call("qnn.dequantize", &[x, scale, zero_point]);
        let root = p.op_call(op, &[dequantize]);
        SimplifyDequantizeArg {
            pattern: p.finish(root),
            op,
            x,
        }
    }
}

impl Rewrite for SimplifyDequantizeArg {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let call = pre.as_call()?;
        let op = relay_ir::op::lookup(self.op)?;
        let x = rewritten(nodes, self.x)?.clone();
        Some(Expr::call(
            Expr::op(op, None),
            vec![x],
            call.attrs.clone(),
            None,
        ))
    }
}
