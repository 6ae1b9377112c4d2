//! The conversions to the desired layouts: TVM's `FTVMConvertOpLayout`
//! hooks (`convert_conv2d` and friends in `python/tvm/relay/op/**`).
//!
//! A hook gets the call's attributes and (rewritten) arguments, the types
//! of the original arguments and the layouts the user asked for, and builds
//! the call in those layouts. The hooks build their calls through TVM's
//! Python constructors, which normalise some attributes on the way: a
//! two-value `padding` becomes four values (six for 3-D), and
//! `image.resize*` gets a zero `roi` when it had none. Those normalisations
//! are reproduced here, since they show in the printed result.

use super::infer::{field, str_field};
use super::rewrite::{CallInfo, CallWithNewLayouts, DesiredLayouts, NewCall};
use relay_ir::build::attrs_replacing;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Attrs, Dim, Expr, Type};

/// The arguments of a conversion.
pub(super) struct ConvertArgs<'a> {
    pub op: &'a str,
    pub attrs: Option<&'a Attrs>,
    /// The call's arguments after the rewrite of its inputs.
    pub args: &'a [Expr],
    /// The types of the original arguments.
    pub types: &'a [Type],
    /// The layouts asked for this operator.
    pub desired: &'a [String],
}

/// ConvertLayout's memorizer (`ConvertTransformMemorizerNode`): the
/// operator's conversion when it has one and layouts were asked for it.
pub(super) struct ConvertMemorizer<'a>(pub &'a DesiredLayouts);

impl CallWithNewLayouts for ConvertMemorizer<'_> {
    fn call_with_new_layouts(&self, call: &CallInfo) -> Result<Option<NewCall>, String> {
        if !has_hook(call.op) {
            return Ok(None);
        }
        let Some((_, desired)) = self.0.iter().find(|(name, _)| name == call.op) else {
            return Ok(None);
        };
        let (op, attrs) = convert(&ConvertArgs {
            op: call.op,
            attrs: call.attrs,
            args: call.args,
            types: call.types,
            desired,
        })?;
        Ok(Some(NewCall {
            op,
            attrs: Some(attrs),
            args: call.args.to_vec(),
        }))
    }
}

/// Whether TVM registers a conversion for `op`.
pub(super) fn has_hook(op: &str) -> bool {
    matches!(
        op,
        "nn.conv2d"
            | "nn.conv2d_transpose"
            | "nn.conv3d"
            | "nn.conv3d_transpose"
            | "nn.deformable_conv2d"
            | "nn.conv2d_backward_weight"
            | "nn.max_pool2d"
            | "nn.avg_pool2d"
            | "nn.global_max_pool2d"
            | "nn.global_avg_pool2d"
            | "image.resize1d"
            | "image.resize2d"
            | "vision.roi_align"
            | "vision.roi_pool"
            | "qnn.conv2d"
            | "qnn.conv2d_transpose"
            | "qnn.avg_pool2d"
    )
}

