//! Per-operator layout inference: TVM's `FInferCorrectLayout` functions.
//!
//! Each operator that registers one in TVM v0.13 is listed in [`infer`];
//! an operator that is not listed has none, and the rewrite falls back to
//! computing it in its original layout (as TVM does). A function gets the
//! call's attributes, the layouts its inputs had before the rewrite
//! (`old_in`), the layouts the rewritten producers deliver (`new_in`, only
//! on the second of the two calls the rewrite makes) and the inputs' types,
//! and answers the layouts it wants its inputs in, the layouts of its
//! outputs and possibly changed attributes (a new `axis`, say).
//!
//! This file holds the dispatch, the shared helpers and the elementwise and
//! broadcast rules; [`super::infer_nn`], [`super::infer_tensor`] and
//! [`super::infer_qnn`] hold the others. Where TVM fails a check the
//! functions return an error, which stops the pass as TVM's exception does.

use super::infer_nn as nn;
use super::infer_qnn as qnn;
use super::infer_tensor as tensor;
use super::layout::{
    axis_at, factor_of, from_axes, index_of, named, ndim_primal, sub_layout, Layout, LayoutError,
};
use relay_ir::build::attrs_replacing;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Attrs, Dim, Type};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

/// What an inference answers (`InferCorrectLayoutOutput`).
#[derive(Debug, Clone)]
pub(super) struct InferOutput {
    pub inputs: Vec<Layout>,
    pub outputs: Vec<Layout>,
    /// The attributes the call should get (the call's own when unchanged).
    pub attrs: Option<Attrs>,
}

impl InferOutput {
    pub fn new(inputs: Vec<Layout>, outputs: Vec<Layout>, attrs: Option<Attrs>) -> InferOutput {
        InferOutput {
            inputs,
            outputs,
            attrs,
        }
    }

    /// Whether every layout is defined: an undefined one means the
    /// operator cannot follow the new layouts.
    pub fn succeeded(&self) -> bool {
        self.inputs
            .iter()
            .chain(&self.outputs)
            .all(Layout::is_defined)
    }
}

/// The inputs of an inference.
pub(super) struct InferArgs<'a> {
    pub attrs: Option<&'a Attrs>,
    /// The layouts delivered by the rewritten producers; `None` on the
    /// first call (TVM's undefined array).
    pub new_in: Option<&'a [Layout]>,
    /// The layouts before the rewrite, one per (flattened) input.
    pub old_in: &'a [Layout],
    /// The types of the call's arguments (a tuple argument is one type).
    pub types: &'a [Type],
}

pub(super) type Inferred = Result<InferOutput, LayoutError>;

/// A layout inference (TVM's `FInferCorrectLayout`).
pub(super) type Rule = fn(&InferArgs) -> Inferred;

/// The inference of operator `op`, `Ok(None)` when it registers none.
pub(super) fn infer(op: &str, args: &InferArgs) -> Result<Option<InferOutput>, LayoutError> {
    rule(op).map(|rule| rule(args)).transpose()
}

