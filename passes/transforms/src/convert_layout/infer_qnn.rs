//! Layout inference of the quantized operators. Each reuses the rule of its
//! float counterpart for the data inputs and gives the scales and zero
//! points a per-channel layout (`C`, or `N` for dense), as TVM's `Qnn*`
//! functions do; `qnn.avg_pool2d` leaves them undefined, so it never
//! follows a new layout.

use super::infer::{
    attrs_of, axis_letter, broadcast_layouts, channel_layout, int_field, nth, replaced, shape,
    InferArgs, InferOutput, Inferred,
};
use super::infer_nn;
use super::infer_tensor::concatenate_layouts;
use super::layout::{factor_of, named, Layout};
use relay_ir::{AttrValue, Type};

/// The layouts of a data/kernel operator followed by `count` copies of
/// `fill` for its quantization parameters.
fn with_params(mut data: InferOutput, keep: usize, fill: &Layout, count: usize) -> InferOutput {
    data.inputs.truncate(keep);
    data.inputs.extend(std::iter::repeat_n(fill.clone(), count));
    data
}

/// `QnnConvInferCorrectLayout` and `QnnConvTransposeInferCorrectLayout`.
pub(super) fn conv(args: &InferArgs) -> Inferred {
    let data = infer_nn::conv(args)?;
    Ok(with_params(data, 2, &channel_layout()?, 4))
}

/// `QnnDenseInferCorrectLayout`: the parameters in layout `N`.
pub(super) fn dense(args: &InferArgs) -> Inferred {
    let data = infer_nn::dense(args)?;
    Ok(with_params(data, 2, &named("N")?, 4))
}

/// `QnnDensePackInferCorrectLayout`.
pub(super) fn dense_pack(args: &InferArgs) -> Inferred {
    let data = infer_nn::dense_pack(args)?;
    Ok(with_params(data, 2, &named("N")?, 4))
}

/// `QnnBinaryBroadcastLayout`: the broadcast rule on the two operands.
pub(super) fn binary_broadcast(args: &InferArgs) -> Inferred {
    let (inputs, outputs) = broadcast_layouts(args.new_in, args.old_in, args.types)?;
    let data = InferOutput::new(inputs, outputs, args.attrs.cloned());
    Ok(with_params(data, 2, &channel_layout()?, 6))
}

/// `QnnAvgPoolInferCorrectLayout`: the pooling rule, parameters undefined.
pub(super) fn avg_pool2d(args: &InferArgs) -> Inferred {
    let data = infer_nn::pool(args)?;
    Ok(with_params(data, 1, &Layout::undef(), 4))
}

/// `QnnConcatenateLayout`: the concatenate rule on the data tuple, then
/// `C` for two parameters per input and the two output parameters.
pub(super) fn concatenate(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    if args.types.len() != 5 {
        return Err("qnn.concatenate layout: expected five inputs".into());
    }
    let tuple: &Type = &args.types[0];
    let count = tuple
        .as_tuple()
        .map(<[Type]>::len)
        .ok_or_else(|| "qnn.concatenate layout: the data is not a tuple".to_string())?;
    let prefix = |layouts: &[Layout]| -> Result<Vec<Layout>, String> {
        layouts
            .get(..count)
            .map(<[Layout]>::to_vec)
            .ok_or_else(|| "qnn.concatenate layout: too few input layouts".to_string())
    };
    let new_in = args.new_in.map(prefix).transpose()?;
    let old_in = prefix(args.old_in)?;
    let data = concatenate_layouts(attrs, new_in.as_deref(), &old_in, tuple)?;
    let keep = data.inputs.len();
    Ok(with_params(data, keep, &channel_layout()?, 2 * count + 2))
}

/// `RequantizeInferCorrectLayout`: the data follows a new layout (a blocked
/// axis only when the input scale and zero point are scalars) and `axis`
/// moves with it.
pub(super) fn requantize(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let c = channel_layout()?;
    if let Some(new_in) = args.new_in {
        if new_in.len() != 5 || args.old_in.len() != 5 {
            return Err("qnn.requantize layout: expected five input layouts".into());
        }
        let ndim = shape(args, 0)?.len() as i64;
        let axis = match int_field(attrs, "axis")? {
            -1 => ndim - 1,
            axis => axis,
        };
        let old_dim = axis_letter(nth(args.old_in, 0)?, axis)?;
        let scalar = |index: usize| -> Result<bool, String> { Ok(shape(args, index)?.is_empty()) };
        let new_layout = &new_in[0];
        let mut new_axis = None;
        let mut name = String::new();
        let mut index = 0i64;
        for layout_axis in &new_layout.axes {
            if layout_axis.name == old_dim {
                new_axis = Some(index);
            }
            if layout_axis.is_primal() {
                name.push(layout_axis.name);
                index += 1;
            } else {
                if args.types.len() < 3 {
                    return Err("qnn.requantize layout: expected three input types".into());
                }
                if scalar(1)? && scalar(2)? {
                    name.push_str(&format!(
                        "{}{}",
                        factor_of(new_layout, layout_axis.name),
                        layout_axis.name
                    ));
                    index += 1;
                }
            }
        }
        let layout = named(&name)?;
        let new_axis = new_axis.ok_or_else(|| {
            "qnn.requantize layout: the axis is not in the new layout".to_string()
        })?;
        return Ok(InferOutput::new(
            vec![layout.clone(), c.clone(), c.clone(), c.clone(), c],
            vec![layout],
            Some(replaced(attrs, &[("axis", AttrValue::Int(new_axis))])),
        ));
    }
    if args.old_in.len() != 5 {
        return Err("qnn.requantize layout: expected five input layouts".into());
    }
    let old = args.old_in[0].clone();
    let inputs = if old.is_defined() {
        vec![old.clone(), c.clone(), c.clone(), c.clone(), c]
    } else {
        vec![Layout::undef(); 5]
    };
    Ok(InferOutput::new(inputs, vec![old], Some(attrs.clone())))
}
