//! Data-movement kernels (TOPI's `transform.h`): reshapes, transposes,
//! concatenation, splitting, slicing, gathering, broadcasting, padding and
//! fills. They copy raw elements, so they work for every data type.

use super::elemwise::scalar_bytes;
use super::tensor::{
    broadcast_index, broadcast_shapes, decode, dims, encode, filled, for_each_index, gather,
    norm_axis, numel, strides, Col,
};
use super::{
    arg_tensor, arg_tensors, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel,
    Value,
};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::AttrValue;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "reshape" => reshape,
        "reshape_like" => reshape_like,
        "nn.batch_flatten" => batch_flatten,
        "transpose" => transpose,
        "expand_dims" => expand_dims,
        "squeeze" => squeeze,
        "concatenate" => concatenate,
        "stack" => stack,
        "split" => split,
        "take" => take,
        "strided_slice" => strided_slice,
        "slice_like" => slice_like,
        "broadcast_to" => broadcast_to,
        "broadcast_to_like" => broadcast_to_like,
        "full" => full,
        "zeros" => zeros,
        "ones" => ones,
        "reverse" => reverse,
        "tile" => tile,
        "repeat" => repeat,
        "nn.pad" => pad,
        "layout_transform" => layout_transform,
        "arange" => arange,
        _ => return None,
    })
}

fn tensor_value(t: EvalResult<TensorData>) -> EvalResult {
    t.map(Value::tensor)
}

/// The static shape of the call's checked type, if it is a tensor type
/// with known dimensions.
fn ret_shape(call: &CallInfo) -> Option<Vec<i64>> {
    let tt = call.ret_type?.as_tensor()?;
    tt.shape.iter().map(|d| d.as_int()).collect()
}

fn with_shape(x: &TensorData, shape: Vec<i64>, op: &str) -> EvalResult<TensorData> {
    if numel(&dims(&shape)) as i64 != x.num_elements() || shape.iter().any(|&d| d < 0) {
        return unsupported(format!("{op}: cannot reshape {:?} to {shape:?}", x.shape));
    }
    TensorData::new(x.dtype, shape, x.data.clone()).map_err(|e| EvalError::Unsupported(e.message))
}

/// Relay's `InferNewShape`: `newshape` with its special values (0 copy,
/// -1 infer, -2 copy the rest, -3 merge two, -4 split one).
pub(crate) fn infer_new_shape(
    ishape: &[i64],
    newshape: &[i64],
    allowzero: bool,
) -> EvalResult<Vec<i64>> {
    let bad = || {
        unsupported(format!(
            "reshape: invalid newshape {newshape:?} for {ishape:?}"
        ))
    };
    let mut oshape: Vec<i64> = Vec::new();
    let mut used_in = vec![false; ishape.len()];
    let mut used_out: Vec<usize> = Vec::new();
    let mut src = 0usize;
    let mut infer_idx: Option<usize> = None;
    let mut i = 0usize;
    while i < newshape.len() {
        let v = newshape[i];
        match v {
            v if v > 0 => {
                oshape.push(v);
                src += 1;
            }
            0 => {
                if allowzero {
                    oshape.push(0);
                } else {
                    let Some(&d) = ishape.get(src) else {
                        return bad();
                    };
                    used_in[src] = true;
                    used_out.push(oshape.len());
                    oshape.push(d);
                }
                src += 1;
            }
            -1 => {
                if infer_idx.is_some() {
                    return bad();
                }
                // TVM records the position in `newshape`.
                infer_idx = Some(i);
                oshape.push(1);
                src += 1;
            }
            -2 => {
                while src < ishape.len() {
                    used_in[src] = true;
                    used_out.push(oshape.len());
                    oshape.push(ishape[src]);
                    src += 1;
                }
            }
            -3 => {
                if src + 1 >= ishape.len() {
                    return bad();
                }
                used_in[src] = true;
                used_in[src + 1] = true;
                used_out.push(oshape.len());
                oshape.push(ishape[src] * ishape[src + 1]);
                src += 2;
            }
            -4 => {
                if i + 2 >= newshape.len() || src >= ishape.len() {
                    return bad();
                }
                used_in[src] = true;
                let d0 = ishape[src];
                src += 1;
                let (d1, d2) = (newshape[i + 1], newshape[i + 2]);
                i += 2;
                let (a, b) = match (d1, d2) {
                    (-1, -1) => return bad(),
                    (-1, d2) if d2 > 0 => (d0 / d2, d2),
                    (d1, -1) if d1 > 0 => (d1, d0 / d1),
                    (d1, d2) => (d1, d2),
                };
                used_out.push(oshape.len());
                oshape.push(a);
                used_out.push(oshape.len());
                oshape.push(b);
            }
            _ => return bad(),
        }
        i += 1;
    }
    if let Some(idx) = infer_idx {
        let mut infer: i64 = ishape
            .iter()
            .enumerate()
            .filter(|(k, _)| !used_in.get(*k).copied().unwrap_or(false))
            .map(|(_, &d)| d)
            .product();
        for (k, &d) in oshape.iter().enumerate() {
            if used_out.contains(&k) {
                continue;
            }
            if d == 0 {
                return bad();
            }
            infer /= d;
        }
        if idx >= oshape.len() {
            return bad();
        }
        oshape[idx] = infer;
    }
    Ok(oshape)
}

