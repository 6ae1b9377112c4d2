//! Unit tests of the kernels: values checked bit for bit.

use super::*;
use crate::test_util::{attrs, ints};
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Attrs};

fn f32s(shape: &[i64], v: &[f32]) -> Value {
    let mut data = Vec::new();
    for x in v {
        data.extend(x.to_le_bytes());
    }
    Value::tensor(TensorData::new(DataType::FLOAT32, shape.to_vec(), data).unwrap())
}

fn f16s(shape: &[i64], v: &[f32]) -> Value {
    let vals: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
    Value::tensor(TensorData::from_f64s(DataType::float(16), shape.to_vec(), &vals).unwrap())
}

fn int_array(v: &[i64]) -> AttrValue {
    AttrValue::Array(v.iter().map(|&x| AttrValue::Int(x)).collect())
}

fn run(op: &str, a: Option<&Attrs>, args: &[Value]) -> Value {
    eval_call(&CallInfo::new(op, a), args).unwrap_or_else(|e| panic!("{op}: {e}"))
}

fn run_err(op: &str, a: Option<&Attrs>, args: &[Value]) -> EvalError {
    eval_call(&CallInfo::new(op, a), args).expect_err(op)
}

fn as_f32_bits(v: &Value) -> Vec<u32> {
    let t = v.as_tensor().unwrap();
    assert_eq!(t.dtype, DataType::FLOAT32);
    t.data
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn as_f32(v: &Value) -> Vec<f32> {
    as_f32_bits(v).into_iter().map(f32::from_bits).collect()
}

fn as_ints(v: &Value) -> Vec<i64> {
    v.as_tensor().unwrap().to_i64_vec().unwrap()
}

fn shape(v: &Value) -> Vec<i64> {
    v.as_tensor().unwrap().shape.clone()
}

#[test]
fn float32_arithmetic_is_single_precision() {
    let r = run("add", None, &[f32s(&[], &[0.1]), f32s(&[], &[0.2])]);
    assert_eq!(as_f32_bits(&r), vec![0x3e99_999a]);
    let r = run("divide", None, &[f32s(&[], &[1.0]), f32s(&[], &[3.0])]);
    assert_eq!(as_f32_bits(&r), vec![(1.0f32 / 3.0).to_bits()]);
    let r = run(
        "multiply",
        None,
        &[f32s(&[2], &[1.1, -2.5]), f32s(&[], &[3.3])],
    );
    assert_eq!(as_f32(&r), vec![1.1f32 * 3.3, -2.5f32 * 3.3]);
}

#[test]
fn broadcasting() {
    let a = f32s(&[2, 1], &[1.0, 2.0]);
    let b = f32s(&[3], &[10.0, 20.0, 30.0]);
    let r = run("subtract", None, &[a, b]);
    assert_eq!(shape(&r), vec![2, 3]);
    assert_eq!(as_f32(&r), vec![-9.0, -19.0, -29.0, -8.0, -18.0, -28.0]);
    let err = run_err(
        "add",
        None,
        &[f32s(&[2], &[1.0, 2.0]), f32s(&[3], &[1.0, 2.0, 3.0])],
    );
    assert!(matches!(err, EvalError::Unsupported(_)));
}

#[test]
fn negative_is_zero_minus_x() {
    // TVM's `neg` is `0 - x`: +0 stays +0, -0 becomes +0.
    let r = run("negative", None, &[f32s(&[3], &[0.0, -0.0, 1.5])]);
    assert_eq!(as_f32_bits(&r), vec![0, 0, (-1.5f32).to_bits()]);
    let r = run("negative", None, &[ints("int8", &[2], &[-128, 5])]);
    assert_eq!(as_ints(&r), vec![-128, -5]);
}

#[test]
fn float16_rounds_after_each_operation() {
    // 1 + 2^-11 is halfway between two float16 values: ties to even gives 1.
    let r = run(
        "add",
        None,
        &[f16s(&[], &[1.0]), f16s(&[], &[0.000_488_281_25])],
    );
    assert_eq!(
        r.as_tensor().unwrap().data,
        half::f16::from_f32(1.0).to_le_bytes().to_vec()
    );
    // sum rounds at each step: 2048 + 1 + 1 stays 2048 in float16.
    let r = run("sum", None, &[f16s(&[3], &[2048.0, 1.0, 1.0])]);
    assert_eq!(r.as_tensor().unwrap().get_f64(0).unwrap(), 2048.0);
    // mean of float16 is computed in float32: (2048 + 1 + 1) / 3 = 683.33 -> 683.5.
    let r = run("mean", None, &[f16s(&[3], &[2048.0, 1.0, 1.0])]);
    assert_eq!(r.as_tensor().unwrap().dtype, DataType::float(16));
    assert_eq!(r.as_tensor().unwrap().get_f64(0).unwrap(), 683.5);
}

#[test]
fn integer_division_and_modulo() {
    let a = ints("int32", &[4], &[-7, 7, -7, 7]);
    let b = ints("int32", &[4], &[2, -2, -2, 2]);
    assert_eq!(
        as_ints(&run("divide", None, &[a.clone(), b.clone()])),
        vec![-3, -3, 3, 3]
    );
    assert_eq!(
        as_ints(&run("floor_divide", None, &[a.clone(), b.clone()])),
        vec![-4, -4, 3, 3]
    );
    assert_eq!(
        as_ints(&run("mod", None, &[a.clone(), b.clone()])),
        vec![-1, 1, -1, 1]
    );
    assert_eq!(
        as_ints(&run("floor_mod", None, &[a, b])),
        vec![1, -1, -1, 1]
    );
    // Division by zero and MIN / -1 are not folded.
    assert!(eval_call(
        &CallInfo::new("divide", None),
        &[ints("int32", &[], &[1]), ints("int32", &[], &[0])]
    )
    .is_err());
    assert!(eval_call(
        &CallInfo::new("divide", None),
        &[ints("int8", &[], &[-128]), ints("int8", &[], &[-1])]
    )
    .is_err());
}

#[test]
fn integer_arithmetic_wraps() {
    let r = run(
        "add",
        None,
        &[ints("int8", &[], &[127]), ints("int8", &[], &[1])],
    );
    assert_eq!(as_ints(&r), vec![-128]);
    let r = run(
        "multiply",
        None,
        &[ints("uint8", &[], &[200]), ints("uint8", &[], &[2])],
    );
    assert_eq!(as_ints(&r), vec![144]);
    let r = run(
        "multiply",
        None,
        &[ints("int64", &[], &[i64::MAX]), ints("int64", &[], &[2])],
    );
    assert_eq!(as_ints(&r), vec![-2]);
}

#[test]
fn float_floor_division_and_modulo() {
    let a = f32s(&[2], &[-7.5, 7.5]);
    let b = f32s(&[2], &[2.0, 2.0]);
    assert_eq!(
        as_f32(&run("floor_divide", None, &[a.clone(), b.clone()])),
        vec![-4.0, 3.0]
    );
    assert_eq!(
        as_f32(&run("floor_mod", None, &[a.clone(), b.clone()])),
        vec![0.5, 1.5]
    );
    assert_eq!(as_f32(&run("mod", None, &[a, b])), vec![-1.5, 1.5]);
}

#[test]
fn transcendental_functions_use_the_float32_libm() {
    let x = f32s(&[3], &[1.0, 0.5, -2.25]);
    let exp: Vec<u32> = [1.0f32, 0.5, -2.25]
        .iter()
        .map(|v| v.exp().to_bits())
        .collect();
    assert_eq!(
        as_f32_bits(&run("exp", None, std::slice::from_ref(&x))),
        exp
    );
    assert_eq!(
        as_f32_bits(&run("exp", None, &[f32s(&[], &[1.0])])),
        vec![0x402d_f854]
    );
    let sqrt = run("sqrt", None, &[f32s(&[2], &[2.0, 1.00001])]);
    assert_eq!(as_f32(&sqrt), vec![2.0f32.sqrt(), 1.00001f32.sqrt()]);
    // rsqrt is 1 / sqrt(x), two roundings.
    let r = run("rsqrt", None, &[f32s(&[], &[1.00001])]);
    assert_eq!(
        as_f32_bits(&r),
        vec![(1.0f32 / 1.00001f32.sqrt()).to_bits()]
    );
    let p = run("power", None, &[f32s(&[], &[2.0]), f32s(&[], &[0.5])]);
    assert_eq!(as_f32_bits(&p), vec![2.0f32.powf(0.5).to_bits()]);
}

#[test]
fn tanh_and_sigmoid_follow_tvm_formulas() {
    let x = 0.3f32;
    let e = (-2.0 * x).exp();
    let expected = (1.0 - e) / (1.0 + e);
    assert_eq!(
        as_f32_bits(&run("tanh", None, &[f32s(&[], &[x])])),
        vec![expected.to_bits()]
    );
    let y = -0.7f32;
    let e = (2.0 * y).exp();
    let expected = (e - 1.0) / (e + 1.0);
    assert_eq!(
        as_f32_bits(&run("tanh", None, &[f32s(&[], &[y])])),
        vec![expected.to_bits()]
    );
    let expected = 1.0 / (1.0 + (0.0 - x).exp());
    assert_eq!(
        as_f32_bits(&run("sigmoid", None, &[f32s(&[], &[x])])),
        vec![expected.to_bits()]
    );
}

#[test]
fn relu_maximum_minimum_clip() {
    let r = run("nn.relu", None, &[f32s(&[3], &[-1.0, 0.0, 2.5])]);
    assert_eq!(as_f32(&r), vec![0.0, 0.0, 2.5]);
    let r = run(
        "maximum",
        None,
        &[ints("int32", &[2], &[1, 5]), ints("int32", &[], &[3])],
    );
    assert_eq!(as_ints(&r), vec![3, 5]);
    let a = attrs(&[
        ("a_min", AttrValue::Double(-1.0)),
        ("a_max", AttrValue::Double(0.1)),
    ]);
    let r = run("clip", Some(&a), &[f32s(&[3], &[-5.0, 0.05, 7.0])]);
    assert_eq!(as_f32(&r), vec![-1.0, 0.05, 0.1]);
    let a = attrs(&[
        ("a_min", AttrValue::Double(0.0)),
        ("a_max", AttrValue::Double(6.7)),
    ]);
    let r = run("clip", Some(&a), &[ints("int32", &[2], &[-3, 9])]);
    assert_eq!(as_ints(&r), vec![0, 6]);
}

#[test]
fn comparisons_and_where() {
    let a = f32s(&[3], &[1.0, f32::NAN, 3.0]);
    let b = f32s(&[3], &[1.0, 1.0, 2.0]);
    assert_eq!(
        as_ints(&run("equal", None, &[a.clone(), b.clone()])),
        vec![1, 0, 0]
    );
    // fcmp one: NaN is not "not equal".
    assert_eq!(
        as_ints(&run("not_equal", None, &[a.clone(), b.clone()])),
        vec![0, 0, 1]
    );
    assert_eq!(as_ints(&run("greater", None, &[a, b])), vec![0, 0, 1]);
    let c = run(
        "less",
        None,
        &[ints("int32", &[2], &[1, 5]), ints("int32", &[], &[3])],
    );
    let r = run(
        "where",
        None,
        &[c, f32s(&[2], &[10.0, 20.0]), f32s(&[], &[-1.0])],
    );
    assert_eq!(as_f32(&r), vec![10.0, -1.0]);
}

#[test]
fn casts_follow_llvm_on_x86() {
    let cast = |v: Value, to: &str| {
        let a = attrs(&[("dtype", AttrValue::DataType(DataType::parse(to).unwrap()))]);
        run("cast", Some(&a), &[v])
    };
    // Truncation towards zero, wrapping of the 32-bit conversion.
    let r = cast(f32s(&[5], &[300.0, -1.5, 2.9, f32::NAN, 1e10]), "int8");
    assert_eq!(as_ints(&r), vec![44, -1, 2, 0, 0]);
    let r = cast(f32s(&[2], &[-1.0, 255.9]), "uint8");
    assert_eq!(as_ints(&r), vec![255, 255]);
    let r = cast(f32s(&[2], &[1e10, -3.7]), "int32");
    assert_eq!(as_ints(&r), vec![i64::from(i32::MIN), -3]);
    let r = cast(f32s(&[3], &[0.0, f32::NAN, -0.5]), "bool");
    assert_eq!(as_ints(&r), vec![0, 0, 1]);
    // Round to nearest, ties to even.
    let r = cast(ints("int64", &[1], &[16_777_217]), "float32");
    assert_eq!(as_f32(&r), vec![16_777_216.0]);
    let r = cast(f32s(&[1], &[65520.0]), "float16");
    assert!(r.as_tensor().unwrap().get_f64(0).unwrap().is_infinite());
    let r = cast(ints("int32", &[1], &[-1]), "uint16");
    assert_eq!(as_ints(&r), vec![65535]);
    let r = cast(ints("uint8", &[1], &[200]), "int8");
    assert_eq!(as_ints(&r), vec![-56]);
    let r = cast(ints("int32", &[3], &[8, 9, 10]), "float32");
    assert_eq!(as_f32(&r), vec![8.0, 9.0, 10.0]);
}

#[test]
fn reshapes() {
    let x = f32s(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let a = attrs(&[("newshape", int_array(&[-1]))]);
    assert_eq!(
        shape(&run("reshape", Some(&a), std::slice::from_ref(&x))),
        vec![6]
    );
    let a = attrs(&[("newshape", int_array(&[0, -1, 1]))]);
    assert_eq!(
        shape(&run("reshape", Some(&a), std::slice::from_ref(&x))),
        vec![2, 3, 1]
    );
    let a = attrs(&[("newshape", int_array(&[-4, 1, -1, -2]))]);
    assert_eq!(
        shape(&run("reshape", Some(&a), std::slice::from_ref(&x))),
        vec![1, 2, 3]
    );
    let a = attrs(&[("newshape", int_array(&[-3]))]);
    assert_eq!(
        shape(&run("reshape", Some(&a), std::slice::from_ref(&x))),
        vec![6]
    );
    let a = attrs(&[
        ("axis", AttrValue::Int(-1)),
        ("num_newaxis", AttrValue::Int(2)),
    ]);
    assert_eq!(
        shape(&run("expand_dims", Some(&a), std::slice::from_ref(&x))),
        vec![2, 3, 1, 1]
    );
    let a = attrs(&[
        ("axis", AttrValue::Int(0)),
        ("num_newaxis", AttrValue::Int(1)),
    ]);
    let e = run("expand_dims", Some(&a), std::slice::from_ref(&x));
    assert_eq!(shape(&e), vec![1, 2, 3]);
    assert_eq!(shape(&run("squeeze", None, &[e])), vec![2, 3]);
    assert_eq!(shape(&run("nn.batch_flatten", None, &[x])), vec![2, 3]);
}

#[test]
fn transpose_and_layout_transform() {
    let x = f32s(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let r = run("transpose", None, std::slice::from_ref(&x));
    assert_eq!(shape(&r), vec![3, 2]);
    assert_eq!(as_f32(&r), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let a = attrs(&[("axes", int_array(&[-1, 0]))]);
    assert_eq!(
        as_f32(&run("transpose", Some(&a), &[x])),
        vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    );
    // NCHW -> NCHW2c with C = 4.
    let v: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let x = f32s(&[1, 4, 2, 1], &v);
    let a = attrs(&[
        ("src_layout", AttrValue::Str("NCHW".into())),
        ("dst_layout", AttrValue::Str("NCHW2c".into())),
    ]);
    let r = run("layout_transform", Some(&a), std::slice::from_ref(&x));
    assert_eq!(shape(&r), vec![1, 2, 2, 1, 2]);
    assert_eq!(as_f32(&r), vec![0.0, 2.0, 1.0, 3.0, 4.0, 6.0, 5.0, 7.0]);
    let back = attrs(&[
        ("src_layout", AttrValue::Str("NCHW2c".into())),
        ("dst_layout", AttrValue::Str("NCHW".into())),
    ]);
    assert_eq!(run("layout_transform", Some(&back), &[r]), x);
}

#[test]
fn concatenate_stack_split() {
    let a = f32s(&[1, 2], &[1.0, 2.0]);
    let b = f32s(&[1, 2], &[3.0, 4.0]);
    let t = Value::Tuple(vec![a.clone(), b.clone()]);
    let r = run("concatenate", None, std::slice::from_ref(&t));
    assert_eq!(
        (shape(&r), as_f32(&r)),
        (vec![2, 2], vec![1.0, 2.0, 3.0, 4.0])
    );
    let ax = attrs(&[("axis", AttrValue::Int(1))]);
    let r = run("concatenate", Some(&ax), std::slice::from_ref(&t));
    assert_eq!(
        (shape(&r), as_f32(&r)),
        (vec![1, 4], vec![1.0, 2.0, 3.0, 4.0])
    );
    let r = run("stack", Some(&ax), &[t]);
    assert_eq!(
        (shape(&r), as_f32(&r)),
        (vec![1, 2, 2], vec![1.0, 2.0, 3.0, 4.0])
    );
    let x = f32s(&[6], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let s = attrs(&[(
        "indices_or_sections",
        AttrValue::int_imm(3, DataType::INT32),
    )]);
    let r = run("split", Some(&s), std::slice::from_ref(&x));
    let parts = r.as_tuple().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(as_f32(&parts[2]), vec![4.0, 5.0]);
    let s = attrs(&[("indices_or_sections", int_array(&[1, 4]))]);
    let r = run("split", Some(&s), &[x]);
    let sizes: Vec<Vec<i64>> = r.as_tuple().unwrap().iter().map(shape).collect();
    assert_eq!(sizes, vec![vec![1], vec![3], vec![2]]);
}

#[test]
fn take_modes() {
    let data = f32s(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let idx = ints("int32", &[3], &[-1, 1, 7]);
    // Flattened, clip: negative indices become 0.
    let r = run("take", None, &[data.clone(), idx.clone()]);
    assert_eq!(as_f32(&r), vec![0.0, 1.0, 5.0]);
    let a = attrs(&[("mode", AttrValue::Str("wrap".into()))]);
    let r = run("take", Some(&a), &[data.clone(), idx.clone()]);
    assert_eq!(as_f32(&r), vec![5.0, 1.0, 1.0]);
    let a = attrs(&[
        ("axis", AttrValue::Int(1)),
        ("mode", AttrValue::Str("clip".into())),
    ]);
    let r = run("take", Some(&a), &[data.clone(), idx]);
    assert_eq!(shape(&r), vec![2, 3]);
    assert_eq!(as_f32(&r), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let a = attrs(&[
        ("axis", AttrValue::Int(0)),
        ("mode", AttrValue::Str("fast".into())),
    ]);
    let r = run("take", Some(&a), &[data.clone(), ints("int64", &[], &[1])]);
    assert_eq!((shape(&r), as_f32(&r)), (vec![3], vec![3.0, 4.0, 5.0]));
    assert!(eval_call(
        &CallInfo::new("take", Some(&a)),
        &[data, ints("int64", &[], &[2])]
    )
    .is_err());
}

#[test]
fn strided_slices() {
    let v: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let x = f32s(&[3, 4], &v);
    let a = attrs(&[
        ("begin", int_array(&[0, 1])),
        ("end", int_array(&[2, 4])),
        ("strides", int_array(&[1, 2])),
        ("slice_mode", AttrValue::Str("end".into())),
        ("axes", AttrValue::Null),
    ]);
    let r = run("strided_slice", Some(&a), std::slice::from_ref(&x));
    assert_eq!(
        (shape(&r), as_f32(&r)),
        (vec![2, 2], vec![1.0, 3.0, 5.0, 7.0])
    );
    // Negative stride, begin past the end is clamped.
    let a = attrs(&[
        ("begin", int_array(&[10])),
        ("end", int_array(&[-4])),
        ("strides", int_array(&[-1])),
        ("axes", int_array(&[1])),
    ]);
    let r = run("strided_slice", Some(&a), std::slice::from_ref(&x));
    assert_eq!(shape(&r), vec![3, 3]);
    assert_eq!(&as_f32(&r)[..3], &[3.0, 2.0, 1.0]);
    // Size mode.
    let a = attrs(&[
        ("begin", int_array(&[1])),
        ("end", int_array(&[-1])),
        ("strides", int_array(&[1])),
        ("slice_mode", AttrValue::Str("size".into())),
    ]);
    let r = run("strided_slice", Some(&a), &[x]);
    assert_eq!(shape(&r), vec![2, 4]);
}

#[test]
fn zeros_and_ones_fill_their_static_shape() {
    let a = attrs(&[
        ("shape", int_array(&[2, 2])),
        ("dtype", AttrValue::DataType(DataType::INT32)),
    ]);
    let r = run("zeros", Some(&a), &[]);
    assert_eq!((shape(&r), as_ints(&r)), (vec![2, 2], vec![0, 0, 0, 0]));
    let r = run("ones", Some(&a), &[]);
    assert_eq!(as_ints(&r), vec![1, 1, 1, 1]);
    let a = attrs(&[("shape", int_array(&[3]))]);
    assert!(matches!(
        run_err("zeros", Some(&a), &[]),
        EvalError::Unsupported(_)
    ));
}

#[test]
fn fills_broadcasts_and_pads() {
    let a = attrs(&[
        ("shape", int_array(&[2, 2])),
        ("dtype", AttrValue::DataType(DataType::INT32)),
    ]);
    let r = run("full", Some(&a), &[f32s(&[], &[3.7])]);
    assert_eq!((shape(&r), as_ints(&r)), (vec![2, 2], vec![3, 3, 3, 3]));
    let r = run("ones_like", None, &[ints("int8", &[3], &[5, 6, 7])]);
    assert_eq!(as_ints(&r), vec![1, 1, 1]);
    let a = attrs(&[("shape", int_array(&[2, 3]))]);
    let r = run("broadcast_to", Some(&a), &[f32s(&[3], &[1.0, 2.0, 3.0])]);
    assert_eq!(as_f32(&r), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let x = f32s(&[3], &[1.0, 2.0, 3.0]);
    let pad = |mode: &str| {
        attrs(&[
            ("pad_width", AttrValue::Array(vec![int_array(&[2, 1])])),
            ("pad_mode", AttrValue::Str(mode.into())),
        ])
    };
    let zero = f32s(&[], &[0.5]);
    let r = run("nn.pad", Some(&pad("constant")), &[x.clone(), zero.clone()]);
    assert_eq!(as_f32(&r), vec![0.5, 0.5, 1.0, 2.0, 3.0, 0.5]);
    let r = run("nn.pad", Some(&pad("edge")), &[x.clone(), zero.clone()]);
    assert_eq!(as_f32(&r), vec![1.0, 1.0, 1.0, 2.0, 3.0, 3.0]);
    let r = run("nn.pad", Some(&pad("reflect")), &[x, zero]);
    assert_eq!(as_f32(&r), vec![3.0, 2.0, 1.0, 2.0, 3.0, 2.0]);
}

#[test]
fn reductions() {
    let x = f32s(&[2, 3], &[1.0, 5.0, 3.0, -4.0, 2.0, 0.5]);
    let all = run("sum", None, std::slice::from_ref(&x));
    assert_eq!((shape(&all), as_f32(&all)), (vec![], vec![7.5]));
    let a = attrs(&[
        ("axis", int_array(&[1])),
        ("keepdims", AttrValue::Bool(true)),
    ]);
    let r = run("max", Some(&a), std::slice::from_ref(&x));
    assert_eq!((shape(&r), as_f32(&r)), (vec![2, 1], vec![5.0, 2.0]));
    let a = attrs(&[
        ("axis", int_array(&[0])),
        ("exclude", AttrValue::Bool(true)),
    ]);
    let r = run("mean", Some(&a), std::slice::from_ref(&x));
    assert_eq!(as_f32(&r), vec![3.0, -0.5]);
    let a = attrs(&[("axis", int_array(&[1]))]);
    let r = run("argmax", Some(&a), std::slice::from_ref(&x));
    assert_eq!(as_ints(&r), vec![1, 1]);
    let r = run("argmin", Some(&a), &[x]);
    assert_eq!(as_ints(&r), vec![0, 0]);
    // The max of -inf values is TVM's identity, the lowest finite float.
    let r = run("max", None, &[f32s(&[1], &[f32::NEG_INFINITY])]);
    assert_eq!(as_f32(&r), vec![f32::MIN]);
    let r = run("prod", None, &[ints("int32", &[3], &[2, 3, 4])]);
    assert_eq!(as_ints(&r), vec![24]);
}

#[test]
fn qnn_requantize_and_add() {
    // TVM's test_fold_requantize: [1, 2, 3] with scale 2, zero point 1 to
    // scale 1, zero point 1.
    let a = attrs(&[
        ("axis", AttrValue::Int(-1)),
        ("rounding", AttrValue::Str("None".into())),
        ("compute_dtype", AttrValue::Str("None".into())),
        ("out_dtype", AttrValue::DataType(DataType::int(8))),
    ]);
    let r = run(
        "qnn.requantize",
        Some(&a),
        &[
            ints("int8", &[3], &[1, 2, 3]),
            f32s(&[], &[2.0]),
            ints("int32", &[], &[1]),
            f32s(&[], &[1.0]),
            ints("int32", &[], &[1]),
        ],
    );
    assert_eq!(as_ints(&r), vec![1, 3, 5]);
    // A multiplier that is not a power of two: 0.3f32 (slightly above 0.3)
    // in Q31 with rounding upward, so -5 * 0.3 = -1.5000001 rounds to -2.
    let r = run(
        "qnn.requantize",
        Some(&a),
        &[
            ints("int8", &[4], &[10, -10, 5, -5]),
            f32s(&[], &[0.3]),
            ints("int32", &[], &[0]),
            f32s(&[], &[1.0]),
            ints("int32", &[], &[0]),
        ],
    );
    assert_eq!(as_ints(&r), vec![3, -3, 2, -2]);
    // TVM's test_fold_qnn_const: qnn.add of two uint8 tensors of ones.
    let ones = ints("uint8", &[2, 3], &[1; 6]);
    let r = run(
        "qnn.add",
        None,
        &[
            ones.clone(),
            ones,
            f32s(&[], &[2.0]),
            ints("int32", &[], &[0]),
            f32s(&[], &[2.0]),
            ints("int32", &[], &[0]),
            f32s(&[], &[1.0]),
            ints("int32", &[], &[0]),
        ],
    );
    assert_eq!(as_ints(&r), vec![4; 6]);
}

#[test]
fn qnn_quantize_dequantize() {
    let a = attrs(&[
        ("out_dtype", AttrValue::DataType(DataType::int(8))),
        ("axis", AttrValue::Int(-1)),
    ]);
    let r = run(
        "qnn.quantize",
        Some(&a),
        &[
            f32s(&[4], &[0.25, -0.25, 100.0, 0.74]),
            f32s(&[], &[0.5]),
            ints("int32", &[], &[1]),
        ],
    );
    // round(x / 0.5) rounds halfway cases away from zero.
    assert_eq!(as_ints(&r), vec![2, 0, 127, 2]);
    let a = attrs(&[("axis", AttrValue::Int(-1))]);
    let r = run(
        "qnn.dequantize",
        Some(&a),
        &[
            ints("int8", &[2], &[3, -1]),
            f32s(&[], &[0.5]),
            ints("int32", &[], &[1]),
        ],
    );
    assert_eq!(as_f32(&r), vec![1.0, -1.0]);
}

#[test]
fn fixed_point_multiplier() {
    assert_eq!(qnn::fixed_point_multiplier_shift(2.0), (1 << 30, 2));
    assert_eq!(qnn::fixed_point_multiplier_shift(0.5), (1 << 30, 0));
    assert_eq!(qnn::fixed_point_multiplier_shift(0.0), (0, 0));
    // 0.3 = 0.6 * 2^-1.
    assert_eq!(qnn::fixed_point_multiplier_shift(0.3), (1_288_490_189, -1));
}

#[test]
fn unknown_operators_have_no_kernel() {
    assert!(kernel("memory.alloc_storage").is_none());
    assert_eq!(
        run_err("memory.alloc_storage", None, &[]),
        EvalError::NoKernel("memory.alloc_storage".into())
    );
    let names = operators_with_kernels();
    for op in ["add", "cast", "reshape", "qnn.requantize", "sum"] {
        assert!(names.contains(&op), "{op}");
    }
}

#[test]
fn softmax_and_arange() {
    let x = f32s(&[2, 2], &[1.0, 2.0, 3.0, 3.0]);
    let r = run("nn.softmax", None, std::slice::from_ref(&x));
    let e = (1.0f32 - 2.0).exp();
    let s = e + 1.0;
    assert_eq!(
        as_f32_bits(&r),
        vec![
            (e / s).to_bits(),
            (1.0 / s).to_bits(),
            0.5f32.to_bits(),
            0.5f32.to_bits()
        ]
    );
    let r = run("nn.log_softmax", None, &[x]);
    assert_eq!(as_f32(&r)[1], 0.0 - s.ln());
    let a = attrs(&[("dtype", AttrValue::DataType(DataType::INT64))]);
    let r = run(
        "arange",
        Some(&a),
        &[f32s(&[], &[0.5]), f32s(&[], &[3.0]), f32s(&[], &[0.75])],
    );
    assert_eq!((shape(&r), as_ints(&r)), (vec![4], vec![0, 1, 2, 2]));
    let a = attrs(&[("dtype", AttrValue::DataType(DataType::INT32))]);
    let r = run(
        "arange",
        Some(&a),
        &[
            ints("int32", &[], &[5]),
            ints("int32", &[], &[-1]),
            ints("int32", &[], &[-2]),
        ],
    );
    assert_eq!(as_ints(&r), vec![5, 3, 1]);
    let r = run("annotation.stop_fusion", None, &[ints("int32", &[], &[5])]);
    assert_eq!(as_ints(&r), vec![5]);
}

#[test]
fn slice_like_takes_the_leading_part() {
    let v: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let x = f32s(&[3, 4], &v);
    let like = f32s(&[2, 2], &[0.0; 4]);
    let all = attrs(&[("axes", AttrValue::Null)]);
    let r = run("slice_like", Some(&all), &[x.clone(), like.clone()]);
    assert_eq!(
        (shape(&r), as_f32(&r)),
        (vec![2, 2], vec![0.0, 1.0, 4.0, 5.0])
    );
    let last = attrs(&[("axes", int_array(&[-1]))]);
    let r = run("slice_like", Some(&last), &[x.clone(), like]);
    assert_eq!(shape(&r), vec![3, 2]);
    let bigger = f32s(&[4, 4], &[0.0; 16]);
    assert!(eval_call(&CallInfo::new("slice_like", Some(&all)), &[x, bigger]).is_err());
}

/// Kernels whose result size comes from their arguments check it against
/// the call's limit before allocating.
#[test]
fn sizes_over_the_limit_are_refused() {
    let a = attrs(&[("dtype", AttrValue::DataType(DataType::FLOAT32))]);
    let err = run_err(
        "arange",
        Some(&a),
        &[f32s(&[], &[0.0]), f32s(&[], &[1e8]), f32s(&[], &[1.0])],
    );
    assert!(matches!(err, EvalError::TooLarge(_)), "{err:?}");
    let big = ints("int8", &[3], &[1, 2, 3]);
    let row = ints("int8", &[3, 1], &[1, 2, 3]);
    let call = CallInfo {
        max_elements: 8,
        ..CallInfo::new("add", None)
    };
    let err = eval_call(&call, &[big, row]).unwrap_err();
    assert!(matches!(err, EvalError::TooLarge(_)), "{err:?}");
}

#[test]
fn prelu_slopes_per_channel() {
    // Channels on axis 1 of (1, 2, 2): slopes 0.5 and -3.
    let x = f32s(&[1, 2, 2], &[-2.0, 4.0, -1.0, 0.0]);
    let alpha = f32s(&[2], &[0.5, -3.0]);
    let r = run("nn.prelu", None, &[x, alpha]);
    assert_eq!(as_f32(&r), vec![-1.0, 4.0, 3.0, -0.0]);
    // Integers multiply with wraparound, as TVM's compute does.
    let x = ints("int8", &[2, 1], &[-100, 7]);
    let alpha = ints("int8", &[1], &[3]);
    let a = attrs(&[("axis", AttrValue::Int(1))]);
    let r = run("nn.prelu", Some(&a), &[x, alpha]);
    assert_eq!(as_ints(&r), vec![-44, 7]);
    let bad = f32s(&[3], &[1.0, 2.0, 3.0]);
    assert!(matches!(
        run_err("nn.prelu", Some(&a), &[bad.clone(), bad]),
        EvalError::Unsupported(_)
    ));
}
