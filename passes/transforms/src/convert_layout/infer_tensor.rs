//! Layout inference of the tensor operators: the ones that index axes
//! (`concatenate`, `split`, `transpose`, `squeeze`, `strided_slice`,
//! `slice_like`, `topk`, the reductions) follow a new input layout by
//! renumbering their axis attributes, as TVM's functions of the same names
//! do.

use super::infer::{
    attrs_of, axis_letter, bool_field, field, int32_array, int_elems, int_field, normalise_axis,
    nth, replaced, shape, str_field, InferArgs, InferOutput, Inferred, IntElem,
};
use super::layout::{axis_at, factor_of, from_axes, index_of, named, same, Layout};
use relay_ir::{AttrValue, Attrs, Dim, Type};

/// The output of a failed inference: one undefined input and output.
fn undefined(attrs: Option<&Attrs>) -> InferOutput {
    InferOutput::new(vec![Layout::undef()], vec![Layout::undef()], attrs.cloned())
}

/// `TopKInferCorrectLayout`: the axis follows the layout; two outputs.
pub(super) fn topk(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let ndim = shape(args, 0)?.len();
    let axis = normalise_axis(int_field(attrs, "axis")?, ndim);
    let (ret, attrs) = match args.new_in {
        Some(new_in) => {
            let letter = axis_letter(nth(args.old_in, 0)?, axis)?;
            let new_layout = nth(new_in, 0)?.clone();
            let index = index_of(&new_layout, letter);
            (
                new_layout,
                replaced(attrs, &[("axis", AttrValue::Int(index))]),
            )
        }
        None => (nth(args.old_in, 0)?.clone(), attrs.clone()),
    };
    Ok(InferOutput::new(
        vec![ret.clone()],
        vec![ret.clone(), ret],
        Some(attrs),
    ))
}

/// `ConcatenateLayout` over the input layouts and the type of the tuple.
pub(super) fn concatenate_layouts(
    attrs: &Attrs,
    new_in: Option<&[Layout]>,
    old_in: &[Layout],
    tuple_type: &Type,
) -> Inferred {
    let fields = tuple_type
        .as_tuple()
        .ok_or_else(|| "concatenate layout: the input is not a tuple".to_string())?;
    let first_rank = fields
        .first()
        .and_then(Type::as_tensor)
        .map(|t| t.shape.len())
        .ok_or_else(|| "concatenate layout: the first field is not a tensor".to_string())?;
    let axis = normalise_axis(int_field(attrs, "axis")?, first_rank);
    let mut new_attrs = attrs.clone();
    let mut ret = Layout::undef();
    let mut selected = false;
    if let Some(new_in) = new_in {
        let letter = axis_letter(nth(old_in, 0)?, axis)?;
        let first = nth(new_in, 0)?;
        if new_in.iter().all(|l| same(l, first)) {
            new_attrs = replaced(attrs, &[("axis", AttrValue::Int(index_of(first, letter)))]);
            ret = first.clone();
            selected = true;
        }
    }
    if !selected {
        if let Some(defined) = old_in.iter().find(|l| l.is_defined()) {
            ret = defined.clone();
        }
        let primal_at_axis =
            axis >= 0 && (axis as usize) < ret.ndim() && ret.axes[axis as usize].is_primal();
        if !primal_at_axis {
            return Ok(undefined(Some(attrs)));
        }
    }
    Ok(InferOutput::new(
        vec![ret.clone(); old_in.len()],
        vec![ret],
        Some(new_attrs),
    ))
}

/// `ConcatenateLayout`: all inputs in one layout, the axis renumbered, when
/// every input arrives in the same new layout.
pub(super) fn concatenate(args: &InferArgs) -> Inferred {
    if args.types.len() != 1 {
        return Err("concatenate layout: expected one (tuple) input".into());
    }
    concatenate_layouts(attrs_of(args)?, args.new_in, args.old_in, &args.types[0])
}

