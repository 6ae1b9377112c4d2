//! The gradient of `take`: a Relay while loop (Python's `while_loop`, a
//! recursive local function) that adds, for each index `i`, the slice of
//! the incoming gradient at `i` into the data gradient at `indices[i]`
//! (read with a dynamic `strided_slice`, written with `strided_set`). Like
//! TVM it needs the data's concrete shape and refuses `batch_dims != 0` and
//! indices of rank above 1.

use super::reductions::take;
use super::{add, arg, attr, expand_dims, int32_scalar, reshape_like, tensor_type, unary};
use relay_ir::build::{op_call, op_call_with, reshape};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Call, Dim, Expr, Function, FunctionData, Type, Var};

/// Python's `make_scalar_tensor(v)`: an int32 constant reshaped to `(1,)`.
fn scalar_tensor(value: i64) -> Result<Expr, Diagnostic> {
    Ok(reshape(int32_scalar(value)?, &[1]))
}

/// Python's `concatenate(pieces, axis=0)`.
fn concatenate(pieces: Vec<Expr>) -> Expr {
    op_call_with(
        "concatenate",
        vec![Expr::tuple(pieces, None)],
        &[("axis", AttrValue::Int(0))],
    )
}

/// Python's `strided_slice(data, begin, end, strides=list)` with tensor
/// bounds: the dynamic slice, after the wrapper's normalisation of `begin`
/// (negative indices counted from the end, clamped to the shape).
fn dynamic_strided_slice(data: &Expr, begin: &Expr, end: &Expr, strides: Expr) -> Expr {
    let ishape = op_call("cast_like", vec![shape_of(data), begin.clone()]);
    let ishape_slice = op_call_with(
        "slice_like",
        vec![ishape, begin.clone()],
        &[("axes", AttrValue::Null)],
    );
    let zero = op_call("cast_like", vec![int32_scalar_unchecked(0), begin.clone()]);
    let begin = op_call(
        "where",
        vec![
            op_call("less", vec![begin.clone(), zero]),
            add(begin.clone(), ishape_slice.clone()),
            begin.clone(),
        ],
    );
    let begin = op_call(
        "where",
        vec![
            op_call("greater_equal", vec![begin.clone(), ishape_slice.clone()]),
            ishape_slice,
            begin,
        ],
    );
    op_call_with(
        "dyn.strided_slice",
        vec![data.clone(), begin, end.clone(), strides],
        &[
            ("begin", AttrValue::Null),
            ("end", AttrValue::Null),
            ("strides", AttrValue::Null),
            ("slice_mode", AttrValue::Str("end".into())),
            ("axes", AttrValue::Null),
        ],
    )
}

/// An int32 rank-0 constant (always representable).
fn int32_scalar_unchecked(value: i64) -> Expr {
    int32_scalar(value).expect("an int32 constant")
}

/// Python's `shape_of(x)` (int32).
fn shape_of(x: &Expr) -> Expr {
    op_call_with(
        "shape_of",
        vec![x.clone()],
        &[("dtype", AttrValue::DataType(DataType::INT32))],
    )
}

/// Python's `const(list_of_ones)` for the loop's strides: one per axis.
fn unit_strides(rank: usize) -> Result<Expr, Diagnostic> {
    relay_ir::build::int32_vector_constant(&vec![1; rank])
        .ok_or_else(|| Diagnostic::pass_failed("cannot make the strides constant"))
}

fn tensor(shape: &[i64], dtype: DataType) -> Type {
    Type::tensor(shape.iter().map(|&d| Dim::int32(d)).collect(), dtype)
}

fn function(params: Vec<Var>, body: Expr) -> Expr {
    Function::new(
        FunctionData {
            params,
            body,
            ret_type: None,
            type_params: Vec::new(),
            attrs: Default::default(),
            virtual_device: None,
        },
        None,
    )
    .into_expr()
}

