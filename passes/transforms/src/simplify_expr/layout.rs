//! The shape-moving rewrites of `SimplifyExpr`: two reshapes in a row
//! become one reshape to the final (static) shape; two transposes or
//! layout transforms in a row become one transpose; a transpose or layout
//! transform that keeps every axis in place disappears.
//!
//! A pair in which a layout transform changes the rank (`NCHW` →
//! `NCHW4c`) folds into one layout transform, with the other transform's
//! permutation applied to the layout string, as TVM does. Where TVM would
//! abort (layouts that do not meet, a permutation that does not fit the
//! layout string) the pair is left as it is.

use super::engine::{NodeMap, Pattern, PatternId, Rewrite};
use super::{rewritten, tensor_type};
use relay_ir::build::{int_array, op_call_with};
use relay_ir::{AttrValue, Call, Dim, Expr};

/// `reshape(reshape(x))` (either may be `contrib_reverse_reshape`) becomes
/// one `reshape` of `x` to the outer result's shape, when it is static.
pub(super) struct SimplifyReshape {
    pattern: Pattern,
    x: PatternId,
}

impl SimplifyReshape {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let inner_reshape = p.op_call("reshape", &[x]);
        let inner_reverse = p.op_call("contrib_reverse_reshape", &[x]);
        let inner = p.any_of(&[inner_reshape, inner_reverse]);
        let outer_reshape = p.op_call("reshape", &[inner]);
        let outer_reverse = p.op_call("contrib_reverse_reshape", &[inner]);
        let root = p.any_of(&[outer_reshape, outer_reverse]);
        SimplifyReshape {
            pattern: p.finish(root),
            x,
        }
    }
}

/// The dimensions of a static shape as `Integer` attribute values, each
/// keeping the dtype of its `IntImm`; `None` when a dimension is not static.
pub(super) fn static_shape_attr(shape: &[Dim]) -> Option<AttrValue> {
    shape
        .iter()
        .map(|dim| match dim {
            // The shape's own objects, as TVM's `Integer` array holds them.
            Dim::Int { value, dtype, id } => Some(AttrValue::IntImm {
                value: *value,
                dtype: *dtype,
                id: *id,
            }),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .map(AttrValue::Array)
}

impl Rewrite for SimplifyReshape {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, _: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let newshape = static_shape_attr(&tensor_type(pre)?.shape)?;
        let x = rewritten(nodes, self.x)?.clone();
        Some(op_call_with(
            "reshape",
            vec![x],
            &[
                ("newshape", newshape),
                ("allowzero", AttrValue::Bool(false)),
            ],
        ))
    }
}

/// The axes of a layout string, each named by its letter (`NCHW4c` has
/// `N C H W c`): upper-case letters are primal axes, a lower-case letter
/// with an optional factor before it is a split axis. `None` when the
/// string is not a layout.
fn layout_axes(layout: &str) -> Option<Vec<char>> {
    let mut axes = Vec::new();
    let mut factor_digits = 0;
    for c in layout.chars() {
        if c.is_ascii_digit() {
            factor_digits += 1;
        } else if c.is_ascii_uppercase() && factor_digits == 0 {
            axes.push(c);
        } else if c.is_ascii_lowercase() {
            axes.push(c);
            factor_digits = 0;
        } else {
            return None;
        }
    }
    (factor_digits == 0).then_some(axes)
}

/// What a transpose or layout transform does to the axes: output axis `i`
/// is input axis `order[i]`. `None` for anything TVM would not compute.
fn axis_order(call: &Call, ndim: usize) -> Option<Vec<usize>> {
    let attrs = call.attrs.as_ref()?;
    match call.callee.as_op()?.name.as_str() {
        "transpose" => match attrs.get("axes") {
            None | Some(AttrValue::Null) => Some((0..ndim).rev().collect()),
            Some(axes) => {
                let axes = axes.as_int_array()?;
                let order = axes
                    .get(..ndim)?
                    .iter()
                    .map(|&axis| {
                        let axis = if axis < 0 { axis + ndim as i64 } else { axis };
                        usize::try_from(axis).ok().filter(|&a| a < ndim)
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(order)
            }
        },
        "layout_transform" => {
            let src = layout_axes(attrs.get("src_layout")?.as_str()?)?;
            let dst = layout_axes(attrs.get("dst_layout")?.as_str()?)?;
            (0..ndim)
                .map(|i| {
                    let axis = dst.get(i)?;
                    src.iter().position(|c| c == axis)
                })
                .collect()
        }
        _ => None,
    }
}

/// The two layouts of a layout-transform call.
fn layouts(call: &Call) -> Option<(&str, &str)> {
    if call.callee.as_op()?.name != "layout_transform" {
        return None;
    }
    let attrs = call.attrs.as_ref()?;
    Some((
        attrs.get("src_layout")?.as_str()?,
        attrs.get("dst_layout")?.as_str()?,
    ))
}

/// The layouts of a rank-changing layout transform (its layout strings
/// differ in length) in a pair, combined when both change rank.
struct RankChange<'a> {
    src: &'a str,
    dst: &'a str,
    /// The other transform of the pair.
    other: &'a Call,
}

/// Why a pair cannot be folded the way TVM does it.
struct Unsupported;

fn rank_change<'a>(
    outer: &'a Call,
    inner: &'a Call,
) -> Result<Option<RankChange<'a>>, Unsupported> {
    let mut change = match layouts(outer) {
        Some((src, dst)) if src.len() != dst.len() => Some(RankChange {
            src,
            dst,
            other: inner,
        }),
        _ => None,
    };
    if let Some((src, dst)) = layouts(inner) {
        if src.len() != dst.len() {
            match change.as_mut() {
                None => {
                    change = Some(RankChange {
                        src,
                        dst,
                        other: outer,
                    })
                }
                // TVM insists the two meet in the same layout.
                Some(found) if found.src == dst => found.src = src,
                Some(_) => return Err(Unsupported),
            }
        }
    }
    Ok(change)
}

