//! QNN relations (`src/relay/qnn/op/*.cc`, `op_common.h`, `utils.h`):
//! `QnnBroadcastRel` (`qnn.add`, `qnn.mul`, `qnn.subtract`),
//! `QnnConcatenateRel`, `QnnConv2DRel`, `QnnConv2DTransposeRel`,
//! `QnnDenseRel`, `QuantizeRel`, `RequantizeRel`, `QnnBatchMatmulRel`,
//! `QnnAvgPool2DRel` and `QnnDensePackRel` (the element-wise ones are in
//! [`super::qnn_elemwise`]).
//!
//! Each checks the dtypes of its quantized inputs and the scalar types of
//! its scales and zero points, assigns per-channel scale/zero-point vectors
//! (`AssignType`: a non-scalar scale gets the shape `[C]`), and then runs the
//! plain relation on the tensor inputs (`BroadcastRel`, `ConcatenateRel`,
//! `Conv2DRel`, `Conv2DTransposeRel`, `MatmulRel`). Where TVM's `ICHECK`s
//! would abort on a scale or zero point that is still incomplete, we wait.

use super::broadcast::broadcast_rel;
use super::display;
use super::layout::Layout;
use super::nn_conv::at;
use super::nn_misc::matmul_rel;
use super::nn_pool::pool_dimension;
use super::shape::{c_int, const_int, is_any, mul};
use super::tensor_transform::concatenate_rel;
use super::{check, error, item, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::{Dim, TensorType, TypeKind};

relations! {
    /// `QnnBroadcastRel`.
    "QnnBroadcast" => qnn_broadcast_rel;
    /// `QnnConcatenateRel`.
    "QnnConcatenate" => qnn_concatenate_rel;
    /// `QnnConv2DRel`.
    "QnnConv2D" => qnn_conv2d_rel;
    /// `QnnConv2DTransposeRel`.
    "QnnConv2DTranspose" => qnn_conv2d_transpose_rel;
    /// `QnnDenseRel`.
    "QDense" => qnn_dense_rel;
    /// `QuantizeRel`.
    "Quantize" => quantize_rel;
    /// `RequantizeRel`.
    "Requantize" => requantize_rel;
    /// `QnnBatchMatmulRel`: `BatchMatmulRel` on `int8`/`uint8` operands
    /// with an `int32` output.
    "QBatchMatmul" => qnn_batch_matmul_rel;
    /// `QnnAvgPool2DRel`.
    "QnnAvgPool2D" => qnn_avg_pool2d_rel;
    /// `QnnDensePackRel`: 2-D data, a 4-D packed weight.
    "QnnDensePack" => qnn_dense_pack_rel;
}

pub(super) const INT8: DataType = DataType::int(8);
pub(super) const UINT8: DataType = DataType::uint(8);
const INT16: DataType = DataType::int(16);
const UINT16: DataType = DataType::uint(16);
pub(super) const INT32: DataType = DataType::INT32;
const INT64: DataType = DataType::INT64;
pub(super) const FLOAT32: DataType = DataType::FLOAT32;

/// The checks of `IsScalarType` on a tensor: rank 0, of `dtype`.
pub(super) fn check_scalar(t: &TensorType, dtype: DataType) -> Result<(), RelationError> {
    check(t.shape.is_empty(), || {
        format!(
            "Check failed: tensor_type->shape.size() == 0 ({} vs. 0)",
            t.shape.len()
        )
    })?;
    check(t.dtype == dtype, || {
        format!("Expected {dtype} but got {}", t.dtype)
    })
}

/// `IsScalarType(types[slot], dtype)`; `Ok(false)` to wait on an
/// incomplete type.
pub(super) fn is_scalar_type(ctx: &Ctx, slot: usize, dtype: DataType) -> Step {
    let ty = ctx.ty(slot);
    match ty.kind() {
        TypeKind::Incomplete(_) => Ok(false),
        TypeKind::Tensor(t) => {
            check_scalar(t, dtype)?;
            Ok(true)
        }
        _ => Err(RelationError::at_input(
            format!(
                "Only tensor type can be checked for scalar values. But got{}",
                display::ty(ty)
            ),
            slot,
        )),
    }
}

/// `AssignType(types[slot], dtype, dim)`: a scalar stays, a vector becomes
/// `[dim]`; `Ok(false)` to wait on an incomplete type.
pub(super) fn assign_type(ctx: &mut Ctx, slot: usize, dtype: DataType, dim: Dim) -> Step {
    let ty = ctx.ty(slot).clone();
    match ty.kind() {
        TypeKind::Incomplete(_) => Ok(false),
        TypeKind::Tensor(t) => {
            check(t.dtype == dtype, || {
                format!("Expected type is {dtype} but received {}", t.dtype)
            })?;
            if !t.shape.is_empty() {
                ctx.assign(slot, tensor(vec![dim], t.dtype));
            }
            Ok(true)
        }
        _ => Err(RelationError::at_input(
            format!(
                "Can assign type to Tensor type only. But got {}",
                display::ty(&ty)
            ),
            slot,
        )),
    }
}

/// TVM's dtype checks on a quantized operator's operands: `dtype` is one
/// of `allowed`, else "Expected {expected} for {role} but was {dtype}".
pub(super) fn expect_dtype(
    dtype: DataType,
    allowed: &[DataType],
    expected: &str,
    role: &str,
) -> Result<(), RelationError> {
    check(allowed.contains(&dtype), || {
        format!("Expected {expected} for {role} but was {dtype}")
    })
}

/// The channel axis of a rank-`rank` operand (`get_channel_axis`).
fn channel_axis(rank: i64, axis: i64) -> i64 {
    if rank <= 1 {
        0
    } else if axis < 0 {
        rank + axis
    } else {
        axis
    }
}

/// The axis of `QuantizeRel` and `RequantizeRel`: a negative `axis` counts
/// from the end, and is 0 for a scalar.
pub(super) fn quantize_axis(rank: i64, axis: i64) -> i64 {
    match axis {
        a if a < 0 && rank > 0 => rank + a,
        a if a < 0 => 0,
        a => a,
    }
}

/// TVM's range check of a channel axis (`{name} {value} is out of range`):
/// `axis` (normalised from the attribute's `value`) must index the
/// operand, a scalar counting as rank 1.
pub(super) fn check_axis(
    name: &str,
    value: i64,
    axis: i64,
    rank: i64,
) -> Result<(), RelationError> {
    check(axis < rank.max(1) && axis >= 0, || {
        format!("{name} {value} is out of range")
    })
}

/// The size along `axis`, `Integer(1)` for a scalar.
pub(super) fn axis_shape(shape: &[Dim], axis: i64) -> Result<Dim, RelationError> {
    if shape.is_empty() {
        return Ok(c_int(1));
    }
    usize::try_from(axis)
        .ok()
        .and_then(|a| shape.get(a))
        .cloned()
        .ok_or_else(|| RelationError::new(format!("axis {axis} is out of range")))
}

fn scalar_rank(ctx: &Ctx, slot: usize) -> Result<usize, RelationError> {
    ctx.tensor(slot)
        .map(|t| t.shape.len())
        .ok_or_else(|| RelationError::new("scale and zero point must be tensors"))
}

fn qnn_broadcast_rel(ctx: &mut Ctx) -> Step {
    if (0..8).any(|i| ctx.is_incomplete(i)) {
        return Ok(false);
    }
    let (Some(lhs), Some(rhs)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let lhs_rank = lhs.shape.len() as i64;
    let rhs_rank = rhs.shape.len() as i64;
    let lhs_axis_attr = ctx.attrs.int("lhs_axis")?;
    let rhs_axis_attr = ctx.attrs.int("rhs_axis")?;
    let lhs_axis = channel_axis(lhs_rank, lhs_axis_attr);
    let rhs_axis = channel_axis(rhs_rank, rhs_axis_attr);
    let lhs_scalar = scalar_rank(ctx, 2)? == 0 && scalar_rank(ctx, 3)? == 0;
    let rhs_scalar = scalar_rank(ctx, 4)? == 0 && scalar_rank(ctx, 5)? == 0;
    if !lhs_scalar {
        check_axis("lhs_axis", lhs_axis_attr, lhs_axis, lhs_rank)?;
    }
    if !rhs_scalar {
        check_axis("rhs_axis", rhs_axis_attr, rhs_axis, rhs_rank)?;
    }
    let lhs_dim = axis_shape(&lhs.shape, lhs_axis)?;
    let rhs_dim = axis_shape(&rhs.shape, rhs_axis)?;
    let steps = [
        assign_type(ctx, 2, FLOAT32, lhs_dim.clone())?,
        assign_type(ctx, 3, INT32, lhs_dim)?,
        assign_type(ctx, 4, FLOAT32, rhs_dim.clone())?,
        assign_type(ctx, 5, INT32, rhs_dim)?,
        is_scalar_type(ctx, 6, FLOAT32)?,
        is_scalar_type(ctx, 7, INT32)?,
    ];
    if steps.contains(&false) {
        return Ok(false);
    }
    ctx.nested(&[0, 1, 8], broadcast_rel)
}

fn qnn_concatenate_rel(ctx: &mut Ctx) -> Step {
    if ctx.is_incomplete(0) {
        return Ok(false);
    }
    for (slot, what, dtype) in [
        (1usize, "scales as the second", FLOAT32),
        (2, "zero_points as the third", INT32),
    ] {
        let fields = match ctx.ty(slot).kind() {
            TypeKind::Tuple(fields) => fields.clone(),
            TypeKind::Incomplete(_) => return Ok(false),
            _ => {
                return Err(RelationError::at_input(
                    format!(
                        "qnn concatenate requires a tuple of {what} argument, found {}",
                        display::ty(ctx.ty(slot))
                    ),
                    slot,
                ))
            }
        };
        for field in &fields {
            if field.is_incomplete() {
                return Ok(false);
            }
            let Some(t) = field.as_tensor() else {
                return error(format!(
                    "Only tensor type can be checked for scalar values. But got{}",
                    display::ty(field)
                ));
            };
            check_scalar(t, dtype)?;
        }
    }
    if ctx.is_incomplete(3) || ctx.is_incomplete(4) {
        return Ok(false);
    }
    if !is_scalar_type(ctx, 3, FLOAT32)? || !is_scalar_type(ctx, 4, INT32)? {
        return Ok(false);
    }
    ctx.nested(&[0, 5], concatenate_rel)
}

/// The input zero point (slot 2) and input scale (slot 4) of `qnn.conv2d`
/// and `qnn.dense` are scalars; waits while either zero point or the input
/// scale (slots 2 to 4) is incomplete.
fn input_params_are_scalars(ctx: &Ctx) -> Step {
    if (2..5).any(|i| ctx.is_incomplete(i)) {
        return Ok(false);
    }
    Ok(is_scalar_type(ctx, 2, INT32)? && is_scalar_type(ctx, 4, FLOAT32)?)
}

/// The weight scale's channel count: `weight.shape[O]` for one group,
/// `weight.shape[I] * weight.shape[O]` otherwise.
fn weight_scale_dim(
    weight_shape: &[Dim],
    kernel_layout: &str,
    groups: i64,
) -> Result<Dim, RelationError> {
    let get = |axis: usize| {
        weight_shape
            .get(axis)
            .cloned()
            .ok_or_else(|| RelationError::new("Kernel layout attribute is not defined"))
    };
    let o = kernel_layout.find('O');
    if groups == 1 {
        let o = o.ok_or_else(|| RelationError::new("Kernel layout attribute is not defined"))?;
        get(o)
    } else {
        let i = kernel_layout.find('I');
        match (i, o) {
            (Some(i), Some(o)) => Ok(mul(&get(i)?, &get(o)?)),
            _ => error("Kernel layout attribute is not defined"),
        }
    }
}

fn qnn_conv2d_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(weight)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let out_dtype = ctx.attrs.dtype("out_dtype")?;
    expect_dtype(
        data.dtype,
        &[INT8, UINT8, INT16],
        "qnn conv2d type(int8, uint8, int16)",
        "input",
    )?;
    expect_dtype(
        weight.dtype,
        &[INT8, UINT8, INT16],
        "qnn conv2d type(int8, uint8, int16)",
        "weight",
    )?;
    expect_dtype(
        out_dtype,
        &[INT16, INT32, INT64],
        "qnn conv2d type(int16, int32, int64)",
        "output",
    )?;
    if !input_params_are_scalars(ctx)? {
        return Ok(false);
    }
    let dim = weight_scale_dim(
        &weight.shape,
        &ctx.attrs.str("kernel_layout")?,
        ctx.attrs.int("groups")?,
    )?;
    if !assign_type(ctx, 5, FLOAT32, dim)? {
        return Ok(false);
    }
    ctx.nested(&[0, 1, 6], super::nn_conv::conv2d_rel)
}

fn qnn_conv2d_transpose_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(weight)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let out_dtype = ctx.attrs.dtype("out_dtype")?;
    expect_dtype(
        data.dtype,
        &[INT8, UINT8, INT16, UINT16],
        "qnn conv2d type(int8, uint8, int16)",
        "input",
    )?;
    expect_dtype(
        weight.dtype,
        &[INT8, UINT8],
        "qnn conv2d type(int8, uint8)",
        "weight",
    )?;
    expect_dtype(
        out_dtype,
        &[INT16, INT32, INT64],
        "qnn conv2d type(int16, int32, int64)",
        "output",
    )?;
    if (2..5).any(|i| ctx.is_incomplete(i)) {
        return Ok(false);
    }
    let tensors = (ctx.tensor(2), ctx.tensor(3), ctx.tensor(4));
    let (Some(input_zp), Some(weight_zp), Some(input_scale)) = tensors else {
        return error("scale and zero point must be tensors");
    };
    check(weight_zp.dtype == INT32, || {
        "Check failed: weight_zp_type->dtype == DataType::Int(32)".to_string()
    })?;
    let is_single = |shape: &[Dim]| {
        shape.is_empty()
            || shape
                .iter()
                .map(const_int)
                .try_fold(1i64, |acc, d| d.map(|d| acc * d))
                == Some(1)
    };
    check(
        is_single(&input_zp.shape) && is_single(&input_scale.shape),
        || "Zero point or scale should be scalar or a vector with one element.".to_string(),
    )?;
    assign_type(ctx, 2, INT32, c_int(1))?;
    assign_type(ctx, 4, FLOAT32, c_int(1))?;
    let dim = weight_scale_dim(
        &weight.shape,
        &ctx.attrs.str("kernel_layout")?,
        ctx.attrs.int("groups")?,
    )?;
    if !assign_type(ctx, 5, FLOAT32, dim)? {
        return Ok(false);
    }
    ctx.nested(&[0, 1, 6], super::nn_conv::conv2d_transpose_rel)
}

