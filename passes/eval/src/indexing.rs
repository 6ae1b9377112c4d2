//! Kernels of the indexing, scan and mask operators (TOPI's `transform.h`,
//! `scatter.py`, `scan.py`, `sequence_mask`, `trilu`): `gather`,
//! `gather_nd`, `scatter_elements`, `scatter_nd`, `reverse_sequence`,
//! `unravel_index`, `meshgrid`, `trilu`, `sequence_mask`, `cumsum`,
//! `cumprod`, `contrib_reverse_reshape` and `argwhere`.
//!
//! Index tensors are read as TOPI reads them: `gather` and `gather_nd` do
//! not wrap or clip, so an index out of range (TOPI reads out of bounds) is
//! not folded; `scatter_elements` adds the axis length to a negative index,
//! as TOPI does. Scatters apply their updates in row-major order of the
//! indices, TOPI's sequential CPU loop, so a repeated index keeps the last
//! update (`update`) or accumulates in that order (`add`, `mul`, `min`,
//! `max`).
//!
//! Scans accumulate sequentially along the axis in the output dtype (the
//! data is cast first), rounding `float16` after each step, as TOPI's
//! `scanop` IR does; results are bit-exact for integers and for floats
//! (same order, same precision, no reassociation).

use super::cast::cast_tensor;
use super::tensor::{
    class, decode, dims, encode, for_each_index, gather, norm_axis, numel, round_f32, strides,
    wrap, Col,
};
use super::tensor_transform::infer_new_shape;
use super::{
    arg_tensor, arg_tensors, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel,
    Value,
};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "gather" => gather_kernel,
        "gather_nd" => gather_nd,
        "scatter_elements" => scatter_elements,
        "scatter_nd" => scatter_nd,
        "reverse_sequence" => reverse_sequence,
        "unravel_index" => unravel_index,
        "meshgrid" => meshgrid,
        "trilu" => trilu,
        "sequence_mask" => sequence_mask,
        "cumsum" => cumsum,
        "cumprod" => cumprod,
        "contrib_reverse_reshape" => reverse_reshape,
        "argwhere" => argwhere,
        _ => return None,
    })
}

/// The integer elements of an index tensor.
fn int_elements(t: &TensorData, what: &str, call: &CallInfo) -> EvalResult<Vec<i128>> {
    if !(t.dtype.is_int() || t.dtype.is_uint()) {
        return unsupported(format!("{}: {what} are not integers", call.op));
    }
    match decode(t)? {
        Col::Int(v) => Ok(v),
        _ => unsupported(format!("{}: {what} are not integers", call.op)),
    }
}

/// An index checked against an axis of length `len` (no wrapping).
fn in_range(index: i128, len: usize, call: &CallInfo) -> EvalResult<usize> {
    if index < 0 || index >= len as i128 {
        return unsupported(format!("{}: index {index} out of range", call.op));
    }
    Ok(index as usize)
}

fn gather_kernel(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let indices = arg_tensor(args, 1, call)?;
    let idx = int_elements(indices, "indices", call)?;
    let axis = norm_axis(call.req_int("axis")?, data.ndim(), call.op)?;
    if indices.ndim() != data.ndim() {
        return unsupported("gather: ranks differ");
    }
    call.check_size(&indices.shape)?;
    let data_dims = dims(&data.shape);
    let st = strides(&data_dims);
    let mut src = Vec::with_capacity(idx.len());
    let mut error = None;
    for_each_index(&dims(&indices.shape), |flat, pos| {
        let mut offset = 0;
        for (k, &p) in pos.iter().enumerate() {
            let coord = if k == axis {
                match in_range(idx[flat], data_dims[k], call) {
                    Ok(c) => c,
                    Err(e) => {
                        error.get_or_insert(e);
                        0
                    }
                }
            } else {
                p
            };
            offset += coord * st[k];
        }
        src.push(offset);
    });
    if let Some(e) = error {
        return Err(e);
    }
    gather(data, indices.shape.clone(), &src).map(Value::tensor)
}

