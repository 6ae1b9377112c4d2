//! Convolution relations (`src/relay/op/nn/convolution.cc`,
//! `convolution.h`): `Conv1DRel`, `Conv2DRel` (also
//! `nn.contrib_depthwise_conv2d_NCHWc`), `Conv3DRel`, `Conv2DTransposeRel`,
//! `Conv3DTransposeRel`, `Conv2DWinogradRel` (registered as `Conv2DNCHWc`
//! for `nn.contrib_conv2d_NCHWc`) and `DeformableConv2DRel`.
//!
//! Every shape goes through the data/kernel/output layouts: the data shape
//! is converted to `NCHW` (`NCW`, `NCDHW`), the kernel's to `OIHW` (`IOHW`
//! for transposed convolutions, `GOIHW` for a grouped kernel layout with a
//! `G`), the output is computed there and converted back to the output
//! layout. A layout conversion casts known sizes to `int32`, so outputs have
//! `int32` dimensions (see [`super::layout`]). When both `kernel_size` and
//! `channels` are set the weight's type is assigned (with the weight's dtype
//! if it is already known, the data's otherwise); otherwise the relation
//! waits for the weight. Spatial sizes follow
//! `floordiv(in + pad_before + pad_after - ((k - 1) * dilation + 1), stride) + 1`
//! (`Conv2DNCHWc` truncates instead of flooring), and stay `?` for a `?`
//! input.

use super::display::{self, shape_array};
use super::layout::{BijectiveLayout, Layout};
use super::shape::assert_eq as dims_equal;
use super::shape::{add, c_int, const_int, dim_dtype, floordiv, is_any, mul, sub, truncdiv, I32};
use super::{check, error, relations, tensor, AboutAttribute, AttrsView, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::Dim;
use std::cell::RefCell;
use std::rc::Rc;

relations! {
    /// `Conv1DRel`.
    "Conv1D" => conv1d_rel;
    /// `Conv2DRel`.
    "Conv2D" => conv2d_rel;
    /// `Conv3DRel`.
    "Conv3D" => conv3d_rel;
    /// `Conv2DTransposeRel`.
    "Conv2DTranspose" => conv2d_transpose_rel;
    /// `Conv3DTransposeRel`.
    "Conv3DTranspose" => conv3d_transpose_rel;
    /// `Conv2DWinogradRel` (`Conv2DNCHWc`, `Conv2DWinograd`): the weight is
    /// never checked nor assigned; `kernel_size` and `channels` must be set.
    "Conv2DNCHWc" | "Conv2DWinograd" => conv2d_winograd_rel;
    /// `DeformableConv2DRel`: assigns the offset's type too.
    "DeformableConv2D" => deformable_conv2d_rel;
}

/// `arr[i]`, an error where TVM would read past the end.
pub(crate) fn at(dims: &[Dim], i: usize, name: &'static str) -> Result<Dim, RelationError> {
    dims.get(i).cloned().ok_or_else(|| {
        RelationError::new(format!(
            "{} (attribute `{name}`)",
            super::index_error(i, dims.len()).message
        ))
        .about_attribute(name)
    })
}

/// `Layout(name)` written as TVM's `operator<<` writes a layout.
fn repr(layout: &str) -> String {
    format!("Layout({layout})")
}

/// A convolution's three layout conversions: the data and the output to the
/// canonical data layout (`NCW`, `NCHW`, `NCDHW`), the kernel to the
/// canonical kernel layout (`OIHW`, `IOHW`, `GOIHW`, …).
///
/// Shared (`Rc`): a model has thousands of convolutions with the same few
/// layouts, and each conversion is built once per thread (see
/// [`conv_layouts`]).
#[derive(Clone)]
pub(super) struct ConvLayouts {
    pub data: Rc<BijectiveLayout>,
    pub kernel: Rc<BijectiveLayout>,
    pub out: Rc<BijectiveLayout>,
}

/// The attributes and targets [`conv_layouts`] converts between: the key of
/// a cached result.
#[derive(PartialEq, Eq)]
struct ConvLayoutKey<'a> {
    data: &'a str,
    kernel: &'a str,
    out: &'a str,
    data_target: &'a str,
    kernel_target: &'a str,
}

/// How many layout combinations a thread keeps: real models use one or
/// two; names come from user text, so the cache is bounded.
const CONV_LAYOUT_CACHE_SIZE: usize = 16;

thread_local! {
    /// The conversions built so far on this thread, most recent last
    /// (keys as owned strings: data, kernel, out, data target, kernel
    /// target). Parsing three layouts and building three conversions was
    /// two dozen small allocations per convolution.
    static CONV_LAYOUT_CACHE: RefCell<Vec<([String; 5], ConvLayouts)>> =
        const { RefCell::new(Vec::new()) };
}

fn cached_conv_layouts(key: &ConvLayoutKey<'_>) -> Option<ConvLayouts> {
    CONV_LAYOUT_CACHE.with(|cache| {
        cache
            .borrow()
            .iter()
            .rev()
            .find(|(k, _)| {
                k[0] == key.data
                    && k[1] == key.kernel
                    && k[2] == key.out
                    && k[3] == key.data_target
                    && k[4] == key.kernel_target
            })
            .map(|(_, layouts)| layouts.clone())
    })
}

fn remember_conv_layouts(key: &ConvLayoutKey<'_>, layouts: &ConvLayouts) {
    CONV_LAYOUT_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= CONV_LAYOUT_CACHE_SIZE {
            cache.remove(0);
        }
        let key = [
            key.data.to_string(),
            key.kernel.to_string(),
            key.out.to_string(),
            key.data_target.to_string(),
            key.kernel_target.to_string(),
        ];
        cache.push((key, layouts.clone()));
    });
}

/// Which layout an error is about.
#[derive(Clone, Copy)]
enum LayoutRole {
    Input,
    Kernel,
    Output,
}

