//! Matrix products: `nn.dense`, `nn.matmul`, `nn.batch_matmul` and
//! `nn.contrib_dense_pack` (TOPI's `nn/dense.py`, `nn/batch_matmul.py` and
//! `x86/dense.py`'s `dense_pack`). Both operands are cast to
//! `out_dtype` (when set) before they are multiplied, as TOPI does, and
//! each output element is `Σ_k a·b` accumulated from zero in increasing
//! `k`.
//!
//! Integer results are exact (wrapped at the output width like TVM's
//! code). Float results round every product and partial sum to the
//! output type; TVM's x86 schedules split and vectorise the `k` loop
//! (partial sums over lanes of 8 or 16 added at the end), so a float32
//! result may differ from TVM's in the last bits: by at most
//! `k · ε · Σ|a·b|` (ε = 2⁻²⁴), far less in practice.

use super::num::{decode_as, on_cols, Num};
use super::tensor::{dims, encode};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.dense" => dense,
        "nn.matmul" => matmul,
        "nn.batch_matmul" => batch_matmul,
        "nn.contrib_dense_pack" => dense_pack,
        _ => return None,
    })
}

/// The output type: `out_dtype`, or the data's when it is unset.
pub(crate) fn out_dtype(call: &CallInfo, data: DataType) -> EvalResult<DataType> {
    Ok(call.dtype("out_dtype")?.unwrap_or(data))
}

/// `out[b, i, j] = Σ_k a[b, i, k] · w[b, j, k]` with the element offsets
/// of each operand given by closures (so transposes and broadcast batches
/// are read in place).
#[allow(clippy::too_many_arguments)]
fn product<T: Num>(
    a: &[T],
    b: &[T],
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
    at: impl Fn(usize, usize, usize) -> usize,
    bt: impl Fn(usize, usize, usize) -> usize,
    dt: DataType,
) -> Vec<T> {
    let mut out = Vec::with_capacity(batch * m * n);
    for p in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let mut acc = T::default();
                for r in 0..k {
                    acc = (acc + (a[at(p, i, r)] * b[bt(p, j, r)]).fix(dt)).fix(dt);
                }
                out.push(acc);
            }
        }
    }
    out
}

/// `topi.nn.dense`: `data[M, K] × weight[N, K]ᵀ`. TOPI's dense is
/// two-dimensional only; other ranks are not folded (TVM cannot compile
/// them either).
fn dense(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (x, w) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    if x.ndim() != 2 || w.ndim() != 2 || x.shape[1] != w.shape[1] {
        return unsupported("nn.dense: data [M, K] and weight [N, K] expected");
    }
    let dt = out_dtype(call, x.dtype)?;
    let (m, k, n) = (
        x.shape[0] as usize,
        x.shape[1] as usize,
        w.shape[0] as usize,
    );
    call.check_size(&[m as i64, n as i64])?;
    let out = on_cols!(
        decode_as(x, dt)?,
        decode_as(w, dt)?,
        (a, b) => product(&a, &b, 1, m, n, k, |_, i, r| i * k + r, |_, j, r| j * k + r, dt),
        unsupported("nn.dense: operands of different classes")
    );
    Ok(Value::tensor(encode(&out, dt, vec![m as i64, n as i64])?))
}

