//! Relations of the dynamic operators `dyn.*` (`src/relay/op/dyn/**`):
//! shapes given as tensors instead of attributes, so every size they decide
//! is `?`; only the rank is known, from the static length of the shape
//! tensor. `DynamicReshape`, `DynamicBroadCastTo`, `DynamicFull`,
//! `DynamicInitOp`, `DynamicTile`, `DynStridedSlice`, `DynSparseToDense`,
//! `DynamicPad`, `DynamicUpSampling`, `DynamicUpSampling3D`, `DynResize2D`,
//! `DynTopK`, `DynOneHot`, `DynSqueeze` and `DynamicExpandDims`.

use super::algorithm::topk_result;
use super::layout::{BijectiveLayout, Layout};
use super::shape::const_int;
use super::tensor_transform::fill_dtype;
use super::{check, error, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::{Dim, TensorType, Type};

relations! {
    /// `dyn.reshape`.
    "DynamicReshape" => reshape_rel;
    /// `dyn.broadcast_to`.
    "DynamicBroadCastTo" => broadcast_to_rel;
    /// `dyn.full`.
    "DynamicFull" => full_rel;
    /// `dyn.zeros`, `dyn.ones`.
    "DynamicInitOp" => init_op_rel;
    /// `dyn.tile`.
    "DynamicTile" => tile_rel;
    /// `dyn.strided_slice`.
    "DynStridedSlice" => strided_slice_rel;
    /// `dyn.sparse_to_dense`.
    "DynSparseToDense" => sparse_to_dense_rel;
    /// `dyn.nn.pad`.
    "DynamicPad" => pad_rel;
    /// `dyn.nn.upsampling`.
    "DynamicUpSampling" => upsampling_rel;
    /// `dyn.nn.upsampling3d`.
    "DynamicUpSampling3D" => upsampling3d_rel;
    /// `dyn.image.resize2d`.
    "DynResize2D" => resize2d_rel;
    /// `dyn.topk`.
    "DynTopK" => topk_rel;
    /// `dyn.one_hot`: the indices' shape with `?` at `axis`.
    "DynOneHot" => one_hot_rel;
    /// `dyn.squeeze`: `rank - len(axes)` dimensions, all `?`.
    "DynSqueeze" => squeeze_rel;
    /// `dyn.expand_dims`: `rank + num_newaxis` dimensions, all `?`.
    "DynamicExpandDims" => expand_dims_rel;
}

/// The static length of a 1-D shape tensor (`shape[0].as<IntImmNode>()`).
fn static_rank(shape_tensor: &TensorType, message: &str) -> Result<usize, RelationError> {
    shape_tensor
        .shape
        .first()
        .and_then(const_int)
        .map(|r| r.max(0) as u64)
        .ok_or_else(|| RelationError::new(message))
        .and_then(|rank| {
            // The output gets that many dimensions: bound it first.
            relay_ir::limits::check_rank(rank).map_err(RelationError::new)?;
            Ok(rank as usize)
        })
}

/// A tensor of `dtype` with as many dimensions as the static length of
/// `shape_tensor` (else the error `message`), every size `?`.
fn sizes_unknown(
    shape_tensor: &TensorType,
    message: &str,
    dtype: DataType,
) -> Result<Type, RelationError> {
    let rank = static_rank(shape_tensor, message)?;
    Ok(tensor(vec![Dim::Any; rank], dtype))
}

fn reshape_rel(ctx: &mut Ctx) -> Step {
    let what = "reshape: expect input type to be TensorType but get ";
    let Some(data) = ctx.tensor_or_wait(0, what)? else {
        return Ok(false);
    };
    let Some(newshape) = ctx.tensor_or_wait(1, what)? else {
        return Ok(false);
    };
    let out = sizes_unknown(
        &newshape,
        "Dynamic Reshape doesn't support Dynamic Rank",
        data.dtype,
    )?;
    ctx.assign(2, out);
    Ok(true)
}

fn broadcast_to_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(target)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let out = sizes_unknown(&target, "Target shape must have static rank", data.dtype)?;
    ctx.assign(2, out);
    Ok(true)
}

