//! CSR and BSR sparse operators (TOPI's `nn/sparse.py`): `nn.sparse_dense`
//! with the sparse operand on either side, `nn.sparse_transpose` of a
//! square CSR matrix, `nn.sparse_add` of a CSR matrix to a dense one, and
//! `nn.sparse_conv2d` (a BSR weight, NHWC or NCHW data).
//!
//! `nn.sparse_conv2d` follows the compute the x86 strategy picks by
//! `kernel_size[0]`: for 1 TOPI's generic `sparse_conv2d` (per output
//! element one sum over the row's blocks, each block's columns inside);
//! for 3 `topi.x86.spconv2d_3x3_nhwc`/`_nchw`, which read a zero-padded
//! im2col matrix whose columns are `(kh, kw, c)` (NHWC, `c` fastest) or
//! `(c, kh, kw)` (NCHW, one-column blocks only), and for NHWC sum each
//! block column over the row's blocks before summing the columns. The sums
//! run in those orders with a rounding per step; TVM's schedules may
//! vectorise the 3×3 NHWC column sum, so float results can differ from
//! TVM's in the last bits there. Any other kernel size has no x86
//! implementation and is not folded.
//!
//! `nn.sparse_add` (`_csr_add_ir`) copies the dense matrix and then adds
//! each stored element to its position in storage order, one rounding per
//! addition: a position stored twice sums in that order, as TVM's
//! sequential inner loop does, so the result is bit-exact.
//!
//! `nn.sparse_dense` sums each output element over the stored elements of
//! its sparse row in storage order (for BSR, each block's columns within
//! it), rounding after every step as TOPI's compute writes it; integers are
//! exact. TVM's x86 schedule keeps that reduction order for CSR; its BSR
//! schedule may vectorise over the block's columns, so float BSR sums may
//! differ from TVM's in the last bits. A stored column index outside the
//! dense operand is not folded (TVM reads outside the buffer).

use super::num::{on_cols, Num};
use super::tensor::{decode, encode, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.sparse_dense" => sparse_dense,
        "nn.sparse_transpose" => sparse_transpose,
        "nn.sparse_add" => sparse_add,
        "nn.sparse_conv2d" => sparse_conv2d,
        _ => return None,
    })
}

fn indices(t: &TensorData, what: &str) -> EvalResult<Vec<i64>> {
    if t.ndim() != 1 {
        return unsupported(format!("{what} must be a vector"));
    }
    match decode(t)? {
        Col::Int(v) => Ok(v.into_iter().map(|x| x as i64).collect()),
        _ => unsupported(format!("{what} must be integers")),
    }
}

/// The sparse operand: values, per stored element (or block) its column,
/// and each row's (or block row's) range of stored elements.
struct Sparse {
    block_rows: usize,
    block_cols: usize,
    columns: Vec<usize>,
    rows: Vec<(usize, usize)>,
}

impl Sparse {
    fn of(values: &TensorData, idx: &TensorData, ptr: &TensorData) -> EvalResult<Sparse> {
        let (block_rows, block_cols) = match values.shape.as_slice() {
            [_] => (1, 1),
            [_, r, c] => (*r as usize, *c as usize),
            _ => return unsupported("nn.sparse_dense: 1-D (CSR) or 3-D (BSR) sparse data"),
        };
        let stored = values.shape[0] as usize;
        let columns: Vec<usize> = indices(idx, "the sparse indices")?
            .into_iter()
            .map(|c| c.max(-1) as usize)
            .collect();
        let ptr = indices(ptr, "the sparse indptr")?;
        if ptr.is_empty() {
            return unsupported("nn.sparse_dense: an empty indptr");
        }
        let mut rows = Vec::with_capacity(ptr.len() - 1);
        for w in ptr.windows(2) {
            let (start, end) = (w[0], w[1]);
            if start < 0 || end < start || end as usize > stored || end as usize > columns.len() {
                return unsupported("nn.sparse_dense: indptr points outside the stored elements");
            }
            rows.push((start as usize, end as usize));
        }
        Ok(Sparse {
            block_rows,
            block_cols,
            columns,
            rows,
        })
    }
}

