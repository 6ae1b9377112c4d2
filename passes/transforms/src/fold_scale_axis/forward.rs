//! `ForwardFoldScaleAxis`: moves a per-channel `multiply` that feeds a
//! convolution or dense layer into that layer's weight.
//!
//! Two phases, as in TVM:
//!
//! 1. Preparation walks the graph from the root towards the inputs (every
//!    consumer before its producers) and tells each node which scale its
//!    consumers could absorb: a conv asks for its data's channel axes, a
//!    dense for axis 1, `relu` passes its request on but needs the scale to
//!    be non-negative, `add`/`subtract` pass it to the side that broadcasts
//!    over the other. A node used by several consumers gets the meet of
//!    their requests; anything else consuming a node forbids folding.
//! 2. The rewrite goes bottom-up. A `multiply` whose node was asked for a
//!    scale, and whose other operand matches those axes (and is a
//!    non-negative constant when required), becomes a pending *scaled*
//!    value: its data plus the detached scale. `relu` and `add`/`subtract`
//!    carry the pending scale through (the addend is divided by it); the
//!    conv/dense multiplies its weight by the scale and drops it.
//!
//! Because every consumer of a scaled node agreed to take the scale, a
//! pending scale never needs to be materialised again; when that would
//! happen anyway (TVM aborts there), the function is left unchanged.

use super::axes::{
    intersect, is_all_positive_constant, match_broadcast_to_left_axes, op_name,
    reshape_or_expand_to_match_axis, reshape_to_match_axis, same_op_call, str_attr, tensor_type,
    ConvInfo, Fold, Layout, Message, Unhandled,
};
use relay_ir::build::{expand_bias_to_match_axis, op_call};
use relay_ir::rewrite::{children, post_order, with_children};
use relay_ir::{Call, Expr, ExprKind, Function};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

/// Folds the scales of `function` forward into its convolutions and dense
/// layers; the function itself when nothing can be folded.
pub fn forward_fold_scale_axis(function: &Function) -> Function {
    let root = function.expr();
    let order = post_order(root);
    let messages = prepare(root, &order);
    if !messages.values().any(Option::is_some) {
        return function.clone();
    }
    match rewrite(root, &order, &messages) {
        Ok(new_root) => new_root.as_function().unwrap_or_else(|| function.clone()),
        Err(Unhandled) => function.clone(),
    }
}

type Messages = HashMap<usize, Option<Message>>;

/// Records that one consumer of `node` can absorb `message`.
fn update(messages: &mut Messages, node: &Expr, message: Option<Message>) {
    messages
        .entry(node.addr())
        .and_modify(|existing| *existing = intersect(existing, &message))
        .or_insert(message);
}

/// Phase 1: the scale each node's consumers could absorb.
fn prepare(root: &Expr, order: &[Expr]) -> Messages {
    let mut messages = Messages::default();
    update(&mut messages, root, None);
    // Reversed post-order visits every consumer before its producers, so a
    // node's message is complete when it is propagated further.
    for node in order.iter().rev() {
        match node.kind() {
            ExprKind::Call(call) => {
                let out_message = messages.get(&node.addr()).cloned().flatten();
                let in_messages =
                    prep_call(call, out_message).unwrap_or_else(|_| vec![None; call.args.len()]);
                for (arg, message) in call.args.iter().zip(in_messages) {
                    update(&mut messages, arg, message);
                }
            }
            ExprKind::Let { value, body, .. } => {
                update(&mut messages, value, None);
                update(&mut messages, body, None);
            }
            ExprKind::Function(data) => update(&mut messages, &data.body, None),
            ExprKind::Tuple(fields) => {
                for field in fields {
                    update(&mut messages, field, None);
                }
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                for part in [cond, then_branch, else_branch] {
                    update(&mut messages, part, None);
                }
            }
            _ => {}
        }
    }
    messages
}

/// The messages a call sends to its arguments, given what its consumers
/// asked of it. Operators without a rule forbid folding into their inputs.
fn prep_call(call: &Call, out_message: Option<Message>) -> Fold<Vec<Option<Message>>> {
    let none = vec![None; call.args.len()];
    let Some(name) = op_name(call) else {
        return Ok(none);
    };
    let messages = match name {
        "nn.relu" | "nn.leaky_relu" => {
            vec![out_message.map(|m| Message::new(m.axes, true))]
        }
        "add" | "subtract" => {
            let (lhs, rhs) = binary_types(call)?;
            match out_message {
                Some(m) if match_broadcast_to_left_axes(lhs, rhs, &m.axes, None)? => {
                    vec![Some(m), None]
                }
                Some(m) if match_broadcast_to_left_axes(rhs, lhs, &m.axes, None)? => {
                    vec![None, Some(m)]
                }
                _ => vec![None, None],
            }
        }
        "nn.conv2d" | "nn.conv3d" => {
            let info = ConvInfo::of(call)?;
            let attrs = call.attrs.as_ref().ok_or(Unhandled)?;
            let data_layout = Layout::parse(str_attr(attrs, "data_layout")?).ok_or(Unhandled)?;
            let axes = info.foldable_channel_axes(&data_layout)?;
            vec![axes.map(|axes| Message::new(axes, false)), None]
        }
        "nn.dense" => vec![Some(Message::new(vec![1], false)), None],
        _ => return Ok(none),
    };
    if messages.len() != call.args.len() {
        return Err(Unhandled);
    }
    Ok(messages)
}

