//! The per-operator rewrite rules of `FakeQuantizationToInteger` (TVM's
//! `register_fake_quantization_to_integer` functions in
//! `python/tvm/relay/transform/fake_quantization_to_integer.py`).
//!
//! A rule receives the call over its rewritten arguments and the affine
//! types known so far; it returns the integer expression and its affine
//! type, or an error where TVM's rule raises.

use crate::fold_constant::{fold_constant_expr, FoldOptions};
use relay_ir::build::{op_call, op_call_with};
use relay_ir::dtype::DataType;
use relay_ir::equal::structural_equal;
use relay_ir::{AttrValue, Expr};
use std::collections::HashMap;

/// `real = (q - zero_point) * scale`, per tensor or per tuple field.
#[derive(Clone, Debug)]
pub(crate) enum AffineType {
    Tensor {
        scale: Expr,
        zero_point: Expr,
        dtype: DataType,
        axis: i64,
    },
    Tuple(Vec<AffineType>),
}

/// Affine types by node identity (TVM's `Map<Expr, AffineType>`).
#[derive(Default)]
pub(crate) struct TypeMap(HashMap<usize, (Expr, AffineType)>);

impl TypeMap {
    pub(crate) fn insert(&mut self, expr: &Expr, ty: AffineType) {
        self.0.insert(expr.addr(), (expr.clone(), ty));
    }
    pub(crate) fn get(&self, expr: &Expr) -> Option<&AffineType> {
        self.0.get(&expr.addr()).map(|(_, t)| t)
    }
    fn tensor(&self, expr: &Expr) -> Result<TensorAffine, String> {
        match self.get(expr) {
            Some(AffineType::Tensor {
                scale,
                zero_point,
                dtype,
                axis,
            }) => Ok(TensorAffine {
                scale: scale.clone(),
                zero_point: zero_point.clone(),
                dtype: *dtype,
                axis: *axis,
            }),
            Some(AffineType::Tuple(_)) => Err("expected a tensor affine type".into()),
            None => Err("an input of the rewritten operator has no affine type".into()),
        }
    }
}

#[derive(Clone)]
struct TensorAffine {
    scale: Expr,
    zero_point: Expr,
    dtype: DataType,
    axis: i64,
}

impl TensorAffine {
    fn into_type(self) -> AffineType {
        AffineType::Tensor {
            scale: self.scale,
            zero_point: self.zero_point,
            dtype: self.dtype,
            axis: self.axis,
        }
    }
}

pub(crate) type Rule = fn(&Expr, &TypeMap) -> Result<(Expr, AffineType), String>;

/// The rule registered for `op`, if any.
pub(crate) fn rule_for(op: &str) -> Option<Rule> {
    Some(match op {
        "qnn.dequantize" => dequantize,
        "qnn.quantize" => quantize,
        "reshape" | "squeeze" | "strided_slice" | "transpose" | "expand_dims" | "nn.max_pool2d"
        | "nn.batch_flatten" | "nn.depth_to_space" | "max" | "min" => unary_identity,
        "image.resize2d" => unary_identity,
        "nn.adaptive_avg_pool1d" => adaptive_avg_pool1d,
        "nn.avg_pool2d" => avg_pool2d,
        "nn.global_avg_pool2d" => global_avg_pool2d,
        "broadcast_to" => broadcast_to,
        "nn.bias_add" => bias_add,
        "nn.conv2d" => conv2d,
        "nn.conv2d_transpose" => conv2d_transpose,
        "nn.dense" => dense,
        "nn.batch_matmul" => batch_matmul,
        "concatenate" => concatenate,
        "topk" => topk,
        "split" => split,
        "clip" => clip,
        "nn.relu" => relu,
        "nn.leaky_relu" => leaky_relu,
        "nn.pad" => pad,
        "mean" => mean,
        "add" | "multiply" | "subtract" => binary_qnn,
        "minimum" | "maximum" => binary_identity,
        "sqrt" | "rsqrt" | "exp" | "erf" | "sigmoid" | "hardswish" | "tanh" | "abs" | "log" => {
            unary_qnn
        }
        _ => return None,
    })
}

/// The rules TVM registers as optional
/// (`FTVMOptionalFakeQuantizationToInteger`), used for the operators named
/// in the pass's `optional_qnn_ops`.
pub(crate) fn optional_rule_for(op: &str) -> Option<Rule> {
    match op {
        "nn.softmax" => Some(softmax),
        _ => None,
    }
}

fn fold(expr: Expr) -> Expr {
    fold_constant_expr(&expr, &FoldOptions::default()).0
}

fn int_attr(value: i64) -> AttrValue {
    AttrValue::int_imm(value, DataType::int(32))
}

