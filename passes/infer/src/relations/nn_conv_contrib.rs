//! The less common convolution relations (`src/relay/op/nn/convolution.cc`,
//! `bitserial.cc`): `Conv1DTransposeRel`, `Conv2DBackwardWeightRel`, the
//! pre-transformed-weight convolutions `Conv2DGemmRel` and
//! `Conv3DWinogradRel`, the weight transforms (`Conv2DGemmWeightTransformRel`,
//! `Conv2DWinogradWeightTransformRel`, `Conv3DWinogradWeightTransformRel`,
//! `Conv2DWinogradNNPACKWeightTransformRel`), and the bit-serial
//! `BitPackRel` and `BinaryConv2DRel`.
//!
//! They share the layout handling of [`super::nn_conv`]. The convolutions
//! on transformed weights never look at the weight: `kernel_size` and
//! `channels` must be set. Where TVM divides with C++ `/` the sizes are
//! truncated (`Conv2DGemmRel`, `Conv3DWinogradRel`, `BinaryConv2DRel`).

use super::display::shape_array;
use super::layout::{BijectiveLayout, Layout};
use super::nn_conv::{
    at, check_kernel_size, check_len, conv_layouts, dilated, groups_dim, padding_dhw, padding_hw,
    transposed_size, ConvLayouts, LayoutWording,
};
use super::shape::assert_eq as dims_equal;
use super::shape::{
    add, c_int, const_int, floordiv, if_then_else, is_any, keeping_any, mul, not_equal, sub,
    truncdiv,
};
use super::{check, display, error, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::Dim;

relations! {
    /// `Conv1DTransposeRel`.
    "Conv1DTranspose" => conv1d_transpose_rel;
    /// `Conv2DBackwardWeightRel`: the weight gradient's shape from the
    /// output gradient's and the data's channels.
    "Conv2DBackwardWeight" => conv2d_backward_weight_rel;
    /// `Conv2DGemmRel` (`nn.contrib_conv2d_gemm_without_weight_transform`).
    "Conv2DGemm" => conv2d_gemm_rel;
    /// `Conv3DWinogradRel`.
    "Conv3DWinograd" => conv3d_winograd_rel;
    /// `Conv2DGemmWeightTransformRel`.
    "Conv2DGemmWeightTransform" => conv2d_gemm_weight_transform_rel;
    /// `Conv2DWinogradWeightTransformRel`.
    "Conv2DWinogradWeightTransform" => conv2d_winograd_weight_transform_rel;
    /// `Conv3DWinogradWeightTransformRel`.
    "Conv3DWinogradWeightTransform" => conv3d_winograd_weight_transform_rel;
    /// `Conv2DWinogradNNPACKWeightTransformRel`.
    "Conv2DWinogradNNPACKWeightTransform" => conv2d_winograd_nnpack_weight_transform_rel;
    /// `BitPackRel`.
    "BitPack" => bitpack_rel;
    /// `BinaryConv2DRel` (`nn.bitserial_conv2d`).
    "BinaryConv2D" => binary_conv2d_rel;
}

/// `GetPaddingWidth`: one value padded on both sides, or (left, right).
fn padding_w(padding: &[Dim]) -> Result<Dim, RelationError> {
    match padding.len() {
        1 => Ok(mul(&padding[0], &c_int(2))),
        2 => Ok(add(&padding[0], &padding[1])),
        // TVM's check lets 4 values through and then uses an undefined
        // width; we stop there.
        4 => error("Expected padding size of 1 or 2, found 4"),
        n => error(format!(
            "Check failed: padding.size() == 4 ({n} vs. 4) :  Expected padding size of 1 or 2, found {n}"
        )),
    }
}

fn conv1d_transpose_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let weight = ctx.tensor(1);
    let attrs = ctx.attrs;
    let ConvLayouts {
        data: trans_in,
        kernel: trans_kernel,
        out: trans_out,
    } = conv_layouts(ctx, "Conv", LayoutWording::ButGot, "NCW", "IOW")?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let groups_value = attrs.int("groups")?;
    let groups = groups_dim(groups_value);
    let kernel_size = attrs.dims("kernel_size")?;
    let channels_attr = attrs.dim("channels")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let (channels, dilated_x);
    if let (Some(kernel_size), Some(channels_attr)) = (&kernel_size, &channels_attr) {
        check_len(kernel_size, 1, "kernel_size")?;
        check_len(&dilation, 1, "dilation")?;
        let wshape = vec![
            dshape[1].clone(),
            floordiv(channels_attr, &groups)?,
            kernel_size[0].clone(),
        ];
        let wshape = trans_kernel.backward_shape(&wshape)?;
        dilated_x = dilated(&kernel_size[0], &dilation[0]);
        channels = channels_attr.clone();
        let dtype = weight.as_ref().map_or(data.dtype, |w| w.dtype);
        ctx.assign(1, tensor(wshape, dtype));
    } else {
        let Some(weight) = &weight else {
            return Ok(false);
        };
        let wshape = trans_kernel.forward_shape(&weight.shape)?;
        if let Some(kernel_size) = &kernel_size {
            check_len(kernel_size, 1, "kernel_size")?;
            check_kernel_size("Conv1DTraspose", kernel_size, &wshape)?;
        }
        if let Some(channels_attr) = &channels_attr {
            let per_group = floordiv(channels_attr, &groups)?;
            check(dims_equal(&per_group, &wshape[1]), || {
                format!(
                    "Conv1DTraspose: shape of weight is inconsistent with channels,  out_channels // groups != weight.shape[1]  out_channels={} groups={groups_value} wshape={}",
                    display::dim(channels_attr),
                    shape_array(&wshape)
                )
            })?;
        }
        if !is_any(&dshape[1]) && !is_any(&wshape[0]) {
            check(dims_equal(&dshape[1], &wshape[0]), || {
                "Check failed: (reporter->AssertEQ(dshape_ncw[1], wshape[0])) is false: "
                    .to_string()
            })?;
        }
        channels = wshape[1].clone();
        dilated_x = dilated(&wshape[2], &at(&dilation, 0, "dilation")?);
    }
    let pad_w = padding_w(&attrs.dims_or_empty("padding")?).about("padding")?;
    let strides = attrs.dims_or_empty("strides")?;
    let output_padding = attrs.dims_or_empty("output_padding")?;
    let width = transposed_size(
        &dshape[2],
        &at(&strides, 0, "strides")?,
        &dilated_x,
        &pad_w,
        &at(&output_padding, 0, "output_padding")?,
    );
    let dtype = attrs.dtype_or("out_dtype", data.dtype)?;
    let oshape = trans_out.backward_shape(&[dshape[0].clone(), channels, width])?;
    ctx.assign(2, tensor(oshape, dtype));
    Ok(true)
}