/// How an operator words its "layout not convertible" errors: TVM's
/// relations each write their own, and we keep their words exactly.
#[derive(Clone, Copy)]
pub(super) enum LayoutWording {
    /// `{op} only support {input,kernel,output} layouts that are convertible
    /// from NCW. But got Layout(NWC)` (`Conv1DRel`, `Conv3DRel`,
    /// `Conv3DTransposeRel`, `Conv2DWinogradRel`).
    ButGot,
    /// As [`LayoutWording::ButGot`], except that the kernel's target is
    /// written as a layout and repeated at the end (`Conv2DTransposeRel`).
    ButGotKernelRepeated,
    /// `{op} only support input layouts that are convertible from NCHW. The
    /// provided layout is: Layout(NWC)`, with no space before `The` in the
    /// output's message (`Conv2DRel`, `DeformableConv2DRel`);
    /// `kernel_target_as_layout`: the kernel's target is written as
    /// `Layout(OIHW)` (`Conv2DRel`).
    Provided { kernel_target_as_layout: bool },
}

impl LayoutWording {
    fn message(self, op: &str, role: LayoutRole, target: &str, got: &str) -> String {
        let role_name = match role {
            LayoutRole::Input => "input",
            LayoutRole::Kernel => "kernel",
            LayoutRole::Output => "output",
        };
        let head = format!("{op} only support {role_name} layouts that are convertible from");
        let got = repr(got);
        match (self, role) {
            (LayoutWording::ButGotKernelRepeated, LayoutRole::Kernel) => {
                let target = repr(target);
                format!("{head} {target}. But got {got} {target}")
            }
            (LayoutWording::ButGot | LayoutWording::ButGotKernelRepeated, _) => {
                format!("{head} {target}. But got {got}")
            }
            (LayoutWording::Provided { .. }, LayoutRole::Input) => {
                format!("{head} {target}. The provided layout is: {got}")
            }
            (
                LayoutWording::Provided {
                    kernel_target_as_layout,
                },
                LayoutRole::Kernel,
            ) => {
                let target = if kernel_target_as_layout {
                    repr(target)
                } else {
                    target.to_string()
                };
                format!("{head} {target}. The provided layout is: {got}")
            }
            (LayoutWording::Provided { .. }, LayoutRole::Output) => {
                format!("{head} {target}.The provided layout is: {got}")
            }
        }
    }
}

/// The layout preamble every convolution relation shares, in TVM's order:
/// the data and kernel layouts are parsed, converted to `data_target` and
/// `kernel_target`, then the output layout (the data's when `out_layout` is
/// empty) to `data_target`; each error is about its attribute.
pub(super) fn conv_layouts(
    ctx: &Ctx,
    op: &str,
    wording: LayoutWording,
    data_target: &str,
    kernel_target: &str,
) -> Result<ConvLayouts, RelationError> {
    let attrs = ctx.attrs;
    let data_name = attrs.str_ref("data_layout")?;
    let kernel_name = attrs.str_ref("kernel_layout")?;
    let out_attr = attrs.str_ref("out_layout");
    // An empty `out_layout` is the data's.
    fn or_data<'s>(out: &'s str, data: &'s str) -> &'s str {
        if out.is_empty() {
            data
        } else {
            out
        }
    }
    // Only conversions that succeeded are cached: errors are worded per
    // operator and reported in TVM's order, so they are always rebuilt.
    let key = out_attr.as_ref().ok().map(|&out| ConvLayoutKey {
        data: data_name,
        kernel: kernel_name,
        out: or_data(out, data_name),
        data_target,
        kernel_target,
    });
    if let Some(layouts) = key.as_ref().and_then(cached_conv_layouts) {
        return Ok(layouts);
    }
    let data_layout = Layout::parse(data_name).about("data_layout")?;
    let kernel_layout = Layout::parse(kernel_name).about("kernel_layout")?;
    let convert = |layout: &Layout, role: LayoutRole, target: &str, name: &str| {
        let to = Layout::parse(target)?;
        BijectiveLayout::new(layout, &to)
            .map(Rc::new)
            .ok_or_else(|| RelationError::new(wording.message(op, role, target, name)))
    };
    let data =
        convert(&data_layout, LayoutRole::Input, data_target, data_name).about("data_layout")?;
    let kernel = convert(
        &kernel_layout,
        LayoutRole::Kernel,
        kernel_target,
        kernel_name,
    )
    .about("kernel_layout")?;
    let out_name = or_data(out_attr?, data_name);
    let out_layout = Layout::parse(out_name).about("out_layout")?;
    let out =
        convert(&out_layout, LayoutRole::Output, data_target, out_name).about("out_layout")?;
    let layouts = ConvLayouts { data, kernel, out };
    if let Some(key) = &key {
        remember_conv_layouts(key, &layouts);
    }
    Ok(layouts)
}

/// TVM's `ICHECK_EQ(name.size(), n)` on an attribute list.
pub(super) fn check_len(list: &[Dim], n: usize, name: &'static str) -> Result<(), RelationError> {
    check(list.len() == n, || {
        format!(
            "Check failed: {name}.size() == {n} ({} vs. {n})",
            list.len()
        )
    })
    .about(name)
}

/// The kernel sizes of a given weight (in the canonical kernel layout, its
/// axes 2…) agree with the `kernel_size` attribute, checked to have one size
/// per spatial axis.
pub(super) fn check_kernel_size(
    op: &str,
    kernel_size: &[Dim],
    wshape: &[Dim],
) -> Result<(), RelationError> {
    let agree = kernel_size
        .iter()
        .enumerate()
        .all(|(i, k)| dims_equal(k, &wshape[i + 2]));
    check(agree, || {
        format!(
            "{op}: shape of weight is inconsistent with kernel_size,  kernel_size={} wshape={}",
            shape_array(kernel_size),
            shape_array(wshape)
        )
    })
}

/// The output channels of a given weight (axis 0 in the canonical kernel
/// layout) agree with the `channels` attribute.
fn check_channels(op: &str, channels: &Dim, wshape: &[Dim]) -> Result<(), RelationError> {
    check(dims_equal(channels, &wshape[0]), || {
        format!(
            "{op}: shape of weight is inconsistent with channels,  channels={} wshape={}",
            display::dim(channels),
            shape_array(wshape)
        )
    })
}

