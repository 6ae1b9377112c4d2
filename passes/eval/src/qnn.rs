//! QNN kernels, computed as TVM computes them when it folds them: through
//! their QNN canonicalisation (`src/relay/qnn/op/*.cc`) into plain integer
//! and float operators. Requantisation uses the default configuration of the
//! interpreter's context (target `llvm` without `-mcpu`): `rounding="UPWARD"`
//! and `compute_dtype="int64"` unless the call says otherwise, i.e. the
//! fixed-point multiplication of `tir.q_multiply_shift`.

use super::cast::cast_tensor;
use super::elemwise::map_binary;
use super::tensor::{decode, encode, wrap, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::{AttrValue, Attrs};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "qnn.quantize" => quantize,
        "qnn.dequantize" => dequantize,
        "qnn.requantize" => requantize,
        "qnn.add" | "qnn.subtract" => add_subtract,
        "qnn.mul" => mul,
        "qnn.abs" | "qnn.erf" | "qnn.exp" | "qnn.hardswish" | "qnn.log" | "qnn.rsqrt"
        | "qnn.sigmoid" | "qnn.sqrt" | "qnn.tanh" => unary,
        "qnn.concatenate" => concatenate,
        "fixed_point_multiply" => fixed_point_multiply,
        "fixed_point_multiply_per_axis" => fixed_point_multiply_per_axis,
        _ => return None,
    })
}

const I32: DataType = DataType::INT32;
const I64: DataType = DataType::INT64;

/// `IsEqualScalar`: both rank-0 constants with the same type and bytes.
fn is_equal_scalar(a: &TensorData, b: &TensorData) -> bool {
    a.ndim() == 0 && b.ndim() == 0 && a == b
}

fn zero_i32() -> TensorData {
    TensorData::new(I32, Vec::new(), vec![0; 4]).expect("a scalar")
}

/// `GetScalarFromConstant<float>`: the first element read as a float32.
pub(crate) fn scalar_as_f32(t: &TensorData, what: &str) -> EvalResult<f32> {
    if t.dtype != DataType::FLOAT32 || t.num_elements() < 1 {
        return unsupported(format!("{what} is not a float32 constant"));
    }
    Ok(f32::from_le_bytes([
        t.data[0], t.data[1], t.data[2], t.data[3],
    ]))
}

fn floats_as_f32(t: &TensorData, what: &str) -> EvalResult<Vec<f32>> {
    match (t.dtype == DataType::FLOAT32, decode(t)?) {
        (true, Col::F32(v)) => Ok(v),
        _ => unsupported(format!("{what} is not a float32 constant")),
    }
}

/// `ExpandBiasToMatchAxis`: a vector reshaped so that it broadcasts along
/// `axis` of a rank-`ndim` tensor.
fn expand_to_axis(v: &TensorData, ndim: usize, axis: usize) -> EvalResult<TensorData> {
    let mut shape = v.shape.clone();
    shape.resize(shape.len() + ndim.saturating_sub(axis + 1), 1);
    TensorData::new(v.dtype, shape, v.data.clone()).map_err(|e| EvalError::Unsupported(e.message))
}

/// `reshape(v, [-1])`.
fn flatten(v: &TensorData) -> EvalResult<TensorData> {
    TensorData::new(v.dtype, vec![v.num_elements()], v.data.clone())
        .map_err(|e| EvalError::Unsupported(e.message))
}

pub(crate) fn ints(t: &TensorData) -> EvalResult<Vec<i128>> {
    match decode(t)? {
        Col::Int(v) => Ok(v),
        _ => unsupported(format!("expected integers, got {}", t.dtype)),
    }
}

/// `clip(x, qmin, qmax)` then `cast(out_dtype)` (`ConvertDtype`).
pub(crate) fn clip_cast(v: Vec<i128>, shape: Vec<i64>, out: DataType) -> EvalResult<TensorData> {
    if !(out.is_int() || out.is_uint()) || out.bits > 32 {
        return unsupported(format!("QNN output type {out}"));
    }
    let (lo, hi) = if out.is_int() {
        (-(1i128 << (out.bits - 1)), (1i128 << (out.bits - 1)) - 1)
    } else {
        (0, (1i128 << out.bits) - 1)
    };
    let clipped: Vec<i128> = v.into_iter().map(|x| wrap(out, x.clamp(lo, hi))).collect();
    encode(&Col::Int(clipped), out, shape)
}

