//! `CombineParallelConv2D`: combines parallel `nn.conv2d` calls on one
//! input into one convolution with the weights concatenated along their
//! output-channel axis (TVM v0.13's `combine_parallel_conv2d.cc`).
//!
//! Only ungrouped convolutions start a branch. Two convolutions combine when
//! every attribute that shapes the computation agrees (strides, padding,
//! dilation, groups, layouts, out_dtype) and their kernels have the same
//! spatial size (read through the kernel layout). The combined call keeps
//! the first convolution's attrs with `channels` set to the total number of
//! output channels. Following ops are merged by concatenating their other
//! arguments along the channel axis (the `C` of the output layout, counted
//! from the end for lower-rank arguments, which must carry the branch's full
//! channel count there); each branch then takes its channels back with a
//! `strided_slice` on that axis.

use super::{
    arg_type, build_family, concatenate, const_dim, family_pass, int32_imm, min_num_branches, rank,
    same_call_with_args, slice_by_size, tensor_type, Branch, FunctionTransform, ParallelOpCombiner,
};
use relay_ir::attr_equal::{values_equal, AttrEquality};
use relay_ir::build::attrs_replacing;
use relay_ir::{AttrValue, Attrs, Call, Dim, Expr, Function};
use relay_pass_manager::registry::{PassArgs, PassSpec};
use std::sync::Arc;

pub(crate) fn spec() -> PassSpec {
    let declaration = family_pass("CombineParallelConv2D")
        // TVM's PassInfo spells it with a lower-case `d`.
        .info_name("CombineParallelConv2d")
        .doc("Combine parallel nn.conv2d calls on one input into one wider convolution");
    build_family(declaration, make_transform)
}

fn make_transform(args: &PassArgs) -> FunctionTransform {
    let min_branches = min_num_branches(args);
    Arc::new(move |function: &Function| combine_parallel_conv2d(function, min_branches))
}

/// Combines the parallel 2-D convolutions of `function` (see the module
/// doc).
pub fn combine_parallel_conv2d(function: &Function, min_branches: u64) -> Function {
    let mut combiner = Conv2DCombiner { channel_axis: None };
    super::combine_parallel_ops(function, &mut combiner, min_branches)
}

struct Conv2DCombiner {
    /// The channel axis of the combined output, known once the combined
    /// convolution of the current group is built.
    channel_axis: Option<usize>,
}

fn conv_attrs(expr: &Expr) -> Option<&Attrs> {
    expr.as_call()?.attrs.as_ref()
}

fn string_attr<'a>(attrs: &'a Attrs, name: &str) -> Option<&'a str> {
    attrs.get(name)?.as_str()
}

/// The position of the first `letter` in `layout`.
fn axis_of(layout: &str, letter: u8) -> Option<usize> {
    layout.bytes().position(|c| c == letter)
}

/// The kernel shape reordered from `kernel_layout` to `OIHW`. Only layouts
/// made of exactly the four axes O, I, H, W are read; others are not.
fn kernel_shape_oihw(kernel_layout: &str, shape: &[Dim]) -> Option<Vec<Dim>> {
    if kernel_layout.len() != 4 || shape.len() != 4 {
        return None;
    }
    b"OIHW"
        .iter()
        .map(|&axis| {
            let position = axis_of(kernel_layout, axis)?;
            shape.get(position).cloned()
        })
        .collect()
}

/// The number of output channels of a convolution: its weight's size on
/// the kernel layout's `O` axis.
fn output_channels(conv: &Expr) -> Option<i64> {
    let attrs = conv_attrs(conv)?;
    let out_axis = axis_of(string_attr(attrs, "kernel_layout")?, b'O')?;
    const_dim(conv.as_call()?.args.get(1)?, out_axis)
}