/// The layout inference TVM registers for operator `op`, if any.
pub(super) fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        // ElemwiseArbitraryLayout.
        "annotation.stop_fusion"
        | "annotation.cast_hint"
        | "annotation.bitpack_start"
        | "annotation.bitpack_end"
        | "annotation.checkpoint"
        | "annotation.compiler_begin"
        | "annotation.compiler_end"
        | "call_lowered"
        | "vm.shape_of"
        | "vm.invoke_tvm_op"
        | "vm.reshape_tensor"
        | "memory.alloc_storage"
        | "memory.alloc_tensor"
        | "memory.kill"
        | "on_device"
        | "device_copy"
        | "dyn.sparse_to_dense"
        | "sparse_to_dense"
        | "nn.leaky_relu"
        | "nn.relu"
        | "nn.dropout"
        | "cast"
        | "cast_like"
        | "reinterpret"
        | "clip"
        | "fixed_point_multiply"
        | "ndarray_size" => elemwise,
        op if is_unary_elemwise(op) => elemwise,
        op if is_binary_broadcast(op) => binary_broadcast,
        "relay.op.annotation.simulated_quantize" => simulated_quantize,
        "nn.conv1d"
        | "nn.conv2d"
        | "nn.conv3d"
        | "nn.conv2d_transpose"
        | "nn.conv3d_transpose"
        | "nn.contrib_conv2d_winograd_without_weight_transform"
        | "nn.contrib_conv3d_winograd_without_weight_transform"
        | "nn.contrib_conv2d_gemm_without_weight_transform"
        | "nn.contrib_conv2d_NCHWc"
        | "nn.contrib_depthwise_conv2d_NCHWc"
        | "nn.conv2d_backward_weight" => nn::conv,
        "nn.deformable_conv2d" => nn::deformable_conv,
        "nn.bitserial_conv2d" | "image.dilation2d" => nn::data_kernel,
        "nn.correlation" => nn::correlation,
        "nn.max_pool1d"
        | "nn.avg_pool1d"
        | "nn.max_pool2d"
        | "nn.avg_pool2d"
        | "nn.max_pool3d"
        | "nn.avg_pool3d"
        | "nn.global_max_pool2d"
        | "nn.global_avg_pool2d"
        | "nn.adaptive_max_pool1d"
        | "nn.adaptive_avg_pool1d"
        | "nn.adaptive_max_pool2d"
        | "nn.adaptive_avg_pool2d"
        | "nn.adaptive_max_pool3d"
        | "nn.adaptive_avg_pool3d" => nn::pool,
        "nn.upsampling" | "nn.upsampling3d" | "dyn.nn.upsampling" | "dyn.nn.upsampling3d" => {
            nn::upsampling
        }
        "image.resize1d" | "image.resize2d" => nn::resize,
        "nn.pad" => nn::pad,
        "nn.dense" => nn::dense,
        "nn.contrib_dense_pack" => nn::dense_pack,
        "nn.prelu" => nn::prelu,
        "nn.l2_normalize" => nn::l2_normalize,
        "nn.batch_norm" => nn::batch_norm,
        "nn.layer_norm" | "nn.instance_norm" => nn::normalization,
        "vision.roi_align" | "vision.roi_pool" => nn::roi,
        "topk" => tensor::topk,
        "concatenate" => tensor::concatenate,
        "transpose" => tensor::transpose,
        "squeeze" => tensor::squeeze,
        "strided_slice" => tensor::strided_slice,
        "split" => tensor::split,
        "slice_like" => tensor::slice_like,
        "argmax" | "argmin" | "sum" | "all" | "max" | "min" | "prod" | "mean" | "variance" => {
            tensor::reduce
        }
        "fixed_point_multiply_per_axis" => tensor::fixed_point_multiply_per_axis,
        "qnn.conv2d" | "qnn.conv2d_transpose" => qnn::conv,
        "qnn.dense" => qnn::dense,
        "qnn.contrib_dense_pack" => qnn::dense_pack,
        "qnn.requantize" => qnn::requantize,
        "qnn.concatenate" => qnn::concatenate,
        "qnn.avg_pool2d" => qnn::avg_pool2d,
        "qnn.add" | "qnn.mul" | "qnn.subtract" => qnn::binary_broadcast,
        _ => return None,
    };
    Some(rule)
}

/// The operators TVM registers with `RELAY_REGISTER_UNARY_OP`.
fn is_unary_elemwise(op: &str) -> bool {
    matches!(
        op,
        "log"
            | "log2"
            | "log10"
            | "tan"
            | "cos"
            | "cosh"
            | "sin"
            | "sinh"
            | "acos"
            | "acosh"
            | "asin"
            | "asinh"
            | "atan"
            | "atanh"
            | "exp"
            | "fast_exp"
            | "erf"
            | "fast_erf"
            | "sqrt"
            | "rsqrt"
            | "zeros_like"
            | "ones_like"
            | "sigmoid"
            | "copy"
            | "floor"
            | "ceil"
            | "trunc"
            | "round"
            | "sign"
            | "abs"
            | "tanh"
            | "fast_tanh"
            | "negative"
            | "logical_not"
            | "bitwise_not"
            | "isnan"
            | "isfinite"
            | "isinf"
    )
}

