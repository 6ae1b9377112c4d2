//! Small tensor operators: `collapse_sum_like` / `collapse_sum_to` (TOPI's
//! `collapse_sum`: the sum over the leading axes the target lacks and the
//! axes where it has 1, in row-major order), `invert_permutation`,
//! `nn.fifo_buffer` (the buffer shifted by the new data along `axis`) and
//! `sliding_window` (TOPI's: every window of `window_shape` taken every
//! `strides` over the axes from `axis` on).
//! Only the sums compute; they accumulate like `sum`. Exact for integers.

use super::reduce::reduce_tensor;
use super::tensor::{decode, dims, for_each_index, gather, norm_axis, numel, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "collapse_sum_like" | "collapse_sum_to" => collapse_sum,
        "invert_permutation" => invert_permutation,
        "nn.fifo_buffer" => fifo_buffer,
        "sliding_window" => sliding_window,
        _ => return None,
    })
}

fn collapse_sum(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let target_arg = arg_tensor(args, 1, call)?;
    let target: Vec<i64> = if call.op == "collapse_sum_like" {
        target_arg.shape.clone()
    } else {
        match decode(target_arg)? {
            Col::Int(v) => v.into_iter().map(|d| d as i64).collect(),
            _ => return unsupported("collapse_sum_to: an integer shape expected"),
        }
    };
    if target.len() > data.ndim() {
        return unsupported(format!("{}: the target has more axes", call.op));
    }
    let lead = data.ndim() - target.len();
    let mut axes = Vec::new();
    for (i, &d) in data.shape.iter().enumerate() {
        if i < lead {
            axes.push(i);
        } else if d != target[i - lead] {
            if target[i - lead] != 1 {
                return unsupported(format!("{}: shapes do not collapse", call.op));
            }
            axes.push(i);
        }
    }
    if axes.is_empty() {
        return Ok(Value::tensor(data.clone()));
    }
    let sum = reduce_tensor(data, "sum", &axes, true)?;
    TensorData::new(sum.dtype, target, sum.data)
        .map(Value::tensor)
        .map_err(|e| EvalError::Unsupported(e.message))
}

/// `out[data[i]] = i`; the data must be a permutation.
fn invert_permutation(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let Col::Int(v) = decode(data)? else {
        return unsupported("invert_permutation: integers expected");
    };
    let n = v.len();
    let mut out = vec![-1i64; n];
    for (i, &p) in v.iter().enumerate() {
        match usize::try_from(p).ok().filter(|&p| p < n && out[p] < 0) {
            Some(p) => out[p] = i as i64,
            None => return unsupported("invert_permutation: the data is not a permutation"),
        }
    }
    TensorData::from_i64s(data.dtype, data.shape.clone(), &out)
        .map(Value::tensor)
        .map_err(|e| EvalError::Unsupported(e.message))
}

/// `concatenate(buffer, data)[len(data):]` along `axis`.
fn fifo_buffer(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (data, buffer) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    let axis = norm_axis(call.int_or("axis", 0), buffer.ndim(), call.op)?;
    let same_other_axes = data.ndim() == buffer.ndim()
        && (0..data.ndim()).all(|k| k == axis || data.shape[k] == buffer.shape[k]);
    if data.dtype != buffer.dtype || !same_other_axes || data.shape[axis] > buffer.shape[axis] {
        return unsupported("nn.fifo_buffer: the data does not fit the buffer");
    }
    let bd = dims(&buffer.shape);
    let (dd, keep) = (dims(&data.shape), bd[axis] - data.shape[axis] as usize);
    let (bs, ds) = (strides(&bd), strides(&dd));
    // Both tensors' elements in one array: the buffer's first.
    let mut both = buffer.clone();
    both.data.extend_from_slice(&data.data);
    let both = TensorData::new(
        buffer.dtype,
        vec![buffer.num_elements() + data.num_elements()],
        both.data,
    )
    .map_err(|e| EvalError::Unsupported(e.message))?;
    let offset = buffer.num_elements() as usize;
    let mut src = Vec::with_capacity(numel(&bd));
    for_each_index(&bd, |_, idx| {
        let at = |st: &[usize], pos: usize| -> usize {
            idx.iter()
                .enumerate()
                .map(|(k, &i)| if k == axis { pos } else { i } * st[k])
                .sum()
        };
        let i = idx[axis];
        src.push(if i < keep {
            at(&bs, i + dd[axis])
        } else {
            offset + at(&ds, i - keep)
        });
    });
    gather(&both, buffer.shape.clone(), &src).map(Value::tensor)
}

fn sliding_window(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let axis = usize::try_from(call.req_int("axis")?).unwrap_or(usize::MAX);
    let window = call.ints("window_shape")?.unwrap_or_default();
    let steps = call.ints("strides")?.unwrap_or_default();
    let n = window.len();
    let fits = axis < x.ndim()
        && x.ndim() - axis == n
        && steps.len() == n
        && window
            .iter()
            .zip(&x.shape[axis..])
            .all(|(&w, &d)| w >= 1 && w <= d)
        && steps.iter().all(|&s| s >= 1);
    if !fits {
        return unsupported("sliding_window: the window does not fit the data");
    }
    let mut out_shape: Vec<i64> = x.shape[..axis].to_vec();
    for i in 0..n {
        let d = x.shape[axis + i];
        out_shape.push((d - (window[i] - 1) + steps[i] - 1).div_euclid(steps[i]));
    }
    out_shape.extend(&window);
    call.check_size(&out_shape)?;
    let st = strides(&dims(&x.shape));
    let od = dims(&out_shape);
    let mut src = Vec::with_capacity(numel(&od));
    for_each_index(&od, |_, idx| {
        let mut at: usize = (0..axis).map(|k| idx[k] * st[k]).sum();
        for i in 0..n {
            at += (idx[axis + i] * steps[i] as usize + idx[axis + n + i]) * st[axis + i];
        }
        src.push(at);
    });
    gather(x, out_shape, &src).map(Value::tensor)
}