/// Assigns the weight the shape inferred from `kernel_size` and `channels`,
/// with the weight's dtype when it is known, the data's otherwise.
fn assign_weight(
    ctx: &mut Ctx,
    slot: usize,
    shape: Vec<Dim>,
    weight: Option<DataType>,
    data: DataType,
) {
    ctx.assign(slot, tensor(shape, weight.unwrap_or(data)));
}

/// `1 + (k - 1) * dilation`.
pub(crate) fn dilated(k: &Dim, dilation: &Dim) -> Dim {
    add(&c_int(1), &mul(&sub(k, &c_int(1)), dilation))
}

/// `GetPaddingHeightWidth`.
pub(crate) fn padding_hw(padding: &[Dim]) -> Result<(Dim, Dim), RelationError> {
    match padding.len() {
        1 => Ok((mul(&padding[0], &c_int(2)), mul(&padding[0], &c_int(2)))),
        2 => Ok((mul(&padding[0], &c_int(2)), mul(&padding[1], &c_int(2)))),
        4 => Ok((add(&padding[0], &padding[2]), add(&padding[1], &padding[3]))),
        n => error(format!(" Padding size should be 1, 2 or 4, but got {n}")),
    }
}

/// `GetPaddingDepthHeightWidth`.
pub(super) fn padding_dhw(padding: &[Dim]) -> Result<[Dim; 3], RelationError> {
    match padding.len() {
        1 => {
            let p = mul(&padding[0], &c_int(2));
            Ok([p.clone(), p.clone(), p])
        }
        3 => Ok([
            mul(&padding[0], &c_int(2)),
            mul(&padding[1], &c_int(2)),
            mul(&padding[2], &c_int(2)),
        ]),
        6 => Ok([
            add(&padding[0], &padding[3]),
            add(&padding[1], &padding[4]),
            add(&padding[2], &padding[5]),
        ]),
        n => error(format!(" Padding size should be 1, 3 or 6, but got {n}")),
    }
}

/// `indexdiv(in + pad - dilated, stride) + 1`, or `in` when it is `?`.
pub(crate) fn out_size(
    input: &Dim,
    pad: &Dim,
    dilated: &Dim,
    stride: &Dim,
) -> Result<Dim, RelationError> {
    if is_any(input) {
        return Ok(input.clone());
    }
    Ok(add(
        &floordiv(&sub(&add(input, pad), dilated), stride)?,
        &c_int(1),
    ))
}

/// `stride * (in - 1) + dilated - pad + output_padding`, or `in` when `?`.
pub(super) fn transposed_size(
    input: &Dim,
    stride: &Dim,
    dilated: &Dim,
    pad: &Dim,
    output_padding: &Dim,
) -> Dim {
    if is_any(input) {
        return input.clone();
    }
    add(
        &sub(&add(&mul(stride, &sub(input, &c_int(1))), dilated), pad),
        output_padding,
    )
}

/// The output shape in the canonical layout: the batch, `channels`, and
/// per spatial axis `i` the [`out_size`] of `dshape[2 + i]` with `pads[i]`,
/// `dilated[i]` and the `strides` attribute's `i`-th value.
fn out_shape(
    attrs: AttrsView,
    dshape: &[Dim],
    channels: Dim,
    pads: &[Dim],
    dilated: &[Dim],
) -> Result<Vec<Dim>, RelationError> {
    let strides = attrs.dims_or_empty("strides")?;
    let mut oshape = vec![dshape[0].clone(), channels];
    for i in 0..pads.len() {
        let stride = at(&strides, i, "strides")?;
        oshape.push(out_size(&dshape[i + 2], &pads[i], &dilated[i], &stride)?);
    }
    Ok(oshape)
}

/// As [`out_shape`] for a transposed convolution: each spatial size is the
/// [`transposed_size`] with the `strides` and `output_padding` attributes'
/// `i`-th values.
fn transposed_out_shape(
    attrs: AttrsView,
    dshape: &[Dim],
    channels: Dim,
    pads: &[Dim],
    dilated: &[Dim],
) -> Result<Vec<Dim>, RelationError> {
    let strides = attrs.dims_or_empty("strides")?;
    let output_padding = attrs.dims_or_empty("output_padding")?;
    let mut oshape = vec![dshape[0].clone(), channels];
    for i in 0..pads.len() {
        let stride = at(&strides, i, "strides")?;
        let extra = at(&output_padding, i, "output_padding")?;
        oshape.push(transposed_size(
            &dshape[i + 2],
            &stride,
            &dilated[i],
            &pads[i],
            &extra,
        ));
    }
    Ok(oshape)
}

/// `out_dtype`, or the data's dtype when void; `Conv2DRel` and `Conv3DRel`
/// fall back to the weight's (`weight`) when the data's is void too.
pub(super) fn out_dtype(
    ctx: &Ctx,
    data: DataType,
    weight: Option<DataType>,
) -> Result<DataType, RelationError> {
    let dtype = ctx.attrs.dtype_or("out_dtype", data)?;
    Ok(match weight {
        Some(w) if dtype.bits == 0 => w,
        _ => dtype,
    })
}

pub(super) fn groups_dim(groups: i64) -> Dim {
    c_int(groups)
}