/// `BijectiveLayout(Layout(name), Layout(target))` of a layout attribute
/// that TVM uses without checking that the conversion exists; we report it.
fn convert_layout(
    ctx: &Ctx,
    attribute: &'static str,
    target: &str,
) -> Result<BijectiveLayout, RelationError> {
    let name = ctx.attrs.str(attribute)?;
    let layout = Layout::parse(&name).about(attribute)?;
    let to = Layout::parse(target)?;
    BijectiveLayout::new(&layout, &to)
        .ok_or_else(|| {
            RelationError::new(format!(
                "the layout {name} of `{attribute}` is not convertible from {target}"
            ))
        })
        .about(attribute)
}

fn conv2d_backward_weight_rel(ctx: &mut Ctx) -> Step {
    // TVM reads the output gradient without checking it; we wait for it too.
    let (Some(grad), Some(data)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let Some(kernel_size) = attrs.dims("kernel_size")? else {
        return error("kernel_size attribute needs to be specified").about("kernel_size");
    };
    // The attributes name the layouts of the forward convolution's
    // operands: `data_layout` is the gradient's, `kernel_layout` the
    // data's and `out_layout` the weight's.
    let trans_grad = convert_layout(ctx, "data_layout", "NCHW")?;
    let trans_in = convert_layout(ctx, "kernel_layout", "NCHW")?;
    let trans_kernel = convert_layout(ctx, "out_layout", "OIHW")?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let grad_shape = trans_grad.forward_shape(&grad.shape)?;
    let in_channels = dshape[1].clone();
    let out_channels = grad_shape[1].clone();
    let Some(in_value) = const_int(&in_channels) else {
        return error("Check failed: (in_channels_intimm) is false: ");
    };
    let Some(out_value) = const_int(&out_channels) else {
        return error("Check failed: (out_channels_intimm) is false: ");
    };
    let groups_value = attrs.int("groups")?;
    let groups = groups_dim(groups_value);
    let weight_dim_i = if in_value == out_value && in_value == groups_value {
        let Some(channels) = attrs.dim("channels")? else {
            return error("out_channels attribute not specified for depth wise conv2d.")
                .about("channels");
        };
        floordiv(&channels, &groups)?
    } else {
        floordiv(&in_channels, &groups)?
    };
    let wshape = vec![
        out_channels,
        weight_dim_i,
        at(&kernel_size, 0, "kernel_size")?,
        at(&kernel_size, 1, "kernel_size")?,
    ];
    let wshape = trans_kernel.backward_shape(&wshape)?;
    let dtype = attrs.dtype_or("out_dtype", grad.dtype)?;
    ctx.assign(2, tensor(wshape, dtype));
    Ok(true)
}

/// `(in + pad - dilated) / stride + 1` with C++ `/` (truncating).
fn truncated_size(
    input: &Dim,
    pad: &Dim,
    dilated: &Dim,
    stride: &Dim,
) -> Result<Dim, RelationError> {
    Ok(add(
        &truncdiv(&sub(&add(input, pad), dilated), stride)?,
        &c_int(1),
    ))
}

/// The `kernel_size` and `channels` a convolution on a transformed weight
/// needs, `kernel_size` and `dilation` checked to have `n` values each.
fn fixed_kernel(ctx: &Ctx, n: usize) -> Result<(Vec<Dim>, Dim, Vec<Dim>), RelationError> {
    let attrs = ctx.attrs;
    let (Some(kernel_size), Some(channels)) = (attrs.dims("kernel_size")?, attrs.dim("channels")?)
    else {
        return error(
            "The kernel size and channels of a Conv must be set or inferred by previous pass",
        );
    };
    let dilation = attrs.dims_or_empty("dilation")?;
    check_len(&kernel_size, n, "kernel_size")?;
    check_len(&dilation, n, "dilation")?;
    let dilated_k = (0..n)
        .map(|i| dilated(&kernel_size[i], &dilation[i]))
        .collect();
    Ok((kernel_size, channels, dilated_k))
}

fn conv2d_gemm_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let ConvLayouts {
        data: trans_in,
        out: trans_out,
        ..
    } = conv_layouts(ctx, "Conv", LayoutWording::ButGot, "NHWC", "HWIO")?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let (_, channels, dilated_k) = fixed_kernel(ctx, 2)?;
    let (pad_h, pad_w) = padding_hw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let strides = attrs.dims_or_empty("strides")?;
    // TVM tests the axis after the one it computes for `?` (the width for
    // the height, the channels for the width); we keep that.
    let height = if is_any(&dshape[2]) {
        dshape[1].clone()
    } else {
        truncated_size(
            &dshape[1],
            &pad_h,
            &dilated_k[0],
            &at(&strides, 0, "strides")?,
        )?
    };
    let width = if is_any(&dshape[3]) {
        dshape[2].clone()
    } else {
        truncated_size(
            &dshape[2],
            &pad_w,
            &dilated_k[1],
            &at(&strides, 1, "strides")?,
        )?
    };
    let dtype = attrs.dtype_or("out_dtype", data.dtype)?;
    let oshape = trans_out.backward_shape(&[dshape[0].clone(), height, width, channels])?;
    ctx.assign(2, tensor(oshape, dtype));
    Ok(true)
}

