//! `FoldExplicitPadding`: merges an explicit `nn.pad` into the operator that
//! consumes it when that operator can pad by itself, as TVM v0.13's
//! `fold_explicit_padding.cc` does.
//!
//! The consumers that absorb a pad are `nn.conv{1,2,3}d`, `qnn.conv2d` and
//! the one-, two- and three-dimensional average and max pools. A fold
//! replaces the consumer's input by the pad's input and adds the pad widths
//! of the spatial axes (the `D`, `H`, `W` letters of the consumer's layout)
//! to the consumer's `padding`, all "before" values first, then all "after"
//! values. It only happens when the pad is equivalent to the implicit one:
//!
//! * no padding on a non-spatial axis, and `pad_mode="constant"`;
//! * convolutions and average pools: the pad value is zero; an average pool
//!   that does not count padding only folds when it had no padding of its
//!   own, and then counts padding from now on;
//! * max pools: the pad value is the lowest value of its dtype;
//! * `qnn.conv2d`: the pad value equals the input zero point (any mode).
//!
//! TVM applies this as a dataflow-pattern rewrite, which decides what to
//! fold on the graph before rewriting, visiting candidate consumers from the
//! output towards the inputs: a pad that already belongs to a fold is not
//! folded twice, and a pad with another user is only folded when that user
//! flows only into the consumer (otherwise the pad must stay for it). The
//! rewrite is repeated until nothing changes, so chains of pads fold one per
//! round. `nn.contrib_conv2d_NCHWc` matches TVM's pattern but is never
//! rewritten, and anything unexpected leaves the consumer as it is.

use relay_ir::build::attrs_replacing;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::equal::structural_equal;
use relay_ir::metadata::TensorData;
use relay_ir::rewrite::{children, post_order, rewrite_post_order};
use relay_ir::{AttrValue, Attrs, Call, Expr, ExprKind, Function, IRModule};
use relay_pass_manager::registry::PassSpec;
use relay_pass_manager::PassContext;
// Every table is consulted once or more per node: the fast hasher.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// TVM gives up (with a fatal error) after this many rewrite rounds; a
/// round folds at least one pad, so real graphs never get near it.
const MAX_ROUNDS: usize = 100;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("FoldExplicitPadding", 0)
        // TVM registers the pass under this name, leading space included, so
        // `disabled_pass=["FoldExplicitPadding"]` does not disable it there.
        .info_name(" FoldExplicitPadding")
        .required(&["InferType"])
        .doc("Fold an explicit nn.pad into the padding of the convolution or pool that consumes it")
        .transform(fold_function)
}

fn fold_function(f: Function, _m: &IRModule, _ctx: &PassContext) -> Result<Function, Diagnostic> {
    Ok(fold_explicit_padding(&f))
}

/// Folds every foldable pad of `function`, round after round until a round
/// folds nothing.
pub fn fold_explicit_padding(function: &Function) -> Function {
    let mut current = function.clone();
    for _ in 0..MAX_ROUNDS {
        let (next, folded_any) = fold_round(&current);
        current = next;
        if !folded_any {
            break;
        }
    }
    current
}

/// What kind of consumer a pad is folded into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Consumer {
    /// `nn.conv1d/2d/3d`: data and weight.
    Conv,
    /// `nn.contrib_conv2d_NCHWc`: matched, never folded.
    PackedConv,
    /// `qnn.conv2d`: data, weight and four quantisation parameters.
    QuantizedConv,
    AvgPool,
    MaxPool,
}

impl Consumer {
    fn of(op_name: &str) -> Option<(Consumer, usize)> {
        Some(match op_name {
            "nn.conv1d" | "nn.conv2d" | "nn.conv3d" => (Consumer::Conv, 2),
            "nn.contrib_conv2d_NCHWc" => (Consumer::PackedConv, 2),
            "qnn.conv2d" => (Consumer::QuantizedConv, 6),
            "nn.avg_pool1d" | "nn.avg_pool2d" | "nn.avg_pool3d" => (Consumer::AvgPool, 1),
            "nn.max_pool1d" | "nn.max_pool2d" | "nn.max_pool3d" => (Consumer::MaxPool, 1),
            _ => return None,
        })
    }

