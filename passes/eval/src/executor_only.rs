//! Kernels of operators FoldConstant never folds (they are in
//! [`crate::NEVER_FOLDED`], and [`crate::kernel`] has none for them) but
//! TVM's executors run: every executor, the `debug` interpreter included,
//! first applies the pass prefix of `GetPassPrefix`
//! (`src/relay/backend/utils.cc`), whose `Legalize` decomposes
//! `nn.conv2d_backward_weight` into a grouped `nn.conv2d` and whose
//! `SimplifyInference` replaces `nn.dropout(x).0` by `x`. The reference
//! interpreter runs programs as they are written, so it computes what those
//! rewrites compute ([`run_call`]). The virtual machine also runs the
//! operators `ManifestLifetimes` inserts: `memory.kill(x)` ends `x`'s
//! lifetime and is `()`; the interpreter does not free (values are
//! reference-counted), so it only checks its argument and returns `()`.
//! `shape_of` and `ndarray_size`, which FoldConstant answers from the
//! argument's type, are computed from the run-time tensor, as TVM's
//! executors compile them (gradients, e.g. `take`'s and the cross
//! entropies', use them); the virtual machine's own `vm.shape_of` stays
//! without a kernel.

use super::layout::{axes_of, padding, per_axis};
use super::linalg::out_dtype;
use super::tensor::{dims, strides};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::metadata::TensorData;

/// The kernel an executor runs for `op` when [`crate::kernel`] has none.
pub fn executor_kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.dropout" => dropout,
        "nn.conv2d_backward_weight" => conv2d_backward_weight,
        "memory.kill" => kill,
        "shape_of" => shape_of,
        "ndarray_size" => ndarray_size,
        _ => return None,
    })
}

/// What an executor computes for a call: [`crate::eval_call`] (the kernels
/// FoldConstant uses), and for an operator it never folds, the kernel of
/// [`executor_kernel`].
pub fn run_call(call: &CallInfo, args: &[Value]) -> EvalResult {
    match crate::eval_call(call, args) {
        Err(EvalError::NoKernel(op)) => match executor_kernel(&op) {
            Some(kernel) => kernel(args, call),
            None => Err(EvalError::NoKernel(op)),
        },
        other => other,
    }
}

/// `nn.dropout` at inference, as `SimplifyInference` leaves it: the output
/// is the input; the mask (which no rewrite of TVM's gives a value) keeps
/// every element, ones of the input's type.
fn dropout(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let mut mask = TensorData::zeros(data.dtype, data.shape.clone())
        .map_err(|e| EvalError::Unsupported(format!("{}: {}", call.op, e.message)))?;
    for i in 0..mask.len() {
        mask.set_f64(i, 1.0)
            .map_err(|e| EvalError::Unsupported(format!("{}: {}", call.op, e.message)))?;
    }
    Ok(Value::Tuple(vec![
        Value::tensor(data.clone()),
        Value::tensor(mask),
    ]))
}

/// `memory.kill(x)`: `()` (see the module docs: nothing is freed early).
fn kill(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    Ok(Value::Tuple(Vec::new()))
}

/// The `dtype` attribute of a shape query (int32 when void, as TVM's
/// Python wrappers default it).
fn shape_dtype(call: &CallInfo) -> EvalResult<relay_ir::dtype::DataType> {
    Ok(call
        .dtype("dtype")?
        .unwrap_or(relay_ir::dtype::DataType::INT32))
}

fn int_tensor(call: &CallInfo, shape: Vec<i64>, values: &[i64]) -> EvalResult<Value> {
    TensorData::from_i64s(shape_dtype(call)?, shape, values)
        .map(Value::tensor)
        .map_err(|e| EvalError::Unsupported(format!("{}: {}", call.op, e.message)))
}

/// `shape_of(x)`: the tensor's shape as a 1-D tensor.
fn shape_of(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    int_tensor(call, vec![data.shape.len() as i64], &data.shape)
}

/// `ndarray_size(x)`: the number of elements, a scalar.
fn ndarray_size(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    int_tensor(call, Vec::new(), &[data.shape.iter().product()])
}