fn conv3d_winograd_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let ConvLayouts {
        data: trans_in,
        out: trans_out,
        ..
    } = conv_layouts(ctx, "Conv", LayoutWording::ButGot, "NCDHW", "OIDHW")?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let (_, channels, dilated_k) = fixed_kernel(ctx, 3)?;
    let pads = padding_dhw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let strides = attrs.dims_or_empty("strides")?;
    let mut oshape = vec![dshape[0].clone(), channels];
    for i in 0..3 {
        let axis = i + 2;
        // TVM tests the depth for `?` when it computes the height.
        let tested = if i == 1 { &dshape[2] } else { &dshape[axis] };
        oshape.push(if is_any(tested) {
            dshape[axis].clone()
        } else {
            truncated_size(
                &dshape[axis],
                &pads[i],
                &dilated_k[i],
                &at(&strides, i, "strides")?,
            )?
        });
    }
    let dtype = attrs.dtype_or("out_dtype", data.dtype)?;
    let oshape = trans_out.backward_shape(&oshape)?;
    ctx.assign(2, tensor(oshape, dtype));
    Ok(true)
}

/// The weight's rank is `rank`, else TVM's message.
fn check_weight_rank(shape: &[Dim], rank: usize, message: &str) -> Result<(), RelationError> {
    check(shape.len() == rank, || {
        format!(
            "Check failed: data->shape.size() == {rank} ({} vs. {rank}) : {message}",
            shape.len()
        )
    })
}