fn reshape(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let shape = match ret_shape(call) {
        Some(shape) => shape,
        None => {
            let newshape = call.ints("newshape")?.unwrap_or_default();
            infer_new_shape(&x.shape, &newshape, call.bool_or("allowzero", false))?
        }
    };
    tensor_value(with_shape(x, shape, call.op))
}

/// `reshape_like(x, like)`: x's dimensions `[lhs_begin, lhs_end)` replaced
/// by like's `[rhs_begin, rhs_end)`.
fn reshape_like(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let x = arg_tensor(args, 0, call)?;
    let like = arg_tensor(args, 1, call)?;
    let range = |begin: i64, end: Option<i64>, n: usize| -> (usize, usize) {
        let n = n as i64;
        let b = if begin < 0 { begin + n } else { begin };
        let e = match end {
            None => n,
            Some(e) if e < 0 => e + n,
            Some(e) => e,
        };
        (b.clamp(0, n) as usize, e.clamp(0, n) as usize)
    };
    let (lb, le) = range(call.int_or("lhs_begin", 0), call.int("lhs_end"), x.ndim());
    let (rb, re) = range(
        call.int_or("rhs_begin", 0),
        call.int("rhs_end"),
        like.ndim(),
    );
    let mut shape = x.shape[..lb].to_vec();
    shape.extend_from_slice(&like.shape[rb..re.max(rb)]);
    shape.extend_from_slice(&x.shape[le.max(lb)..]);
    tensor_value(with_shape(x, shape, call.op))
}

fn batch_flatten(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    if x.ndim() == 0 {
        return unsupported("nn.batch_flatten of a scalar");
    }
    let rest: i64 = x.shape[1..].iter().product();
    tensor_value(with_shape(x, vec![x.shape[0], rest], call.op))
}

/// `x` with its axes permuted: output axis `i` is input axis `perm[i]`.
pub(crate) fn permute(x: &TensorData, perm: &[usize]) -> EvalResult<TensorData> {
    let in_dims = dims(&x.shape);
    let in_strides = strides(&in_dims);
    let out_dims: Vec<usize> = perm.iter().map(|&p| in_dims[p]).collect();
    let out_shape: Vec<i64> = out_dims.iter().map(|&d| d as i64).collect();
    let mut src = Vec::with_capacity(numel(&out_dims));
    for_each_index(&out_dims, |_, idx| {
        src.push(idx.iter().zip(perm).map(|(&i, &p)| i * in_strides[p]).sum());
    });
    gather(x, out_shape, &src)
}

fn transpose(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let n = x.ndim();
    let axes = call.ints("axes")?.unwrap_or_default();
    let perm: Vec<usize> = if axes.is_empty() {
        (0..n).rev().collect()
    } else {
        if axes.len() != n {
            return unsupported("transpose: wrong number of axes");
        }
        axes.iter()
            .map(|&a| norm_axis(a, n, call.op))
            .collect::<EvalResult<_>>()?
    };
    tensor_value(permute(x, &perm))
}

fn expand_dims(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let n = x.ndim() as i64;
    let axis = call.req_int("axis")?;
    let count = call.int_or("num_newaxis", 1);
    let pos = if axis < 0 { axis + n + 1 } else { axis };
    if pos < 0 || pos > n || count < 0 {
        return unsupported("expand_dims: axis out of range");
    }
    let mut shape = x.shape.clone();
    for _ in 0..count {
        shape.insert(pos as usize, 1);
    }
    tensor_value(with_shape(x, shape, call.op))
}

fn squeeze(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let n = x.ndim();
    let shape: Vec<i64> = match call.ints("axis")? {
        None => x.shape.iter().copied().filter(|&d| d != 1).collect(),
        Some(axes) => {
            let axes: Vec<usize> = axes
                .iter()
                .map(|&a| norm_axis(a, n, call.op))
                .collect::<EvalResult<_>>()?;
            if axes.iter().any(|&a| x.shape[a] != 1) {
                return unsupported("squeeze: axis of size other than 1");
            }
            (0..n)
                .filter(|k| !axes.contains(k))
                .map(|k| x.shape[k])
                .collect()
        }
    };
    tensor_value(with_shape(x, shape, call.op))
}

