//! CSR and BSR sparse operators (TOPI's `nn/sparse.py`): `nn.sparse_dense`
//! with the sparse operand on either side, `nn.sparse_transpose` of a
//! square CSR matrix, and `nn.sparse_add` of a CSR matrix to a dense one.
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
}
