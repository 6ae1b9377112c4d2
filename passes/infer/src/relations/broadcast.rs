//! Broadcasting relations: `BroadcastRel` and `BroadcastCompRel` (every
//! elementwise binary operator; `src/relay/op/type_relations.cc`),
//! `WhereRel`, `BroadCastToRel`, `BroadCastToLikeRel`, `CollapseSumLikeRel`
//! and `CollapseSumToRel` (`src/relay/op/tensor/transform.cc`).
//!
//! Shapes are aligned from the right; for each pair `(s1, s2)` the result is
//! `s2` if `s1` is the constant 1, `s1` if `s2` is 1, `s2` if `s1` is `?`,
//! `s1` if `s2` is `?`, `s1` if both are provably equal, and otherwise the
//! error "Incompatible broadcast type A and B". The leading dimensions of
//! the longer shape are copied. Dimensions are copied, so they keep their
//! dtypes (`add(Tensor[(1), f32], Tensor[(1i64), f32])` has shape `(1i64)`).

use super::display;
use super::shape::{equal_check, equal_const_int, is_any};
use super::{check, error, relations, tensor, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::{Dim, TensorType, Type};

relations! {
    /// `BroadcastRel`: numpy broadcasting, the first input's dtype.
    "Broadcast" => broadcast_rel;
    /// `BroadcastCompRel`: numpy broadcasting, dtype `bool`.
    "BroadcastComp" => broadcast_comp_rel;
    /// `WhereRel`: `broadcast(condition, broadcast(x, y))`.
    "Where" => where_rel;
    /// `BroadCastToRel`: `Tensor[shape attribute, data dtype]`, checked by
    /// broadcasting the data against it.
    "BroadCastTo" => broadcast_to_rel;
    /// `BroadCastToLikeRel`: the second input's type, checked by
    /// broadcasting.
    "BroadCastToLike" => broadcast_to_like_rel;
    /// `CollapseSumLikeRel`: the second input's type; the first must
    /// broadcast to itself against it.
    "CollapseSumLike" => collapse_sum_like_rel;
    /// `CollapseSumToRel`: `Tensor[shape attribute (or `?` per element of
    /// the shape input), data dtype]`.
    "CollapseSumTo" => collapse_sum_to_rel;
}

/// `ConcreteBroadcast(t1, t2, output_dtype)`.
pub fn concrete_broadcast(
    t1: &TensorType,
    t2: &TensorType,
    dtype: DataType,
) -> Result<Type, RelationError> {
    let (n1, n2) = (t1.shape.len(), t2.shape.len());
    let mut out: Vec<Dim> = Vec::with_capacity(n1.max(n2));
    for i in 1..=n1.min(n2) {
        let s1 = &t1.shape[n1 - i];
        let s2 = &t2.shape[n2 - i];
        let dim = if equal_const_int(s1, 1) {
            s2
        } else if equal_const_int(s2, 1) {
            s1
        } else if is_any(s1) {
            s2
        } else if is_any(s2) || equal_check(s1, s2) {
            // `s2` is `?`, or both are provably equal.
            s1
        } else {
            return Err(RelationError::new(format!(
                "Incompatible broadcast type {} and {}",
                display::ty(&Type::tensor(t1.shape.clone(), t1.dtype)),
                display::ty(&Type::tensor(t2.shape.clone(), t2.dtype)),
            )));
        };
        out.push(dim.clone());
    }
    let longer = if n1 > n2 { &t1.shape } else { &t2.shape };
    let max = n1.max(n2);
    for i in n1.min(n2) + 1..=max {
        out.push(longer[max - i].clone());
    }
    out.reverse();
    Ok(tensor(out, dtype))
}

/// The shared body of `BroadcastRel` and `BroadcastCompRel` on slots
/// `[lhs, rhs, out]`.
fn broadcast_impl(ctx: &mut Ctx, comparison: bool) -> Step {
    let (Some(t0), Some(t1)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    if t0.dtype != t1.dtype {
        // TVM emits this and carries on; it is an error all the same.
        let rel = if comparison {
            "BroadcastCompRel"
        } else {
            "BroadcastRel"
        };
        return error(format!(
            "data types {} and {} do not match in {rel}",
            t0.dtype, t1.dtype
        ));
    }
    let dtype = if comparison {
        DataType::bool()
    } else {
        t0.dtype
    };
    let out = concrete_broadcast(&t0, &t1, dtype)?;
    ctx.assign(2, out);
    Ok(true)
}

pub(crate) fn broadcast_rel(ctx: &mut Ctx) -> Step {
    broadcast_impl(ctx, false)
}

fn broadcast_comp_rel(ctx: &mut Ctx) -> Step {
    broadcast_impl(ctx, true)
}

fn where_rel(ctx: &mut Ctx) -> Step {
    let (Some(cond), Some(x), Some(y)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)) else {
        return Ok(false);
    };
    check(x.dtype == y.dtype, || {
        format!(
            "x and y must have the same dtype: {} vs {}",
            x.dtype, y.dtype
        )
    })?;
    let xy = concrete_broadcast(&x, &y, x.dtype)?;
    let xy = xy.as_tensor().cloned().expect("a tensor");
    let out = concrete_broadcast(&cond, &xy, xy.dtype)?;
    ctx.assign(3, out);
    Ok(true)
}

/// `BroadcastRel({a, b, target})` where the nested relation's result goes
/// to our slot `target`.
fn nested_broadcast(ctx: &mut Ctx, a: Type, b: Type, target: usize) -> Step {
    ctx.nested_with(
        vec![a, b, Type::incomplete()],
        &[0, 0, target],
        broadcast_rel,
    )
}

fn broadcast_to_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(0, "Broadcast: expect to be TensorType but get ")? else {
        return Ok(false);
    };
    let Some(shape) = ctx.attrs.dims("shape")? else {
        return error("shape of broadcast_to is not defined (Optional has no value)");
    };
    ctx.assign(1, tensor(shape, data.dtype));
    // TVM then runs `BroadcastRel({types[0], types[1], types[1]})` on its
    // argument array, where the output is the type it had when the
    // relation was called: incomplete on the first run, so the relation
    // waits with the attribute's shape assigned, and the broadcast is
    // checked only if something else changes its types later.
    nested_broadcast(ctx, ctx.ty(0).clone(), ctx.ty(1).clone(), 1)
}

