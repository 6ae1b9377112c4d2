//! Tests of the indexing, scan and mask kernels, with values worked out
//! from TOPI's definitions (the reference computations of TVM's tests).

use super::super::Value;
use crate::test_util::{floats, ints, run, run_err};
use relay_ir::dtype::DataType;
use relay_ir::AttrValue;

/// The shape and integer elements of a tensor value.
fn int_values(v: &Value) -> (Vec<i64>, Vec<i64>) {
    let t = v.as_tensor().unwrap();
    let values = (0..t.num_elements() as usize)
        .map(|i| t.get_i64(i).unwrap())
        .collect();
    (t.shape.clone(), values)
}

fn float_values(v: &Value) -> (Vec<i64>, Vec<f64>) {
    let t = v.as_tensor().unwrap();
    let values = (0..t.num_elements() as usize)
        .map(|i| t.get_f64(i).unwrap())
        .collect();
    (t.shape.clone(), values)
}

#[test]
fn gather_along_an_axis() {
    // test_op_level3.py::test_gather: data [[1, 2], [3, 4]], axis 1,
    // indices [[0, 0], [1, 0]] → [[1, 1], [4, 3]].
    let out = run(
        "gather",
        &[("axis", AttrValue::Int(1))],
        &[
            ints("int32", &[2, 2], &[1, 2, 3, 4]),
            ints("int64", &[2, 2], &[0, 0, 1, 0]),
        ],
    );
    assert_eq!(int_values(&out), (vec![2, 2], vec![1, 1, 4, 3]));
    let err = run_err(
        "gather",
        &[("axis", AttrValue::Int(1))],
        &[
            ints("int32", &[2, 2], &[1, 2, 3, 4]),
            ints("int64", &[2, 2], &[0, 2, 1, 0]),
        ],
    );
    assert!(err.to_string().contains("out of range"), "{err}");
}

#[test]
fn gather_nd_with_batch_dims() {
    // data (2, 2): indices [[1, 0], [0, 1]] pick data[1, 0] and data[0, 1].
    let data = ints("int32", &[2, 2], &[0, 1, 2, 3]);
    let out = run(
        "gather_nd",
        &[],
        &[data.clone(), ints("int32", &[2, 2], &[1, 0, 0, 1])],
    );
    assert_eq!(int_values(&out), (vec![2], vec![2, 1]));
    // batch_dims 1: row b picks data[b, indices[0, b]].
    let out = run(
        "gather_nd",
        &[("batch_dims", AttrValue::Int(1))],
        &[data, ints("int32", &[1, 2], &[1, 0])],
    );
    assert_eq!(int_values(&out), (vec![2], vec![1, 2]));
}

#[test]
fn scatters_apply_updates_in_order() {
    // scatter_elements, axis 0, negative index wraps: data zeros (2, 3).
    let out = run(
        "scatter_elements",
        &[
            ("axis", AttrValue::Int(0)),
            ("reduction", AttrValue::Str("add".into())),
        ],
        &[
            ints("int32", &[2, 3], &[0; 6]),
            ints("int64", &[1, 3], &[1, -1, 0]),
            ints("int32", &[1, 3], &[5, 6, 7]),
        ],
    );
    assert_eq!(int_values(&out), (vec![2, 3], vec![0, 0, 7, 5, 6, 0]));
    // test_op_level3.py::test_scatter_nd: data [[1, 2], [3, 4]], indices
    // [[0, 1, 1], [1, 0, 0]], updates [2, 3, 0], mode add.
    let out = run(
        "scatter_nd",
        &[("mode", AttrValue::Str("add".into()))],
        &[
            ints("int32", &[2, 2], &[1, 2, 3, 4]),
            ints("int64", &[2, 3], &[0, 1, 1, 1, 0, 0]),
            ints("int32", &[3], &[2, 3, 0]),
        ],
    );
    assert_eq!(int_values(&out), (vec![2, 2], vec![1, 4, 6, 4]));
    let out = run(
        "scatter_nd",
        &[("mode", AttrValue::Str("update".into()))],
        &[
            ints("int32", &[2, 2], &[1, 2, 3, 4]),
            ints("int64", &[1, 2], &[1, 1]),
            ints("int32", &[2, 2], &[8, 9, 6, 7]),
        ],
    );
    assert_eq!(int_values(&out), (vec![2, 2], vec![1, 2, 6, 7]));
    let err = run_err(
        "scatter_nd",
        &[("mode", AttrValue::Str("update".into()))],
        &[
            ints("int32", &[2], &[1, 2]),
            ints("int64", &[1, 1], &[2]),
            ints("int32", &[1], &[8]),
        ],
    );
    assert!(err.to_string().contains("out of range"), "{err}");
}

#[test]
fn reverse_sequence_like_topi() {
    // test_op_level3.py::test_reverse_sequence: (4, 4), seq_axis 1,
    // batch_axis 0, lengths [1, 2, 3, 4].
    let data: Vec<i64> = (0..16).collect();
    let out = run(
        "reverse_sequence",
        &[
            ("seq_axis", AttrValue::Int(1)),
            ("batch_axis", AttrValue::Int(0)),
        ],
        &[
            ints("int32", &[4, 4], &data),
            ints("int32", &[4], &[1, 2, 3, 4]),
        ],
    );
    assert_eq!(
        int_values(&out).1,
        vec![0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12]
    );
    // A length past the axis reverses the whole axis.
    let out = run(
        "reverse_sequence",
        &[
            ("seq_axis", AttrValue::Int(1)),
            ("batch_axis", AttrValue::Int(0)),
        ],
        &[
            ints("int32", &[1, 3], &[1, 2, 3]),
            ints("int64", &[1], &[9]),
        ],
    );
    assert_eq!(int_values(&out).1, vec![3, 2, 1]);
}

