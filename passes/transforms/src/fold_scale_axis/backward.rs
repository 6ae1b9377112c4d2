//! `BackwardFoldScaleAxis`: moves a per-channel `multiply` that consumes a
//! convolution or dense layer into that layer's weight (scaling its output
//! channels).
//!
//! Two phases, as in TVM:
//!
//! 1. Preparation goes bottom-up. A conv (or dense) offers its output
//!    channel axes; `relu` passes the offer on, requiring a non-negative
//!    scale; `add`/`subtract`/`bias_add` pass it on when their other operand
//!    broadcasts along those axes (or both sides carry the same offer). Only
//!    a call used exactly once may offer anything, so the scale never
//!    reaches a value someone else also reads.
//! 2. The rewrite goes bottom-up again. A `multiply` whose operand carries
//!    an offer, and whose other operand matches the axes (a non-negative
//!    constant when required), is replaced by that operand rebuilt with the
//!    scale pushed down: through `relu`, into both sides of an `add` (or its
//!    addend multiplied), into `bias_add`'s bias, and finally into the
//!    weight. Rebuilt nodes replace the memoised rewrite of their originals,
//!    as in TVM.

use super::axes::{
    int_attr, is_all_positive_constant, match_broadcast_to_left_axes, op_name,
    reshape_or_expand_to_match_axis, reshape_to_match_axis, same_op_call, str_attr, tensor_type,
    ConvInfo, Fold, Layout, Message, Unhandled,
};
use relay_ir::build::{expand_bias_to_match_axis, op_call};
use relay_ir::rewrite::{children, post_order, with_children};
use relay_ir::{Call, Expr, ExprKind, Function};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

/// How deep the scale may be pushed through a chain of operators; beyond
/// it the function is left unchanged rather than risk the stack.
const MAX_PUSH_DEPTH: usize = 10_000;

/// Folds the scales of `function` backward into its convolutions and dense
/// layers; the function itself when nothing can be folded.
pub fn backward_fold_scale_axis(function: &Function) -> Function {
    let root = function.expr();
    let order = post_order(root);
    let messages = match prepare(root, &order) {
        Ok(messages) => messages,
        Err(Unhandled) => return function.clone(),
    };
    if messages.is_empty() {
        return function.clone();
    }
    let mut transformer = Transformer {
        messages,
        memo: HashMap::default(),
    };
    match transformer.run(root, &order) {
        Ok(new_root) => new_root.as_function().unwrap_or_else(|| function.clone()),
        Err(Unhandled) => function.clone(),
    }
}

/// How many times each node is referenced (the root once).
fn reference_counts(root: &Expr, order: &[Expr]) -> HashMap<usize, usize> {
    let mut counts: HashMap<usize, usize> = HashMap::default();
    *counts.entry(root.addr()).or_default() += 1;
    for node in order {
        for child in children(node) {
            *counts.entry(child.addr()).or_default() += 1;
        }
    }
    counts
}

/// Phase 1: the offers of the single-use calls.
fn prepare(root: &Expr, order: &[Expr]) -> Fold<HashMap<usize, Message>> {
    let counts = reference_counts(root, order);
    let mut messages: HashMap<usize, Message> = HashMap::default();
    for node in order {
        let ExprKind::Call(call) = node.kind() else {
            continue;
        };
        if !has_rule(call) || counts.get(&node.addr()) != Some(&1) {
            continue;
        }
        let in_messages: Vec<Option<&Message>> = call
            .args
            .iter()
            .map(|arg| messages.get(&arg.addr()))
            .collect();
        if let Some(message) = prep_call(call, &in_messages)? {
            messages.insert(node.addr(), message);
        }
    }
    Ok(messages)
}

fn has_rule(call: &Call) -> bool {
    matches!(
        op_name(call),
        Some(
            "nn.relu"
                | "nn.leaky_relu"
                | "add"
                | "subtract"
                | "nn.conv2d"
                | "nn.conv3d"
                | "nn.bias_add"
                | "nn.dense"
        )
    )
}