pub(super) fn take_grad(_orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (data, indices) = (arg(call, 0)?, arg(call, 1)?);
    let (zero, one) = (scalar_tensor(0)?, scalar_tensor(1)?);
    let mut data_grad = unary("zeros_like", data);
    let (shape, dtype) = tensor_type(data)?;
    let concrete: Option<Vec<i64>> = shape.iter().map(Dim::as_int).collect();
    let mut data_shape = concrete.ok_or_else(|| {
        Diagnostic::pass_failed("currently take_grad only supports data with concrete shape")
    })?;
    let axis_attr = attr(call, "axis")?.clone();
    let axis = match &axis_attr {
        AttrValue::Null => {
            data_grad = reshape(data_grad, &[-1]);
            data_shape = vec![data_shape.iter().product()];
            0
        }
        value => value
            .as_int()
            .ok_or_else(|| Diagnostic::pass_failed("take's `axis` is not an integer"))?,
    };
    let batch_dims = match attr(call, "batch_dims")? {
        AttrValue::Null => 0,
        value => value
            .as_int()
            .ok_or_else(|| Diagnostic::pass_failed("take's `batch_dims` is not an integer"))?,
    };
    if batch_dims != 0 {
        return Err(Diagnostic::pass_failed(
            "take_grad only supports batch_dims equales to 0",
        ));
    }
    let (indices_shape, _) = tensor_type(indices)?;
    let (num_indices, indices, grad) = match indices_shape.len() {
        // The axis of the gradient was squeezed away by a scalar index.
        0 => (
            one.clone(),
            reshape(indices.clone(), &[1]),
            expand_dims(grad.clone(), axis),
        ),
        1 => (
            take(shape_of(indices), zero.clone(), Some(0)),
            indices.clone(),
            grad.clone(),
        ),
        _ => {
            return Err(Diagnostic::pass_failed(
                "take_grad only supports scalar or 1D indices",
            ))
        }
    };

    // Python's `while_loop(cond, [data_grad, i], body)`: a local function
    // `%while_loop` over fresh copies of the loop variables.
    let loop_var = Var::new("while_loop", None, None);
    let data_grad_var = Var::new("data_grad", Some(tensor(&data_shape, dtype)), None);
    let i_var = Var::new("i", Some(tensor(&[1], DataType::INT32)), None);
    let (acc, i) = (data_grad_var.expr().clone(), i_var.expr().clone());

    let condition = op_call_with(
        "squeeze",
        vec![op_call("less", vec![i.clone(), num_indices])],
        &[("axis", AttrValue::Null)],
    );

    let index = take(indices, i.clone(), Some(0));
    let grad_slice = take(grad, i.clone(), Some(axis));
    let mut begin = Vec::with_capacity(data_shape.len());
    let mut end = Vec::with_capacity(data_shape.len());
    for (ax, &size) in data_shape.iter().enumerate() {
        let size = scalar_tensor(size)?;
        // Python compares with the axis as written: a negative axis never
        // matches (TVM's behaviour, kept).
        if ax as i64 != axis {
            begin.push(zero.clone());
            end.push(size);
        } else {
            begin.push(index.clone());
            end.push(add(index.clone(), one.clone()));
        }
    }
    let (begin, end) = (concatenate(begin), concatenate(end));
    let update = dynamic_strided_slice(&acc, &begin, &end, unit_strides(data_shape.len())?);
    let update = add(update, grad_slice);
    let next_data_grad = op_call(
        "strided_set",
        vec![
            acc.clone(),
            update,
            begin,
            end,
            unit_strides(data_shape.len())?,
        ],
    );
    let recur = Expr::call(
        loop_var.expr().clone(),
        vec![next_data_grad, add(i.clone(), one)],
        None,
        None,
    );
    let body = Expr::if_(condition, recur, Expr::tuple(vec![acc, i], None), None);
    let looped = Expr::let_(
        loop_var.clone(),
        function(vec![data_grad_var, i_var], body),
        loop_var.into_expr(),
        None,
    );
    let result = Expr::call(looped, vec![data_grad, zero], None, None);
    let mut data_grad = Expr::tuple_get_item(result, 0, None);
    if matches!(axis_attr, AttrValue::Null) {
        data_grad = reshape_like(data_grad, data);
    }
    Ok(vec![data_grad, unary("zeros_like", arg(call, 1)?)])
}