/// Joins tensors along `axis`.
pub(crate) fn concat(parts: &[&TensorData], axis: i64, op: &str) -> EvalResult<TensorData> {
    let Some(first) = parts.first() else {
        return unsupported(format!("{op}: no tensors"));
    };
    let n = first.ndim();
    let axis = norm_axis(axis, n, op)?;
    for p in parts {
        if p.dtype != first.dtype
            || p.ndim() != n
            || (0..n).any(|k| k != axis && p.shape[k] != first.shape[k])
        {
            return unsupported(format!("{op}: tensors of different shapes or types"));
        }
    }
    let outer: usize = dims(&first.shape[..axis]).iter().product();
    let inner: usize = dims(&first.shape[axis + 1..]).iter().product();
    let b = first.dtype.bytes();
    let mut data = Vec::new();
    for o in 0..outer {
        for p in parts {
            let chunk = p.shape[axis].max(0) as usize * inner * b;
            data.extend_from_slice(&p.data[o * chunk..(o + 1) * chunk]);
        }
    }
    let mut shape = first.shape.clone();
    shape[axis] = parts.iter().map(|p| p.shape[axis]).sum();
    TensorData::new(first.dtype, shape, data).map_err(|e| EvalError::Unsupported(e.message))
}

fn concatenate(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let parts = arg_tensors(args, 0, call)?;
    tensor_value(concat(&parts, call.int_or("axis", 0), call.op))
}

fn stack(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let parts = arg_tensors(args, 0, call)?;
    let Some(first) = parts.first() else {
        return unsupported("stack: no tensors");
    };
    let n = first.ndim() as i64;
    let axis = call.int_or("axis", 0);
    let pos = if axis < 0 { axis + n + 1 } else { axis };
    if pos < 0 || pos > n {
        return unsupported("stack: axis out of range");
    }
    let expanded: Vec<TensorData> = parts
        .iter()
        .map(|p| {
            let mut shape = p.shape.clone();
            shape.insert((pos as usize).min(shape.len()), 1);
            with_shape(p, shape, "stack")
        })
        .collect::<EvalResult<_>>()?;
    let refs: Vec<&TensorData> = expanded.iter().collect();
    tensor_value(concat(&refs, pos, call.op))
}

/// The sub-tensor `[begin, end)` along `axis`.
fn slice_axis(x: &TensorData, axis: usize, begin: usize, end: usize) -> EvalResult<TensorData> {
    let outer: usize = dims(&x.shape[..axis]).iter().product();
    let inner: usize = dims(&x.shape[axis + 1..]).iter().product();
    let len = x.shape[axis].max(0) as usize;
    let b = x.dtype.bytes();
    let mut data = Vec::new();
    for o in 0..outer {
        let base = o * len * inner;
        data.extend_from_slice(&x.data[(base + begin * inner) * b..(base + end * inner) * b]);
    }
    let mut shape = x.shape.clone();
    shape[axis] = (end - begin) as i64;
    TensorData::new(x.dtype, shape, data).map_err(|e| EvalError::Unsupported(e.message))
}

/// `split(x, indices_or_sections, axis)`: a tuple of the pieces.
fn split(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let axis = norm_axis(call.int_or("axis", 0), x.ndim(), call.op)?;
    let len = x.shape[axis];
    let spec = call.attr("indices_or_sections");
    let mut bounds: Vec<i64> = vec![0];
    match spec {
        Some(AttrValue::Array(_)) => {
            let indices = spec.and_then(AttrValue::as_int_array).unwrap_or_default();
            bounds.extend(indices);
        }
        Some(v) => match v.as_int() {
            Some(sections) if sections > 0 && len % sections == 0 => {
                let size = len / sections;
                bounds.extend((1..sections).map(|k| k * size));
            }
            _ => return unsupported("split: invalid sections"),
        },
        None => return unsupported("split: no indices_or_sections"),
    }
    bounds.push(len);
    let mut parts = Vec::new();
    for w in bounds.windows(2) {
        let (b, e) = (w[0].clamp(0, len) as usize, w[1].clamp(0, len) as usize);
        if e < b {
            return unsupported("split: decreasing indices");
        }
        parts.push(Value::tensor(slice_axis(x, axis, b, e)?));
    }
    Ok(Value::Tuple(parts))
}