/// The call `op` should become: `(operator name, attributes)`, its
/// arguments unchanged.
pub(super) fn convert(c: &ConvertArgs) -> Result<(String, Attrs), String> {
    let attrs = c
        .attrs
        .ok_or_else(|| format!("{}: the call has no attributes", c.op))?;
    match c.op {
        "nn.conv2d" => conv2d(c, attrs),
        "qnn.conv2d" => {
            let (data, kernel) = two_layouts(c)?;
            let kernel = match (data.as_str(), kernel.as_str()) {
                (_, k) if k != "default" => k.to_string(),
                ("NCHW", _) => "OIHW".into(),
                ("NHWC", _) if is_depthwise(c, attrs)? => "HWOI".into(),
                ("NHWC", _) => "HWIO".into(),
                (d, _) => return Err(format!("Layout {d} is not yet supported")),
            };
            conv_like(c.op, attrs, &data, &kernel, pad_2d)
        }
        "nn.conv2d_transpose" | "qnn.conv2d_transpose" => {
            let (data, kernel) = two_layouts(c)?;
            let kernel = default_kernel(&data, &kernel, &[("NCHW", "IOHW"), ("NHWC", "HWIO")])?;
            conv_like(c.op, attrs, &data, &kernel, pad_2d)
        }
        "nn.conv3d" => {
            let (data, kernel) = two_layouts(c)?;
            let kernel = default_kernel(&data, &kernel, &[("NCDHW", "OIDHW"), ("NDHWC", "DHWIO")])?;
            conv_like(c.op, attrs, &data, &kernel, pad_3d)
        }
        "nn.conv3d_transpose" => {
            let (data, kernel) = two_layouts(c)?;
            let kernel = default_kernel(&data, &kernel, &[("NCDHW", "IODHW"), ("NDHWC", "DHWOI")])?;
            conv_like(c.op, attrs, &data, &kernel, pad_3d)
        }
        "nn.deformable_conv2d" => {
            let (data, kernel) = two_layouts(c)?;
            let kernel = default_kernel(&data, &kernel, &[("NCHW", "OIHW"), ("NHWC", "HWIO")])?;
            conv_like(c.op, attrs, &data, &kernel, pad_2d)
        }
        "nn.max_pool2d" | "nn.avg_pool2d" => {
            let layout = first_layout(c)?;
            let fields = [
                ("layout", AttrValue::Str(layout.clone())),
                ("out_layout", AttrValue::Str(layout)),
                ("padding", pad_2d(field(attrs, "padding")?)?),
            ];
            Ok((c.op.to_string(), attrs_replacing(attrs, &fields)))
        }
        "nn.global_max_pool2d" | "nn.global_avg_pool2d" => {
            let layout = first_layout(c)?;
            let fields = [
                ("layout", AttrValue::Str(layout.clone())),
                ("out_layout", AttrValue::Str(layout)),
            ];
            Ok((c.op.to_string(), attrs_replacing(attrs, &fields)))
        }
        "image.resize1d" | "image.resize2d" => {
            if c.desired.len() != 1 {
                return Err("Only one desired layout is expected".into());
            }
            let layout = c.desired[0].clone();
            if layout == "default" {
                return Err("Layout cannot be default".into());
            }
            let mut fields = vec![("layout", AttrValue::Str(layout))];
            // The Python constructor fills a missing `roi` with zeros.
            if field(attrs, "roi")?.is_null() {
                let count = if c.op == "image.resize1d" { 2 } else { 4 };
                let zero = AttrValue::FloatImm {
                    value: 0.0,
                    dtype: DataType::FLOAT32,
                };
                fields.push(("roi", AttrValue::Array(vec![zero; count])));
            }
            Ok((c.op.to_string(), attrs_replacing(attrs, &fields)))
        }
        "vision.roi_align" | "vision.roi_pool" => {
            let (data, rois) = two_layouts(c)?;
            if rois != "default" {
                return Err("Rois layout must be default".into());
            }
            if data != "NCHW" && data != "NHWC" {
                return Err(format!("Layout {data} is not yet supported."));
            }
            let fields = [("layout", AttrValue::Str(data))];
            Ok((c.op.to_string(), attrs_replacing(attrs, &fields)))
        }
        other => Err(format!(
            "ConvertLayout: converting `{other}` to a desired layout is not supported"
        )),
    }
}

/// The data and kernel layouts asked for (exactly two, the data one not
/// `default`).
fn two_layouts(c: &ConvertArgs) -> Result<(String, String), String> {
    match c.desired {
        [data, kernel] => {
            if data == "default" {
                return Err("Data layout cannot be default".into());
            }
            Ok((data.clone(), kernel.clone()))
        }
        _ => Err(format!(
            "A desired layout is expected for both of {}'s inputs",
            c.op
        )),
    }
}

/// The one layout a pooling is asked for.
fn first_layout(c: &ConvertArgs) -> Result<String, String> {
    c.desired
        .first()
        .cloned()
        .ok_or_else(|| format!("{}: no desired layout", c.op))
}

/// The kernel layout: the one asked for, or the default that goes with the
/// data layout.
fn default_kernel(data: &str, kernel: &str, defaults: &[(&str, &str)]) -> Result<String, String> {
    if kernel != "default" {
        return Ok(kernel.to_string());
    }
    defaults
        .iter()
        .find(|(d, _)| *d == data)
        .map(|(_, k)| k.to_string())
        .ok_or_else(|| format!("Layout {data} is not yet supported"))
}

/// A convolution with new data and kernel layouts, `padding` normalised by
/// the Python constructor.
fn conv_like(
    op: &str,
    attrs: &Attrs,
    data: &str,
    kernel: &str,
    pad: fn(&AttrValue) -> Result<AttrValue, String>,
) -> Result<(String, Attrs), String> {
    let fields = [
        ("data_layout", AttrValue::Str(data.to_string())),
        ("kernel_layout", AttrValue::Str(kernel.to_string())),
        ("padding", pad(field(attrs, "padding")?)?),
    ];
    Ok((op.to_string(), attrs_replacing(attrs, &fields)))
}