    /// The attribute naming the data layout.
    fn layout_field(self) -> &'static str {
        match self {
            Consumer::AvgPool | Consumer::MaxPool => "layout",
            _ => "data_layout",
        }
    }
}

/// One round: pick the consumers to fold on the current graph, then rebuild
/// it with those folded.
fn fold_round(function: &Function) -> (Function, bool) {
    let nodes = post_order(function.expr());
    let consumers = consumer_map(&nodes);
    let partitioned = nodes_in_partitioned_functions(&nodes);
    let mut claimed_pads: HashSet<usize> = HashSet::default();
    let mut fold_roots: HashSet<usize> = HashSet::default();
    // From the output towards the inputs, as TVM groups pattern matches.
    for node in nodes.iter().rev() {
        if partitioned.contains(&node.addr()) {
            continue;
        }
        let Some(pad) = matched_pad(node) else {
            continue;
        };
        if claimed_pads.contains(&pad.addr()) || !other_users_flow_into(pad, node, &consumers) {
            continue;
        }
        claimed_pads.insert(pad.addr());
        fold_roots.insert(node.addr());
    }
    if fold_roots.is_empty() {
        return (function.clone(), false);
    }
    let mut folded_any = false;
    let rewritten = rewrite_post_order(function.expr(), |pre, post| {
        if !fold_roots.contains(&pre.addr()) {
            return post;
        }
        match fold_consumer(&post) {
            Some(folded) => {
                folded_any = true;
                folded
            }
            None => post,
        }
    });
    match rewritten.as_function() {
        Some(new_function) => (new_function, folded_any),
        None => (function.clone(), false),
    }
}

/// For every node, the nodes that use it (once per use).
fn consumer_map(nodes: &[Expr]) -> HashMap<usize, Vec<Expr>> {
    let mut consumers: HashMap<usize, Vec<Expr>> = HashMap::default();
    for node in nodes {
        for child in children(node) {
            consumers
                .entry(child.addr())
                .or_default()
                .push(node.clone());
        }
    }
    consumers
}

/// Nodes inside functions a pattern partitioning made: TVM's rewriter does
/// not match there.
fn nodes_in_partitioned_functions(nodes: &[Expr]) -> HashSet<usize> {
    let mut inside = HashSet::default();
    for node in nodes {
        if let ExprKind::Function(function) = node.kind() {
            if function.attrs.get("PartitionedFromPattern").is_some() {
                inside.insert(node.addr());
                inside.extend(post_order(&function.body).iter().map(Expr::addr));
            }
        }
    }
    inside
}

/// The pad feeding `node` when `node` has the shape of a foldable consumer
/// (TVM's pattern: operator, argument count, `nn.pad` with two arguments as
/// the first argument).
fn matched_pad(node: &Expr) -> Option<&Expr> {
    let call = node.as_call()?;
    let (_, arity) = Consumer::of(&call.callee.as_op()?.name)?;
    if call.args.len() != arity {
        return None;
    }
    let pad = call.args.first()?;
    let pad_call = pad.as_call()?;
    (pad_call.callee.as_op()?.name == "nn.pad" && pad_call.args.len() == 2).then_some(pad)
}

/// Whether every user of `pad` other than `root` only reaches the output
/// of the graph through `root` (TVM's condition for taking an inner node
/// of a match out of the graph).
fn other_users_flow_into(pad: &Expr, root: &Expr, consumers: &HashMap<usize, Vec<Expr>>) -> bool {
    let Some(users) = consumers.get(&pad.addr()) else {
        return true;
    };
    let mut visited: HashSet<usize> = HashSet::default();
    let mut pending: Vec<&Expr> = users.iter().filter(|u| !u.ptr_eq(root)).collect();
    while let Some(node) = pending.pop() {
        if !visited.insert(node.addr()) {
            continue;
        }
        match consumers.get(&node.addr()) {
            // A path that ends without passing through the root.
            None => return false,
            Some(next) => pending.extend(next.iter().filter(|n| !n.ptr_eq(root))),
        }
    }
    true
}

