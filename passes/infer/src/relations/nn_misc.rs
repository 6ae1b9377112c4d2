//! The other `nn.*` relations (`src/relay/op/nn/nn.cc`, `nn.h`, `pad.cc`,
//! `upsampling.cc`, `bitserial.cc`): `BiasAddRel`, `MatmulRel` (`Dense`,
//! `Matmul`), `DensePackRel`, `BatchMatmulRel`, `BinaryDenseRel`,
//! `SoftmaxRel`, `BatchFlattenRel`, `DropoutRel`, `BatchNormRel`,
//! `InstanceNormRel`, `LayerNormRel`, `GroupNormRel`, `NLLLossRel`,
//! `SpaceToBatchNDRel`, `BatchToSpaceNDRel`, `PadRel`, `UpSamplingRel`,
//! `UpSampling3DRel`, `PReluRel` and `CrossEntropyRel`.
//!
//! Relations that determine a parameter's type assign it: `bias_add` the
//! bias (`[C]`), `prelu` the slope (`[C]`), `batch_norm` its four vectors, the norms gamma and beta,
//! `dense` the weight when `units` is set (`[units, K]`).

use super::display::{self, shape_array};
use super::layout::{BijectiveLayout, Layout};
use super::shape::{
    self, add, c_int, const_int, dim_dtype, int_of, is_any, max, mul, round_half_even, sub,
    truncdiv,
};
use super::{check, error, norm_axis, relations, tensor, value_to_dim, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::{AttrValue, Dim, Type};

relations! {
    /// `BiasAddRel`: assigns the bias `[data.shape[axis]]`.
    "BiasAdd" => bias_add_rel;
    /// `MatmulRel` (`nn.dense` with `DenseAttrs`, `nn.matmul`).
    "Dense" | "Matmul" => matmul_rel;
    /// `DensePackRel`.
    "DensePack" => dense_pack_rel;
    /// `BatchMatmulRel`.
    "BatchMatmul" => batch_matmul_rel;
    /// `BinaryDenseRel`.
    "BinaryDense" => binary_dense_rel;
    /// `SoftmaxRel`.
    "Softmax" => softmax_rel;
    /// `BatchFlattenRel`.
    "BatchFlatten" => batch_flatten_rel;
    /// `DropoutRel`: `(data, mask)`, both of the data's type.
    "Dropout" => dropout_rel;
    /// `BatchNormRel`.
    "BatchNorm" => batch_norm_rel;
    /// `InstanceNormRel`.
    "InstanceNorm" => instance_norm_rel;
    /// `LayerNormRel` and `GroupNormRel`.
    "LayerNorm" | "GroupNorm" => layer_norm_rel;
    /// `NLLLossRel`.
    "NLLLoss" => nll_loss_rel;
    /// `SpaceToBatchNDRel`.
    "SpaceToBatchND" => space_to_batch_nd_rel;
    /// `BatchToSpaceNDRel`.
    "BatchToSpaceND" => batch_to_space_nd_rel;
    /// `PadRel`.
    "Pad" => pad_rel;
    /// `UpSamplingRel`.
    "UpSampling" => upsampling_rel;
    /// `UpSampling3DRel`.
    "UpSampling3D" => upsampling3d_rel;
    /// `PReluRel`: the slope is `[data.shape[axis]]`.
    "PRelu" => prelu_rel;
    /// `CrossEntropyRel` (`nn.cross_entropy`, `nn.cross_entropy_with_logits`):
    /// a scalar of the predictions' dtype.
    "CrossEntropy" => cross_entropy_rel;
}

fn bias_add_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let param_axis = ctx.attrs.int("axis")?;
    let axis = norm_axis(param_axis, data.shape.len());
    if axis < 0 || axis >= data.shape.len() as i64 {
        return error(format!(
            "The axis in bias_add must be in range for the shape; attempted to access index {param_axis} of {}",
            shape_array(&data.shape)
        )).about("axis");
    }
    ctx.assign(
        1,
        tensor(vec![data.shape[axis as usize].clone()], data.dtype),
    );
    let first = ctx.ty(0).clone();
    ctx.assign(2, first);
    Ok(true)
}

