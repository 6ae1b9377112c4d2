//! The `cpu` (x86) `FTVMAlterOpLayout` rules of TVM v0.13 for a plain
//! `llvm` target: `_alter_dense_layout` (`topi/x86/dense_alter_op.py`) and
//! `_alter_conv2d_layout` (`topi/x86/conv2d_alter_op.py`).
//!
//! The rules ask the x86 strategy which implementation it would pick
//! (`relay/op/strategy/x86.py`) and, for the AutoTVM templates that pack
//! their operands, read the block sizes from the template's fallback
//! configuration (nothing is tuned here). Those configurations depend only
//! on the SIMD width (`get_simd_32bit_lanes`, 4 lanes without `-mcpu`) and
//! on channel counts, so they are computed directly.
//!
//! Cases the Python would handle but this port does not (dynamic channel
//! counts, already-blocked layouts, `-mcpu` targets) are declined: the
//! call stays as it is and a warning says why.

use super::super::convert_layout::convert_pad_2d;
use super::super::convert_layout::rewrite::{CallInfo, NewCall};
use relay_ir::build::attrs_with;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Attrs, Dim, Type};

/// Why a rule did not rewrite a call it would rewrite in TVM.
pub(super) type Declined = String;

/// The outcome of a rule: a new call, `None` (TVM's rule returns None), or
/// declined.
pub(super) type Altered = Result<Option<NewCall>, Declined>;

/// An x86 `FTVMAlterOpLayout` rule.
pub(super) type Rule = fn(&CallInfo, i64) -> Altered;

/// The x86 rule for the call's operator.
pub(super) fn alter(call: &CallInfo, lanes: i64) -> Altered {
    match rule(call.op) {
        Some(rule) => rule(call, lanes),
        None => Ok(None),
    }
}

/// The x86 rule registered for operator `op`, if any.
pub(super) fn rule(op: &str) -> Option<Rule> {
    match op {
        "nn.dense" => Some(dense),
        "nn.conv2d" => Some(conv2d),
        _ => None,
    }
}

/// The static shape of input `index` (`None` for a dynamic dimension).
fn shape(call: &CallInfo, index: usize) -> Result<(Vec<Option<i64>>, DataType), Declined> {
    call.types
        .get(index)
        .and_then(Type::as_tensor)
        .map(|t| (t.shape.iter().map(Dim::as_int).collect(), t.dtype))
        .ok_or_else(|| format!("{}: input {index} is not a tensor", call.op))
}

/// The dtype of the call's result (`out_type.dtype`).
fn out_dtype(call: &CallInfo) -> Result<DataType, Declined> {
    call.out_type
        .and_then(Type::as_tensor)
        .map(|t| t.dtype)
        .ok_or_else(|| format!("{}: the call's type is not a tensor", call.op))
}

/// `_alter_dense_layout`: the strategy picks `dense_pack.x86` (the highest
/// plevel) unless the data has one static row and a dynamic shape is
/// involved (`dense_dynamic.x86`, which has no alteration). The weight is
/// packed in blocks of `tile_x` from `_default_dense_pack_config`.
fn dense(call: &CallInfo, lanes: i64) -> Altered {
    let (data, _) = shape(call, 0)?;
    let (weight, _) = shape(call, 1)?;
    if data.len() != 2 || weight.len() != 2 {
        // `M, K = get_const_tuple(data.shape)` fails in TVM.
        return Err("nn.dense with non-2-D operands".into());
    }
    let dynamic = data.iter().chain(&weight).any(Option::is_none);
    if data[0] == Some(1) && dynamic {
        return Ok(None);
    }
    // A dynamic N counts as 16 in the fallback configuration.
    let n = weight[0].unwrap_or(16);
    let bn = (1..=lanes * 2).rev().find(|bn| n % bn == 0).unwrap_or(1);
    let attrs = attrs_with(
        "relay.attrs.DensePackAttrs",
        &[
            ("units", AttrValue::Null),
            ("out_dtype", AttrValue::DataType(out_dtype(call)?)),
            ("weight_layout", AttrValue::Str(format!("NC{bn}n"))),
        ],
    );
    Ok(Some(NewCall {
        op: "nn.contrib_dense_pack".into(),
        attrs: Some(attrs),
        args: call.args.to_vec(),
    }))
}

fn str_attr(attrs: &Attrs, name: &str) -> String {
    match attrs.get(name) {
        Some(AttrValue::Str(s)) => s.clone(),
        _ => String::new(),
    }
}

fn int_attr(attrs: &Attrs, name: &str) -> Option<i64> {
    attrs.get(name).and_then(AttrValue::as_int)
}

/// The largest block size up to `max` dividing `n` (the fallback
/// schedules' `for bn in range(max, 0, -1)`).
fn block(n: i64, max: i64) -> i64 {
    (1..=max).rev().find(|bn| n % bn == 0).unwrap_or(1)
}