/// `TransposeInferCorrectLayout`: the permutation is re-expressed in the
/// new input layout when every axis is found there.
pub(super) fn transpose(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let Some(old_layout) = args.old_in.first().filter(|l| l.is_defined()) else {
        return Ok(undefined(Some(attrs)));
    };
    if args.old_in.len() != 1 {
        return Err("transpose layout: expected one input layout".into());
    }
    let ndim = old_layout.ndim() as i64;
    let mut old_axes: Vec<i64> = match int_elems(attrs, "axes")? {
        Some(axes) if !axes.is_empty() => axes.iter().map(|a| a.value).collect(),
        _ => (0..ndim).rev().collect(),
    };
    for axis in &mut old_axes {
        if *axis < 0 {
            *axis += ndim;
        }
    }
    let mut chosen: Option<(Vec<i64>, String)> = None;
    if let Some(new_layout) = args
        .new_in
        .and_then(|n| n.first())
        .filter(|l| l.is_defined())
    {
        if args.new_in.is_some_and(|n| n.len() != 1) {
            return Err("transpose layout: expected one new input layout".into());
        }
        let mut new_axes = Vec::new();
        for &axis in &old_axes {
            let new_axis = index_of(new_layout, axis_letter(old_layout, axis)?);
            if new_axis == -1 {
                new_axes.clear();
                break;
            }
            new_axes.push(new_axis);
        }
        // An empty layout name counts as "not determined", as in TVM.
        if new_axes.len() == new_layout.ndim() && !new_layout.name.is_empty() {
            chosen = Some((new_axes, new_layout.name.clone()));
        }
    }
    let (axes, in_layout) = chosen.unwrap_or((old_axes, old_layout.name.clone()));
    if in_layout.is_empty() {
        return Ok(undefined(Some(attrs)));
    }
    let new_attrs = replaced(attrs, &[("axes", int32_array(&axes))]);
    let chars: Vec<char> = in_layout.chars().collect();
    let mut out_layout = String::new();
    for &axis in &axes {
        let c = usize::try_from(axis)
            .ok()
            .and_then(|i| chars.get(i))
            .ok_or_else(|| format!("transpose layout: axis {axis} is outside {in_layout}"))?;
        out_layout.push(*c);
    }
    // TVM gives up (instead of failing) when a layout does not parse.
    match (named(&in_layout), named(&out_layout)) {
        (Ok(input), Ok(output)) => Ok(InferOutput::new(vec![input], vec![output], Some(new_attrs))),
        _ => Ok(undefined(Some(attrs))),
    }
}

/// `SqueezeInferCorrectLayout`: the squeezed axes are renumbered in the new
/// layout; the output keeps the other axes.
pub(super) fn squeeze(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let input = match args.new_in {
        Some(new_in) => nth(new_in, 0)?.clone(),
        None => nth(args.old_in, 0)?.clone(),
    };
    let dims = shape(args, 0)?;
    let mut axes: Vec<i64> = match int_elems(attrs, "axis")? {
        Some(axes) => axes.iter().map(|a| a.value).collect(),
        None => dims
            .iter()
            .enumerate()
            .filter(|(_, d)| d.as_int() == Some(1))
            .map(|(i, _)| i as i64)
            .collect(),
    };
    let mut new_attrs = attrs.clone();
    if let Some(new_in) = args.new_in {
        let old_layout = nth(args.old_in, 0)?;
        let new_layout = nth(new_in, 0)?;
        let mut new_axes = Vec::new();
        for &axis in &axes {
            new_axes.push(index_of(new_layout, axis_letter(old_layout, axis)?));
        }
        new_attrs = replaced(attrs, &[("axis", int32_array(&new_axes))]);
        axes = new_axes;
    }
    let ndim = input.ndim() as i64;
    let kept: Vec<_> = input
        .axes
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            !axes
                .iter()
                .any(|&a| (if a < 0 { a + ndim } else { a }) == *i as i64)
        })
        .map(|(_, axis)| *axis)
        .collect();
    Ok(InferOutput::new(
        vec![input],
        vec![from_axes(&kept)],
        Some(new_attrs),
    ))
}

/// The elements of an optional `Array<Integer>` field, empty when null.
fn elems_or_empty(attrs: &Attrs, name: &str) -> Result<Vec<IntElem>, String> {
    Ok(int_elems(attrs, name)?.unwrap_or_default())
}

/// `get(i)` of an index list, which TVM checks.
fn at<T: Copy>(items: &[T], index: usize, what: &str) -> Result<T, String> {
    items
        .get(index)
        .copied()
        .ok_or_else(|| format!("strided_slice layout: no {what}[{index}]"))
}

