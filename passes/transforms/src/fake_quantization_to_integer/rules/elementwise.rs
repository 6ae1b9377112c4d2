//! Rules for element-wise operators: clip and relu in the quantized domain,
//! binary arithmetic to QNN operators, minimum/maximum on requantized
//! inputs, and the unary operators with a QNN form.

use super::*;

pub(super) fn relu(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let t = types.tensor(arg)?;
    // TVM asserts a scalar or vector scale and lays a per-channel zero
    // point along the quantization axis.
    let scale_shape = tensor_shape(&t.scale)?;
    if scale_shape.len() > 1 {
        return Err("AssertionError".into());
    }
    let mut zero_point = t.zero_point.clone();
    if scale_shape.first().is_some_and(|&n| n > 1) {
        zero_point = along_axis(zero_point, &scale_shape, arg, t.axis)?;
    }
    let zero = fold(op_call_with(
        "cast",
        vec![zero_point],
        &[("dtype", AttrValue::DataType(t.dtype))],
    ));
    Ok((op_call("maximum", vec![arg.clone(), zero]), t.into_type()))
}

pub(super) fn clip(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let t = types.tensor(arg)?;
    let a_min = attr(expr, "a_min")
        .and_then(|v| v.as_f64())
        .ok_or("clip without a_min")?;
    let a_max = attr(expr, "a_max")
        .and_then(|v| v.as_f64())
        .ok_or("clip without a_max")?;
    let scale = fold(t.scale.clone());
    let zero_point = fold(t.zero_point.clone());
    let out = if let (Some(s), Some(z)) = (scalar_value(&scale), scalar_value(&zero_point)) {
        // Python's `int(amin / scale + z_p)`: truncation towards zero.
        let new_min = (a_min / s + z).trunc();
        let new_max = (a_max / s + z).trunc();
        op_call_with(
            "clip",
            vec![arg.clone()],
            &[
                ("a_min", AttrValue::Double(new_min)),
                ("a_max", AttrValue::Double(new_max)),
            ],
        )
    } else {
        let constant = |v: f64| {
            relay_ir::build::scalar_constant_f64(DataType::float(32), v)
                .ok_or_else(|| "cannot build a float constant".to_string())
        };
        let (mut low, mut high) = (constant(a_min)?, constant(a_max)?);
        let scale_shape = tensor_shape(&scale)?;
        if scale_shape.first().is_some_and(|&n| n > 1) {
            low = along_axis(low, &scale_shape, arg, t.axis)?;
            high = along_axis(high, &scale_shape, arg, t.axis)?;
        }
        let quantize = |v: Expr| {
            op_call_with(
                "qnn.quantize",
                vec![v, scale.clone(), zero_point.clone()],
                &[
                    ("axis", int_attr(t.axis)),
                    ("out_dtype", AttrValue::DataType(t.dtype)),
                ],
            )
        };
        op_call(
            "minimum",
            vec![
                op_call("maximum", vec![arg.clone(), fold(quantize(low))]),
                fold(quantize(high)),
            ],
        )
    };
    Ok((out, t.into_type()))
}

pub(super) fn leaky_relu(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let x_t = types.tensor(&args(expr)[0])?;
    let out_t = out_type(expr, types)?;
    let alpha = attr(expr, "alpha").unwrap_or(AttrValue::Double(0.25));
    // TVM v0.13 passes the (rebuilt) `nn.leaky_relu` call itself as the data.
    let out = op_call_with(
        "qnn.leaky_relu",
        vec![
            expr.clone(),
            x_t.scale.clone(),
            x_t.zero_point.clone(),
            out_t.scale,
            out_t.zero_point,
        ],
        &[("alpha", alpha)],
    );
    Ok((out, x_t.into_type()))
}