/// `convert_conv2d`: the default kernel layout goes with the data layout
/// (`HWOI` for a depthwise convolution in NHWC); a blocked `NCHWnc` data
/// layout makes the call an `nn.contrib_conv2d_NCHWc`, unless its input is
/// a variable whose channels do not divide into blocks.
fn conv2d(c: &ConvertArgs, attrs: &Attrs) -> Result<(String, Attrs), String> {
    let (data, kernel) = two_layouts(c)?;
    let tile = blocked_nchw(&data);
    if kernel != "default" && tile.is_none() {
        return conv_like(c.op, attrs, &data, &kernel, pad_2d);
    }
    let kernel = match data.as_str() {
        "NCHW" => "OIHW".to_string(),
        "NHWC" if is_depthwise(c, attrs)? => "HWOI".to_string(),
        "NHWC" => "HWIO".to_string(),
        "HWNC" => "HWOI".to_string(),
        _ => {
            let Some(tile) = tile else {
                return Err(format!("Layout {data} is not yet supported."));
            };
            if kernel == "default" {
                return Err("Kernel layout cannot be default.".into());
            }
            let tile: i64 = tile
                .parse()
                .map_err(|_| format!("invalid block size in layout {data}"))?;
            if let Some(channels) = var_channels(c)? {
                if tile == 0 {
                    return Err("integer division or modulo by zero".into());
                }
                if channels % tile != 0 {
                    // The call is rebuilt with its own attributes.
                    let padding = pad_2d(field(attrs, "padding")?)?;
                    return Ok((
                        c.op.to_string(),
                        attrs_replacing(attrs, &[("padding", padding)]),
                    ));
                }
            }
            let (_, attrs) = conv_like(c.op, attrs, &data, &kernel, pad_2d)?;
            return Ok(("nn.contrib_conv2d_NCHWc".to_string(), attrs));
        }
    };
    conv_like(c.op, attrs, &data, &kernel, pad_2d)
}

/// The digits of a layout starting `NCHW<digits>c` (`re.match(r"NCHW(\d*)c")`).
fn blocked_nchw(layout: &str) -> Option<&str> {
    let rest = layout.strip_prefix("NCHW")?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    rest[digits..].starts_with('c').then(|| &rest[..digits])
}

/// The channel count of the data when the data argument is a variable
/// (`data.checked_type.shape[1]`); `None` for any other argument. A
/// variable argument is the call's own, so its type is the original one.
fn var_channels(c: &ConvertArgs) -> Result<Option<i64>, String> {
    if c.args.first().and_then(Expr::as_var).is_none() {
        return Ok(None);
    }
    let channels = c
        .types
        .first()
        .and_then(Type::as_tensor)
        .and_then(|t| t.shape.get(1))
        .and_then(Dim::as_int)
        .ok_or_else(|| "conv2d: the data's channel count is not static".to_string())?;
    Ok(Some(channels))
}

/// `is_depthwise_conv2d` on the original argument types and layouts.
fn is_depthwise(c: &ConvertArgs, attrs: &Attrs) -> Result<bool, String> {
    let shape_of = |index: usize| -> Result<Vec<Option<i64>>, String> {
        c.types
            .get(index)
            .and_then(Type::as_tensor)
            .map(|t| t.shape.iter().map(Dim::as_int).collect())
            .ok_or_else(|| format!("{}: input {index} is not a tensor", c.op))
    };
    let data_shape = shape_of(0)?;
    let kernel_shape = shape_of(1)?;
    let data_layout = str_field(attrs, "data_layout")?;
    let kernel_layout = str_field(attrs, "kernel_layout")?;
    let groups = super::infer::int_field(attrs, "groups")?;
    let product = |a: Option<i64>, b: Option<i64>| a.zip(b).map(|(a, b)| a * b);
    let ic = if data_shape.len() == 4 {
        let index = data_layout
            .find('C')
            .ok_or_else(|| format!("Invalid conv2d data layout {data_layout}"))?;
        data_shape.get(index).copied().flatten()
    } else if blocked_nchw(&data_layout).is_some() {
        product(
            data_shape.get(1).copied().flatten(),
            data_shape.get(4).copied().flatten(),
        )
    } else {
        return Err(format!("Unknown conv2d data layout {data_layout}"));
    };
    let k = |i: usize| kernel_shape.get(i).copied().flatten();
    let oc = if kernel_shape.len() == 4 {
        let index = kernel_layout
            .find('O')
            .ok_or_else(|| format!("Invalid conv2d kernel layout {kernel_layout}"))?;
        k(index)
    } else if matches_blocked_kernel(&kernel_layout, true) {
        product(k(0), k(5))
    } else if matches_blocked_kernel(&kernel_layout, false) {
        product(k(0), k(4))
    } else {
        return Err(format!("Unknown conv2d kernel layout {kernel_layout}"));
    };
    Ok(ic.is_some() && ic == oc && oc == Some(groups))
}