/// `out[r][i] = Σ sparse[r][·] · dense[i][·]` for the sparse row `r` and
/// dense row `i`; `lhs` says which of them indexes the output's rows.
fn product<T: Num>(
    sparse: &Sparse,
    values: &[T],
    dense: &[T],
    dense_rows: usize,
    dense_cols: usize,
    lhs: bool,
    dt: DataType,
) -> EvalResult<Vec<T>> {
    let (br, bc) = (sparse.block_rows, sparse.block_cols);
    let sparse_rows = sparse.rows.len() * br;
    let (out_rows, out_cols) = if lhs {
        (sparse_rows, dense_rows)
    } else {
        (dense_rows, sparse_rows)
    };
    let mut out = vec![T::default(); out_rows * out_cols];
    for (block_row, &(start, end)) in sparse.rows.iter().enumerate() {
        for j in 0..br {
            let r = block_row * br + j;
            for i in 0..dense_rows {
                let mut acc = T::default();
                for e in start..end {
                    for c in 0..bc {
                        let col = sparse.columns[e] * bc + c;
                        if col >= dense_cols {
                            return unsupported(
                                "nn.sparse_dense: a stored column outside the dense operand",
                            );
                        }
                        let a = values[(e * br + j) * bc + c];
                        acc = (acc + (a * dense[i * dense_cols + col]).fix(dt)).fix(dt);
                    }
                }
                let at = if lhs {
                    r * out_cols + i
                } else {
                    i * out_cols + r
                };
                out[at] = acc;
            }
        }
    }
    Ok(out)
}

fn sparse_dense(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 4, call)?;
    let dense = arg_tensor(args, 0, call)?;
    let values = arg_tensor(args, 1, call)?;
    if dense.ndim() != 2 {
        return unsupported("nn.sparse_dense: 2-D dense data expected");
    }
    if dense.dtype != values.dtype {
        return unsupported("nn.sparse_dense: the operands' types differ");
    }
    let sparse = Sparse::of(
        values,
        arg_tensor(args, 2, call)?,
        arg_tensor(args, 3, call)?,
    )?;
    let lhs = call.bool_or("sparse_lhs", false);
    let (rows, cols) = (dense.shape[0] as usize, dense.shape[1] as usize);
    let dt = dense.dtype;
    let out_rows = (sparse.rows.len() * sparse.block_rows) as i64;
    let shape = if lhs {
        vec![out_rows, rows as i64]
    } else {
        vec![rows as i64, out_rows]
    };
    call.check_size(&shape)?;
    let col = on_cols!(decode(values)?, decode(dense)?, (v, d) => {
        product(&sparse, &v, &d, rows, cols, lhs, dt)?
    }, unsupported("nn.sparse_dense: the operands' types differ"));
    Ok(Value::tensor(encode(&col, dt, shape)?))
}

/// `out = dense; out[row][indices[e]] += data[e]` for each row's stored
/// elements `e` (TOPI supports CSR only).
fn sparse_add(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 4, call)?;
    let dense = arg_tensor(args, 0, call)?;
    let values = arg_tensor(args, 1, call)?;
    let idx = indices(arg_tensor(args, 2, call)?, "the sparse indices")?;
    let ptr = indices(arg_tensor(args, 3, call)?, "the sparse indptr")?;
    if dense.ndim() != 2 || values.ndim() != 1 {
        return unsupported("nn.sparse_add: a 2-D dense matrix and a CSR matrix expected");
    }
    if dense.dtype != values.dtype {
        return unsupported("nn.sparse_add: the operands' types differ");
    }
    let (rows, cols) = (dense.shape[0] as usize, dense.shape[1] as usize);
    let stored = (values.shape[0] as usize).min(idx.len());
    if ptr.len() < rows + 1 {
        return unsupported("nn.sparse_add: indptr is shorter than the rows + 1");
    }
    let mut cells = Vec::new();
    for row in 0..rows {
        let (start, end) = (ptr[row], ptr[row + 1]);
        if start < 0 || end > stored as i64 {
            return unsupported("nn.sparse_add: indptr points outside the stored elements");
        }
        for e in start.max(0)..end {
            let col = idx[e as usize];
            if col < 0 || col as usize >= cols {
                return unsupported("nn.sparse_add: a stored column outside the dense matrix");
            }
            cells.push((e as usize, row * cols + col as usize));
        }
    }
    let dt = dense.dtype;
    let col = on_cols!(decode(values)?, decode(dense)?, (v, d) => {
        let mut out = d.to_vec();
        for &(e, at) in &cells {
            out[at] = (v[e] + out[at]).fix(dt);
        }
        out
    }, unsupported("nn.sparse_add: the operands' types differ"));
    Ok(Value::tensor(encode(&col, dt, dense.shape.clone())?))
}

