//! What the two scale-folding analyses share: the message a consumer sends
//! to its producer ("my input may carry a scale along these axes, and must
//! stay sign-preserving if `require_positive`"), operator layouts, and the
//! shape tests and scale reshaping both rewrites use.
//!
//! A `None` message means "no scale may be folded here". Messages meet by
//! intersecting their (sorted) axes and or-ing `require_positive`; `None`
//! absorbs everything, as one consumer that cannot take a scale forbids it.
//!
//! Every helper reports the situations TVM would abort on as
//! `Unhandled`; the passes then leave the function as it was.

use relay_ir::build::{op_call_with, reshape};
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::{AttrValue, Attrs, Call, Dim, Expr, ExprKind, TensorType};

/// A situation the rewrite does not handle (TVM fails an internal check
/// there); the pass leaves the whole function unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unhandled;

pub(super) type Fold<T> = Result<T, Unhandled>;

/// The scale a consumer can absorb on its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Message {
    /// The axes of the input the scale runs along.
    pub axes: Vec<i64>,
    /// The scale must be non-negative (it is moved across a `relu`).
    pub require_positive: bool,
}

impl Message {
    pub fn new(axes: Vec<i64>, require_positive: bool) -> Message {
        Message {
            axes,
            require_positive,
        }
    }
}

/// The axes both sorted lists contain.
fn intersect_axes(lhs: &[i64], rhs: &[i64]) -> Vec<i64> {
    let (mut i, mut j) = (0, 0);
    let mut common = Vec::new();
    while i < lhs.len() && j < rhs.len() {
        match lhs[i].cmp(&rhs[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common.push(lhs[i]);
                i += 1;
                j += 1;
            }
        }
    }
    common
}

/// The message two consumers of one node agree on.
pub(super) fn intersect(lhs: &Option<Message>, rhs: &Option<Message>) -> Option<Message> {
    let (lhs, rhs) = (lhs.as_ref()?, rhs.as_ref()?);
    Some(Message::new(
        intersect_axes(&lhs.axes, &rhs.axes),
        lhs.require_positive || rhs.require_positive,
    ))
}

/// A data layout such as `NCHW` or `NCHW16c`: primal axes are upper case,
/// sub-axes (split off a primal axis by a factor) lower case.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    axes: Vec<char>,
}

impl Layout {
    /// Parses a layout name; `None` for an empty or malformed one.
    pub fn parse(name: &str) -> Option<Layout> {
        let mut axes = Vec::new();
        let mut factor_digits = 0;
        for ch in name.chars() {
            if ch.is_ascii_digit() {
                factor_digits += 1;
            } else if ch.is_ascii_uppercase() && factor_digits == 0 {
                axes.push(ch);
            } else if ch.is_ascii_lowercase() && factor_digits > 0 {
                axes.push(ch);
                factor_digits = 0;
            } else {
                return None;
            }
        }
        (!axes.is_empty() && factor_digits == 0).then_some(Layout { axes })
    }

    /// The position of `axis` among the layout's axes.
    pub fn index_of(&self, axis: char) -> Option<usize> {
        self.axes.iter().position(|&a| a == axis)
    }

    pub fn ndim(&self) -> usize {
        self.axes.len()
    }
}

/// The checked tensor type of an (original, typed) expression.
pub(super) fn tensor_type(expr: &Expr) -> Fold<&TensorType> {
    expr.checked_type()
        .and_then(|ty| ty.as_tensor())
        .ok_or(Unhandled)
}

/// The operator name of a call to a primitive operator.
pub(super) fn op_name(call: &Call) -> Option<&'static str> {
    call.callee.as_op().map(|op| op.name.as_str())
}

/// The same operator with the same attributes applied to `args`.
pub(super) fn same_op_call(call: &Call, args: Vec<Expr>) -> Expr {
    Expr::call(call.callee.clone(), args, call.attrs.clone(), None)
}

pub(super) fn str_attr<'a>(attrs: &'a Attrs, name: &str) -> Fold<&'a str> {
    attrs.get(name).and_then(AttrValue::as_str).ok_or(Unhandled)
}

pub(super) fn int_attr(attrs: &Attrs, name: &str) -> Fold<i64> {
    attrs.get(name).and_then(AttrValue::as_int).ok_or(Unhandled)
}

fn is_const_one(dim: &Dim) -> bool {
    dim.as_int() == Some(1)
}

fn axis_index(axis: i64) -> Fold<usize> {
    usize::try_from(axis).map_err(|_| Unhandled)
}