/// Permutes the characters of `layout` (TVM requires one character per
/// axis here).
fn permute_layout(layout: &str, order: &[usize]) -> Option<String> {
    let chars: Vec<char> = layout.chars().collect();
    if chars.len() != order.len() {
        return None;
    }
    order.iter().map(|&i| chars.get(i).copied()).collect()
}

fn layout_transform(data: Expr, src: &str, dst: &str) -> Expr {
    op_call_with(
        "layout_transform",
        vec![data],
        &[
            ("src_layout", AttrValue::Str(src.to_string())),
            ("dst_layout", AttrValue::Str(dst.to_string())),
        ],
    )
}

/// The single layout transform a pair involving a rank-changing layout
/// transform folds into, as (source layout, destination layout); `Ok(None)`
/// when the pair has none or the fold does not apply.
fn fold_rank_change(outer: &Call, inner: &Call) -> Result<Option<(String, String)>, Unsupported> {
    let Some(change) = rank_change(outer, inner)? else {
        return Ok(None);
    };
    let src_rank = layout_axes(change.src).ok_or(Unsupported)?.len();
    let dst_rank = layout_axes(change.dst).ok_or(Unsupported)?.len();
    if src_rank < dst_rank {
        let order = axis_order(change.other, src_rank).ok_or(Unsupported)?;
        let mut inverse = vec![0; order.len()];
        for (i, &axis) in order.iter().enumerate() {
            *inverse.get_mut(axis).ok_or(Unsupported)? = i;
        }
        let src = permute_layout(change.src, &inverse).ok_or(Unsupported)?;
        Ok(Some((src, change.dst.to_string())))
    } else if src_rank > dst_rank {
        let order = axis_order(change.other, dst_rank).ok_or(Unsupported)?;
        let dst = permute_layout(change.dst, &order).ok_or(Unsupported)?;
        Ok(Some((change.src.to_string(), dst)))
    } else if layouts(change.other).is_some() {
        Ok(Some((change.src.to_string(), change.dst.to_string())))
    } else {
        Ok(None)
    }
}

/// `transpose(transpose(x))` (either may be a layout transform) becomes one
/// transpose composing the two permutations.
pub(super) struct SimplifyTranspose {
    pattern: Pattern,
    x: PatternId,
}

fn transpose_like(p: &mut Pattern, arg: PatternId) -> PatternId {
    let transpose = p.op_call("transpose", &[arg]);
    let layout = p.op_call("layout_transform", &[arg]);
    p.any_of(&[transpose, layout])
}

impl SimplifyTranspose {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let inner = transpose_like(&mut p, x);
        let root = transpose_like(&mut p, inner);
        SimplifyTranspose {
            pattern: p.finish(root),
            x,
        }
    }
}

impl Rewrite for SimplifyTranspose {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, post: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let x = rewritten(nodes, self.x)?.clone();
        let outer = post.as_call()?;
        let inner = outer.args.first()?.as_call()?;
        if let Some((src, dst)) = fold_rank_change(outer, inner).ok()? {
            // A fold back to the layout it started from is no transform.
            if src == dst {
                return Some(x);
            }
            return Some(layout_transform(x, &src, &dst));
        }
        let ndim = tensor_type(pre)?.shape.len();
        let outer_order = axis_order(outer, ndim)?;
        let inner_order = axis_order(inner, ndim)?;
        // Output axis i of the pair is input axis inner[outer[i]].
        let axes: Vec<i64> = outer_order
            .iter()
            .map(|&i| inner_order.get(i).map(|&a| a as i64))
            .collect::<Option<_>>()?;
        Some(op_call_with(
            "transpose",
            vec![x],
            &[("axes", int_array(&axes))],
        ))
    }
}

/// A transpose or same-layout layout transform that leaves every axis in
/// place becomes its input.
pub(super) struct SimplifyNoOpTranspose {
    pattern: Pattern,
    x: PatternId,
}

impl SimplifyNoOpTranspose {
    pub(super) fn new() -> Self {
        let mut p = Pattern::default();
        let x = p.wildcard();
        let root = transpose_like(&mut p, x);
        SimplifyNoOpTranspose {
            pattern: p.finish(root),
            x,
        }
    }
}

impl Rewrite for SimplifyNoOpTranspose {
    fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    fn callback(&self, pre: &Expr, post: &Expr, nodes: &NodeMap) -> Option<Expr> {
        let x = rewritten(nodes, self.x)?;
        let call = post.as_call()?;
        let ndim = tensor_type(pre)?.shape.len();
        if call.callee.as_op()?.name == "layout_transform" {
            let attrs = call.attrs.as_ref()?;
            let src = attrs.get("src_layout")?.as_str()?;
            let dst = attrs.get("dst_layout")?.as_str()?;
            // The same layout on both sides keeps every axis, whatever it is.
            return (src == dst).then(|| x.clone());
        }
        let order = axis_order(call, ndim)?;
        order
            .iter()
            .enumerate()
            .all(|(i, &axis)| i == axis)
            .then(|| x.clone())
    }
}