/// The folded consumer, or `None` when this pad cannot be folded into it.
/// `post` is the consumer over already rewritten arguments.
fn fold_consumer(post: &Expr) -> Option<Expr> {
    let call = post.as_call()?;
    let (consumer, _) = Consumer::of(&call.callee.as_op()?.name)?;
    let pad_call = call.args.first()?.as_call()?;
    let pad_attrs = pad_call.attrs.as_ref()?;
    let data = pad_call.args.first()?;
    let pad_value = pad_call.args.get(1)?;
    let attrs = call.attrs.as_ref()?;

    if consumer == Consumer::QuantizedConv {
        let new_attrs = with_padding_folded(pad_attrs, attrs, consumer.layout_field())?;
        let input_zero_point = call.args.get(2)?;
        if !is_equal_scalar(input_zero_point, pad_value) {
            return None;
        }
        return Some(rebuild_consumer(post, call, data, new_attrs));
    }

    if pad_attrs.get("pad_mode")?.as_str()? != "constant" {
        return None;
    }
    let value = first_element(pad_value.as_constant()?)?;
    let new_attrs = match consumer {
        Consumer::Conv if value.is_zero() => {
            with_padding_folded(pad_attrs, attrs, consumer.layout_field())?
        }
        Consumer::AvgPool if value.is_zero() => avg_pool_attrs(pad_attrs, attrs)?,
        Consumer::MaxPool if value.is_lowest_of(pad_value.as_constant()?.dtype) => {
            with_padding_folded(pad_attrs, attrs, consumer.layout_field())?
        }
        _ => return None,
    };
    Some(rebuild_consumer(post, call, data, new_attrs))
}

/// The consumer with `data` in place of the pad and `attrs`, keeping its
/// other arguments, type arguments and span.
fn rebuild_consumer(post: &Expr, call: &Call, data: &Expr, attrs: Attrs) -> Expr {
    let mut args = call.args.clone();
    args[0] = data.clone();
    Expr::new(
        ExprKind::Call(Call {
            callee: call.callee.clone(),
            args,
            attrs: Some(attrs),
            type_args: call.type_args.clone(),
        }),
        post.span(),
    )
}

/// An average pool's attrs with the pad folded in. A pool that excludes
/// padding from its divisor only folds when it had no padding before, and
/// must include padding afterwards.
fn avg_pool_attrs(pad_attrs: &Attrs, attrs: &Attrs) -> Option<Attrs> {
    let folded = with_padding_folded(pad_attrs, attrs, "layout")?;
    let counts_padding = attrs.get("count_include_pad")?.as_int()? != 0;
    if counts_padding {
        return Some(folded);
    }
    let had_no_padding = attrs.get("padding")?.as_array()?.iter().all(|value| {
        matches!(
            value,
            AttrValue::IntImm { value: 0, .. } | AttrValue::Int(0)
        )
    });
    had_no_padding
        .then(|| attrs_replacing(&folded, &[("count_include_pad", AttrValue::Bool(true))]))
}

/// `attrs` with the spatial pad widths of `pad_attrs` added to `padding`.
fn with_padding_folded(pad_attrs: &Attrs, attrs: &Attrs, layout_field: &str) -> Option<Attrs> {
    let layout = attrs.get(layout_field)?.as_str()?;
    let extra = spatial_padding(pad_attrs, layout)?;
    let old = attrs.get("padding")?.as_array()?;
    if extra.len() != old.len() {
        return None;
    }
    let combined = extra
        .iter()
        .zip(old)
        .map(|(a, b)| add_int_imms(a, b))
        .collect::<Option<Vec<_>>>()?;
    Some(attrs_replacing(
        attrs,
        &[("padding", AttrValue::Array(combined))],
    ))
}

/// The pad widths of the spatial axes of `layout` (every "before" width in
/// axis order, then every "after" width); `None` when a non-spatial axis is
/// padded or the pad does not fit the layout.
fn spatial_padding<'a>(pad_attrs: &'a Attrs, layout: &str) -> Option<Vec<&'a AttrValue>> {
    let rows = pad_attrs
        .get("pad_width")?
        .as_array()?
        .iter()
        .map(AttrValue::as_array)
        .collect::<Option<Vec<_>>>()?;
    let axes = layout.as_bytes();
    if axes.len() != rows.len() {
        return None;
    }
    let is_spatial = |axis: u8| matches!(axis, b'D' | b'H' | b'W');
    for (axis, row) in axes.iter().zip(&rows) {
        if !is_spatial(*axis) && row.iter().any(|width| width.as_int() != Some(0)) {
            return None;
        }
    }
    let sides = rows.first().map_or(0, |row| row.len());
    let mut widths = Vec::new();
    for side in 0..sides {
        for (axis, row) in axes.iter().zip(&rows) {
            if is_spatial(*axis) {
                widths.push(row.get(side)?);
            }
        }
    }
    Some(widths)
}