/// `nn.conv2d_backward_weight(grad, data)`: the gradient of a 2-D
/// convolution's weight, `dW[o, i, p, q] = Σ_{n, y, x} grad[n, o, y, x] ·
/// data[n, c, p·dilation + y·stride − pad]` (`c` the input channel the
/// weight's `i` reads in `o`'s group), which is what TVM's `Legalize` rule
/// (`legalize_conv2d_backward_weight`) computes for `groups` 1 and for a
/// depthwise convolution (`groups` = input channels). For other group
/// counts that rule pairs channels across groups (not the gradient), so
/// the kernel refuses them rather than guess which to follow. As TVM's
/// `MakeConv2dBackwardWeight` stores them, `data_layout` is the gradient's
/// layout, `kernel_layout` the data's and `out_layout` the weight's; any
/// permutation of `NCHW`/`OIHW` is read. Float sums are kept in double and
/// rounded once to the output type.
fn conv2d_backward_weight(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (grad, data) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    if grad.ndim() != 4 || data.ndim() != 4 {
        return unsupported(format!("{}: the gradient and data must be 4-D", call.op));
    }
    let nchw = ['N', 'C', 'H', 'W'];
    let grad_axes = axes_of(call.str("data_layout").unwrap_or("NCHW"), &nchw, call)?;
    let data_axes = axes_of(call.str("kernel_layout").unwrap_or("NCHW"), &nchw, call)?;
    let weight_layout = match call.str("out_layout") {
        Some(l) if !l.is_empty() => l,
        _ => "OIHW",
    };
    let weight_axes = axes_of(weight_layout, &['O', 'I', 'H', 'W'], call)?;
    let canonical = |shape: &[i64], axes: &[usize]| -> Vec<usize> {
        let d = dims(shape);
        axes.iter().map(|&a| d[a]).collect()
    };
    let g = canonical(&grad.shape, &grad_axes);
    let x = canonical(&data.shape, &data_axes);
    let (batch, out_channels, in_channels) = (x[0], g[1], x[1]);
    if g[0] != batch {
        return unsupported(format!(
            "{}: the gradient's batch {} is not the data's {batch}",
            call.op, g[0]
        ));
    }
    let groups = call.int_or("groups", 1);
    let depthwise =
        groups > 1 && groups as usize == in_channels && out_channels.is_multiple_of(in_channels);
    if groups != 1 && !depthwise {
        return unsupported(format!(
            "{}: groups={groups} (neither 1 nor depthwise): TVM's Legalize rule does not compute \
             the gradient for it",
            call.op
        ));
    }
    let Some(kernel_size) = call.ints("kernel_size")?.filter(|k| k.len() == 2) else {
        return unsupported(format!("{}: kernel_size needs two values", call.op));
    };
    let stride = per_axis(call, "strides", 2, 1)?;
    let dilation = per_axis(call, "dilation", 2, 1)?;
    let (pad, _) = padding(call, 2)?;
    let weight_in = if depthwise { 1 } else { in_channels };
    let per_group = out_channels / in_channels.max(1);
    let canonical_out = [
        out_channels,
        weight_in,
        kernel_size[0].max(0) as usize,
        kernel_size[1].max(0) as usize,
    ];
    let mut out_shape = vec![0i64; 4];
    for (&axis, &d) in weight_axes.iter().zip(&canonical_out) {
        out_shape[axis] = d as i64;
    }
    call.check_size(&out_shape)?;
    let dtype = out_dtype(call, grad.dtype)?;
    let mut out = TensorData::zeros(dtype, out_shape.clone())
        .map_err(|e| EvalError::Unsupported(format!("{}: {}", call.op, e.message)))?;
    let st = |shape: &[i64], axes: &[usize]| -> Vec<usize> {
        let s = strides(&dims(shape));
        axes.iter().map(|&a| s[a]).collect()
    };
    let (gs, xs, ws) = (
        st(&grad.shape, &grad_axes),
        st(&data.shape, &data_axes),
        st(&out_shape, &weight_axes),
    );
    let float = dtype.is_float();
    let read = |t: &TensorData, i: usize| -> EvalResult<f64> {
        t.get_f64(i)
            .map_err(|e| EvalError::Unsupported(format!("{}: {}", call.op, e.message)))
    };
    for o in 0..out_channels {
        for i in 0..weight_in {
            let channel = if depthwise { o / per_group.max(1) } else { i };
            for p in 0..canonical_out[2] {
                for q in 0..canonical_out[3] {
                    let (mut sum_f, mut sum_i) = (0.0f64, 0i64);
                    for n in 0..batch {
                        for y in 0..g[2] {
                            let row = (p as i64) * dilation[0] + (y as i64) * stride[0] - pad[0];
                            if row < 0 || row >= x[2] as i64 {
                                continue;
                            }
                            for col_out in 0..g[3] {
                                let col = (q as i64) * dilation[1] + (col_out as i64) * stride[1]
                                    - pad[1];
                                if col < 0 || col >= x[3] as i64 {
                                    continue;
                                }
                                let at_x = n * xs[0]
                                    + channel * xs[1]
                                    + row as usize * xs[2]
                                    + col as usize * xs[3];
                                let at_g = n * gs[0] + o * gs[1] + y * gs[2] + col_out * gs[3];
                                let (a, b) = (read(data, at_x)?, read(grad, at_g)?);
                                if float {
                                    sum_f += a * b;
                                } else {
                                    sum_i = sum_i.wrapping_add((a as i64).wrapping_mul(b as i64));
                                }
                            }
                        }
                    }
                    let at = o * ws[0] + i * ws[1] + p * ws[2] + q * ws[3];
                    let written = if float {
                        out.set_f64(at, sum_f)
                    } else {
                        out.set_i64(at, sum_i)
                    };
                    written.map_err(|e| {
                        EvalError::Unsupported(format!("{}: {}", call.op, e.message))
                    })?;
                }
            }
        }
    }
    Ok(Value::tensor(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{attrs, floats};
    use relay_ir::AttrValue;

    fn run(op: &str, fields: &[(&str, AttrValue)], args: &[Value]) -> EvalResult {
        let a = attrs(fields);
        run_call(&CallInfo::new(op, Some(&a)), args)
    }

    fn values(v: &Value) -> Vec<f64> {
        let t = v.as_tensor().unwrap();
        (0..t.len()).map(|i| t.get_f64(i).unwrap()).collect()
    }

    fn ints(values: &[i64]) -> AttrValue {
        AttrValue::Array(values.iter().map(|&v| AttrValue::Int(v)).collect())
    }

    #[test]
    fn dropout_at_inference_passes_its_input_and_keeps_every_element() {
        let x = floats("float32", &[3], &[1.0, -2.0, 0.5]);
        let Value::Tuple(fields) = run("nn.dropout", &[], &[x]).unwrap() else {
            panic!("dropout returns (output, mask)")
        };
        assert_eq!(values(&fields[0]), vec![1.0, -2.0, 0.5]);
        assert_eq!(values(&fields[1]), vec![1.0, 1.0, 1.0]);
        // FoldConstant still has no kernel for it (TVM never folds it).
        assert!(crate::kernel("nn.dropout").is_none());
    }

    #[test]
    fn kill_is_unit_and_takes_one_argument() {
        let x = floats("float32", &[2], &[1.0, 2.0]);
        assert!(
            matches!(run("memory.kill", &[], std::slice::from_ref(&x)), Ok(Value::Tuple(f)) if f.is_empty())
        );
        assert!(run("memory.kill", &[], &[x.clone(), x]).is_err());
        assert!(crate::kernel("memory.kill").is_none());
    }

    #[test]
    fn shape_queries_read_the_run_time_tensor() {
        let x = floats("float32", &[2, 3], &[0.0; 6]);
        let dtype = |name: &str| ("dtype", AttrValue::DataType(name.parse().unwrap()));
        let shape = run("shape_of", &[dtype("int64")], std::slice::from_ref(&x)).unwrap();
        let shape = shape.as_tensor().unwrap();
        assert_eq!(
            (shape.dtype.to_tvm_string(), shape.shape.clone()),
            ("int64".into(), vec![2])
        );
        assert_eq!(shape.to_i64_vec().unwrap(), vec![2, 3]);
        // A void dtype reads as int32, the Python wrappers' default.
        let shape = run("shape_of", &[], std::slice::from_ref(&x)).unwrap();
        assert_eq!(shape.as_tensor().unwrap().dtype.to_tvm_string(), "int32");
        let size = run("ndarray_size", &[dtype("int32")], std::slice::from_ref(&x)).unwrap();
        let size = size.as_tensor().unwrap();
        assert!(size.shape.is_empty());
        assert_eq!(size.to_i64_vec().unwrap(), vec![6]);
        // FoldConstant still answers them from types, never by a kernel.
        assert!(crate::kernel("shape_of").is_none());
    }

    /// Reference values from a plain Python loop over the zero-padded data
    /// (the definition in the kernel's docs, not this code):
    /// data = arange(1, 17).reshape(1, 1, 4, 4), grad = [[1, 0, -1], [2, 1, 0],
    /// [0, 1, 1]] as (1, 1, 3, 3), stride 1, padding 0, kernel 2×2.
    #[test]
    fn conv2d_backward_weight_is_the_weight_gradient() {
        let data: Vec<f64> = (1..=16).map(f64::from).collect();
        let data = floats("float32", &[1, 1, 4, 4], &data);
        let grad = floats(
            "float32",
            &[1, 1, 3, 3],
            &[1.0, 0.0, -1.0, 2.0, 1.0, 0.0, 0.0, 1.0, 1.0],
        );
        let fields = [
            ("kernel_size", ints(&[2, 2])),
            ("channels", AttrValue::Int(1)),
        ];
        let out = run(
            "nn.conv2d_backward_weight",
            &fields,
            &[grad.clone(), data.clone()],
        )
        .unwrap();
        assert_eq!(out.as_tensor().unwrap().shape, vec![1, 1, 2, 2]);
        assert_eq!(values(&out), vec![35.0, 40.0, 55.0, 60.0]);
        // Stride 2 and padding 1 on each side: the window's taps move by 2.
        let fields = [
            ("kernel_size", ints(&[2, 2])),
            ("strides", ints(&[2, 2])),
            ("padding", ints(&[1, 1])),
        ];
        let out = run(
            "nn.conv2d_backward_weight",
            &fields,
            &[grad.clone(), data.clone()],
        )
        .unwrap();
        assert_eq!(values(&out), vec![36.0, 32.0, 6.0, 30.0]);
        // Groups that are neither 1 nor depthwise are refused, with why.
        let fields = [
            ("kernel_size", ints(&[2, 2])),
            ("groups", AttrValue::Int(3)),
        ];
        let err = run("nn.conv2d_backward_weight", &fields, &[grad, data]).unwrap_err();
        assert!(err.to_string().contains("groups=3"), "{err}");
        assert!(crate::kernel("nn.conv2d_backward_weight").is_none());
    }
}
