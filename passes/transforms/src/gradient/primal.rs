//! The gradients of operators (TVM's `FPrimalGradient` attribute, defined
//! in Python in v0.13's `python/tvm/relay/op/_tensor_grad.py`): given the
//! original call `orig` and the gradient `grad` of its result, the gradient
//! of each argument, built as the Python functions build them (the same
//! operators, attributes and shared nodes), so that the printed result is
//! TVM's.
//!
//! The Python arithmetic operators on expressions are calls of `add`,
//! `subtract`, `multiply`, `divide` and `negative`; `const(v, dtype)` is a
//! rank-0 constant. Every operator `_tensor_grad.py` registers has its
//! gradient here: the elementwise ones and the common shapes in this file,
//! the reductions (`max`, `variance`, the cross entropies), the matrix
//! products, the indexing operators and `take` (a loop) in the submodules.

mod indexing;
mod matmul;
mod reductions;
mod take;

use relay_ir::build::{attrs_with, int_array, op_call, op_call_with, scalar_constant_f64};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Call, Dim, Expr, Type, TypeKind};

/// One operator's gradient: `(orig, its call, grad)` to one gradient per
/// argument.
pub type Gradient = fn(&Expr, &Call, &Expr) -> Result<Vec<Expr>, Diagnostic>;

/// The gradient registered for the operator `name`, if any.
pub fn gradient_of(name: &str) -> Option<Gradient> {
    GRADIENTS
        .iter()
        .find(|(op, _)| *op == name)
        .map(|(_, gradient)| *gradient)
}

/// The operators that have a gradient, in `_tensor_grad.py`'s order.
pub fn operators_with_gradients() -> impl Iterator<Item = &'static str> {
    GRADIENTS.iter().map(|(op, _)| *op)
}

const GRADIENTS: &[(&str, Gradient)] = &[
    ("log", log_grad),
    ("log2", log2_grad),
    ("log10", log10_grad),
    ("tan", tan_grad),
    ("cos", cos_grad),
    ("cosh", cosh_grad),
    ("sin", sin_grad),
    ("sinh", sinh_grad),
    ("acos", acos_grad),
    ("acosh", acosh_grad),
    ("asin", asin_grad),
    ("asinh", asinh_grad),
    ("atan", atan_grad),
    ("atanh", atanh_grad),
    ("exp", exp_grad),
    ("sqrt", sqrt_grad),
    ("sigmoid", sigmoid_grad),
    ("tanh", tanh_grad),
    ("nn.relu", relu_grad),
    ("add", add_grad),
    ("subtract", subtract_grad),
    ("multiply", multiply_grad),
    ("divide", divide_grad),
    ("zeros", no_args_grad),
    ("dyn.zeros", dyn_factory_grad),
    ("ones", no_args_grad),
    ("dyn.ones", dyn_factory_grad),
    ("zeros_like", zeros_like_grad),
    ("ones_like", ones_like_grad),
    ("collapse_sum_like", collapse_sum_like_grad),
    ("collapse_sum_to", collapse_sum_like_grad),
    ("abs", abs_grad),
    ("erf", erf_grad),
    ("clip", clip_grad),
    ("nn.max_pool2d", max_pool2d_grad),
    ("nn.avg_pool2d", avg_pool2d_grad),
    ("nn.global_avg_pool2d", global_avg_pool2d_grad),
    ("concatenate", concatenate_grad),
    ("nn.conv2d", conv2d_grad),
    ("max", reductions::max_grad),
    ("nn.softmax", softmax_grad),
    ("nn.log_softmax", log_softmax_grad),
    ("nn.bias_add", bias_add_grad),
    ("nn.dense", dense_grad),
    ("nn.matmul", matmul::matmul_grad),
    ("nn.batch_matmul", matmul::batch_matmul_grad),
    ("reshape", reshape_grad),
    ("dyn.reshape", dyn_reshape_grad),
    ("shape_of", shape_of_grad),
    ("cast", cast_grad),
    ("cast_like", cast_like_grad),
    ("nn.batch_flatten", batch_flatten_grad),
    ("transpose", transpose_grad),
    ("negative", negative_grad),
    ("sum", sum_grad),
    ("mean", mean_grad),
    ("variance", reductions::variance_grad),
    ("copy", copy_grad),
    ("nn.cross_entropy", reductions::cross_entropy_grad),
    (
        "nn.cross_entropy_with_logits",
        reductions::cross_entropy_with_logits_grad,
    ),
    ("take", take::take_grad),
    ("contrib_reverse_reshape", reshape_grad),
    ("stack", indexing::stack_grad),
    ("squeeze", squeeze_grad),
    ("expand_dims", expand_dims_grad),
    ("arange", indexing::arange_grad),
    ("gather_nd", indexing::gather_nd_grad),
    ("reshape_like", reshape_like_grad),
    ("where", where_grad),
    ("less_equal", comparison_grad),
    ("not_equal", comparison_grad),
    ("strided_slice", indexing::strided_slice_grad),
    ("one_hot", indexing::one_hot_grad),
];