/// `a + b` of two integer immediates as TVM folds it: the narrower operand
/// takes the wider one's dtype (the left one's when equally wide).
fn add_int_imms(a: &AttrValue, b: &AttrValue) -> Option<AttrValue> {
    let (a_value, a_dtype) = int_imm(a)?;
    let (b_value, b_dtype) = int_imm(b)?;
    let dtype = if a_dtype.bits < b_dtype.bits {
        b_dtype
    } else {
        a_dtype
    };
    Some(AttrValue::int_imm(a_value.checked_add(b_value)?, dtype))
}

fn int_imm(value: &AttrValue) -> Option<(i64, DataType)> {
    match value {
        AttrValue::IntImm { value, dtype, .. } if dtype.is_int() || dtype.is_uint() => {
            Some((*value, *dtype))
        }
        AttrValue::Int(value) => Some((*value, DataType::INT32)),
        _ => None,
    }
}

/// Both are rank-0 constants holding the same value of the same dtype.
fn is_equal_scalar(a: &Expr, b: &Expr) -> bool {
    match (a.as_constant(), b.as_constant()) {
        (Some(x), Some(y)) if x.ndim() == 0 && y.ndim() == 0 => structural_equal(a, b, false),
        _ => false,
    }
}

/// The first element of a constant, read exactly for the dtypes TVM reads
/// (integers of 8 to 64 bits, unsigned ones and bool, float16/32/64,
/// bfloat16).
#[derive(Debug, Clone, Copy)]
enum Scalar {
    Signed(i64),
    Unsigned(u64),
    Float(f64),
}

fn first_element(data: &TensorData) -> Option<Scalar> {
    let dtype = data.dtype;
    if dtype.lanes != 1 {
        return None;
    }
    match (dtype.code, dtype.bits) {
        (TypeCode::Int, 8 | 16 | 32 | 64) => data.get_i64(0).ok().map(Scalar::Signed),
        (TypeCode::UInt, 1 | 8 | 16 | 32 | 64) => {
            // `get_i64` refuses values above `i64::MAX`; read those as floats.
            match data.get_i64(0) {
                Ok(value) => u64::try_from(value).ok().map(Scalar::Unsigned),
                Err(_) => data.get_f64(0).ok().map(|v| Scalar::Unsigned(v as u64)),
            }
        }
        (TypeCode::Float, 16 | 32 | 64) | (TypeCode::BFloat, 16) => {
            data.get_f64(0).ok().map(Scalar::Float)
        }
        _ => None,
    }
}

impl Scalar {
    fn is_zero(self) -> bool {
        match self {
            Scalar::Signed(v) => v == 0,
            Scalar::Unsigned(v) => v == 0,
            Scalar::Float(v) => v == 0.0,
        }
    }

    /// Whether this is the lowest value of `dtype` (TVM's `min_value`: the
    /// most negative integer, 0 for unsigned types, the lowest finite
    /// float; bfloat16's is float32's, which bfloat16 cannot hold).
    fn is_lowest_of(self, dtype: DataType) -> bool {
        let lowest_int = match (dtype.code, dtype.bits) {
            (TypeCode::Int, 64) => Some(i128::from(i64::MIN)),
            (TypeCode::Int, bits @ 1..=63) => Some(-(1i128 << (bits - 1))),
            (TypeCode::UInt, _) => Some(0),
            _ => None,
        };
        let lowest_float = match (dtype.code, dtype.bits) {
            (TypeCode::Float, 64) => Some(f64::MIN),
            (TypeCode::Float, 32) | (TypeCode::BFloat, 16) => Some(f64::from(f32::MIN)),
            (TypeCode::Float, 16) => Some(-65504.0),
            _ => None,
        };
        match (self, lowest_int, lowest_float) {
            (Scalar::Signed(v), Some(lowest), _) => i128::from(v) == lowest,
            (Scalar::Unsigned(v), Some(lowest), _) => i128::from(v) == lowest,
            (Scalar::Float(v), _, Some(lowest)) => v == lowest,
            _ => false,
        }
    }
}