fn qnn_dense_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(weight)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let out_dtype = ctx.attrs.dtype("out_dtype")?;
    expect_dtype(
        data.dtype,
        &[INT8, UINT8, INT16, UINT16],
        "quantized dense type(int8, uint8, int16, uint16)",
        "input",
    )?;
    expect_dtype(
        weight.dtype,
        &[INT8, UINT8],
        "quantized dense type(int8, uint8)",
        "weight",
    )?;
    expect_dtype(
        out_dtype,
        &[INT32, INT64],
        "quantized dense type(int32, int64)",
        "output",
    )?;
    if !input_params_are_scalars(ctx)? {
        return Ok(false);
    }
    let units = ctx.attrs.dim("units")?.unwrap_or(Dim::Any);
    if !assign_type(ctx, 5, FLOAT32, units)? {
        return Ok(false);
    }
    ctx.nested(&[0, 1, 6], matmul_rel)
}

fn quantize_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check(data.dtype == FLOAT32, || {
        format!("Input type should be one of float32 but was {}", data.dtype)
    })?;
    let axis_attr = ctx.attrs.int("axis")?;
    let rank = data.shape.len() as i64;
    let axis = quantize_axis(rank, axis_attr);
    let what = "Quantize: expect to be TensorType but get ";
    let Some(scale) = ctx.tensor_or_wait(1, what)? else {
        return Ok(false);
    };
    let Some(zp) = ctx.tensor_or_wait(2, what)? else {
        return Ok(false);
    };
    if !(scale.shape.is_empty() && zp.shape.is_empty()) {
        check_axis("axis", axis_attr, axis, rank).about("axis")?;
    }
    let dim = axis_shape(&data.shape, axis)?;
    assign_type(ctx, 1, FLOAT32, dim.clone())?;
    assign_type(ctx, 2, INT32, dim)?;
    let out_dtype = ctx.attrs.dtype("out_dtype")?;
    check([INT8, UINT8, INT16, INT32].contains(&out_dtype), || {
        format!("Output type should be one of [int8, unit8, int16, int32] but was {out_dtype}")
    })?;
    ctx.assign(3, tensor(data.shape.clone(), out_dtype));
    Ok(true)
}