pub(crate) fn conv2d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let weight = ctx.tensor(1);
    let attrs = ctx.attrs;
    let out_dtype = out_dtype(ctx, data.dtype, weight.as_ref().map(|w| w.dtype))?;
    let groups = attrs.int("groups")?;
    let is_dnnl_group_conv = groups > 1 && attrs.str("kernel_layout")?.contains('G');
    let k_oihw = if is_dnnl_group_conv { "GOIHW" } else { "OIHW" };
    let wording = LayoutWording::Provided {
        kernel_target_as_layout: true,
    };
    let ConvLayouts {
        data: trans_in,
        kernel: trans_kernel,
        out: trans_out,
    } = conv_layouts(ctx, "conv2d", wording, "NCHW", k_oihw)?;

    let dshape = trans_in.forward_shape(&data.shape)?;
    let is_depthwise = if groups > 1 {
        let Some(weight) = &weight else {
            return error("Weight shape must be specified when groups is greater than 1.");
        };
        let wshape = trans_kernel.forward_shape(&weight.shape)?;
        // `ExprDeepEqual(groups, dim)`: same value and dtype (int32).
        let deep_equal = |d: &Dim| const_int(d) == Some(groups) && dim_dtype(d) == I32;
        deep_equal(&dshape[1]) && deep_equal(&wshape[0])
    } else {
        false
    };

    let kernel_size = attrs.dims("kernel_size")?;
    let channels_attr = attrs.dim("channels")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let (channels, dilated_y, dilated_x);
    if let (Some(kernel_size), Some(channels_attr)) = (&kernel_size, &channels_attr) {
        check_len(kernel_size, 2, "kernel_size")?;
        check_len(&dilation, 2, "dilation")?;
        let g = groups_dim(groups);
        let wshape = if is_dnnl_group_conv {
            vec![
                g.clone(),
                floordiv(channels_attr, &g)?,
                floordiv(&dshape[1], &g)?,
                kernel_size[0].clone(),
                kernel_size[1].clone(),
            ]
        } else if is_depthwise {
            vec![
                dshape[1].clone(),
                floordiv(channels_attr, &dshape[1])?,
                kernel_size[0].clone(),
                kernel_size[1].clone(),
            ]
        } else {
            vec![
                channels_attr.clone(),
                floordiv(&dshape[1], &g)?,
                kernel_size[0].clone(),
                kernel_size[1].clone(),
            ]
        };
        let wshape = trans_kernel.backward_shape(&wshape)?;
        channels = channels_attr.clone();
        dilated_y = dilated(&kernel_size[0], &dilation[0]);
        dilated_x = dilated(&kernel_size[1], &dilation[1]);
        assign_weight(ctx, 1, wshape, weight.as_ref().map(|w| w.dtype), data.dtype);
    } else {
        let Some(weight) = &weight else {
            return Ok(false);
        };
        let wshape = trans_kernel.forward_shape(&weight.shape)?;
        if let Some(kernel_size) = &kernel_size {
            check_len(kernel_size, 2, "kernel_size")?;
            if !dims_equal(&kernel_size[0], &wshape[2]) || !dims_equal(&kernel_size[1], &wshape[3])
            {
                return error(format!(
                    "Conv2D: shape of weight is inconsistent with kernel_size, kernel_size={} wshape={}",
                    shape_array(kernel_size),
                    shape_array(&wshape)
                ));
            }
        }
        if let Some(channels_attr) = &channels_attr {
            if !dims_equal(channels_attr, &wshape[0]) {
                return error(format!(
                    "conv2D: the first dimensions of the weight tensor ({})does not match the number of channels ({}).",
                    shape_array(&wshape),
                    display::dim(channels_attr)
                ));
            }
        }
        if !is_any(&dshape[1]) && !is_any(&wshape[1]) {
            let per_group = floordiv(&dshape[1], &groups_dim(groups))?;
            if !dims_equal(&per_group, &wshape[1]) {
                return error(format!(
                    "conv2d: requires that `{}`, the input channels ({}) divided by groups ({groups}),\n must match the input channels of the weight `{}`, where the weight shape is ({}).",
                    display::dim(&per_group),
                    display::dim(&dshape[1]),
                    display::dim(&wshape[1]),
                    shape_array(&wshape)
                ));
            }
        }
        check(dilation.len() >= 2, || {
            "dilation must have 2 elements".to_string()
        })
        .about("dilation")?;
        channels = wshape[0].clone();
        dilated_y = dilated(&wshape[2], &dilation[0]);
        dilated_x = dilated(&wshape[3], &dilation[1]);
    }
    let (pad_h, pad_w) = padding_hw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let oshape = out_shape(
        attrs,
        &dshape,
        channels,
        &[pad_h, pad_w],
        &[dilated_y, dilated_x],
    )?;
    let oshape = trans_out.backward_shape(&oshape)?;
    ctx.assign(2, tensor(oshape, out_dtype));
    Ok(true)
}

fn conv1d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let weight = ctx.tensor(1);
    let attrs = ctx.attrs;
    let ConvLayouts {
        data: trans_in,
        kernel: trans_kernel,
        out: trans_out,
    } = conv_layouts(ctx, "Conv", LayoutWording::ButGot, "NCW", "OIW")?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let groups = groups_dim(attrs.int("groups")?);
    let kernel_size = attrs.dims("kernel_size")?;
    let channels_attr = attrs.dim("channels")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let (channels, dilated_k);
    if let (Some(kernel_size), Some(channels_attr)) = (&kernel_size, &channels_attr) {
        let k0 = at(kernel_size, 0, "kernel_size")?;
        let wshape = vec![
            channels_attr.clone(),
            floordiv(&dshape[1], &groups)?,
            k0.clone(),
        ];
        let wshape = trans_kernel.backward_shape(&wshape)?;
        channels = channels_attr.clone();
        dilated_k = dilated(&k0, &at(&dilation, 0, "dilation")?);
        assign_weight(ctx, 1, wshape, weight.as_ref().map(|w| w.dtype), data.dtype);
    } else {
        let Some(weight) = &weight else {
            return Ok(false);
        };
        let wshape = trans_kernel.forward_shape(&weight.shape)?;
        if let Some(kernel_size) = &kernel_size {
            check(
                dims_equal(&at(kernel_size, 0, "kernel_size")?, &wshape[2]),
                || {
                    format!(
                    "Conv1D: shape of weight is inconsistent with kernel_size,  kernel_size={} wshape={}",
                    shape_array(kernel_size),
                    shape_array(&wshape)
                )
                },
            )?;
        }
        if let Some(channels_attr) = &channels_attr {
            check_channels("Conv1D", channels_attr, &wshape)?;
        }
        if !is_any(&dshape[1]) && !is_any(&wshape[1]) {
            check(dims_equal(&dshape[1], &wshape[1]), || {
                "Check failed: reporter->AssertEQ(dshape_ncw[1], wshape[1])".to_string()
            })?;
        }
        channels = wshape[0].clone();
        dilated_k = dilated(&wshape[2], &at(&dilation, 0, "dilation")?);
    }
    let padding = attrs.dims_or_empty("padding")?;
    let strides = attrs.dims_or_empty("strides")?;
    let width = if is_any(&dshape[2]) {
        dshape[2].clone()
    } else {
        let numerator = sub(
            &add(
                &add(&dshape[2], &at(&padding, 0, "padding")?),
                &at(&padding, 1, "padding")?,
            ),
            &dilated_k,
        );
        add(
            &floordiv(&numerator, &at(&strides, 0, "strides")?)?,
            &c_int(1),
        )
    };
    let dtype = out_dtype(ctx, data.dtype, None)?;
    let oshape = trans_out.backward_shape(&[dshape[0].clone(), channels, width])?;
    ctx.assign(2, tensor(oshape, dtype));
    Ok(true)
}