// ---- Python's operators on expressions and the helpers it imports ----

fn add(a: Expr, b: Expr) -> Expr {
    op_call("add", vec![a, b])
}

fn sub(a: Expr, b: Expr) -> Expr {
    op_call("subtract", vec![a, b])
}

fn mul(a: Expr, b: Expr) -> Expr {
    op_call("multiply", vec![a, b])
}

fn div(a: Expr, b: Expr) -> Expr {
    op_call("divide", vec![a, b])
}

fn neg(a: Expr) -> Expr {
    op_call("negative", vec![a])
}

fn unary(name: &str, a: &Expr) -> Expr {
    op_call(name, vec![a.clone()])
}

fn collapse_sum_like(a: Expr, like: &Expr) -> Expr {
    op_call("collapse_sum_like", vec![a, like.clone()])
}

fn reshape_like(a: Expr, like: &Expr) -> Expr {
    // Python's `reshape_like(data, shape_like)` passes lhs_begin=0,
    // lhs_end=None, rhs_begin=0, rhs_end=None.
    op_call_with(
        "reshape_like",
        vec![a, like.clone()],
        &[
            ("lhs_begin", AttrValue::int_imm(0, DataType::INT32)),
            ("lhs_end", AttrValue::Null),
            ("rhs_begin", AttrValue::int_imm(0, DataType::INT32)),
            ("rhs_end", AttrValue::Null),
        ],
    )
}

fn cast_like(a: Expr, like: &Expr) -> Expr {
    op_call("cast_like", vec![a, like.clone()])
}

fn broadcast_to_like(a: Expr, like: &Expr) -> Expr {
    op_call("broadcast_to_like", vec![a, like.clone()])
}

fn transpose(a: Expr, axes: Option<&[i64]>) -> Expr {
    let axes = axes.map_or(AttrValue::Null, int_array);
    op_call_with("transpose", vec![a], &[("axes", axes)])
}

/// Python's `sum(data, axis, keepdims, exclude)` (also `mean`).
fn reduce(name: &str, a: Expr, axis: Option<Vec<i64>>, keepdims: bool, exclude: bool) -> Expr {
    let axis = axis.map_or(AttrValue::Null, |axes| int_array(&axes));
    op_call_with(
        name,
        vec![a],
        &[
            ("axis", axis),
            ("keepdims", AttrValue::Bool(keepdims)),
            ("exclude", AttrValue::Bool(exclude)),
        ],
    )
}

fn expand_dims(a: Expr, axis: i64) -> Expr {
    op_call_with(
        "expand_dims",
        vec![a],
        &[
            ("axis", AttrValue::int_imm(axis, DataType::INT32)),
            ("num_newaxis", AttrValue::int_imm(1, DataType::INT32)),
        ],
    )
}

/// Python's `const(value, dtype)`.
fn constant(value: f64, dtype: DataType) -> Result<Expr, Diagnostic> {
    scalar_constant_f64(dtype, value)
        .ok_or_else(|| Diagnostic::pass_failed(format!("cannot make a constant of dtype {dtype}")))
}

/// The argument `i` of the original call.
fn arg(call: &Call, i: usize) -> Result<&Expr, Diagnostic> {
    call.args
        .get(i)
        .ok_or_else(|| Diagnostic::pass_failed(format!("the call has no argument {i}")))
}

/// The tensor type of `expr` (Python's `expr.checked_type`).
fn tensor_type(expr: &Expr) -> Result<(&[Dim], DataType), Diagnostic> {
    match expr.checked_type().map(Type::kind) {
        Some(TypeKind::Tensor(t)) => Ok((&t.shape, t.dtype)),
        Some(_) => Err(Diagnostic::pass_failed(
            "expected a tensor type for a gradient argument",
        )),
        None => Err(Diagnostic::pass_failed(
            "an argument has no checked type; run InferType first",
        )),
    }
}

