//! Kernels of the sorting operators: `sort`, `argsort` and `topk` (TVM's
//! CPU kernels are `tvm.contrib.sort`'s `std::stable_sort` along an axis:
//! equal elements keep their order, descending too) and `searchsorted`
//! (TOPI's binary search per innermost row).
//!
//! Values are moved, never computed, so results are bit-exact; data with a
//! NaN is not folded (its place in the order depends on the comparison
//! TVM's code happens to use).

use super::tensor::{decode, dims, for_each_index, gather, norm_axis, numel, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::metadata::TensorData;
use std::cmp::Ordering;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "sort" => sort,
        "argsort" => argsort,
        "topk" => topk,
        "searchsorted" => searchsorted,
        _ => return None,
    })
}

/// The elements as `f64` keys (every integer up to 2^53 exactly; wider
/// ones are compared as integers through `i128`).
enum Keys {
    Float(Vec<f64>),
    Int(Vec<i128>),
}

impl Keys {
    fn of(t: &TensorData, op: &str) -> EvalResult<Keys> {
        Ok(match decode(t)? {
            Col::F32(v) => Keys::Float(v.into_iter().map(f64::from).collect()),
            Col::F64(v) => Keys::Float(v),
            Col::Int(v) => Keys::Int(v),
        })
        .and_then(|keys| match &keys {
            Keys::Float(v) if v.iter().any(|x| x.is_nan()) => {
                unsupported(format!("{op}: NaN in the data"))
            }
            _ => Ok(keys),
        })
    }

    fn cmp(&self, a: usize, b: usize) -> Ordering {
        match self {
            Keys::Float(v) => v[a].partial_cmp(&v[b]).unwrap_or(Ordering::Equal),
            Keys::Int(v) => v[a].cmp(&v[b]),
        }
    }
}

fn sort(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let (src, _) = sorted_rows(data, call)?;
    gather(data, data.shape.clone(), &src).map(Value::tensor)
}

/// For each position of the output of a full sort along `axis`, the flat
/// index of the input element there; and the axis.
fn sorted_rows(data: &TensorData, call: &CallInfo) -> EvalResult<(Vec<usize>, usize)> {
    let keys = Keys::of(data, call.op)?;
    let axis = norm_axis(call.int_or("axis", -1), data.ndim(), call.op)?;
    let ascending = call.bool_or("is_ascend", true);
    let d = dims(&data.shape);
    let st = strides(&d);
    let len = d[axis];
    let mut src = vec![0usize; numel(&d)];
    // One row per position of the other axes.
    let mut outer = d.clone();
    outer[axis] = 1;
    for_each_index(&outer, |_, pos| {
        let base: usize = pos.iter().zip(&st).map(|(p, s)| p * s).sum();
        let mut row: Vec<usize> = (0..len).map(|k| base + k * st[axis]).collect();
        // A stable sort, as `std::stable_sort` in `tvm.contrib.sort`.
        row.sort_by(|&a, &b| {
            let order = keys.cmp(a, b);
            if ascending {
                order
            } else {
                order.reverse()
            }
        });
        for (k, from) in row.into_iter().enumerate() {
            src[base + k * st[axis]] = from;
        }
    });
    Ok((src, axis))
}

/// The position along `axis` of the element at flat index `i`.
fn position(i: usize, d: &[usize], axis: usize) -> i64 {
    ((i / strides(d)[axis]) % d[axis].max(1)) as i64
}

/// Indices as a tensor of the call's `dtype` (int32 by default; TVM
/// allows float index types too).
fn index_tensor(call: &CallInfo, shape: Vec<i64>, idx: &[i64]) -> EvalResult<TensorData> {
    let dtype = call
        .dtype("dtype")?
        .unwrap_or(relay_ir::dtype::DataType::INT32);
    let exact: Vec<f64> = idx.iter().map(|&i| i as f64).collect();
    if dtype.is_float() {
        TensorData::from_f64s(dtype, shape, &exact)
    } else {
        TensorData::from_i64s(dtype, shape, idx)
    }
    .map_err(|e| super::EvalError::Unsupported(e.message))
}

/// `argsort`: the positions along `axis` of the stably sorted elements.
fn argsort(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let (src, axis) = sorted_rows(data, call)?;
    let d = dims(&data.shape);
    let idx: Vec<i64> = src.iter().map(|&i| position(i, &d, axis)).collect();
    index_tensor(call, data.shape.clone(), &idx).map(Value::tensor)
}

/// `topk`: the first `k` of the stable sort (`k < 1`: all), as values,
/// indices or both (`ret_type`).
fn topk(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let (src, axis) = sorted_rows(data, call)?;
    let d = dims(&data.shape);
    let len = d[axis] as i64;
    let k = match call.int_or("k", 1) {
        k if k < 1 || k > len => len,
        k => k,
    } as usize;
    let mut out_shape = data.shape.clone();
    out_shape[axis] = k as i64;
    call.check_size(&out_shape)?;
    let od = dims(&out_shape);
    let st = strides(&d);
    let mut kept = Vec::with_capacity(numel(&od));
    for_each_index(&od, |_, idx| {
        kept.push(src[idx.iter().zip(&st).map(|(i, s)| i * s).sum::<usize>()]);
    });
    let values = || gather(data, out_shape.clone(), &kept).map(Value::tensor);
    let indices = || {
        let idx: Vec<i64> = kept.iter().map(|&i| position(i, &d, axis)).collect();
        index_tensor(call, out_shape.clone(), &idx).map(Value::tensor)
    };
    match call.str("ret_type").unwrap_or("both") {
        "both" => Ok(Value::Tuple(vec![values()?, indices()?])),
        "values" => values(),
        "indices" => indices(),
        other => unsupported(format!("topk: ret_type {other}")),
    }
}

