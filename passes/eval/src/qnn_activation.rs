//! QNN activations and pooling through their QNN canonicalisations
//! (`src/relay/qnn/op/leaky_relu.cc`, `softmax.cc`, `avg_pool2d.cc`), as
//! FoldConstant computes them with `fold_qnn=true`: integer arithmetic
//! throughout, so the results are exact.

use super::cast::cast_tensor;
use super::elemwise::map_binary;
use super::qnn::{
    clip_cast, fixed_point_multiplier_shift, ints, q_multiply_shift, requantize_tensor,
    scalar_as_f32,
};
use super::tensor::{decode, encode, norm_axis, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "qnn.leaky_relu" => leaky_relu,
        "qnn.softmax" => softmax,
        "qnn.avg_pool2d" => avg_pool2d,
        _ => return None,
    })
}

const I32: DataType = DataType::INT32;

fn five_tensors<'v>(args: &'v [Value], call: &CallInfo) -> EvalResult<Vec<&'v TensorData>> {
    expect_args(args, 5, call)?;
    (0..5).map(|i| arg_tensor(args, i, call)).collect()
}

/// `QnnLeakyReluCanonicalize`: the input requantised to the output's
/// parameters (always: its zero points are `cast` calls, never the constants
/// `IsEqualScalar` looks for), `alpha·q' + (1 - alpha)·zp_o` by two
/// fixed-point multiplications where the *input* is below its zero point,
/// else the input itself (not requantised, as TVM writes it), clipped and
/// cast to the input type.
fn leaky_relu(args: &[Value], call: &CallInfo) -> EvalResult {
    let t = five_tensors(args, call)?;
    let (data, in_scale, in_zp, out_scale, out_zp) = (t[0], t[1], t[2], t[3], t[4]);
    let alpha = call.f64("alpha")?;
    let in_zp = cast_tensor(in_zp, I32)?;
    let out_zp = cast_tensor(out_zp, I32)?;
    let requantized = requantize_tensor(
        data, in_scale, &in_zp, out_scale, &out_zp, -1, "None", "None", I32,
    )?;
    let (m, s) = fixed_point_multiplier_shift(alpha);
    let (mz, sz) = fixed_point_multiplier_shift(1.0 - alpha);
    let zp_term = ints(&out_zp)?
        .into_iter()
        .map(|z| q_multiply_shift(z, mz, sz))
        .collect::<EvalResult<Vec<_>>>()?;
    let zp_term = encode(&Col::Int(zp_term), I32, out_zp.shape.clone())?;
    let prod = ints(&requantized)?
        .into_iter()
        .map(|q| q_multiply_shift(q, m, s))
        .collect::<EvalResult<Vec<_>>>()?;
    let prod = encode(&Col::Int(prod), I32, requantized.shape.clone())?;
    let negative_part = map_binary(&prod, &zp_term, "add")?;
    let data32 = cast_tensor(data, I32)?;
    let below = super::elemwise::map_compare(&data32, &in_zp, "less")?;
    let (below, negative_part, data_v) = (ints(&below)?, ints(&negative_part)?, ints(&data32)?);
    if below.len() != data_v.len() || negative_part.len() != data_v.len() {
        return unsupported("qnn.leaky_relu: per-channel parameters broadcast the data");
    }
    let out: Vec<i128> = below
        .iter()
        .zip(negative_part)
        .zip(&data_v)
        .map(|((&b, n), &d)| if b != 0 { n } else { d })
        .collect();
    Ok(Value::tensor(clip_cast(
        out,
        data.shape.clone(),
        data.dtype,
    )?))
}