fn prep_call(call: &Call, in_messages: &[Option<&Message>]) -> Fold<Option<Message>> {
    let first = in_messages.first().copied().flatten();
    match op_name(call) {
        Some("nn.relu" | "nn.leaky_relu") => Ok(first.map(|m| Message::new(m.axes.clone(), true))),
        Some("add" | "subtract") => {
            let (lhs, rhs) = binary_types(call)?;
            let second = in_messages.get(1).copied().flatten();
            if let Some(m) = first {
                if match_broadcast_to_left_axes(lhs, rhs, &m.axes, None)? {
                    return Ok(Some(m.clone()));
                }
            }
            if let Some(m) = second {
                if match_broadcast_to_left_axes(rhs, lhs, &m.axes, None)? {
                    return Ok(Some(m.clone()));
                }
            }
            match (first, second) {
                (Some(l), Some(r)) if l.axes == r.axes && lhs.shape == rhs.shape => {
                    Ok(Some(l.clone()))
                }
                _ => Ok(None),
            }
        }
        Some("nn.conv2d" | "nn.conv3d") => {
            let info = ConvInfo::of(call)?;
            let out_layout = output_layout(call)?;
            Ok(info
                .foldable_channel_axes(&out_layout)?
                .map(|axes| Message::new(axes, false)))
        }
        Some("nn.bias_add") => {
            let attrs = call.attrs.as_ref().ok_or(Unhandled)?;
            let axis = int_attr(attrs, "axis")?;
            Ok(first
                .filter(|m| m.axes.len() == 1 && m.axes[0] == axis)
                .cloned())
        }
        Some("nn.dense") => Ok(Some(Message::new(vec![1], false))),
        _ => Ok(None),
    }
}

/// The conv's output layout (its data layout when none is given).
fn output_layout(call: &Call) -> Fold<Layout> {
    let attrs = call.attrs.as_ref().ok_or(Unhandled)?;
    let out = str_attr(attrs, "out_layout")?;
    let name = if out.is_empty() {
        str_attr(attrs, "data_layout")?
    } else {
        out
    };
    Layout::parse(name).ok_or(Unhandled)
}

fn binary_types(call: &Call) -> Fold<(&relay_ir::TensorType, &relay_ir::TensorType)> {
    match call.args.as_slice() {
        [lhs, rhs] => Ok((tensor_type(lhs)?, tensor_type(rhs)?)),
        _ => Err(Unhandled),
    }
}

/// Phase 2 state: the offers and the rewrite of every visited node.
struct Transformer {
    messages: HashMap<usize, Message>,
    memo: HashMap<usize, Expr>,
}

impl Transformer {
    fn run(&mut self, root: &Expr, order: &[Expr]) -> Fold<Expr> {
        for node in order {
            let result = if let ExprKind::Call(_) = node.kind() {
                self.transform(node, None, 0)?
            } else {
                self.rebuild(node)
            };
            self.memo.insert(node.addr(), result);
        }
        Ok(self.rewritten(root))
    }

    /// The memoised rewrite of a visited node.
    fn rewritten(&self, expr: &Expr) -> Expr {
        self.memo
            .get(&expr.addr())
            .cloned()
            .unwrap_or_else(|| expr.clone())
    }

    /// The node with its children's rewrites.
    fn rebuild(&self, node: &Expr) -> Expr {
        let new_children: Vec<Expr> = children(node)
            .into_iter()
            .map(|child| self.rewritten(child))
            .collect();
        with_children(node, &new_children)
    }

    fn message(&self, expr: &Expr) -> Option<Message> {
        self.messages.get(&expr.addr()).cloned()
    }