/// `topi.nn.matmul`: `data[M, K] × weight[K, N]`, either operand
/// transposed by `transpose_a` / `transpose_b`.
fn matmul(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (x, w) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    if x.ndim() != 2 || w.ndim() != 2 {
        return unsupported("nn.matmul: two matrices expected");
    }
    let (ta, tb) = (
        call.bool_or("transpose_a", false),
        call.bool_or("transpose_b", false),
    );
    let (xd, wd) = (dims(&x.shape), dims(&w.shape));
    let (m, k) = if ta { (xd[1], xd[0]) } else { (xd[0], xd[1]) };
    let (n, k2) = if tb { (wd[0], wd[1]) } else { (wd[1], wd[0]) };
    if k != k2 {
        return unsupported("nn.matmul: the reduced extents differ");
    }
    let dt = out_dtype(call, x.dtype)?;
    call.check_size(&[m as i64, n as i64])?;
    let at = move |_, i, r| if ta { r * m + i } else { i * k + r };
    let bt = move |_, j, r| if tb { j * k + r } else { r * n + j };
    let out = on_cols!(
        decode_as(x, dt)?,
        decode_as(w, dt)?,
        (a, b) => product(&a, &b, 1, m, n, k, at, bt, dt),
        unsupported("nn.matmul: operands of different classes")
    );
    Ok(Value::tensor(encode(&out, dt, vec![m as i64, n as i64])?))
}

/// `topi.nn.batch_matmul`: per batch `x[M, K] × y[N, K]ᵀ` (the operands
/// read transposed per `transpose_a` / `transpose_b`); a batch extent of 1
/// broadcasts.
fn batch_matmul(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (x, y) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    if x.ndim() != 3 || y.ndim() != 3 {
        return unsupported("nn.batch_matmul: two 3-D tensors expected");
    }
    let (ta, tb) = (
        call.bool_or("transpose_a", false),
        call.bool_or("transpose_b", true),
    );
    let (xd, yd) = (dims(&x.shape), dims(&y.shape));
    let (m, k) = if ta { (xd[2], xd[1]) } else { (xd[1], xd[2]) };
    let (n, k2) = if tb { (yd[1], yd[2]) } else { (yd[2], yd[1]) };
    let (bx, by) = (xd[0], yd[0]);
    if k != k2 || (bx != by && bx != 1 && by != 1) {
        return unsupported("nn.batch_matmul: the shapes do not match");
    }
    let batch = bx.max(by);
    let dt = out_dtype(call, x.dtype)?;
    let shape = vec![batch as i64, m as i64, n as i64];
    call.check_size(&shape)?;
    let (xs, ys) = (xd[1] * xd[2], yd[1] * yd[2]);
    let at = move |p: usize, i, r| {
        let base = if bx == 1 { 0 } else { p * xs };
        base + if ta { r * m + i } else { i * k + r }
    };
    let bt = move |p: usize, j, r| {
        let base = if by == 1 { 0 } else { p * ys };
        base + if tb { j * k + r } else { r * n + j }
    };
    let out = on_cols!(
        decode_as(x, dt)?,
        decode_as(y, dt)?,
        (a, b) => product(&a, &b, batch, m, n, k, at, bt, dt),
        unsupported("nn.batch_matmul: operands of different classes")
    );
    Ok(Value::tensor(encode(&out, dt, shape)?))
}

/// `topi.x86.dense_pack`: `data[M, K]` times a weight packed as
/// `[N / n, K, n]` (`weight_layout` `NC{n}n`): output column `x` reads
/// `weight[x / n, k, x % n]`.
fn dense_pack(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (x, w) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    if x.ndim() != 2 || w.ndim() != 3 || x.shape[1] != w.shape[1] {
        return unsupported("nn.contrib_dense_pack: data [M, K] and weight [N/n, K, n] expected");
    }
    let dt = out_dtype(call, x.dtype)?;
    let (m, k) = (x.shape[0] as usize, x.shape[1] as usize);
    let block = w.shape[2] as usize;
    let n = w.shape[0] as usize * block;
    call.check_size(&[m as i64, n as i64])?;
    let bt = move |_, j: usize, r| ((j / block) * k + r) * block + j % block;
    let out = on_cols!(
        decode_as(x, dt)?,
        decode_as(w, dt)?,
        (a, b) => product(&a, &b, 1, m, n, k, |_, i, r| i * k + r, bt, dt),
        unsupported("nn.contrib_dense_pack: operands of different classes")
    );
    Ok(Value::tensor(encode(&out, dt, vec![m as i64, n as i64])?))
}