/// `frexp`: `x = m * 2^e` with `0.5 <= |m| < 1`.
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (x, adjust) = if x.abs() < f64::MIN_POSITIVE {
        (x * 2f64.powi(54), -54)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let e = exp - 1022;
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, e + adjust)
}

/// `GetFixedPointMultiplierShift`: a Q31 multiplier and a shift.
pub(crate) fn fixed_point_multiplier_shift(m: f64) -> (i64, i64) {
    if m == 0.0 {
        return (0, 0);
    }
    let (sig, mut exp) = frexp(m);
    let mut q = (sig * 2147483648.0).round() as i64;
    if q == 1 << 31 {
        q /= 2;
        exp += 1;
    }
    (q, i64::from(exp))
}

fn wrap64(v: i128) -> i128 {
    wrap(I64, v)
}

/// `tir.q_multiply_shift(x, m, 31, s)` on int32 values as TVM legalises
/// it (with the special case of `m == 2^30`, a power of two).
pub(crate) fn q_multiply_shift(x: i128, m: i64, s: i64) -> EvalResult<i128> {
    if m == 1 << 30 {
        let exp = s - 1;
        if exp > 0 {
            return Ok(wrap(I32, x << exp.min(63)));
        }
        let e = -exp;
        if e == 0 || e > 31 {
            return unsupported("q_multiply_shift: unsupported shift");
        }
        return Ok(wrap(I32, wrap(I32, x + (1i128 << (e - 1))) >> e));
    }
    q_multiply_shift_general(x, m, s.max(0), (-s).max(0), s > 0, false)
}

/// `QMultiplyShift`: in int64, optionally shift left, multiply, add the
/// rounding value (for TONEAREST, one less for negative products), shift
/// right, truncate to int32.
fn q_multiply_shift_general(
    x: i128,
    m: i64,
    left: i64,
    right: i64,
    shift_left: bool,
    to_nearest: bool,
) -> EvalResult<i128> {
    if !(0..63).contains(&left) || !(0..32).contains(&right) {
        return unsupported("fixed point multiply: shift out of range");
    }
    let mut v = wrap64(x);
    if shift_left {
        v = wrap64(v << left);
    }
    v = wrap64(v.wrapping_mul(i128::from(m)));
    let total = right + 31;
    let pos = 1i128 << (total - 1);
    let round = if to_nearest && v < 0 { pos - 1 } else { pos };
    v = wrap64(v + round);
    Ok(wrap(I32, v >> total))
}