#[test]
fn unravel_index_and_meshgrid() {
    // test_op_level3.py::test_unravel_index: [22, 41, 37] in (7, 6).
    let out = run(
        "unravel_index",
        &[],
        &[
            ints("int64", &[3], &[22, 41, 37]),
            ints("int64", &[2], &[7, 6]),
        ],
    );
    assert_eq!(int_values(&out), (vec![2, 3], vec![3, 6, 6, 4, 5, 1]));
    let grid = run(
        "meshgrid",
        &[("indexing", AttrValue::Str("xy".into()))],
        &[Value::Tuple(vec![
            ints("int32", &[2], &[1, 2]),
            ints("int32", &[3], &[7, 8, 9]),
        ])],
    );
    let fields = grid.as_tuple().unwrap();
    assert_eq!(int_values(&fields[0]), (vec![3, 2], vec![1, 2, 1, 2, 1, 2]));
    assert_eq!(int_values(&fields[1]), (vec![3, 2], vec![7, 7, 8, 8, 9, 9]));
}

#[test]
fn trilu_and_sequence_mask() {
    let data: Vec<i64> = (1..=9).collect();
    let upper = run(
        "trilu",
        &[("upper", AttrValue::Bool(true))],
        &[ints("int32", &[3, 3], &data), ints("int32", &[], &[1])],
    );
    assert_eq!(int_values(&upper).1, vec![0, 2, 3, 0, 0, 6, 0, 0, 0]);
    let lower = run(
        "trilu",
        &[("upper", AttrValue::Bool(false))],
        &[ints("int32", &[3, 3], &data), ints("int32", &[], &[0])],
    );
    assert_eq!(int_values(&lower).1, vec![1, 0, 0, 4, 5, 0, 7, 8, 9]);
    // test_op_level10.py::test_sequence_mask: (3, 2) with axis 0, lengths [1, 3].
    let out = run(
        "sequence_mask",
        &[
            ("mask_value", AttrValue::Double(-1.5)),
            ("axis", AttrValue::Int(0)),
        ],
        &[
            floats("float32", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            ints("int32", &[2], &[1, 3]),
        ],
    );
    assert_eq!(float_values(&out).1, vec![1.0, 2.0, -1.5, 4.0, -1.5, 6.0]);
    // An integer mask is truncated.
    let out = run(
        "sequence_mask",
        &[
            ("mask_value", AttrValue::Double(-1.5)),
            ("axis", AttrValue::Int(1)),
        ],
        &[ints("int32", &[1, 2], &[5, 6]), ints("int32", &[1], &[1])],
    );
    assert_eq!(int_values(&out).1, vec![5, -1]);
}

#[test]
fn scans_accumulate_in_order() {
    let data = ints("int32", &[2, 3], &[1, 2, 3, 4, 5, 6]);
    let out = run("cumsum", &[("axis", AttrValue::Int(1))], &[data.clone()]);
    assert_eq!(int_values(&out), (vec![2, 3], vec![1, 3, 6, 4, 9, 15]));
    let out = run(
        "cumsum",
        &[
            ("axis", AttrValue::Int(0)),
            ("exclusive", AttrValue::Bool(true)),
        ],
        &[data.clone()],
    );
    assert_eq!(int_values(&out).1, vec![0, 0, 0, 1, 2, 3]);
    let out = run("cumprod", &[], &[data.clone()]);
    assert_eq!(int_values(&out), (vec![6], vec![1, 2, 6, 24, 120, 720]));
    // int8 wraps at each step.
    let out = run(
        "cumprod",
        &[("dtype", AttrValue::DataType(DataType::int(8)))],
        &[data],
    );
    assert_eq!(int_values(&out).1, vec![1, 2, 6, 24, 120, -48]);
    // float16 rounds after each step: 2048 + 1 stays 2048.
    let out = run(
        "cumsum",
        &[("axis", AttrValue::Int(0))],
        &[floats("float16", &[3], &[2048.0, 1.0, 1.0])],
    );
    assert_eq!(float_values(&out).1, vec![2048.0, 2048.0, 2048.0]);
}

#[test]
fn reverse_reshape_moves_bytes_only() {
    let out = run(
        "contrib_reverse_reshape",
        &[(
            "newshape",
            AttrValue::Array(vec![AttrValue::Int(0), AttrValue::Int(-1)]),
        )],
        &[ints("int32", &[2, 3, 4], &(0..24).collect::<Vec<_>>())],
    );
    let (shape, values) = int_values(&out);
    assert_eq!(shape, vec![3, 8]);
    assert_eq!(values, (0..24).collect::<Vec<_>>());
}

#[test]
fn argwhere_lists_the_nonzero_coordinates() {
    // test_any.py::test_any_argwhere style: (2, 3) with three non-zeros.
    let out = run(
        "argwhere",
        &[],
        &[ints("int32", &[2, 3], &[0, 5, 0, 1, 0, 2])],
    );
    assert_eq!(int_values(&out), (vec![3, 2], vec![0, 1, 1, 0, 1, 2]));
    let out = run(
        "argwhere",
        &[],
        &[floats("float32", &[2], &[0.0, f64::NAN])],
    );
    assert_eq!(int_values(&out), (vec![1, 1], vec![1]));
    let none = run("argwhere", &[], &[ints("bool", &[2], &[0, 0])]);
    assert_eq!(int_values(&none).0, vec![0, 1]);
}