/// The operand types of a binary operator, a float constant operand
/// quantized with the other operand's parameters (TVM's `get_binary_types`).
pub(super) fn binary_operands(
    expr: &Expr,
    types: &TypeMap,
) -> Result<(Expr, Expr, TensorAffine, TensorAffine, TensorAffine), String> {
    let a = args(expr);
    let (mut left, mut right) = (a[0].clone(), a[1].clone());
    let left_t = types.tensor(&left).ok();
    let right_t = types.tensor(&right).ok();
    let mut out_t = out_type(expr, types)?;
    let quantize_with = |c: &Expr, t: &TensorAffine| -> Result<Expr, String> {
        if c.as_constant().is_none() {
            return Err("AssertionError".into());
        }
        Ok(op_call_with(
            "qnn.quantize",
            vec![c.clone(), t.scale.clone(), t.zero_point.clone()],
            &[("out_dtype", AttrValue::DataType(t.dtype))],
        ))
    };
    let (left_t, right_t) = match (left_t, right_t) {
        (None, None) => return Err("neither input is quantized!".into()),
        (None, Some(r)) => {
            left = quantize_with(&left, &r)?;
            (r.clone(), r)
        }
        (Some(l), None) => {
            right = quantize_with(&right, &l)?;
            (l.clone(), l)
        }
        (Some(l), Some(r)) => (l, r),
    };
    if left_t.dtype != out_t.dtype {
        out_t = left_t.clone();
    }
    Ok((left, right, left_t, right_t, out_t))
}

/// `add`, `multiply`, `subtract` to `qnn.add`, `qnn.mul`, `qnn.subtract`.
pub(super) fn binary_qnn(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let (left, right, left_t, right_t, out_t) = binary_operands(expr, types)?;
    let op = crate::fake_quantization_to_integer::op_name(expr);
    // int32 operands with one scale and zero point 0, the output's too (an
    // accumulator plus a bias quantized like it): a plain add or subtract.
    if matches!(op, Some("add") | Some("subtract"))
        && same_parameters(&left_t, &right_t)
        && left_t.dtype == DataType::int(32)
        && approx_equal(&left_t.scale, &out_t.scale)
        && approx_equal(&left_t.zero_point, &out_t.zero_point)
    {
        let zero_point = out_t
            .zero_point
            .as_constant()
            .and_then(|c| c.to_f64_vec().ok())
            .ok_or("AttributeError: the output zero point is not a constant")?;
        if zero_point.iter().all(|&z| z == 0.0) {
            let name = op.unwrap_or("add");
            return Ok((op_call(name, vec![left, right]), out_t.into_type()));
        }
    }
    let name = match op {
        Some("add") => "qnn.add",
        Some("multiply") => "qnn.mul",
        _ => "qnn.subtract",
    };
    let out = op_call_with(
        name,
        vec![
            left,
            right,
            left_t.scale.clone(),
            left_t.zero_point.clone(),
            right_t.scale.clone(),
            right_t.zero_point.clone(),
            out_t.scale.clone(),
            out_t.zero_point.clone(),
        ],
        &[
            ("lhs_axis", int_attr(left_t.axis)),
            ("rhs_axis", int_attr(right_t.axis)),
        ],
    );
    Ok((out, out_t.into_type()))
}

pub(super) fn binary_identity(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let (mut left, mut right, left_t, right_t, out_t) = binary_operands(expr, types)?;
    if !affine_equal(&left_t, &out_t) {
        left = requantize(
            left,
            (&left_t.scale, &left_t.zero_point),
            (&out_t.scale, &out_t.zero_point),
            out_t.dtype,
            left_t.axis,
        );
    }
    if !affine_equal(&right_t, &out_t) {
        right = requantize(
            right,
            (&right_t.scale, &right_t.zero_point),
            (&out_t.scale, &out_t.zero_point),
            out_t.dtype,
            right_t.axis,
        );
    }
    let name = crate::fake_quantization_to_integer::op_name(expr).unwrap_or("maximum");
    Ok((op_call(name, vec![left, right]), out_t.into_type()))
}

pub(super) fn unary_qnn(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let x_t = types.tensor(arg)?;
    let out_t = out_type(expr, types)?;
    let name = format!(
        "qnn.{}",
        crate::fake_quantization_to_integer::op_name(expr).unwrap_or_default()
    );
    let out = op_call(
        &name,
        vec![
            arg.clone(),
            x_t.scale,
            x_t.zero_point,
            out_t.scale.clone(),
            out_t.zero_point.clone(),
        ],
    );
    Ok((out, out_t.into_type()))
}

pub(super) fn softmax(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let x_t = types.tensor(arg)?;
    let out_t = out_type(expr, types)?;
    let out = with_fields(
        "qnn.softmax",
        vec![
            arg.clone(),
            x_t.scale,
            x_t.zero_point,
            out_t.scale.clone(),
            out_t.zero_point.clone(),
        ],
        &fields_except(expr, ""),
    );
    Ok((out, out_t.into_type()))
}