/// `qnn.requantize` as `RequantizeLower` with `compute_dtype="int64"`, or
/// the float variants when the call asks for them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn requantize_tensor(
    data: &TensorData,
    in_scale: &TensorData,
    in_zp: &TensorData,
    out_scale: &TensorData,
    out_zp: &TensorData,
    axis: i64,
    rounding: &str,
    compute_dtype: &str,
    out_dtype: DataType,
) -> EvalResult<TensorData> {
    let rounding = if rounding == "None" {
        "UPWARD"
    } else {
        rounding
    };
    let compute_dtype = if compute_dtype == "None" {
        "int64"
    } else {
        compute_dtype
    };
    if rounding != "UPWARD" && rounding != "TONEAREST" {
        return unsupported(format!("qnn.requantize: rounding {rounding}"));
    }
    if compute_dtype != "int64" {
        return unsupported(format!("qnn.requantize: compute_dtype {compute_dtype}"));
    }
    let out_scale_f = scalar_as_f32(out_scale, "the output scale")?;
    if out_scale_f == 0.0 {
        return unsupported("qnn.requantize: zero output scale");
    }
    let rank = data.ndim();
    let axis_ = if axis < 0 {
        if rank > 0 {
            (rank as i64 + axis).max(0) as usize
        } else {
            0
        }
    } else {
        axis as usize
    };
    // 1) Cast to int32 and subtract the input zero point.
    let mut t = cast_tensor(data, I32)?;
    if !is_equal_scalar(in_zp, &zero_i32()) {
        let zp = cast_tensor(&expand_to_axis(&flatten(in_zp)?, rank, axis_)?, I32)?;
        t = map_binary(&t, &zp, "subtract")?;
    }
    let shape = t.shape.clone();
    let mut v = ints(&t)?;
    let to_nearest = rounding == "TONEAREST";
    // 2) Scale.
    if in_scale.ndim() == 0 {
        let in_f = scalar_as_f32(in_scale, "the input scale")?;
        if !is_equal_scalar(in_scale, out_scale) {
            let multiplier = f64::from(in_f) / f64::from(out_scale_f);
            let (m, s) = fixed_point_multiplier_shift(multiplier);
            v = v
                .into_iter()
                .map(|x| {
                    if to_nearest {
                        q_multiply_shift_general(x, m, s.max(0), (-s).max(0), s > 0, true)
                    } else {
                        q_multiply_shift(x, m, s)
                    }
                })
                .collect::<EvalResult<_>>()?;
        }
    } else {
        let scales = floats_as_f32(in_scale, "the input scales")?;
        let params: Vec<(i64, i64)> = scales
            .iter()
            .map(|&s| fixed_point_multiplier_shift(f64::from(s) / f64::from(out_scale_f)))
            .collect();
        let axis = if axis == -1 {
            rank.saturating_sub(1)
        } else {
            axis_
        };
        if axis >= rank || data.shape[axis] as usize != params.len() {
            return unsupported("qnn.requantize: scales do not match the axis");
        }
        let inner: usize = data.shape[axis + 1..].iter().product::<i64>() as usize;
        let channels = params.len();
        v = v
            .into_iter()
            .enumerate()
            .map(|(i, x)| {
                let (m, s) = params[(i / inner.max(1)) % channels];
                q_multiply_shift_general(x, m, s.max(0), (-s).max(0), true, to_nearest)
            })
            .collect::<EvalResult<_>>()?;
    }
    // 3) Add the output zero point.
    let mut t = encode(&Col::Int(v), I32, shape)?;
    if !is_equal_scalar(out_zp, &zero_i32()) {
        t = map_binary(&cast_tensor(out_zp, I32)?, &t, "add")?;
    }
    // 4) Clip and cast.
    if out_dtype == I32 {
        return Ok(t);
    }
    let shape = t.shape.clone();
    clip_cast(ints(&t)?, shape, out_dtype)
}

fn requantize(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 5, call)?;
    let t: Vec<&TensorData> = (0..5)
        .map(|i| arg_tensor(args, i, call))
        .collect::<EvalResult<_>>()?;
    let out_dtype = call.dtype("out_dtype")?.unwrap_or(t[0].dtype);
    Ok(Value::tensor(requantize_tensor(
        t[0],
        t[1],
        t[2],
        t[3],
        t[4],
        call.int_or("axis", -1),
        call.str("rounding").unwrap_or("None"),
        call.str("compute_dtype").unwrap_or("None"),
        out_dtype,
    )?))
}

/// The per-channel expansion of a quantisation parameter, unless it is a
/// scalar.
fn expand_param(p: &TensorData, ndim: usize, axis: i64) -> EvalResult<TensorData> {
    if p.ndim() == 0 {
        return Ok(p.clone());
    }
    let axis = if axis < 0 { axis + ndim as i64 } else { axis };
    if axis < 0 || axis as usize >= ndim.max(1) {
        return unsupported("QNN: axis out of range");
    }
    expand_to_axis(p, ndim, axis as usize)
}