/// `QnnSoftmaxCanonicalize` (Algorithm 1 of arXiv:2207.01405): integer
/// shifts approximate `exp`, the normalisation divides `2^30` by the sum,
/// and the result (a Q7 value) is requantised to int8.
///
/// The approximation shifts left by `8 - q`, where `q` grows with the
/// distance from the row's maximum; past 8 that is a shift by a negative
/// amount, which LLVM leaves undefined (x86's scalar and vector shifts
/// disagree on it), so such a call is not folded.
fn softmax(args: &[Value], call: &CallInfo) -> EvalResult {
    let t = five_tensors(args, call)?;
    let (data, in_scale, in_zp, out_scale, out_zp) = (t[0], t[1], t[2], t[3], t[4]);
    if data.ndim() == 0 {
        return unsupported("qnn.softmax: the data needs an axis");
    }
    let axis = norm_axis(call.int_or("axis", -1), data.ndim(), call.op)?;
    let zp = match ints(&cast_tensor(in_zp, I32)?)?.as_slice() {
        [z] => *z,
        _ => return unsupported("qnn.softmax: a scalar zero point expected"),
    };
    let scale = scalar_as_f32(in_scale, "the input scale")?;
    // ConvertDtype(round(1 / scale), int32): a clip in float32, then the
    // cast (out of range, x86's conversion gives INT32_MIN).
    let inv = (1.0f32 / scale).round();
    let clipped = inv.clamp(-2147483648.0, 2147483648.0);
    let x0 = ints(&cast_tensor(
        &encode(&Col::F32(vec![clipped]), DataType::FLOAT32, Vec::new())?,
        I32,
    )?)?[0];
    let wrap = |v: i128| super::tensor::wrap(I32, v);
    let q_data: Vec<i128> = ints(&cast_tensor(data, I32)?)?
        .into_iter()
        .map(|v| wrap(v - zp))
        .collect();
    let shape: Vec<usize> = data.shape.iter().map(|&d| d as usize).collect();
    let len = shape[axis];
    let step = strides(&shape)[axis];
    let outer = q_data.len() / (len * step).max(1);
    let mut out = vec![0i128; q_data.len()];
    let neg_x0 = wrap(-x0);
    if neg_x0 == 0 {
        return unsupported("qnn.softmax: the input scale rounds 1/scale to 0");
    }
    for o in 0..outer {
        for inner in 0..step {
            let at = |k: usize| o * len * step + k * step + inner;
            let max = (0..len).map(|k| q_data[at(k)]).max().unwrap_or(0);
            let mut exps = Vec::with_capacity(len);
            for k in 0..len {
                let x = wrap(q_data[at(k)] - max);
                let x_p = wrap(wrap(x + (x >> 1)) - (x >> 4));
                let q = wrap(x_p / neg_x0);
                let r = wrap(x_p - wrap(q * neg_x0));
                let x_b = wrap((r >> 1) + x0);
                let shift = wrap(8 - q);
                if !(0..32).contains(&shift) {
                    return unsupported(
                        "qnn.softmax: TVM shifts by a negative amount here (undefined in LLVM)",
                    );
                }
                exps.push(wrap(x_b << shift));
            }
            let sum = exps.iter().fold(0i128, |acc, &e| wrap(acc + e));
            if sum == 0 {
                return unsupported("qnn.softmax: a division by zero");
            }
            let factor = wrap((1i128 << 30) / sum);
            for (k, e) in exps.into_iter().enumerate() {
                out[at(k)] = wrap(factor * e) >> 23;
            }
        }
    }
    let output = encode(&Col::Int(out), I32, data.shape.clone())?;
    let q7_scale = encode(&Col::F32(vec![1.0 / 128.0]), DataType::FLOAT32, Vec::new())?;
    let zero = encode(&Col::Int(vec![0]), I32, Vec::new())?;
    let int8 = DataType::parse("int8").expect("int8");
    Ok(Value::tensor(requantize_tensor(
        &output, &q7_scale, &zero, out_scale, out_zp, 0, "None", "None", int8,
    )?))
}

