//! Reductions (`src/relay/op/tensor/reduce.cc`): `ReduceRel` (`sum`,
//! `mean`, `max`, `min`, `prod`, `all`, `any`), `GenericReduceRel` as
//! `ArgReduce` (`argmax`, `argmin`) and `VarianceRel`.
//!
//! `axis=None` (or `[]`) reduces every axis, `exclude` reduces the others,
//! `keepdims` keeps reduced axes as the `int32` constant 1. `argmax` and
//! `argmin` give indices whose dtype is the dtype of the data's *first
//! dimension* (`int32` normally, `int64` for an `int64` shape), as TVM does.

use super::shape::{c_int, const_int, dim_dtype};
use super::{check, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::Dim;

relations! {
    /// `ReduceRel`.
    "Reduce" => reduce_rel;
    /// `GenericReduceRel<ArgReduceAttrs>`.
    "ArgReduce" => arg_reduce_rel;
    /// `VarianceRel`: `(data, mean)`.
    "Variance" => variance_rel;
}

/// `GetReduceAxes`.
fn reduce_axes(
    ndim: usize,
    axis: Option<Vec<i64>>,
    exclude: bool,
) -> Result<Vec<usize>, RelationError> {
    let axis = match axis {
        Some(axis) if !axis.is_empty() => axis,
        _ => return Ok((0..ndim).collect()),
    };
    let mut in_axes = Vec::with_capacity(axis.len());
    for a in axis {
        let a = if a < 0 { a + ndim as i64 } else { a };
        check(a >= 0, || {
            "Axis out of bounds in reduce operator.".to_string()
        })?;
        check(a < ndim as i64, || {
            "Axis out of bounds in reduce operator.".to_string()
        })?;
        in_axes.push(a as usize);
    }
    in_axes.sort_unstable();
    if !exclude {
        return Ok(in_axes);
    }
    Ok((0..ndim).filter(|i| !in_axes.contains(i)).collect())
}

/// `ReduceShapeImpl`.
fn reduce_shape(ctx: &Ctx, in_shape: &[Dim]) -> Result<Vec<Dim>, RelationError> {
    let attrs = ctx.attrs;
    let axes =
        reduce_axes(in_shape.len(), attrs.ints("axis")?, attrs.bool("exclude")?).about("axis")?;
    if axes.is_empty() {
        return Ok(in_shape.to_vec());
    }
    // TVM checks that a dynamic reduction's constant part stays below
    // int32 max; the product only counts axes before the first unknown one.
    let mut max_shape: i64 = 1;
    let mut dynamic = false;
    for &a in &axes {
        match const_int(&in_shape[a]) {
            Some(v) => max_shape = max_shape.wrapping_mul(v),
            None => {
                dynamic = true;
                break;
            }
        }
    }
    if dynamic {
        check(max_shape < i64::from(i32::MAX), || {
            "The maximum possible index of reduced shape cannot be more than int32 max.".to_string()
        })?;
    }
    if attrs.bool("keepdims")? {
        let mut out = in_shape.to_vec();
        for &a in &axes {
            out[a] = c_int(1);
        }
        Ok(out)
    } else {
        Ok(in_shape
            .iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, d)| d.clone())
            .collect())
    }
}

fn reduce_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let oshape = reduce_shape(ctx, &data.shape)?;
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn arg_reduce_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check(!data.shape.is_empty(), || {
        "Check failed: static_cast<int>(data->shape.size()) != 0".to_string()
    })?;
    let oshape = reduce_shape(ctx, &data.shape)?;
    let dtype: DataType = dim_dtype(&data.shape[0]);
    ctx.assign(1, tensor(oshape, dtype));
    Ok(true)
}

fn variance_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check(!data.shape.is_empty(), || {
        "Check failed: static_cast<int>(data->shape.size()) != 0".to_string()
    })?;
    let Some(mean) = ctx.tensor(1) else {
        return Ok(false);
    };
    check(data.shape.len() == mean.shape.len(), || {
        format!(
            "Check failed: in_shape.size() == mean_shape.size() ({} vs. {})",
            data.shape.len(),
            mean.shape.len()
        )
    })?;
    let oshape = reduce_shape(ctx, &data.shape)?;
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{AttrValue, Dim};

    #[test]
    fn reductions() {
        let x = t(&[128, 24, 128], "float32");
        assert_eq!(
            solve_out("sum", &[x.clone()], &[("axis", ints(&[0, 2]))]),
            t(&[24], "float32")
        );
        assert_eq!(solve_out("mean", &[x.clone()], &[]), t(&[], "float32"));
        assert_eq!(
            solve_out(
                "max",
                &[x.clone()],
                &[
                    ("axis", ints(&[1])),
                    ("keepdims", b(true)),
                    ("exclude", b(true))
                ]
            ),
            t(&[1, 24, 1], "float32")
        );
        assert_eq!(
            solve_out(
                "all",
                &[t(&[2, 3, 4], "bool")],
                &[("axis", ints(&[0, 1, 2]))]
            ),
            t(&[], "bool")
        );
        assert_eq!(
            fails("sum", &[x.clone()], &[("axis", ints(&[3]))]),
            "Axis out of bounds in reduce operator."
        );
    }

    #[test]
    fn arg_reduce_dtype_follows_first_dim() {
        assert_eq!(
            solve_out("argmax", &[t(&[3, 4], "float32")], &[("axis", ints(&[1]))]),
            t(&[3], "int32")
        );
        assert_eq!(
            solve_out(
                "argmin",
                &[t64(&[1, 1], "float32")],
                &[("axis", ints(&[1]))]
            ),
            t64(&[1], "int64")
        );
        assert_eq!(
            solve_out(
                "variance",
                &[t(&[2, 5], "float32"), t(&[2, 1], "float32")],
                &[("axis", ints(&[1])), ("keepdims", b(true))]
            ),
            td(vec![Dim::int32(2), Dim::int32(1)], "float32")
        );
        let _ = AttrValue::Null;
    }
}