fn full_rel(ctx: &mut Ctx) -> Step {
    let (Some(fill), Some(shape)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let dtype = fill_dtype(ctx, &fill)?;
    let out = sizes_unknown(&shape, "Parameter shape must have static rank", dtype)?;
    ctx.assign(2, out);
    Ok(true)
}

fn init_op_rel(ctx: &mut Ctx) -> Step {
    // TVM dereferences the shape's type without checking; we wait.
    let Some(shape) = ctx.tensor_or_wait(0, "Check failed: (fill_shape) is a TensorType: ")? else {
        return Ok(false);
    };
    let dtype = ctx.attrs.dtype("dtype")?;
    let out = sizes_unknown(&shape, "Parameter shape must have static rank", dtype)?;
    ctx.assign(1, out);
    Ok(true)
}

fn tile_rel(ctx: &mut Ctx) -> Step {
    let what = "tile: expect input type to be TensorType but get ";
    let Some(data) = ctx.tensor_or_wait(0, what)? else {
        return Ok(false);
    };
    let Some(reps) = ctx.tensor_or_wait(1, what)? else {
        return Ok(false);
    };
    let rndim = static_rank(&reps, "Parameter reps must have static shape")?;
    let tndim = data.shape.len().max(rndim);
    ctx.assign(2, tensor(vec![Dim::Any; tndim], data.dtype));
    Ok(true)
}

fn strided_slice_rel(ctx: &mut Ctx) -> Step {
    if !ctx.attrs.is_some() {
        return Ok(false);
    }
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let Some(begin) = ctx.tensor(1) else {
        return Ok(false);
    };
    let num_dynamic = static_rank(&begin, "begin must have a static length")?;
    let out = ctx.out();
    let oshape: Vec<Dim> = (0..data.shape.len())
        .map(|i| {
            if i < num_dynamic {
                Dim::Any
            } else {
                data.shape[i].clone()
            }
        })
        .collect();
    ctx.assign(out, tensor(oshape, data.dtype));
    Ok(true)
}

fn sparse_to_dense_rel(ctx: &mut Ctx) -> Step {
    let tensors = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2), ctx.tensor(3));
    let (Some(indices), Some(values), Some(default), Some(output_shape)) = tensors else {
        return Ok(false);
    };
    check(indices.dtype.is_int(), || {
        "sparse_indices must be tensor of integers".to_string()
    })?;
    check(indices.shape.len() <= 3, || {
        "sparse_indices must be a tensor of either 0D, 1D or 2D".to_string()
    })?;
    check(values.shape.len() <= 2, || {
        "sparse_values must be a tensor of either 0D, 1D".to_string()
    })?;
    check(default.shape.is_empty(), || {
        "default_value should be a scalar".to_string()
    })?;
    let out = sizes_unknown(
        &output_shape,
        "output_shape must have a static length",
        values.dtype,
    )?;
    ctx.assign(4, out);
    Ok(true)
}

fn pad_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(pad_width), Some(_)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    else {
        return Ok(false);
    };
    check(!data.shape.is_empty(), || {
        "Data shape must have static rank".to_string()
    })?;
    check(pad_width.shape.len() == 2, || {
        format!(
            "Check failed: pad_width_rank == 2 ({} vs. 2) : Pad width must be 2D",
            pad_width.shape.len()
        )
    })?;
    ctx.assign(3, tensor(vec![Dim::Any; data.shape.len()], data.dtype));
    Ok(true)
}

/// Converts to `base`, sets the spatial sizes to `?`, converts back.
fn any_spatial(
    ctx: &Ctx,
    data: &TensorType,
    base: &str,
    spatial: std::ops::Range<usize>,
    what: &str,
) -> Result<Vec<Dim>, RelationError> {
    let layout_name = ctx.attrs.str("layout")?;
    let converter = BijectiveLayout::new(&Layout::parse(&layout_name)?, &Layout::parse(base)?)
        .ok_or_else(|| {
            RelationError::new(format!(
                "{what} layouts that are convertible from {base}. But got Layout({layout_name})"
            ))
        })?;
    let mut shape = converter.forward_shape(&data.shape)?;
    for i in spatial {
        shape[i] = Dim::Any;
    }
    converter.backward_shape(&shape)
}

fn upsampling_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(scale_h), Some(scale_w)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    else {
        return Ok(false);
    };
    check(scale_h.shape.is_empty() && scale_w.shape.is_empty(), || {
        "Check failed: scale_h->shape.size() == 0".to_string()
    })?;
    let oshape = any_spatial(ctx, &data, "NCHW", 2..4, "UpSampling only supports input")?;
    ctx.assign(3, tensor(oshape, data.dtype));
    Ok(true)
}