/// A BSR weight for `nn.sparse_conv2d`: `[blocks, rows, cols]` (a 2-D
/// `[blocks, rows]` weight has one column), each block row's range.
struct BsrWeight {
    block_rows: usize,
    block_cols: usize,
    columns: Vec<i64>,
    rows: Vec<(usize, usize)>,
}

impl BsrWeight {
    fn of(values: &TensorData, idx: &TensorData, ptr: &TensorData) -> EvalResult<BsrWeight> {
        let (blocks, block_rows, block_cols) = match *values.shape.as_slice() {
            [b, r] => (b as usize, r as usize, 1),
            [b, r, c] => (b as usize, r as usize, c as usize),
            _ => return unsupported("nn.sparse_conv2d: a 2-D or 3-D BSR weight expected"),
        };
        let columns = indices(idx, "the sparse indices")?;
        let ptr = indices(ptr, "the sparse indptr")?;
        if ptr.is_empty() {
            return unsupported("nn.sparse_conv2d: an empty indptr");
        }
        let mut rows = Vec::with_capacity(ptr.len() - 1);
        for w in ptr.windows(2) {
            let (start, end) = (w[0], w[1]);
            if start < 0 || end < start || end as usize > blocks || end as usize > columns.len() {
                return unsupported("nn.sparse_conv2d: indptr points outside the stored blocks");
            }
            rows.push((start as usize, end as usize));
        }
        Ok(BsrWeight {
            block_rows,
            block_cols,
            columns,
            rows,
        })
    }

    /// The column of the dense operand block element `(e, c)` reads.
    fn column(&self, e: usize, c: usize, limit: usize) -> EvalResult<usize> {
        let col = self.columns[e] * self.block_cols as i64 + c as i64;
        if col < 0 || col as usize >= limit {
            return unsupported("nn.sparse_conv2d: a stored block outside the data's channels");
        }
        Ok(col as usize)
    }
}

/// The zero of a column's element type.
fn zero_like<T: Num>(_: &[T]) -> T {
    T::default()
}

