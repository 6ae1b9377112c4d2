//! QNN relations whose output has the data's shape
//! (`src/relay/qnn/op/{dequantize,leaky_relu,softmax,simulated_*}.cc`,
//! `op_common.h`, `src/relay/quantize/quantize.cc`): `DequantizeRel`,
//! `QnnElementwiseUnaryFuncRel` (`qnn.abs`, `qnn.erf`, `qnn.exp`,
//! `qnn.hardswish`, `qnn.log`, `qnn.rsqrt`, `qnn.sigmoid`, `qnn.sqrt`,
//! `qnn.tanh`), `QnnLeakyReluRel`, `QnnSoftmaxRel`, the simulated
//! (de)quantize relations, the quantisation pass's `SimulatedQuantizeRel`
//! and `FixedPointMultiplyPerAxisRel`.
//!
//! The unary ones check the input's dtype, then that the four quantisation
//! parameters (input and output scale and zero point) are scalars of
//! `float32`/`int32`, waiting while any of them is incomplete, and give the
//! output the input's type.

use super::qnn::{
    assign_type, axis_shape, check_axis, is_scalar_type, quantize_axis, FLOAT32, INT32, INT8, UINT8,
};
use super::shape::{c_int, const_int};
use super::{check, relations, tensor, AboutAttribute, Ctx, Step};
use relay_ir::dtype::DataType;
use relay_ir::Dim;

relations! {
    /// `DequantizeRel`: a `float32` tensor of the data's shape; a scale or
    /// zero point with more than one element is per-channel along `axis`.
    "Dequantize" => dequantize_rel;
    /// `QnnElementwiseUnaryFuncRel` (registered under the operator's name).
    "qnn.abs" | "qnn.erf" | "qnn.exp" | "qnn.hardswish" | "qnn.log" | "qnn.rsqrt"
        | "qnn.sigmoid" | "qnn.sqrt" | "qnn.tanh" => qnn_unary_rel;
    /// `QnnLeakyReluRel`.
    "QLeakyRelu" => qnn_leaky_relu_rel;
    /// `QnnSoftmaxRel`: `int8` input only.
    "QSoftmax" => qnn_softmax_rel;
    /// `qnn::SimulatedDequantizeRel` and `qnn::SimulatedQuantizeRel`: the
    /// data's type once the data and the dtype code are tensors; the scale
    /// and zero point are not looked at.
    "QNNSimulatedDequantize" | "QNNSimulatedQuantize" => qnn_simulated_rel;
    /// `SimulatedQuantizeRel` of the quantisation pass
    /// (`relay.op.annotation.simulated_quantize`).
    "SimulatedQuantize" => simulated_quantize_rel;
    /// `FixedPointMultiplyPerAxisRel` (`src/relay/op/tensor/transform.cc`;
    /// the per-channel requantisation step of the QNN lowering).
    "FixedPointMultiplyPerAxis" => fixed_point_multiply_per_axis_rel;
}

/// Whether a scale or zero point counts as one value: a scalar, or a tensor
/// of any rank with one element (`shape.size() == 0 || Size() == 1`).
fn is_single_value(shape: &[Dim]) -> bool {
    shape.is_empty()
        || shape
            .iter()
            .map(const_int)
            .try_fold(1i64, |acc, d| acc.checked_mul(d?))
            == Some(1)
}

fn dequantize_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let dtype = data.dtype;
    check(
        [INT8, UINT8, DataType::int(16), INT32].contains(&dtype),
        || {
            format!(
                "Input type should be one of the quantized types [unit8, int8, int16, int32] but was {dtype}"
            )
        },
    )?;
    // TVM reads the scale's and zero point's shapes without a check; we wait
    // for them.
    let what = "Dequantize: expect to be TensorType but get ";
    let Some(scale) = ctx.tensor_or_wait(1, what)? else {
        return Ok(false);
    };
    let Some(zero_point) = ctx.tensor_or_wait(2, what)? else {
        return Ok(false);
    };
    let axis_attr = ctx.attrs.int("axis")?;
    let rank = data.shape.len() as i64;
    let axis = quantize_axis(rank, axis_attr);
    let per_channel = !is_single_value(&scale.shape) || !is_single_value(&zero_point.shape);
    let dim = if per_channel {
        check_axis("axis", axis_attr, axis, rank).about("axis")?;
        axis_shape(&data.shape, axis)?
    } else {
        c_int(1)
    };
    assign_type(ctx, 1, FLOAT32, dim.clone())?;
    assign_type(ctx, 2, INT32, dim)?;
    ctx.assign(3, tensor(data.shape.clone(), FLOAT32));
    Ok(true)
}

/// The shared body of the quantized unary relations: `allowed` input
/// dtypes (TVM's message says `expected`), four scalar quantisation
/// parameters in slots 1 to 4, the input's type out.
fn quantized_identity(ctx: &mut Ctx, allowed: &[DataType], expected: &str) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check(allowed.contains(&data.dtype), || {
        format!("Expected {expected} for input but was {}", data.dtype)
    })?;
    if (1..5).any(|i| ctx.is_incomplete(i)) {
        return Ok(false);
    }
    for (slot, dtype) in [(1, FLOAT32), (2, INT32), (3, FLOAT32), (4, INT32)] {
        is_scalar_type(ctx, slot, dtype)?;
    }
    let out = ctx.ty(0).clone();
    ctx.assign(5, out);
    Ok(true)
}