fn gather_nd(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let indices = arg_tensor(args, 1, call)?;
    let idx = int_elements(indices, "indices", call)?;
    let Some((&m, y_shape)) = indices.shape.split_first() else {
        return unsupported("gather_nd: scalar indices");
    };
    let batch = call.int_or("batch_dims", 0);
    let (m, batch) = (m as usize, batch.max(0) as usize);
    if batch + m > data.ndim() || batch > y_shape.len() {
        return unsupported("gather_nd: indices do not fit the data");
    }
    // out: (Y_0, …, Y_{K-1}, X_{M+B}, …); the first B of Y are batch axes.
    let x_shape = &data.shape[batch + m..];
    let mut out_shape = y_shape.to_vec();
    out_shape.extend_from_slice(x_shape);
    call.check_size(&out_shape)?;
    let data_dims = dims(&data.shape);
    let st = strides(&data_dims);
    let y_count = numel(&dims(y_shape));
    let x_count = numel(&dims(x_shape));
    let y_strides = strides(&dims(y_shape));
    let mut src = Vec::with_capacity(y_count * x_count);
    for y in 0..y_count {
        let mut base = 0;
        for (b, stride) in st.iter().enumerate().take(batch) {
            base += (y / y_strides[b]) % y_shape[b] as usize * stride;
        }
        for j in 0..m {
            let coord = in_range(idx[j * y_count + y], data_dims[batch + j], call)?;
            base += coord * st[batch + j];
        }
        src.extend((0..x_count).map(|x| base + x));
    }
    gather(data, out_shape, &src).map(Value::tensor)
}

/// How a scatter combines an update with the element it replaces.
fn combine(reduction: &str, call: &CallInfo) -> EvalResult<fn(&mut Col, usize, &Col, usize)> {
    fn update(out: &mut Col, i: usize, upd: &Col, j: usize) {
        match (out, upd) {
            (Col::F32(o), Col::F32(u)) => o[i] = u[j],
            (Col::F64(o), Col::F64(u)) => o[i] = u[j],
            (Col::Int(o), Col::Int(u)) => o[i] = u[j],
            _ => unreachable!("scatter columns share the data's class"),
        }
    }
    macro_rules! arith {
        ($name:ident, $f:expr, $i:expr) => {
            fn $name(out: &mut Col, i: usize, upd: &Col, j: usize) {
                match (out, upd) {
                    (Col::F32(o), Col::F32(u)) => o[i] = $f(o[i], u[j]),
                    (Col::F64(o), Col::F64(u)) => o[i] = $f(o[i], u[j]),
                    (Col::Int(o), Col::Int(u)) => o[i] = $i(o[i], u[j]),
                    _ => unreachable!("scatter columns share the data's class"),
                }
            }
        };
    }
    arith!(add, |a, b| a + b, |a: i128, b: i128| a + b);
    arith!(mul, |a, b| a * b, |a: i128, b: i128| a * b);
    // TVM's `min`/`max` are `select(a < b, a, b)` / `select(a > b, a, b)`.
    arith!(min, |a, b| if a < b { a } else { b }, |a: i128, b: i128| a
        .min(b));
    arith!(max, |a, b| if a > b { a } else { b }, |a: i128, b: i128| a
        .max(b));
    Ok(match reduction {
        "update" => update,
        "add" => add,
        "mul" => mul,
        "min" => min,
        "max" => max,
        other => return unsupported(format!("{}: reduction `{other}`", call.op)),
    })
}

/// Rounds or wraps every element of a column to `dtype` after a scatter
/// step (float16 rounding, integer wrapping).
fn settle(col: &mut Col, i: usize, dtype: DataType) {
    match col {
        Col::F32(v) => v[i] = round_f32(dtype, v[i]),
        Col::Int(v) => v[i] = wrap(dtype, v[i]),
        Col::F64(_) => {}
    }
}

/// The data and updates of a scatter as columns of the data's class.
fn scatter_columns(
    data: &TensorData,
    updates: &TensorData,
    call: &CallInfo,
) -> EvalResult<(Col, Col)> {
    if updates.dtype != data.dtype {
        return unsupported(format!("{}: updates of another dtype", call.op));
    }
    class(data.dtype)?;
    Ok((decode(data)?, decode(updates)?))
}

