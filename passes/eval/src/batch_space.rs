//! `nn.space_to_batch_nd` and `nn.batch_to_space_nd` (TOPI's
//! `space_to_batch_nd` / `batch_to_space_nd`: pad, split each spatial axis
//! into (extent / block, block), move the block offsets in front of the
//! batch, merge; and back, then crop) and `nn.dilate` (`pad_value` /
//! `dilation_value` cast to the data type). Elements are moved, never
//! computed: exact.

use super::elemwise::scalar_bytes;
use super::tensor::{dims, for_each_index, gather, numel, strides};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::metadata::TensorData;
use relay_ir::AttrValue;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.space_to_batch_nd" => space_to_batch_nd,
        "nn.batch_to_space_nd" => batch_to_space_nd,
        "nn.dilate" => dilate,
        _ => return None,
    })
}

/// `[[before, after], …]` pairs of a 2-D integer attribute.
fn pairs(call: &CallInfo, name: &str) -> EvalResult<Vec<[i64; 2]>> {
    let rows = call
        .attr(name)
        .and_then(AttrValue::as_array)
        .ok_or_else(|| EvalError::Unsupported(format!("{}: no `{name}`", call.op)))?;
    rows.iter()
        .map(|r| match r.as_int_array().as_deref() {
            Some(&[a, b]) if a >= 0 && b >= 0 => Ok([a, b]),
            _ => unsupported(format!("{}: bad `{name}`", call.op)),
        })
        .collect()
}

/// The block sizes, one per spatial axis after the batch.
fn blocks(call: &CallInfo, ndim: usize) -> EvalResult<Vec<usize>> {
    let b = call.ints("block_shape")?.unwrap_or_default();
    if b.is_empty() || b.len() >= ndim || b.iter().any(|&v| v < 1) {
        return unsupported(format!("{}: bad block_shape", call.op));
    }
    Ok(b.iter().map(|&v| v as usize).collect())
}

/// The data with one extra element (the fill value) at the end, so a
/// source index can point at it.
fn with_fill(x: &TensorData, fill: &[u8]) -> EvalResult<(TensorData, usize)> {
    let mut data = x.data.clone();
    data.extend_from_slice(fill);
    let n = x.num_elements() as usize;
    TensorData::new(x.dtype, vec![n as i64 + 1], data)
        .map(|t| (t, n))
        .map_err(|e| EvalError::Unsupported(e.message))
}

fn space_to_batch_nd(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let b = blocks(call, x.ndim())?;
    let m = b.len();
    let pads = pairs(call, "paddings")?;
    if pads.len() != m {
        return unsupported("nn.space_to_batch_nd: one padding pair per block axis");
    }
    let d = dims(&x.shape);
    let mut out_shape = vec![(d[0] * b.iter().product::<usize>()) as i64];
    for i in 0..m {
        let padded = d[1 + i] + (pads[i][0] + pads[i][1]) as usize;
        if !padded.is_multiple_of(b[i]) {
            return unsupported("nn.space_to_batch_nd: the padded extent does not divide");
        }
        out_shape.push((padded / b[i]) as i64);
    }
    out_shape.extend(x.shape[1 + m..].iter());
    call.check_size(&out_shape)?;
    let fill = scalar_bytes(x.dtype, call.f64("pad_value").unwrap_or(0.0))?;
    let (source, fill_at) = with_fill(x, &fill)?;
    let st = strides(&d);
    let od = dims(&out_shape);
    let mut src = Vec::with_capacity(numel(&od));
    for_each_index(&od, |_, idx| {
        // The output batch is (block offsets, row-major) · N + n.
        let (mut offsets, n) = (idx[0] / d[0], idx[0] % d[0]);
        let mut k = vec![0usize; m];
        for i in (0..m).rev() {
            k[i] = offsets % b[i];
            offsets /= b[i];
        }
        let mut at = Some(n * st[0]);
        for i in 0..m {
            let p = (idx[1 + i] * b[i] + k[i]) as i64 - pads[i][0];
            at = match at {
                Some(a) if p >= 0 && (p as usize) < d[1 + i] => Some(a + p as usize * st[1 + i]),
                _ => None,
            };
        }
        let rest: usize = (1 + m..d.len()).map(|a| idx[a] * st[a]).sum();
        src.push(at.map_or(fill_at, |a| a + rest));
    });
    gather(&source, out_shape, &src).map(Value::tensor)
}

fn batch_to_space_nd(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let b = blocks(call, x.ndim())?;
    let m = b.len();
    let crops = pairs(call, "crops")?;
    let d = dims(&x.shape);
    let product: usize = b.iter().product();
    if crops.len() != m || !d[0].is_multiple_of(product) {
        return unsupported("nn.batch_to_space_nd: the batch does not divide into the blocks");
    }
    let batch = d[0] / product;
    let mut out_shape = vec![batch as i64];
    for i in 0..m {
        let full = (d[1 + i] * b[i]) as i64 - crops[i][0] - crops[i][1];
        if full < 0 {
            return unsupported("nn.batch_to_space_nd: crops larger than the data");
        }
        out_shape.push(full);
    }
    out_shape.extend(x.shape[1 + m..].iter());
    call.check_size(&out_shape)?;
    let st = strides(&d);
    let od = dims(&out_shape);
    let mut src = Vec::with_capacity(numel(&od));
    for_each_index(&od, |_, idx| {
        let mut offsets = 0usize;
        let mut at = 0usize;
        for i in 0..m {
            let q = idx[1 + i] + crops[i][0] as usize;
            offsets = offsets * b[i] + q % b[i];
            at += (q / b[i]) * st[1 + i];
        }
        at += (offsets * batch + idx[0]) * st[0];
        at += (1 + m..d.len()).map(|a| idx[a] * st[a]).sum::<usize>();
        src.push(at);
    });
    gather(x, out_shape, &src).map(Value::tensor)
}

/// TOPI's `dilate`: `(n - 1) · stride + 1` per axis, the data at multiples
/// of the stride, `dilation_value` elsewhere.
fn dilate(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let s = call.ints("strides")?.unwrap_or_default();
    if s.len() != x.ndim() || s.iter().any(|&v| v < 1) {
        return unsupported("nn.dilate: one positive stride per axis expected");
    }
    let out_shape: Vec<i64> = x
        .shape
        .iter()
        .zip(&s)
        .map(|(&n, &st)| if n == 0 { 0 } else { (n - 1) * st + 1 })
        .collect();
    call.check_size(&out_shape)?;
    let fill = scalar_bytes(x.dtype, call.f64("dilation_value").unwrap_or(0.0))?;
    let (source, fill_at) = with_fill(x, &fill)?;
    let st = strides(&dims(&x.shape));
    let od = dims(&out_shape);
    let mut src = Vec::with_capacity(numel(&od));
    for_each_index(&od, |_, idx| {
        let on_grid = idx.iter().zip(&s).all(|(&i, &sv)| i % sv as usize == 0);
        src.push(if on_grid {
            idx.iter()
                .zip(&s)
                .zip(&st)
                .map(|((&i, &sv), &stride)| i / sv as usize * stride)
                .sum()
        } else {
            fill_at
        });
    });
    gather(&source, out_shape, &src).map(Value::tensor)
}