/// `take(data, indices, axis, batch_dims, mode)` as TOPI computes it:
/// `clip` clamps indices to `[0, n - 1]` (negative ones become 0), `wrap`
/// wraps them, `fast` requires them in range.
fn take(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let a = arg_tensor(args, 0, call)?;
    let ind = arg_tensor(args, 1, call)?;
    if !(ind.dtype.is_int() || ind.dtype.is_uint()) {
        return unsupported("take: non-integer indices");
    }
    let indices = match decode(ind)? {
        Col::Int(v) => v,
        _ => return unsupported("take: non-integer indices"),
    };
    let mode = call.str("mode").unwrap_or("clip");
    let batch_dims = call.int_or("batch_dims", 0);
    let fix = |idx: i128, n: i64| -> EvalResult<usize> {
        let n = i128::from(n);
        let k = match mode {
            "clip" => idx.max(0).min(n - 1),
            "wrap" => ((idx % n) + n) % n,
            _ => idx,
        };
        if k < 0 || k >= n {
            return unsupported("take: index out of range");
        }
        Ok(k as usize)
    };
    let Some(axis) = call.int("axis") else {
        // Flattened data.
        let n = a.num_elements();
        if n == 0 {
            return unsupported("take: empty data");
        }
        let src: Vec<usize> = indices
            .iter()
            .map(|&i| fix(i, n))
            .collect::<EvalResult<_>>()?;
        return tensor_value(gather(a, ind.shape.clone(), &src));
    };
    let axis = norm_axis(axis, a.ndim(), call.op)?;
    let bd = if batch_dims < 0 {
        batch_dims + ind.ndim() as i64
    } else {
        batch_dims
    };
    if bd < 0 || bd as usize > axis || (bd != 0 && mode != "clip") {
        return unsupported("take: unsupported batch_dims");
    }
    let bd = bd as usize;
    let axis_dim = a.shape[axis];
    if axis_dim == 0 {
        return unsupported("take: empty axis");
    }
    // Output: a.shape[:axis] + indices.shape[bd:] + a.shape[axis+1:].
    let mut out_shape: Vec<i64> = a.shape[..axis].to_vec();
    out_shape.extend_from_slice(&ind.shape[bd..]);
    out_shape.extend_from_slice(&a.shape[axis + 1..]);
    call.check_size(&out_shape)?;
    let out_dims = dims(&out_shape);
    let a_strides = strides(&dims(&a.shape));
    let ind_strides = strides(&dims(&ind.shape));
    let ilen = ind.ndim() - bd;
    let mut src = Vec::with_capacity(numel(&out_dims));
    let mut err = None;
    for_each_index(&out_dims, |_, idx| {
        // Position in indices: the batch axes, then the taken axes.
        let mut ipos = 0usize;
        for k in 0..bd {
            ipos += idx[k] * ind_strides[k];
        }
        for k in 0..ilen {
            ipos += idx[axis + k] * ind_strides[bd + k];
        }
        let taken = match fix(indices[ipos], axis_dim) {
            Ok(t) => t,
            Err(e) => {
                err = Some(e);
                0
            }
        };
        let mut flat = 0usize;
        for k in 0..axis {
            flat += idx[k] * a_strides[k];
        }
        flat += taken * a_strides[axis];
        for k in axis + 1..a.ndim() {
            flat += idx[k - 1 + ilen] * a_strides[k];
        }
        src.push(flat);
    });
    if let Some(e) = err {
        return Err(e);
    }
    tensor_value(gather(a, out_shape, &src))
}

/// `CanonicalizeIndex` of TOPI's strided slice.
fn canonicalize_index(index: i64, extent: i64, stride: i64) -> i64 {
    let (lo, hi) = if stride < 0 {
        (-1, extent - 1)
    } else {
        (0, extent)
    };
    let index = if index < 0 {
        index.saturating_add(extent)
    } else {
        index
    };
    index.clamp(lo, hi)
}