pub(crate) fn matmul_rel(ctx: &mut Ctx) -> Step {
    let Some(a) = ctx.tensor(0) else {
        return Ok(false);
    };
    let b = ctx.tensor(1);
    check(!a.shape.is_empty(), || {
        "Check failed: static_cast<int>(tensor_a->shape.size()) != 0".to_string()
    })?;
    let attrs = ctx.attrs;
    // Only `MatmulAttrs` has these; `DenseAttrs` means (false, true).
    let transpose_a = attrs
        .get("transpose_a")
        .and_then(AttrValue::as_int)
        .unwrap_or(0)
        != 0;
    let transpose_b = attrs
        .get("transpose_b")
        .and_then(AttrValue::as_int)
        .is_none_or(|v| v != 0);
    let dshape = &a.shape;
    let n = dshape.len();
    let mut oshape = dshape.clone();
    let mut reduce = dshape[n - 1].clone();
    if transpose_a {
        check(n >= 2, || {
            "transpose_a needs a tensor of rank 2 or more".to_string()
        })?;
        reduce = dshape[n - 2].clone();
        oshape[n - 2] = dshape[n - 1].clone();
    }
    let b_dtype = b.as_ref().map_or(a.dtype, |b| b.dtype);
    if let Some(units) = attrs.dim("units")? {
        let wshape = if transpose_b {
            vec![units.clone(), reduce]
        } else {
            vec![reduce, units.clone()]
        };
        ctx.assign(1, tensor(wshape, b_dtype));
        oshape[n - 1] = units;
    } else {
        let Some(b) = b else {
            return Ok(false);
        };
        check(b.shape.len() == 2, || {
            "Check failed: static_cast<int>(tensor_b->shape.size()) == 2".to_string()
        })?;
        let mut a_shape = a.shape.clone();
        let mut b_shape = b.shape.clone();
        let (sa, sb) = (a_shape.len(), b_shape.len());
        let (ia, ib) = match (transpose_a, transpose_b) {
            (true, true) => (sa - 2, sb - 1),
            (true, false) => (sa - 2, sb - 2),
            (false, true) => (sa - 1, sb - 1),
            (false, false) => (sa - 1, sb - 2),
        };
        let tmp = a_shape[ia].clone();
        if is_any(&a_shape[ia]) {
            a_shape[ia] = b_shape[ib].clone();
        }
        if is_any(&b_shape[ib]) {
            b_shape[ib] = tmp;
        }
        ctx.assign(0, tensor(a_shape, a.dtype));
        ctx.assign(1, tensor(b_shape, b_dtype));
        oshape[n - 1] = if transpose_b {
            b.shape[0].clone()
        } else {
            b.shape[1].clone()
        };
    }
    let out_dtype = attrs.dtype_or("out_dtype", a.dtype)?;
    ctx.assign(2, tensor(oshape, out_dtype));
    Ok(true)
}

fn dense_pack_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(weight)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    check(data.shape.len() == 2, || {
        "Only 2D data is supported".to_string()
    })?;
    check(weight.shape.len() == 3 || weight.shape.len() == 4, || {
        "Expect weight to be 3D or 4D".to_string()
    })?;
    let mut oshape = data.shape.clone();
    oshape[1] = mul(&weight.shape[0], &weight.shape[2]);
    let out_dtype = ctx.attrs.dtype_or("out_dtype", data.dtype)?;
    ctx.assign(2, tensor(oshape, out_dtype));
    Ok(true)
}

