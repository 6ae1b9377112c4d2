//! Rules for the operators that move, select or average values: identities
//! on the integers (shape operators, max pooling, split, topk, broadcast_to,
//! pad), QNN forms (concatenate, avg_pool2d) and int32 averages (mean, the
//! global and adaptive pools).

use super::*;

pub(super) fn unary_identity(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    if a.len() != 1 {
        return Err("AssertionError".into());
    }
    Ok((expr.clone(), types.tensor(&a[0])?.into_type()))
}

pub(super) fn split(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let t = types.tensor(&args(expr)[0])?;
    let count = match attr(expr, "indices_or_sections") {
        Some(AttrValue::Array(items)) => items.len() + 1,
        Some(v) => usize::try_from(v.as_int().ok_or("bad indices_or_sections")?)
            .map_err(|_| "bad indices_or_sections")?,
        None => return Err("split without indices_or_sections".into()),
    };
    Ok((expr.clone(), AffineType::Tuple(vec![t.into_type(); count])))
}

pub(super) fn concatenate(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let data = &args(expr)[0];
    let Some(AffineType::Tuple(fields)) = types.get(data) else {
        return Err("concatenate of a value without a tuple affine type".into());
    };
    let mut scales = Vec::new();
    let mut zero_points = Vec::new();
    for field in fields {
        let AffineType::Tensor {
            scale, zero_point, ..
        } = field
        else {
            return Err("a tuple inside a concatenated tuple".into());
        };
        scales.push(scale.clone());
        zero_points.push(zero_point.clone());
    }
    let out_t = out_type(expr, types)?;
    let out = with_fields(
        "qnn.concatenate",
        vec![
            data.clone(),
            Expr::tuple(scales, None),
            Expr::tuple(zero_points, None),
            out_t.scale.clone(),
            out_t.zero_point.clone(),
        ],
        &fields_except(expr, ""),
    );
    Ok((out, out_t.into_type()))
}

pub(super) fn topk(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let t = types.tensor(&args(expr)[0])?;
    if attr(expr, "ret_type")
        .and_then(|v| v.as_str().map(str::to_string))
        .as_deref()
        != Some("values")
    {
        return Err("AssertionError".into());
    }
    Ok((expr.clone(), t.into_type()))
}

pub(super) fn broadcast_to(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let t = types.tensor(arg)?;
    let shape = attr(expr, "shape").ok_or("broadcast_to without shape")?;
    let out = op_call_with("broadcast_to", vec![arg.clone()], &[("shape", shape)]);
    Ok((out, t.into_type()))
}

pub(super) fn pad(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    let t = types.tensor(&a[0])?;
    let mut pad_value = a.get(1).cloned().ok_or("nn.pad without a pad value")?;
    if let Ok(pad_t) = types.tensor(&pad_value) {
        if !affine_equal(&t, &pad_t) {
            pad_value = requantize(
                pad_value,
                (&pad_t.scale, &pad_t.zero_point),
                (&t.scale, &t.zero_point),
                t.dtype,
                pad_t.axis,
            );
        }
    } else {
        if !is_float_constant(&pad_value) {
            return Err("AssertionError".into());
        }
        pad_value = op_call_with(
            "qnn.quantize",
            vec![pad_value, t.scale.clone(), t.zero_point.clone()],
            // `relay.qnn.op.quantize`'s default output dtype.
            &[("out_dtype", AttrValue::DataType(DataType::int(8)))],
        );
    }
    let out = with_fields(
        "nn.pad",
        vec![a[0].clone(), pad_value],
        &fields_except(expr, ""),
    );
    Ok((out, t.into_type()))
}

/// The argument in int32 for an averaging operator: requantized into the
/// output parameters when they differ, else cast.
pub(super) fn to_int32_for_average(arg: &Expr, t: &TensorAffine, out_t: &TensorAffine) -> Expr {
    if same_parameters(t, out_t) {
        op_call_with(
            "cast",
            vec![arg.clone()],
            &[("dtype", AttrValue::DataType(DataType::int(32)))],
        )
    } else {
        requantize(
            arg.clone(),
            (&t.scale, &t.zero_point),
            (&out_t.scale, &out_t.zero_point),
            DataType::int(32),
            t.axis,
        )
    }
}

pub(super) fn adaptive_avg_pool1d(
    expr: &Expr,
    types: &TypeMap,
) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let (t, out_t) = (types.tensor(arg)?, out_type(expr, types)?);
    let data = to_int32_for_average(arg, &t, &out_t);
    let output_size = attr(expr, "output_size").unwrap_or(AttrValue::Array(vec![]));
    let out = op_call_with(
        "nn.adaptive_avg_pool1d",
        vec![data],
        &[("output_size", output_size)],
    );
    Ok((
        out,
        TensorAffine {
            dtype: DataType::int(32),
            ..out_t
        }
        .into_type(),
    ))
}

/// TVM v0.13 rewrites `nn.avg_pool2d` into `qnn.avg_pool2d`, which
/// rescales from the input to the output parameters itself.
pub(super) fn avg_pool2d(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let (t, out_t) = (types.tensor(arg)?, out_type(expr, types)?);
    let out = with_fields(
        "qnn.avg_pool2d",
        vec![
            arg.clone(),
            t.scale.clone(),
            t.zero_point.clone(),
            out_t.scale.clone(),
            out_t.zero_point.clone(),
        ],
        &fields_except(expr, ""),
    );
    Ok((out, out_t.into_type()))
}

pub(super) fn global_avg_pool2d(
    expr: &Expr,
    types: &TypeMap,
) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let (t, out_t) = (types.tensor(arg)?, out_type(expr, types)?);
    let data = to_int32_for_average(arg, &t, &out_t);
    // TVM calls `relay.op.nn.global_avg_pool2d(arg)`: default layouts.
    let out = op_call_with("nn.global_avg_pool2d", vec![data], &[]);
    Ok((
        out,
        TensorAffine {
            dtype: DataType::int(32),
            ..out_t
        }
        .into_type(),
    ))
}

pub(super) fn mean(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let t = types.tensor(arg)?;
    let cast =
        |e: Expr, d: DataType| op_call_with("cast", vec![e], &[("dtype", AttrValue::DataType(d))]);
    let averaged = with_fields(
        "mean",
        vec![cast(arg.clone(), DataType::int(32))],
        &fields_except(expr, ""),
    );
    Ok((cast(averaged, t.dtype), t.into_type()))
}

/// `take` selects integers: the data's parameters carry over (the indices
/// are not part of the region's types).
pub(super) fn take(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let t = types.tensor(&args(expr)[0])?;
    Ok((expr.clone(), t.into_type()))
}