fn dtype(expr: &Expr) -> Result<DataType, Diagnostic> {
    tensor_type(expr).map(|(_, dtype)| dtype)
}

/// Python's `get_const_tuple(shape)`: every dimension a known integer.
fn const_shape(expr: &Expr) -> Result<Vec<i64>, Diagnostic> {
    let (shape, _) = tensor_type(expr)?;
    shape
        .iter()
        .map(|d| {
            d.as_int().ok_or_else(|| {
                Diagnostic::pass_failed("the gradient needs a tensor of known shape")
            })
        })
        .collect()
}

fn attr<'a>(call: &'a Call, name: &str) -> Result<&'a AttrValue, Diagnostic> {
    call.attrs
        .as_ref()
        .and_then(|a| a.get(name))
        .ok_or_else(|| Diagnostic::pass_failed(format!("the call has no attribute `{name}`")))
}

fn attr_int(call: &Call, name: &str) -> Result<i64, Diagnostic> {
    attr(call, name)?
        .as_int()
        .ok_or_else(|| Diagnostic::pass_failed(format!("the attribute `{name}` is not an integer")))
}

fn attr_bool(call: &Call, name: &str) -> Result<bool, Diagnostic> {
    match attr(call, name)? {
        AttrValue::Bool(b) => Ok(*b),
        other => other.as_int().map(|v| v != 0).ok_or_else(|| {
            Diagnostic::pass_failed(format!("the attribute `{name}` is not a boolean"))
        }),
    }
}

fn attr_str<'a>(call: &'a Call, name: &str) -> Result<&'a str, Diagnostic> {
    attr(call, name)?
        .as_str()
        .ok_or_else(|| Diagnostic::pass_failed(format!("the attribute `{name}` is not a string")))
}

fn attr_ints(call: &Call, name: &str) -> Result<Vec<i64>, Diagnostic> {
    attr(call, name)?.as_int_array().ok_or_else(|| {
        Diagnostic::pass_failed(format!("the attribute `{name}` is not a list of integers"))
    })
}

// ---- the gradients ----

fn log_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    Ok(vec![div(
        mul(grad.clone(), unary("ones_like", x)),
        x.clone(),
    )])
}

fn log_base_grad(call: &Call, grad: &Expr, base: f64) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let ones = unary("ones_like", x);
    let base = constant(base, dtype(x)?)?;
    Ok(vec![div(
        mul(grad.clone(), ones),
        mul(unary("log", &base), x.clone()),
    )])
}

fn log2_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    log_base_grad(call, grad, 2.0)
}

fn log10_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    log_base_grad(call, grad, 10.0)
}

fn tan_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    Ok(vec![div(
        grad.clone(),
        mul(unary("cos", x), unary("cos", x)),
    )])
}

fn cos_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let ones = unary("ones_like", x);
    Ok(vec![mul(grad.clone(), mul(neg(ones), unary("sin", x)))])
}

fn cosh_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![mul(grad.clone(), unary("sinh", arg(call, 0)?))])
}

fn sin_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![mul(grad.clone(), unary("cos", arg(call, 0)?))])
}

fn sinh_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![mul(grad.clone(), unary("cosh", arg(call, 0)?))])
}

fn x_squared(x: &Expr) -> Expr {
    mul(x.clone(), x.clone())
}

fn acos_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let ones = unary("ones_like", x);
    let root = unary("sqrt", &sub(ones.clone(), x_squared(x)));
    Ok(vec![mul(grad.clone(), div(neg(ones), root))])
}

fn acosh_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let ones = unary("ones_like", x);
    let root = unary("sqrt", &sub(x_squared(x), ones.clone()));
    Ok(vec![div(mul(grad.clone(), ones), root)])
}

fn asin_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let ones = unary("ones_like", x);
    let root = unary("sqrt", &sub(ones.clone(), x_squared(x)));
    Ok(vec![div(mul(grad.clone(), ones), root)])
}

fn asinh_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let ones = unary("ones_like", x);
    let root = unary("sqrt", &add(ones.clone(), x_squared(x)));
    Ok(vec![div(mul(grad.clone(), ones), root)])
}

fn atan_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let ones = unary("ones_like", x);
    let denominator = add(ones.clone(), x_squared(x));
    Ok(vec![div(mul(grad.clone(), ones), denominator)])
}