/// A static dimension, which TVM reads without checking.
fn static_dim(dims: &[Dim], index: usize) -> Result<i64, String> {
    dims.get(index)
        .and_then(Dim::as_int)
        .ok_or_else(|| format!("strided_slice layout: dimension {index} is not static"))
}

/// `IntElem` values as an attribute array.
fn elems_attr(items: &[IntElem]) -> AttrValue {
    AttrValue::Array(items.iter().map(|e| e.with_value(e.value)).collect())
}

/// `StridedSliceInferCorrectLayout`: a slice follows a permuted layout
/// (NHWC ↔ NCHW) by permuting its bounds, and a blocked one (NCHW →
/// NCHW4c) by dividing the bounds of a split axis by the block size, when
/// they divide evenly and the stride is 1.
pub(super) fn strided_slice(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let dims = shape(args, 0)?;
    let mut layout = nth(args.old_in, 0)?.clone();
    let Some(new_in) = args.new_in.filter(|_| layout.is_defined()) else {
        return Ok(InferOutput::new(
            vec![layout.clone()],
            vec![layout],
            Some(attrs.clone()),
        ));
    };
    let new_layout = nth(new_in, 0)?.clone();
    let slice_mode = str_field(attrs, "slice_mode")?;
    let given = |name| -> Result<Option<Vec<IntElem>>, String> { int_elems(attrs, name) };
    let (mut begin, mut end, mut strides) = (Vec::new(), Vec::new(), Vec::new());
    if let (Some(b), Some(e), Some(s)) = (given("begin")?, given("end")?, given("strides")?) {
        strides = s
            .iter()
            .map(|i| IntElem {
                value: if slice_mode == "size" { 1 } else { i.value },
                dtype: i.dtype,
            })
            .collect();
        begin = b;
        end = e;
    }
    let axes = int_elems(attrs, "axes")?;
    let default = undefined(Some(attrs));
    let (mut new_begin, mut new_end, mut new_strides) = (Vec::new(), Vec::new(), Vec::new());
    let mut fields: Vec<(&str, AttrValue)> = Vec::new();
    let old_name = layout.name.clone();
    let new_name = new_layout.name.clone();
    if !old_name.starts_with(&new_name) && !new_name.starts_with(&old_name) {
        if old_name.len() != new_name.len() {
            // Not a permutation (NHW4c -> NCHW).
            return Ok(default);
        }
        if let Some(axes) = &axes {
            let mut new_axes = Vec::new();
            for (i, axis) in axes.iter().enumerate() {
                let letter = axis_letter(&layout, axis.value)?;
                new_begin.push(at(&begin, i, "begin")?);
                new_end.push(at(&end, i, "end")?);
                new_strides.push(at(&strides, i, "strides")?);
                new_axes.push(index_of(&new_layout, letter));
            }
            fields.push(("axes", int32_array(&new_axes)));
        } else {
            for i in 0..new_name.len() {
                let letter = axis_at(&new_layout, i as i64)?.name;
                let Some(index) = layout.index_of(letter) else {
                    return Ok(default);
                };
                let st = strides.get(index).map_or(1, |s| s.value);
                let bg = begin.get(index).map_or(0, |b| b.value);
                let ed = match end.get(index) {
                    Some(e) => e.value,
                    None => static_dim(dims, index)?,
                };
                new_begin.push(IntElem {
                    value: bg,
                    dtype: at(&begin, 0, "begin")?.dtype,
                });
                new_end.push(IntElem {
                    value: ed,
                    dtype: at(&end, 0, "end")?.dtype,
                });
                new_strides.push(IntElem {
                    value: st,
                    dtype: at(&strides, 0, "strides")?.dtype,
                });
            }
        }
        fields.push(("begin", elems_attr(&new_begin)));
        fields.push(("end", elems_attr(&new_end)));
        fields.push(("strides", elems_attr(&new_strides)));
        layout = new_layout;
    } else if old_name.len() < new_name.len() {
        // Blocking an axis (NCHW -> NCHW4c): bounds on it are divided.
        let divided = |i: usize, bg: i64, ed: i64, factor: i64| -> Option<(i64, i64)> {
            if strides.get(i).is_some_and(|s| s.value != 1) {
                return None;
            }
            if bg % factor != 0 || ed % factor != 0 {
                return None;
            }
            Some((bg / factor, ed / factor))
        };
        if let Some(axes) = &axes {
            let mut new_axes = Vec::new();
            for (i, axis) in axes.iter().enumerate() {
                let old_axis = axis_at(&layout, axis.value)?;
                new_axes.push(index_of(&new_layout, old_axis.name));
                if !old_axis.is_primal() {
                    return Err("strided_slice layout: a sliced axis is split".into());
                }
                let factor = factor_of(&new_layout, old_axis.name);
                let (b, e) = (at(&begin, i, "begin")?, at(&end, i, "end")?);
                if factor == -1 {
                    new_begin.push(b);
                    new_end.push(e);
                } else {
                    let Some((bg, ed)) = divided(i, b.value, e.value, factor) else {
                        return Ok(default);
                    };
                    new_begin.push(IntElem {
                        value: bg,
                        dtype: at(&begin, 0, "begin")?.dtype,
                    });
                    new_end.push(IntElem {
                        value: ed,
                        dtype: at(&end, 0, "end")?.dtype,
                    });
                }
            }
            fields.push(("axes", int32_array(&new_axes)));
        } else {
            for (i, b) in begin.iter().enumerate() {
                let old_axis = axis_at(&layout, i as i64)?;
                if !old_axis.is_primal() {
                    return Err("strided_slice layout: a sliced axis is split".into());
                }
                let factor = factor_of(&new_layout, old_axis.name);
                let e = at(&end, i, "end")?;
                if factor == -1 {
                    new_begin.push(*b);
                    new_end.push(e);
                    continue;
                }
                let bg = b.value;
                let ed = if slice_mode == "size" {
                    if e.value < 0 {
                        static_dim(dims, i)?
                    } else {
                        bg + e.value
                    }
                } else {
                    e.value
                };
                let Some((bg, ed)) = divided(i, bg, ed, factor) else {
                    return Ok(default);
                };
                new_begin.push(IntElem {
                    value: bg,
                    dtype: at(&begin, 0, "begin")?.dtype,
                });
                new_end.push(IntElem {
                    value: ed,
                    dtype: at(&end, 0, "end")?.dtype,
                });
            }
        }
        fields.push(("begin", elems_attr(&new_begin)));
        fields.push(("end", elems_attr(&new_end)));
        layout = new_layout;
    }
    Ok(InferOutput::new(
        vec![layout.clone()],
        vec![layout],
        Some(replaced(attrs, &fields)),
    ))
}