/// The operators TVM registers with `RELAY_REGISTER_BINARY_OP` or
/// `RELAY_REGISTER_CMP_OP`.
fn is_binary_broadcast(op: &str) -> bool {
    matches!(
        op,
        "add"
            | "subtract"
            | "right_shift"
            | "left_shift"
            | "maximum"
            | "minimum"
            | "divide"
            | "trunc_divide"
            | "floor_divide"
            | "multiply"
            | "power"
            | "mod"
            | "floor_mod"
            | "trunc_mod"
            | "logical_and"
            | "logical_or"
            | "logical_xor"
            | "bitwise_and"
            | "bitwise_or"
            | "bitwise_xor"
            | "equal"
            | "not_equal"
            | "less"
            | "less_equal"
            | "greater"
            | "greater_equal"
    )
}

// ---- helpers shared by the inference functions ----

/// The attrs object, which every operator with attributes has.
pub(super) fn attrs_of<'a>(args: &'a InferArgs) -> Result<&'a Attrs, LayoutError> {
    args.attrs
        .ok_or_else(|| "layout inference: the call has no attributes".to_string())
}

/// A field of the attrs.
pub(super) fn field<'a>(attrs: &'a Attrs, name: &str) -> Result<&'a AttrValue, LayoutError> {
    attrs
        .get(name)
        .ok_or_else(|| format!("layout inference: the attributes have no `{name}`"))
}

/// A string field (a null `String` reads as empty).
pub(super) fn str_field(attrs: &Attrs, name: &str) -> Result<String, LayoutError> {
    match field(attrs, name)? {
        AttrValue::Str(s) => Ok(s.clone()),
        AttrValue::Null => Ok(String::new()),
        other => Err(format!(
            "layout inference: `{name}` is not a string: {other:?}"
        )),
    }
}

/// An integer field.
pub(super) fn int_field(attrs: &Attrs, name: &str) -> Result<i64, LayoutError> {
    field(attrs, name)?
        .as_int()
        .ok_or_else(|| format!("layout inference: `{name}` is not an integer"))
}

/// A boolean field.
pub(super) fn bool_field(attrs: &Attrs, name: &str) -> Result<bool, LayoutError> {
    Ok(int_field(attrs, name)? != 0)
}

/// One element of an `Array<Integer>`: its value and its dtype.
#[derive(Debug, Clone, Copy)]
pub(super) struct IntElem {
    pub value: i64,
    pub dtype: DataType,
}

impl IntElem {
    /// A new `IntImm` of the same dtype holding `value`.
    pub fn with_value(self, value: i64) -> AttrValue {
        AttrValue::int_imm(value, self.dtype)
    }
}