    /// Rewrites `expr`, pushing `scale` (along `message`'s axes) into it
    /// when a message is given.
    fn transform(
        &mut self,
        expr: &Expr,
        pushed: Option<(&Message, &Expr)>,
        depth: usize,
    ) -> Fold<Expr> {
        if depth > MAX_PUSH_DEPTH {
            return Err(Unhandled);
        }
        let ExprKind::Call(call) = expr.kind() else {
            return match pushed {
                Some(_) => Err(Unhandled),
                None => Ok(self.rewritten(expr)),
            };
        };
        if pushed.is_none() {
            if let Some(done) = self.memo.get(&expr.addr()) {
                return Ok(done.clone());
            }
        }
        let result = match op_name(call) {
            Some("nn.relu" | "nn.leaky_relu") => match pushed {
                None => self.rebuild(expr),
                Some((message, scale)) => {
                    let arg = call.args.first().ok_or(Unhandled)?;
                    let input = self.transform(arg, Some((message, scale)), depth + 1)?;
                    same_op_call(call, vec![input])
                }
            },
            Some("add" | "subtract") => match pushed {
                None => self.rebuild(expr),
                Some(pushed) => self.transform_add_sub(expr, call, pushed, depth)?,
            },
            Some("multiply") => {
                if pushed.is_some() {
                    return Err(Unhandled);
                }
                self.transform_multiply(expr, call, depth)?
            }
            Some("nn.conv2d" | "nn.conv3d") => match pushed {
                None => self.rebuild(expr),
                Some((message, scale)) => self.transform_conv(expr, call, message, scale)?,
            },
            Some("nn.bias_add") => match pushed {
                None => self.rebuild(expr),
                Some((message, scale)) => {
                    let [data, bias] = call.args.as_slice() else {
                        return Err(Unhandled);
                    };
                    match self.message(data) {
                        Some(m) if m.axes == message.axes => {}
                        _ => return Err(Unhandled),
                    }
                    let data = self.transform(data, Some((message, scale)), depth + 1)?;
                    let bias = self.transform(bias, None, depth + 1)?;
                    let bias = op_call("multiply", vec![bias, scale.clone()]);
                    same_op_call(call, vec![data, bias])
                }
            },
            Some("nn.dense") => match pushed {
                None => self.rebuild(expr),
                Some((_, scale)) => {
                    let [data, weight] = call.args.as_slice() else {
                        return Err(Unhandled);
                    };
                    let data = self.transform(data, None, depth + 1)?;
                    let weight = self.transform(weight, None, depth + 1)?;
                    let weight_scale = expand_bias_to_match_axis(scale.clone(), 2, &[0]);
                    let weight = op_call("multiply", vec![weight, weight_scale]);
                    same_op_call(call, vec![data, weight])
                }
            },
            _ => match pushed {
                Some(_) => return Err(Unhandled),
                None => self.rebuild(expr),
            },
        };
        self.memo.insert(expr.addr(), result.clone());
        Ok(result)
    }

    /// `add`/`subtract`: the scale goes into each side carrying an offer;
    /// a side without one is multiplied by the scale shaped like the other.
    fn transform_add_sub(
        &mut self,
        expr: &Expr,
        call: &Call,
        (message, scale): (&Message, &Expr),
        depth: usize,
    ) -> Fold<Expr> {
        let (lhs_type, rhs_type) = binary_types(call)?;
        let [lhs, rhs] = call.args.as_slice() else {
            return Err(Unhandled);
        };
        let pushed = Some((message, scale));
        match (self.message(lhs), self.message(rhs)) {
            (Some(l), Some(r)) => {
                if l.axes != r.axes || message.axes != l.axes {
                    return Err(Unhandled);
                }
                let new_lhs = self.transform(lhs, pushed, depth + 1)?;
                let new_rhs = self.transform(rhs, pushed, depth + 1)?;
                Ok(same_op_call(call, vec![new_lhs, new_rhs]))
            }
            (Some(l), None) => {
                if message.axes != l.axes {
                    return Err(Unhandled);
                }
                let new_lhs = self.transform(lhs, pushed, depth + 1)?;
                let new_rhs = self.transform(rhs, None, depth + 1)?;
                match reshape_or_expand_to_match_axis(scale.clone(), &lhs_type.shape, &message.axes)
                {
                    // The scaled side's memo entry has already been
                    // replaced; TVM's fallback rebuild sees it too.
                    None => Ok(self.rebuild(expr)),
                    Some(rhs_scale) => {
                        let new_rhs = op_call("multiply", vec![new_rhs, rhs_scale]);
                        Ok(same_op_call(call, vec![new_lhs, new_rhs]))
                    }
                }
            }
            (None, Some(r)) => {
                if message.axes != r.axes {
                    return Err(Unhandled);
                }
                let new_lhs = self.transform(lhs, None, depth + 1)?;
                let new_rhs = self.transform(rhs, pushed, depth + 1)?;
                match reshape_or_expand_to_match_axis(scale.clone(), &rhs_type.shape, &message.axes)
                {
                    None => Ok(self.rebuild(expr)),
                    Some(lhs_scale) => {
                        let new_lhs = op_call("multiply", vec![new_lhs, lhs_scale]);
                        Ok(same_op_call(call, vec![new_lhs, new_rhs]))
                    }
                }
            }
            (None, None) => Err(Unhandled),
        }
    }