/// The sections of a split: their count, and the indices when given.
fn split_sections(attrs: &Attrs) -> Result<(usize, Option<Vec<IntElem>>), String> {
    match field(attrs, "indices_or_sections")? {
        AttrValue::IntImm { value, .. } | AttrValue::Int(value) => {
            Ok((usize::try_from(*value).unwrap_or(0), None))
        }
        AttrValue::Array(_) => {
            let indices = int_elems(attrs, "indices_or_sections")?.unwrap_or_default();
            Ok((indices.len() + 1, Some(indices)))
        }
        other => Err(format!("split: indices_or_sections is {other:?}")),
    }
}

/// `SplitInferCorrectLayout`: the axis follows the layout; indices on a
/// blocked axis are divided by the block size when they all divide.
pub(super) fn split(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let ndim = shape(args, 0)?.len();
    let axis = normalise_axis(int_field(attrs, "axis")?, ndim);
    let (count, indices) = split_sections(attrs)?;
    let mut new_attrs = attrs.clone();
    let ret = match args.new_in {
        Some(new_in) => {
            let letter = axis_letter(nth(args.old_in, 0)?, axis)?;
            let new_layout = nth(new_in, 0)?;
            let mut fields = vec![("axis", AttrValue::Int(index_of(new_layout, letter)))];
            let factor = factor_of(new_layout, letter);
            let mut divisible = true;
            if factor > 1 {
                if let Some(indices) = &indices {
                    let divided: Vec<i64> = indices.iter().map(|v| v.value / factor).collect();
                    divisible = indices.iter().all(|v| v.value % factor == 0);
                    if divisible {
                        fields.push(("indices_or_sections", int32_array(&divided)));
                    }
                }
            }
            new_attrs = replaced(attrs, &fields);
            if divisible {
                new_layout.clone()
            } else {
                nth(args.old_in, 0)?.clone()
            }
        }
        None => nth(args.old_in, 0)?.clone(),
    };
    Ok(InferOutput::new(
        vec![ret.clone()],
        vec![ret; count],
        Some(new_attrs),
    ))
}

