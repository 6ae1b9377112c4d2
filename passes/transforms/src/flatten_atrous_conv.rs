//! `FlattenAtrousConv`: turns the `nn.space_to_batch_nd` → convolution →
//! `nn.batch_to_space_nd` sandwich that frameworks emit for an atrous
//! (dilated) convolution back into one dilated convolution with "same"
//! padding, as TVM v0.13's `flatten_atrous_conv.cc` does.
//!
//! TVM finds the sandwich with a small state machine over the calls in the
//! order its mutator rewrites them (post-order, arguments left to right):
//! a `space_to_batch_nd`, then a convolution (`nn.conv2d` or `qnn.conv2d`),
//! then a `batch_to_space_nd`, each the very next call rewritten; any other
//! call resets the count. The same walk is kept here, so exactly the
//! sandwiches TVM rewrites are rewritten (for instance, a weight computed by
//! a call between the two halves breaks the chain, as it does in TVM).
//!
//! The new convolution takes the data from before `space_to_batch_nd`, the
//! block shape as its dilation, unit strides, and the padding that keeps the
//! spatial size: `max(dilated_kernel - 1, 0)` split with the smaller half
//! first. TVM gives up (keeping the sandwich) when the layout is not `NHWC`
//! or a size it needs is missing or not a known integer; so does this pass.

use relay_ir::attrs::{AttrValue, Attrs};
use relay_ir::build::attrs_replacing;
use relay_ir::dtype::DataType;
use relay_ir::rewrite::rewrite_function;
use relay_ir::{Dim, Expr, Function};
use relay_pass_manager::registry::PassSpec;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("FlattenAtrousConv", 0)
        .required(&["InferType"])
        .doc("Fold space_to_batch_nd / conv2d / batch_to_space_nd into one dilated conv2d")
        .transform(|f, _m, _ctx| Ok(flatten_atrous_conv(&f)))
}

/// The operators of the sandwich, in the order the walk meets them.
const STAGES: [&[&str]; 3] = [
    &["nn.space_to_batch_nd"],
    &["nn.conv2d", "qnn.conv2d"],
    &["nn.batch_to_space_nd"],
];

/// Rewrites every atrous-convolution sandwich of `function`.
pub fn flatten_atrous_conv(function: &Function) -> Function {
    let mut stage = 0;
    rewrite_function(function, |pre, post| {
        let Some(name) = post
            .as_call()
            .and_then(|c| c.callee.as_op())
            .map(|op| op.name.as_str())
        else {
            return post;
        };
        if !STAGES[stage].contains(&name) {
            stage = 0;
            return post;
        }
        stage += 1;
        if stage < STAGES.len() {
            return post;
        }
        stage = 0;
        flatten(pre, &post).unwrap_or(post)
    })
}

/// The dilated convolution that replaces the sandwich ending in `post`
/// (`pre` is the same call before rewriting, for the data's type), or
/// `None` where TVM gives up.
fn flatten(pre: &Expr, post: &Expr) -> Option<Expr> {
    let batch_to_space = post.as_call()?;
    let conv = batch_to_space.args.first()?.as_call()?;
    let space_to_batch = conv.args.first()?.as_call()?;
    let block_shape = batch_to_space
        .attrs
        .as_ref()?
        .get("block_shape")?
        .as_array()?;
    let conv_attrs = conv.attrs.as_ref()?;
    let kernel_size = conv_attrs.get("kernel_size")?.as_array()?;
    let data = space_to_batch.args.first()?;
    if conv_attrs.get("data_layout")?.as_str()? != "NHWC" {
        return None;
    }
    // The data's type: the same node before rewriting has it.
    let data_type = pre
        .as_call()?
        .args
        .first()?
        .as_call()?
        .args
        .first()?
        .as_call()?
        .args
        .first()?
        .checked_type()?
        .as_tensor()?
        .clone();
    let dilation = [block_shape.first()?, block_shape.get(1)?];
    let kernel = [kernel_size.first()?, kernel_size.get(1)?];
    let input = [data_type.shape.get(1)?, data_type.shape.get(2)?];
    let mut before = Vec::with_capacity(2);
    let mut after = Vec::with_capacity(2);
    for axis in 0..2 {
        let (pad_before, pad_after) = same_padding(input[axis], kernel[axis], dilation[axis])?;
        before.push(pad_before);
        after.push(pad_after);
    }
    before.extend(after);
    let attrs = new_conv_attrs(conv_attrs, AttrValue::Array(before), &dilation);
    let mut args = conv.args.clone();
    args[0] = data.clone();
    Some(Expr::call(conv.callee.clone(), args, Some(attrs), None))
}

/// The convolution's attributes with unit strides, the new padding and the
/// block shape as dilation (TVM makes the call again from these fields).
fn new_conv_attrs(conv: &Attrs, padding: AttrValue, dilation: &[&AttrValue; 2]) -> Attrs {
    // Two new `IntImm` objects, as TVM's `{1, 1}` makes.
    let unit = || AttrValue::int_imm(1, DataType::INT32);
    attrs_replacing(
        conv,
        &[
            ("strides", AttrValue::Array(vec![unit(), unit()])),
            ("padding", padding),
            (
                "dilation",
                AttrValue::Array(dilation.iter().map(|d| (*d).clone()).collect()),
            ),
        ],
    )
}

/// The "same" padding of one spatial axis with unit stride, as TVM computes
/// it: `pad = max(input + dilated_kernel - 1 - input, 0)`, the smaller half
/// before. The arithmetic is TVM's integer arithmetic, whose result is
/// `int64` when any operand is.
fn same_padding(
    input: &Dim,
    kernel: &AttrValue,
    dilation: &AttrValue,
) -> Option<(AttrValue, AttrValue)> {
    let Dim::Int {
        value: input,
        dtype: input_dtype,
        ..
    } = input
    else {
        return None;
    };
    let (kernel, kernel_dtype) = int_imm(kernel)?;
    let (dilation, dilation_dtype) = int_imm(dilation)?;
    let dtype = if [*input_dtype, kernel_dtype, dilation_dtype].contains(&DataType::INT64) {
        DataType::INT64
    } else {
        DataType::INT32
    };
    let dilated_kernel = (kernel - 1) * dilation + 1;
    // With stride 1 the output size is the input size.
    let pad = ((input - 1) + dilated_kernel - input).max(0);
    let pad_before = pad / 2;
    let imm = |value| AttrValue::int_imm(value, dtype);
    Some((imm(pad_before), imm(pad - pad_before)))
}

fn int_imm(value: &AttrValue) -> Option<(i64, DataType)> {
    match value {
        AttrValue::IntImm { value, dtype, .. } => Some((*value, *dtype)),
        AttrValue::Int(value) => Some((*value, DataType::INT32)),
        _ => None,
    }
}