/// `cast(clip(round(x / scale) + cast(zp, float32), qmin, qmax), out)`.
fn quantize(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let x = arg_tensor(args, 0, call)?;
    let scale = arg_tensor(args, 1, call)?;
    let zp = arg_tensor(args, 2, call)?;
    let Some(out) = call.dtype("out_dtype")? else {
        return unsupported("qnn.quantize: no out_dtype");
    };
    if !(out.is_int() || out.is_uint()) || out.bits > 32 {
        return unsupported(format!("qnn.quantize to {out}"));
    }
    let axis = call.int_or("axis", -1);
    let n = x.ndim();
    let scale = expand_param(scale, n, axis)?;
    let zp = cast_tensor(&expand_param(zp, n, axis)?, DataType::FLOAT32)?;
    let scaled = super::elemwise::map_unary(&map_binary(x, &scale, "divide")?, "round")?;
    let shifted = map_binary(&scaled, &zp, "add")?;
    let (lo, hi) = if out.is_int() {
        (-(1i64 << (out.bits - 1)), (1i64 << (out.bits - 1)) - 1)
    } else {
        (0, (1i64 << out.bits) - 1)
    };
    let (lo, hi) = (lo as f32, hi as f32);
    let clipped = match decode(&shifted)? {
        Col::F32(v) => Col::F32(
            v.into_iter()
                .map(|a| {
                    let m = if a < hi { a } else { hi };
                    if m > lo {
                        m
                    } else {
                        lo
                    }
                })
                .collect(),
        ),
        _ => return unsupported("qnn.quantize of non-float32 data"),
    };
    let clipped = encode(&clipped, shifted.dtype, shifted.shape.clone())?;
    Ok(Value::tensor(cast_tensor(&clipped, out)?))
}

/// `cast(cast(x, int32) - zp, float32) * scale`.
fn dequantize(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let x = arg_tensor(args, 0, call)?;
    let scale = arg_tensor(args, 1, call)?;
    let zp = arg_tensor(args, 2, call)?;
    let axis = call.int_or("axis", -1);
    let n = x.ndim();
    let scale = expand_param(scale, n, axis)?;
    let zp = expand_param(zp, n, axis)?;
    let shifted = map_binary(&cast_tensor(x, I32)?, &zp, "subtract")?;
    let f = cast_tensor(&shifted, DataType::FLOAT32)?;
    Ok(Value::tensor(map_binary(&f, &scale, "multiply")?))
}

/// `qnn.add` / `qnn.subtract`: both inputs requantised to the output's
/// parameters in int32 (or just cast when they already match), added or
/// subtracted, the output zero point subtracted (add) or added (subtract),
/// then clipped and cast to the lhs type.
fn add_subtract(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 8, call)?;
    let t: Vec<&TensorData> = (0..8)
        .map(|i| arg_tensor(args, i, call))
        .collect::<EvalResult<_>>()?;
    let (lhs, rhs, ls, lz, rs, rz, os, oz) = (t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
    let lhs_axis = call.int_or("lhs_axis", -1);
    let rhs_axis = call.int_or("rhs_axis", -1);
    let upcast = |x: &TensorData, s: &TensorData, z: &TensorData, axis: i64| {
        if !is_equal_scalar(s, os) || !is_equal_scalar(z, oz) {
            // The input type's shape is the lhs's (`QnnBinaryOpTensorType`).
            requantize_tensor(x, s, z, os, oz, axis, "None", "None", I32)
        } else {
            cast_tensor(x, I32)
        }
    };
    let a = upcast(lhs, ls, lz, lhs_axis)?;
    let b = upcast(rhs, rs, rz, rhs_axis)?;
    let is_add = call.op == "qnn.add";
    let mut out = map_binary(&a, &b, if is_add { "add" } else { "subtract" })?;
    if !is_equal_scalar(oz, &zero_i32()) {
        out = map_binary(&out, oz, if is_add { "subtract" } else { "add" })?;
    }
    let shape = out.shape.clone();
    Ok(Value::tensor(clip_cast(ints(&out)?, shape, lhs.dtype)?))
}

