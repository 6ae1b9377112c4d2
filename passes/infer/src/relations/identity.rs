//! Relations whose output follows the input's type directly:
//! `IdentityRel` (unary math, `clip`, `nn.relu`, `on_device`, …),
//! `IdentityCompRel`, `CastRel`, `CastLikeRel`, `ShapeOfRel` and
//! `NdarraySizeRel` (`src/relay/op/type_relations.cc`,
//! `src/relay/op/tensor/transform.cc`, `src/relay/op/tensor/unary.cc`).

use super::{relations, shape, tensor, Ctx, Step};
use relay_ir::dtype::DataType;
use relay_ir::Type;

relations! {
    /// `IdentityRel`: every type after the first is the first's.
    "Identity" => identity_rel;
    /// `IdentityRel` registered for `debug` under the name `Debug`.
    "Debug" => identity_rel;
    /// `IdentityCompRel`: the input's shape with dtype `bool`.
    "IdentityCompRel" => identity_comp_rel;
    /// `CastRel`: the input's shape with the `dtype` attribute (also
    /// `reinterpret`'s relation).
    "Cast" | "Reinterpret" => cast_rel;
    /// `CastLikeRel`: the first input's shape, the second's dtype.
    "CastLike" => cast_like_rel;
    /// `ShapeOfRel`: `Tensor[(rank), dtype]` (rank-0 input: a scalar).
    "ShapeOf" => shape_of_rel;
    /// `NdarraySizeRel`: a scalar of the `dtype` attribute.
    "NdarraySize" => ndarray_size_rel;
}

fn identity_rel(ctx: &mut Ctx) -> Step {
    // Never waits: the output (and any further input) is unified with the
    // first type even while it is incomplete.
    let first = ctx.ty(0).clone();
    for i in 1..ctx.types.len() {
        ctx.assign(i, first.clone());
    }
    Ok(true)
}

fn identity_comp_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    ctx.assign(1, tensor(data.shape.clone(), DataType::bool()));
    Ok(true)
}

fn cast_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(0, "cast: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let dtype = ctx.attrs.dtype("dtype")?;
    ctx.assign_out(tensor(data.shape.clone(), dtype));
    Ok(true)
}

fn cast_like_rel(ctx: &mut Ctx) -> Step {
    let what = "cast: expect input type to be TensorType but get ";
    let Some(data) = ctx.tensor_or_wait(0, what)? else {
        return Ok(false);
    };
    let Some(like) = ctx.tensor_or_wait(1, what)? else {
        return Ok(false);
    };
    ctx.assign_out(tensor(data.shape.clone(), like.dtype));
    Ok(true)
}

fn shape_of_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let dtype = ctx.attrs.dtype("dtype")?;
    // `RankShape`: `{Integer(rank)}`, an int32 immediate; empty for rank 0.
    let shape = if data.shape.is_empty() {
        Vec::new()
    } else {
        vec![shape::c_int(data.shape.len() as i64)]
    };
    ctx.assign(1, tensor(shape, dtype));
    Ok(true)
}

fn ndarray_size_rel(ctx: &mut Ctx) -> Step {
    if ctx.tensor(0).is_none() {
        return Ok(false);
    }
    let dtype = ctx.attrs.dtype("dtype")?;
    ctx.assign(1, Type::scalar(dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::Type;

    #[test]
    fn identity_unifies_even_incomplete() {
        let x = t(&[1, 2], "float32");
        assert_eq!(solve_out("nn.relu", &[x.clone()], &[]), x);
        let inc = Type::incomplete();
        let out = solved("exp", &[inc.clone()], &[]);
        assert_eq!(out, vec![(1, inc)]);
        for op in ["abs", "erf", "clip", "on_device", "annotation.stop_fusion"] {
            let y = t64(&[2], "float16");
            assert_eq!(solve_out(op, std::slice::from_ref(&y), &[]), y, "{op}");
        }
    }

    #[test]
    fn casts_and_shape_of() {
        let x = t(&[3, 4], "float32");
        assert_eq!(
            solve_out("cast", &[x.clone()], &[("dtype", dt("int8"))]),
            t(&[3, 4], "int8")
        );
        assert_eq!(
            solve_out("cast_like", &[x.clone(), t(&[], "float16")], &[]),
            t(&[3, 4], "float16")
        );
        assert_eq!(
            solve_out("shape_of", &[x.clone()], &[("dtype", dt("int64"))]),
            t(&[2], "int64")
        );
        assert_eq!(
            solve_out("shape_of", &[t(&[], "float32")], &[("dtype", dt("int32"))]),
            t(&[], "int32")
        );
        assert_eq!(
            solve_out("ndarray_size", &[x], &[("dtype", dt("int32"))]),
            t(&[], "int32")
        );
        assert!(waits(
            "cast",
            &[Type::incomplete()],
            &[("dtype", dt("int8"))]
        ));
        let err = fails("cast", &[Type::unit()], &[("dtype", dt("int8"))]);
        assert_eq!(err, "cast: expect input type to be TensorType but get ()");
    }

    #[test]
    fn reinterpret_is_a_cast() {
        let out = solve_out(
            "reinterpret",
            &[t(&[2, 3], "float32")],
            &[("dtype", dt("int32"))],
        );
        assert_eq!(out, t(&[2, 3], "int32"));
        assert!(fails(
            "reinterpret",
            &[Type::tuple(vec![])],
            &[("dtype", dt("int32"))]
        )
        .starts_with("cast: expect input type to be TensorType"));
    }
}