fn upsampling3d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let oshape = any_spatial(ctx, &data, "NCDHW", 2..5, "UpSampling3D only support input")?;
    ctx.assign(4, tensor(oshape, data.dtype));
    Ok(true)
}

fn resize2d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let oshape = any_spatial(ctx, &data, "NCHW", 2..4, "Resize only support input")?;
    let out_dtype = ctx.attrs.dtype_or("out_dtype", data.dtype)?;
    ctx.assign(3, tensor(oshape, out_dtype));
    Ok(true)
}

fn topk_rel(ctx: &mut Ctx) -> Step {
    let what = "tile: expect input type to be TensorType but get ";
    let Some(data) = ctx.tensor_or_wait(0, what)? else {
        return Ok(false);
    };
    let Some(k) = ctx.tensor_or_wait(1, what)? else {
        return Ok(false);
    };
    check(k.shape.len() <= 1, || {
        "Parameter k must be a Scalar or a Tensor of shape (1, )".to_string()
    })?;
    if let Some(first) = k.shape.first() {
        match const_int(first) {
            None => return error("Parameter k must have static shape"),
            Some(1) => {}
            Some(_) => return error("Parameter k must be a Scalar or a Tensor of shape (1, )"),
        }
    }
    let ndim = data.shape.len() as i64;
    let mut axis = ctx.attrs.int("axis")?;
    if axis < 0 {
        axis += ndim;
    }
    check(axis >= 0 && axis < ndim, || {
        "Check failed: axis >= 0 && axis < ndim".to_string()
    })
    .about("axis")?;
    let out_shape = data
        .shape
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if i as i64 == axis {
                Dim::Any
            } else {
                d.clone()
            }
        })
        .collect();
    let out = topk_result(ctx, out_shape, data.dtype)?;
    ctx.assign(2, out);
    Ok(true)
}

fn one_hot_rel(ctx: &mut Ctx) -> Step {
    let Some(indices) = ctx.tensor_or_wait(0, "Check failed: (indices) is false: ")? else {
        return Ok(false);
    };
    let axis = ctx.attrs.int("axis")?;
    let rank = indices.shape.len();
    let true_axis = if axis == -1 { rank as i64 } else { axis };
    let mut oshape = Vec::with_capacity(rank + 1);
    let mut next = 0;
    for i in 0..=rank as i64 {
        if i == true_axis {
            oshape.push(Dim::Any);
        } else {
            // An axis past the end makes TVM read one index too many.
            oshape.push(super::item(&indices.shape, next)?.clone());
            next += 1;
        }
    }
    let dtype = ctx.attrs.dtype("dtype")?;
    ctx.assign(4, tensor(oshape, dtype));
    Ok(true)
}

