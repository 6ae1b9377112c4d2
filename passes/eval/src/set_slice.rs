//! Writing into parts of a tensor: `matrix_set_diag` (TOPI's C++
//! `matrix_set_diag`) and `strided_set` (TOPI's Python `strided_set`, with
//! `within_index` / `make_idx` of `topi/utils.py`). Elements are copied:
//! exact. TVM reads the value tensor without bounds checks; a call whose
//! formula would read outside it is not folded.

use super::tensor::{decode, dims, for_each_index, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "matrix_set_diag" => matrix_set_diag,
        "strided_set" => strided_set,
        _ => return None,
    })
}

/// Copies `a`, replacing the elements for which `pick` gives a flat index
/// into `v`.
fn replace(
    a: &TensorData,
    v: &TensorData,
    op: &str,
    mut pick: impl FnMut(&[usize]) -> EvalResult<Option<usize>>,
) -> EvalResult<Value> {
    if a.dtype != v.dtype {
        return unsupported(format!("{op}: the values are not of the data's type"));
    }
    let width = a.dtype.bytes();
    let mut data = a.data.to_vec();
    let mut failure = None;
    for_each_index(&dims(&a.shape), |flat, index| {
        if failure.is_some() {
            return;
        }
        match pick(index) {
            Ok(Some(from)) if from < v.num_elements() as usize => data
                [flat * width..(flat + 1) * width]
                .copy_from_slice(&v.data[from * width..(from + 1) * width]),
            Ok(Some(_)) => {
                failure = Some(format!("{op}: TVM's index reads past the values here"));
            }
            Ok(None) => {}
            Err(e) => failure = Some(e.to_string()),
        }
    });
    if let Some(why) = failure {
        return unsupported(why);
    }
    TensorData::new(a.dtype, a.shape.clone(), data)
        .map(Value::tensor)
        .map_err(|e| super::EvalError::Unsupported(e.message))
}

/// Diagonals `k1..=k2` of the innermost matrices (`j - i` is the diagonal
/// of element `(i, j)`); with a band, row `k2 - k` of the diagonal tensor
/// holds diagonal `k`, shifted right by the padding of a shorter diagonal
/// when its side is right-aligned.
fn matrix_set_diag(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let input = arg_tensor(args, 0, call)?;
    let diagonal = arg_tensor(args, 1, call)?;
    if input.ndim() < 2 || diagonal.ndim() == 0 {
        return unsupported("matrix_set_diag: a matrix and diagonals expected");
    }
    let (k1, k2) = (call.int_or("k1", 0), call.int_or("k2", 0));
    let super_right = call.bool_or("super_diag_right_align", true);
    let sub_right = call.bool_or("sub_diag_right_align", false);
    let last = input.ndim() - 1;
    let (rows, cols) = (input.shape[last - 1], input.shape[last]);
    let diag_dims = dims(&diagonal.shape);
    let diag_strides = strides(&diag_dims);
    let max_len = *diagonal.shape.last().expect("an axis");
    let one = k1 == k2;
    let expected_rank = input.ndim() - if one { 1 } else { 0 };
    if diagonal.ndim() != expected_rank {
        return unsupported("matrix_set_diag: the diagonal tensor's rank does not fit");
    }
    replace(input, diagonal, call.op, |index| {
        let (i, j) = (index[last - 1] as i64, index[last] as i64);
        let k = j - i;
        if k < k1 || k > k2 {
            return Ok(None);
        }
        let mut at: Vec<i64> = index[..last - 1].iter().map(|&x| x as i64).collect();
        let mut offset = 0;
        if !one {
            at.push(k2 - k);
            let shorter = |m: i64, n: i64| max_len - m.min(n);
            offset = if k >= 0 {
                if super_right {
                    shorter(cols - k, rows)
                } else {
                    0
                }
            } else if sub_right {
                shorter(cols, rows + k)
            } else {
                0
            };
        }
        at.push(if k >= 0 { i } else { j } + offset);
        let mut flat = 0usize;
        for (axis, &x) in at.iter().enumerate() {
            if x < 0 || x >= diagonal.shape[axis] {
                return unsupported("matrix_set_diag: TVM's index reads past the diagonals here");
            }
            flat += x as usize * diag_strides[axis];
        }
        Ok(Some(flat))
    })
}