pub(crate) fn batch_matmul_rel(ctx: &mut Ctx) -> Step {
    let (Some(x), Some(y)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let mut out_dtype = attrs.dtype("out_dtype")?;
    if out_dtype.bits == 0 {
        out_dtype = x.dtype;
        if x.dtype.bits == 0 {
            out_dtype = y.dtype;
        }
    }
    let transpose_a = attrs.bool("transpose_a")?;
    let transpose_b = attrs.bool("transpose_b")?;
    check(x.shape.len() == 3 && y.shape.len() == 3, || {
        "Check failed: x->shape.size() == 3 && y_shape.size() == 3".to_string()
    })?;
    let xb = &x.shape[0];
    let xi = &x.shape[if transpose_a { 2 } else { 1 }];
    let xk = &x.shape[if transpose_a { 1 } else { 2 }];
    let yb = &y.shape[0];
    let yk = &y.shape[if transpose_b { 2 } else { 1 }];
    let yj = &y.shape[if transpose_b { 1 } else { 2 }];
    let is_dyn = (0..3).any(|i| is_any(&x.shape[i]) || is_any(&y.shape[i]));
    if !is_dyn {
        let one = c_int(1);
        check(
            shape::assert_eq(xb, yb) || shape::assert_eq(xb, &one) || shape::assert_eq(yb, &one),
            || {
                format!(
                    "BatchDot: batch dimensions don't match,  x shape={}, y shape={}",
                    shape_array(&x.shape),
                    shape_array(&y.shape)
                )
            },
        )?;
        check(shape::assert_eq(xk, yk), || {
            format!(
                "BatchDot: shapes of x and y is inconsistent,  x shape={}, y shape={}",
                shape_array(&x.shape),
                shape_array(&y.shape)
            )
        })?;
    }
    let out_b = if is_any(xb) || is_any(yb) {
        Dim::Any
    } else {
        max(xb, yb)
    };
    ctx.assign(2, tensor(vec![out_b, xi.clone(), yj.clone()], out_dtype));
    Ok(true)
}

fn binary_dense_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check(!data.shape.is_empty(), || {
        "Check failed: static_cast<int>(data->shape.size()) != 0".to_string()
    })?;
    let Some(units) = ctx.attrs.dim("units")? else {
        return error("Check failed: param->units.defined()");
    };
    let mut oshape = data.shape.clone();
    let last = oshape.len() - 1;
    oshape[last] = units;
    let out_dtype = ctx.attrs.dtype_or("out_dtype", data.dtype)?;
    ctx.assign(2, tensor(oshape, out_dtype));
    Ok(true)
}

fn softmax_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let axis = ctx.attrs.int("axis")?;
    let ndim = data.shape.len() as i64;
    if axis >= ndim || axis < -ndim {
        return error(format!(
            "Wrong axis ({axis}) not in expected range: [{}, {ndim})",
            -ndim
        ))
        .about("axis");
    }
    let first = ctx.ty(0).clone();
    ctx.assign(1, first);
    Ok(true)
}

fn batch_flatten_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    if data.shape.is_empty() {
        return Ok(false);
    }
    let mut target = c_int(1);
    for dim in &data.shape[1..] {
        if is_any(dim) {
            target = dim.clone();
            break;
        }
        target = mul(&target, dim);
    }
    ctx.assign(1, tensor(vec![data.shape[0].clone(), target], data.dtype));
    Ok(true)
}

fn dropout_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let ty = tensor(data.shape.clone(), data.dtype);
    ctx.assign(1, Type::tuple(vec![ty.clone(), ty]));
    Ok(true)
}

fn batch_norm_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let axis = ctx.attrs.int("axis")?;
    let ndim = data.shape.len() as i64;
    check(axis >= -1 && axis < ndim, || {
        "Check failed: param->axis >= -1 && param->axis < (int)data->shape.size()".to_string()
    })
    .about("axis")?;
    let axis = if axis != -1 { axis } else { ndim - 1 };
    // A new type object per parameter (they share the dimension object):
    // it becomes the checked type of a constant parameter. A scalar input
    // has no axis -1 (`data->shape[-1]`).
    let axis_size = usize::try_from(axis)
        .ok()
        .and_then(|a| data.shape.get(a))
        .ok_or_else(|| super::index_error(axis, data.shape.len()))?;
    for i in 1..=4 {
        ctx.assign(i, tensor(vec![axis_size.clone()], data.dtype));
    }
    let vec_ty = tensor(vec![axis_size.clone()], data.dtype);
    let fields = vec![
        tensor(data.shape.clone(), data.dtype),
        vec_ty.clone(),
        vec_ty,
    ];
    ctx.assign(5, Type::tuple(fields));
    Ok(true)
}