/// Whether `rhs` broadcasts onto `lhs` so that only the `lhs_axes` of `lhs`
/// are covered by `rhs` (every other dimension of `rhs` is 1). When
/// `rhs_value` is given it is reshaped to a tensor over exactly those axes:
/// the unit dimensions squeezed away, or a scalar expanded and repeated.
/// TVM's `MatchBroadcastToLeftAxes`, including its use of the first axis's
/// extent for every repeat.
pub(super) fn match_broadcast_to_left_axes(
    lhs: &TensorType,
    rhs: &TensorType,
    lhs_axes: &[i64],
    rhs_value: Option<&mut Expr>,
) -> Fold<bool> {
    if lhs.shape.len() < rhs.shape.len() {
        return Ok(false);
    }
    let base = lhs.shape.len() - rhs.shape.len();
    if rhs.shape.is_empty() && !lhs_axes.is_empty() {
        if let Some(value) = rhs_value {
            let extent = lhs
                .shape
                .get(axis_index(lhs_axes[0])?)
                .and_then(Dim::as_int)
                .ok_or(Unhandled)?;
            let mut scale = op_call_with(
                "expand_dims",
                vec![value.clone()],
                &[
                    ("axis", AttrValue::Int(0)),
                    ("num_newaxis", AttrValue::Int(lhs_axes.len() as i64)),
                ],
            );
            for i in 0..lhs_axes.len() {
                scale = op_call_with(
                    "repeat",
                    vec![scale],
                    &[
                        ("repeats", int32_imm(extent)),
                        ("axis", int32_imm(i as i64)),
                    ],
                );
            }
            *value = scale;
            return Ok(true);
        }
    }
    let mut squeezed = Vec::new();
    let mut next_axis = 0;
    for (i, dim) in lhs.shape.iter().enumerate() {
        if next_axis < lhs_axes.len() && i as i64 == lhs_axes[next_axis] {
            if i < base || *dim != rhs.shape[i - base] {
                return Ok(false);
            }
            next_axis += 1;
        } else if i >= base {
            if !is_const_one(&rhs.shape[i - base]) {
                return Ok(false);
            }
            squeezed.push((i - base) as i64);
        }
    }
    if let Some(value) = rhs_value {
        if !squeezed.is_empty() {
            *value = op_call_with(
                "squeeze",
                vec![value.clone()],
                &[("axis", relay_ir::build::int_array(&squeezed))],
            );
        }
    }
    Ok(true)
}

fn int32_imm(value: i64) -> AttrValue {
    AttrValue::int_imm(value, DataType::INT32)
}

/// Whether `expr` is a constant with no negative element, possibly behind
/// shape-only operators (TVM's `IsAllPositiveConstant`; only the dtypes it
/// inspects count).
pub(super) fn is_all_positive_constant(expr: &Expr) -> bool {
    let mut current = expr.clone();
    loop {
        let next = match current.kind() {
            ExprKind::Constant(data) => {
                let dtype = data.dtype;
                let inspected = dtype.lanes == 1
                    && matches!(
                        (dtype.code, dtype.bits),
                        (TypeCode::Float, 32 | 64)
                            | (TypeCode::Int, 8 | 32)
                            | (TypeCode::UInt, 8 | 32)
                    );
                if !inspected {
                    return false;
                }
                return match data.to_f64_vec() {
                    Ok(values) => values.iter().all(|&v| v >= 0.0),
                    Err(_) => false,
                };
            }
            ExprKind::Call(call) => {
                let peelable = matches!(
                    op_name(call),
                    Some("expand_dims" | "reshape" | "transpose" | "squeeze" | "repeat")
                );
                match call.args.first() {
                    Some(arg) if peelable => arg.clone(),
                    _ => return false,
                }
            }
            _ => return false,
        };
        current = next;
    }
}

/// `scale` reshaped to the rank of `shape`, keeping the extents of `axes`
/// and 1 elsewhere; `None` when one of those extents is not static.
pub(super) fn reshape_to_match_axis(scale: Expr, shape: &[Dim], axes: &[i64]) -> Option<Expr> {
    let mut new_shape = Vec::with_capacity(shape.len());
    for (i, dim) in shape.iter().enumerate() {
        if axes.contains(&(i as i64)) {
            new_shape.push(dim.as_int()?);
        } else {
            new_shape.push(1);
        }
    }
    Some(reshape(scale, &new_shape))
}

/// A reshape for several axes, unit axes inserted for one.
pub(super) fn reshape_or_expand_to_match_axis(
    scale: Expr,
    shape: &[Dim],
    axes: &[i64],
) -> Option<Expr> {
    if axes.len() > 1 {
        reshape_to_match_axis(scale, shape, axes)
    } else {
        Some(relay_ir::build::expand_bias_to_match_axis(
            scale,
            shape.len(),
            axes,
        ))
    }
}