fn scatter_elements(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let data = arg_tensor(args, 0, call)?;
    let indices = arg_tensor(args, 1, call)?;
    let updates = arg_tensor(args, 2, call)?;
    let idx = int_elements(indices, "indices", call)?;
    if indices.shape != updates.shape || indices.ndim() != data.ndim() {
        return unsupported("scatter_elements: indices, updates and data do not match");
    }
    let axis = norm_axis(call.int_or("axis", 0), data.ndim(), call.op)?;
    let op = combine(call.str("reduction").unwrap_or("update"), call)?;
    let (mut out, upd) = scatter_columns(data, updates, call)?;
    let data_dims = dims(&data.shape);
    let st = strides(&data_dims);
    let mut error = None;
    for_each_index(&dims(&indices.shape), |flat, pos| {
        if error.is_some() {
            return;
        }
        let len = data_dims[axis] as i128;
        let raw = idx[flat];
        let coord = if raw < 0 { raw + len } else { raw };
        let mut offset = 0;
        for (k, &p) in pos.iter().enumerate() {
            let c = if k == axis { coord } else { p as i128 };
            if c < 0 || c >= data_dims[k] as i128 {
                error = Some(EvalError::Unsupported(format!(
                    "scatter_elements: index {raw} out of range"
                )));
                return;
            }
            offset += c as usize * st[k];
        }
        op(&mut out, offset, &upd, flat);
        settle(&mut out, offset, data.dtype);
    });
    if let Some(e) = error {
        return Err(e);
    }
    encode(&out, data.dtype, data.shape.clone()).map(Value::tensor)
}

fn scatter_nd(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let data = arg_tensor(args, 0, call)?;
    let indices = arg_tensor(args, 1, call)?;
    let updates = arg_tensor(args, 2, call)?;
    let idx = int_elements(indices, "indices", call)?;
    let Some((&m, y_shape)) = indices.shape.split_first() else {
        return unsupported("scatter_nd: scalar indices");
    };
    let m = m as usize;
    let mut expected = y_shape.to_vec();
    if m > data.ndim() {
        return unsupported("scatter_nd: too many index components");
    }
    expected.extend_from_slice(&data.shape[m..]);
    if updates.shape != expected {
        return unsupported("scatter_nd: updates of another shape");
    }
    let op = combine(call.str("mode").unwrap_or("update"), call)?;
    let (mut out, upd) = scatter_columns(data, updates, call)?;
    let data_dims = dims(&data.shape);
    let st = strides(&data_dims);
    let y_count = numel(&dims(y_shape));
    let x_count = numel(&data_dims[m..]);
    for y in 0..y_count {
        let mut base = 0;
        for j in 0..m {
            base += in_range(idx[j * y_count + y], data_dims[j], call)? * st[j];
        }
        for x in 0..x_count {
            op(&mut out, base + x, &upd, y * x_count + x);
            settle(&mut out, base + x, data.dtype);
        }
    }
    encode(&out, data.dtype, data.shape.clone()).map(Value::tensor)
}

fn reverse_sequence(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let lengths = int_elements(arg_tensor(args, 1, call)?, "seq_lengths", call)?;
    let seq_axis = norm_axis(call.int_or("seq_axis", 1), data.ndim(), call.op)?;
    let batch_axis = norm_axis(call.int_or("batch_axis", 0), data.ndim(), call.op)?;
    let d = dims(&data.shape);
    if lengths.len() != d[batch_axis] {
        return unsupported("reverse_sequence: one length per batch expected");
    }
    let st = strides(&d);
    let seq_len = d[seq_axis] as i128;
    let mut src = Vec::with_capacity(numel(&d));
    for_each_index(&d, |_, pos| {
        let len = lengths[pos[batch_axis]];
        let i = pos[seq_axis] as i128;
        // TOPI: unchanged past the length (or for lengths <= 1), reversed
        // over the whole axis when the length exceeds it.
        let from = if len <= 1 || len <= i {
            i
        } else if len > seq_len {
            seq_len - 1 - i
        } else {
            len - 1 - i
        };
        src.push(
            pos.iter()
                .enumerate()
                .map(|(k, &p)| if k == seq_axis { from as usize } else { p } * st[k])
                .sum(),
        );
    });
    gather(data, data.shape.clone(), &src).map(Value::tensor)
}

fn unravel_index(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let indices = arg_tensor(args, 0, call)?;
    let shape_t = arg_tensor(args, 1, call)?;
    let idx = int_elements(indices, "indices", call)?;
    let shape = int_elements(shape_t, "shape", call)?;
    if indices.ndim() > 1 || shape_t.ndim() != 1 {
        return unsupported("unravel_index: indices of rank > 1");
    }
    if shape.contains(&0) {
        return unsupported("unravel_index: a zero dimension");
    }
    let mut out_shape = vec![shape.len() as i64];
    out_shape.extend_from_slice(&indices.shape);
    call.check_size(&out_shape)?;
    let n = idx.len();
    let mut out = vec![0i128; shape.len() * n];
    for (j, &index) in idx.iter().enumerate() {
        let mut rest = index;
        for (i, &dim) in shape.iter().enumerate().rev() {
            // `indexmod` / `indexdiv`: floor semantics.
            let quotient = floor_div(rest, dim);
            out[i * n + j] = rest - dim * quotient;
            rest = quotient;
        }
    }
    encode(&Col::Int(out), indices.dtype, out_shape).map(Value::tensor)
}