/// Whether a kernel layout starts `OIHW<d>i<d>o` (`with_input_block`) or
/// `OIHW<d>o`.
fn matches_blocked_kernel(layout: &str, with_input_block: bool) -> bool {
    let skip_digits = |s: &str| {
        s.trim_start_matches(|c: char| c.is_ascii_digit())
            .to_string()
    };
    let Some(rest) = layout.strip_prefix("OIHW") else {
        return false;
    };
    let mut rest = skip_digits(rest);
    if with_input_block {
        let Some(after) = rest.strip_prefix('i') else {
            return false;
        };
        rest = skip_digits(after);
    }
    rest.starts_with('o')
}

/// One integer of a padding array, with its dtype.
fn pad_elem(value: &AttrValue) -> Result<(i64, DataType), String> {
    match value {
        AttrValue::IntImm { value, dtype, .. } => Ok((*value, *dtype)),
        AttrValue::Int(value) => Ok((*value, DataType::INT32)),
        other => Err(format!("padding holds a non-integer {other:?}")),
    }
}

/// `get_pad_tuple2d`: two values (each side of H and W) become four
/// (top, left, bottom, right); four stay; anything else is an error.
pub(crate) fn pad_2d(padding: &AttrValue) -> Result<AttrValue, String> {
    pad_nd(padding, 2)
}

/// `get_pad_tuple3d`: three values become six; six stay.
fn pad_3d(padding: &AttrValue) -> Result<AttrValue, String> {
    pad_nd(padding, 3)
}

fn pad_nd(padding: &AttrValue, dims: usize) -> Result<AttrValue, String> {
    let items = padding
        .as_array()
        .ok_or_else(|| format!("Unknown padding option {padding:?}"))?;
    if items.len() == 2 * dims {
        return Ok(padding.clone());
    }
    if items.len() != dims {
        return Err(format!(
            "Size of padding can only be {dims} or {}",
            2 * dims
        ));
    }
    let mut before = Vec::with_capacity(dims);
    let mut after = Vec::with_capacity(dims);
    for item in items {
        let (value, dtype) = pad_elem(item)?;
        let total = value * 2;
        let first = (total + 1).div_euclid(2);
        before.push(AttrValue::int_imm(first, dtype));
        after.push(AttrValue::int_imm(total - first, dtype));
    }
    before.extend(after);
    Ok(AttrValue::Array(before))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(values: &[i64]) -> AttrValue {
        AttrValue::Array(
            values
                .iter()
                .map(|&v| AttrValue::int_imm(v, DataType::INT32))
                .collect(),
        )
    }

    #[test]
    fn two_way_padding_becomes_four_way() {
        let padded = pad_2d(&ints(&[1, 2])).unwrap();
        assert_eq!(padded.as_int_array().unwrap(), vec![1, 2, 1, 2]);
        let same = pad_2d(&ints(&[0, 1, 2, 3])).unwrap();
        assert_eq!(same.as_int_array().unwrap(), vec![0, 1, 2, 3]);
        assert!(pad_2d(&ints(&[1])).is_err());
        let padded = pad_3d(&ints(&[1, 0, 2])).unwrap();
        assert_eq!(padded.as_int_array().unwrap(), vec![1, 0, 2, 1, 0, 2]);
    }

    #[test]
    fn blocked_layouts_are_recognised() {
        assert_eq!(blocked_nchw("NCHW16c"), Some("16"));
        assert_eq!(blocked_nchw("NCHWc"), Some(""));
        assert_eq!(blocked_nchw("NCHW"), None);
        assert_eq!(blocked_nchw("NHWC"), None);
        assert!(matches_blocked_kernel("OIHW16i16o", true));
        assert!(matches_blocked_kernel("OIHW16o", false));
        assert!(!matches_blocked_kernel("OIHW16i16o", false));
        assert!(!matches_blocked_kernel("HWIO", true));
    }
}
