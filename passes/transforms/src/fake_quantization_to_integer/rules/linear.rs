//! Rules for the operators that accumulate products (`nn.conv2d`,
//! `nn.conv2d_transpose`, `nn.dense`, `nn.batch_matmul`) and the `nn.bias_add`
//! that follows them: QNN operators accumulating in int32 with the product of
//! the input scales.

use super::*;

pub(super) fn conv2d(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    convolution(expr, types, "qnn.conv2d")
}

pub(super) fn conv2d_transpose(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    convolution(expr, types, "qnn.conv2d_transpose")
}

/// `nn.conv2d`/`nn.conv2d_transpose` to their QNN form: the product of the
/// scales, zero point 0, int32, per channel of the output layout.
pub(super) fn convolution(
    expr: &Expr,
    types: &TypeMap,
    qnn_op: &str,
) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    let (x_t, w_t) = (types.tensor(&a[0])?, types.tensor(&a[1])?);
    let scale = product_scale(&x_t, &w_t);
    let zero_point = zeros_like_int32(&scale);
    let fields = fields_except(expr, "out_dtype");
    let mut named: Vec<(&str, AttrValue)> = fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    named.push(("out_dtype", AttrValue::DataType(DataType::int(32))));
    let out = op_call_with(
        qnn_op,
        vec![
            a[0].clone(),
            a[1].clone(),
            x_t.zero_point.clone(),
            w_t.zero_point.clone(),
            x_t.scale.clone(),
            w_t.scale.clone(),
        ],
        &named,
    );
    let layout = |n: &str| attr(expr, n).and_then(|v| v.as_str().map(str::to_string));
    let out_layout = layout("out_layout")
        .filter(|l| !l.is_empty())
        .or_else(|| layout("data_layout"))
        .unwrap_or_else(|| "NCHW".into());
    let axis = out_layout
        .find('C')
        .ok_or_else(|| format!("layout {out_layout} has no channel axis"))? as i64;
    Ok((
        out,
        AffineType::Tensor {
            scale,
            zero_point,
            dtype: DataType::int(32),
            axis,
        },
    ))
}

pub(super) fn dense(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    let (x_t, w_t) = (types.tensor(&a[0])?, types.tensor(&a[1])?);
    let scale = product_scale(&x_t, &w_t);
    let zero_point = zeros_like_int32(&scale);
    let fields = fields_except(expr, "out_dtype");
    let mut named: Vec<(&str, AttrValue)> = fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    named.push(("out_dtype", AttrValue::DataType(DataType::int(32))));
    let out = op_call_with(
        "qnn.dense",
        vec![
            a[0].clone(),
            a[1].clone(),
            x_t.zero_point.clone(),
            w_t.zero_point.clone(),
            x_t.scale.clone(),
            w_t.scale.clone(),
        ],
        &named,
    );
    Ok((
        out,
        AffineType::Tensor {
            scale,
            zero_point,
            dtype: DataType::int(32),
            axis: 1,
        },
    ))
}

pub(super) fn batch_matmul(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    let (x_t, y_t) = (types.tensor(&a[0])?, types.tensor(&a[1])?);
    let scale = product_scale(&x_t, &y_t);
    let zero_point = relay_ir::build::scalar_constant_f64(DataType::int(32), 0.0)
        .ok_or("cannot build the zero point")?;
    // The float call's transposes carry over (`nn.batch_matmul` defaults
    // to a transposed `y`).
    let transpose_a = attr(expr, "transpose_a").unwrap_or(AttrValue::Bool(false));
    let transpose_b = attr(expr, "transpose_b").unwrap_or(AttrValue::Bool(true));
    let out = op_call_with(
        "qnn.batch_matmul",
        vec![
            a[0].clone(),
            a[1].clone(),
            x_t.zero_point.clone(),
            y_t.zero_point.clone(),
            x_t.scale.clone(),
            y_t.scale.clone(),
        ],
        &[
            ("out_dtype", AttrValue::DataType(DataType::int(32))),
            ("transpose_a", transpose_a),
            ("transpose_b", transpose_b),
        ],
    );
    Ok((
        out,
        AffineType::Tensor {
            scale,
            zero_point,
            dtype: DataType::int(32),
            axis: x_t.axis,
        },
    ))
}

pub(super) fn bias_add(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    let x_t = types.tensor(&a[0])?;
    let mut bias = a[1].clone();
    if let Ok(b_t) = types.tensor(&bias) {
        if !same_parameters(&x_t, &b_t) {
            let in_scale = fold(x_t.scale.clone());
            let in_zero_point = fold(x_t.zero_point.clone());
            bias = requantize(
                bias,
                (&b_t.scale, &b_t.zero_point),
                (&in_scale, &in_zero_point),
                x_t.dtype,
                0,
            );
        }
    } else {
        if !is_float_constant(&bias) {
            return Err("AssertionError".into());
        }
        bias = op_call_with(
            "qnn.quantize",
            vec![bias, x_t.scale.clone(), x_t.zero_point.clone()],
            &[
                ("axis", int_attr(0)),
                ("out_dtype", AttrValue::DataType(x_t.dtype)),
            ],
        );
    }
    let out = with_fields(
        "nn.bias_add",
        vec![a[0].clone(), bias],
        &fields_except(expr, ""),
    );
    Ok((out, x_t.into_type()))
}

/// `cast(zeros_like(scale), "int32")`, folded.
pub(super) fn zeros_like_int32(scale: &Expr) -> Expr {
    fold(op_call_with(
        "cast",
        vec![op_call("zeros_like", vec![scale.clone()])],
        &[("dtype", AttrValue::DataType(DataType::int(32)))],
    ))
}

pub(super) fn product_scale(x: &TensorAffine, w: &TensorAffine) -> Expr {
    fold(op_call("multiply", vec![x.scale.clone(), w.scale.clone()]))
}
