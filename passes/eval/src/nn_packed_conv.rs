//! Convolutions on channel-blocked layouts: `nn.contrib_conv2d_NCHWc` and
//! `nn.contrib_depthwise_conv2d_NCHWc` (TOPI's `nn/conv2d.py`
//! `conv2d_NCHWc` and `nn/depthwise_conv2d.py` `depthwise_conv2d_NCHWc`).
//! TOPI's compute is the plain convolution read through the blocked
//! indices, summing over (input channel, kernel row, kernel column) in that
//! order, as `nn.conv2d` does; so the data and kernel are unpacked to
//! `NCHW` / `OIHW` (`layout_transform`), convolved by the `nn.conv2d`
//! kernel (with the call's groups, strides, padding, dilation and
//! `out_dtype`), and the result packed to `out_layout`. The numerics are
//! those of the `nn.conv2d` kernel (integers exact).

use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::{AttrValue, Attrs};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.contrib_conv2d_NCHWc" | "nn.contrib_depthwise_conv2d_NCHWc" => conv2d_nchwc,
        _ => return None,
    })
}

fn relayout(x: Value, src: &str, dst: &str, call: &CallInfo) -> EvalResult {
    if src == dst {
        return Ok(x);
    }
    let attrs = Attrs::new(
        "relay.attrs.LayoutTransformAttrs",
        vec![
            ("src_layout".to_string(), AttrValue::Str(src.to_string())),
            ("dst_layout".to_string(), AttrValue::Str(dst.to_string())),
        ],
    );
    let transform = super::tensor_transform::kernel("layout_transform").expect("a kernel");
    transform(
        &[x],
        &CallInfo {
            op: "layout_transform",
            attrs: Some(&attrs),
            ret_type: None,
            ..*call
        },
    )
}

fn conv2d_nchwc(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data_layout = call.str("data_layout").unwrap_or("NCHW");
    let kernel_layout = call.str("kernel_layout").unwrap_or("OIHW");
    let out_layout = match call.str("out_layout") {
        Some(l) if !l.is_empty() => l,
        _ => data_layout,
    };
    for (layout, primal) in [
        (data_layout, "NCHW"),
        (kernel_layout, "OIHW"),
        (out_layout, "NCHW"),
    ] {
        let axes: String = layout.chars().filter(|c| c.is_ascii_uppercase()).collect();
        if axes != primal {
            return unsupported(format!(
                "{}: layout {layout} is not a blocked {primal}",
                call.op
            ));
        }
    }
    let data = relayout(
        Value::tensor(arg_tensor(args, 0, call)?.clone()),
        data_layout,
        "NCHW",
        call,
    )?;
    let weight = relayout(
        Value::tensor(arg_tensor(args, 1, call)?.clone()),
        kernel_layout,
        "OIHW",
        call,
    )?;
    let mut fields: Vec<(String, AttrValue)> = call
        .attrs
        .map(|a| a.fields().to_vec())
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| !matches!(k.as_str(), "data_layout" | "kernel_layout" | "out_layout"))
        .collect();
    fields.push(("data_layout".into(), AttrValue::Str("NCHW".into())));
    fields.push(("kernel_layout".into(), AttrValue::Str("OIHW".into())));
    let attrs = Attrs::new("relay.attrs.Conv2DAttrs", fields);
    let conv = super::nn_conv::kernel("nn.conv2d").expect("the conv2d kernel");
    let out = conv(
        &[data, weight],
        &CallInfo {
            op: "nn.conv2d",
            attrs: Some(&attrs),
            ret_type: None,
            ..*call
        },
    )?;
    relayout(out, "NCHW", out_layout, call)
}