    /// A `multiply` of an offering operand by a matching scale becomes the
    /// operand with the scale pushed in (the left operand is tried only).
    fn transform_multiply(&mut self, expr: &Expr, call: &Call, depth: usize) -> Fold<Expr> {
        let (lhs_type, rhs_type) = binary_types(call)?;
        let [lhs, rhs] = call.args.as_slice() else {
            return Err(Unhandled);
        };
        if let Some(message) = self.message(lhs) {
            if message.axes.is_empty() {
                return Err(Unhandled);
            }
            let mut scale = rhs.clone();
            if match_broadcast_to_left_axes(lhs_type, rhs_type, &message.axes, Some(&mut scale))?
                && (!message.require_positive || is_all_positive_constant(&scale))
            {
                return self.transform(lhs, Some((&message, &scale)), depth + 1);
            }
        } else if let Some(message) = self.message(rhs) {
            if message.axes.is_empty() {
                return Err(Unhandled);
            }
            let mut scale = lhs.clone();
            if match_broadcast_to_left_axes(rhs_type, lhs_type, &message.axes, Some(&mut scale))?
                && (!message.require_positive || is_all_positive_constant(&scale))
            {
                return self.transform(rhs, Some((&message, &scale)), depth + 1);
            }
        }
        Ok(self.rebuild(expr))
    }

    /// A convolution's weight is multiplied by the scale along its output
    /// channel axes.
    fn transform_conv(
        &mut self,
        expr: &Expr,
        call: &Call,
        message: &Message,
        scale: &Expr,
    ) -> Fold<Expr> {
        let _ = message;
        let info = ConvInfo::of(call)?;
        output_layout(call)?.index_of('C').ok_or(Unhandled)?;
        let is_simple = info.kernel_is_simple()?;
        let [data, weight] = call.args.as_slice() else {
            return Err(Unhandled);
        };
        let new_data = self.rewritten(data);
        let new_weight = self.rewritten(weight);
        let big_ko = info.big_ko.ok_or(Unhandled)? as i64;
        let weight_scale = if is_simple {
            expand_bias_to_match_axis(scale.clone(), info.kernel_layout.ndim(), &[big_ko])
        } else {
            // The weight's type is needed; only an unchanged weight has one.
            if !new_weight.ptr_eq(weight) {
                return Err(Unhandled);
            }
            let small_ko = info.small_ko.ok_or(Unhandled)? as i64;
            match reshape_to_match_axis(
                scale.clone(),
                &tensor_type(weight)?.shape,
                &[big_ko, small_ko],
            ) {
                Some(weight_scale) => weight_scale,
                None => return Ok(self.rebuild(expr)),
            }
        };
        let new_weight = op_call("multiply", vec![new_weight, weight_scale]);
        Ok(same_op_call(call, vec![new_data, new_weight]))
    }
}