fn strided_slice(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let n = x.ndim();
    let begin_attr = call
        .attr("begin")
        .and_then(AttrValue::as_array)
        .unwrap_or_default();
    let end_attr = call
        .attr("end")
        .and_then(AttrValue::as_array)
        .unwrap_or_default();
    let strides_attr = call
        .attr("strides")
        .and_then(AttrValue::as_array)
        .unwrap_or_default();
    let size_mode = call.str("slice_mode") == Some("size");
    let int_or_none = |v: Option<&AttrValue>| -> EvalResult<Option<i64>> {
        match v {
            None | Some(AttrValue::Null) => Ok(None),
            Some(v) => v
                .as_int()
                .map(Some)
                .ok_or_else(|| EvalError::Unsupported("strided_slice: bad index".into())),
        }
    };
    let axes: Vec<usize> = match call.ints("axes")? {
        Some(axes) => axes
            .iter()
            .map(|&a| norm_axis(a, n, call.op))
            .collect::<EvalResult<_>>()?,
        None => (0..n).collect(),
    };
    let with_axes = call.attr("axes").is_some();
    let count = axes.len();
    if with_axes
        && (begin_attr.len() != count || end_attr.len() != count || strides_attr.len() != count)
    {
        return unsupported("strided_slice: begin/end/strides do not match axes");
    }
    if begin_attr.len() > count || end_attr.len() > count || strides_attr.len() > count {
        return unsupported("strided_slice: too many indices");
    }
    // Strides (ignored in size mode), padded with 1.
    let mut stride = vec![1i64; count];
    if !size_mode {
        for (k, s) in strides_attr.iter().enumerate() {
            stride[k] = int_or_none(Some(s))?.unwrap_or(1);
        }
    }
    if stride.contains(&0) {
        return unsupported("strided_slice: zero stride");
    }
    let mut out_shape = x.shape.clone();
    let mut begins = vec![0i64; count];
    for k in 0..count {
        let dim = x.shape[axes[k]];
        let b = match int_or_none(begin_attr.get(k))? {
            Some(b) => b,
            None => {
                if stride[k] > 0 {
                    0
                } else {
                    i64::MAX
                }
            }
        };
        let e = match int_or_none(end_attr.get(k))? {
            None => {
                if stride[k] < 0 {
                    0
                } else {
                    i64::MAX
                }
            }
            Some(e) if size_mode => {
                if e < 0 {
                    if stride[k] < 0 {
                        0
                    } else {
                        i64::MAX
                    }
                } else {
                    b.saturating_add(e)
                }
            }
            Some(e) => e,
        };
        let bc = canonicalize_index(b, dim, stride[k]);
        let ec = canonicalize_index(e, dim, stride[k]);
        if (stride[k] < 0 && ec > bc) || (stride[k] > 0 && bc > ec) {
            return unsupported("strided_slice: invalid begin/end");
        }
        let interval = (ec - bc).abs();
        let s = stride[k].abs();
        out_shape[axes[k]] = (interval + s - 1) / s;
        begins[k] = bc;
    }
    let out_dims = dims(&out_shape);
    let in_strides = strides(&dims(&x.shape));
    let mut src = Vec::with_capacity(numel(&out_dims));
    for_each_index(&out_dims, |_, idx| {
        let mut real: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
        for k in 0..count {
            real[axes[k]] = idx[axes[k]] as i64 * stride[k] + begins[k];
        }
        src.push(
            real.iter()
                .zip(&in_strides)
                .map(|(&i, &s)| i as usize * s)
                .sum(),
        );
    });
    tensor_value(gather(x, out_shape, &src))
}

fn broadcast_to_shape(x: &TensorData, target: &[i64], call: &CallInfo) -> EvalResult<TensorData> {
    let shape = broadcast_shapes(&x.shape, target)?;
    call.check_size(&shape)?;
    let src = broadcast_index(&x.shape, &shape);
    gather(x, shape, &src)
}

fn broadcast_to(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let Some(shape) = call.ints("shape")? else {
        return unsupported("broadcast_to: no shape");
    };
    tensor_value(broadcast_to_shape(x, &shape, call))
}

/// `slice_like(x, like, axes)`: the leading part of `x` with the extents of
/// `like` on `axes` (every axis both have when `axes` is absent), as TOPI's
/// `slice_like` does.
fn slice_like(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let x = arg_tensor(args, 0, call)?;
    let like = arg_tensor(args, 1, call)?;
    let axes: Vec<usize> = match call.ints("axes")? {
        Some(axes) => axes
            .iter()
            .map(|&a| norm_axis(a, x.ndim(), call.op))
            .collect::<EvalResult<_>>()?,
        None => (0..x.ndim().min(like.ndim())).collect(),
    };
    let mut out_shape = x.shape.clone();
    for &axis in &axes {
        let Some(&extent) = like.shape.get(axis) else {
            return unsupported("slice_like: axis beyond the rank of the shape tensor");
        };
        if extent > x.shape[axis] {
            return unsupported("slice_like: the shape tensor is larger than the data");
        }
        out_shape[axis] = extent;
    }
    let in_strides = strides(&dims(&x.shape));
    let mut src = Vec::new();
    for_each_index(&dims(&out_shape), |_, idx| {
        src.push(idx.iter().zip(&in_strides).map(|(i, s)| i * s).sum());
    });
    tensor_value(gather(x, out_shape, &src))
}