fn atanh_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let ones = unary("ones_like", x);
    let denominator = sub(ones.clone(), x_squared(x));
    Ok(vec![div(mul(grad.clone(), ones), denominator)])
}

fn exp_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![mul(grad.clone(), unary("exp", arg(call, 0)?))])
}

fn sqrt_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let half = constant(0.5, dtype(x)?)?;
    let power = op_call("power", vec![x.clone(), neg(half.clone())]);
    Ok(vec![mul(mul(grad.clone(), half), power)])
}

fn sigmoid_grad(orig: &Expr, _call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let one_minus = sub(unary("ones_like", orig), orig.clone());
    Ok(vec![mul(mul(grad.clone(), orig.clone()), one_minus)])
}

fn tanh_grad(orig: &Expr, _call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let one_minus = sub(unary("ones_like", orig), x_squared(orig));
    Ok(vec![mul(grad.clone(), one_minus)])
}

fn relu_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let zeros = unary("zeros_like", x);
    let ones = unary("ones_like", x);
    let negative = op_call("less", vec![x.clone(), zeros.clone()]);
    Ok(vec![op_call(
        "where",
        vec![negative, zeros, mul(ones, grad.clone())],
    )])
}

fn add_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![
        collapse_sum_like(grad.clone(), arg(call, 0)?),
        collapse_sum_like(grad.clone(), arg(call, 1)?),
    ])
}

fn subtract_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![
        collapse_sum_like(grad.clone(), arg(call, 0)?),
        collapse_sum_like(neg(grad.clone()), arg(call, 1)?),
    ])
}

fn multiply_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (x, y) = (arg(call, 0)?, arg(call, 1)?);
    Ok(vec![
        collapse_sum_like(mul(grad.clone(), y.clone()), x),
        collapse_sum_like(mul(grad.clone(), x.clone()), y),
    ])
}

fn divide_grad(orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (x, y) = (arg(call, 0)?, arg(call, 1)?);
    Ok(vec![
        collapse_sum_like(div(grad.clone(), y.clone()), x),
        collapse_sum_like(neg(div(mul(grad.clone(), orig.clone()), y.clone())), y),
    ])
}

/// `zeros` and `ones` take no arguments.
fn no_args_grad(_orig: &Expr, _call: &Call, _grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(Vec::new())
}

fn zeros_like_grad(orig: &Expr, _call: &Call, _grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![orig.clone()])
}

fn ones_like_grad(_orig: &Expr, call: &Call, _grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![unary("zeros_like", arg(call, 0)?)])
}

fn collapse_sum_like_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (x, y) = (arg(call, 0)?, arg(call, 1)?);
    Ok(vec![
        broadcast_to_like(grad.clone(), x),
        unary("zeros_like", y),
    ])
}

fn abs_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let zeros = unary("zeros_like", x);
    let ones = unary("ones_like", x);
    let negative = op_call("less", vec![x.clone(), zeros]);
    Ok(vec![op_call(
        "where",
        vec![
            negative,
            mul(neg(ones.clone()), grad.clone()),
            mul(ones, grad.clone()),
        ],
    )])
}

fn erf_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let two_over_root_pi = constant(std::f64::consts::FRAC_2_SQRT_PI, dtype(x)?)?;
    let gaussian = unary("exp", &mul(neg(x.clone()), x.clone()));
    Ok(vec![mul(mul(two_over_root_pi, gaussian), grad.clone())])
}

fn clip_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let dt = dtype(x)?;
    // Python's `attrs.get_int`: the bounds truncated to integers.
    let bound = |name: &str| -> Result<f64, Diagnostic> {
        let value = attr(call, name)?.as_f64().ok_or_else(|| {
            Diagnostic::pass_failed(format!("the attribute `{name}` is not a number"))
        })?;
        Ok(value.trunc())
    };
    let a_mins = broadcast_to_like(constant(bound("a_min")?, dt)?, x);
    let a_maxs = broadcast_to_like(constant(bound("a_max")?, dt)?, x);
    let zeros = unary("zeros_like", x);
    let ones = unary("ones_like", x);
    let above = op_call(
        "where",
        vec![
            op_call("less", vec![a_maxs, x.clone()]),
            zeros.clone(),
            mul(ones, grad.clone()),
        ],
    );
    Ok(vec![op_call(
        "where",
        vec![op_call("less", vec![x.clone(), a_mins]), zeros, above],
    )])
}