/// `SliceLikeInferCorrectLayout`: both inputs must share a layout; the
/// sliced axes are renumbered in the new one.
pub(super) fn slice_like(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    if let Some(new_in) = args.new_in {
        let old_in = args.old_in;
        if new_in.len() != 2 || old_in.len() != 2 {
            return Err("slice_like layout: expected two input layouts".into());
        }
        let all_defined = new_in.iter().chain(old_in).all(Layout::is_defined);
        if !all_defined || !same(&new_in[0], &new_in[1]) || !same(&old_in[0], &old_in[1]) {
            return Err("slice_like layout: the two inputs are in different layouts".into());
        }
        let mut new_axes = Vec::new();
        for axis in elems_or_empty(attrs, "axes")? {
            let new_axis = index_of(&new_in[0], axis_letter(&old_in[0], axis.value)?);
            if new_axis == -1 {
                new_axes.clear();
                break;
            }
            new_axes.push(new_axis);
        }
        if !new_axes.is_empty() {
            let layout = new_in[0].clone();
            return Ok(InferOutput::new(
                vec![layout.clone(), layout.clone()],
                vec![layout],
                Some(replaced(attrs, &[("axes", int32_array(&new_axes))])),
            ));
        }
    }
    if args.old_in.len() != 2 {
        return Err("slice_like layout: expected two input layouts".into());
    }
    Ok(InferOutput::new(
        vec![args.old_in[0].clone(), args.old_in[1].clone()],
        vec![args.old_in[1].clone()],
        Some(attrs.clone()),
    ))
}

/// `GetReduceAxes`: the reduced axes, sorted, every axis when none are
/// given, the complement with `exclude`.
fn reduce_axes(ndim: usize, axes: Option<&[IntElem]>, exclude: bool) -> Result<Vec<i64>, String> {
    let n = ndim as i64;
    let Some(axes) = axes.filter(|a| !a.is_empty()) else {
        return Ok((0..n).collect());
    };
    let mut in_axes = Vec::new();
    for axis in axes {
        let a = if axis.value < 0 {
            axis.value + n
        } else {
            axis.value
        };
        if a < 0 || a >= n {
            return Err("Axis out of bounds in reduce operator.".into());
        }
        in_axes.push(a);
    }
    in_axes.sort_unstable();
    if !exclude {
        return Ok(in_axes);
    }
    Ok((0..n).filter(|i| !in_axes.contains(i)).collect())
}