fn conv3d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let weight = ctx.tensor(1);
    let attrs = ctx.attrs;
    let out_dtype = out_dtype(ctx, data.dtype, weight.as_ref().map(|w| w.dtype))?;
    let ConvLayouts {
        data: trans_in,
        kernel: trans_kernel,
        out: trans_out,
    } = conv_layouts(ctx, "Conv", LayoutWording::ButGot, "NCDHW", "OIDHW")?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let groups = groups_dim(attrs.int("groups")?);
    let kernel_size = attrs.dims("kernel_size")?;
    let channels_attr = attrs.dim("channels")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let channels;
    let mut dilated_k = Vec::with_capacity(3);
    if let (Some(kernel_size), Some(channels_attr)) = (&kernel_size, &channels_attr) {
        check_len(kernel_size, 3, "kernel_size")?;
        check_len(&dilation, 3, "dilation")?;
        let mut wshape = vec![channels_attr.clone(), floordiv(&dshape[1], &groups)?];
        wshape.extend(kernel_size.iter().cloned());
        let wshape = trans_kernel.backward_shape(&wshape)?;
        channels = channels_attr.clone();
        for i in 0..3 {
            dilated_k.push(dilated(&kernel_size[i], &dilation[i]));
        }
        assign_weight(ctx, 1, wshape, weight.as_ref().map(|w| w.dtype), data.dtype);
    } else {
        let Some(weight) = &weight else {
            return Ok(false);
        };
        let wshape = trans_kernel.forward_shape(&weight.shape)?;
        if let Some(kernel_size) = &kernel_size {
            check_len(kernel_size, 3, "kernel_size")?;
            check_kernel_size("Conv3D", kernel_size, &wshape)?;
        }
        if let Some(channels_attr) = &channels_attr {
            check_channels("Conv3D", channels_attr, &wshape)?;
        }
        if !is_any(&dshape[1]) && !is_any(&wshape[1]) {
            let per_group = floordiv(&dshape[1], &groups)?;
            check(dims_equal(&per_group, &wshape[1]), || {
                "Check failed: reporter->AssertEQ(indexdiv(dshape_ncdhw[1], param->groups), wshape[1])"
                    .to_string()
            })?;
        }
        channels = wshape[0].clone();
        for i in 0..3 {
            dilated_k.push(dilated(&wshape[i + 2], &at(&dilation, i, "dilation")?));
        }
    }
    let pad = padding_dhw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let oshape = out_shape(attrs, &dshape, channels, &pad, &dilated_k)?;
    let oshape = trans_out.backward_shape(&oshape)?;
    ctx.assign(2, tensor(oshape, out_dtype));
    Ok(true)
}

pub(crate) fn conv2d_transpose_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let weight = ctx.tensor(1);
    let attrs = ctx.attrs;
    let groups_value = attrs.int("groups")?;
    let is_dnnl_group_conv = groups_value > 1 && attrs.str("kernel_layout")?.contains('G');
    let k_iohw = if is_dnnl_group_conv { "GIOHW" } else { "IOHW" };
    let ConvLayouts {
        data: trans_in,
        kernel: trans_kernel,
        out: trans_out,
    } = conv_layouts(
        ctx,
        "Conv2DTransposed",
        LayoutWording::ButGotKernelRepeated,
        "NCHW",
        k_iohw,
    )?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let groups = groups_dim(groups_value);
    let kernel_size = attrs.dims("kernel_size")?;
    let channels_attr = attrs.dim("channels")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let (channels, dilated_y, dilated_x);
    if let (Some(kernel_size), Some(channels_attr)) = (&kernel_size, &channels_attr) {
        check_len(kernel_size, 2, "kernel_size")?;
        check_len(&dilation, 2, "dilation")?;
        let wshape = if is_dnnl_group_conv {
            vec![
                groups.clone(),
                floordiv(&dshape[1], &groups)?,
                floordiv(channels_attr, &groups)?,
                kernel_size[0].clone(),
                kernel_size[1].clone(),
            ]
        } else {
            vec![
                dshape[1].clone(),
                floordiv(channels_attr, &groups)?,
                kernel_size[0].clone(),
                kernel_size[1].clone(),
            ]
        };
        let wshape = trans_kernel.backward_shape(&wshape)?;
        dilated_y = dilated(&kernel_size[0], &dilation[0]);
        dilated_x = dilated(&kernel_size[1], &dilation[1]);
        channels = channels_attr.clone();
        assign_weight(ctx, 1, wshape, weight.as_ref().map(|w| w.dtype), data.dtype);
    } else {
        let Some(weight) = &weight else {
            return Ok(false);
        };
        let wshape = trans_kernel.forward_shape(&weight.shape)?;
        if let Some(kernel_size) = &kernel_size {
            check_len(kernel_size, 2, "kernel_size")?;
            check_kernel_size("Conv2DTransposed", kernel_size, &wshape)?;
        }
        if let Some(channels_attr) = &channels_attr {
            let per_group = floordiv(channels_attr, &groups)?;
            check(dims_equal(&per_group, &wshape[1]), || {
                format!(
                    "Conv2DTransposed: shape of weight is inconsistent with out_channels,  out_channels // groups != weight.shape[1]  out_channels={} groups={groups_value} weight.shape={}",
                    display::dim(channels_attr),
                    shape_array(&wshape)
                )
            })?;
        }
        if !is_any(&dshape[1]) && !is_any(&wshape[0]) {
            check(dims_equal(&dshape[1], &wshape[0]), || {
                format!(
                    "Conv2DTransposed: shape of weight is inconsistent with in_channels. data.shape= {} groups= {groups_value} weight.shape= {}",
                    shape_array(&dshape),
                    shape_array(&wshape)
                )
            })?;
        }
        channels = wshape[1].clone();
        dilated_y = dilated(&wshape[2], &at(&dilation, 0, "dilation")?);
        dilated_x = dilated(&wshape[3], &at(&dilation, 1, "dilation")?);
    }
    let (pad_h, pad_w) = padding_hw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let oshape = transposed_out_shape(
        attrs,
        &dshape,
        channels,
        &[pad_h, pad_w],
        &[dilated_y, dilated_x],
    )?;
    let dtype = out_dtype(ctx, data.dtype, None)?;
    let oshape = trans_out.backward_shape(&oshape)?;
    ctx.assign(2, tensor(oshape, dtype));
    Ok(true)
}