/// `floordiv` on integers (rounds towards negative infinity).
fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn meshgrid(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let inputs = arg_tensors(args, 0, call)?;
    let Some(first) = inputs.first() else {
        return unsupported("meshgrid: no inputs");
    };
    if inputs
        .iter()
        .any(|t| t.ndim() > 1 || t.dtype != first.dtype)
    {
        return unsupported("meshgrid: inputs must be scalars or vectors of one dtype");
    }
    let xy = call.str("indexing") == Some("xy") && inputs.len() >= 2;
    let mut shape: Vec<i64> = inputs
        .iter()
        .map(|t| t.shape.first().copied().unwrap_or(1))
        .collect();
    if xy {
        shape.swap(0, 1);
    }
    call.check_size(&shape)?;
    let grid_dims = dims(&shape);
    let mut grids = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.iter().enumerate() {
        // Input `i` runs along grid axis `i` (axes 0 and 1 swapped in "xy").
        let axis = match (xy, i) {
            (true, 0) => 1,
            (true, 1) => 0,
            _ => i,
        };
        let mut src = Vec::with_capacity(numel(&grid_dims));
        for_each_index(&grid_dims, |_, pos| src.push(pos[axis]));
        grids.push(Value::tensor(gather(input, shape.clone(), &src)?));
    }
    Ok(Value::Tuple(grids))
}

fn trilu(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let k = match int_elements(arg_tensor(args, 1, call)?, "k", call)?.as_slice() {
        [k] => *k,
        _ => return unsupported("trilu: k is not a scalar"),
    };
    if data.ndim() < 2 {
        return unsupported("trilu: data of rank < 2");
    }
    let upper = call.bool_or("upper", true);
    let d = dims(&data.shape);
    let (rows, cols) = (data.ndim() - 2, data.ndim() - 1);
    let zero_bytes = vec![0u8; data.dtype.bytes()];
    let b = data.dtype.bytes();
    let mut bytes = data.data.to_vec();
    for_each_index(&d, |flat, pos| {
        let (row, col) = (pos[rows] as i128, pos[cols] as i128);
        let keep = if upper {
            col >= row + k
        } else {
            col <= row + k
        };
        if !keep {
            bytes[flat * b..flat * b + b].copy_from_slice(&zero_bytes);
        }
    });
    TensorData::new(data.dtype, data.shape.clone(), bytes)
        .map(Value::tensor)
        .map_err(|e| EvalError::Unsupported(e.message))
}

fn sequence_mask(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let lengths = int_elements(arg_tensor(args, 1, call)?, "valid_length", call)?;
    let axis = call.int_or("axis", 0);
    if !(axis == 0 || axis == 1) || data.ndim() < 2 {
        return unsupported("sequence_mask: axis must be 0 or 1 of a tensor of rank >= 2");
    }
    let (len_axis, batch_axis) = if axis == 0 { (0, 1) } else { (1, 0) };
    let d = dims(&data.shape);
    if lengths.len() != d[batch_axis] {
        return unsupported("sequence_mask: one length per batch expected");
    }
    let mask = call.f64("mask_value")?;
    let mut col = decode(data)?;
    // `make_const(dtype, mask_value)`: the double converted to the dtype.
    let mut masked = Vec::new();
    for_each_index(&d, |flat, pos| {
        if pos[len_axis] as i128 >= lengths[pos[batch_axis]] {
            masked.push(flat);
        }
    });
    match &mut col {
        Col::F32(v) => masked
            .iter()
            .for_each(|&i| v[i] = round_f32(data.dtype, mask as f32)),
        Col::F64(v) => masked.iter().for_each(|&i| v[i] = mask),
        Col::Int(v) => {
            if !mask.is_finite() {
                return unsupported("sequence_mask: a non-finite mask for integers");
            }
            masked
                .iter()
                .for_each(|&i| v[i] = wrap(data.dtype, mask.trunc() as i128));
        }
    }
    encode(&col, data.dtype, data.shape.clone()).map(Value::tensor)
}