/// An `Array<Integer>` field; `None` when it is null.
pub(super) fn int_elems(attrs: &Attrs, name: &str) -> Result<Option<Vec<IntElem>>, LayoutError> {
    match field(attrs, name)? {
        AttrValue::Null => Ok(None),
        AttrValue::Array(items) => items
            .iter()
            .map(|item| match item {
                AttrValue::IntImm { value, dtype, .. } => Ok(IntElem {
                    value: *value,
                    dtype: *dtype,
                }),
                AttrValue::Int(value) => Ok(IntElem {
                    value: *value,
                    dtype: DataType::INT32,
                }),
                other => Err(format!(
                    "layout inference: `{name}` holds a non-integer {other:?}"
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        other => Err(format!(
            "layout inference: `{name}` is not an array: {other:?}"
        )),
    }
}

/// An `Array<Integer>` of int32 `IntImm`s (TVM's `Integer(int)`).
pub(super) fn int32_array(values: &[i64]) -> AttrValue {
    AttrValue::Array(
        values
            .iter()
            .map(|&v| AttrValue::int_imm(v, DataType::INT32))
            .collect(),
    )
}

/// A copy of the attrs with fields replaced (`make_object<T>(*attrs)` then
/// assignments).
pub(super) fn replaced(attrs: &Attrs, fields: &[(&str, AttrValue)]) -> Attrs {
    attrs_replacing(attrs, fields)
}

/// The shape of input `index`, which TVM requires to be a tensor.
pub(super) fn shape<'a>(args: &'a InferArgs, index: usize) -> Result<&'a [Dim], LayoutError> {
    args.types
        .get(index)
        .and_then(Type::as_tensor)
        .map(|t| t.shape.as_slice())
        .ok_or_else(|| format!("layout inference: input {index} is not a tensor"))
}

/// `layouts[index]`, which TVM checks exists.
pub(super) fn nth(layouts: &[Layout], index: usize) -> Result<&Layout, LayoutError> {
    layouts
        .get(index)
        .ok_or_else(|| format!("layout inference: no layout for input {index}"))
}

/// An axis attribute normalised against a rank, as `size_t` (TVM's
/// `axis < 0 ? axis + ndim : axis`).
pub(super) fn normalise_axis(axis: i64, ndim: usize) -> i64 {
    if axis < 0 {
        axis + ndim as i64
    } else {
        axis
    }
}

/// The layout `C`, which scales, biases and zero points get.
pub(super) fn channel_layout() -> Result<Layout, LayoutError> {
    named("C")
}

// ---- elementwise and broadcast ----

/// `ElemwiseArbitraryLayout`: everything in the first input's layout.
fn elemwise(args: &InferArgs) -> Inferred {
    let ret = match args.new_in {
        Some(new_in) => nth(new_in, 0)?.clone(),
        None => args
            .old_in
            .iter()
            .find(|l| l.is_defined())
            .cloned()
            .unwrap_or_else(Layout::undef),
    };
    Ok(InferOutput::new(
        vec![ret.clone(); args.old_in.len()],
        vec![ret],
        args.attrs.cloned(),
    ))
}

/// `SimQuantizeLayout`: data in its layout, the three parameters in `C`.
fn simulated_quantize(args: &InferArgs) -> Inferred {
    let ret = match args.new_in {
        Some(new_in) => nth(new_in, 0)?.clone(),
        None => nth(args.old_in, 0)?.clone(),
    };
    let c = channel_layout()?;
    Ok(InferOutput::new(
        vec![ret.clone(), c.clone(), c.clone(), c],
        vec![ret],
        args.attrs.cloned(),
    ))
}

/// `BinaryBroadcastLayout`.
fn binary_broadcast(args: &InferArgs) -> Inferred {
    let (inputs, outputs) = broadcast_layouts(args.new_in, args.old_in, args.types)?;
    Ok(InferOutput::new(inputs, outputs, args.attrs.cloned()))
}

/// `BinaryBroadcastLayoutHelper`: the layouts of the two operands and of
/// the result. Before the rewrite, an operand without a layout takes the
/// trailing part of the other's; after it, the smaller operand is changed
/// the way the larger one was, so the two still broadcast.
pub(super) fn broadcast_layouts(
    new_in: Option<&[Layout]>,
    old_in: &[Layout],
    types: &[Type],
) -> Result<(Vec<Layout>, Vec<Layout>), LayoutError> {
    let shapes: Vec<&[Dim]> = types
        .iter()
        .map(|t| {
            t.as_tensor()
                .map(|t| t.shape.as_slice())
                .ok_or_else(|| "broadcast layout: an operand is not a tensor".to_string())
        })
        .collect::<Result<_, _>>()?;
    if shapes.len() < 2 || old_in.len() < 2 {
        return Err("broadcast layout: fewer than two operands".into());
    }
    let old_large = if shapes[0].len() >= shapes[1].len() {
        0
    } else {
        1
    };
    let mut layouts: Vec<Layout> = old_in.to_vec();
    let default = (
        vec![Layout::undef(), Layout::undef()],
        vec![Layout::undef()],
    );
    let out = match (layouts[0].is_defined(), layouts[1].is_defined()) {
        (false, false) => default.clone(),
        (true, true) => (layouts.clone(), vec![layouts[old_large].clone()]),
        (d0, _) => {
            let defined = if d0 { 0 } else { 1 };
            let undef = 1 - defined;
            if shapes[defined].len() >= shapes[undef].len() {
                let sub = sub_layout(
                    &layouts[defined],
                    shapes[defined].len() - shapes[undef].len(),
                    shapes[undef].len(),
                );
                layouts[undef] = sub;
                (layouts.clone(), vec![layouts[defined].clone()])
            } else {
                default.clone()
            }
        }
    };
    let Some(new_in) = new_in else {
        return Ok(out);
    };
    let ret = nth(new_in, old_large)?.clone();
    let (n0, n1) = (nth(new_in, 0)?, nth(new_in, 1)?);
    let large = if ndim_primal(n0) >= ndim_primal(n1) {
        0
    } else {
        1
    };
    let small = 1 - large;
    let target = try_transform_like(&layouts[small], &layouts[large], &new_in[large])?;
    if !target.is_defined() {
        return Ok(default);
    }
    let new_small = adjust_subordinate_factors(&target, &layouts[small], shapes[small])?;
    layouts[large] = new_in[large].clone();
    layouts[small] = new_small;
    Ok((layouts, vec![ret]))
}

/// `Isomorphic`: the same structure, axes renamed consistently.
fn isomorphic(lhs: &Layout, rhs: &Layout) -> Result<bool, LayoutError> {
    if !lhs.is_defined() || !rhs.is_defined() {
        return Err("Isomorphic: an undefined layout".into());
    }
    if lhs.ndim() != rhs.ndim() {
        return Ok(false);
    }
    let mut map_to: HashMap<char, char> = HashMap::default();
    let mut map_back: HashMap<char, char> = HashMap::default();
    for (l, r) in lhs.axes.iter().zip(&rhs.axes) {
        if l.is_primal() != r.is_primal() {
            return Ok(false);
        }
        if *map_to.entry(l.name).or_insert(r.name) != r.name {
            return Ok(false);
        }
        if *map_back.entry(r.name).or_insert(l.name) != l.name {
            return Ok(false);
        }
        if !l.is_primal() && factor_of(lhs, l.name) != factor_of(rhs, r.name) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `TryTransformLike`: `old` transformed the way `ref_old` became
/// `ref_new`, renaming the axes of `ref_new` after `old`'s; undefined when
/// the two do not line up.
fn try_transform_like(
    old: &Layout,
    ref_old: &Layout,
    ref_new: &Layout,
) -> Result<Layout, LayoutError> {
    if !old.is_defined() || !ref_old.is_defined() || !ref_new.is_defined() {
        return Err("TryTransformLike: an undefined layout".into());
    }
    let (large, small) = if ref_old.ndim() > old.ndim() {
        (ref_old, old)
    } else {
        (old, ref_old)
    };
    let large_sub = sub_layout(large, large.ndim() - small.ndim(), small.ndim());
    let rest = sub_layout(large, 0, large.ndim() - small.ndim());
    let orthogonal = rest.axes.iter().all(|axis| {
        index_of(&large_sub, axis.primal()) == -1
            && index_of(&large_sub, axis.primal().to_ascii_lowercase()) == -1
    });
    if !orthogonal || !isomorphic(&large_sub, small)? {
        return Ok(Layout::undef());
    }
    if old.ndim() == 0 {
        return Ok(old.clone());
    }
    if old.ndim() > ref_old.ndim() {
        // TVM reads past the start of `ref_old` here.
        return Err(format!(
            "TryTransformLike: {} has more axes than {}",
            old.name, ref_old.name
        ));
    }
    let letter = |c: char| (c as u8 - b'A') as usize;
    let mut mapping: [Option<usize>; 26] = [None; 26];
    let mut used = [false; 26];
    for (j, i) in (0..old.ndim()).rev().zip((0..ref_old.ndim()).rev()) {
        let name_ref = letter(ref_old.axes[i].primal());
        let name = letter(old.axes[j].primal());
        mapping[name_ref] = Some(name);
        used[name] = true;
    }
    for axis in ref_old.axes.iter().rev() {
        let name_ref = letter(axis.primal());
        if mapping[name_ref].is_none() {
            let chosen = if !used[name_ref] {
                name_ref
            } else {
                (0..26)
                    .find(|&i| !used[i])
                    .ok_or_else(|| "TryTransformLike: All letters are used".to_string())?
            };
            mapping[name_ref] = Some(chosen);
            used[chosen] = true;
        }
    }
    let mut renamed = String::new();
    for c in ref_new.name.chars() {
        let base = if c.is_ascii_uppercase() {
            b'A'
        } else if c.is_ascii_lowercase() {
            b'a'
        } else {
            renamed.push(c);
            continue;
        };
        let mapped = mapping[(c as u8 - base) as usize]
            .ok_or_else(|| format!("TryTransformLike: no mapping for axis {c}"))?;
        renamed.push((base + mapped as u8) as char);
    }
    named(&renamed)
}

/// `AdjustSubordinateFactors`: the block size of each subordinate axis of
/// `src`, set to 1 where the operand broadcasts along that axis (its size
/// is 1, or it lacks the axis).
fn adjust_subordinate_factors(
    src: &Layout,
    old: &Layout,
    old_shape: &[Dim],
) -> Result<Layout, LayoutError> {
    let mut name = String::new();
    for axis in &src.axes {
        if !axis.is_primal() {
            let dual = axis.primal();
            let one = match old.index_of(dual) {
                None => true,
                Some(position) => {
                    let dim = old_shape.get(position).ok_or_else(|| {
                        format!("AdjustSubordinateFactors: no dimension {position}")
                    })?;
                    dim.as_int() == Some(1) && old.index_of(axis.name).is_none()
                }
            };
            if one {
                name.push('1');
            } else {
                name.push_str(&factor_of(src, dual).to_string());
            }
        }
        name.push(axis.name);
    }
    if name.is_empty() {
        Ok(from_axes(&[]))
    } else {
        named(&name)
    }
}

/// The name of `layout[index]`, TVM's `old_in_layouts[0][axis].name()`.
pub(super) fn axis_letter(layout: &Layout, index: i64) -> Result<char, LayoutError> {
    Ok(axis_at(layout, index)?.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(name: &str) -> Layout {
        named(name).unwrap()
    }

    fn tensor(dims: &[i64]) -> Type {
        Type::tensor(
            dims.iter().map(|&d| Dim::int32(d)).collect(),
            DataType::FLOAT32,
        )
    }

    #[test]
    fn transform_like_renames_and_expands() {
        assert_eq!(
            try_transform_like(&l("CHW"), &l("NCHW"), &l("NHWC"))
                .unwrap()
                .name,
            "NHWC"
        );
        assert_eq!(
            try_transform_like(&l("NW"), &l("NC"), &l("NC1c"))
                .unwrap()
                .name,
            "NW1w"
        );
        assert_eq!(
            try_transform_like(&l("W"), &l("NC"), &l("NC1c"))
                .unwrap()
                .name,
            "NW1w"
        );
        let scalar = from_axes(&[]);
        assert_eq!(
            try_transform_like(&scalar, &l("NCHW"), &l("NHWC"))
                .unwrap()
                .name,
            ""
        );
    }

    #[test]
    fn broadcast_follows_the_larger_operand() {
        let types = [tensor(&[1, 8, 5, 5]), tensor(&[8, 1, 1])];
        let old = [l("NCHW"), Layout::undef()];
        let (inputs, outputs) = broadcast_layouts(None, &old, &types).unwrap();
        assert_eq!(inputs[1].name, "CHW");
        assert_eq!(outputs[0].name, "NCHW");
        let old = [l("NCHW"), l("CHW")];
        let new = [l("NHWC"), l("CHW")];
        let (inputs, outputs) = broadcast_layouts(Some(&new), &old, &types).unwrap();
        assert_eq!(inputs[1].name, "NHWC");
        assert_eq!(outputs[0].name, "NHWC");
        let new = [l("NCHW16c"), l("CHW")];
        let (inputs, _) = broadcast_layouts(Some(&new), &old, &types).unwrap();
        assert_eq!(inputs[1].name, "NCHW16c");
        let types = [tensor(&[1, 8, 5, 5]), tensor(&[1, 1, 1])];
        let (inputs, _) = broadcast_layouts(Some(&new), &old, &types).unwrap();
        assert_eq!(inputs[1].name, "NCHW1c");
    }
}