fn sparse_conv2d(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 4, call)?;
    let data = arg_tensor(args, 0, call)?;
    let values = arg_tensor(args, 1, call)?;
    if data.ndim() != 4 {
        return unsupported("nn.sparse_conv2d: 4-D data expected");
    }
    if data.dtype != values.dtype {
        return unsupported("nn.sparse_conv2d: the operands' types differ");
    }
    let weight = BsrWeight::of(
        values,
        arg_tensor(args, 2, call)?,
        arg_tensor(args, 3, call)?,
    )?;
    let nhwc = match call.str("layout").unwrap_or("NHWC") {
        "NHWC" => true,
        "NCHW" => false,
        other => return unsupported(format!("nn.sparse_conv2d: Unsupport Layout {other}")),
    };
    let kernel = call.ints("kernel_size")?.unwrap_or_else(|| vec![1, 1]);
    let three = match kernel.first() {
        Some(1) => false,
        Some(3) if values.ndim() == 3 && (nhwc || weight.block_cols == 1) => true,
        Some(3) => {
            return unsupported(
                "nn.sparse_conv2d: the 3x3 computes need a 3-D weight (NCHW: one-column blocks)",
            )
        }
        _ => return unsupported("nn.sparse_conv2d: no x86 implementation for this kernel size"),
    };
    let d = |i: usize| data.shape[i] as usize;
    let (n, c, h, w) = if nhwc {
        (d(0), d(3), d(1), d(2))
    } else {
        (d(0), d(1), d(2), d(3))
    };
    let out_c = weight.rows.len() * weight.block_rows;
    let shape: Vec<i64> = if nhwc {
        vec![n as i64, h as i64, w as i64, out_c as i64]
    } else {
        vec![n as i64, out_c as i64, h as i64, w as i64]
    };
    call.check_size(&shape)?;
    // Where data element (n, c, y, x) lives.
    let at = move |b: usize, ch: usize, y: usize, x: usize| {
        if nhwc {
            ((b * h + y) * w + x) * c + ch
        } else {
            ((b * c + ch) * h + y) * w + x
        }
    };
    let out_at = move |b: usize, o: usize, y: usize, x: usize| {
        if nhwc {
            ((b * h + y) * w + x) * out_c + o
        } else {
            ((b * out_c + o) * h + y) * w + x
        }
    };
    let (br, bc) = (weight.block_rows, weight.block_cols);
    let dt = data.dtype;
    // Columns of the dense operand: the channels (1×1) or the im2col
    // columns (3×3).
    let width = if three { 9 * c } else { c };
    for (e, _) in weight
        .columns
        .iter()
        .enumerate()
        .take(values.shape[0] as usize)
    {
        for k in 0..bc {
            weight.column(e, k, width)?;
        }
    }
    let col = on_cols!(decode(values)?, decode(data)?, (v, x) => {
        let mut out = vec![Default::default(); shape.iter().product::<i64>() as usize];
        // The dense operand's value at pixel (b, y, x0) and column `col`.
        let read = |b: usize, y: usize, x0: usize, col: usize| {
            if !three {
                return x[at(b, col, y, x0)];
            }
            let (ch, kh, kw) = if nhwc {
                (col % c, col / c / 3, col / c % 3)
            } else {
                (col / 9, col / 3 % 3, col % 3)
            };
            let (iy, ix) = (y + kh, x0 + kw);
            if iy < 1 || iy > h || ix < 1 || ix > w {
                Default::default()
            } else {
                x[at(b, ch, iy - 1, ix - 1)]
            }
        };
        for b in 0..n {
            for y in 0..h {
                for x0 in 0..w {
                    for (block_row, &(start, end)) in weight.rows.iter().enumerate() {
                        for j in 0..br {
                            let mut acc = zero_like(&v);
                            if three && nhwc {
                                // Per block column over the blocks, then the columns.
                                for k in 0..bc {
                                    let mut part = zero_like(&v);
                                    for e in start..end {
                                        let col = weight.column(e, k, width)?;
                                        let term = (read(b, y, x0, col) * v[(e * br + j) * bc + k]).fix(dt);
                                        part = (part + term).fix(dt);
                                    }
                                    acc = (acc + part).fix(dt);
                                }
                            } else {
                                for e in start..end {
                                    for k in 0..bc {
                                        let col = weight.column(e, k, width)?;
                                        let term = (v[(e * br + j) * bc + k] * read(b, y, x0, col)).fix(dt);
                                        acc = (acc + term).fix(dt);
                                    }
                                }
                            }
                            out[out_at(b, block_row * br + j, y, x0)] = acc;
                        }
                    }
                }
            }
        }
        out
    }, unsupported("nn.sparse_conv2d: the operands' types differ"));
    Ok(Value::tensor(encode(&col, dt, shape)?))
}