/// `if_then_else(x % tile != 0, tile - x % tile, 0)`: the padding that
/// makes `x` a multiple of `tile`. TVM folds it for a known `x`; for an
/// unknown one it builds a `tir.if_then_else` call, which our dimensions
/// cannot express, so the padding (and what is computed from it) is `?`.
/// `if_then_else(x % tile != 0, tile - x % tile, 0)`: what padding `x`
/// to a multiple of `tile` adds. TVM builds it without testing for `?`, so
/// an unknown `x` gives an expression over `tir.Any`.
fn pad_to_multiple(x: &Dim, tile: i64) -> Result<Dim, RelationError> {
    let rem = keeping_any::floormod(x, &c_int(tile))?;
    Ok(if_then_else(
        &not_equal(&rem, &c_int(0)),
        &keeping_any::sub(&c_int(tile), &rem),
        &c_int(0),
    ))
}

fn conv2d_gemm_weight_transform_rel(ctx: &mut Ctx) -> Step {
    let Some(weight) = ctx.tensor(0) else {
        return Ok(false);
    };
    let n = ctx.attrs.int("tile_rows")?;
    let k = ctx.attrs.int("tile_cols")?;
    check(weight.shape.len() == 4, || {
        format!(
            "Check failed: weight->shape.size() == 4 ({} vs. 4) : Only support HWIO kernel layout",
            weight.shape.len()
        )
    })?;
    let s = &weight.shape;
    let big_k = keeping_any::mul(&keeping_any::mul(&s[0], &s[1]), &s[2]);
    let big_n = s[3].clone();
    let n_padded = keeping_any::add(&big_n, &pad_to_multiple(&big_n, n)?);
    let k_padded = keeping_any::add(&big_k, &pad_to_multiple(&big_k, k)?);
    let oshape = vec![
        keeping_any::floordiv(&n_padded, &c_int(n))?,
        keeping_any::floordiv(&k_padded, &c_int(k))?,
        c_int(n),
        c_int(k),
    ];
    ctx.assign(1, tensor(oshape, weight.dtype));
    Ok(true)
}

fn conv2d_winograd_weight_transform_rel(ctx: &mut Ctx) -> Step {
    let Some(weight) = ctx.tensor(0) else {
        return Ok(false);
    };
    let tile = c_int(ctx.attrs.int("tile_size")?);
    check_weight_rank(&weight.shape, 4, "Only support NCHW normal kernel layout")?;
    let s = &weight.shape;
    let tiled = |k: &Dim| sub(&add(&tile, k), &c_int(1));
    let oshape = vec![tiled(&s[2]), tiled(&s[3]), s[0].clone(), s[1].clone()];
    ctx.assign(1, tensor(oshape, weight.dtype));
    Ok(true)
}