fn conv3d_transpose_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let weight = ctx.tensor(1);
    let attrs = ctx.attrs;
    let ConvLayouts {
        data: trans_in,
        kernel: trans_kernel,
        out: trans_out,
    } = conv_layouts(
        ctx,
        "Conv3d_transpose",
        LayoutWording::ButGot,
        "NCDHW",
        "IODHW",
    )?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let groups_value = attrs.int("groups")?;
    let groups = groups_dim(groups_value);
    let kernel_size = attrs.dims("kernel_size")?;
    let channels_attr = attrs.dim("channels")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let channels;
    // TVM's names: `d` for depth, then `y` and `x` (see below).
    let (dilated_d, dilated_y, dilated_x);
    if let (Some(kernel_size), Some(channels_attr)) = (&kernel_size, &channels_attr) {
        check_len(kernel_size, 3, "kernel_size")?;
        check_len(&dilation, 3, "dilation")?;
        let mut wshape = vec![dshape[1].clone(), floordiv(channels_attr, &groups)?];
        wshape.extend(kernel_size.iter().cloned());
        let wshape = trans_kernel.backward_shape(&wshape)?;
        dilated_d = dilated(&kernel_size[0], &dilation[0]);
        dilated_y = dilated(&kernel_size[1], &dilation[1]);
        dilated_x = dilated(&kernel_size[2], &dilation[2]);
        channels = channels_attr.clone();
        assign_weight(ctx, 1, wshape, weight.as_ref().map(|w| w.dtype), data.dtype);
    } else {
        let Some(weight) = &weight else {
            return Ok(false);
        };
        let wshape = trans_kernel.forward_shape(&weight.shape)?;
        if let Some(kernel_size) = &kernel_size {
            check_len(kernel_size, 3, "kernel_size")?;
            check_kernel_size("Conv3DTransposed", kernel_size, &wshape)?;
        }
        if let Some(channels_attr) = &channels_attr {
            let per_group = floordiv(channels_attr, &groups)?;
            check(dims_equal(&per_group, &wshape[1]), || {
                format!(
                    "Conv3DTransposed: shape of weight is inconsistent out_channels,  out_channels // groups != weight.shape[1]  out_channels={} groups={groups_value} wshape={}",
                    display::dim(channels_attr),
                    shape_array(&wshape)
                )
            })?;
        }
        if !is_any(&dshape[1]) && !is_any(&wshape[0]) {
            check(dims_equal(&dshape[1], &wshape[0]), || {
                "Check failed: reporter->AssertEQ(dshape_ncdhw[1], wshape[0])".to_string()
            })?;
        }
        channels = wshape[1].clone();
        dilated_d = dilated(&wshape[2], &at(&dilation, 0, "dilation")?);
        // TVM swaps these two in this branch: `x` from the kernel's height,
        // `y` from its width, and uses `y` for the output height.
        dilated_x = dilated(&wshape[3], &at(&dilation, 1, "dilation")?);
        dilated_y = dilated(&wshape[4], &at(&dilation, 2, "dilation")?);
    }
    let [pad_d, pad_h, pad_w] = padding_dhw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let oshape = transposed_out_shape(
        attrs,
        &dshape,
        channels,
        &[pad_d, pad_h, pad_w],
        &[dilated_d, dilated_y, dilated_x],
    )?;
    let dtype = out_dtype(ctx, data.dtype, None)?;
    let oshape = trans_out.backward_shape(&oshape)?;
    ctx.assign(2, tensor(oshape, dtype));
    Ok(true)
}

fn conv2d_winograd_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let ConvLayouts {
        data: trans_in,
        out: trans_out,
        ..
    } = conv_layouts(ctx, "Conv", LayoutWording::ButGot, "NCHW", "OIHW")?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let (Some(kernel_size), Some(channels)) = (attrs.dims("kernel_size")?, attrs.dim("channels")?)
    else {
        return error(
            "The kernel size and channels of a Conv must be set or inferred by previous pass",
        );
    };
    let dilation = attrs.dims_or_empty("dilation")?;
    check_len(&kernel_size, 2, "kernel_size")?;
    check_len(&dilation, 2, "dilation")?;
    let dilated_y = dilated(&kernel_size[0], &dilation[0]);
    let dilated_x = dilated(&kernel_size[1], &dilation[1]);
    let (pad_h, pad_w) = padding_hw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let strides = attrs.dims_or_empty("strides")?;
    // `(in + pad - dilated) / stride + 1` with C++ `/`: truncating.
    let size = |input: &Dim, pad: &Dim, dil: &Dim, stride: &Dim| -> Result<Dim, RelationError> {
        if is_any(input) {
            return Ok(input.clone());
        }
        Ok(add(
            &truncdiv(&sub(&add(input, pad), dil), stride)?,
            &c_int(1),
        ))
    };
    let oshape = vec![
        dshape[0].clone(),
        channels,
        size(&dshape[2], &pad_h, &dilated_y, &at(&strides, 0, "strides")?)?,
        size(&dshape[3], &pad_w, &dilated_x, &at(&strides, 1, "strides")?)?,
    ];
    let dtype = out_dtype(ctx, data.dtype, None)?;
    let oshape = trans_out.backward_shape(&oshape)?;
    ctx.assign(2, tensor(oshape, dtype));
    Ok(true)
}

