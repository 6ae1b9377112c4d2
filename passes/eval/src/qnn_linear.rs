//! The quantized products `qnn.dense`, `qnn.batch_matmul` and `qnn.conv2d`,
//! folded (with `fold_qnn=true`) as their QNN canonicalisation computes
//! them: TVM expands `Σ (x - zx)(w - zw)` into a plain product of the
//! integer inputs and zero-point correction terms, all in `out_dtype`
//! (int32), with the padding of a convolution filled with `zx`. Integer
//! arithmetic wraps at the width, so the expansion and the direct sum are
//! the same number: we subtract the zero points first (the padding then
//! reads zero) and run the plain kernel. The scales do not enter the
//! result. Exact.

use super::tensor::{decode, dims, encode, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "qnn.dense" => dense,
        "qnn.batch_matmul" => batch_matmul,
        "qnn.conv2d" => conv2d,
        _ => return None,
    })
}

/// `t - zero_point` in the output type (int32 unless `out_dtype` says
/// otherwise): a scalar zero point, or one per index along `axis`.
fn shifted(
    t: &TensorData,
    zero_point: &TensorData,
    axis: usize,
    call: &CallInfo,
) -> EvalResult<TensorData> {
    let out = call
        .dtype("out_dtype")?
        .unwrap_or(relay_ir::dtype::DataType::INT32);
    if !(out.is_int() || out.is_uint()) {
        return unsupported(format!("{}: out_dtype {out}", call.op));
    }
    let (Col::Int(v), Col::Int(zp)) = (decode(t)?, decode(zero_point)?) else {
        return unsupported(format!(
            "{}: integer inputs and zero points expected",
            call.op
        ));
    };
    let d = dims(&t.shape);
    let per_axis = zp.len() > 1;
    if per_axis && (axis >= d.len() || zp.len() != d[axis]) {
        return unsupported(format!("{}: one zero point per channel expected", call.op));
    }
    let step = if per_axis { strides(&d)[axis] } else { 1 };
    let shifted: Vec<i128> = v
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let z = if per_axis {
                zp[(i / step) % d[axis]]
            } else {
                zp.first().copied().unwrap_or(0)
            };
            // Wrapped at the output width, as TVM's int32 subtraction.
            super::tensor::wrap(out, x - z)
        })
        .collect();
    encode(&Col::Int(shifted), out, t.shape.clone())
}

/// The two data arguments and the two zero points (arguments 2 and 3; the
/// scales, 4 and 5, do not change the integer result).
fn operands<'v>(args: &'v [Value], call: &CallInfo) -> EvalResult<[&'v TensorData; 4]> {
    expect_args(args, 6, call)?;
    Ok([
        arg_tensor(args, 0, call)?,
        arg_tensor(args, 1, call)?,
        arg_tensor(args, 2, call)?,
        arg_tensor(args, 3, call)?,
    ])
}

/// Runs the plain kernel `op` on the shifted operands with the call's
/// attributes.
fn plain(op: &str, a: TensorData, b: TensorData, call: &CallInfo) -> EvalResult {
    let inner = CallInfo { op, ..*call };
    let kernel = super::kernel(op).ok_or_else(|| super::EvalError::NoKernel(op.into()))?;
    kernel(&[Value::tensor(a), Value::tensor(b)], &inner)
}

fn dense(args: &[Value], call: &CallInfo) -> EvalResult {
    let [x, w, xz, wz] = operands(args, call)?;
    plain(
        "nn.dense",
        shifted(x, xz, 0, call)?,
        shifted(w, wz, 0, call)?,
        call,
    )
}

fn batch_matmul(args: &[Value], call: &CallInfo) -> EvalResult {
    let [x, y, xz, yz] = operands(args, call)?;
    if xz.num_elements() != 1 || yz.num_elements() != 1 {
        return unsupported("qnn.batch_matmul: scalar zero points expected");
    }
    plain(
        "nn.batch_matmul",
        shifted(x, xz, 0, call)?,
        shifted(y, yz, 0, call)?,
        call,
    )
}

/// The weight's zero point is per output channel: the `O` axis of the
/// kernel layout.
fn conv2d(args: &[Value], call: &CallInfo) -> EvalResult {
    let [x, w, xz, wz] = operands(args, call)?;
    if xz.num_elements() != 1 {
        return unsupported("qnn.conv2d: a scalar input zero point expected");
    }
    let layout = call.str("kernel_layout").unwrap_or("OIHW");
    let Some(o_axis) = layout.find('O') else {
        return unsupported(format!("qnn.conv2d: kernel layout {layout}"));
    };
    plain(
        "nn.conv2d",
        shifted(x, xz, 0, call)?,
        shifted(w, wz, o_axis, call)?,
        call,
    )
}