/// `ReduceInferCorrectLayout`: the reduced axes are renumbered in the new
/// layout; a blocked reduced axis is reduced in both its parts.
pub(super) fn reduce(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let ndim = shape(args, 0)?.len();
    let exclude = bool_field(attrs, "exclude")?;
    let keepdims = bool_field(attrs, "keepdims")?;
    let axes = int_elems(attrs, "axis")?;
    let r_axes = reduce_axes(ndim, axes.as_deref(), exclude)?;
    let check_count = |layouts: &[Layout]| {
        if layouts.len() == 1 || layouts.len() == 2 {
            Ok(())
        } else {
            Err("reduce layout: expected one or two input layouts".to_string())
        }
    };
    // The input and output layouts and the new reduced axes, walking
    // `layout` (in which the old reduced axes are found by name).
    let infer = |layout: &Layout| -> Result<(Layout, Layout, Vec<i64>), String> {
        let old = nth(args.old_in, 0)?;
        let mut reduced: Vec<char> = Vec::new();
        for &axis in &r_axes {
            reduced.push(axis_letter(old, axis)?);
        }
        let mut new_axes = Vec::new();
        let (mut in_str, mut out_str) = (String::new(), String::new());
        let mut push_axis = |dim: char, index: usize| {
            let is_reduced = reduced.contains(&dim);
            if is_reduced != exclude {
                new_axes.push(index as i64);
                true
            } else {
                false
            }
        };
        for (index, axis) in layout.axes.iter().enumerate() {
            if axis.is_primal() {
                push_axis(axis.name, index);
                in_str.push(axis.name);
                if !reduced.contains(&axis.name) || keepdims {
                    out_str.push(axis.name);
                }
            } else {
                let packed = format!("{}{}", factor_of(layout, axis.name), axis.name);
                in_str.push_str(&packed);
                if push_axis(axis.primal(), index) {
                    if exclude {
                        out_str.push_str(&packed);
                    } else if keepdims {
                        out_str.push('1');
                        out_str.push(axis.name);
                    }
                } else {
                    out_str.push_str(&packed);
                }
            }
        }
        Ok((named(&in_str)?, named(&out_str)?, new_axes))
    };
    let mut new_attrs = attrs.clone();
    let (mut inferred_in, mut inferred_out) = (Layout::undef(), Layout::undef());
    match args.new_in {
        Some(new_in) if !r_axes.is_empty() => {
            check_count(new_in)?;
            check_count(args.old_in)?;
            let (i, o, new_axes) = infer(nth(new_in, 0)?)?;
            inferred_in = i;
            inferred_out = o;
            new_attrs = replaced(attrs, &[("axis", int32_array(&new_axes))]);
        }
        _ => {
            check_count(args.old_in)?;
            let old = nth(args.old_in, 0)?;
            if old.is_defined() {
                let (i, o, _) = infer(old)?;
                inferred_in = i;
                inferred_out = o;
            }
        }
    }
    let mut inputs = vec![inferred_in.clone()];
    if args.old_in.len() == 2 {
        inputs.push(inferred_in);
    }
    Ok(InferOutput::new(
        inputs,
        vec![inferred_out],
        Some(new_attrs),
    ))
}

/// `FixedPointMultiplyPerAxisInferCorrectLayout`: the per-axis parameters
/// take the layout of the axes they run along.
pub(super) fn fixed_point_multiply_per_axis(args: &InferArgs) -> Inferred {
    let attrs = attrs_of(args)?;
    let ndim = shape(args, 0)?.len() as i64;
    let axes = elems_or_empty(attrs, "axes")?;
    if let Some(new_in) = args.new_in {
        let new_layout = nth(new_in, 0)?;
        let old_layout = nth(args.old_in, 0)?;
        let mut old_dims = Vec::new();
        for axis in &axes {
            if axis.value < 0 || axis.value >= ndim {
                return Err("Axis out of bounds in FixedPointMultiplyPerAxis operator.".into());
            }
            old_dims.push(axis_letter(old_layout, axis.value)?);
        }
        let mut new_axes = Vec::new();
        let mut channel = String::new();
        for (index, axis) in new_layout.axes.iter().enumerate() {
            if axis.is_primal() {
                if old_dims.contains(&axis.name) {
                    new_axes.push(index as i64);
                    channel.push(axis.name);
                }
            } else if old_dims.contains(&axis.primal()) {
                new_axes.push(index as i64);
                channel.push_str(&format!(
                    "{}{}",
                    factor_of(new_layout, axis.name),
                    axis.name
                ));
            }
        }
        let channel = named(&channel)?;
        return Ok(InferOutput::new(
            vec![
                new_layout.clone(),
                channel.clone(),
                channel.clone(),
                channel,
            ],
            vec![new_layout.clone()],
            Some(replaced(attrs, &[("axes", int32_array(&new_axes))])),
        ));
    }
    if args.old_in.len() != 4 || axes.len() != 1 {
        return Err("fixed_point_multiply_per_axis layout: unexpected inputs".into());
    }
    let old_layout = &args.old_in[0];
    if !old_layout.is_defined() {
        return Ok(InferOutput::new(
            vec![Layout::undef(); 4],
            vec![Layout::undef()],
            Some(attrs.clone()),
        ));
    }
    let channel = named(&axis_letter(old_layout, axes[0].value)?.to_string())?;
    Ok(InferOutput::new(
        vec![
            old_layout.clone(),
            channel.clone(),
            channel.clone(),
            channel,
        ],
        vec![old_layout.clone()],
        Some(attrs.clone()),
    ))
}
