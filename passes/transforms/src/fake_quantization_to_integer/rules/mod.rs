//! The per-operator rewrite rules of `FakeQuantizationToInteger` (TVM's
//! `register_fake_quantization_to_integer` functions in
//! `python/tvm/relay/transform/fake_quantization_to_integer.py`).
//!
//! A rule receives the call over its rewritten arguments and the affine
//! types known so far; it returns the integer expression and its affine
//! type, or an error where TVM's rule raises.

mod elementwise;
mod linear;
mod structural;

use crate::fold_constant::{fold_constant_expr, FoldOptions};
use elementwise::*;
use linear::*;
use relay_ir::build::{op_call, op_call_with};
use relay_ir::dtype::DataType;
use relay_ir::equal::structural_equal;
use relay_ir::{AttrValue, Expr};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;
use structural::*;

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
        "take" => take,
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

fn out_type(expr: &Expr, types: &TypeMap) -> Result<TensorAffine, String> {
    types.tensor(expr)
}

/// TVM's `approx_equal` on scale and zero point and equal dtypes.
fn same_parameters(a: &TensorAffine, b: &TensorAffine) -> bool {
    approx_equal(&a.scale, &b.scale)
        && approx_equal(&a.zero_point, &b.zero_point)
        && a.dtype == b.dtype
}

fn with_fields(name: &str, args: Vec<Expr>, fields: &[(String, AttrValue)]) -> Expr {
    let named: Vec<(&str, AttrValue)> = fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    op_call_with(name, args, &named)
}

fn is_float_constant(e: &Expr) -> bool {
    e.as_constant()
        .map(|c| c.dtype.is_float() || c.dtype.is_bfloat16())
        .unwrap_or(false)
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

fn affine_equal(a: &TensorAffine, b: &TensorAffine) -> bool {
    structural_equal(&a.scale, &b.scale, false)
        && structural_equal(&a.zero_point, &b.zero_point, false)
        && a.dtype == b.dtype
        && a.axis == b.axis
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(value: f64) -> Expr {
        relay_ir::build::scalar_constant_f64(DataType::float(32), value).unwrap()
    }

    #[test]
    fn approx_equal_is_allclose_on_folded_constants() {
        // np.allclose: |a - b| <= 1e-8 + 1e-5 * |b|.
        assert!(approx_equal(&scalar(0.5), &scalar(0.500_000_1)));
        assert!(!approx_equal(&scalar(0.5), &scalar(0.501)));
        // Products fold before the comparison.
        let product = op_call("multiply", vec![scalar(2.0), scalar(0.5)]);
        assert!(approx_equal(&product, &scalar(1.0)));
    }

    #[test]
    fn unknown_and_optional_operators_have_no_default_rule() {
        assert!(rule_for("sin").is_none());
        assert!(rule_for("nn.softmax").is_none());
        assert!(optional_rule_for("nn.softmax").is_some());
        assert!(rule_for("qnn.quantize").is_some());
    }
}