fn conv2d_grad(orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (data, weight) = (arg(call, 0)?, arg(call, 1)?);
    let data_shape = const_shape(data)?;
    let weight_shape = const_shape(weight)?;
    let out_shape = const_shape(orig)?;
    let (&[_, _, in_h, in_w], &[_, _, filter_h, filter_w], &[_, _, grad_h, grad_w]) = (
        data_shape.as_slice(),
        weight_shape.as_slice(),
        out_shape.as_slice(),
    ) else {
        return Err(Diagnostic::pass_failed(
            "the gradient of nn.conv2d needs 4-dimensional tensors",
        ));
    };
    let padding = attr_ints(call, "padding")?;
    // topi's `get_pad_tuple` for the padding the attribute holds.
    let (pad_top, pad_left, pad_bottom, pad_right) = match *padding.as_slice() {
        [p] => (p, p, p, p),
        [h, w] => (h, w, h, w),
        [t, l, b, r] => (t, l, b, r),
        _ => {
            return Err(Diagnostic::pass_failed(
                "nn.conv2d has a padding of unexpected length",
            ))
        }
    };
    let strides = attr_ints(call, "strides")?;
    let &[stride_h, stride_w] = strides.as_slice() else {
        return Err(Diagnostic::pass_failed(
            "nn.conv2d has strides of unexpected length",
        ));
    };
    let out_h = (grad_h - 1) * stride_h - pad_top - pad_bottom + filter_h;
    let out_w = (grad_w - 1) * stride_w - pad_left - pad_right + filter_w;
    let output_padding = [in_h - out_h, in_w - out_w];

    let data_layout = attr_str(call, "data_layout")?;
    let kernel_layout = attr_str(call, "kernel_layout")?;
    let out_layout = attr_str(call, "out_layout")?;
    if data_layout != "NCHW" {
        return Err(Diagnostic::pass_failed("only support NCHW data layout"));
    }
    if kernel_layout != "OIHW" {
        return Err(Diagnostic::pass_failed("only support OIHW kernel layout"));
    }
    if !["", "NCHW"].contains(&out_layout) {
        return Err(Diagnostic::pass_failed("only support NCHW output layout"));
    }
    let out_dtype = match attr(call, "out_dtype")? {
        AttrValue::DataType(dt) if !dt.is_void() => *dt,
        _ => dtype(data)?,
    };
    let copied = |name: &str| attr(call, name).cloned();
    let padding_value = copied("padding")?;
    let backward_data = op_call_with(
        "nn.conv2d_transpose",
        vec![grad.clone(), weight.clone()],
        &[
            ("strides", copied("strides")?),
            ("padding", padding_value.clone()),
            ("dilation", copied("dilation")?),
            ("groups", copied("groups")?),
            ("channels", AttrValue::Null),
            ("kernel_size", AttrValue::Null),
            ("data_layout", AttrValue::Str("NCHW".into())),
            ("kernel_layout", AttrValue::Str("IOHW".into())),
            ("out_layout", AttrValue::Str(String::new())),
            ("output_padding", int_array(&output_padding)),
            ("out_dtype", AttrValue::DataType(out_dtype)),
        ],
    );
    let grad_layout = if out_layout.is_empty() {
        data_layout
    } else {
        out_layout
    };
    // TVM's `MakeConv2dBackwardWeight` stores the grad layout as
    // `data_layout`, the data layout as `kernel_layout` and the kernel
    // layout as `out_layout`.
    let backward_weight = op_call_with(
        "nn.conv2d_backward_weight",
        vec![grad.clone(), data.clone()],
        &[
            ("strides", copied("strides")?),
            ("padding", padding_value),
            ("dilation", copied("dilation")?),
            ("groups", copied("groups")?),
            ("channels", copied("channels")?),
            ("kernel_size", int_array(&[filter_h, filter_w])),
            ("data_layout", AttrValue::Str(grad_layout.into())),
            ("kernel_layout", AttrValue::Str(data_layout.into())),
            ("out_layout", AttrValue::Str(kernel_layout.into())),
            ("out_dtype", AttrValue::DataType(out_dtype)),
        ],
    );
    Ok(vec![backward_data, backward_weight])
}

fn softmax_grad(orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let axis = attr_int(call, "axis")?;
    let summed = reduce(
        "sum",
        mul(grad.clone(), orig.clone()),
        Some(vec![axis]),
        true,
        false,
    );
    Ok(vec![mul(sub(grad.clone(), summed), orig.clone())])
}