fn norm_impl(ctx: &mut Ctx, instance: bool) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let ndim = data.shape.len() as i64;
    if instance {
        check(ndim > 2, || {
            format!("Check failed: data->shape.size() > 2 ({ndim} vs. 2)")
        })?;
    }
    let param_axis = ctx.attrs.int("axis")?;
    let axis = if param_axis >= 0 {
        param_axis
    } else {
        param_axis + ndim
    };
    check(axis >= 0 && axis < ndim, || {
        "Check failed: axis >= 0 && axis < (int)data->shape.size()".to_string()
    })
    .about("axis")?;
    let axis_size = &data.shape[axis as usize];
    ctx.assign(1, tensor(vec![axis_size.clone()], data.dtype));
    ctx.assign(2, tensor(vec![axis_size.clone()], data.dtype));
    ctx.assign(3, tensor(data.shape.clone(), data.dtype));
    Ok(true)
}

fn instance_norm_rel(ctx: &mut Ctx) -> Step {
    norm_impl(ctx, true)
}

fn layer_norm_rel(ctx: &mut Ctx) -> Step {
    norm_impl(ctx, false)
}

fn nll_loss_rel(ctx: &mut Ctx) -> Step {
    let (Some(predictions), Some(targets), Some(weights)) =
        (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    else {
        return Ok(false);
    };
    if predictions.shape.len().wrapping_sub(targets.shape.len()) != 1 {
        return error(format!(
            "NLLLossRel: predictions should be one dimension larger than targets,predictions shape = {}, targets shape = {}",
            shape_array(&predictions.shape),
            shape_array(&targets.shape)
        ));
    }
    if weights.shape.len() != 1 {
        return error(format!(
            "NLLLossRel: weights should be a one dimension Tensor with its length the number of classes, but Tensor of dimension {} were provided.",
            weights.shape.len()
        ));
    }
    // TVM reads `predictions->shape[1]` through its `Array` bounds check:
    // rank-1 predictions are its IndexError, a type error, not a crash.
    let classes = super::item(&predictions.shape, 1)?;
    if !shape::assert_eq(classes, &weights.shape[0]) {
        return error(format!(
            "NLLLossRel: the second dimension of predictions should be the number of classes, which is the length of weights, predictions shape = {}, weights shape = {}",
            shape_array(&predictions.shape),
            shape_array(&weights.shape)
        ));
    }
    if !(predictions.dtype == weights.dtype
        && (predictions.dtype.is_float() || predictions.dtype.is_bfloat16()))
    {
        return error("NLLLossRel: predictions and weights should be of the same floating type.");
    }
    if !targets.dtype.is_int() {
        return error("NLLLossRel: targets should be of int type.");
    }
    let out = if ctx.attrs.str("reduction")? == "none" {
        tensor(targets.shape.clone(), predictions.dtype)
    } else {
        Type::scalar(predictions.dtype)
    };
    ctx.assign(3, out);
    Ok(true)
}

/// An `Array<Array<PrimExpr>>` attribute.
pub(super) fn nested_dims(ctx: &Ctx, name: &str) -> Result<Vec<Vec<Dim>>, RelationError> {
    match ctx.attrs.value(name)? {
        AttrValue::Null => Ok(Vec::new()),
        AttrValue::Array(rows) => rows
            .iter()
            .map(|row| match row {
                AttrValue::Array(items) => items
                    .iter()
                    .map(|item| {
                        value_to_dim(item).ok_or_else(|| {
                            RelationError::new(format!("`{name}` must hold integers"))
                        })
                    })
                    .collect(),
                _ => error(format!("`{name}` must be an array of arrays")),
            })
            .collect(),
        _ => error(format!("`{name}` must be an array of arrays")),
    }
}

fn space_to_batch_nd_rel(ctx: &mut Ctx) -> Step {
    let Some(input) = ctx.tensor_or_wait(
        0,
        "SpaceToBatchND: expect input type to be TensorType but got ",
    )?
    else {
        return Ok(false);
    };
    if input.shape.len() <= 1 {
        return Ok(false);
    }
    let block_shape = ctx.attrs.dims_or_empty("block_shape")?;
    let paddings = nested_dims(ctx, "paddings")?;
    check(paddings.len() == block_shape.len(), || {
        "SpaceToBatchND: Paddings must be provided for each spatial dim".to_string()
    })?;
    check(block_shape.len() < input.shape.len(), || {
        "SpaceToBatchND: block_shape must be less than input shape".to_string()
    })?;
    let mut padded = input.shape.clone();
    for (i, pair) in paddings.iter().enumerate() {
        check(pair.len() == 2, || {
            format!(
                "Check failed: paddings[i].size() == 2U ({} vs. 2)",
                pair.len()
            )
        })?;
        let (Some(before), Some(after)) = (const_int(&pair[0]), const_int(&pair[1])) else {
            return error("SpaceToBatchND: paddings must be constant integers");
        };
        // TVM takes the dtype of dimension `i`, not `i + 1`.
        let padding = int_of(before + after, dim_dtype(&input.shape[i]));
        padded[i + 1] = add(&input.shape[i + 1], &padding);
    }
    let mut numel = c_int(1);
    for b in &block_shape {
        numel = mul(&numel, b);
    }
    let mut out = padded.clone();
    out[0] = mul(&input.shape[0], &numel);
    for i in 1..=block_shape.len() {
        out[i] = truncdiv(&padded[i], &block_shape[i - 1])?;
    }
    ctx.assign(1, tensor(out, input.dtype));
    Ok(true)
}

fn batch_to_space_nd_rel(ctx: &mut Ctx) -> Step {
    let Some(input) = ctx.tensor_or_wait(
        0,
        "BatchToSpaceND: expect input type to be TensorType but got ",
    )?
    else {
        return Ok(false);
    };
    if input.shape.len() <= 1 {
        return Ok(false);
    }
    let block_shape = ctx.attrs.dims_or_empty("block_shape")?;
    let crops = nested_dims(ctx, "crops")?;
    check(crops.len() == block_shape.len(), || {
        "BatchToSpaceND: crops must be provided for each spatial dim".to_string()
    })?;
    check(block_shape.len() < input.shape.len(), || {
        "BatchToSpaceND: block_shape must be less than input shape".to_string()
    })?;
    let mut numel = c_int(1);
    for b in &block_shape {
        numel = mul(&numel, b);
    }
    let mut out = input.shape.clone();
    out[0] = truncdiv(&input.shape[0], &numel)?;
    for i in 1..=block_shape.len() {
        let crop = &crops[i - 1];
        check(crop.len() == 2, || "each crop must be a pair".to_string())?;
        out[i] = sub(
            &sub(&mul(&input.shape[i], &block_shape[i - 1]), &crop[0]),
            &crop[1],
        );
    }
    ctx.assign(1, tensor(out, input.dtype));
    Ok(true)
}

fn pad_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let pad_width = nested_dims(ctx, "pad_width")?;
    check(data.shape.len() == pad_width.len(), || {
        format!(
            "There should be as many pad width pairs as shape dimensions but the shape has {} dimensions and there are {} pad width pairs.",
            data.shape.len(),
            pad_width.len()
        )
    })?;
    let mut oshape = Vec::with_capacity(data.shape.len());
    for (i, pair) in pad_width.iter().enumerate() {
        check(pair.len() == 2, || {
            format!(
                "Each pad width element should be a pair but at index {i} there are {} elements.",
                pair.len()
            )
        })?;
        let (Some(w1), Some(w2)) = (const_int(&pair[0]), const_int(&pair[1])) else {
            return error("Check failed: width1 != nullptr");
        };
        let dim = &data.shape[i];
        if is_any(dim) {
            oshape.push(dim.clone());
            continue;
        }
        let padded = add(dim, &int_of(w1 + w2, dim_dtype(dim)));
        if const_int(dim).is_some() {
            check(const_int(&padded).unwrap_or(0) >= 0, || {
                format!(
                    "Output shape post padding should be positive but got {}",
                    display::dim(&padded)
                )
            })?;
        }
        oshape.push(padded);
    }
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

/// `Cast(dim.dtype(), round(dim * scale))`.
fn scale_dim(dim: &Dim, scale: f64) -> Dim {
    match const_int(dim) {
        Some(v) => {
            let scaled = round_half_even(v as f64 * scale);
            int_of(scaled as i64, dim_dtype(dim))
        }
        None => Dim::Any,
    }
}

fn upsampling_impl(ctx: &mut Ctx, base: &str, scales: &[&str], what: &str) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let layout_name = ctx.attrs.str("layout")?;
    let converter = BijectiveLayout::new(&Layout::parse(&layout_name).about("layout")?, &Layout::parse(base)?)
        .ok_or_else(|| {
            RelationError::new(format!(
                "{what} only support input layouts that are convertible from {base}. But got Layout({layout_name})"
            ))
        }).about("layout")?;
    let mut oshape = converter.forward_shape(&data.shape)?;
    for (i, name) in scales.iter().enumerate() {
        let scale = ctx.attrs.f64(name)?;
        oshape[i + 2] = scale_dim(&oshape[i + 2], scale);
    }
    let oshape = converter.backward_shape(&oshape)?;
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn upsampling_rel(ctx: &mut Ctx) -> Step {
    upsampling_impl(ctx, "NCHW", &["scale_h", "scale_w"], "UpSampling")
}

fn upsampling3d_rel(ctx: &mut Ctx) -> Step {
    upsampling_impl(
        ctx,
        "NCDHW",
        &["scale_d", "scale_h", "scale_w"],
        "UpSampling3D",
    )
}

fn prelu_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let axis = ctx.attrs.int("axis")?;
    let rank = data.shape.len();
    check(axis < rank as i64, || format!("Wrong axis ({axis})value.")).about("axis")?;
    // A negative axis is not normalised: TVM's `Array` index check fails.
    let alpha = usize::try_from(axis)
        .ok()
        .and_then(|a| data.shape.get(a))
        .cloned()
        .ok_or_else(|| super::index_error(axis, rank))
        .about("axis")?;
    ctx.assign(1, tensor(vec![alpha], data.dtype));
    ctx.assign(2, tensor(data.shape.clone(), data.dtype));
    Ok(true)
}