fn conv3d_winograd_weight_transform_rel(ctx: &mut Ctx) -> Step {
    let Some(weight) = ctx.tensor(0) else {
        return Ok(false);
    };
    let tile = c_int(ctx.attrs.int("tile_size")?);
    check_weight_rank(&weight.shape, 5, "Only support NCDHW normal kernel layout")?;
    let s = &weight.shape;
    let tiled = |k: &Dim| sub(&add(&tile, k), &c_int(1));
    // TVM reads the kernel depth as a constant (and crashes on another).
    let Some(depth) = const_int(&s[2]) else {
        return error(format!(
            "the kernel depth {} of a 3-D Winograd weight transform must be a constant",
            display::dim(&s[2])
        ));
    };
    let spatial = if depth > 2 && depth < 8 {
        [tiled(&s[2]), tiled(&s[3]), tiled(&s[4])]
    } else {
        [tiled(&s[3]), tiled(&s[4]), s[2].clone()]
    };
    let mut oshape = spatial.to_vec();
    oshape.extend([s[0].clone(), s[1].clone()]);
    ctx.assign(1, tensor(oshape, weight.dtype));
    Ok(true)
}

fn conv2d_winograd_nnpack_weight_transform_rel(ctx: &mut Ctx) -> Step {
    let Some(weight) = ctx.tensor(0) else {
        return Ok(false);
    };
    check_weight_rank(&weight.shape, 4, "Only support NCHW normal kernel layout")?;
    let s = &weight.shape;
    let oshape = vec![s[0].clone(), s[1].clone(), c_int(8), c_int(8)];
    let dtype = ctx.attrs.dtype_or("out_dtype", weight.dtype)?;
    ctx.assign(1, tensor(oshape, dtype));
    Ok(true)
}

fn bitpack_rel(ctx: &mut Ctx) -> Step {
    // TVM `ICHECK(data)`; we wait while the data is incomplete.
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let bits = c_int(attrs.int("bits")?);
    let pack_axis = attrs.int("pack_axis")?;
    let bit_axis = attrs.int("bit_axis")?;
    let pack_type = attrs.dtype("pack_type")?;
    let pack_bits = c_int(i64::from(pack_type.bits));
    let ndim = data.shape.len() as i64;
    let mut oshape = Vec::with_capacity(data.shape.len() + 1);
    for (i, dim) in data.shape.iter().enumerate() {
        let i = i as i64;
        if i == bit_axis {
            oshape.push(bits.clone());
        }
        oshape.push(if i == pack_axis {
            floordiv(dim, &pack_bits)?
        } else {
            dim.clone()
        });
    }
    if bit_axis == ndim {
        oshape.push(bits);
    }
    ctx.assign(1, tensor(oshape, pack_type));
    Ok(true)
}