fn log_softmax_grad(orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let axis = attr_int(call, "axis")?;
    let summed = reduce("sum", grad.clone(), Some(vec![axis]), true, false);
    Ok(vec![sub(grad.clone(), mul(summed, unary("exp", orig)))])
}

fn bias_add_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let data = arg(call, 0)?;
    let axis = attr_int(call, "axis")?;
    Ok(vec![
        collapse_sum_like(grad.clone(), data),
        reduce("sum", grad.clone(), Some(vec![axis]), false, true),
    ])
}

/// `units=shape[1]` of `expr`'s type: the dimension object itself.
fn second_dim(expr: &Expr) -> Result<AttrValue, Diagnostic> {
    let (shape, _) = tensor_type(expr)?;
    match shape.get(1) {
        Some(Dim::Int { value, dtype, id }) => Ok(AttrValue::IntImm {
            value: *value,
            dtype: *dtype,
            id: *id,
        }),
        _ => Err(Diagnostic::pass_failed(
            "the gradient of nn.dense needs a known second dimension",
        )),
    }
}

fn dense_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (data, weight) = (arg(call, 0)?, arg(call, 1)?);
    let dense = |a: Expr, b: Expr, units: AttrValue| {
        op_call_with(
            "nn.dense",
            vec![a, b],
            &[
                ("units", units),
                ("out_dtype", AttrValue::DataType(DataType::void())),
            ],
        )
    };
    Ok(vec![
        collapse_sum_like(
            dense(
                grad.clone(),
                transpose(weight.clone(), None),
                second_dim(weight)?,
            ),
            data,
        ),
        collapse_sum_like(
            dense(
                transpose(grad.clone(), None),
                transpose(data.clone(), None),
                second_dim(data)?,
            ),
            weight,
        ),
    ])
}

fn reshape_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![reshape_like(grad.clone(), arg(call, 0)?)])
}

fn shape_of_grad(_orig: &Expr, call: &Call, _grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![unary("zeros_like", arg(call, 0)?)])
}

fn cast_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![op_call(
        "cast_like",
        vec![grad.clone(), arg(call, 0)?.clone()],
    )])
}

fn cast_like_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (x, like) = (arg(call, 0)?, arg(call, 1)?);
    Ok(vec![
        op_call("cast_like", vec![grad.clone(), x.clone()]),
        unary("zeros_like", like),
    ])
}

fn batch_flatten_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![reshape_like(grad.clone(), arg(call, 0)?)])
}

fn transpose_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let axes = match attr(call, "axes")? {
        AttrValue::Null => None,
        value => value.as_int_array(),
    };
    // Python tests `if orig_axes:`, so an empty list also means "reverse".
    let new_axes = match axes {
        Some(axes) if !axes.is_empty() => {
            let mut inverse = vec![0; axes.len()];
            for (i, &axis) in axes.iter().enumerate() {
                let slot = usize::try_from(axis)
                    .ok()
                    .and_then(|a| inverse.get_mut(a))
                    .ok_or_else(|| Diagnostic::pass_failed("list assignment index out of range"))?;
                *slot = i as i64;
            }
            Some(inverse)
        }
        _ => None,
    };
    Ok(vec![transpose(grad.clone(), new_axes.as_deref())])
}

fn negative_grad(_orig: &Expr, _call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![neg(grad.clone())])
}

/// Python's `_get_reduce_axis`: the reduced axes as sorted non-negative
/// integers (the complement when `exclude`), `None` for all.
fn reduce_axes(call: &Call) -> Result<Option<Vec<i64>>, Diagnostic> {
    let rank = const_shape(arg(call, 0)?)?.len() as i64;
    let axis = match attr(call, "axis")? {
        // Python asserts that `exclude` is off when no axis is given.
        AttrValue::Null if attr_bool(call, "exclude")? => {
            return Err(Diagnostic::pass_failed(
                "the reduction excludes axes but names none (`axis` is None)",
            ))
        }
        AttrValue::Null => return Ok(None),
        value => value.as_int_array().ok_or_else(|| {
            Diagnostic::pass_failed("the attribute `axis` is not a list of integers")
        })?,
    };
    let mut axes: Vec<i64> = axis
        .iter()
        .map(|&a| if a >= 0 { a } else { rank + a })
        .collect();
    axes.sort_unstable();
    if attr_bool(call, "exclude")? {
        axes = (0..rank).filter(|a| !axes.contains(a)).collect();
    }
    Ok(Some(axes))
}