fn searchsorted(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let sorted = arg_tensor(args, 0, call)?;
    let values = arg_tensor(args, 1, call)?;
    if sorted.dtype != values.dtype {
        return unsupported("searchsorted: the inputs have different dtypes");
    }
    let right = call.bool_or("right", false);
    let dtype = call
        .dtype("dtype")?
        .unwrap_or(relay_ir::dtype::DataType::INT32);
    let Some(&seq_len) = sorted.shape.last() else {
        return unsupported("searchsorted: a scalar sequence");
    };
    let Some(&row_len) = values.shape.last() else {
        return unsupported("searchsorted: scalar values");
    };
    let (seq_len, row_len) = (seq_len.max(0) as usize, row_len.max(0) as usize);
    let rows = if sorted.ndim() > 1 {
        if sorted.shape[..sorted.ndim() - 1] != values.shape[..values.ndim() - 1] {
            return unsupported("searchsorted: outer shapes differ");
        }
        numel(&dims(&sorted.shape[..sorted.ndim() - 1]))
    } else {
        0
    };
    // Both tensors' elements in one key space: the sequence first.
    let mut both = sorted.clone();
    both.data.extend_from_slice(&values.data);
    let total = sorted.num_elements() + values.num_elements();
    let both = TensorData::new(sorted.dtype, vec![total], both.data)
        .map_err(|e| super::EvalError::Unsupported(e.message))?;
    let keys = Keys::of(&both, call.op)?;
    let offset = sorted.num_elements() as usize;
    let count = values.num_elements() as usize;
    let mut out = Vec::with_capacity(count);
    for v in 0..count {
        let row = if rows > 0 { v / row_len.max(1) } else { 0 };
        let base = row * seq_len;
        // The first position whose element is >= the value (> with `right`).
        let (mut lo, mut hi) = (0usize, seq_len);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let order = keys.cmp(base + mid, offset + v);
            let before = if right {
                order != Ordering::Greater
            } else {
                order == Ordering::Less
            };
            if before {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        out.push(lo as i64);
    }
    TensorData::from_i64s(dtype, values.shape.clone(), &out)
        .map(Value::tensor)
        .map_err(|e| super::EvalError::Unsupported(e.message))
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::{eval_call, CallInfo, Value};
    use relay_ir::dtype::DataType;
    use relay_ir::metadata::TensorData;
    use relay_ir::{AttrValue, Attrs};

    fn floats(shape: &[i64], v: &[f64]) -> Value {
        Value::tensor(TensorData::from_f64s(DataType::FLOAT32, shape.to_vec(), v).unwrap())
    }

    fn run(op: &str, fields: &[(&str, AttrValue)], args: &[Value]) -> TensorData {
        let attrs = Attrs::new(
            "test",
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        );
        let out = eval_call(&CallInfo::new(op, Some(&attrs)), args).unwrap();
        out.as_tensor().unwrap().clone()
    }

    fn values(t: &TensorData) -> Vec<f64> {
        (0..t.num_elements() as usize)
            .map(|i| t.get_f64(i).unwrap())
            .collect()
    }

    #[test]
    fn sort_rows_either_way() {
        let data = floats(&[2, 3], &[3.0, 1.0, 2.0, -1.0, 5.0, 0.0]);
        let up = run("sort", &[("axis", AttrValue::Int(1))], &[data.clone()]);
        assert_eq!(values(&up), vec![1.0, 2.0, 3.0, -1.0, 0.0, 5.0]);
        let down = run(
            "sort",
            &[
                ("axis", AttrValue::Int(0)),
                ("is_ascend", AttrValue::Bool(false)),
            ],
            &[data],
        );
        assert_eq!(values(&down), vec![3.0, 5.0, 2.0, -1.0, 1.0, 0.0]);
        let nan = floats(&[2], &[f64::NAN, 1.0]);
        let attrs = Attrs::new("test", vec![]);
        assert!(eval_call(&CallInfo::new("sort", Some(&attrs)), &[nan]).is_err());
    }

    #[test]
    fn searchsorted_left_and_right() {
        // test_op_level6.py::test_searchsorted, 1-D: [1, 2, 2, 3] and [2, 0, 4].
        let seq = floats(&[4], &[1.0, 2.0, 2.0, 3.0]);
        let vals = floats(&[3], &[2.0, 0.0, 4.0]);
        let left = run("searchsorted", &[], &[seq.clone(), vals.clone()]);
        assert_eq!(left.dtype, DataType::INT32);
        assert_eq!(values(&left), vec![1.0, 0.0, 4.0]);
        let right = run(
            "searchsorted",
            &[
                ("right", AttrValue::Bool(true)),
                ("dtype", AttrValue::DataType(DataType::INT64)),
            ],
            &[seq, vals],
        );
        assert_eq!(values(&right), vec![3.0, 0.0, 4.0]);
        // Batched: one sequence per row.
        let seq = floats(&[2, 2], &[0.0, 1.0, 5.0, 6.0]);
        let vals = floats(&[2, 1], &[0.5, 5.5]);
        assert_eq!(
            values(&run("searchsorted", &[], &[seq, vals])),
            vec![1.0, 1.0]
        );
    }
}