fn binary_conv2d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    // TVM does not check that the data layout converts to NCHW.
    let trans_in = convert_layout(ctx, "data_layout", "NCHW")?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let Some(channels) = attrs.dim("channels")? else {
        return error("Check failed: (param->channels.defined()) is false: ").about("channels");
    };
    let Some(kernel_size) = attrs.dims("kernel_size")? else {
        return error("Check failed: (param->kernel_size.defined()) is false: ")
            .about("kernel_size");
    };
    let (pad_h, pad_w) = padding_hw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let strides = attrs.dims_or_empty("strides")?;
    let height = truncated_size(
        &dshape[2],
        &pad_h,
        &at(&kernel_size, 0, "kernel_size")?,
        &at(&strides, 0, "strides")?,
    )?;
    let width = truncated_size(
        &dshape[3],
        &pad_w,
        &at(&kernel_size, 1, "kernel_size")?,
        &at(&strides, 1, "strides")?,
    )?;
    let oshape = trans_in.backward_shape(&[dshape[0].clone(), channels, height, width])?;
    let dtype = attrs.dtype("out_dtype")?;
    ctx.assign(2, tensor(oshape, dtype));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, Type};

    #[test]
    fn conv1d_transpose_infers_the_weight_or_reads_it() {
        let assigns = solved(
            "nn.conv1d_transpose",
            &[t(&[1, 3, 18], "float32"), Type::incomplete()],
            &[
                ("channels", int(10)),
                ("kernel_size", ints(&[3])),
                ("strides", ints(&[2])),
                ("padding", ints(&[1])),
                ("output_padding", ints(&[1])),
            ],
        );
        assert_eq!(assigns[0], (1, t(&[3, 10, 3], "float32")));
        assert_eq!(assigns[1], (2, t(&[1, 10, 36], "float32")));
        let out = solve_out(
            "nn.conv1d_transpose",
            &[t(&[1, 8, 16], "float32"), t(&[8, 4, 3], "float32")],
            &[("dilation", ints(&[2])), ("out_dtype", dt("float16"))],
        );
        assert_eq!(out, t(&[1, 4, 20], "float16"));
        assert!(waits(
            "nn.conv1d_transpose",
            &[t(&[1, 8, 16], "float32"), Type::incomplete()],
            &[],
        ));
        let message = fails(
            "nn.conv1d_transpose",
            &[t(&[1, 8, 16], "float32"), t(&[8, 4, 3], "float32")],
            &[("channels", int(6))],
        );
        assert!(
            message.starts_with("Conv1DTraspose: shape of weight is inconsistent with channels")
        );
        let message = fails(
            "nn.conv1d_transpose",
            &[t(&[1, 8, 16], "float32"), t(&[8, 4, 3], "float32")],
            &[("padding", ints(&[0, 0, 0, 0]))],
        );
        assert_eq!(message, "Expected padding size of 1 or 2, found 4");
    }

    #[test]
    fn conv2d_backward_weight_checks_constant_channels() {
        let out = solve_out(
            "nn.conv2d_backward_weight",
            &[t(&[1, 32, 32, 8], "float32"), t(&[1, 32, 32, 4], "float32")],
            &[
                ("channels", int(8)),
                ("kernel_size", ints(&[3, 3])),
                ("data_layout", s("NHWC")),
                ("kernel_layout", s("NHWC")),
                ("out_layout", s("HWIO")),
            ],
        );
        assert_eq!(out, t(&[3, 3, 4, 8], "float32"));
        let channels = td(
            vec![Dim::int32(1), Dim::Any, Dim::int32(8), Dim::int32(8)],
            "float32",
        );
        let message = fails(
            "nn.conv2d_backward_weight",
            &[t(&[1, 4, 8, 8], "float32"), channels],
            &[
                ("kernel_size", ints(&[3, 3])),
                ("kernel_layout", s("NCHW")),
                ("out_layout", s("OIHW")),
            ],
        );
        assert_eq!(message, "Check failed: (in_channels_intimm) is false: ");
        let message = fails(
            "nn.conv2d_backward_weight",
            &[t(&[1, 4, 8, 8], "float32"), t(&[1, 4, 8, 8], "float32")],
            &[
                ("groups", int(4)),
                ("kernel_size", ints(&[3, 3])),
                ("kernel_layout", s("NCHW")),
                ("out_layout", s("OIHW")),
            ],
        );
        assert_eq!(
            message,
            "out_channels attribute not specified for depth wise conv2d."
        );
    }

    #[test]
    fn gemm_and_winograd_convolutions_truncate_and_keep_any() {
        let data = td(
            vec![Dim::int32(1), Dim::Any, Dim::int32(16), Dim::int32(8)],
            "int8",
        );
        let out = solve_out(
            "nn.contrib_conv2d_gemm_without_weight_transform",
            &[data, t(&[2, 18, 4, 16], "int8")],
            &[
                ("channels", int(8)),
                ("kernel_size", ints(&[3, 3])),
                ("strides", ints(&[2, 2])),
                ("data_layout", s("NHWC")),
                ("kernel_layout", s("HWIO")),
            ],
        );
        // `(16 + 0 - 3) / 2 + 1` truncates to 7; the ? height stays ?.
        assert_eq!(
            out,
            td(
                vec![Dim::int32(1), Dim::Any, Dim::int32(7), Dim::int32(8)],
                "int8"
            )
        );
        let message = fails(
            "nn.contrib_conv3d_winograd_without_weight_transform",
            &[
                t(&[1, 8, 8, 8, 8], "float32"),
                t(&[6, 6, 6, 8, 8], "float32"),
            ],
            &[
                ("tile_size", int(4)),
                ("channels", int(8)),
                ("kernel_size", ints(&[3, 3])),
            ],
        );
        assert_eq!(message, "Check failed: kernel_size.size() == 3 (2 vs. 3)");
    }

    /// TVM pads an unknown channel count with `if_then_else(N % n != 0,
    /// n - N % n, 0)` around `tir.Any` (InferType record 2130).
    #[test]
    fn gemm_weight_transform_pads_an_unknown_size_symbolically() {
        let weight = td(
            vec![Dim::int32(3), Dim::int32(3), Dim::int32(8), Dim::Any],
            "int8",
        );
        let out = solve_out(
            "nn.contrib_conv2d_gemm_weight_transform",
            &[weight],
            &[("tile_rows", int(4)), ("tile_cols", int(16))],
        );
        let t = out.as_tensor().expect("a tensor");
        assert_eq!(
            super::display::dim(&t.shape[0]),
            "(? + T.if_then_else(? % 4 != 0, 4 - ? % 4, 0)) // 4"
        );
        assert_eq!(t.shape[1..], [Dim::int32(5), Dim::int32(4), Dim::int32(16)]);
    }

    #[test]
    fn weight_transforms() {
        let out = solve_out(
            "nn.contrib_conv2d_gemm_weight_transform",
            &[t(&[1, 1, 64, 64], "float32")],
            &[("tile_rows", int(24)), ("tile_cols", int(4))],
        );
        assert_eq!(out, t(&[3, 16, 24, 4], "float32"));
        let out = solve_out(
            "nn.contrib_conv3d_winograd_weight_transform",
            &[t(&[16, 8, 3, 3, 3], "float32")],
            &[("tile_size", int(4))],
        );
        assert_eq!(out, t(&[6, 6, 6, 16, 8], "float32"));
        let depth_any = td(
            vec![
                Dim::int32(16),
                Dim::int32(8),
                Dim::Any,
                Dim::int32(3),
                Dim::int32(3),
            ],
            "float32",
        );
        let message = fails(
            "nn.contrib_conv3d_winograd_weight_transform",
            &[depth_any],
            &[("tile_size", int(4))],
        );
        assert!(message.contains("must be a constant"));
        let message = fails(
            "nn.contrib_conv2d_winograd_weight_transform",
            &[t(&[16, 3, 3], "float32")],
            &[("tile_size", int(2))],
        );
        assert_eq!(
            message,
            "Check failed: data->shape.size() == 4 (3 vs. 4) : Only support NCHW normal kernel layout"
        );
    }

    #[test]
    fn bitpack_and_bitserial_conv2d() {
        let out = solve_out(
            "nn.bitpack",
            &[t(&[1, 64, 8, 8], "int32")],
            &[
                ("bit_axis", int(2)),
                ("pack_type", dt("uint32")),
                ("bits", int(2)),
            ],
        );
        assert_eq!(out, t(&[1, 2, 2, 8, 8], "uint32"));
        // The bits on the packed axis itself: the bit axis comes first.
        let out = solve_out(
            "nn.bitpack",
            &[t(&[4, 64], "int8")],
            &[("bit_axis", int(1)), ("pack_type", dt("uint8"))],
        );
        assert_eq!(out, t(&[4, 1, 8], "uint8"));
        let out = solve_out(
            "nn.bitserial_conv2d",
            &[t(&[1, 16, 32, 32], "int16"), t(&[8, 16, 3, 3], "int16")],
            &[
                ("channels", int(8)),
                ("strides", ints(&[2, 2])),
                ("padding", ints(&[1, 1, 1, 1])),
                ("out_dtype", dt("int16")),
            ],
        );
        assert_eq!(out, t(&[1, 8, 16, 16], "int16"));
    }
}