/// `topi.fixed_point_multiply`: `q_multiply_shift(x, multiplier, 31,
/// shift)` on int32 data.
fn fixed_point_multiply(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    if x.dtype != I32 {
        return unsupported("fixed_point_multiply: int32 data expected");
    }
    let (m, shift) = (call.req_int("multiplier")?, call.req_int("shift")?);
    let out = ints(x)?
        .into_iter()
        .map(|v| q_multiply_shift(v, m, shift))
        .collect::<EvalResult<Vec<_>>>()?;
    encode(&Col::Int(out), I32, x.shape.clone()).map(Value::tensor)
}

/// `topi.fixed_point_multiply_per_axis`: per channel along the one axis of
/// `axes`, shift left (when required), multiply by the Q31 multiplier,
/// round and shift right, in int64.
fn fixed_point_multiply_per_axis(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 4, call)?;
    let x = arg_tensor(args, 0, call)?;
    let [m, ls, rs] = [1, 2, 3].map(|i| arg_tensor(args, i, call).and_then(ints));
    let (m, ls, rs) = (m?, ls?, rs?);
    let axes = call.ints("axes")?.unwrap_or_default();
    if x.dtype != I32 || axes.len() != 1 {
        return unsupported("fixed_point_multiply_per_axis: int32 data and one axis expected");
    }
    let d = super::tensor::dims(&x.shape);
    let axis = super::tensor::norm_axis(axes[0], d.len(), call.op)?;
    let (len, step) = (d[axis], super::tensor::strides(&d)[axis]);
    let param = |p: &[i128], c: usize| if p.len() == 1 { p[0] } else { p[c] };
    if [&m, &ls, &rs]
        .iter()
        .any(|p| p.len() != 1 && p.len() != len)
    {
        return unsupported("fixed_point_multiply_per_axis: one parameter per channel expected");
    }
    let lshift = call.bool_or("is_lshift_required", false);
    let out = ints(x)?
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let c = (i / step) % len.max(1);
            q_multiply_shift_general(
                v,
                param(&m, c) as i64,
                param(&ls, c) as i64,
                param(&rs, c) as i64,
                lshift,
                false,
            )
        })
        .collect::<EvalResult<Vec<_>>>()?;
    encode(&Col::Int(out), I32, x.shape.clone()).map(Value::tensor)
}

/// `QnnMulCanonicalize` with scalar scales: `(a - za)(b - zb)` in int32,
/// requantized from the scale `sa · sb` (a float32 product) and zero point
/// 0 to the output's.
fn mul(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 8, call)?;
    let t: Vec<&TensorData> = (0..8)
        .map(|i| arg_tensor(args, i, call))
        .collect::<EvalResult<_>>()?;
    let (lhs, rhs, ls, lz, rs, rz, os, oz) = (t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
    if ls.ndim() != 0 || rs.ndim() != 0 {
        return unsupported("qnn.mul: per-channel scales are not evaluated");
    }
    let shifted = |x: &TensorData, z: &TensorData| -> EvalResult<TensorData> {
        let x = cast_tensor(x, I32)?;
        if is_equal_scalar(z, &zero_i32()) {
            Ok(x)
        } else {
            map_binary(&x, z, "subtract")
        }
    };
    let product = map_binary(&shifted(lhs, lz)?, &shifted(rhs, rz)?, "multiply")?;
    let scale = scalar_as_f32(ls, "lhs_scale")? * scalar_as_f32(rs, "rhs_scale")?;
    let scale = TensorData::new(DataType::FLOAT32, Vec::new(), scale.to_le_bytes().to_vec())
        .map_err(|e| EvalError::Unsupported(e.message))?;
    requantize_tensor(
        &product,
        &scale,
        &zero_i32(),
        os,
        oz,
        -1,
        "None",
        "None",
        lhs.dtype,
    )
    .map(Value::tensor)
}