/// `_alter_conv2d_layout` on the templates a plain llvm target selects:
/// `conv2d_NCHWc.x86` for an NCHW/OIHW convolution without groups (also
/// int8, since plain llvm has no int8 instructions) and
/// `depthwise_conv2d_NCHWc.x86` for an NCHW depthwise one with channel
/// multiplier 1 and no dilation. Everything else returns None.
fn conv2d(call: &CallInfo, lanes: i64) -> Altered {
    let attrs = call
        .attrs
        .ok_or_else(|| "nn.conv2d without attributes".to_string())?;
    let data_layout = str_attr(attrs, "data_layout");
    let kernel_layout = str_attr(attrs, "kernel_layout");
    let groups = int_attr(attrs, "groups").unwrap_or(1);
    let dilation = attrs
        .get("dilation")
        .and_then(AttrValue::as_int_array)
        .unwrap_or_default();
    let (data, _) = shape(call, 0)?;
    let (kernel, _) = shape(call, 1)?;
    let blocked = data_layout.starts_with("NCHW") && data_layout.len() > 4;
    if blocked {
        return Err(format!(
            "nn.conv2d in the blocked layout {data_layout} is not supported"
        ));
    }
    if data_layout != "NCHW" {
        // NHWC, HWCN and grouped convolutions pick no packing template;
        // other layouts fail in TVM's strategy.
        return match data_layout.as_str() {
            "NHWC" | "HWCN" => Ok(None),
            _ if groups != 1 => Ok(None),
            other => Err(format!("Unsupported conv2d layout {other} for x86")),
        };
    }
    if kernel_layout != "OIHW" {
        return Err(format!(
            "nn.conv2d NCHW with kernel layout {kernel_layout} (TVM asserts OIHW)"
        ));
    }
    let dim = |s: &[Option<i64>], i: usize| s.get(i).copied().flatten();
    let (Some(in_channel), Some(out_channel)) = (dim(&data, 1), dim(&kernel, 0)) else {
        return Err("nn.conv2d with dynamic channel counts".into());
    };
    let depthwise = in_channel == out_channel && out_channel == groups;
    let (op, kernel_block) = if groups == 1 {
        ("nn.contrib_conv2d_NCHWc", None)
    } else if depthwise {
        let multiplier = dim(&kernel, 1);
        if multiplier != Some(1) || dilation.iter().any(|&d| d != 1) {
            return Ok(None);
        }
        ("nn.contrib_depthwise_conv2d_NCHWc", Some(1))
    } else {
        // `group_conv2d_nchw.x86` has no alteration.
        return Ok(None);
    };
    let oc_bn = block(out_channel, lanes);
    let ic_bn = block(in_channel, oc_bn);
    let kernel_layout = match kernel_block {
        Some(i) => format!("OIHW{i}i{oc_bn}o"),
        None => format!("OIHW{ic_bn}i{oc_bn}o"),
    };
    // `relay.nn.contrib_conv2d_nchwc(*inputs, **new_attrs)` builds the
    // attributes afresh from the Python parameters, normalising padding.
    let get = |name: &str| attrs.get(name).cloned().unwrap_or(AttrValue::Null);
    let padding = convert_pad_2d(&get("padding"))?;
    // The packed relation needs the kernel size; a conv2d built without one
    // (`relay.nn.conv2d(x, w)`) has it only in the weight's shape.
    let kernel_size = match get("kernel_size") {
        AttrValue::Null => match (dim(&kernel, 2), dim(&kernel, 3)) {
            (Some(kh), Some(kw)) => relay_ir::build::int_array(&[kh, kw]),
            _ => return Err("nn.conv2d with a dynamic kernel size".into()),
        },
        given => given,
    };
    let new_attrs = attrs_with(
        "relay.attrs.Conv2DAttrs",
        &[
            ("strides", get("strides")),
            ("padding", padding),
            ("dilation", get("dilation")),
            ("groups", get("groups")),
            ("channels", AttrValue::int_imm(out_channel, DataType::INT32)),
            ("kernel_size", kernel_size),
            ("data_layout", AttrValue::Str(format!("NCHW{ic_bn}c"))),
            ("kernel_layout", AttrValue::Str(kernel_layout)),
            ("out_layout", AttrValue::Str(format!("NCHW{oc_bn}c"))),
            ("out_dtype", get("out_dtype")),
        ],
    );
    Ok(Some(NewCall {
        op: op.into(),
        attrs: Some(new_attrs),
        args: call.args.to_vec(),
    }))
}

#[cfg(test)]
mod tests {
    use super::block;

    #[test]
    fn blocks_are_the_largest_divisors() {
        assert_eq!(block(128, 8), 8);
        assert_eq!(block(10, 8), 5);
        assert_eq!(block(7, 4), 1);
        assert_eq!(block(3, 4), 3);
    }
}