fn sum_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let data = arg(call, 0)?;
    let mut grad = grad.clone();
    if !attr_bool(call, "keepdims")? {
        let axes = match reduce_axes(call)? {
            Some(axes) => axes,
            None => (0..const_shape(data)?.len() as i64).collect(),
        };
        for axis in axes {
            grad = expand_dims(grad, axis);
        }
    }
    Ok(vec![broadcast_to_like(grad, data)])
}

fn mean_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let data = arg(call, 0)?;
    let shape = const_shape(data)?;
    let axes = match reduce_axes(call)? {
        Some(axes) => axes,
        None => (0..shape.len() as i64).collect(),
    };
    let mut grad = grad.clone();
    if !attr_bool(call, "keepdims")? {
        for &axis in &axes {
            grad = expand_dims(grad, axis);
        }
    }
    let mut factor = 1.0f64;
    for &axis in &axes {
        let size = usize::try_from(axis)
            .ok()
            .and_then(|a| shape.get(a))
            .ok_or_else(|| Diagnostic::pass_failed("the reduced axis is out of range"))?;
        factor /= *size as f64;
    }
    let factor = constant(factor, dtype(data)?)?;
    Ok(vec![broadcast_to_like(mul(grad, factor), data)])
}

fn copy_grad(_orig: &Expr, _call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![grad.clone()])
}

fn squeeze_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![reshape_like(grad.clone(), arg(call, 0)?)])
}

fn expand_dims_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let axis = attr_int(call, "axis")?;
    let count = attr_int(call, "num_newaxis")?;
    let mut grad = grad.clone();
    for _ in 0..count {
        grad = op_call_with("squeeze", vec![grad], &[("axis", int_array(&[axis]))]);
    }
    Ok(vec![grad])
}

fn reshape_like_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (data, like) = (arg(call, 0)?, arg(call, 1)?);
    Ok(vec![
        reshape_like(grad.clone(), data),
        unary("zeros_like", like),
    ])
}

fn where_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (cond, x, y) = (arg(call, 0)?, arg(call, 1)?, arg(call, 2)?);
    let zeros = unary("zeros_like", grad);
    let grad_x = collapse_sum_like(
        op_call("where", vec![cond.clone(), grad.clone(), zeros.clone()]),
        x,
    );
    let grad_y = collapse_sum_like(op_call("where", vec![cond.clone(), zeros, grad.clone()]), y);
    Ok(vec![unary("zeros_like", cond), grad_x, grad_y])
}

/// `dyn.zeros` / `dyn.ones`: their shape argument gets zeros.
fn dyn_factory_grad(_orig: &Expr, call: &Call, _grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![unary("zeros_like", arg(call, 0)?)])
}

fn dyn_reshape_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![
        reshape_like(grad.clone(), arg(call, 0)?),
        unary("zeros_like", arg(call, 1)?),
    ])
}

/// `less_equal`, `not_equal`: no gradient flows through a comparison.
fn comparison_grad(_orig: &Expr, call: &Call, _grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    Ok(vec![
        unary("zeros_like", arg(call, 0)?),
        unary("zeros_like", arg(call, 1)?),
    ])
}

/// `nn.max_pool2d_grad` over the pooling's window, strides, padding,
/// layout and ceil_mode, as the Python gradient calls `_nn.max_pool2d_grad`
/// (its `out_layout` is the wrapper's default "", its dilation the attrs'
/// default).
fn max_pool2d_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let data = arg(call, 0)?;
    let copied = |name: &str| attr(call, name).cloned();
    Ok(vec![op_call_with(
        "nn.max_pool2d_grad",
        vec![grad.clone(), data.clone()],
        &[
            ("pool_size", copied("pool_size")?),
            ("strides", copied("strides")?),
            ("padding", copied("padding")?),
            ("layout", copied("layout")?),
            ("out_layout", AttrValue::Str(String::new())),
            ("ceil_mode", copied("ceil_mode")?),
        ],
    )])
}