fn broadcast_to_like(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let x = arg_tensor(args, 0, call)?;
    let like = arg_tensor(args, 1, call)?;
    tensor_value(broadcast_to_shape(x, &like.shape, call))
}

/// `full(fill, shape, dtype)`: the fill value cast to dtype (default: its
/// own type).
fn full(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let fill = arg_tensor(args, 0, call)?;
    if fill.num_elements() != 1 {
        return unsupported("full: the fill value is not a scalar");
    }
    let Some(shape) = call.ints("shape")? else {
        return unsupported("full: no static shape");
    };
    let dtype = call.dtype("dtype")?.unwrap_or(fill.dtype);
    call.check_size(&shape)?;
    let v = super::cast::cast_tensor(fill, dtype)?;
    tensor_value(filled(dtype, shape, &v.data))
}

fn zeros(args: &[Value], call: &CallInfo) -> EvalResult {
    filled_with(0, args, call)
}

fn ones(args: &[Value], call: &CallInfo) -> EvalResult {
    filled_with(1, args, call)
}

/// `zeros` / `ones`: a tensor of the static `shape` and `dtype` attributes.
fn filled_with(value: i64, args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 0, call)?;
    let Some(shape) = call.ints("shape")? else {
        return unsupported(format!("{}: no static shape", call.op));
    };
    let Some(dtype) = call.dtype("dtype")? else {
        return unsupported(format!("{}: no data type", call.op));
    };
    call.check_size(&shape)?;
    let scalar = TensorData::from_i64s(DataType::INT64, Vec::new(), &[value])
        .map_err(|e| EvalError::Unsupported(e.to_string()))?;
    let v = super::cast::cast_tensor(&scalar, dtype)?;
    tensor_value(filled(dtype, shape, &v.data))
}

fn reverse(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let axis = norm_axis(call.req_int("axis")?, x.ndim(), call.op)?;
    let d = dims(&x.shape);
    let st = strides(&d);
    let mut src = Vec::with_capacity(numel(&d));
    for_each_index(&d, |_, idx| {
        src.push(
            idx.iter()
                .enumerate()
                .map(|(k, &i)| if k == axis { d[k] - 1 - i } else { i } * st[k])
                .sum(),
        );
    });
    tensor_value(gather(x, x.shape.clone(), &src))
}

fn tile(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let reps = call.ints("reps")?.unwrap_or_default();
    let n = x.ndim().max(reps.len());
    let mut xs = vec![1i64; n - x.ndim()];
    xs.extend_from_slice(&x.shape);
    let mut rs = vec![1i64; n - reps.len()];
    rs.extend_from_slice(&reps);
    let out_shape: Vec<i64> = xs
        .iter()
        .zip(&rs)
        .map(|(a, b)| a.checked_mul(*b))
        .collect::<Option<_>>()
        .ok_or_else(|| EvalError::TooLarge("tile: the result's shape overflows".into()))?;
    call.check_size(&out_shape)?;
    let xd = dims(&xs);
    let st = strides(&xd);
    let od = dims(&out_shape);
    let mut src = Vec::with_capacity(numel(&od));
    for_each_index(&od, |_, idx| {
        src.push(
            idx.iter()
                .enumerate()
                .map(|(k, &i)| (i % xd[k]) * st[k])
                .sum(),
        );
    });
    tensor_value(gather(x, out_shape, &src))
}

fn repeat(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let repeats = call.req_int("repeats")?;
    let axis = norm_axis(call.int_or("axis", 0), x.ndim(), call.op)?;
    if repeats < 1 {
        return unsupported("repeat: repeats < 1");
    }
    let mut out_shape = x.shape.clone();
    out_shape[axis] = out_shape[axis]
        .checked_mul(repeats)
        .ok_or_else(|| EvalError::TooLarge("repeat: the result's shape overflows".into()))?;
    call.check_size(&out_shape)?;
    let st = strides(&dims(&x.shape));
    let od = dims(&out_shape);
    let mut src = Vec::with_capacity(numel(&od));
    for_each_index(&od, |_, idx| {
        src.push(
            idx.iter()
                .enumerate()
                .map(|(k, &i)| if k == axis { i / repeats as usize } else { i } * st[k])
                .sum(),
        );
    });
    tensor_value(gather(x, out_shape, &src))
}

