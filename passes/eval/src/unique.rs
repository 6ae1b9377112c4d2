//! `unique` (TOPI's `topi/unique.py`): the unique elements of a 1-D tensor,
//! the first occurrence of each, every element's position among them, their
//! number and (with `return_counts`) their counts. TOPI sorts stably,
//! numbers the runs of equal sorted elements, and writes each output at the
//! run's number (reordered by first occurrence when not `sorted`). The
//! `indices` output is the first occurrence per run of the *sorted* order
//! in both modes, as TOPI returns it.
//!
//! TOPI leaves the unique elements and counts past `num_unique` unwritten
//! (its documentation calls them undefined), so only a call whose elements
//! are all distinct has a defined result; other calls are not folded.

use super::tensor::{decode, encode, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "unique" => unique,
        _ => return None,
    })
}

fn unique(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    if data.ndim() != 1 {
        return unsupported("unique: 1-D data expected");
    }
    let keys: Vec<f64> = match decode(data)? {
        Col::F32(v) => v.into_iter().map(f64::from).collect(),
        Col::F64(v) => v,
        Col::Int(v) => {
            if v.iter().any(|&x| x.unsigned_abs() > 1u128 << 53) {
                return unsupported("unique: integers too large to compare here");
            }
            v.into_iter().map(|x| x as f64).collect()
        }
    };
    if keys.iter().any(|k| k.is_nan()) {
        return unsupported("unique: NaN has no place in TVM's sort");
    }
    let n = keys.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| keys[a].partial_cmp(&keys[b]).expect("no NaN"));
    // The run number of each sorted position (TOPI's inclusive scan).
    let mut run = vec![0usize; n];
    for i in 1..n {
        run[i] = run[i - 1] + usize::from(keys[order[i]] != keys[order[i - 1]]);
    }
    let num_unique = if n == 0 { 0 } else { run[n - 1] + 1 };
    if num_unique != n {
        return unsupported(
            "unique: TVM leaves the outputs past the number of unique elements undefined",
        );
    }
    let mut first = vec![n as i128; n];
    for i in 0..n {
        if i == 0 || run[i] != run[i - 1] {
            first[run[i]] = order[i] as i128;
        }
    }
    let sorted = call.bool_or("sorted", true);
    // Unsorted: each run moves to the rank of its first occurrence.
    let place: Vec<usize> = if sorted {
        (0..n).collect()
    } else {
        let mut by_first: Vec<usize> = (0..n).collect();
        by_first.sort_by_key(|&k| first[k]);
        let mut rank = vec![0usize; n];
        for (r, &k) in by_first.iter().enumerate() {
            rank[k] = r;
        }
        rank
    };
    let elem = data.dtype.bytes();
    let mut values = vec![0u8; data.data.len()];
    let mut inverse = vec![0i128; n];
    let mut counts = vec![0i128; n];
    for i in 0..n {
        let slot = place[run[i]];
        inverse[order[i]] = slot as i128;
        values[slot * elem..(slot + 1) * elem]
            .copy_from_slice(&data.data[order[i] * elem..(order[i] + 1) * elem]);
        counts[slot] += 1;
    }
    let int = |v: Vec<i128>, shape: Vec<i64>| -> EvalResult<Value> {
        Ok(Value::tensor(encode(&Col::Int(v), DataType::INT32, shape)?))
    };
    let values = relay_ir::metadata::TensorData::new(data.dtype, data.shape.clone(), values)
        .map_err(|e| super::EvalError::Unsupported(e.message))?;
    let mut outputs = vec![
        Value::tensor(values),
        int(first, vec![n as i64])?,
        int(inverse, vec![n as i64])?,
        int(vec![num_unique as i128], vec![1])?,
    ];
    if call.bool_or("return_counts", false) {
        outputs.push(int(counts, vec![n as i64])?);
    }
    Ok(Value::Tuple(outputs))
}

#[cfg(test)]
mod tests {
    use crate::tensor::{decode, encode, Col};
    use crate::{eval_call, CallInfo, EvalError, Value};
    use relay_ir::dtype::DataType;
    use relay_ir::{AttrValue, Attrs};

    fn data(v: &[i128]) -> Value {
        Value::tensor(encode(&Col::Int(v.to_vec()), DataType::INT32, vec![v.len() as i64]).unwrap())
    }

    #[test]
    fn unsorted_unique_orders_by_first_occurrence_and_keeps_sorted_indices() {
        let a = Attrs::new("test", vec![("sorted".into(), AttrValue::Bool(false))]);
        let out = eval_call(&CallInfo::new("unique", Some(&a)), &[data(&[4, 1, 3])]).unwrap();
        let fields: Vec<Col> = out
            .as_tuple()
            .unwrap()
            .iter()
            .map(|f| decode(f.as_tensor().unwrap()).unwrap())
            .collect();
        assert_eq!(fields[0], Col::Int(vec![4, 1, 3]));
        // TOPI returns the first occurrences in sorted order (1, 3, 4).
        assert_eq!(fields[1], Col::Int(vec![1, 2, 0]));
        assert_eq!(fields[2], Col::Int(vec![0, 1, 2]));
        assert_eq!(fields[3], Col::Int(vec![3]));
        assert_eq!(fields.len(), 4);
    }

    #[test]
    fn repeated_elements_leave_undefined_outputs_and_are_not_folded() {
        let a = Attrs::new("test", vec![]);
        assert!(matches!(
            eval_call(&CallInfo::new("unique", Some(&a)), &[data(&[2, 2, 1])]),
            Err(EvalError::Unsupported(_))
        ));
    }
}
