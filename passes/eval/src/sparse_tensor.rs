//! TensorFlow-style sparse tensors (coordinate lists): `sparse_reshape`
//! (TOPI's `sparse_reshape` IR) and `sparse_fill_empty_rows` (TOPI's hybrid
//! script). Integer bookkeeping only: exact, wrapping as TVM's code does.

use super::cast::cast_tensor;
use super::tensor::{decode, encode, wrap, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "sparse_reshape" => sparse_reshape,
        "sparse_fill_empty_rows" => sparse_fill_empty_rows,
        _ => return None,
    })
}

fn ints(t: &TensorData, what: &str) -> EvalResult<Vec<i128>> {
    match decode(t)? {
        Col::Int(v) => Ok(v),
        _ => unsupported(format!("{what} must be integers")),
    }
}

fn int_tensor(values: Vec<i128>, dtype: DataType, shape: Vec<i64>) -> EvalResult<Value> {
    Ok(Value::tensor(encode(&Col::Int(values), dtype, shape)?))
}

/// Flattens each coordinate row with the old shape's row-major
/// multipliers and splits it with the new shape's (a `-1` of the new shape
/// is the element count divided by the product of the others, C division).
/// All arithmetic is in the new shape's dtype, as TOPI allocates it; when
/// the shapes are equal the coordinates are copied.
fn sparse_reshape(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let indices_t = arg_tensor(args, 0, call)?;
    let prev_t = arg_tensor(args, 1, call)?;
    let new_t = arg_tensor(args, 2, call)?;
    if indices_t.ndim() != 2 || prev_t.ndim() != 1 || new_t.ndim() != 1 {
        return unsupported("sparse_reshape: 2-D indices and 1-D shapes expected");
    }
    if prev_t.dtype != new_t.dtype {
        // TOPI writes the new shape into a buffer of the old shape's dtype.
        return unsupported("sparse_reshape: the two shapes' dtypes differ");
    }
    let dt = new_t.dtype;
    let indices = ints(indices_t, "sparse_reshape: the indices")?;
    let prev = ints(prev_t, "sparse_reshape: prev_shape")?;
    let new = ints(new_t, "sparse_reshape: new_shape")?;
    let (nnz, rank) = (indices_t.shape[0] as usize, indices_t.shape[1] as usize);
    if prev.is_empty() || new.is_empty() || rank != prev.len() {
        return unsupported("sparse_reshape: the indices' width is not prev_shape's length");
    }
    let w = |v: i128| wrap(dt, v);
    let mut multipliers = vec![1i128; prev.len()];
    let mut total = prev[0];
    for i in 1..prev.len() {
        let at = prev.len() - 1 - i;
        multipliers[at] = w(prev[prev.len() - i] * multipliers[at + 1]);
        total = w(total * prev[prev.len() - i]);
    }
    let known = new
        .iter()
        .filter(|&&d| d != -1)
        .fold(1i128, |acc, &d| w(acc * d));
    let mut out_shape = Vec::with_capacity(new.len());
    for &d in &new {
        out_shape.push(if d == -1 {
            if known == 0 {
                return unsupported("sparse_reshape: a division by zero");
            }
            w(total / known)
        } else {
            d
        });
    }
    let mut out = Vec::with_capacity(nnz * new.len());
    if prev == out_shape {
        out.extend_from_slice(&indices);
    } else {
        let mut dividers = vec![1i128; new.len()];
        for i in 1..new.len() {
            let at = new.len() - 1 - i;
            dividers[at] = w(dividers[at + 1] * out_shape[new.len() - i]);
        }
        if dividers.contains(&0) {
            return unsupported("sparse_reshape: a division by zero");
        }
        for row in indices.chunks(rank.max(1)).take(nnz) {
            let mut current = row
                .iter()
                .zip(&multipliers)
                .fold(0i128, |acc, (&i, &m)| w(acc + w(i * m)));
            for &d in &dividers {
                let quotient = floor_div(current, d);
                out.push(wrap(indices_t.dtype, quotient));
                current = w(current - d * quotient);
            }
        }
    }
    Ok(Value::Tuple(vec![
        int_tensor(out, indices_t.dtype, vec![nnz as i64, new.len() as i64])?,
        int_tensor(out_shape, dt, vec![new.len() as i64])?,
    ]))
}

fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// Copies the coordinates row by row, inserting a row `[r, 0, …]` with the
/// default value for each row `r` of the dense shape no coordinate names;
/// the third output flags those rows. Values are cast to `int64`, as TOPI's
/// script declares every output `int64`.
///
/// TOPI's script flags only the first row of a gap between two stored rows
/// (it writes `empty_row_indicator[prev_row_id]` for each missing row), so
/// the other rows of a gap of two or more keep uninitialised memory: such
/// inputs, unsorted rows, and rows outside the dense shape are not folded.
fn sparse_fill_empty_rows(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 4, call)?;
    let indices_t = arg_tensor(args, 0, call)?;
    let values_t = arg_tensor(args, 1, call)?;
    let dense_t = arg_tensor(args, 2, call)?;
    let default_t = arg_tensor(args, 3, call)?;
    if indices_t.ndim() != 2 || values_t.ndim() != 1 || dense_t.ndim() != 1 {
        return unsupported("sparse_fill_empty_rows: 2-D indices, 1-D values and shape expected");
    }
    let i64t = DataType::INT64;
    let indices = ints(&cast_tensor(indices_t, i64t)?, "the indices")?;
    let values = ints(&cast_tensor(values_t, i64t)?, "the values")?;
    let dense = ints(&cast_tensor(dense_t, i64t)?, "the dense shape")?;
    let default = ints(&cast_tensor(default_t, i64t)?, "the default value")?;
    let (nnz, rank) = (indices_t.shape[0] as usize, indices_t.shape[1] as usize);
    let (Some(&rows), Some(&default)) = (dense.first(), default.first()) else {
        return unsupported("sparse_fill_empty_rows: an empty dense shape or default value");
    };
    if rank == 0 || values.len() < nnz || rows < 0 {
        return unsupported("sparse_fill_empty_rows: inconsistent operands");
    }
    let row_of = |i: usize| indices[i * rank];
    let rows = rows as usize;
    let mut out_indices = Vec::new();
    let mut out_values = Vec::new();
    let mut empty = vec![None::<i128>; rows];
    let fill = |r: i128, out_indices: &mut Vec<i128>, out_values: &mut Vec<i128>| {
        out_indices.push(r);
        out_indices.extend(std::iter::repeat_n(0, rank - 1));
        out_values.push(default);
    };
    if nnz == 0 {
        for (r, flag) in empty.iter_mut().enumerate() {
            fill(r as i128, &mut out_indices, &mut out_values);
            *flag = Some(1);
        }
    } else {
        for i in 0..nnz {
            let row = row_of(i);
            let prev = if i == 0 { 0 } else { row_of(i - 1) + 1 };
            if row < 0 || row as usize >= rows || (i > 0 && row < row_of(i - 1)) {
                return unsupported("sparse_fill_empty_rows: rows unsorted or outside the shape");
            }
            if row - prev >= 2 {
                return unsupported(
                    "sparse_fill_empty_rows: a gap of several empty rows (TOPI leaves their flags \
                     uninitialised)",
                );
            }
            for r in prev..row {
                fill(r, &mut out_indices, &mut out_values);
                empty[prev as usize] = Some(1);
            }
            out_indices.extend_from_slice(&indices[i * rank..(i + 1) * rank]);
            out_values.push(values[i]);
            empty[row as usize] = Some(0);
        }
        let first_trailing = (row_of(nnz - 1) + 1) as usize;
        for (r, flag) in empty.iter_mut().enumerate().skip(first_trailing) {
            fill(r as i128, &mut out_indices, &mut out_values);
            *flag = Some(1);
        }
    }
    // Each dense row is written once: by a coordinate, or as a filled row.
    let Some(empty) = empty.into_iter().collect::<Option<Vec<i128>>>() else {
        return unsupported("sparse_fill_empty_rows: a row flag TOPI leaves unwritten");
    };
    let count = out_values.len() as i64;
    Ok(Value::Tuple(vec![
        int_tensor(out_indices, i64t, vec![count, rank as i64])?,
        int_tensor(out_values, i64t, vec![count])?,
        int_tensor(empty, i64t, vec![rows as i64])?,
    ]))
}