fn binary_types(call: &Call) -> Fold<(&relay_ir::TensorType, &relay_ir::TensorType)> {
    match call.args.as_slice() {
        [lhs, rhs] => Ok((tensor_type(lhs)?, tensor_type(rhs)?)),
        _ => Err(Unhandled),
    }
}

/// A rewritten node: an ordinary expression, or one whose scale along
/// `axes` has been detached and is still owed to its consumers.
#[derive(Clone)]
enum Rewritten {
    Plain(Expr),
    Scaled {
        value: Expr,
        axes: Vec<i64>,
        scale: Expr,
    },
}

impl Rewritten {
    /// The expression, for a consumer that cannot take a pending scale.
    fn realize(&self) -> Fold<Expr> {
        match self {
            Rewritten::Plain(expr) => Ok(expr.clone()),
            Rewritten::Scaled { .. } => Err(Unhandled),
        }
    }
}

/// Phase 2: the bottom-up rewrite.
fn rewrite(root: &Expr, order: &[Expr], messages: &Messages) -> Fold<Expr> {
    let mut memo: HashMap<usize, Rewritten> = HashMap::default();
    let lookup = |memo: &HashMap<usize, Rewritten>, expr: &Expr| {
        memo.get(&expr.addr())
            .cloned()
            .unwrap_or_else(|| Rewritten::Plain(expr.clone()))
    };
    for node in order {
        let result = match node.kind() {
            ExprKind::Call(call) => {
                let callee = lookup(&memo, &call.callee).realize()?;
                let new_args: Vec<Rewritten> =
                    call.args.iter().map(|arg| lookup(&memo, arg)).collect();
                let message = messages.get(&node.addr()).cloned().flatten();
                match rewrite_call(call, &new_args, message)? {
                    Some(rewritten) => rewritten,
                    None => {
                        let mut new_children = vec![callee];
                        for arg in &new_args {
                            new_children.push(arg.realize()?);
                        }
                        Rewritten::Plain(with_children(node, &new_children))
                    }
                }
            }
            ExprKind::TupleGetItem { tuple, index } => {
                // A projection out of a literal tuple is replaced by the field.
                let new_tuple = lookup(&memo, tuple).realize()?;
                match new_tuple.kind() {
                    ExprKind::Tuple(fields) => {
                        Rewritten::Plain(fields.get(*index).ok_or(Unhandled)?.clone())
                    }
                    _ => Rewritten::Plain(with_children(node, &[new_tuple])),
                }
            }
            _ => {
                let new_children = children(node)
                    .into_iter()
                    .map(|child| lookup(&memo, child).realize())
                    .collect::<Fold<Vec<Expr>>>()?;
                Rewritten::Plain(with_children(node, &new_children))
            }
        };
        memo.insert(node.addr(), result);
    }
    lookup(&memo, root).realize()
}

/// The operator rules; `None` when the call stays as it is.
fn rewrite_call(
    call: &Call,
    new_args: &[Rewritten],
    message: Option<Message>,
) -> Fold<Option<Rewritten>> {
    let Some(name) = op_name(call) else {
        return Ok(None);
    };
    match name {
        "nn.relu" | "nn.leaky_relu" => match new_args {
            [Rewritten::Scaled { value, axes, scale }] => Ok(Some(Rewritten::Scaled {
                value: same_op_call(call, vec![value.clone()]),
                axes: axes.clone(),
                scale: scale.clone(),
            })),
            _ => Ok(None),
        },
        "add" | "subtract" => rewrite_add_sub(call, new_args),
        "multiply" => rewrite_multiply(call, new_args, message),
        "nn.conv2d" | "nn.conv3d" => rewrite_conv(call, new_args),
        "nn.dense" => match new_args {
            [Rewritten::Scaled { value, scale, .. }, Rewritten::Plain(weight)] => {
                let weight = op_call("multiply", vec![weight.clone(), scale.clone()]);
                Ok(Some(Rewritten::Plain(same_op_call(
                    call,
                    vec![value.clone(), weight],
                ))))
            }
            [Rewritten::Scaled { .. }, Rewritten::Scaled { .. }] => Err(Unhandled),
            _ => Ok(None),
        },
        _ => Ok(None),
    }
}