/// `_csr_transpose_ir`: count the stored elements per column, turn the
/// counts into starts, scatter row by row, then shift the starts back.
fn sparse_transpose(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let data = arg_tensor(args, 0, call)?;
    let idx = indices(arg_tensor(args, 1, call)?, "the sparse indices")?;
    let ptr = indices(arg_tensor(args, 2, call)?, "the sparse indptr")?;
    if data.ndim() != 1 || ptr.is_empty() {
        return unsupported("nn.sparse_transpose: a CSR matrix expected");
    }
    let n = ptr.len() - 1;
    let nnz = data.shape[0] as usize;
    if idx.len() < nnz || idx.iter().take(nnz).any(|&c| c < 0 || c as usize >= n) {
        return unsupported("nn.sparse_transpose: a column index outside the square matrix");
    }
    if ptr
        .windows(2)
        .any(|w| w[0] < 0 || w[1] < w[0] || w[1] as usize > nnz)
    {
        return unsupported("nn.sparse_transpose: indptr points outside the stored elements");
    }
    let mut out_ptr = vec![0i64; n + 1];
    for &c in &idx[..nnz] {
        out_ptr[c as usize] += 1;
    }
    let mut sum = 0;
    for p in out_ptr.iter_mut().take(n) {
        let count = *p;
        *p = sum;
        sum += count;
    }
    out_ptr[n] = nnz as i64;
    let width = data.dtype.bytes();
    let mut out_data = vec![0u8; data.data.len()];
    let mut out_idx = vec![0i128; nnz];
    for row in 0..n {
        let (start, end) = (ptr[row] as usize, ptr[row + 1] as usize);
        for (e, &col) in idx.iter().enumerate().take(end).skip(start) {
            let col = col as usize;
            let dest = out_ptr[col] as usize;
            out_idx[dest] = row as i128;
            out_data[dest * width..(dest + 1) * width]
                .copy_from_slice(&data.data[e * width..(e + 1) * width]);
            out_ptr[col] += 1;
        }
    }
    let mut last = 0;
    for p in out_ptr.iter_mut().take(n) {
        std::mem::swap(p, &mut last);
    }
    let int = |v: Vec<i128>, len: usize| -> EvalResult<Value> {
        Ok(Value::tensor(encode(
            &Col::Int(v),
            DataType::INT32,
            vec![len as i64],
        )?))
    };
    let out_data = TensorData::new(data.dtype, data.shape.clone(), out_data)
        .map_err(|e| super::EvalError::Unsupported(e.message))?;
    Ok(Value::Tuple(vec![
        Value::tensor(out_data),
        int(out_idx, nnz)?,
        int(out_ptr.into_iter().map(i128::from).collect(), n + 1)?,
    ]))
}

#[cfg(test)]
mod tests {
    use crate::test_util::{floats, ints, run, run_err};

    /// After TVM's tests/python/topi/python/test_topi_sparse.py
    /// `test_sparse_add_csr` (which sums with SciPy); values by hand, with a
    /// position stored twice (summed in storage order) and an empty row.
    #[test]
    fn sparse_add_adds_each_stored_element_in_order() {
        let out = run(
            "nn.sparse_add",
            &[],
            &[
                floats(
                    "float32",
                    &[3, 3],
                    &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
                ),
                floats("float32", &[4], &[10.0, 20.0, 0.5, 0.25]),
                ints("int32", &[4], &[0, 2, 1, 1]),
                ints("int32", &[4], &[0, 2, 2, 4]),
            ],
        );
        assert_eq!(
            out.as_tensor().unwrap().to_f64_vec().unwrap(),
            vec![11.0, 2.0, 23.0, 4.0, 5.0, 6.0, 7.0, 8.75, 9.0]
        );
        // int8 wraps as TVM's generated code does.
        let out = run(
            "nn.sparse_add",
            &[],
            &[
                ints("int8", &[1, 2], &[120, 0]),
                ints("int8", &[1], &[10]),
                ints("int32", &[1], &[0]),
                ints("int32", &[2], &[0, 1]),
            ],
        );
        assert_eq!(
            out.as_tensor().unwrap().to_i64_vec().unwrap(),
            vec![-126, 0]
        );
        let err = run_err(
            "nn.sparse_add",
            &[],
            &[
                floats("float32", &[1, 2], &[0.0, 0.0]),
                floats("float32", &[1], &[1.0]),
                ints("int32", &[1], &[2]),
                ints("int32", &[2], &[0, 1]),
            ],
        );
        assert!(
            err.to_string().contains("outside the dense matrix"),
            "{err}"
        );
    }