/// `nn.avg_pool2d_grad`, as [`max_pool2d_grad`] with `count_include_pad`.
/// TVM builds its attributes as `AvgPool2DAttrs` although the operator
/// registers `MaxPool2DAttrs` (so TVM's printer writes them to the metadata
/// section); [`avg_pool2d_grad_call`] builds them the same way.
fn avg_pool2d_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let data = arg(call, 0)?;
    let copied = |name: &str| attr(call, name).cloned();
    Ok(vec![avg_pool2d_grad_call(
        grad,
        data,
        &[
            ("pool_size", copied("pool_size")?),
            ("strides", copied("strides")?),
            ("padding", copied("padding")?),
            ("layout", copied("layout")?),
            ("out_layout", AttrValue::Str(String::new())),
            ("ceil_mode", copied("ceil_mode")?),
            ("count_include_pad", copied("count_include_pad")?),
        ],
    )])
}

/// `_make.avg_pool2d_grad(grad, data, …)`: the call with `AvgPool2DAttrs`.
fn avg_pool2d_grad_call(grad: &Expr, data: &Expr, fields: &[(&str, AttrValue)]) -> Expr {
    let op =
        relay_ir::op::lookup("nn.avg_pool2d_grad").expect("nn.avg_pool2d_grad is in the table");
    Expr::call(
        Expr::op(op, None),
        vec![grad.clone(), data.clone()],
        Some(attrs_with("relay.attrs.AvgPool2DAttrs", fields)),
        None,
    )
}

/// The gradient of a global average: `nn.avg_pool2d_grad` with the whole
/// spatial extent as its window (NCHW or NHWC only, as TVM asserts), stride
/// 1 and no padding.
fn global_avg_pool2d_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let data = arg(call, 0)?;
    let layout = attr_str(call, "layout")?;
    let shape = const_shape(data)?;
    let pool_size = match (layout, shape.as_slice()) {
        ("NCHW", &[_, _, h, w]) | ("NHWC", &[_, h, w, _]) => [h, w],
        ("NCHW" | "NHWC", _) => {
            return Err(Diagnostic::pass_failed(
                "the gradient of nn.global_avg_pool2d needs 4-dimensional data",
            ))
        }
        _ => {
            return Err(Diagnostic::pass_failed(format!(
            "the gradient of nn.global_avg_pool2d supports the NCHW and NHWC layouts, not {layout}"
        )))
        }
    };
    Ok(vec![avg_pool2d_grad_call(
        grad,
        data,
        &[
            ("pool_size", int_array(&pool_size)),
            ("strides", int_array(&[1, 1])),
            ("padding", int_array(&[0, 0])),
            ("layout", AttrValue::Str(layout.to_string())),
            ("out_layout", AttrValue::Str(String::new())),
        ],
    )])
}

/// The gradient split back into the concatenated pieces: one gradient, a
/// tuple, for the one (tuple) argument.
fn concatenate_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let tuple = arg(call, 0)?;
    let axis = attr_int(call, "axis")?;
    let Some(TypeKind::Tuple(fields)) = tuple.checked_type().map(Type::kind) else {
        return Err(Diagnostic::pass_failed(
            "concatenate's argument has no tuple type",
        ));
    };
    let mut dims = Vec::with_capacity(fields.len());
    for field in fields {
        let TypeKind::Tensor(t) = field.kind() else {
            return Err(Diagnostic::pass_failed(
                "concatenate of a value that is not a tensor",
            ));
        };
        // Python indexes the shape with the axis as written (negative from
        // the end).
        let index = if axis < 0 {
            t.shape.len() as i64 + axis
        } else {
            axis
        };
        let dim = usize::try_from(index)
            .ok()
            .and_then(|i| t.shape.get(i))
            .and_then(Dim::as_int)
            .ok_or_else(|| Diagnostic::pass_failed("concatenate's axis has no known size"))?;
        dims.push(dim);
    }
    let mut splits = Vec::new();
    let mut total = 0;
    for dim in dims.iter().take(dims.len().saturating_sub(1)) {
        total += dim;
        splits.push(total);
    }
    Ok(vec![op_call_with(
        "split",
        vec![grad.clone()],
        &[
            ("indices_or_sections", int_array(&splits)),
            ("axis", AttrValue::Int(axis)),
        ],
    )])
}

/// Python's `_unreduce_expand`: `x` with a unit axis put back at each of
/// the (sorted, non-negative) reduced `axes`.
fn unreduce_expand(x: Expr, axes: &[i64]) -> Expr {
    axes.iter().fold(x, |x, &axis| expand_dims(x, axis))
}

/// Python's `const(value, dtype="int32")` for an integer.
fn int32_scalar(value: i64) -> Result<Expr, Diagnostic> {
    constant(value as f64, DataType::INT32)
}