fn int32_vector(t: &TensorData, what: &str) -> EvalResult<Vec<i64>> {
    if t.dtype != DataType::INT32 || t.ndim() != 1 {
        return unsupported(format!(
            "strided_set: {what} must be an int32 vector (TOPI)"
        ));
    }
    match decode(t)? {
        Col::Int(v) => Ok(v.into_iter().map(|x| x as i64).collect()),
        _ => unsupported(format!("strided_set: {what} must be integers")),
    }
}

/// `floormod`, as TIR's `%` on integers.
fn floor_mod(a: i64, b: i64) -> i64 {
    let r = a % b;
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

/// TOPI's `strided_set`: each element inside the strided slice (per axis,
/// `within_index`) takes `v[make_idx]`, the others keep their value.
/// Missing begin/end/stride entries default as TOPI writes them.
fn strided_set(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 5, call)?;
    let a = arg_tensor(args, 0, call)?;
    let v = arg_tensor(args, 1, call)?;
    let begin = int32_vector(arg_tensor(args, 2, call)?, "begin")?;
    let end = int32_vector(arg_tensor(args, 3, call)?, "end")?;
    let stride = int32_vector(arg_tensor(args, 4, call)?, "strides")?;
    let n = a.ndim();
    if v.ndim() != n {
        return unsupported("strided_set: the values need the data's rank");
    }
    let mut bounds = Vec::with_capacity(n);
    for i in 0..n {
        let size = a.shape[i];
        let s = stride.get(i).copied().unwrap_or(1);
        if s == 0 {
            return unsupported("strided_set: a zero stride (TVM divides by it)");
        }
        let b = begin
            .get(i)
            .copied()
            .unwrap_or(if s > 0 { 0 } else { size });
        let e = end
            .get(i)
            .copied()
            .unwrap_or(if s > 0 { size + 1 } else { -(size + 1) });
        let b = if b < 0 { b + size } else { b };
        let e = if e < 0 { e + size } else { e };
        bounds.push((b, e, s, size));
    }
    let v_strides = strides(&dims(&v.shape));
    replace(a, v, call.op, |index| {
        let inside = bounds.iter().enumerate().all(|(axis, &(b, e, s, _))| {
            let i = index[axis] as i64;
            let outside = if s < 0 {
                i <= e || i > b
            } else {
                i < b || i >= e
            };
            let phase = if s < 0 {
                floor_mod(i - e + floor_mod(e, s.abs()) + 1, s.abs())
            } else {
                floor_mod(i - b, s)
            };
            !outside && phase == 0
        });
        if !inside {
            return Ok(None);
        }
        let mut flat = 0usize;
        for (axis, &(b, _, s, size)) in bounds.iter().enumerate() {
            let i = index[axis] as i64;
            let b = if size < b { size - 1 } else { b };
            let at = if s < 0 {
                (b - i).div_euclid(s.abs())
            } else {
                (i - b).div_euclid(s)
            };
            if at < 0 || at >= v.shape[axis] {
                return unsupported("strided_set: TVM's index reads past the values here");
            }
            flat += at as usize * v_strides[axis];
        }
        Ok(Some(flat))
    })
}

#[cfg(test)]
mod tests {
    use super::floor_mod;

    #[test]
    fn floor_mod_takes_the_divisor_sign() {
        assert_eq!(floor_mod(-3, 2), 1);
        assert_eq!(floor_mod(3, 2), 1);
        assert_eq!(floor_mod(3, -2), -1);
        assert_eq!(floor_mod(-3, -2), -1);
    }
}