    /// A BSR matrix of `rows × cols` with `br × bc` blocks from a dense
    /// one (row-major), keeping the blocks that hold a non-zero.
    fn bsr(dense: &[i64], rows: usize, cols: usize, br: usize, bc: usize) -> [Vec<i64>; 3] {
        let (mut data, mut idx, mut ptr) = (Vec::new(), Vec::new(), vec![0]);
        for r in 0..rows / br {
            for q in 0..cols / bc {
                let block: Vec<i64> = (0..br)
                    .flat_map(|i| (0..bc).map(move |j| (i, j)))
                    .map(|(i, j)| dense[(r * br + i) * cols + q * bc + j])
                    .collect();
                if block.iter().any(|&x| x != 0) {
                    data.extend(block);
                    idx.push(q as i64);
                }
            }
            ptr.push(idx.len() as i64);
        }
        [data, idx, ptr]
    }

    /// After TVM's tests/python/relay/test_sparse_conv2d_convert.py, which
    /// checks the sparse convolution against the dense one: here a dense
    /// reference by explicit window sums over a weight with zero blocks,
    /// for both layouts and both kernel sizes (integers: exact).
    #[test]
    fn sparse_conv2d_matches_the_dense_convolution() {
        let (n, c, h, w, oc) = (1usize, 4usize, 3usize, 3usize, 4usize);
        let nchw: Vec<i64> = (0..n * c * h * w).map(|i| (i as i64 * 7) % 5 - 2).collect();
        let nhwc: Vec<i64> = (0..h * w * c)
            .map(|i| {
                let (y, x, ch) = (i / (w * c), i / c % w, i % c);
                nchw[(ch * h + y) * w + x]
            })
            .collect();
        for three in [false, true] {
            for layout in ["NHWC", "NCHW"] {
                // NCHW 3x3 columns are (c, kh, kw), NHWC's (kh, kw, c).
                let taps = if three { 9 } else { 1 };
                let cols = c * taps;
                let wdense: Vec<i64> = (0..oc * cols)
                    .map(|i| {
                        if (i / 2) % 3 == 1 {
                            0
                        } else {
                            (i as i64 % 7) - 3
                        }
                    })
                    .collect();
                let bc = if three && layout == "NCHW" { 1 } else { 2 };
                let [data, idx, ptr] = bsr(&wdense, oc, cols, 2, bc);
                let blocks = idx.len() as i64;
                let input = if layout == "NHWC" { &nhwc } else { &nchw };
                let shape: Vec<i64> = if layout == "NHWC" {
                    vec![1, h as i64, w as i64, c as i64]
                } else {
                    vec![1, c as i64, h as i64, w as i64]
                };
                let k = if three { 3 } else { 1 };
                let out = run(
                    "nn.sparse_conv2d",
                    &[
                        ("layout", relay_ir::AttrValue::Str(layout.into())),
                        (
                            "kernel_size",
                            relay_ir::AttrValue::Array(vec![
                                relay_ir::AttrValue::Int(k),
                                relay_ir::AttrValue::Int(k),
                            ]),
                        ),
                    ],
                    &[
                        ints("int32", &shape, input),
                        ints("int32", &[blocks, 2, bc as i64], &data),
                        ints("int32", &[blocks], &idx),
                        ints("int32", &[ptr.len() as i64], &ptr),
                    ],
                );
                let got = out.as_tensor().unwrap().to_i64_vec().unwrap();
                for o in 0..oc {
                    for y in 0..h {
                        for x in 0..w {
                            let mut want = 0;
                            for ch in 0..c {
                                for kh in 0..k as usize {
                                    for kw in 0..k as usize {
                                        let (iy, ix) = if three {
                                            (y + kh, x + kw)
                                        } else {
                                            (y + 1, x + 1)
                                        };
                                        if iy < 1 || iy > h || ix < 1 || ix > w {
                                            continue;
                                        }
                                        let col = match (three, layout) {
                                            (false, _) => ch,
                                            (true, "NHWC") => (kh * 3 + kw) * c + ch,
                                            _ => ch * 9 + kh * 3 + kw,
                                        };
                                        want += wdense[o * cols + col]
                                            * nchw[(ch * h + iy - 1) * w + ix - 1];
                                    }
                                }
                            }
                            let at = if layout == "NHWC" {
                                (y * w + x) * oc + o
                            } else {
                                (o * h + y) * w + x
                            };
                            assert_eq!(got[at], want, "{layout} {k}x{k} at {o},{y},{x}");
                        }
                    }
                }
            }
        }
    }
}
