//! Matrix products: `nn.dense`, `nn.matmul`, `nn.batch_matmul` and
//! `nn.contrib_dense_pack` (TOPI's `nn/dense.py`, `nn/batch_matmul.py` and
//! `x86/dense.py`'s `dense_pack`). Both operands are cast to
//! `out_dtype` (when set) before they are multiplied, as TOPI does, and
//! each output element is `Σ_k a·b` accumulated from zero in increasing
//! `k` — by the blocked product of `gemm.rs`, which reads the
//! operands in place through strides and computes many outputs at once
//! without changing any output's order of accumulation.
//!
//! Integer results are exact (wrapped at the output width like TVM's
//! code). Float results round every product and partial sum to the
//! output type; TVM's x86 schedules split and vectorise the `k` loop
//! (partial sums over lanes of 8 or 16 added at the end), so a float32
//! result may differ from TVM's in the last bits: by at most
//! `k · ε · Σ|a·b|` (ε = 2⁻²⁴), far less in practice.

use super::gemm::{gemm, Strided};
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

/// How one operand of a (batched) product is laid out: the offset of
/// batch `p`, and the strides of its row and reduction indices.
#[derive(Clone, Copy)]
struct Layout {
    batch_stride: usize,
    row_stride: usize,
    col_stride: usize,
}

impl Layout {
    /// Batch `p` of `data` as a matrix.
    fn view<T>(self, data: &[T], p: usize) -> Strided<'_, T> {
        Strided {
            data,
            offset: p * self.batch_stride,
            row_stride: self.row_stride,
            col_stride: self.col_stride,
        }
    }
}

/// `out[p, i, j] = Σ_k a[p, i, k] · b[p, k, j]`, both operands read in
/// place through their layouts (so transposes and broadcast batches need
/// no copy); the blocked product keeps each element's order of
/// accumulation.
#[allow(clippy::too_many_arguments)]
fn product<T: Num>(
    a: &[T],
    b: &[T],
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
    a_layout: Layout,
    b_layout: Layout,
    dt: DataType,
) -> Vec<T> {
    let mut out = Vec::with_capacity(batch * m * n);
    for p in 0..batch {
        let (a, b) = (a_layout.view(a, p), b_layout.view(b, p));
        out.extend(gemm(m, n, k, &a, &b, dt));
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
        (a, b) => product(
            &a,
            &b,
            1,
            m,
            n,
            k,
            Layout { batch_stride: 0, row_stride: k, col_stride: 1 },
            Layout { batch_stride: 0, row_stride: 1, col_stride: k },
            dt
        ),
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
    let at = if ta {
        Layout {
            batch_stride: 0,
            row_stride: 1,
            col_stride: m,
        }
    } else {
        Layout {
            batch_stride: 0,
            row_stride: k,
            col_stride: 1,
        }
    };
    let bt = if tb {
        Layout {
            batch_stride: 0,
            row_stride: 1,
            col_stride: k,
        }
    } else {
        Layout {
            batch_stride: 0,
            row_stride: n,
            col_stride: 1,
        }
    };
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
    let batch_stride = |extent: usize, size: usize| if extent == 1 { 0 } else { size };
    let at = if ta {
        Layout {
            batch_stride: batch_stride(bx, xs),
            row_stride: 1,
            col_stride: m,
        }
    } else {
        Layout {
            batch_stride: batch_stride(bx, xs),
            row_stride: k,
            col_stride: 1,
        }
    };
    let bt = if tb {
        Layout {
            batch_stride: batch_stride(by, ys),
            row_stride: 1,
            col_stride: k,
        }
    } else {
        Layout {
            batch_stride: batch_stride(by, ys),
            row_stride: n,
            col_stride: 1,
        }
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
    // Unpacked to `[N, K]` (a copy of the weight, small next to the
    // product), then multiplied as `nn.dense` does, in the same order.
    let packed = move |j: usize, r: usize| ((j / block) * k + r) * block + j % block;
    let out = on_cols!(
        decode_as(x, dt)?,
        decode_as(w, dt)?,
        (a, b) => {
            let unpacked: Vec<_> = (0..n)
                .flat_map(|j| (0..k).map(move |r| packed(j, r)))
                .map(|i| b[i])
                .collect();
            product(
                &a,
                &unpacked,
                1,
                m,
                n,
                k,
                Layout { batch_stride: 0, row_stride: k, col_stride: 1 },
                Layout { batch_stride: 0, row_stride: 1, col_stride: k },
                dt,
            )
        },
        unsupported("nn.contrib_dense_pack: operands of different classes")
    );
    Ok(Value::tensor(encode(&out, dt, vec![m as i64, n as i64])?))
}