fn cross_entropy_rel(ctx: &mut Ctx) -> Step {
    let (Some(x), Some(y)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let inconsistent = || {
        format!(
            "CrossEntropy: shapes of x and y is inconsistent, x shape = {}, y shape = {}",
            shape_array(&x.shape),
            shape_array(&y.shape)
        )
    };
    check(x.shape.len() == 2 && y.shape.len() == 2, inconsistent)?;
    check(shape::assert_eq(&x.shape[0], &y.shape[0]), inconsistent)?;
    check(shape::assert_eq(&x.shape[1], &y.shape[1]), inconsistent)?;
    ctx.assign(2, Type::scalar(x.dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{AttrValue, Dim, Type};

    #[test]
    fn dense_and_bias() {
        let assigns = solved(
            "nn.dense",
            &[t(&[1, 784], "float32"), Type::incomplete()],
            &[("units", int(128))],
        );
        assert_eq!(assigns[0], (1, t(&[128, 784], "float32")));
        assert_eq!(assigns[1], (2, t(&[1, 128], "float32")));
        let out = solve_out(
            "nn.dense",
            &[
                td(vec![Dim::Any, Dim::int32(4)], "float32"),
                t(&[2, 4], "float32"),
            ],
            &[],
        );
        assert_eq!(out, td(vec![Dim::Any, Dim::int32(2)], "float32"));
        assert!(waits(
            "nn.dense",
            &[t(&[1, 4], "float32"), Type::incomplete()],
            &[]
        ));
        let assigns = solved(
            "nn.bias_add",
            &[t(&[1, 8, 4, 4], "float32"), Type::incomplete()],
            &[],
        );
        assert_eq!(assigns[0], (1, t(&[8], "float32")));
        assert_eq!(
            fails("nn.bias_add", &[t(&[2, 3], "float32"), Type::incomplete()], &[(
                "axis",
                AttrValue::Int(2)
            )]),
            "The axis in bias_add must be in range for the shape; attempted to access index 2 of [2, 3]"
        );
    }

    #[test]
    fn batch_matmul_norms_dropout() {
        assert_eq!(
            solve_out(
                "nn.batch_matmul",
                &[t(&[1, 16, 32], "float32"), t(&[4, 64, 32], "float32")],
                &[("transpose_b", b(true))]
            ),
            t(&[4, 16, 64], "float32")
        );
        assert!(fails(
            "nn.batch_matmul",
            &[t(&[1, 16, 32], "float32"), t(&[1, 16, 32], "float32")],
            &[]
        )
        .starts_with("BatchDot: shapes of x and y is inconsistent"));
        let assigns = solved(
            "nn.batch_norm",
            &[
                t(&[1, 3, 8, 8], "float32"),
                Type::incomplete(),
                Type::incomplete(),
                Type::incomplete(),
                Type::incomplete(),
            ],
            &[],
        );
        assert_eq!(assigns.len(), 5);
        assert_eq!(assigns[3], (4, t(&[3], "float32")));
        assert_eq!(
            assigns[4].1,
            tup(&[
                t(&[1, 3, 8, 8], "float32"),
                t(&[3], "float32"),
                t(&[3], "float32")
            ])
        );
        let assigns = solved(
            "nn.layer_norm",
            &[
                t(&[2, 5], "float32"),
                Type::incomplete(),
                Type::incomplete(),
            ],
            &[],
        );
        assert_eq!(assigns[0], (1, t(&[5], "float32")));
        assert_eq!(
            solve_out("nn.dropout", &[t(&[2], "float32")], &[]),
            tup(&[t(&[2], "float32"), t(&[2], "float32")])
        );
        assert_eq!(
            solve_out("nn.batch_flatten", &[t64(&[2, 3, 4], "float32")], &[]),
            t64(&[2, 12], "float32")
        );
        assert_eq!(
            fails(
                "nn.softmax",
                &[t(&[2, 3], "float32")],
                &[("axis", AttrValue::Int(2))]
            ),
            "Wrong axis (2) not in expected range: [-2, 2)"
        );
    }

    #[test]
    fn pad_upsampling_space_batch() {
        let pad_width = AttrValue::Array(vec![ints(&[0, 0]), ints(&[1, 2])]);
        assert_eq!(
            solve_out(
                "nn.pad",
                &[t(&[3, 4], "float32"), t(&[], "float32")],
                &[("pad_width", pad_width)]
            ),
            t(&[3, 7], "float32")
        );
        assert_eq!(
            solve_out(
                "nn.upsampling",
                &[t(&[1, 16, 32, 32], "float32")],
                &[("scale_h", f(2.0)), ("scale_w", f(2.0))]
            ),
            t(&[1, 16, 64, 64], "float32")
        );
        let out = solve_out(
            "nn.space_to_batch_nd",
            &[t(&[1, 4, 4, 1], "float32")],
            &[
                ("block_shape", ints(&[2, 2])),
                (
                    "paddings",
                    AttrValue::Array(vec![ints(&[0, 0]), ints(&[0, 0])]),
                ),
            ],
        );
        assert_eq!(out, t(&[4, 2, 2, 1], "float32"));
        let out = solve_out(
            "nn.batch_to_space_nd",
            &[t(&[4, 2, 2, 1], "float32")],
            &[
                ("block_shape", ints(&[2, 2])),
                (
                    "crops",
                    AttrValue::Array(vec![ints(&[0, 0]), ints(&[0, 0])]),
                ),
            ],
        );
        assert_eq!(out, t(&[1, 4, 4, 1], "float32"));
    }

    #[test]
    fn prelu_and_cross_entropy() {
        let assigns = solved(
            "nn.prelu",
            &[t(&[1, 8, 8, 16], "float32"), Type::incomplete()],
            &[("axis", int(3))],
        );
        assert_eq!(assigns[0], (1, t(&[16], "float32")));
        assert_eq!(
            fails(
                "nn.prelu",
                &[t(&[1, 3], "float32"), t(&[3], "float32")],
                &[("axis", int(-1))]
            ),
            "IndexError: indexing -1 on an array of size 2"
        );
        let out = solve_out(
            "nn.cross_entropy",
            &[t(&[4, 10], "float32"), t(&[4, 10], "float64")],
            &[],
        );
        assert_eq!(out, t(&[], "float32"));
        assert!(fails(
            "nn.cross_entropy_with_logits",
            &[t(&[2, 3, 5], "float32"), t(&[2, 3, 5], "float32")],
            &[]
        )
        .ends_with("x shape = [2, 3, 5], y shape = [2, 3, 5]"));
    }
}