/// TVM's `approx_equal`: both fold to constants that are close
/// (`np.allclose`), or are structurally equal.
fn approx_equal(x: &Expr, y: &Expr) -> bool {
    let (x, y) = (fold(x.clone()), fold(y.clone()));
    match (x.as_constant(), y.as_constant()) {
        (Some(a), Some(b)) => match (a.to_f64_vec(), b.to_f64_vec()) {
            (Ok(a), Ok(b)) => {
                let n = a.len().max(b.len());
                (a.len() == b.len() || a.len() == 1 || b.len() == 1)
                    && (0..n).all(|i| {
                        let va = a[if a.len() == 1 { 0 } else { i }];
                        let vb = b[if b.len() == 1 { 0 } else { i }];
                        (va - vb).abs() <= 1e-8 + 1e-5 * vb.abs()
                    })
            }
            _ => false,
        },
        _ => structural_equal(&x, &y, false),
    }
}

fn args(expr: &Expr) -> &[Expr] {
    &expr.as_call().expect("rules receive calls").args
}

fn attr(expr: &Expr, name: &str) -> Option<AttrValue> {
    expr.as_call()?.attrs.as_ref()?.get(name).cloned()
}

/// The call's attribute fields, except `skip`.
fn fields_except(expr: &Expr, skip: &str) -> Vec<(String, AttrValue)> {
    expr.as_call()
        .and_then(|c| c.attrs.as_ref())
        .map(|a| {
            a.fields()
                .iter()
                .filter(|(n, _)| n != skip)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn requantize(
    data: Expr,
    from: (&Expr, &Expr),
    to: (&Expr, &Expr),
    out_dtype: DataType,
    axis: i64,
) -> Expr {
    op_call_with(
        "qnn.requantize",
        vec![
            data,
            from.0.clone(),
            from.1.clone(),
            to.0.clone(),
            to.1.clone(),
        ],
        &[
            ("axis", int_attr(axis)),
            ("out_dtype", AttrValue::DataType(out_dtype)),
        ],
    )
}

fn dequantize(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let t = types.tensor(expr)?;
    Ok((args(expr)[0].clone(), t.into_type()))
}

fn quantize(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    let t = types.tensor(&a[0])?;
    let out_dtype = match attr(expr, "out_dtype") {
        Some(AttrValue::DataType(d)) => d,
        Some(AttrValue::Str(s)) => s.parse().map_err(|_| "bad out_dtype".to_string())?,
        _ => return Err("qnn.quantize without out_dtype".into()),
    };
    let out_axis = attr(expr, "axis").and_then(|v| v.as_int()).unwrap_or(-1);
    let in_scale = fold(t.scale.clone());
    let in_zero_point = fold(t.zero_point.clone());
    let mut out = a[0].clone();
    if !(approx_equal(&in_scale, &a[1])
        && approx_equal(&in_zero_point, &a[2])
        && t.dtype == out_dtype)
    {
        out = requantize(
            out,
            (&in_scale, &in_zero_point),
            (&a[1], &a[2]),
            out_dtype,
            t.axis,
        );
    }
    let ty = AffineType::Tensor {
        scale: a[1].clone(),
        zero_point: a[2].clone(),
        dtype: out_dtype,
        axis: out_axis,
    };
    Ok((out, ty))
}

fn unary_identity(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    if a.len() != 1 {
        return Err("AssertionError".into());
    }
    Ok((expr.clone(), types.tensor(&a[0])?.into_type()))
}

/// `cast(zeros_like(scale), "int32")`, folded.
fn zeros_like_int32(scale: &Expr) -> Expr {
    fold(op_call_with(
        "cast",
        vec![op_call("zeros_like", vec![scale.clone()])],
        &[("dtype", AttrValue::DataType(DataType::int(32)))],
    ))
}

fn product_scale(x: &TensorAffine, w: &TensorAffine) -> Expr {
    fold(op_call("multiply", vec![x.scale.clone(), w.scale.clone()]))
}

fn conv2d(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    convolution(expr, types, "qnn.conv2d")
}

fn conv2d_transpose(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    convolution(expr, types, "qnn.conv2d_transpose")
}

/// `nn.conv2d`/`nn.conv2d_transpose` to their QNN form: the product of the
/// scales, zero point 0, int32, per channel of the output layout.
fn convolution(expr: &Expr, types: &TypeMap, qnn_op: &str) -> Result<(Expr, AffineType), String> {
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

fn dense(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn relu(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    let t = types.tensor(&a[0])?;
    let scale_elements = fold(t.scale.clone())
        .as_constant()
        .map(|c| (c.shape.len(), c.num_elements()));
    let mut zero_point = t.zero_point.clone();
    match scale_elements {
        Some((rank, _)) if rank > 1 => return Err("AssertionError".into()),
        Some((1, n)) if n > 1 => {
            let (typed, _) = relay_infer::infer_expr(&a[0], None);
            let rank = typed
                .checked_type()
                .and_then(|ty| ty.as_tensor())
                .map(|ty| ty.shape.len())
                .ok_or("the relu input has no tensor type")?;
            let mut shape = vec![1i64; rank];
            let axis = if t.axis < 0 {
                t.axis + rank as i64
            } else {
                t.axis
            };
            *shape
                .get_mut(usize::try_from(axis).map_err(|_| "bad axis")?)
                .ok_or("bad axis")? = -1;
            zero_point = relay_ir::build::reshape(
                op_call_with(
                    "broadcast_to",
                    vec![zero_point],
                    &[("shape", relay_ir::build::int_array(&[n]))],
                ),
                &shape,
            );
        }
        _ => {}
    }
    let zero = fold(op_call_with(
        "cast",
        vec![zero_point],
        &[("dtype", AttrValue::DataType(t.dtype))],
    ));
    let ty = t.clone().into_type();
    Ok((op_call("maximum", vec![a[0].clone(), zero]), ty))
}

fn split(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let t = types.tensor(&args(expr)[0])?;
    let count = match attr(expr, "indices_or_sections") {
        Some(AttrValue::Array(items)) => items.len() + 1,
        Some(v) => usize::try_from(v.as_int().ok_or("bad indices_or_sections")?)
            .map_err(|_| "bad indices_or_sections")?,
        None => return Err("split without indices_or_sections".into()),
    };
    Ok((expr.clone(), AffineType::Tuple(vec![t.into_type(); count])))
}

/// `add`, `multiply`, `subtract` to `qnn.add`, `qnn.mul`, `qnn.subtract`.
fn binary_qnn(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let (left, right, left_t, right_t, out_t) = binary_operands(expr, types)?;
    let name = match crate::fake_quantization_to_integer::op_name(expr) {
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

fn out_type(expr: &Expr, types: &TypeMap) -> Result<TensorAffine, String> {
    types.tensor(expr)
}

/// TVM's `approx_equal` on scale and zero point and equal dtypes.
fn same_parameters(a: &TensorAffine, b: &TensorAffine) -> bool {
    approx_equal(&a.scale, &b.scale)
        && approx_equal(&a.zero_point, &b.zero_point)
        && a.dtype == b.dtype
}

/// The argument in int32 for an averaging operator: requantized into the
/// output parameters when they differ, else cast.
fn to_int32_for_average(arg: &Expr, t: &TensorAffine, out_t: &TensorAffine) -> Expr {
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

fn with_fields(name: &str, args: Vec<Expr>, fields: &[(String, AttrValue)]) -> Expr {
    let named: Vec<(&str, AttrValue)> = fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    op_call_with(name, args, &named)
}

fn adaptive_avg_pool1d(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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
fn avg_pool2d(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn global_avg_pool2d(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn broadcast_to(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let arg = &args(expr)[0];
    let t = types.tensor(arg)?;
    let shape = attr(expr, "shape").ok_or("broadcast_to without shape")?;
    let out = op_call_with("broadcast_to", vec![arg.clone()], &[("shape", shape)]);
    Ok((out, t.into_type()))
}

fn is_float_constant(e: &Expr) -> bool {
    e.as_constant()
        .map(|c| c.dtype.is_float() || c.dtype.is_bfloat16())
        .unwrap_or(false)
}

fn bias_add(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn batch_matmul(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn concatenate(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn topk(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

/// The scalar value of a constant of one element.
fn scalar_value(e: &Expr) -> Option<f64> {
    let c = e.as_constant()?;
    if c.num_elements() != 1 {
        return None;
    }
    c.get_f64(0).ok()
}

fn tensor_shape(e: &Expr) -> Result<Vec<i64>, String> {
    let (typed, _) = relay_infer::infer_expr(e, None);
    typed
        .checked_type()
        .and_then(|t| t.as_tensor())
        .map(|t| t.shape.iter().map(|d| d.as_int().unwrap_or(-1)).collect())
        .ok_or_else(|| "cannot infer a shape".to_string())
}

/// `reshape(broadcast_to(value, scale_shape), [1, …, -1 at axis, …, 1])`:
/// a per-channel parameter laid along the quantization axis of `arg`.
fn along_axis(value: Expr, scale_shape: &[i64], arg: &Expr, axis: i64) -> Result<Expr, String> {
    let rank = tensor_shape(arg)?.len();
    let mut shape = vec![1i64; rank];
    // Python's negative indexing.
    let index = if axis < 0 { axis + rank as i64 } else { axis };
    *usize::try_from(index)
        .ok()
        .and_then(|i| shape.get_mut(i))
        .ok_or("IndexError: list assignment index out of range")? = -1;
    Ok(relay_ir::build::reshape(
        op_call_with(
            "broadcast_to",
            vec![value],
            &[("shape", relay_ir::build::int_array(scale_shape))],
        ),
        &shape,
    ))
}

fn clip(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn leaky_relu(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn affine_equal(a: &TensorAffine, b: &TensorAffine) -> bool {
    structural_equal(&a.scale, &b.scale, false)
        && structural_equal(&a.zero_point, &b.zero_point, false)
        && a.dtype == b.dtype
        && a.axis == b.axis
}

fn pad(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn mean(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

/// The operand types of a binary operator, a float constant operand
/// quantized with the other operand's parameters (TVM's `get_binary_types`).
fn binary_operands(
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

fn binary_identity(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn unary_qnn(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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

fn softmax(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
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
