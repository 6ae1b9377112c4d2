//! `one_hot` (TOPI's `one_hot`): `on_value` where the index equals the
//! position along the new axis (compared in the indices' type, so negative
//! or too large indices match nothing), `off_value` elsewhere; both values
//! cast to `dtype`. Values are copied, never computed: exact.

use super::cast::cast_tensor;
use super::tensor::{decode, dims, numel, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "one_hot" => one_hot,
        _ => return None,
    })
}

fn one_hot(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let indices = arg_tensor(args, 0, call)?;
    let (on, off) = (arg_tensor(args, 1, call)?, arg_tensor(args, 2, call)?);
    let depth = call.req_int("depth")?;
    if depth < 0 || on.num_elements() != 1 || off.num_elements() != 1 {
        return unsupported("one_hot: a depth and scalar on/off values expected");
    }
    let dtype = call.dtype("dtype")?.unwrap_or(on.dtype);
    let rank = indices.ndim() + 1;
    let axis = match call.int_or("axis", -1) {
        -1 => rank - 1,
        a if a >= 0 && (a as usize) < rank => a as usize,
        a => return unsupported(format!("one_hot: axis {a}")),
    };
    let Col::Int(idx) = decode(indices)? else {
        return unsupported("one_hot: integer indices expected");
    };
    let mut shape = indices.shape.clone();
    shape.insert(axis, depth);
    call.check_size(&shape)?;
    let (on, off) = (cast_tensor(on, dtype)?, cast_tensor(off, dtype)?);
    let d = dims(&shape);
    let st = strides(&d);
    let inner: usize = d[axis + 1..].iter().product();
    let mut data = Vec::with_capacity(numel(&d) * on.data.len());
    for flat in 0..numel(&d) {
        let position = (flat / st[axis]) % d[axis];
        let outer = flat / (st[axis] * d[axis]);
        let index = idx[outer * inner + flat % inner];
        let hit = index == position as i128;
        data.extend_from_slice(if hit { &on.data } else { &off.data });
    }
    TensorData::new(dtype, shape, data)
        .map(Value::tensor)
        .map_err(|e| EvalError::Unsupported(e.message))
}
