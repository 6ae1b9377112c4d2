//! Arm(R) Ethos(TM)-U NPU relations (`src/relay/op/contrib/ethosu/*.cc`):
//! `EthosuConv2DRel`, `EthosuDepthwiseConv2DRel`, `EthosuPoolingRel`,
//! `EthosuBinaryElementwiseRel`, `EthosuUnaryElementwiseRel` and
//! `EthosuIdentityRel`.
//!
//! The feature maps are `NHWC` or the NPU's brick format `NHCWB16`
//! (`[N, H, ceil(C / 16), W, 16]`); each operator accepts only the data
//! types its hardware block does, and reports any other with TVM's
//! "Invalid operator: …" diagnostic.

use super::display::shape_array;
use super::nn_conv::{at, dilated, padding_hw};
use super::shape::{add, c_int, floordiv, mul, sub};
use super::{error, item, relations, tensor, AboutAttribute, AttrsView, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::Dim;

relations! {
    /// `EthosuConv2DRel` (`contrib.ethosu.conv2d`).
    "EthosuConv2D" => conv2d_rel;
    /// `EthosuDepthwiseConv2DRel` (`contrib.ethosu.depthwise_conv2d`).
    "EthosuDepthwiseConv2D" => depthwise_conv2d_rel;
    /// `EthosuPoolingRel` (`contrib.ethosu.pooling`).
    "EthosuPooling" => pooling_rel;
    /// `EthosuBinaryElementwiseRel` (`contrib.ethosu.binary_elementwise`).
    "EthosuBinaryElementwise" => binary_elementwise_rel;
    /// `EthosuUnaryElementwiseRel` (`contrib.ethosu.unary_elementwise`).
    "EthosuUnaryElementwise" => unary_elementwise_rel;
    /// `EthosuIdentityRel` (`contrib.ethosu.identity`).
    "EthosuIdentity" => identity_rel;
}

const BRICKS: &str = "NHCWB16";
const INT8: DataType = DataType::int(8);
const UINT8: DataType = DataType::uint(8);
const INT16: DataType = DataType::int(16);
const INT32: DataType = DataType::int(32);

/// `CheckDataType`: `dtype` is one of `allowed`.
fn check_dtype(
    dtype: DataType,
    allowed: &[DataType],
    op: &str,
    tensor_name: &str,
    op_type: &str,
) -> Result<(), RelationError> {
    if allowed.contains(&dtype) {
        return Ok(());
    }
    let kind = if op_type.is_empty() {
        String::new()
    } else {
        format!("{op_type} ")
    };
    let allowed: Vec<String> = allowed.iter().map(ToString::to_string).collect();
    error(format!(
        "Invalid operator: expected {op} {kind}to have type in {{{}}} for {tensor_name} but was {dtype}.",
        allowed.join(", ")
    ))
}

/// `CheckDataTypeMatch`: the two dtypes are equal.
fn check_dtype_match(
    dtype: DataType,
    dtype2: DataType,
    op: &str,
    names: (&str, &str),
    op_type: &str,
) -> Result<(), RelationError> {
    if dtype == dtype2 {
        return Ok(());
    }
    let kind = if op_type.is_empty() {
        String::new()
    } else {
        format!("{op_type} ")
    };
    error(format!(
        "Invalid operator: expected {op} {kind}data types for {} and {} to match, but was {dtype} and {dtype2}",
        names.0, names.1
    ))
}

/// `CheckUpscaleMethod`.
fn check_upscale(upscale: &str, op: &str) -> Result<(), RelationError> {
    if ["NONE", "ZEROS", "NEAREST"].contains(&upscale) {
        return Ok(());
    }
    Err(RelationError::new(format!(
        "Invalid operator: expected {op} to have upscale method in {{NONE, ZEROS, NEAREST}} but was {upscale}."
    ))
    .about_attribute("upscale"))
}

/// `DataTypeFromString` of the `ofm_dtype` attribute.
fn ofm_dtype(attrs: AttrsView) -> Result<DataType, RelationError> {
    let name = attrs.str("ofm_dtype")?;
    if name.is_empty() {
        return Ok(DataType::void());
    }
    DataType::parse(&name)
        .map_err(|e| RelationError::new(e.to_string()).about_attribute("ofm_dtype"))
}

/// A `PrimExpr` attribute that must be set (TVM builds shapes from it and
/// would fail on a null one).
fn required_dim(attrs: AttrsView, name: &'static str) -> Result<Dim, RelationError> {
    attrs.dim(name)?.ok_or_else(|| {
        RelationError::new(format!("the attribute `{name}` is null")).about_attribute(name)
    })
}

/// The number of 16-channel bricks of `channels` (`1 + (C - 1) / 16` in
/// C++ integer division); TVM reads the channels as an immediate.
fn bricks(channels: &Dim) -> Result<Dim, RelationError> {
    let Some((value, _)) = channels.as_int_imm() else {
        return error(format!(
            "the NHCWB16 layout needs a known number of channels, but it is {}",
            super::display::dim(channels)
        ));
    };
    Ok(c_int(1 + (value - 1) / 16))
}

/// An `[N, H, W, C]` shape in the `ofm_layout`.
fn to_ofm_layout(shape: Vec<Dim>, layout: &str) -> Result<Vec<Dim>, RelationError> {
    if layout != BRICKS {
        return Ok(shape);
    }
    Ok(vec![
        shape[0].clone(),
        shape[1].clone(),
        bricks(&shape[3])?,
        shape[2].clone(),
        c_int(16),
    ])
}

/// The `[N, H, W]` part of an ifm shape (TVM drops the channels of an
/// `NHCWB16` shape, keeping them in place for `NHWC`).
fn ifm_nhw(shape: &[Dim], layout: &str) -> Result<Vec<Dim>, RelationError> {
    Ok(if layout == BRICKS {
        vec![
            item(shape, 0)?.clone(),
            item(shape, 1)?.clone(),
            item(shape, 3)?.clone(),
        ]
    } else {
        shape.to_vec()
    })
}

/// `EthosuInferElementwiseOutputShape`.
fn elementwise_output(
    ifm_shape: &[Dim],
    ifm_layout: &str,
    ofm_layout: &str,
    ofm_channels: Dim,
) -> Result<Vec<Dim>, RelationError> {
    let nhw = ifm_nhw(ifm_shape, ifm_layout)?;
    let oshape = vec![
        item(&nhw, 0)?.clone(),
        item(&nhw, 1)?.clone(),
        item(&nhw, 2)?.clone(),
        ofm_channels,
    ];
    to_ofm_layout(oshape, ofm_layout)
}

/// The window attributes of a convolution or pooling.
struct Window {
    kernel: Vec<Dim>,
    dilation: Vec<Dim>,
    strides: Vec<Dim>,
    padding: Vec<Dim>,
}

/// `EthosuInferKernelOutput`: `(in + pad - dilated_kernel) / stride + 1`
/// per spatial axis (no special case for `?`: arithmetic on it stays `?`).
fn kernel_output(
    ifm_shape: &[Dim],
    ifm_layout: &str,
    ofm_layout: &str,
    window: &Window,
    ofm_channels: Dim,
) -> Result<Vec<Dim>, RelationError> {
    let nhw = ifm_nhw(ifm_shape, ifm_layout)?;
    let ksize_y = dilated(
        &at(&window.kernel, 0, "kernel_shape")?,
        &at(&window.dilation, 0, "dilation")?,
    );
    let ksize_x = dilated(
        &at(&window.kernel, 1, "kernel_shape")?,
        &at(&window.dilation, 1, "dilation")?,
    );
    let (pad_h, pad_w) = padding_hw(&window.padding).about("padding")?;
    let spatial = |input: &Dim, pad: &Dim, ksize: &Dim, stride: Dim| {
        Ok::<_, RelationError>(add(
            &floordiv(&sub(&add(input, pad), ksize), &stride)?,
            &c_int(1),
        ))
    };
    let height = spatial(
        item(&nhw, 1)?,
        &pad_h,
        &ksize_y,
        at(&window.strides, 0, "strides")?,
    )?;
    let width = spatial(
        item(&nhw, 2)?,
        &pad_w,
        &ksize_x,
        at(&window.strides, 1, "strides")?,
    )?;
    let oshape = vec![item(&nhw, 0)?.clone(), height, width, ofm_channels];
    to_ofm_layout(oshape, ofm_layout)
}

/// `EthosuInferUpscaledInput`: height and width doubled.
fn upscaled_input(ifm_shape: &[Dim], layout: &str) -> Result<Vec<Dim>, RelationError> {
    let nhwc = if layout == BRICKS {
        vec![
            item(ifm_shape, 0)?.clone(),
            item(ifm_shape, 1)?.clone(),
            item(ifm_shape, 3)?.clone(),
            mul(item(ifm_shape, 2)?, &c_int(16)),
        ]
    } else {
        ifm_shape.to_vec()
    };
    let scaled = vec![
        item(&nhwc, 0)?.clone(),
        mul(item(&nhwc, 1)?, &c_int(2)),
        mul(item(&nhwc, 2)?, &c_int(2)),
        item(&nhwc, 3)?.clone(),
    ];
    to_ofm_layout(scaled, layout)
}

/// The window of a convolution: its `kernel_shape`, `dilation`, `strides`
/// and `padding` attributes.
fn conv_window(attrs: AttrsView) -> Result<Window, RelationError> {
    Ok(Window {
        kernel: attrs.dims_or_empty("kernel_shape")?,
        dilation: attrs.dims_or_empty("dilation")?,
        strides: attrs.dims_or_empty("strides")?,
        padding: attrs.dims_or_empty("padding")?,
    })
}

/// Reads the (unchecked) scale/bias tensor of a convolution: TVM reads its
/// dtype without a null check, so we wait while it is not known.
fn scale_bias_dtype(ctx: &Ctx) -> Result<Option<DataType>, RelationError> {
    Ok(ctx
        .tensor_or_wait(2, "the scale_bias argument must be a tensor, not ")?
        .map(|t| t.dtype))
}

/// The weight `[ofm_channels, kernel_h, kernel_w, weight's last axis]`.
fn weight_type(
    attrs: AttrsView,
    window: &Window,
    weight_shape: &[Dim],
    dtype: DataType,
) -> Result<relay_ir::Type, RelationError> {
    Ok(tensor(
        vec![
            required_dim(attrs, "ofm_channels")?,
            at(&window.kernel, 0, "kernel_shape")?,
            at(&window.kernel, 1, "kernel_shape")?,
            item(weight_shape, 3)?.clone(),
        ],
        dtype,
    ))
}

/// Assigns the scale/bias `[weight's first axis, 10]` (`uint8`), the
/// weight from the attributes, and the ofm in the ifm's dtype.
fn conv2d_rel(ctx: &mut Ctx) -> Step {
    let (Some(ifm), Some(weight)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let Some(scale_bias) = scale_bias_dtype(ctx)? else {
        return Ok(false);
    };
    let op = "ethosu_conv2d";
    check_dtype(ifm.dtype, &[UINT8, INT8], op, "ifm", "")?;
    check_dtype(weight.dtype, &[UINT8, INT8], op, "weight", "")?;
    check_dtype(scale_bias, &[UINT8], op, "scale bias", "")?;
    let upscale = ctx.attrs.str("upscale")?;
    check_upscale(&upscale, op)?;
    let attrs = ctx.attrs;
    let window = conv_window(attrs)?;
    let scale_bias = tensor(vec![item(&weight.shape, 0)?.clone(), c_int(10)], UINT8);
    let weight_ty = weight_type(attrs, &window, &weight.shape, weight.dtype)?;
    let ifm_layout = attrs.str("ifm_layout")?;
    let ifm_shape = if upscale != "NONE" {
        upscaled_input(&ifm.shape, &ifm_layout)?
    } else {
        ifm.shape.clone()
    };
    let ofm = kernel_output(
        &ifm_shape,
        &ifm_layout,
        &attrs.str("ofm_layout")?,
        &window,
        required_dim(attrs, "ofm_channels")?,
    )?;
    ctx.assign(2, scale_bias);
    ctx.assign(1, weight_ty);
    ctx.assign(4, tensor(ofm, ifm.dtype));
    Ok(true)
}

/// Like the convolution, with an `ofm_dtype` attribute and no upscaling;
/// the scale/bias is checked but not assigned.
fn depthwise_conv2d_rel(ctx: &mut Ctx) -> Step {
    let (Some(ifm), Some(weight)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let Some(scale_bias) = scale_bias_dtype(ctx)? else {
        return Ok(false);
    };
    let op = "ethosu_depthwise_conv2d";
    check_dtype(ifm.dtype, &[UINT8, INT8], op, "ifm", "")?;
    check_dtype(weight.dtype, &[UINT8, INT8], op, "weight", "")?;
    check_dtype(scale_bias, &[UINT8], op, "scale bias", "")?;
    let attrs = ctx.attrs;
    let ofm_dtype = ofm_dtype(attrs)?;
    check_dtype(ofm_dtype, &[UINT8, INT8, INT16, INT32], op, "ofm", "")?;
    let window = conv_window(attrs)?;
    let weight_ty = weight_type(attrs, &window, &weight.shape, weight.dtype)?;
    let ofm = kernel_output(
        &ifm.shape,
        &attrs.str("ifm_layout")?,
        &attrs.str("ofm_layout")?,
        &window,
        required_dim(attrs, "ofm_channels")?,
    )?;
    ctx.assign(1, weight_ty);
    ctx.assign(4, tensor(ofm, ofm_dtype));
    Ok(true)
}

/// `AVG`, `MAX` (ifm and ofm of one 8/16-bit dtype) or `SUM` (an `int32`
/// ofm) over a `pool_shape` window.
fn pooling_rel(ctx: &mut Ctx) -> Step {
    let Some(ifm) = ctx.tensor(0) else {
        return Ok(false);
    };
    let op = "ethosu_pooling";
    let attrs = ctx.attrs;
    let pooling_type = attrs.str("pooling_type")?;
    if !["AVG", "MAX", "SUM"].contains(&pooling_type.as_str()) {
        return Err(RelationError::new(format!(
            "Invalid operator: expected {op} type 'AVG', 'MAX', or 'SUM' but was {pooling_type}"
        ))
        .about_attribute("pooling_type"));
    }
    let allowed_ifm: &[DataType] = if pooling_type == "SUM" {
        &[UINT8, INT8, INT16, INT32]
    } else {
        &[UINT8, INT8, INT16]
    };
    check_dtype(ifm.dtype, allowed_ifm, op, "ifm", &pooling_type)?;
    let ofm_dtype = ofm_dtype(attrs)?;
    if pooling_type == "SUM" {
        check_dtype(ofm_dtype, &[INT32], op, "ofm", &pooling_type)?;
    } else {
        check_dtype(ofm_dtype, &[INT8, UINT8, INT16], op, "ofm", &pooling_type)?;
        // TVM names the tensors in this order but passes the ofm's first.
        check_dtype_match(ofm_dtype, ifm.dtype, op, ("ifm", "ofm"), &pooling_type)?;
    }
    let upscale = attrs.str("upscale")?;
    check_upscale(&upscale, op)?;
    let ifm_layout = attrs.str("ifm_layout")?;
    let ifm_shape = if upscale != "NONE" {
        upscaled_input(&ifm.shape, &ifm_layout)?
    } else {
        ifm.shape.clone()
    };
    let window = Window {
        kernel: attrs.dims_or_empty("pool_shape")?,
        dilation: vec![c_int(1), c_int(1)],
        strides: attrs.dims_or_empty("strides")?,
        padding: attrs.dims_or_empty("padding")?,
    };
    let ofm = kernel_output(
        &ifm_shape,
        &ifm_layout,
        &attrs.str("ofm_layout")?,
        &window,
        required_dim(attrs, "ofm_channels")?,
    )
    .map_err(|e| match e.attribute {
        // The pooling's window is its `pool_shape`.
        Some("kernel_shape") => RelationError {
            message: e.message.replace("kernel_shape", "pool_shape"),
            attribute: Some("pool_shape"),
            ..e
        },
        _ => e,
    })?;
    ctx.assign(2, tensor(ofm, ofm_dtype));
    Ok(true)
}

/// `ADD`, `SUB`, `MUL`, `MIN`, `MAX`, `SHR` or `SHL` of two feature maps
/// of one dtype; the ofm has `ifm_channels` channels and `ofm_dtype`.
fn binary_elementwise_rel(ctx: &mut Ctx) -> Step {
    let (Some(ifm), Some(ifm2)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let op = "ethosu_binary_elementwise";
    let attrs = ctx.attrs;
    let op_type = attrs.str("operator_type")?;
    let ofm_dtype = ofm_dtype(attrs)?;
    check_dtype_match(ifm.dtype, ifm2.dtype, op, ("ifm", "ifm2"), &op_type)?;
    match op_type.as_str() {
        "ADD" | "SUB" | "MUL" => {
            let allowed = [INT8, UINT8, INT16, INT32];
            check_dtype(ifm.dtype, &allowed, op, "ifm", &op_type)?;
            check_dtype(ofm_dtype, &allowed, op, "ofm", &op_type)?;
        }
        "MIN" | "MAX" => {
            check_dtype(ifm.dtype, &[INT8, UINT8], op, "ifm", &op_type)?;
            check_dtype_match(ifm.dtype, ofm_dtype, op, ("ifm", "ofm"), &op_type)?;
        }
        "SHR" => {
            check_dtype(ifm.dtype, &[INT32], op, "ifm", &op_type)?;
            check_dtype(ofm_dtype, &[UINT8, INT8, INT32], op, "ofm", &op_type)?;
        }
        "SHL" => {
            check_dtype(ifm.dtype, &[INT32], op, "ifm", &op_type)?;
            check_dtype(ofm_dtype, &[INT32], op, "ofm", &op_type)?;
        }
        _ => {
            return Err(RelationError::new(format!(
                "Invalid operator: expected {op} 'ADD' or 'SUB' or 'MUL' or 'MIN' or 'MAX' or 'SHR' or 'SHL' for operator_type but was {op_type}"
            ))
            .about_attribute("operator_type"))
        }
    }
    let ofm = elementwise_output(
        &ifm.shape,
        &attrs.str("ifm_layout")?,
        &attrs.str("ofm_layout")?,
        required_dim(attrs, "ifm_channels")?,
    )?;
    ctx.assign(3, tensor(ofm, ofm_dtype));
    Ok(true)
}

/// `ABS` (8-bit) or `CLZ` (`int32`); the ofm keeps the ifm's dtype.
fn unary_elementwise_rel(ctx: &mut Ctx) -> Step {
    let Some(ifm) = ctx.tensor(0) else {
        return Ok(false);
    };
    let op = "ethosu_unary_elementwise";
    let attrs = ctx.attrs;
    let op_type = attrs.str("operator_type")?;
    match op_type.as_str() {
        "CLZ" => check_dtype(ifm.dtype, &[INT32], op, "ifm", &op_type)?,
        "ABS" => check_dtype(ifm.dtype, &[UINT8, INT8], op, "ifm", &op_type)?,
        // TVM's message, with its stray `<<` and missing space.
        _ => {
            return Err(RelationError::new(format!(
            "Invalid operator: expected << {op}  'ABS' or 'CLZ' for operator_type but was{op_type}"
        ))
            .about_attribute("operator_type"))
        }
    }
    let ofm = elementwise_output(
        &ifm.shape,
        &attrs.str("ifm_layout")?,
        &attrs.str("ofm_layout")?,
        required_dim(attrs, "ofm_channels")?,
    )?;
    ctx.assign(2, tensor(ofm, ifm.dtype));
    Ok(true)
}

/// An 8-bit feature map of at most four dimensions, passed through.
fn identity_rel(ctx: &mut Ctx) -> Step {
    let Some(ifm) = ctx.tensor(0) else {
        return Ok(false);
    };
    check_dtype(ifm.dtype, &[UINT8, INT8], "ethosu_identity", "ifm", "")?;
    if ifm.shape.len() > 4 {
        return error(format!(
            "Invalid operator: Input Feature Map should be at most 4 dimensional, but was {}",
            shape_array(&ifm.shape)
        ));
    }
    ctx.assign(2, tensor(ifm.shape.clone(), ifm.dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{AttrValue, Dim, Type};

    /// The quantisation parameters every Ethos-U op requires.
    fn quant(extra: &[(&'static str, AttrValue)]) -> Vec<(&'static str, AttrValue)> {
        let mut attrs = vec![
            ("ifm_scale", f(1.0)),
            ("ifm_zero_point", int(0)),
            ("ofm_scale", f(1.0)),
            ("ofm_zero_point", int(0)),
        ];
        attrs.extend(extra.iter().cloned());
        attrs
    }

    fn conv(extra: &[(&'static str, AttrValue)]) -> Vec<(&'static str, AttrValue)> {
        let mut attrs = quant(&[
            ("weight_zero_point", int(0)),
            ("kernel_shape", ints(&[3, 2])),
            ("ofm_channels", int(16)),
        ]);
        attrs.extend(extra.iter().cloned());
        attrs
    }

    #[test]
    fn conv2d() {
        let inputs = [
            t(&[1, 8, 8, 3], "int8"),
            Type::incomplete(),
            Type::incomplete(),
            t(&[], "int8"),
        ];
        // The weight and the scale/bias come from the attributes, but TVM
        // reads their dtypes: they must be known.
        assert!(waits("contrib.ethosu.conv2d", &inputs, &conv(&[])));
        let inputs = [
            t(&[1, 8, 8, 3], "int8"),
            t(&[16, 3, 2, 3], "int8"),
            t(&[16, 10], "uint8"),
            t(&[], "int8"),
        ];
        let assigns = solved("contrib.ethosu.conv2d", &inputs, &conv(&[]));
        assert_eq!(assigns[0], (2, t(&[16, 10], "uint8")));
        assert_eq!(assigns[1], (1, t(&[16, 3, 2, 3], "int8")));
        assert_eq!(assigns[2], (4, t(&[1, 6, 7, 16], "int8")));
        // Strides, dilation, padding (top, left, bottom, right), bricks out.
        assert_eq!(
            solve_out(
                "contrib.ethosu.conv2d",
                &inputs,
                &conv(&[
                    ("strides", ints(&[2, 1])),
                    ("dilation", ints(&[1, 2])),
                    ("padding", ints(&[1, 1, 0, 1])),
                    ("ofm_layout", s("NHCWB16"))
                ])
            ),
            t(&[1, 4, 1, 8, 16], "int8")
        );
        // NHCWB16 in with upscaling: H and W doubled before the window.
        assert_eq!(
            solve_out(
                "contrib.ethosu.conv2d",
                &[
                    t(&[1, 4, 1, 4, 16], "uint8"),
                    t(&[16, 3, 2, 3], "uint8"),
                    t(&[16, 10], "uint8"),
                    t(&[], "uint8")
                ],
                &conv(&[("ifm_layout", s("NHCWB16")), ("upscale", s("NEAREST"))])
            ),
            t(&[1, 6, 7, 16], "uint8")
        );
        assert_eq!(
            fails(
                "contrib.ethosu.conv2d",
                &[inputs[0].clone(), t(&[16, 3, 2, 3], "int16"), inputs[2].clone(), inputs[3].clone()],
                &conv(&[])
            ),
            "Invalid operator: expected ethosu_conv2d to have type in {uint8, int8} for weight but was int16."
        );
        assert_eq!(
            fails("contrib.ethosu.conv2d", &inputs, &conv(&[("upscale", s("LINEAR"))])),
            "Invalid operator: expected ethosu_conv2d to have upscale method in {NONE, ZEROS, NEAREST} but was LINEAR."
        );
        assert_eq!(
            fails(
                "contrib.ethosu.conv2d",
                &[inputs[0].clone(), inputs[1].clone(), t(&[16, 10], "int8"), inputs[3].clone()],
                &conv(&[])
            ),
            "Invalid operator: expected ethosu_conv2d to have type in {uint8} for scale bias but was int8."
        );
    }

    #[test]
    fn depthwise_conv2d() {
        let inputs = [
            t(&[1, 8, 8, 16], "uint8"),
            t(&[16, 3, 2, 1], "uint8"),
            t(&[16, 10], "uint8"),
            t(&[], "uint8"),
        ];
        let assigns = solved(
            "contrib.ethosu.depthwise_conv2d",
            &inputs,
            &conv(&[("ofm_dtype", s("int16"))]),
        );
        assert_eq!(
            assigns,
            vec![
                (1, t(&[16, 3, 2, 1], "uint8")),
                (4, t(&[1, 6, 7, 16], "int16"))
            ]
        );
        assert_eq!(
            fails(
                "contrib.ethosu.depthwise_conv2d",
                &inputs,
                &conv(&[("ofm_dtype", s("float32"))])
            ),
            "Invalid operator: expected ethosu_depthwise_conv2d to have type in {uint8, int8, int16, int32} for ofm but was float32."
        );
    }

    /// A pooling's attributes: `extra` overrides the defaults given here.
    fn pool(kind: &str, extra: &[(&'static str, AttrValue)]) -> Vec<(&'static str, AttrValue)> {
        let mut attrs = extra.to_vec();
        for (key, value) in quant(&[
            ("pooling_type", s(kind)),
            ("pool_shape", ints(&[3, 3])),
            ("ofm_channels", int(20)),
            ("ofm_dtype", s("int8")),
        ]) {
            if !extra.iter().any(|(given, _)| *given == key) {
                attrs.push((key, value));
            }
        }
        attrs
    }

    #[test]
    fn pooling() {
        let ifm = [t(&[1, 9, 9, 20], "int8"), t(&[], "int8")];
        assert_eq!(
            solve_out(
                "contrib.ethosu.pooling",
                &ifm,
                &pool("MAX", &[("strides", ints(&[2, 2]))])
            ),
            t(&[1, 4, 4, 20], "int8")
        );
        assert_eq!(
            solve_out(
                "contrib.ethosu.pooling",
                &ifm,
                &pool(
                    "SUM",
                    &[("ofm_dtype", s("int32")), ("ofm_layout", s("NHCWB16"))]
                )
            ),
            t(&[1, 7, 2, 7, 16], "int32")
        );
        assert_eq!(
            fails("contrib.ethosu.pooling", &ifm, &pool("AVG", &[("ofm_dtype", s("uint8"))])),
            "Invalid operator: expected ethosu_pooling AVG data types for ifm and ofm to match, but was uint8 and int8"
        );
        assert_eq!(
            fails("contrib.ethosu.pooling", &ifm, &pool("SUM", &[])),
            "Invalid operator: expected ethosu_pooling SUM to have type in {int32} for ofm but was int8."
        );
        assert_eq!(
            fails("contrib.ethosu.pooling", &ifm, &pool("MIN", &[])),
            "Invalid operator: expected ethosu_pooling type 'AVG', 'MAX', or 'SUM' but was MIN"
        );
        assert_eq!(
            fails(
                "contrib.ethosu.pooling",
                &[t(&[1, 9, 9, 20], "int32"), t(&[], "int8")],
                &pool("MAX", &[])
            ),
            "Invalid operator: expected ethosu_pooling MAX to have type in {uint8, int8, int16} for ifm but was int32."
        );
        assert_eq!(
            fails(
                "contrib.ethosu.pooling",
                &ifm,
                &pool("MAX", &[("pool_shape", ints(&[3]))])
            ),
            "IndexError: indexing 1 on an array of size 1 (attribute `pool_shape`)"
        );
    }

    fn binary(kind: &str, ofm_dtype: &str) -> Vec<(&'static str, AttrValue)> {
        quant(&[
            ("operator_type", s(kind)),
            ("ifm2_scale", f(1.0)),
            ("ifm2_zero_point", int(0)),
            ("ifm_channels", int(33)),
            ("ifm2_channels", int(33)),
            ("ofm_dtype", s(ofm_dtype)),
        ])
    }

    #[test]
    fn binary_elementwise() {
        let inputs = |dtype: &str| {
            [
                t(&[1, 5, 6, 33], dtype),
                t(&[1, 5, 6, 33], dtype),
                t(&[], dtype),
            ]
        };
        assert_eq!(
            solve_out(
                "contrib.ethosu.binary_elementwise",
                &inputs("int8"),
                &binary("ADD", "int32")
            ),
            t(&[1, 5, 6, 33], "int32")
        );
        let mut attrs = binary("SHR", "uint8");
        attrs.push(("ofm_layout", s("NHCWB16")));
        assert_eq!(
            solve_out(
                "contrib.ethosu.binary_elementwise",
                &inputs("int32"),
                &attrs
            ),
            t(&[1, 5, 3, 6, 16], "uint8")
        );
        // NHCWB16 in: [N, H, bricks, W, 16].
        let mut attrs = binary("MAX", "int8");
        attrs.push(("ifm_layout", s("NHCWB16")));
        assert_eq!(
            solve_out(
                "contrib.ethosu.binary_elementwise",
                &[
                    t(&[1, 5, 3, 6, 16], "int8"),
                    t(&[1, 5, 3, 6, 16], "int8"),
                    t(&[], "int8")
                ],
                &attrs
            ),
            t(&[1, 5, 6, 33], "int8")
        );
        assert_eq!(
            fails(
                "contrib.ethosu.binary_elementwise",
                &[t(&[1, 5, 6, 33], "int8"), t(&[1, 5, 6, 33], "uint8"), t(&[], "int8")],
                &binary("ADD", "int8")
            ),
            "Invalid operator: expected ethosu_binary_elementwise ADD data types for ifm and ifm2 to match, but was int8 and uint8"
        );
        assert_eq!(
            fails("contrib.ethosu.binary_elementwise", &inputs("int8"), &binary("MIN", "uint8")),
            "Invalid operator: expected ethosu_binary_elementwise MIN data types for ifm and ofm to match, but was int8 and uint8"
        );
        assert_eq!(
            fails("contrib.ethosu.binary_elementwise", &inputs("int8"), &binary("SHL", "int32")),
            "Invalid operator: expected ethosu_binary_elementwise SHL to have type in {int32} for ifm but was int8."
        );
        assert_eq!(
            fails("contrib.ethosu.binary_elementwise", &inputs("int8"), &binary("DIV", "int8")),
            "Invalid operator: expected ethosu_binary_elementwise 'ADD' or 'SUB' or 'MUL' or 'MIN' or 'MAX' or 'SHR' or 'SHL' for operator_type but was DIV"
        );
    }

    #[test]
    fn unary_elementwise() {
        let attrs = |kind: &str| quant(&[("operator_type", s(kind)), ("ofm_channels", int(4))]);
        assert_eq!(
            solve_out(
                "contrib.ethosu.unary_elementwise",
                &[
                    td(
                        vec![Dim::int32(1), Dim::Any, Dim::int32(3), Dim::int32(4)],
                        "int8"
                    ),
                    t(&[], "int8")
                ],
                &attrs("ABS")
            ),
            td(
                vec![Dim::int32(1), Dim::Any, Dim::int32(3), Dim::int32(4)],
                "int8"
            )
        );
        assert_eq!(
            fails(
                "contrib.ethosu.unary_elementwise",
                &[t(&[1, 2, 3, 4], "int8"), t(&[], "int8")],
                &attrs("CLZ")
            ),
            "Invalid operator: expected ethosu_unary_elementwise CLZ to have type in {int32} for ifm but was int8."
        );
        assert_eq!(
            fails(
                "contrib.ethosu.unary_elementwise",
                &[t(&[1, 2, 3, 4], "int8"), t(&[], "int8")],
                &attrs("NEG")
            ),
            "Invalid operator: expected << ethosu_unary_elementwise  'ABS' or 'CLZ' for operator_type but wasNEG"
        );
    }

    #[test]
    fn identity() {
        assert_eq!(
            solve_out(
                "contrib.ethosu.identity",
                &[t(&[3, 7], "uint8"), t(&[], "uint8")],
                &quant(&[])
            ),
            t(&[3, 7], "uint8")
        );
        assert_eq!(
            fails(
                "contrib.ethosu.identity",
                &[t(&[1, 2, 3, 4, 5], "int8"), t(&[], "int8")],
                &quant(&[])
            ),
            "Invalid operator: Input Feature Map should be at most 4 dimensional, but was [1, 2, 3, 4, 5]"
        );
        assert_eq!(
            fails("contrib.ethosu.identity", &[t(&[4], "float32"), t(&[], "int8")], &quant(&[])),
            "Invalid operator: expected ethosu_identity to have type in {uint8, int8} for ifm but was float32."
        );
    }
}