/// `nn.pad(data, pad_value, pad_width, pad_mode)`: `constant` fills with
/// pad_value (cast to data's type), `edge` repeats the border, `reflect`
/// mirrors without repeating it.
fn pad(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let x = arg_tensor(args, 0, call)?;
    let pad_value = arg_tensor(args, 1, call)?;
    let n = x.ndim();
    let widths: Vec<Vec<i64>> = match call.attr("pad_width").and_then(AttrValue::as_array) {
        Some(rows) => rows
            .iter()
            .map(|r| {
                r.as_int_array()
                    .ok_or_else(|| EvalError::Unsupported("nn.pad: bad pad_width".into()))
            })
            .collect::<EvalResult<_>>()?,
        None => return unsupported("nn.pad: no pad_width"),
    };
    if widths.len() != n || widths.iter().any(|w| w.len() != 2 || w[0] < 0 || w[1] < 0) {
        return unsupported("nn.pad: unsupported pad_width");
    }
    let mode = call.str("pad_mode").unwrap_or("constant");
    let out_shape: Vec<i64> = (0..n)
        .map(|k| {
            x.shape[k]
                .checked_add(widths[k][0])
                .and_then(|d| d.checked_add(widths[k][1]))
        })
        .collect::<Option<_>>()
        .ok_or_else(|| EvalError::TooLarge("nn.pad: the result's shape overflows".into()))?;
    call.check_size(&out_shape)?;
    let xd = dims(&x.shape);
    if mode != "constant" && xd.contains(&0) {
        return unsupported("nn.pad: empty input");
    }
    let st = strides(&xd);
    let od = dims(&out_shape);
    let fill = match mode {
        "constant" => {
            if pad_value.num_elements() != 1 {
                return unsupported("nn.pad: pad value is not a scalar");
            }
            super::cast::cast_tensor(pad_value, x.dtype)?.data
        }
        "edge" | "reflect" => scalar_bytes(x.dtype, 0.0)?,
        _ => return unsupported(format!("nn.pad: mode {mode}")),
    };
    let b = x.dtype.bytes();
    let mut data = Vec::with_capacity(numel(&od) * b);
    let mut err = false;
    for_each_index(&od, |_, idx| {
        let mut flat = 0usize;
        let mut inside = true;
        for k in 0..n {
            let mut i = idx[k] as i64 - widths[k][0];
            let len = xd[k] as i64;
            if i < 0 || i >= len {
                match mode {
                    "constant" => {
                        inside = false;
                        break;
                    }
                    "edge" => i = i.clamp(0, len - 1),
                    _ => {
                        // reflect: -1 -> 1, len -> len - 2.
                        if len == 1 {
                            i = 0;
                        } else {
                            if i < 0 {
                                i = -i;
                            }
                            if i >= len {
                                i = 2 * (len - 1) - i;
                            }
                            if i < 0 || i >= len {
                                err = true;
                                i = 0;
                            }
                        }
                    }
                }
            }
            flat += i as usize * st[k];
        }
        if inside {
            data.extend_from_slice(&x.data[flat * b..flat * b + b]);
        } else {
            data.extend_from_slice(&fill);
        }
    });
    if err {
        return unsupported("nn.pad: reflection wider than the input");
    }
    tensor_value(
        TensorData::new(x.dtype, out_shape, data).map_err(|e| EvalError::Unsupported(e.message)),
    )
}

/// A layout: each axis is a primal axis (`C`) or a sub-axis with its factor
/// (`4c`).
fn parse_layout(s: &str) -> EvalResult<Vec<(char, i64)>> {
    let mut axes = Vec::new();
    let mut factor = 0i64;
    for ch in s.chars() {
        if ch.is_ascii_digit() {
            factor = factor * 10 + i64::from(ch as u8 - b'0');
        } else if ch.is_ascii_uppercase() {
            if factor != 0 {
                return unsupported(format!("layout {s}"));
            }
            axes.push((ch, 0));
        } else if ch.is_ascii_lowercase() {
            if factor <= 0 {
                return unsupported(format!("layout {s}"));
            }
            axes.push((ch.to_ascii_uppercase(), factor));
            factor = 0;
        } else {
            return unsupported(format!("layout {s}"));
        }
    }
    Ok(axes)
}

