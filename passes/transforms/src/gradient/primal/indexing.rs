//! The gradients of the operators that pick or place elements: `stack`,
//! `arange`, `gather_nd`, `strided_slice` and `one_hot` (`take`, a loop,
//! has its own module).

use super::reductions::take;
use super::{
    arg, attr, attr_int, attr_str, cast_like, int32_scalar, mul, reduce, tensor_type, unary,
};
use relay_ir::build::{attrs_with, int_array, op_call, op_call_with};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::{AttrValue, Call, Expr, Type, TypeKind};

/// `stack`: the gradient split into as many pieces as were stacked, each
/// squeezed on the stacking axis; one gradient, a tuple, for the one
/// (tuple) argument.
pub(super) fn stack_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let axis = attr_int(call, "axis")?;
    let Some(TypeKind::Tuple(fields)) = arg(call, 0)?.checked_type().map(Type::kind) else {
        return Err(Diagnostic::pass_failed(
            "stack's argument has no tuple type",
        ));
    };
    let sections = fields.len();
    let split = op_call_with(
        "split",
        vec![grad.clone()],
        &[
            (
                "indices_or_sections",
                AttrValue::int_imm(sections as i64, DataType::INT32),
            ),
            ("axis", AttrValue::Int(axis)),
        ],
    );
    let pieces = (0..sections)
        .map(|i| {
            op_call_with(
                "squeeze",
                vec![Expr::tuple_get_item(split.clone(), i, None)],
                &[("axis", int_array(&[axis]))],
            )
        })
        .collect();
    Ok(vec![Expr::tuple(pieces, None)])
}

/// Python's `sum(x)`: over every axis.
fn sum_all(x: Expr) -> Expr {
    reduce("sum", x, None, false, false)
}

/// `arange(start, stop, step)`: the start gets the sum of the gradient, the
/// stop nothing, the step the sum of the gradient weighted by each
/// element's position (an `arange` over the result's length).
pub(super) fn arange_grad(orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (start, stop, step) = (arg(call, 0)?, arg(call, 1)?, arg(call, 2)?);
    let shape = op_call_with(
        "shape_of",
        vec![orig.clone()],
        &[("dtype", AttrValue::DataType(DataType::INT32))],
    );
    let length = take(shape, int32_scalar(0)?, Some(0));
    let grad_start = cast_like(sum_all(grad.clone()), start);
    let grad_stop = unary("zeros_like", stop);
    // Python's `arange(length, dtype="int32")`: start 0, step 1.
    let (zero, one) = (int32_scalar(0)?, int32_scalar(1)?);
    let positions = op_call_with(
        "arange",
        vec![zero.clone(), length.clone(), one.clone()],
        &[
            ("start", AttrValue::Expr(zero)),
            ("stop", AttrValue::Expr(length)),
            ("step", AttrValue::Expr(one)),
            ("dtype", AttrValue::DataType(DataType::INT32)),
        ],
    );
    let weighted = mul(cast_like(positions, grad), grad.clone());
    let grad_step = cast_like(sum_all(weighted), step);
    Ok(vec![grad_start, grad_stop, grad_step])
}

/// `gather_nd`: the gradient scattered back (added) where it was gathered.
pub(super) fn gather_nd_grad(
    _orig: &Expr,
    call: &Call,
    grad: &Expr,
) -> Result<Vec<Expr>, Diagnostic> {
    let (data, indices) = (arg(call, 0)?, arg(call, 1)?);
    // TVM registers no attrs type for scatter_nd but builds its calls with
    // `ScatterNDAttrs` (so its printer writes them to the metadata section).
    let op = relay_ir::op::lookup("scatter_nd").expect("scatter_nd is in the table");
    let scattered = Expr::call(
        Expr::op(op, None),
        vec![unary("zeros_like", data), indices.clone(), grad.clone()],
        Some(attrs_with(
            "relay.attrs.ScatterNDAttrs",
            &[("mode", AttrValue::Str("add".into()))],
        )),
        None,
    );
    Ok(vec![scattered, unary("zeros_like", indices)])
}