/// The convolution facts both analyses use.
pub(super) struct ConvInfo {
    pub kernel_layout: Layout,
    /// `O` and `o`, `I` and `i` positions in the kernel layout.
    pub big_ko: Option<usize>,
    pub small_ko: Option<usize>,
    pub big_ki: Option<usize>,
    pub small_ki: Option<usize>,
    pub groups: i64,
    pub is_depthwise: bool,
}

impl ConvInfo {
    /// Reads a `nn.conv2d` / `nn.conv3d` call (original, typed).
    pub fn of(call: &Call) -> Fold<ConvInfo> {
        let attrs = call.attrs.as_ref().ok_or(Unhandled)?;
        let kernel_layout = Layout::parse(str_attr(attrs, "kernel_layout")?).ok_or(Unhandled)?;
        let groups = int_attr(attrs, "groups")?;
        let is_conv2d = op_name(call) == Some("nn.conv2d");
        let weight = tensor_type(call.args.get(1).ok_or(Unhandled)?)?;
        let is_depthwise = is_depthwise(&kernel_layout, &weight.shape, groups, is_conv2d)?;
        Ok(ConvInfo {
            big_ko: kernel_layout.index_of('O'),
            small_ko: kernel_layout.index_of('o'),
            big_ki: kernel_layout.index_of('I'),
            small_ki: kernel_layout.index_of('i'),
            kernel_layout,
            groups,
            is_depthwise,
        })
    }

    /// The channel axes of a data (or output) layout the scale can run
    /// along, when the convolution can absorb one: `C` (and `c` for blocked
    /// layouts, which the kernel must block too).
    pub fn foldable_channel_axes(&self, data_layout: &Layout) -> Fold<Option<Vec<i64>>> {
        let c_big = data_layout.index_of('C').ok_or(Unhandled)?;
        let c_small = data_layout.index_of('c');
        if self.groups != 1 && !self.is_depthwise {
            return Ok(None);
        }
        let simple = self.small_ko.is_none() && self.small_ki.is_none() && c_small.is_none();
        let blocked = self.small_ko.is_some() && self.small_ki.is_some() && c_small.is_some();
        if !simple && !blocked {
            return Ok(None);
        }
        let mut axes = vec![c_big as i64];
        axes.extend(c_small.map(|c| c as i64));
        Ok(Some(axes))
    }

    /// Plain `OIHW`-like kernel (no sub-axes), or fully blocked.
    pub fn kernel_is_simple(&self) -> Fold<bool> {
        let simple = self.small_ko.is_none() && self.small_ki.is_none() && self.big_ki.is_some();
        let blocking = self.small_ko.is_some() && self.small_ki.is_some() && self.big_ki.is_some();
        if !simple && !blocking {
            return Err(Unhandled);
        }
        if self.groups != 1 && !self.is_depthwise {
            return Err(Unhandled);
        }
        Ok(simple)
    }
}

/// Whether the kernel, seen in `OIHW` (`OIDHW`) order, has `groups` output
/// channels and one input channel per group (TVM's `IsDepthwiseConv`).
fn is_depthwise(kernel_layout: &Layout, shape: &[Dim], groups: i64, is_conv2d: bool) -> Fold<bool> {
    if shape.len() != kernel_layout.ndim() {
        return Err(Unhandled);
    }
    let extent = |primal: char| -> Fold<Option<i64>> {
        let outer = kernel_layout.index_of(primal).ok_or(Unhandled)?;
        let Some(mut size) = shape[outer].as_int() else {
            return Ok(None);
        };
        if let Some(inner) = kernel_layout.index_of(primal.to_ascii_lowercase()) {
            match shape[inner].as_int() {
                Some(factor) => size *= factor,
                None => return Ok(None),
            }
        }
        Ok(Some(size))
    };
    // Every spatial axis of the target layout must exist for the mapping.
    let spatial: &[char] = if is_conv2d {
        &['H', 'W']
    } else {
        &['D', 'H', 'W']
    };
    if spatial.iter().any(|&a| kernel_layout.index_of(a).is_none()) {
        return Err(Unhandled);
    }
    Ok(extent('O')? == Some(groups) && extent('I')? == Some(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_layouts_index_their_axes() {
        let layout = Layout::parse("NCHW16c").unwrap();
        assert_eq!(layout.ndim(), 5);
        assert_eq!(layout.index_of('C'), Some(1));
        assert_eq!(layout.index_of('c'), Some(4));
        assert!(Layout::parse("").is_none());
        assert!(Layout::parse("NCHW16").is_none());
    }

    #[test]
    fn messages_meet_on_common_axes() {
        let a = Some(Message::new(vec![1, 4], false));
        let b = Some(Message::new(vec![1], true));
        assert_eq!(intersect(&a, &b), Some(Message::new(vec![1], true)));
        assert_eq!(intersect(&a, &None), None);
    }
}