/// `layout_transform(x, src_layout, dst_layout)`: elements of the
/// destination that have no source (when a split does not divide) are 0.
fn layout_transform(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let src = parse_layout(call.str("src_layout").unwrap_or_default())?;
    let dst = parse_layout(call.str("dst_layout").unwrap_or_default())?;
    if src.len() != x.ndim() {
        return unsupported("layout_transform: layout does not match the rank");
    }
    // The size of each primal axis, from the source.
    let mut primal: Vec<(char, i64)> = Vec::new();
    for (k, &(name, factor)) in src.iter().enumerate() {
        if factor == 0 {
            let sub = src
                .iter()
                .find(|&&(n2, f2)| n2 == name && f2 > 0)
                .map_or(1, |&(_, f)| f);
            primal.push((name, x.shape[k] * sub));
        }
    }
    let size_of = |name: char| primal.iter().find(|(n, _)| *n == name).map(|(_, s)| *s);
    let sub_factor = |layout: &[(char, i64)], name: char| {
        layout
            .iter()
            .find(|&&(n, f)| n == name && f > 0)
            .map_or(1, |&(_, f)| f)
    };
    let mut out_shape = Vec::new();
    for &(name, factor) in &dst {
        let Some(size) = size_of(name) else {
            return unsupported("layout_transform: axes do not match");
        };
        out_shape.push(if factor > 0 {
            factor
        } else {
            let f = sub_factor(&dst, name);
            (size + f - 1) / f
        });
    }
    call.check_size(&out_shape)?;
    if let Some(shape) = ret_shape(call) {
        if shape != out_shape {
            return unsupported("layout_transform: unexpected output shape");
        }
    }
    let zero = scalar_bytes(x.dtype, 0.0)?;
    let st = strides(&dims(&x.shape));
    let od = dims(&out_shape);
    let b = x.dtype.bytes();
    let mut data = Vec::with_capacity(numel(&od) * b);
    for_each_index(&od, |_, idx| {
        // Primal coordinates.
        let mut coord: Vec<(char, i64)> = primal.iter().map(|&(n, _)| (n, 0)).collect();
        for (k, &(name, factor)) in dst.iter().enumerate() {
            let c = coord
                .iter_mut()
                .find(|(n, _)| *n == name)
                .expect("primal axis");
            if factor > 0 {
                c.1 += idx[k] as i64;
            } else {
                c.1 += idx[k] as i64 * sub_factor(&dst, name);
            }
        }
        let mut flat = 0usize;
        let mut inside = true;
        for &(name, v) in &coord {
            if v >= size_of(name).unwrap_or(0) {
                inside = false;
            }
        }
        if inside {
            for (k, &(name, factor)) in src.iter().enumerate() {
                let v = coord
                    .iter()
                    .find(|(n, _)| *n == name)
                    .expect("primal axis")
                    .1;
                let i = if factor > 0 {
                    v % factor
                } else {
                    v / sub_factor(&src, name)
                };
                flat += i as usize * st[k];
            }
            data.extend_from_slice(&x.data[flat * b..flat * b + b]);
        } else {
            data.extend_from_slice(&zero);
        }
    });
    tensor_value(
        TensorData::new(x.dtype, out_shape, data).map_err(|e| EvalError::Unsupported(e.message)),
    )
}

/// `arange(start, stop, step, dtype)`: `cast(dtype, start + step * i)`
/// computed in the arguments' type, for `ceil((stop - start) / step)`
/// elements (the type relation's count, in double precision).
fn arange(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let start = arg_tensor(args, 0, call)?;
    let stop = arg_tensor(args, 1, call)?;
    let step = arg_tensor(args, 2, call)?;
    if start.num_elements() != 1 || stop.num_elements() != 1 || step.num_elements() != 1 {
        return unsupported("arange: arguments are not scalars");
    }
    if start.dtype != step.dtype {
        return unsupported("arange: start and step of different types");
    }
    let Some(dtype) = call.dtype("dtype")? else {
        return unsupported("arange: no dtype");
    };
    let scalar = |t: &TensorData| t.get_f64(0).map_err(|e| EvalError::Unsupported(e.message));
    let count = ((scalar(stop)? - scalar(start)?) / scalar(step)?).ceil();
    if !(count > 0.0 && count < f64::from(i32::MAX)) {
        return unsupported("arange: invalid range");
    }
    let n = call.check_size(&[count as i64])?;
    let dt = start.dtype;
    let values = match (decode(start)?, decode(step)?) {
        (Col::F32(a), Col::F32(s)) => Col::F32(
            (0..n)
                .map(|i| {
                    let r = |x: f32| super::tensor::round_f32(dt, x);
                    r(a[0] + r(s[0] * r(i as f32)))
                })
                .collect(),
        ),
        (Col::F64(a), Col::F64(s)) => Col::F64((0..n).map(|i| a[0] + s[0] * i as f64).collect()),
        (Col::Int(a), Col::Int(s)) => Col::Int(
            (0..n)
                .map(|i| super::tensor::wrap(dt, a[0] + s[0] * i as i128))
                .collect(),
        ),
        _ => return unsupported("arange: mixed types"),
    };
    let values = encode(&values, dt, vec![n as i64])?;
    tensor_value(super::cast::cast_tensor(&values, dtype))
}
