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
        "nn.conv2d" => conv2d,
        "nn.dense" => dense,
        "nn.relu" => relu,
        "split" => split,
        "add" | "multiply" | "subtract" => binary_qnn,
        _ => return None,
    })
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
        "qnn.conv2d",
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

/// `add`, `multiply`, `subtract` to `qnn.add`, `qnn.mul`, `qnn.subtract`;
/// a float constant operand is quantized with the other operand's type.
fn binary_qnn(expr: &Expr, types: &TypeMap) -> Result<(Expr, AffineType), String> {
    let a = args(expr);
    let (mut left, mut right) = (a[0].clone(), a[1].clone());
    let mut left_t = types.tensor(&left).ok();
    let mut right_t = types.tensor(&right).ok();
    let mut out_t = types.tensor(expr)?;
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
    match (&left_t, &right_t) {
        (None, None) => return Err("neither input is quantized!".into()),
        (None, Some(r)) => {
            left = quantize_with(&left, r)?;
            left_t = Some(r.clone());
        }
        (Some(l), None) => {
            right = quantize_with(&right, l)?;
            right_t = Some(l.clone());
        }
        _ => {}
    }
    let (left_t, right_t) = (left_t.expect("set"), right_t.expect("set"));
    if left_t.dtype != out_t.dtype {
        out_t = left_t.clone();
    }
    let name = match crate::fake_quantization_to_integer::op_name(expr) {
        Some("add") => "qnn.add",
        Some("multiply") => "qnn.mul",
        _ => "qnn.subtract",
    };
    // TVM v0.13's binary QNN operators take no attributes (the axes came later).
    let out = op_call(
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
    );
    Ok((out, out_t.into_type()))
}