fn qnn_unary_rel(ctx: &mut Ctx) -> Step {
    quantized_identity(ctx, &[INT8, UINT8], "quantized type(int8, uint8)")
}

fn qnn_leaky_relu_rel(ctx: &mut Ctx) -> Step {
    quantized_identity(
        ctx,
        &[INT8, UINT8],
        "quantized leaky_relu type(int8, uint8)",
    )
}

fn qnn_softmax_rel(ctx: &mut Ctx) -> Step {
    quantized_identity(ctx, &[INT8], "quantized softmax type(int8)")
}

fn qnn_simulated_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(_)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    ctx.assign(4, tensor(data.shape.clone(), data.dtype));
    Ok(true)
}

fn simulated_quantize_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check(!data.shape.is_empty(), || {
        "Check failed: data->shape.size() != 0 (0 vs. 0) : Input shape cannot be empty".to_string()
    })?;
    for slot in 1..4 {
        ctx.assign(slot, tensor(Vec::new(), FLOAT32));
    }
    let out = ctx.ty(0).clone();
    ctx.assign(4, out);
    Ok(true)
}

/// Waits until all four inputs are tensors, then the data's type.
fn fixed_point_multiply_per_axis_rel(ctx: &mut Ctx) -> Step {
    for slot in 0..4 {
        let what = "FixedPointMultiplyPerAxis: expect input type to be TensorType but get ";
        if ctx.tensor_or_wait(slot, what)?.is_none() {
            return Ok(false);
        }
    }
    let out = ctx.ty(0).clone();
    ctx.assign(4, out);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use relay_ir::Type;

    fn qparams() -> Vec<Type> {
        vec![
            t(&[], "float32"),
            t(&[], "int32"),
            t(&[], "float32"),
            t(&[], "int32"),
        ]
    }

    #[test]
    fn unary_ops_keep_the_input_type() {
        for op in ["qnn.abs", "qnn.exp", "qnn.hardswish", "qnn.leaky_relu"] {
            let inputs = [&[t(&[2, 8], "uint8")][..], &qparams()].concat();
            assert_eq!(solve_out(op, &inputs, &[]), t(&[2, 8], "uint8"), "{op}");
        }
        let mut inputs = [&[t(&[2, 8], "int8")][..], &qparams()].concat();
        inputs[2] = Type::incomplete();
        assert!(waits("qnn.softmax", &inputs, &[]));
        inputs[2] = t(&[], "float32");
        assert_eq!(
            fails("qnn.softmax", &inputs, &[]),
            "Expected int32 but got float32"
        );
    }

    #[test]
    fn dequantize_per_tensor_and_per_channel() {
        let out = solve_out(
            "qnn.dequantize",
            &[t(&[2, 5], "int8"), t(&[1], "float32"), t(&[], "int32")],
            &[],
        );
        assert_eq!(out, t(&[2, 5], "float32"));
        let assigns = solved(
            "qnn.dequantize",
            &[t(&[2, 3], "uint8"), t(&[3], "float32"), t(&[3], "int32")],
            &[("axis", int(-1))],
        );
        assert_eq!(assigns[0], (1, t(&[3], "float32")));
        let message = fails(
            "qnn.dequantize",
            &[t(&[2, 3], "uint8"), t(&[3], "float32"), t(&[3], "int32")],
            &[("axis", int(2))],
        );
        assert_eq!(message, "axis 2 is out of range");
    }

    #[test]
    fn simulated_and_fixed_point_ops() {
        let out = solve_out(
            "qnn.simulated_quantize",
            &[
                t(&[2, 5], "int8"),
                t(&[], "int32"),
                t(&[], "float32"),
                t(&[], "int32"),
            ],
            &[],
        );
        assert_eq!(out, t(&[2, 5], "int8"));
        assert!(waits(
            "qnn.simulated_dequantize",
            &[
                t(&[2, 5], "float32"),
                Type::incomplete(),
                t(&[], "float32"),
                t(&[], "int32")
            ],
            &[],
        ));
        let message = fails(
            "relay.op.annotation.simulated_quantize",
            &[
                t(&[], "float32"),
                Type::incomplete(),
                Type::incomplete(),
                Type::incomplete(),
            ],
            &[],
        );
        assert!(message.ends_with("Input shape cannot be empty"));
        let message = fails(
            "fixed_point_multiply_per_axis",
            &[
                t(&[2, 4], "int32"),
                tup(&[t(&[4], "int32")]),
                t(&[4], "int32"),
                t(&[4], "int32"),
            ],
            &[],
        );
        assert!(
            message.starts_with("FixedPointMultiplyPerAxis: expect input type to be TensorType")
        );
    }
}