fn requantize_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    if ctx.is_incomplete(3) || ctx.is_incomplete(4) {
        return Ok(false);
    }
    check(
        [INT8, UINT8, INT16, INT32, INT64].contains(&data.dtype),
        || {
            format!(
                "Input type should be one of [int8, uint8, int16, int32, int64] but was {}",
                data.dtype
            )
        },
    )?;
    let axis_attr = ctx.attrs.int("axis")?;
    let rank = data.shape.len() as i64;
    let axis = quantize_axis(rank, axis_attr);
    check_axis("axis", axis_attr, axis, rank).about("axis")?;
    let dim = axis_shape(&data.shape, axis)?;
    if !assign_type(ctx, 1, FLOAT32, dim.clone())? || !assign_type(ctx, 2, INT32, dim)? {
        return Ok(false);
    }
    if !is_scalar_type(ctx, 3, FLOAT32)? || !is_scalar_type(ctx, 4, INT32)? {
        return Ok(false);
    }
    let out_dtype = ctx.attrs.dtype("out_dtype")?;
    check([INT8, UINT8, INT16, INT32].contains(&out_dtype), || {
        format!("Output type should be one of [int8, uint8, int16, int32] but was {out_dtype}")
    })?;
    ctx.assign(5, tensor(data.shape.clone(), out_dtype));
    Ok(true)
}