/// Python's `const(list_of_ints)`: NumPy makes the list int64 and `const`
/// narrows it to int32 (wrapping, as `astype` does); an empty list is
/// float64 to NumPy, so float32.
fn int_list_constant(values: &[i64]) -> Result<Expr, Diagnostic> {
    let data = if values.is_empty() {
        TensorData::from_f64s(DataType::FLOAT32, vec![0], &[])
    } else {
        let narrowed: Vec<i64> = values.iter().map(|&v| i64::from(v as i32)).collect();
        TensorData::from_i64s(DataType::INT32, vec![values.len() as i64], &narrowed)
    };
    data.map(|data| Expr::constant(data, None))
        .map_err(|e| Diagnostic::pass_failed(format!("cannot make a constant: {e}")))
}

/// Python's `strided_set(data, v, begin, end, strides)` with the bounds
/// given as integer lists (no strides: `[1]`).
fn strided_set(
    data: Expr,
    value: Expr,
    begin: &[i64],
    end: &[i64],
    strides: Option<&[i64]>,
) -> Result<Expr, Diagnostic> {
    let strides = match strides {
        Some(strides) if !strides.is_empty() => int_list_constant(strides)?,
        _ => int_list_constant(&[1])?,
    };
    Ok(op_call(
        "strided_set",
        vec![
            data,
            value,
            int_list_constant(begin)?,
            int_list_constant(end)?,
            strides,
        ],
    ))
}

/// Python's `get_const_tuple` of an `Array<Integer>` attribute.
fn const_ints(call: &Call, name: &str) -> Result<Vec<i64>, Diagnostic> {
    attr(call, name)?.as_int_array().ok_or_else(|| {
        Diagnostic::pass_failed(format!(
            "the gradient of strided_slice needs constant `{name}` integers"
        ))
    })
}

/// `strided_slice`: the gradient where the input was sliced, zero
/// elsewhere (a `strided_set` into zeros). In the "size" mode the sizes
/// become end indices and the strides are dropped.
pub(super) fn strided_slice_grad(
    _orig: &Expr,
    call: &Call,
    grad: &Expr,
) -> Result<Vec<Expr>, Diagnostic> {
    if !matches!(attr(call, "axes")?, AttrValue::Null) {
        return Err(Diagnostic::pass_failed(
            "grad for strided_slice with axes is not yet supported",
        ));
    }
    let x = arg(call, 0)?;
    let begin = const_ints(call, "begin")?;
    let mut end = const_ints(call, "end")?;
    let strides = const_ints(call, "strides")?;
    let strides = match attr_str(call, "slice_mode")? {
        "size" => {
            let (shape, _) = tensor_type(x)?;
            for (i, (start, size)) in begin.iter().zip(end.iter_mut()).enumerate() {
                *size = if *size == -1 {
                    shape.get(i).and_then(|d| d.as_int()).ok_or_else(|| {
                        Diagnostic::pass_failed(
                            "the gradient of strided_slice needs a known dimension for a size of -1",
                        )
                    })?
                } else {
                    start + *size
                };
            }
            None
        }
        "end" => Some(strides),
        mode => {
            return Err(Diagnostic::pass_failed(format!(
                "the gradient of strided_slice supports the slice modes \"end\" and \"size\", \
                 not {mode:?}"
            )))
        }
    };
    Ok(vec![strided_set(
        unary("zeros_like", x),
        grad.clone(),
        &begin,
        &end,
        strides.as_deref(),
    )?])
}

/// `one_hot(indices, on_value, off_value)`: the on value gets the sum of
/// the gradient where the result holds it, the off value the rest.
pub(super) fn one_hot_grad(orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (indices, on_value, off_value) = (arg(call, 0)?, arg(call, 1)?, arg(call, 2)?);
    let zeros = unary("zeros_like", grad);
    let on_mask = op_call("equal", vec![orig.clone(), on_value.clone()]);
    let grad_on = sum_all(op_call(
        "where",
        vec![on_mask.clone(), grad.clone(), zeros.clone()],
    ));
    let grad_off = sum_all(op_call("where", vec![on_mask, zeros, grad.clone()]));
    Ok(vec![
        unary("zeros_like", indices),
        cast_like(grad_on, on_value),
        cast_like(grad_off, off_value),
    ])
}