fn squeeze_rel(ctx: &mut Ctx) -> Step {
    // TVM waits on any other type.
    let (Some(data), Some(axes)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    check(axes.shape.len() == 1, || {
        format!(
            "Check failed: axes->shape.size() == 1 ({} vs. 1) : Got{}expected 1",
            axes.shape.len(),
            axes.shape.len()
        )
    })?;
    let Some((count, _)) = axes.shape[0].as_int_imm() else {
        return error("axes expected to be static rank");
    };
    let rank = data.shape.len() as i64;
    // TVM subtracts in `size_t`: more axes than dimensions wraps around.
    check(0 <= count && count <= rank, || {
        format!("dyn.squeeze: cannot squeeze {count} axes of a tensor of rank {rank}")
    })?;
    let oshape = vec![Dim::Any; (rank - count) as usize];
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

fn expand_dims_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(
        0,
        "expand_dims: expect input type to be TensorType but get ",
    )?
    else {
        return Ok(false);
    };
    let num_newaxis = ctx.attrs.int("num_newaxis")?;
    let Some(axis) = ctx.tensor_or_wait(1, "Check failed: (axis_type) is false: ")? else {
        return Ok(false);
    };
    check(axis.shape.is_empty(), || {
        format!(
            "Axis should be a scalar got shape {}",
            super::display::shape_array(&axis.shape)
        )
    })?;
    let rank = data.shape.len() as u64 + num_newaxis.max(0) as u64;
    relay_ir::limits::check_rank(rank).map_err(RelationError::new)?;
    ctx.assign(2, tensor(vec![Dim::Any; rank as usize], data.dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::Dim;

    #[test]
    fn dynamic_sparse_to_dense_and_errors() {
        assert_eq!(
            solve_out(
                "dyn.sparse_to_dense",
                &[
                    t(&[2, 2], "int32"),
                    t(&[2], "float32"),
                    t(&[], "float32"),
                    t(&[2], "int64")
                ],
                &[]
            ),
            td(vec![Dim::Any; 2], "float32")
        );
        assert_eq!(
            fails(
                "dyn.reshape",
                &[t(&[2, 3], "float32"), td(vec![Dim::Any], "int64")],
                &[]
            ),
            "Dynamic Reshape doesn't support Dynamic Rank"
        );
    }

    #[test]
    fn dynamic_ops() {
        assert_eq!(
            solve_out(
                "dyn.reshape",
                &[t(&[2, 3], "float32"), t(&[3], "int64")],
                &[]
            ),
            td(vec![Dim::Any; 3], "float32")
        );
        assert_eq!(
            solve_out(
                "dyn.zeros",
                &[t(&[2], "int64")],
                &[("dtype", dt("float32"))]
            ),
            td(vec![Dim::Any; 2], "float32")
        );
        assert_eq!(
            solve_out(
                "dyn.strided_slice",
                &[
                    t(&[4, 5, 6], "float32"),
                    t(&[2], "int64"),
                    t(&[2], "int64"),
                    t(&[2], "int64")
                ],
                &[]
            ),
            td(vec![Dim::Any, Dim::Any, Dim::int32(6)], "float32")
        );
        assert_eq!(
            solve_out(
                "dyn.nn.upsampling",
                &[
                    t(&[1, 16, 32, 32], "float32"),
                    t(&[], "float32"),
                    t(&[], "float32")
                ],
                &[]
            ),
            td(
                vec![Dim::int32(1), Dim::int32(16), Dim::Any, Dim::Any],
                "float32"
            )
        );
        assert_eq!(
            solve_out(
                "dyn.topk",
                &[t(&[3, 4], "float32"), t(&[], "int32")],
                &[("ret_type", s("values"))]
            ),
            td(vec![Dim::int32(3), Dim::Any], "float32")
        );
    }

    #[test]
    fn dyn_one_hot_squeeze_and_expand_dims_know_only_the_rank() {
        let scalar = t(&[], "float32");
        let depth = t(&[], "int32");
        let out = solve_out(
            "dyn.one_hot",
            &[
                t(&[3, 2], "int32"),
                scalar.clone(),
                scalar.clone(),
                depth.clone(),
            ],
            &[("axis", int(1)), ("dtype", dt("float32"))],
        );
        assert_eq!(
            out,
            td(vec![Dim::int32(3), Dim::Any, Dim::int32(2)], "float32")
        );
        assert_eq!(
            fails(
                "dyn.one_hot",
                &[t(&[3], "int32"), scalar.clone(), scalar, depth],
                &[("axis", int(3)), ("dtype", dt("float32"))],
            ),
            "IndexError: indexing 1 on an array of size 1"
        );
        let out = solve_out(
            "dyn.squeeze",
            &[t(&[1, 3, 1], "float32"), t(&[2], "int64")],
            &[],
        );
        assert_eq!(out, td(vec![Dim::Any], "float32"));
        assert_eq!(
            fails(
                "dyn.squeeze",
                &[t(&[1, 3], "float32"), t(&[1, 1], "int64")],
                &[]
            ),
            "Check failed: axes->shape.size() == 1 (2 vs. 1) : Got2expected 1"
        );
        let any = td(vec![Dim::Any], "int64");
        assert_eq!(
            fails("dyn.squeeze", &[t(&[1, 3], "float32"), any], &[]),
            "axes expected to be static rank"
        );
        assert!(
            fails("dyn.squeeze", &[t(&[1], "float32"), t(&[3], "int64")], &[])
                .starts_with("dyn.squeeze: cannot squeeze 3 axes")
        );
        let expand = |axis: relay_ir::Type| {
            run(
                "dyn.expand_dims",
                &[t(&[2, 3], "float32"), axis],
                &[
                    ("attrs_type", s("relay.attrs.DynExpandDimsAttrs")),
                    ("num_newaxis", int(2)),
                ],
            )
        };
        assert!(matches!(
            expand(t(&[], "int64")),
            Ok(crate::relation_contract::RelationOutcome::Solved(assigns))
                if assigns == vec![(2, td(vec![Dim::Any; 4], "float32"))]
        ));
        assert_eq!(
            expand(t(&[1], "int64")).unwrap_err().message,
            "Axis should be a scalar got shape [1]"
        );
    }
}