impl ParallelOpCombiner for Conv2DCombiner {
    fn op_name(&self) -> &'static str {
        "nn.conv2d"
    }

    fn is_supported_op(&self, call: &Call) -> bool {
        call.attrs
            .as_ref()
            .and_then(|attrs| attrs.get("groups"))
            .and_then(AttrValue::as_int)
            == Some(1)
    }

    fn can_ops_be_combined(&self, a: &Expr, b: &Expr) -> bool {
        let (Some(attrs_a), Some(attrs_b)) = (conv_attrs(a), conv_attrs(b)) else {
            return false;
        };
        let same_fields = [
            "strides",
            "padding",
            "dilation",
            "groups",
            "data_layout",
            "kernel_layout",
            "out_dtype",
            "out_layout",
        ]
        .iter()
        .all(|field| match (attrs_a.get(field), attrs_b.get(field)) {
            (Some(x), Some(y)) => values_equal(x, y, AttrEquality::TVM_PASSES),
            _ => false,
        });
        if !same_fields {
            return false;
        }
        let kernel = |e: &Expr, attrs: &Attrs| {
            let weight = tensor_type(e.as_call()?.args.get(1)?)?;
            kernel_shape_oihw(string_attr(attrs, "kernel_layout")?, &weight.shape)
        };
        match (kernel(a, attrs_a), kernel(b, attrs_b)) {
            (Some(ka), Some(kb)) => ka[2] == kb[2] && ka[3] == kb[3],
            _ => false,
        }
    }

    fn make_combined_op(&mut self, group: &[Branch]) -> Option<Expr> {
        let first = group.first()?.first()?;
        let first_call = first.as_call()?;
        let attrs = first_call.attrs.as_ref()?;
        let data = first_call.args.first()?.clone();

        let out_axis = axis_of(string_attr(attrs, "kernel_layout")?, b'O')?;
        let mut weights = Vec::with_capacity(group.len());
        let mut total_channels = 0i64;
        for branch in group {
            let conv = branch.first()?;
            weights.push(conv.as_call()?.args.get(1)?.clone());
            total_channels = total_channels.checked_add(output_channels(conv)?)?;
        }
        let new_weight = concatenate(weights, out_axis as i64);

        let out_layout = string_attr(attrs, "out_layout")?;
        let layout = if out_layout.is_empty() {
            string_attr(attrs, "data_layout")?
        } else {
            out_layout
        };
        self.channel_axis = Some(axis_of(layout, b'C')?);

        let new_attrs = attrs_replacing(attrs, &[("channels", int32_imm(total_channels))]);
        Some(Expr::call(
            first_call.callee.clone(),
            vec![data, new_weight],
            Some(new_attrs),
            None,
        ))
    }

    fn is_arg_compatible(&self, a: &Expr, b: &Expr, index: usize) -> bool {
        let Some(channel_axis) = self.channel_axis else {
            return false;
        };
        let (Some(ta), Some(tb), Some(out_a), Some(out_b)) = (
            arg_type(a, index),
            arg_type(b, index),
            tensor_type(a),
            tensor_type(b),
        ) else {
            return false;
        };
        if ta.dtype != tb.dtype || ta.shape.len() != tb.shape.len() {
            return false;
        }
        // The argument's channel axis, aligned from the end with the
        // output's; an argument too short to have one cannot be merged.
        let Some(arg_channel_axis) = (channel_axis + ta.shape.len()).checked_sub(out_a.shape.len())
        else {
            return false;
        };
        if arg_channel_axis > channel_axis {
            return false;
        }
        // The channels must be present, not broadcast.
        let carries_channels =
            |arg: &[Dim], out: &[Dim]| match (arg.get(arg_channel_axis), out.get(channel_axis)) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            };
        if !carries_channels(&ta.shape, &out_a.shape) || !carries_channels(&tb.shape, &out_b.shape)
        {
            return false;
        }
        ta.shape
            .iter()
            .zip(&tb.shape)
            .enumerate()
            .all(|(axis, (x, y))| axis == arg_channel_axis || x == y)
    }

    fn make_combined_call_from_following_ops(
        &self,
        data: Expr,
        group: &[Branch],
        depth: usize,
        parent_index: usize,
    ) -> Option<Expr> {
        let channel_axis = self.channel_axis?;
        let reference = group.first()?.get(depth)?;
        let call = reference.as_call()?;
        let out_rank = rank(reference)?;
        let mut new_args = Vec::with_capacity(call.args.len());
        for index in 0..call.args.len() {
            if index == parent_index {
                new_args.push(data.clone());
                continue;
            }
            let arg_rank = rank(call.args.get(index)?)?;
            let arg_channel_axis = (channel_axis + arg_rank).checked_sub(out_rank)?;
            let operands = group
                .iter()
                .map(|branch| Some(super::call_at(branch, depth)?.args.get(index)?.clone()))
                .collect::<Option<Vec<_>>>()?;
            new_args.push(concatenate(operands, arg_channel_axis as i64));
        }
        Some(same_call_with_args(call, new_args))
    }

    fn update_group_output(
        &self,
        data: &Expr,
        group: &[Branch],
        depth: usize,
    ) -> Option<Vec<(Expr, Expr)>> {
        let channel_axis = self.channel_axis?;
        let mut offset = 0i64;
        let mut replacements = Vec::with_capacity(group.len());
        for branch in group {
            let channels = output_channels(branch.first()?)?;
            let mut begin = vec![0; channel_axis];
            let mut end = vec![-1; channel_axis];
            begin.push(offset);
            end.push(channels);
            let strides = vec![1; begin.len()];
            offset = offset.checked_add(channels)?;
            replacements.push((
                branch.get(depth)?.clone(),
                slice_by_size(data.clone(), &begin, &end, &strides),
            ));
        }
        Some(replacements)
    }
}