fn deformable_conv2d_rel(ctx: &mut Ctx) -> Step {
    // TVM `ICHECK(data)`; we wait while the data is incomplete.
    let Some(data) = ctx.tensor_or_wait(0, "Check failed: (data) is false: ")? else {
        return Ok(false);
    };
    let weight = ctx.tensor(2);
    let attrs = ctx.attrs;
    let ConvLayouts {
        data: trans_in,
        kernel: trans_kernel,
        out: trans_out,
    } = conv_layouts(
        ctx,
        "deformable_conv2d",
        LayoutWording::Provided {
            kernel_target_as_layout: false,
        },
        "NCHW",
        "OIHW",
    )?;
    let dshape = trans_in.forward_shape(&data.shape)?;
    let groups = groups_dim(attrs.int("groups")?);
    let kernel_size = attrs.dims("kernel_size")?;
    let channels_attr = attrs.dim("channels")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let (channels, ksize_y, ksize_x, dilated_y, dilated_x);
    if let (Some(kernel_size), Some(channels_attr)) = (&kernel_size, &channels_attr) {
        check_len(kernel_size, 2, "kernel_size")?;
        check_len(&dilation, 2, "dilation")?;
        let wshape = vec![
            channels_attr.clone(),
            floordiv(&dshape[1], &groups)?,
            kernel_size[0].clone(),
            kernel_size[1].clone(),
        ];
        let wshape = trans_kernel.backward_shape(&wshape)?;
        channels = channels_attr.clone();
        ksize_y = kernel_size[0].clone();
        ksize_x = kernel_size[1].clone();
        dilated_y = dilated(&kernel_size[0], &dilation[0]);
        dilated_x = dilated(&kernel_size[1], &dilation[1]);
        ctx.assign(2, tensor(wshape, data.dtype));
    } else {
        let Some(weight) = &weight else {
            return Ok(false);
        };
        let wshape = trans_kernel.forward_shape(&weight.shape)?;
        if let Some(kernel_size) = &kernel_size {
            check_len(kernel_size, 2, "kernel_size")?;
            check_kernel_size("DeformableConv2D", kernel_size, &wshape)?;
        }
        if let Some(channels_attr) = &channels_attr {
            check_channels("DeformableConv2D", channels_attr, &wshape)?;
        }
        if !is_any(&dshape[1]) && !is_any(&wshape[1]) {
            let per_group = floordiv(&dshape[1], &groups)?;
            check(dims_equal(&per_group, &wshape[1]), || {
                "Check failed: reporter->AssertEQ(indexdiv(dshape_nchw[1], param->groups), wshape[1])"
                    .to_string()
            })?;
        }
        channels = wshape[0].clone();
        ksize_y = wshape[2].clone();
        ksize_x = wshape[3].clone();
        dilated_y = dilated(&wshape[2], &at(&dilation, 0, "dilation")?);
        dilated_x = dilated(&wshape[3], &at(&dilation, 1, "dilation")?);
    }
    let (pad_h, pad_w) = padding_hw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let strides = attrs.dims_or_empty("strides")?;
    let one = c_int(1);
    let out_h = add(
        &floordiv(
            &sub(&add(&dshape[2], &pad_h), &dilated_y),
            &at(&strides, 0, "strides")?,
        )?,
        &one,
    );
    let out_w = add(
        &floordiv(
            &sub(&add(&dshape[3], &pad_w), &dilated_x),
            &at(&strides, 1, "strides")?,
        )?,
        &one,
    );
    let deformable_groups = c_int(attrs.int("deformable_groups")?);
    let offset_channels = mul(
        &mul(&mul(&c_int(2), &ksize_y), &ksize_x),
        &deformable_groups,
    );
    let offset_shape = trans_in.backward_shape(&[
        dshape[0].clone(),
        offset_channels,
        out_h.clone(),
        out_w.clone(),
    ])?;
    ctx.assign(1, tensor(offset_shape, data.dtype));
    let dtype = out_dtype(ctx, data.dtype, None)?;
    let oshape = trans_out.backward_shape(&[dshape[0].clone(), channels, out_h, out_w])?;
    ctx.assign(3, tensor(oshape, dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, Type};

    #[test]
    fn conv2d_nchw_assigns_weight() {
        let data = t(&[1, 3, 224, 224], "float32");
        let attrs = [
            ("strides", ints(&[2, 2])),
            ("padding", ints(&[3, 3])),
            ("channels", int(64)),
            ("kernel_size", ints(&[7, 7])),
        ];
        let assigns = solved("nn.conv2d", &[data, Type::incomplete()], &attrs);
        assert_eq!(assigns[0], (1, t(&[64, 3, 7, 7], "float32")));
        assert_eq!(assigns[1], (2, t(&[1, 64, 112, 112], "float32")));
    }

    #[test]
    fn conv2d_nhwc_from_weight_and_depthwise() {
        let data = t(&[1, 224, 224, 3], "float32");
        let weight = t(&[3, 3, 3, 32], "float32");
        let attrs = [
            ("strides", ints(&[2, 2])),
            ("padding", ints(&[0, 0, 1, 1])),
            ("data_layout", s("NHWC")),
            ("kernel_layout", s("HWIO")),
        ];
        assert_eq!(
            solve_out("nn.conv2d", &[data, weight], &attrs),
            t(&[1, 112, 112, 32], "float32")
        );
        let data = t(&[1, 112, 112, 32], "float32");
        let attrs = [
            ("padding", ints(&[1, 1, 1, 1])),
            ("groups", relay_ir::AttrValue::Int(32)),
            ("channels", int(32)),
            ("kernel_size", ints(&[3, 3])),
            ("data_layout", s("NHWC")),
            ("kernel_layout", s("HWOI")),
        ];
        let assigns = solved("nn.conv2d", &[data, t(&[3, 3, 32, 1], "float32")], &attrs);
        assert_eq!(assigns[0], (1, t(&[3, 3, 32, 1], "float32")));
        assert_eq!(assigns[1], (2, t(&[1, 112, 112, 32], "float32")));
        let err = fails(
            "nn.conv2d",
            &[t(&[1, 4, 8, 8], "float32"), Type::incomplete()],
            &[("groups", relay_ir::AttrValue::Int(2))],
        );
        assert_eq!(
            err,
            "Weight shape must be specified when groups is greater than 1."
        );
    }

    #[test]
    fn conv2d_blocked_layouts_and_int64() {
        let data = t(&[1, 4, 16, 16, 4], "float32");
        let attrs = [
            ("padding", ints(&[1, 1])),
            ("channels", int(16)),
            ("kernel_size", ints(&[3, 3])),
            ("data_layout", s("NCHW4c")),
            ("kernel_layout", s("OIHW4i4o")),
        ];
        let assigns = solved("nn.conv2d", &[data, Type::incomplete()], &attrs);
        assert_eq!(assigns[0], (1, t(&[4, 4, 3, 3, 4, 4], "float32")));
        assert_eq!(assigns[1], (2, t(&[1, 4, 16, 16, 4], "float32")));
        // Layout conversion casts to int32.
        let out = solve_out(
            "nn.conv2d",
            &[t64(&[1, 3, 8, 8], "float32"), t(&[4, 3, 3, 3], "float32")],
            &[],
        );
        assert_eq!(out, t(&[1, 4, 6, 6], "float32"));
        let any = td(
            vec![Dim::Any, Dim::int32(3), Dim::Any, Dim::int32(8)],
            "float32",
        );
        assert_eq!(
            solve_out("nn.conv2d", &[any, t(&[4, 3, 3, 3], "float32")], &[]),
            td(
                vec![Dim::Any, Dim::int32(4), Dim::Any, Dim::int32(6)],
                "float32"
            )
        );
        assert!(waits(
            "nn.conv2d",
            &[t(&[1, 3, 8, 8], "float32"), Type::incomplete()],
            &[]
        ));
    }

    #[test]
    fn layout_errors() {
        let err = fails(
            "nn.conv2d",
            &[t(&[1, 3, 8], "float32"), t(&[4, 3, 3], "float32")],
            &[("data_layout", s("NCW"))],
        );
        assert_eq!(
            err,
            "conv2d only support input layouts that are convertible from NCHW. The provided layout is: Layout(NCW)"
        );
        let err = fails(
            "nn.conv2d",
            &[t(&[1, 3, 8], "float32"), t(&[4, 3, 3, 3], "float32")],
            &[],
        );
        assert_eq!(
            err,
            "Input shape size 3 mismatch with the expected shape size 4"
        );
    }

    #[test]
    fn layouts_are_parsed_before_they_are_converted() {
        // TVM parses the data and kernel layouts before converting either,
        // in every convolution: a kernel layout that does not parse is the
        // error even when the data layout does not convert.
        let bad_both = [("data_layout", s("NCHW")), ("kernel_layout", s("OIW0i"))];
        let data = t(&[1, 3, 8], "float32");
        let err = fails("nn.conv1d", &[data, t(&[4, 3, 3], "float32")], &bad_both);
        assert_eq!(
            err,
            "Invalid layout OIW0i: invalid factor size 0 for dimension i"
        );
        let err = fails(
            "nn.conv1d",
            &[t(&[1, 3, 8], "float32"), t(&[4, 3, 3], "float32")],
            &[("data_layout", s("NCHW"))],
        );
        assert_eq!(
            err,
            "Conv only support input layouts that are convertible from NCW. But got Layout(NCHW)"
        );
        let err = fails(
            "nn.conv2d_transpose",
            &[t(&[1, 3, 8, 8], "float32"), t(&[3, 4, 3, 3], "float32")],
            &[("kernel_layout", s("OIW"))],
        );
        assert_eq!(
            err,
            "Conv2DTransposed only support kernel layouts that are convertible from Layout(IOHW). But got Layout(OIW) Layout(IOHW)"
        );
        let err = fails(
            "nn.deformable_conv2d",
            &[
                t(&[1, 4, 16, 16], "float32"),
                Type::incomplete(),
                t(&[4, 4, 3, 3], "float32"),
            ],
            &[("out_layout", s("NCW"))],
        );
        assert_eq!(
            err,
            "deformable_conv2d only support output layouts that are convertible from NCHW.The provided layout is: Layout(NCW)"
        );
    }

    #[test]
    fn transposed_and_others() {
        let out = solve_out(
            "nn.conv2d_transpose",
            &[t(&[1, 3, 18, 18], "float32"), t(&[3, 10, 3, 3], "float32")],
            &[("strides", ints(&[1, 1])), ("padding", ints(&[1, 1]))],
        );
        assert_eq!(out, t(&[1, 10, 18, 18], "float32"));
        let out = solve_out(
            "nn.conv1d",
            &[t(&[1, 3, 224], "float32"), t(&[10, 3, 3], "float32")],
            &[("padding", ints(&[1, 1]))],
        );
        assert_eq!(out, t(&[1, 10, 224], "float32"));
        let out = solve_out(
            "nn.contrib_conv2d_NCHWc",
            &[
                t(&[1, 4, 56, 56, 16], "float32"),
                t(&[4, 4, 3, 3, 16, 16], "float32"),
            ],
            &[
                ("padding", ints(&[1, 1])),
                ("channels", int(64)),
                ("kernel_size", ints(&[3, 3])),
                ("data_layout", s("NCHW16c")),
                ("kernel_layout", s("OIHW16i16o")),
                ("out_layout", s("NCHW16c")),
            ],
        );
        assert_eq!(out, t(&[1, 4, 56, 56, 16], "float32"));
        let assigns = solved(
            "nn.deformable_conv2d",
            &[
                t(&[1, 4, 16, 16], "float32"),
                Type::incomplete(),
                Type::incomplete(),
            ],
            &[
                ("padding", ints(&[1, 1])),
                ("channels", int(4)),
                ("kernel_size", ints(&[3, 3])),
            ],
        );
        assert_eq!(assigns[0], (2, t(&[4, 4, 3, 3], "float32")));
        assert_eq!(assigns[1], (1, t(&[1, 18, 16, 16], "float32")));
        assert_eq!(assigns[2], (3, t(&[1, 4, 16, 16], "float32")));
    }
}