fn qnn_batch_matmul_rel(ctx: &mut Ctx) -> Step {
    let (Some(x), Some(y)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let out_dtype = ctx.attrs.dtype("out_dtype")?;
    expect_dtype(
        x.dtype,
        &[INT8, UINT8],
        "quantized batch_matmul type(int8, uint8)",
        "input",
    )?;
    expect_dtype(
        y.dtype,
        &[INT8, UINT8],
        "quantized batch_matmul type(int8, uint8)",
        "weight",
    )?;
    expect_dtype(
        out_dtype,
        &[INT32],
        "quantized batch_matmul type(int32)",
        "output",
    )?;
    // The zero points (slots 2, 3), then the scales (4, 5).
    if (2..6).any(|i| ctx.is_incomplete(i)) {
        return Ok(false);
    }
    for (slot, dtype) in [(2, INT32), (3, INT32), (4, FLOAT32), (5, FLOAT32)] {
        is_scalar_type(ctx, slot, dtype)?;
    }
    ctx.nested(&[0, 1, 6], super::nn_misc::batch_matmul_rel)
}

fn qnn_avg_pool2d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    expect_dtype(
        data.dtype,
        &[INT8, UINT8],
        "quantized avg_pool2d type(int8, uint8)",
        "input",
    )?;
    if (1..5).any(|i| ctx.is_incomplete(i)) {
        return Ok(false);
    }
    for (slot, dtype) in [(1, FLOAT32), (2, INT32), (3, FLOAT32), (4, INT32)] {
        is_scalar_type(ctx, slot, dtype)?;
    }
    check(data.shape.len() >= 2, || {
        format!(
            "Check failed: dshape.size() >= 2U ({} vs. 2) : Pool2D only support input >= 2-D: input must have height and width",
            data.shape.len()
        )
    })?;
    let attrs = ctx.attrs;
    let name = attrs.str("layout")?;
    let layout = Layout::parse(&name).about("layout")?;
    let (Some(h), Some(w)) = (layout.index_of('H'), layout.index_of('W')) else {
        return error(format!(
            "Invalid input layout Layout({name}). qnn_avg_pool2d inut layout must have H and W, which cannot be split"
        ))
        .about("layout");
    };
    if layout.contains('h') || layout.contains('w') {
        return error(format!(
            "Invalid input layout Layout({name}). qnn_avg_pool2d inut layout must have H and W, which cannot be split"
        ))
        .about("layout");
    }
    let padding = attrs.dims_or_empty("padding")?;
    let two = c_int(2);
    let (pad_h, pad_w) = match padding.len() {
        1 => (mul(&padding[0], &two), mul(&padding[0], &two)),
        2 => (mul(&padding[0], &two), mul(&padding[1], &two)),
        4 => (
            super::shape::add(&padding[0], &padding[2]),
            super::shape::add(&padding[1], &padding[3]),
        ),
        // TVM returns `false` here: the relation never resolves.
        _ => return Ok(false),
    };
    let pool_size = attrs.dims_or_empty("pool_size")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let strides = attrs.dims_or_empty("strides")?;
    let ceil_mode = attrs.bool("ceil_mode")?;
    let mut oshape = data.shape.clone();
    for (i, (axis, pad)) in [(h, pad_h), (w, pad_w)].into_iter().enumerate() {
        let input = item(&data.shape, axis)?;
        if is_any(input) {
            continue;
        }
        oshape[axis] = pool_dimension(
            input,
            &pad,
            &at(&pool_size, i, "pool_size")?,
            &at(&dilation, i, "dilation")?,
            &at(&strides, i, "strides")?,
            ceil_mode,
        )?;
    }
    ctx.assign(5, tensor(oshape, data.dtype));
    Ok(true)
}