/// `ConcatenateQnnCanonicalize`: each input whose scale or zero point
/// differs from the output's is requantized to it (keeping its type), then
/// the inputs are concatenated.
fn concatenate(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 5, call)?;
    let data = super::arg_tensors(args, 0, call)?;
    let scales = super::arg_tensors(args, 1, call)?;
    let zero_points = super::arg_tensors(args, 2, call)?;
    let (os, oz) = (arg_tensor(args, 3, call)?, arg_tensor(args, 4, call)?);
    if scales.len() != data.len() || zero_points.len() != data.len() {
        return unsupported("qnn.concatenate: one scale and zero point per input expected");
    }
    let mut fields = Vec::with_capacity(data.len());
    for ((x, s), z) in data.iter().zip(&scales).zip(&zero_points) {
        fields.push(Value::tensor(
            if is_equal_scalar(s, os) && is_equal_scalar(z, oz) {
                (*x).clone()
            } else {
                requantize_tensor(x, s, z, os, oz, -1, "None", "None", x.dtype)?
            },
        ));
    }
    let inner = CallInfo {
        op: "concatenate",
        ..*call
    };
    let kernel =
        super::kernel("concatenate").ok_or_else(|| EvalError::NoKernel("concatenate".into()))?;
    kernel(&[Value::Tuple(fields)], &inner)
}

/// `QNN_UNARY_OP_DEFAULT_CANONICALIZATION`: dequantize (axis -1), the float
/// function, quantize to the output's scale and zero point in the input's
/// type. `hardswish` is `x · clip(x + 3, 0, 6) / 6` in float32.
fn unary(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 5, call)?;
    let x = arg_tensor(args, 0, call)?;
    let dequantize_attrs = Attrs::new(
        "relay.attrs.DequantizeAttrs",
        vec![("axis".into(), AttrValue::Int(-1))],
    );
    fn with<'a>(call: &CallInfo<'a>, op: &'a str, attrs: &'a Attrs) -> CallInfo<'a> {
        CallInfo {
            op,
            attrs: Some(attrs),
            ..*call
        }
    }
    let real = dequantize(&args[..3], &with(call, "qnn.dequantize", &dequantize_attrs))?;
    let real = real
        .as_tensor()
        .ok_or_else(|| EvalError::Unsupported("qnn: dequantize gave a tuple".into()))?;
    let function = call.op.trim_start_matches("qnn.");
    let result = if function == "hardswish" {
        let scalar = |v: f32| {
            TensorData::new(DataType::FLOAT32, Vec::new(), v.to_le_bytes().to_vec())
                .map_err(|e| EvalError::Unsupported(e.message))
        };
        let clip_attrs = Attrs::new(
            "relay.attrs.ClipAttrs",
            vec![
                ("a_min".into(), AttrValue::Double(0.0)),
                ("a_max".into(), AttrValue::Double(6.0)),
            ],
        );
        let shifted = map_binary(real, &scalar(3.0)?, "add")?;
        let clip = super::kernel("clip").ok_or_else(|| EvalError::NoKernel("clip".into()))?;
        let clipped = clip(&[Value::tensor(shifted)], &with(call, "clip", &clip_attrs))?;
        let clipped = clipped
            .as_tensor()
            .ok_or_else(|| EvalError::Unsupported("qnn.hardswish: clip gave a tuple".into()))?;
        map_binary(
            &map_binary(real, clipped, "multiply")?,
            &scalar(6.0)?,
            "divide",
        )?
    } else {
        let kernel = super::kernel(function).ok_or_else(|| EvalError::NoKernel(function.into()))?;
        let out = kernel(
            &[Value::tensor(real.clone())],
            &CallInfo {
                op: function,
                attrs: None,
                ..*call
            },
        )?;
        out.as_tensor()
            .cloned()
            .ok_or_else(|| EvalError::Unsupported(format!("{function} gave a tuple")))?
    };
    let quantize_attrs = Attrs::new(
        "relay.attrs.QuantizeAttrs",
        vec![
            ("out_dtype".into(), AttrValue::DataType(x.dtype)),
            ("axis".into(), AttrValue::Int(-1)),
        ],
    );
    quantize(
        &[Value::tensor(result), args[3].clone(), args[4].clone()],
        &with(call, "qnn.quantize", &quantize_attrs),
    )
}