/// `add`/`subtract` with one scaled operand: the other operand is divided
/// by the scale (shaped like the scaled side) and the scale stays pending.
fn rewrite_add_sub(call: &Call, new_args: &[Rewritten]) -> Fold<Option<Rewritten>> {
    let (lhs_type, rhs_type) = binary_types(call)?;
    let [lhs, rhs] = new_args else {
        return Err(Unhandled);
    };
    let (scaled_index, value, axes, scale, other, scaled_type, other_type) = match (lhs, rhs) {
        (Rewritten::Plain(_), Rewritten::Plain(_)) => return Ok(None),
        (Rewritten::Scaled { .. }, Rewritten::Scaled { .. }) => return Err(Unhandled),
        (Rewritten::Scaled { value, axes, scale }, Rewritten::Plain(other)) => {
            (0, value, axes, scale, other, lhs_type, rhs_type)
        }
        (Rewritten::Plain(other), Rewritten::Scaled { value, axes, scale }) => {
            (1, value, axes, scale, other, rhs_type, lhs_type)
        }
    };
    if !match_broadcast_to_left_axes(scaled_type, other_type, axes, None)? {
        return Err(Unhandled);
    }
    let shaped_scale = reshape_or_expand_to_match_axis(scale.clone(), &scaled_type.shape, axes)
        .ok_or(Unhandled)?;
    let divided = op_call("divide", vec![other.clone(), shaped_scale]);
    let args = if scaled_index == 0 {
        vec![value.clone(), divided]
    } else {
        vec![divided, value.clone()]
    };
    Ok(Some(Rewritten::Scaled {
        value: same_op_call(call, args),
        axes: axes.clone(),
        scale: scale.clone(),
    }))
}

/// A `multiply` asked for a scale detaches its operand that matches the
/// requested axes (checking the right-hand side first).
fn rewrite_multiply(
    call: &Call,
    new_args: &[Rewritten],
    message: Option<Message>,
) -> Fold<Option<Rewritten>> {
    let Some(message) = message else {
        return Ok(None);
    };
    if message.axes.is_empty() {
        return Err(Unhandled);
    }
    let (lhs_type, rhs_type) = binary_types(call)?;
    let [Rewritten::Plain(lhs), Rewritten::Plain(rhs)] = new_args else {
        return Err(Unhandled);
    };
    let (mut lhs, mut rhs) = (lhs.clone(), rhs.clone());
    let acceptable = |scale: &Expr| !message.require_positive || is_all_positive_constant(scale);
    // TVM reshapes the right operand while testing it and keeps that
    // reshaped value even when it falls through to the second test.
    if match_broadcast_to_left_axes(lhs_type, rhs_type, &message.axes, Some(&mut rhs))?
        && acceptable(&rhs)
    {
        return Ok(Some(Rewritten::Scaled {
            value: lhs,
            axes: message.axes,
            scale: rhs,
        }));
    }
    if match_broadcast_to_left_axes(rhs_type, lhs_type, &message.axes, Some(&mut lhs))?
        && acceptable(&lhs)
    {
        return Ok(Some(Rewritten::Scaled {
            value: rhs,
            axes: message.axes,
            scale: lhs,
        }));
    }
    Ok(None)
}

/// A convolution with scaled data multiplies its weight by the scale along
/// the kernel's input-channel axes (output-channel axes when depthwise).
fn rewrite_conv(call: &Call, new_args: &[Rewritten]) -> Fold<Option<Rewritten>> {
    let (data, scale, weight) = match new_args {
        [Rewritten::Scaled { value, scale, .. }, Rewritten::Plain(weight)] => {
            (value, scale, weight)
        }
        [Rewritten::Scaled { .. }, Rewritten::Scaled { .. }] => return Err(Unhandled),
        _ => return Ok(None),
    };
    let info = ConvInfo::of(call)?;
    let attrs = call.attrs.as_ref().ok_or(Unhandled)?;
    let data_layout = Layout::parse(str_attr(attrs, "data_layout")?).ok_or(Unhandled)?;
    data_layout.index_of('C').ok_or(Unhandled)?;
    let is_simple = info.kernel_is_simple()?;
    let (big, small) = if info.is_depthwise {
        (info.big_ko, info.small_ko)
    } else {
        (info.big_ki, info.small_ki)
    };
    let big = big.ok_or(Unhandled)? as i64;
    let weight_scale = if is_simple {
        expand_bias_to_match_axis(scale.clone(), info.kernel_layout.ndim(), &[big])
    } else {
        // The weight's type is needed; only the original weight has one.
        let original_weight = call.args.get(1).ok_or(Unhandled)?;
        if !original_weight.ptr_eq(weight) {
            return Err(Unhandled);
        }
        let small = small.ok_or(Unhandled)? as i64;
        reshape_to_match_axis(
            scale.clone(),
            &tensor_type(original_weight)?.shape,
            &[big, small],
        )
        .ok_or(Unhandled)?
    };
    let weight = op_call("multiply", vec![weight.clone(), weight_scale]);
    Ok(Some(Rewritten::Plain(same_op_call(
        call,
        vec![data.clone(), weight],
    ))))
}