fn qnn_dense_pack_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(weight)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    check(data.shape.len() == 2, || {
        format!(
            "Check failed: data->shape.size() == 2 ({} vs. 2) : Only 2D data is supported",
            data.shape.len()
        )
    })?;
    check(weight.shape.len() == 4, || {
        "Expect weight to be 4D tensor".to_string()
    })?;
    let mut oshape = data.shape.clone();
    oshape[1] = mul(&weight.shape[0], &weight.shape[2]);
    let out_dtype = ctx.attrs.dtype("out_dtype")?;
    check(out_dtype.bits > 0, || {
        "Output dtype bits should be greater than 0.".to_string()
    })?;
    ctx.assign(6, tensor(oshape, out_dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::Type;

    fn scalar(dtype: &str) -> Type {
        t(&[], dtype)
    }

    #[test]
    fn qnn_ops() {
        let out = solve_out(
            "qnn.requantize",
            &[
                t(&[1, 4], "int32"),
                scalar("float32"),
                scalar("int32"),
                scalar("float32"),
                scalar("int32"),
            ],
            &[("out_dtype", dt("int8"))],
        );
        assert_eq!(out, t(&[1, 4], "int8"));
        let assigns = solved(
            "qnn.quantize",
            &[t(&[2, 3], "float32"), t(&[5], "float32"), scalar("int32")],
            &[
                ("out_dtype", dt("uint8")),
                ("axis", relay_ir::AttrValue::Int(1)),
            ],
        );
        assert_eq!(assigns[0], (1, t(&[3], "float32")));
        assert_eq!(assigns[1], (3, t(&[2, 3], "uint8")));
        let out = solve_out(
            "qnn.add",
            &[
                t(&[2, 3], "int8"),
                t(&[3], "int8"),
                scalar("float32"),
                scalar("int32"),
                scalar("float32"),
                scalar("int32"),
                scalar("float32"),
                scalar("int32"),
            ],
            &[],
        );
        assert_eq!(out, t(&[2, 3], "int8"));
        let out = solve_out(
            "qnn.dense",
            &[
                t(&[1, 8], "int8"),
                t(&[4, 8], "int8"),
                scalar("int32"),
                scalar("int32"),
                scalar("float32"),
                scalar("float32"),
            ],
            &[("units", int(4)), ("out_dtype", dt("int32"))],
        );
        assert_eq!(out, t(&[1, 4], "int32"));
        let out = solve_out(
            "qnn.conv2d",
            &[
                t(&[1, 3, 8, 8], "uint8"),
                t(&[4, 3, 3, 3], "int8"),
                scalar("int32"),
                scalar("int32"),
                scalar("float32"),
                t(&[4], "float32"),
            ],
            &[("out_dtype", dt("int32"))],
        );
        assert_eq!(out, t(&[1, 4, 6, 6], "int32"));
        assert!(waits(
            "qnn.conv2d",
            &[
                t(&[1, 3, 8, 8], "uint8"),
                t(&[4, 3, 3, 3], "int8"),
                Type::incomplete(),
                scalar("int32"),
                scalar("float32"),
                t(&[4], "float32"),
            ],
            &[("out_dtype", dt("int32"))],
        ));
    }
}