/// `QnnAvgPoolCanonicalize`: requantised (or cast) to int32 with the
/// output's parameters, `nn.avg_pool2d` in int32 (C division), clipped and
/// cast to the data type.
fn avg_pool2d(args: &[Value], call: &CallInfo) -> EvalResult {
    let t = five_tensors(args, call)?;
    let (data, in_scale, in_zp, out_scale, out_zp) = (t[0], t[1], t[2], t[3], t[4]);
    let same = |a: &TensorData, b: &TensorData| a.ndim() == 0 && b.ndim() == 0 && a == b;
    let requantized = if !same(in_scale, out_scale) || !same(in_zp, out_zp) {
        requantize_tensor(
            data, in_scale, in_zp, out_scale, out_zp, -1, "None", "None", I32,
        )?
    } else {
        cast_tensor(data, I32)?
    };
    let pool_call = CallInfo {
        op: "nn.avg_pool2d",
        ..*call
    };
    let pool = super::pool::kernel("nn.avg_pool2d").expect("the avg_pool2d kernel");
    let pooled = pool(&[Value::tensor(requantized)], &pool_call)?;
    let pooled = pooled
        .as_tensor()
        .ok_or_else(|| super::EvalError::Unsupported("qnn.avg_pool2d: a tuple".into()))?;
    let Col::Int(v) = decode(pooled)? else {
        return unsupported("qnn.avg_pool2d: integers expected");
    };
    Ok(Value::tensor(clip_cast(
        v,
        pooled.shape.clone(),
        data.dtype,
    )?))
}

#[cfg(test)]
mod tests {
    use crate::tensor::{decode, encode, Col};
    use crate::{eval_call, CallInfo, EvalError, Value};
    use relay_ir::dtype::DataType;
    use relay_ir::{AttrValue, Attrs};

    fn int8(v: &[i128]) -> Value {
        let dt = DataType::parse("int8").unwrap();
        Value::tensor(encode(&Col::Int(v.to_vec()), dt, vec![v.len() as i64]).unwrap())
    }

    fn f32_scalar(v: f32) -> Value {
        Value::tensor(encode(&Col::F32(vec![v]), DataType::FLOAT32, vec![]).unwrap())
    }

    fn i32_scalar(v: i128) -> Value {
        Value::tensor(encode(&Col::Int(vec![v]), DataType::INT32, vec![]).unwrap())
    }

    fn run(op: &str, attrs: &Attrs, args: &[Value]) -> Result<Col, EvalError> {
        eval_call(&CallInfo::new(op, Some(attrs)), args)
            .map(|v| decode(v.as_tensor().unwrap()).unwrap())
    }

    #[test]
    fn leaky_relu_scales_below_the_input_zero_point_by_fixed_point() {
        let a = Attrs::new("test", vec![("alpha".into(), AttrValue::Double(0.25))]);
        // alpha = 2^-2: (x + 2) >> 2, rounding half up; the rest passes.
        let zero = [
            f32_scalar(0.5),
            i32_scalar(0),
            f32_scalar(0.5),
            i32_scalar(0),
        ];
        let mut args = vec![int8(&[-10, 0, 5, -128])];
        args.extend(zero);
        assert_eq!(
            run("qnn.leaky_relu", &a, &args).unwrap(),
            Col::Int(vec![-2, 0, 5, -32])
        );
        // Zero points 2: below 2, alpha·x' + round(0.75·2) = alpha·x' + 2.
        let two = [
            f32_scalar(0.5),
            i32_scalar(2),
            f32_scalar(0.5),
            i32_scalar(2),
        ];
        let mut args = vec![int8(&[-10, 1, 5])];
        args.extend(two);
        assert_eq!(
            run("qnn.leaky_relu", &a, &args).unwrap(),
            Col::Int(vec![0, 2, 5])
        );
    }

    #[test]
    fn softmax_follows_the_integer_algorithm_and_refuses_undefined_shifts() {
        let a = Attrs::new("test", vec![("axis".into(), AttrValue::Int(-1))]);
        let params = |data: Value| {
            vec![
                data,
                f32_scalar(0.25),
                i32_scalar(0),
                f32_scalar(1.0 / 128.0),
                i32_scalar(0),
            ]
        };
        // exps 4<<8 and 3<<7; 2^30/1408 = 762600; (762600·e) >> 23.
        assert_eq!(
            run("qnn.softmax", &a, &params(int8(&[0, -4]))).unwrap(),
            Col::Int(vec![93, 34])
        );
        assert!(matches!(
            run("qnn.softmax", &a, &params(int8(&[0, -100]))),
            Err(EvalError::Unsupported(_))
        ));
    }
}
