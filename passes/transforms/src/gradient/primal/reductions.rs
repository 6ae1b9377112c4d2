//! The gradients of `max`, `variance` and the cross entropies: the
//! reductions whose gradient is not a plain broadcast of the incoming one.

use super::{
    arg, attr_bool, cast_like, const_shape, constant, div, dtype, int32_scalar, mul, neg, reduce,
    reduce_axes, unary, unreduce_expand,
};
use relay_ir::build::{op_call, op_call_with};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Call, Expr};

/// `max`: the gradient spread evenly over the elements equal to the
/// maximum (the result repeated back to the input's shape, compared).
pub(super) fn max_grad(orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let x = arg(call, 0)?;
    let axes = reduce_axes(call)?;
    let shape = const_shape(x)?;
    let mut grad = grad.clone();
    let repeated = match &axes {
        None => op_call("full_like", vec![x.clone(), orig.clone()]),
        Some(axes) => {
            let mut repeated = orig.clone();
            if !attr_bool(call, "keepdims")? {
                repeated = unreduce_expand(repeated, axes);
                grad = unreduce_expand(grad, axes);
            }
            for &axis in axes {
                let size = usize::try_from(axis)
                    .ok()
                    .and_then(|a| shape.get(a))
                    .ok_or_else(|| Diagnostic::pass_failed("the reduced axis is out of range"))?;
                repeated = op_call_with(
                    "repeat",
                    vec![repeated],
                    &[
                        ("repeats", AttrValue::int_imm(*size, DataType::INT32)),
                        ("axis", AttrValue::int_imm(axis, DataType::INT32)),
                    ],
                );
            }
            repeated
        }
    };
    let indicators = cast_like(op_call("equal", vec![repeated, x.clone()]), &grad);
    let num_selected = reduce("sum", indicators.clone(), axes, true, false);
    Ok(vec![div(mul(indicators, grad), num_selected)])
}

/// The factors of `variance`'s gradient, computed as the Python computes
/// them (in floating point, the element count an integer): `2 / n` for the
/// data and `-2` for the mean (`n / (n - 1)` times both when unbiased).
fn variance_factors(count: i64, unbiased: bool) -> Result<(f64, f64), Diagnostic> {
    let division_by_zero = || Diagnostic::pass_failed("float division by zero");
    let mut mult2 = -2.0f64;
    let mut count = count;
    if unbiased {
        if count == 1 {
            return Err(division_by_zero());
        }
        mult2 = mult2 * count as f64 / (count - 1) as f64;
        count -= 1;
    }
    if count == 0 {
        return Err(division_by_zero());
    }
    Ok((2.0 / count as f64, mult2))
}

/// `variance(data, mean)`: the mean is an argument, so each gets its own
/// term (the Python's "we take mean as an argument" note).
pub(super) fn variance_grad(
    _orig: &Expr,
    call: &Call,
    grad: &Expr,
) -> Result<Vec<Expr>, Diagnostic> {
    let (data, data_mean) = (arg(call, 0)?, arg(call, 1)?);
    let shape = const_shape(data)?;
    let axes = reduce_axes(call)?.unwrap_or_else(|| (0..shape.len() as i64).collect());
    let mut grad = grad.clone();
    if !attr_bool(call, "keepdims")? {
        grad = unreduce_expand(grad, &axes);
    }
    let mut count = 1i64;
    for &axis in &axes {
        count *= usize::try_from(axis)
            .ok()
            .and_then(|a| shape.get(a))
            .ok_or_else(|| Diagnostic::pass_failed("the reduced axis is out of range"))?;
    }
    let (mult1, mult2) = variance_factors(count, attr_bool(call, "unbiased")?)?;
    let dt = dtype(data)?;
    Ok(vec![
        mul(mul(grad.clone(), constant(mult1, dt)?), data.clone()),
        mul(mul(constant(mult2, dt)?, grad), data_mean.clone()),
    ])
}

/// The incoming gradient divided by the batch size, `shape_of(x)[0]` taken
/// at run time and cast to `x`'s dtype (the cross entropies average over
/// the batch).
fn per_batch(x: &Expr, grad: &Expr) -> Result<Expr, Diagnostic> {
    let shape = op_call_with(
        "shape_of",
        vec![x.clone()],
        &[("dtype", AttrValue::DataType(DataType::INT32))],
    );
    let batch_size = take(shape, int32_scalar(0)?, Some(0));
    let cast = op_call_with(
        "cast",
        vec![batch_size],
        &[("dtype", AttrValue::DataType(dtype(x)?))],
    );
    Ok(div(grad.clone(), cast))
}

/// Python's `take(data, indices, axis=axis)`: `batch_dims=0`, `mode="clip"`.
pub(super) fn take(data: Expr, indices: Expr, axis: Option<i64>) -> Expr {
    let axis = axis.map_or(AttrValue::Null, |a| AttrValue::int_imm(a, DataType::INT32));
    op_call_with(
        "take",
        vec![data, indices],
        &[
            ("batch_dims", AttrValue::int_imm(0, DataType::INT32)),
            ("axis", axis),
            ("mode", AttrValue::Str("clip".into())),
        ],
    )
}

pub(super) fn cross_entropy_grad(
    _orig: &Expr,
    call: &Call,
    grad: &Expr,
) -> Result<Vec<Expr>, Diagnostic> {
    let (x, y) = (arg(call, 0)?, arg(call, 1)?);
    let grad = per_batch(x, grad)?;
    Ok(vec![
        div(mul(neg(grad.clone()), y.clone()), x.clone()),
        mul(neg(grad), unary("log", x)),
    ])
}

pub(super) fn cross_entropy_with_logits_grad(
    _orig: &Expr,
    call: &Call,
    grad: &Expr,
) -> Result<Vec<Expr>, Diagnostic> {
    let (x, y) = (arg(call, 0)?, arg(call, 1)?);
    let grad = per_batch(x, grad)?;
    Ok(vec![
        mul(neg(grad.clone()), y.clone()),
        mul(neg(grad), x.clone()),
    ])
}

#[cfg(test)]
mod tests {
    use super::variance_factors;

    #[test]
    fn variance_factors_follow_the_python_arithmetic() {
        assert_eq!(variance_factors(4, false).unwrap(), (0.5, -2.0));
        let (mult1, mult2) = variance_factors(4, true).unwrap();
        assert_eq!(mult1, 2.0 / 3.0);
        assert_eq!(mult2, -2.0 * 4.0 / 3.0);
        assert!(variance_factors(1, true).is_err());
        assert!(variance_factors(0, false).is_err());
    }
}
