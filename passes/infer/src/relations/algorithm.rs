//! Sorting relations (`src/relay/op/algorithm/argsort.cc`, `topk.cc`,
//! `sort.cc`, `searchsorted.cc`): `ArgsortRel`, `TopKRel`, `SortRel` and
//! `SearchSortedRel`.

use super::shape::c_int;
use super::{check, error, relations, tensor, AboutAttribute, Ctx, Step};
use relay_ir::Type;

relations! {
    /// `ArgsortRel`: the data's shape in the `dtype` attribute.
    "Argsort" => argsort_rel;
    /// `TopKRel`: values, indices or both (`ret_type`).
    "TopK" => topk_rel;
    /// `SortRel`: the data's type.
    "Sort" => sort_rel;
    /// `SearchSortedRel`: the values' shape in the `dtype` attribute.
    "SearchSorted" => searchsorted_rel;
}

fn argsort_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "Argsort: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let dtype = ctx.attrs.dtype("dtype")?;
    ctx.assign(1, tensor(data.shape.clone(), dtype));
    Ok(true)
}

/// The type of a top-k result from its shape.
pub(crate) fn topk_result(
    ctx: &Ctx,
    out_shape: Vec<relay_ir::Dim>,
    data_dtype: relay_ir::dtype::DataType,
) -> Result<Type, crate::relation_contract::RelationError> {
    let values = tensor(out_shape.clone(), data_dtype);
    let indices = tensor(out_shape, ctx.attrs.dtype("dtype")?);
    match ctx.attrs.str("ret_type")?.as_str() {
        "both" => Ok(Type::tuple(vec![values, indices])),
        "values" => Ok(values),
        "indices" => Ok(indices),
        other => error(format!("Unsupported ret type: {other}")),
    }
}

fn topk_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let ndim = data.shape.len() as i64;
    let mut axis = ctx.attrs.int("axis")?;
    if axis < 0 {
        axis += ndim;
    }
    check(axis >= 0 && axis < ndim, || {
        "Check failed: axis >= 0 && axis < ndim".to_string()
    })
    .about("axis")?;
    let k = ctx.attrs.opt_int("k")?;
    let mut out_shape = Vec::with_capacity(data.shape.len());
    for (i, dim) in data.shape.iter().enumerate() {
        if i as i64 != axis {
            out_shape.push(dim.clone());
        } else {
            let Some(k) = k else {
                return error("top_k: `k` is not defined (Optional has no value)");
            };
            // `Integer ck = param->k.value()`: kept with its own dtype.
            let k_dim = match ctx.attrs.dim("k")? {
                Some(d) => d,
                None => c_int(k),
            };
            out_shape.push(if k < 1 { dim.clone() } else { k_dim });
        }
    }
    let out = topk_result(ctx, out_shape, data.dtype)?;
    ctx.assign(1, out);
    Ok(true)
}

fn sort_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(0, "Sort: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    ctx.assign(1, tensor(data.shape.clone(), data.dtype));
    Ok(true)
}

fn searchsorted_rel(ctx: &mut Ctx) -> Step {
    let Some(sorted) = ctx.tensor_or_wait(0, "Expects TensorType in the first input, got ")? else {
        return Ok(false);
    };
    let Some(values) = ctx.tensor_or_wait(1, "Expects TensorType in the second input, got ")?
    else {
        return Ok(false);
    };
    let rank = values.shape.len();
    check(rank > 0, || {
        format!(
            "Check failed: values->shape.size() > 0 ({rank} vs. 0) : The rank of `values` must be greater than one"
        )
    })?;
    if sorted.shape.len() > 1 {
        check(sorted.shape.len() == rank, || {
            format!(
                "Check failed: sorted_sequence->shape.size() == values->shape.size() ({} vs. {rank}) : Ranks of `sorted_sequence` and values must be the same if `sorted_sequence` is multi-dimensional.",
                sorted.shape.len()
            )
        })?;
        for (a, b) in sorted.shape.iter().zip(&values.shape).take(rank - 1) {
            if let (Some((x, _)), Some((y, _))) = (a.as_int_imm(), b.as_int_imm()) {
                check(x == y, || {
                    format!(
                        "Check failed: sorted_sequence->shape[i].as<IntImmNode>()->value == values->shape[i].as<IntImmNode>()->value ({x} vs. {y}) : `sorted_sequence and `values` do not have the same shape along outer axes"
                    )
                })?;
            }
        }
    }
    let dtype = ctx.attrs.dtype("dtype")?;
    ctx.assign(2, tensor(values.shape.clone(), dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;

    #[test]
    fn argsort_and_topk() {
        assert_eq!(
            solve_out(
                "argsort",
                &[t(&[3, 4], "float32")],
                &[("dtype", dt("int32"))]
            ),
            t(&[3, 4], "int32")
        );
        assert_eq!(
            solve_out(
                "topk",
                &[t(&[3, 4], "float32")],
                &[("k", int(2)), ("dtype", dt("int64"))]
            ),
            tup(&[t(&[3, 2], "float32"), t(&[3, 2], "int64")])
        );
        assert_eq!(
            solve_out(
                "topk",
                &[t(&[3, 4], "float32")],
                &[
                    ("k", int(0)),
                    ("ret_type", s("indices")),
                    ("dtype", dt("int32"))
                ]
            ),
            t(&[3, 4], "int32")
        );
    }

    #[test]
    fn sort_and_searchsorted() {
        let x = t(&[3, 4], "float32");
        assert_eq!(solve_out("sort", &[x.clone()], &[]), x);
        assert!(fails("sort", &[tup(&[x.clone()])], &[])
            .starts_with("Sort: expect input type to be TensorType but get"));
        assert_eq!(
            solve_out(
                "searchsorted",
                &[t(&[8], "float32"), t(&[5], "float32")],
                &[]
            ),
            t(&[5], "int32")
        );
        assert_eq!(
            solve_out(
                "searchsorted",
                &[t(&[2, 8], "float32"), t(&[2, 3], "float32")],
                &[("dtype", dt("int64"))]
            ),
            t(&[2, 3], "int64")
        );
        assert_eq!(
            fails("searchsorted", &[t(&[2, 8], "float32"), t(&[3, 3], "float32")], &[]),
            "Check failed: sorted_sequence->shape[i].as<IntImmNode>()->value == values->shape[i].as<IntImmNode>()->value (2 vs. 3) : `sorted_sequence and `values` do not have the same shape along outer axes"
        );
        assert_eq!(
            fails("searchsorted", &[t(&[2, 8], "float32"), t(&[3], "float32")], &[]),
            "Check failed: sorted_sequence->shape.size() == values->shape.size() (2 vs. 1) : Ranks of `sorted_sequence` and values must be the same if `sorted_sequence` is multi-dimensional."
        );
        assert_eq!(
            fails("searchsorted", &[t(&[8], "float32"), t(&[], "float32")], &[]),
            "Check failed: values->shape.size() > 0 (0 vs. 0) : The rank of `values` must be greater than one"
        );
    }
}
