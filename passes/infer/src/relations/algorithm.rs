//! Sorting relations (`src/relay/op/algorithm/argsort.cc`, `topk.cc`):
//! `ArgsortRel` and `TopKRel`.

use super::shape::c_int;
use super::{check, error, relations, tensor, AboutAttribute, Ctx, Step};
use relay_ir::Type;

relations! {
    /// `ArgsortRel`: the data's shape in the `dtype` attribute.
    "Argsort" => argsort_rel;
    /// `TopKRel`: values, indices or both (`ret_type`).
    "TopK" => topk_rel;
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
}