fn broadcast_to_like_rel(ctx: &mut Ctx) -> Step {
    if ctx.tensor(0).is_none() || ctx.tensor(1).is_none() {
        return Ok(false);
    }
    let like = ctx.ty(1).clone();
    ctx.assign(2, like.clone());
    nested_broadcast(ctx, ctx.ty(0).clone(), like, 1)
}

fn collapse_sum_like_rel(ctx: &mut Ctx) -> Step {
    if ctx.tensor(0).is_none() || ctx.tensor(1).is_none() {
        return Ok(false);
    }
    let like = ctx.ty(1).clone();
    ctx.assign(2, like.clone());
    nested_broadcast(ctx, ctx.ty(0).clone(), like, 0)
}

fn collapse_sum_to_rel(ctx: &mut Ctx) -> Step {
    // TVM dereferences both inputs as tensors without checking.
    let (Some(data), Some(target)) = (ctx.tensor(0), ctx.tensor(1)) else {
        if ctx.is_incomplete(0) || ctx.is_incomplete(1) {
            return Ok(false);
        }
        return error("collapse_sum_to: expect both inputs to be tensors");
    };
    let rank = target
        .shape
        .first()
        .and_then(super::shape::const_int)
        .ok_or_else(|| RelationError::new("Parameter must have static rank"))?;
    let shape = match ctx.attrs.dims("shape")? {
        Some(dims) => dims,
        None => vec![Dim::Any; rank.max(0) as usize],
    };
    ctx.assign(2, tensor(shape, data.dtype));
    // As in `broadcast_to_rel`: TVM's nested `BroadcastRel` sees the output
    // as it was when the relation was called.
    nested_broadcast(ctx, ctx.ty(0).clone(), ctx.ty(2).clone(), 0)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, Type};

    #[test]
    fn numpy_rules_and_dtypes() {
        assert_eq!(
            solve_out("add", &[t(&[2, 3], "float32"), t(&[3], "float32")], &[]),
            t(&[2, 3], "float32")
        );
        assert_eq!(
            solve_out("add", &[t(&[1], "float32"), t64(&[1], "float32")], &[]),
            t64(&[1], "float32")
        );
        assert_eq!(
            solve_out("less", &[t(&[4, 1], "int32"), t(&[5], "int32")], &[]),
            t(&[4, 5], "bool")
        );
        let any = td(vec![Dim::Any, Dim::int32(3)], "float32");
        assert_eq!(
            solve_out("multiply", &[any, t(&[7, 1], "float32")], &[]),
            t(&[7, 3], "float32")
        );
        // (2, 1i64, 2, 2) + (2i64, 1i64, 2i64, 2i64): the first wins on ties.
        let a = td(
            vec![Dim::int32(2), Dim::int64(1), Dim::int32(2), Dim::int32(2)],
            "float32",
        );
        assert_eq!(
            solve_out("add", &[a.clone(), t64(&[2, 1, 2, 2], "float32")], &[]),
            a
        );
    }

    #[test]
    fn broadcast_errors_and_waiting() {
        assert_eq!(
            fails("add", &[t(&[2, 3], "float32"), t(&[4], "float32")], &[]),
            "Incompatible broadcast type Tensor[(2, 3), float32] and Tensor[(4), float32]"
        );
        assert_eq!(
            fails("add", &[t(&[2], "float32"), t(&[2], "int32")], &[]),
            "data types float32 and int32 do not match in BroadcastRel"
        );
        assert!(waits("add", &[Type::incomplete(), t(&[2], "float32")], &[]));
    }

    #[test]
    fn where_and_broadcast_to() {
        assert_eq!(
            solve_out(
                "where",
                &[t(&[3, 1], "bool"), t(&[4], "float32"), t(&[], "float32")],
                &[]
            ),
            t(&[3, 4], "float32")
        );
        // On its first run TVM's relation assigns the attribute's shape and
        // waits (its nested broadcast sees the output still incomplete):
        // an incompatible shape is not reported then.
        assert_eq!(
            pending(
                "broadcast_to",
                &[t(&[1, 1], "float32")],
                &[("shape", ints64(&[1, 1]))]
            ),
            vec![(1, t64(&[1, 1], "float32"))]
        );
        assert_eq!(
            pending(
                "broadcast_to",
                &[t(&[3], "float32")],
                &[("shape", ints(&[2, 4]))]
            ),
            vec![(1, t(&[2, 4], "float32"))]
        );
        // Run again with the output known (something else changed one of
        // its types), it checks the broadcast and keeps the data's dims
        // where they tie.
        let again = run_with_output(
            "broadcast_to",
            &[t(&[3], "float32")],
            t(&[2, 4], "float32"),
            &[("shape", ints(&[2, 4]))],
        );
        let Err(err) = again else {
            panic!("an incompatible shape passes the second run: {again:?}")
        };
        assert!(err.message.starts_with("Incompatible broadcast type"));
        let again = run_with_output(
            "broadcast_to",
            &[t(&[2, 1], "float32")],
            t64(&[2, 1], "float32"),
            &[("shape", ints64(&[2, 1]))],
        );
        let Ok(crate::relation_contract::RelationOutcome::Solved(assigns)) = again else {
            panic!("the second run does not finish: {again:?}")
        };
        // The data's 2 ties with the attribute's 2i64 and wins; its 1
        // broadcasts, so the attribute's 1i64 stays.
        let data_dims = td(vec![Dim::int32(2), Dim::int64(1)], "float32");
        assert_eq!(assigns.last(), Some(&(1, data_dims)));
        let out = solved(
            "collapse_sum_like",
            &[t(&[2, 3], "float32"), t(&[3], "float32")],
            &[],
        );
        assert_eq!(out[0], (2, t(&[3], "float32")));
    }

    fn ints64(vs: &[i64]) -> relay_ir::AttrValue {
        relay_ir::AttrValue::Array(
            vs.iter()
                .map(|&v| relay_ir::AttrValue::int_imm(v, relay_ir::dtype::DataType::INT64))
                .collect(),
        )
    }
}