/// TOPI's `scanop`: `out[0] = x[0]` (or the identity when exclusive),
/// `out[k] = out[k-1] ⊕ x[k]` (`x[k-1]` when exclusive), in the output
/// dtype.
fn scan(args: &[Value], call: &CallInfo, product: bool) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let dtype = call.dtype("dtype")?.unwrap_or(data.dtype);
    let exclusive = call.bool_or("exclusive", false);
    let (shape, axis) = match call.int("axis") {
        Some(axis) => (data.shape.clone(), norm_axis(axis, data.ndim(), call.op)?),
        None => (vec![data.num_elements()], 0),
    };
    let x = decode(&cast_tensor(data, dtype)?)?;
    let d = dims(&shape);
    let len = d[axis];
    let inner: usize = d[axis + 1..].iter().product();
    let outer: usize = d[..axis].iter().product();
    fn run<T: Copy>(
        x: &[T],
        outer: usize,
        len: usize,
        inner: usize,
        exclusive: bool,
        identity: T,
        op: impl Fn(T, T) -> T,
    ) -> Vec<T> {
        let mut out = x.to_vec();
        for o in 0..outer {
            for i in 0..inner {
                let base = o * len * inner + i;
                if len == 0 {
                    continue;
                }
                out[base] = if exclusive { identity } else { x[base] };
                for k in 1..len {
                    let (cur, prev) = (base + k * inner, base + (k - 1) * inner);
                    let operand = if exclusive { x[prev] } else { x[cur] };
                    out[cur] = op(out[prev], operand);
                }
            }
        }
        out
    }
    let col = match x {
        Col::F32(v) => Col::F32(run(
            &v,
            outer,
            len,
            inner,
            exclusive,
            f32::from(u8::from(product)),
            |a, b| round_f32(dtype, if product { a * b } else { a + b }),
        )),
        Col::F64(v) => Col::F64(run(
            &v,
            outer,
            len,
            inner,
            exclusive,
            f64::from(u8::from(product)),
            |a, b| {
                if product {
                    a * b
                } else {
                    a + b
                }
            },
        )),
        Col::Int(v) => Col::Int(run(
            &v,
            outer,
            len,
            inner,
            exclusive,
            i128::from(product),
            |a, b| wrap(dtype, if product { a.wrapping_mul(b) } else { a + b }),
        )),
    };
    encode(&col, dtype, shape).map(Value::tensor)
}

fn cumsum(args: &[Value], call: &CallInfo) -> EvalResult {
    scan(args, call, false)
}

fn cumprod(args: &[Value], call: &CallInfo) -> EvalResult {
    scan(args, call, true)
}

fn reverse_reshape(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let mut newshape = call.ints("newshape")?.unwrap_or_default();
    newshape.reverse();
    let mut ishape = x.shape.clone();
    ishape.reverse();
    let mut shape = infer_new_shape(&ishape, &newshape, call.bool_or("allowzero", false))?;
    shape.reverse();
    if numel(&dims(&shape)) as i64 != x.num_elements() || shape.iter().any(|&d| d < 0) {
        return unsupported(format!(
            "contrib_reverse_reshape: cannot reshape {:?} to {shape:?}",
            x.shape
        ));
    }
    TensorData::new(x.dtype, shape, x.data.clone())
        .map(Value::tensor)
        .map_err(|e| EvalError::Unsupported(e.message))
}

/// TOPI's `argwhere` (ranks 1 to 5): the `int32` coordinates of the
/// non-zero elements in row-major order, one row each (NaN is non-zero).
fn argwhere(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    if !(1..=5).contains(&data.ndim()) {
        return unsupported("argwhere: the data must have rank 1 to 5");
    }
    let nonzero: Vec<bool> = match decode(data)? {
        Col::F32(v) => v.iter().map(|&x| x != 0.0).collect(),
        Col::F64(v) => v.iter().map(|&x| x != 0.0).collect(),
        Col::Int(v) => v.iter().map(|&x| x != 0).collect(),
    };
    let mut coords = Vec::new();
    for_each_index(&dims(&data.shape), |flat, pos| {
        if nonzero[flat] {
            coords.extend(pos.iter().map(|&p| p as i64));
        }
    });
    let rank = data.ndim() as i64;
    let shape = vec![coords.len() as i64 / rank, rank];
    TensorData::from_i64s(DataType::INT32, shape, &coords)
        .map(Value::tensor)
        .map_err(|e| EvalError::Unsupported(e.message))
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
#[path = "indexing_tests.rs"]
mod tests;
