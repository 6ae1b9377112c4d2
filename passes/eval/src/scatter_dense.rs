//! `adv_index` (TOPI's: NumPy advanced indexing of the leading axes by
//! index tensors broadcast together; an index outside its axis is not
//! folded, TVM would read past the data) and `sparse_to_dense` /
//! `dyn.sparse_to_dense` (TOPI's: the default everywhere, then each listed
//! position takes its value, a later entry winning). Elements are copied:
//! exact.

use super::tensor::{
    broadcast_index, broadcast_shapes, decode, dims, for_each_index, gather, numel, strides, Col,
};
use super::{
    arg_tensor, arg_tensors, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel,
    Value,
};
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "adv_index" => adv_index,
        "sparse_to_dense" | "dyn.sparse_to_dense" => sparse_to_dense,
        _ => return None,
    })
}

fn int_values(t: &TensorData, call: &CallInfo) -> EvalResult<Vec<i128>> {
    match decode(t)? {
        Col::Int(v) => Ok(v),
        _ => unsupported(format!("{}: integer indices expected", call.op)),
    }
}

fn adv_index(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let all = arg_tensors(args, 0, call)?;
    let Some((data, indices)) = all.split_first() else {
        return unsupported("adv_index: no data");
    };
    if indices.is_empty() || indices.len() > data.ndim() {
        return unsupported("adv_index: one to rank-many index tensors expected");
    }
    let mut common = indices[0].shape.clone();
    for t in &indices[1..] {
        common = broadcast_shapes(&common, &t.shape)?;
    }
    let mut out_shape = common.clone();
    out_shape.extend(&data.shape[indices.len()..]);
    call.check_size(&out_shape)?;
    let values: Vec<Vec<i128>> = indices
        .iter()
        .map(|t| int_values(t, call))
        .collect::<EvalResult<_>>()?;
    let maps: Vec<Vec<usize>> = indices
        .iter()
        .map(|t| broadcast_index(&t.shape, &common))
        .collect();
    let d = dims(&data.shape);
    let st = strides(&d);
    let k = indices.len();
    let rest: Vec<usize> = d[k..].to_vec();
    let rest_count = numel(&rest);
    let mut src = Vec::with_capacity(numel(&dims(&out_shape)));
    for b in 0..numel(&dims(&common)) {
        let mut base = 0usize;
        for (axis, (v, map)) in values.iter().zip(&maps).enumerate() {
            match usize::try_from(v[map[b]]).ok().filter(|&i| i < d[axis]) {
                Some(i) => base += i * st[axis],
                None => return unsupported("adv_index: an index outside its axis"),
            }
        }
        if rest_count == 0 {
            continue;
        }
        for_each_index(&rest, |_, idx| {
            src.push(base + idx.iter().zip(&st[k..]).map(|(i, s)| i * s).sum::<usize>());
        });
    }
    gather(data, out_shape, &src).map(Value::tensor)
}

fn sparse_to_dense(args: &[Value], call: &CallInfo) -> EvalResult {
    let dynamic = call.op == "dyn.sparse_to_dense";
    expect_args(args, if dynamic { 4 } else { 3 }, call)?;
    let indices = arg_tensor(args, 0, call)?;
    let values = arg_tensor(args, 1, call)?;
    let default = arg_tensor(args, 2, call)?;
    let shape: Vec<i64> = if dynamic {
        int_values(arg_tensor(args, 3, call)?, call)?
            .into_iter()
            .map(|v| v as i64)
            .collect()
    } else {
        call.ints("output_shape")?.unwrap_or_default()
    };
    if shape.iter().any(|&d| d < 0) || default.num_elements() != 1 || values.dtype != default.dtype
    {
        return unsupported(format!("{}: bad shape or default value", call.op));
    }
    call.check_size(&shape)?;
    let idx = int_values(indices, call)?;
    let (count, width) = match indices.ndim() {
        0 => (1, 1),
        1 => (idx.len(), 1),
        2 => (indices.shape[0] as usize, indices.shape[1] as usize),
        _ => return unsupported(format!("{}: indices of rank above 2", call.op)),
    };
    if width != shape.len().max(1)
        || !(values.num_elements() == 1 || values.num_elements() as usize == count)
    {
        return unsupported(format!(
            "{}: indices and values do not match the shape",
            call.op
        ));
    }
    let d = dims(&shape);
    let st = strides(&d);
    let total = numel(&d);
    // Element `total` of the source is the default value; values follow it.
    let mut both = default.data.clone();
    both.extend_from_slice(&values.data);
    let source = TensorData::new(values.dtype, vec![1 + values.num_elements()], both)
        .map_err(|e| EvalError::Unsupported(e.message))?;
    let mut src = vec![0usize; total];
    for j in 0..count {
        let mut at = 0usize;
        for k in 0..width {
            let i = idx[j * width + k];
            match usize::try_from(i)
                .ok()
                .filter(|&i| d.is_empty() || i < d[k])
            {
                Some(i) => at += if d.is_empty() { 0 } else { i * st[k] },
                None => return unsupported(format!("{}: an index outside the shape", call.op)),
            }
        }
        if at < total {
            src[at] = 1 + if values.num_elements() == 1 { 0 } else { j };
        }
    }
    gather(&source, shape, &src).map(Value::tensor)
}
