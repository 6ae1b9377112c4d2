//! Tests of the vision (`vision_nms`, `vision_roi`, `vision_ssd`) and
//! signal kernels, with values worked out by hand from TOPI's definitions
//! (and, for NMS, the expectations of TVM's `test_op_level5.py`).

use super::{eval_call, CallInfo, EvalError, Value};
use crate::test_util::{attrs, floats, ints, run, run_err};
use relay_ir::dtype::DataType;
use relay_ir::AttrValue;

fn f32s(shape: &[i64], v: &[f64]) -> Value {
    floats("float32", shape, v)
}

/// The shape and elements of a tensor value (integers as `f64`).
fn values(v: &Value) -> (Vec<i64>, Vec<f64>) {
    let t = v.as_tensor().unwrap();
    (t.shape.clone(), t.to_f64_vec().unwrap())
}

fn field(v: &Value, i: usize) -> (Vec<i64>, Vec<f64>) {
    values(&v.as_tuple().unwrap()[i])
}

fn int(v: i64) -> AttrValue {
    AttrValue::Int(v)
}

fn boolean(v: bool) -> AttrValue {
    AttrValue::Bool(v)
}

fn float_list(v: &[f64]) -> AttrValue {
    AttrValue::Array(
        v.iter()
            .map(|&x| AttrValue::FloatImm {
                value: x,
                dtype: DataType::FLOAT32,
            })
            .collect(),
    )
}

// ---- get_valid_counts ----

fn detection_boxes() -> Value {
    f32s(
        &[1, 4, 6],
        &[
            0.0, 0.9, 1.0, 1.0, 2.0, 2.0, //
            1.0, 0.1, 1.0, 1.0, 2.0, 2.0, //
            -1.0, 0.8, 1.0, 1.0, 2.0, 2.0, //
            2.0, 0.6, 3.0, 3.0, 4.0, 4.0,
        ],
    )
}

#[test]
fn get_valid_counts_moves_boxes_above_the_threshold_up() {
    let out = run(
        "vision.get_valid_counts",
        &[("id_index", int(0)), ("score_index", int(1))],
        &[detection_boxes(), f32s(&[], &[0.5])],
    );
    assert_eq!(field(&out, 0), (vec![1], vec![2.0]));
    let (shape, boxes) = field(&out, 1);
    assert_eq!(shape, vec![1, 4, 6]);
    assert_eq!(&boxes[..6], &[0.0, 0.9f32 as f64, 1.0, 1.0, 2.0, 2.0]);
    assert_eq!(&boxes[6..12], &[2.0, 0.6f32 as f64, 3.0, 3.0, 4.0, 4.0]);
    assert!(boxes[12..].iter().all(|&v| v == -1.0));
    assert_eq!(field(&out, 2), (vec![1, 4], vec![0.0, 3.0, -1.0, -1.0]));
}

#[test]
fn get_valid_counts_without_a_class_id_and_with_the_threshold_attribute() {
    // id_index -1 keeps the box of class -1; the attribute wins over the argument.
    let out = run(
        "vision.get_valid_counts",
        &[
            ("id_index", int(-1)),
            ("score_index", int(1)),
            ("score_threshold", AttrValue::Double(0.5)),
        ],
        &[detection_boxes(), f32s(&[], &[0.95])],
    );
    assert_eq!(field(&out, 0), (vec![1], vec![3.0]));
    assert_eq!(field(&out, 2), (vec![1, 4], vec![0.0, 2.0, 3.0, -1.0]));
}

// ---- non_max_suppression: test_op_level5.py::test_non_max_suppression ----

fn nms_args(max_output_size: i64) -> Vec<Value> {
    vec![
        f32s(
            &[1, 5, 6],
            &[
                0.0, 0.8, 1.0, 20.0, 25.0, 45.0, //
                1.0, 0.7, 30.0, 60.0, 50.0, 80.0, //
                0.0, 0.4, 4.0, 21.0, 19.0, 40.0, //
                2.0, 0.9, 35.0, 61.0, 52.0, 79.0, //
                1.0, 0.5, 100.0, 60.0, 70.0, 110.0,
            ],
        ),
        ints("int32", &[1], &[4]),
        ints("int32", &[1, 5], &[0, 1, 3, 4, -1]),
        ints("int32", &[], &[max_output_size]),
        f32s(&[], &[0.5]),
    ]
}

fn nms_expected_boxes() -> Vec<f64> {
    let mut v = vec![2.0, 0.9f32 as f64, 35.0, 61.0, 52.0, 79.0];
    v.extend([0.0, 0.8f32 as f64, 1.0, 20.0, 25.0, 45.0]);
    v.extend([-1.0; 18]);
    v
}

#[test]
fn nms_with_top_k_and_force_suppress() {
    let fields = [("force_suppress", boolean(true)), ("top_k", int(2))];
    let boxes = run(
        "vision.non_max_suppression",
        &[&fields[..], &[("return_indices", boolean(false))]].concat(),
        &nms_args(-1),
    );
    assert_eq!(values(&boxes), (vec![1, 5, 6], nms_expected_boxes()));
    let indices = run(
        "vision.non_max_suppression",
        &[&fields[..], &[("return_indices", boolean(true))]].concat(),
        &nms_args(-1),
    );
    assert_eq!(
        field(&indices, 0),
        (vec![1, 5], vec![4.0, 0.0, -1.0, -1.0, -1.0])
    );
    assert_eq!(field(&indices, 1), (vec![1, 1], vec![2.0]));
}

#[test]
fn nms_with_max_output_size() {
    let boxes = run(
        "vision.non_max_suppression",
        &[("return_indices", boolean(false))],
        &nms_args(2),
    );
    assert_eq!(values(&boxes), (vec![1, 5, 6], nms_expected_boxes()));
    let indices = run("vision.non_max_suppression", &[], &nms_args(2));
    assert_eq!(
        field(&indices, 0),
        (vec![1, 5], vec![4.0, 0.0, -1.0, -1.0, -1.0])
    );
}

#[test]
fn nms_suppresses_overlapping_boxes_of_a_class_and_moves_the_rest_up() {
    // Two boxes of class 0 overlapping with IoU 1/3 (≥ 0.3); the lower one goes.
    let data = f32s(
        &[1, 3, 6],
        &[
            0.0, 0.5, 0.0, 0.0, 2.0, 2.0, //
            0.0, 0.9, 1.0, 0.0, 3.0, 2.0, //
            1.0, 0.7, 0.0, 0.0, 2.0, 2.0,
        ],
    );
    let args = vec![
        data,
        ints("int32", &[1], &[3]),
        ints("int32", &[1, 3], &[0, 1, 2]),
        ints("int32", &[], &[-1]),
        f32s(&[], &[0.3]),
    ];
    let plain = run(
        "vision.non_max_suppression",
        &[("return_indices", boolean(false))],
        &args,
    );
    let (_, v) = values(&plain);
    assert_eq!(v[0..2], [0.0, 0.9f32 as f64]);
    assert_eq!(v[6..8], [1.0, 0.7f32 as f64]);
    assert!(v[12..].iter().all(|&x| x == -1.0));
    // IoU exactly 1/3 is not suppressed at a threshold above it.
    let mut loose = args.clone();
    loose[4] = f32s(&[], &[0.34]);
    let (_, v) = values(&run(
        "vision.non_max_suppression",
        &[("return_indices", boolean(false))],
        &loose,
    ));
    assert_eq!(v[12..14], [0.0, 0.5]);
    // invalid_to_bottom moves nothing here (the suppressed box is last) …
    let bottom = run(
        "vision.non_max_suppression",
        &[
            ("return_indices", boolean(false)),
            ("invalid_to_bottom", boolean(true)),
        ],
        &args,
    );
    assert_eq!(values(&bottom), values(&plain));
    // … but force_suppress also removes the class-1 box, and moves nothing up.
    let forced = run(
        "vision.non_max_suppression",
        &[("force_suppress", boolean(true))],
        &args,
    );
    assert_eq!(field(&forced, 0).1, vec![1.0, -1.0, -1.0]);
    assert_eq!(field(&forced, 1).1, vec![1.0]);
    // A zero IoU threshold keeps the boxes in their order.
    let mut off = args.clone();
    off[4] = f32s(&[], &[0.0]);
    let kept = run("vision.non_max_suppression", &[], &off);
    assert_eq!(field(&kept, 0).1, vec![0.0, 1.0, 2.0]);
}

#[test]
fn nms_is_not_folded_where_tvm_is_undefined() {
    let mut args = nms_args(-1);
    args[1] = ints("int32", &[1], &[6]);
    assert!(matches!(
        run_err("vision.non_max_suppression", &[], &args),
        EvalError::Unsupported(_)
    ));
    let mut args = nms_args(-1);
    args[0] = floats("float16", &[1, 5, 6], &[0.0; 30]);
    assert!(matches!(
        run_err("vision.non_max_suppression", &[], &args),
        EvalError::Unsupported(_)
    ));
}

// ---- roi_align / roi_pool ----

fn ramp_2x2(nhwc: bool) -> Value {
    // f(y, x) = 1 + x + 2y on a 2×2 map: bilinear sampling is exact.
    f32s(
        if nhwc { &[1, 2, 2, 1] } else { &[1, 1, 2, 2] },
        &[1.0, 2.0, 3.0, 4.0],
    )
}

fn roi_align_attrs(layout: &str, mode: &str, sample_ratio: i64) -> Vec<(&'static str, AttrValue)> {
    vec![
        ("pooled_size", AttrValue::Array(vec![int(1), int(1)])),
        ("spatial_scale", AttrValue::Double(1.0)),
        ("sample_ratio", int(sample_ratio)),
        ("layout", AttrValue::Str(layout.to_string())),
        ("mode", AttrValue::Str(mode.to_string())),
    ]
}

#[test]
fn roi_align_averages_or_takes_the_maximum_of_bilinear_samples() {
    for (layout, nhwc) in [("NCHW", false), ("NHWC", true)] {
        let align = |mode: &str, ratio: i64, roi: [f64; 5]| {
            values(&run(
                "vision.roi_align",
                &roi_align_attrs(layout, mode, ratio),
                &[ramp_2x2(nhwc), f32s(&[1, 5], &roi)],
            ))
            .1[0]
        };
        // Samples at 0.25 and 0.75: 1.75, 2.25, 2.75, 3.25.
        assert_eq!(align("avg", 2, [0.0, 0.0, 0.0, 1.0, 1.0]), 2.5, "{layout}");
        assert_eq!(align("max", 2, [0.0, 0.0, 0.0, 1.0, 1.0]), 3.25, "{layout}");
        // Adaptive grid: one sample at the centre.
        assert_eq!(align("avg", -1, [0.0, 0.0, 0.0, 1.0, 1.0]), 2.5, "{layout}");
        // On the last row and column: that pixel.
        assert_eq!(align("avg", -1, [0.0, 1.0, 1.0, 2.0, 2.0]), 4.0, "{layout}");
        // More than a pixel outside: nothing.
        assert_eq!(align("avg", -1, [0.0, 5.0, 5.0, 6.0, 6.0]), 0.0, "{layout}");
    }
}

#[test]
fn roi_align_nhwc_output_is_channels_last() {
    let data = f32s(&[1, 2, 2, 2], &[1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0]);
    let out = run(
        "vision.roi_align",
        &roi_align_attrs("NHWC", "avg", 2),
        &[data, f32s(&[1, 5], &[0.0, 0.0, 0.0, 1.0, 1.0])],
    );
    assert_eq!(values(&out), (vec![1, 1, 1, 2], vec![2.5, 25.0]));
}

#[test]
fn roi_align_rejects_a_roi_past_tvms_sample_buffer() {
    // The adaptive grid of a ROI larger than the map overflows TVM's x86 buffer.
    let err = run_err(
        "vision.roi_align",
        &roi_align_attrs("NCHW", "avg", -1),
        &[ramp_2x2(false), f32s(&[1, 5], &[0.0, 0.0, 0.0, 8.0, 8.0])],
    );
    assert!(err.to_string().contains("room"), "{err}");
}

fn roi_pool(roi: [f64; 5], scale: f64) -> Vec<f64> {
    let data: Vec<f64> = (0..9).map(f64::from).collect();
    values(&run(
        "vision.roi_pool",
        &[
            ("pooled_size", AttrValue::Array(vec![int(2), int(2)])),
            ("spatial_scale", AttrValue::Double(scale)),
            ("layout", AttrValue::Str("NCHW".to_string())),
        ],
        &[f32s(&[1, 1, 3, 3], &data), f32s(&[1, 5], &roi)],
    ))
    .1
}

#[test]
fn roi_pool_takes_bin_maxima() {
    // Bins of 1.5 rows: rows 0..2 and 1..3 (the 1e-5 margin), likewise columns.
    assert_eq!(
        roi_pool([0.0, 0.0, 0.0, 2.0, 2.0], 1.0),
        vec![4.0, 5.0, 7.0, 8.0]
    );
    // Corners 0.5 and 1.5 round away from zero, to 1 and 2.
    assert_eq!(
        roi_pool([0.0, 1.0, 1.0, 3.0, 3.0], 0.5),
        vec![4.0, 5.0, 7.0, 8.0]
    );
    // Outside the map every bin is empty: 0.
    assert_eq!(roi_pool([0.0, 10.0, 10.0, 12.0, 12.0], 1.0), vec![0.0; 4]);
}

// ---- multibox ----

#[test]
fn multibox_prior_places_anchors_at_cell_centres() {
    let data = f32s(&[1, 1, 2, 2], &[0.0; 4]);
    let out = run(
        "vision.multibox_prior",
        &[
            ("sizes", float_list(&[0.5])),
            ("ratios", float_list(&[1.0])),
        ],
        std::slice::from_ref(&data),
    );
    assert_eq!(
        values(&out),
        (
            vec![1, 4, 4],
            vec![
                0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 1.0, 0.5, //
                0.0, 0.5, 0.5, 1.0, 0.5, 0.5, 1.0, 1.0,
            ]
        )
    );
    let out = run(
        "vision.multibox_prior",
        &[
            ("sizes", float_list(&[0.5, 0.25])),
            ("ratios", float_list(&[1.0, 4.0])),
            ("clip", boolean(true)),
        ],
        &[data],
    );
    let (shape, v) = values(&out);
    assert_eq!(shape, vec![1, 12, 4]);
    assert_eq!(
        &v[..12],
        &[0.0, 0.0, 0.5, 0.5, 0.125, 0.125, 0.375, 0.375, 0.0, 0.125, 0.75, 0.375]
    );
}

#[test]
fn multibox_transform_loc_decodes_boxes() {
    let cls = f32s(&[1, 2, 2], &[0.2, 0.4, 0.8, 0.6]);
    let loc = f32s(&[1, 8], &[1.0, -1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0]);
    let anchor = f32s(
        &[1, 2, 4],
        &[0.25, 0.25, 0.75, 0.75, 0.25, 0.25, 0.75, 0.75],
    );
    let out = run(
        "vision.multibox_transform_loc",
        &[("variances", float_list(&[0.5, 0.5, 0.5, 0.5]))],
        &[cls.clone(), loc.clone(), anchor.clone()],
    );
    let (shape, v) = field(&out, 0);
    assert_eq!(shape, vec![1, 2, 6]);
    assert_eq!(&v[..6], &[0.0, 0.8f32 as f64, 0.5, 0.0, 1.0, 0.5]);
    // ox = 2 · 0.5 · 0.5 + 0.5 = 1: x2 = 1.25 is clipped to 1.
    assert_eq!(&v[6..], &[0.0, 0.6f32 as f64, 0.75, 0.25, 1.0, 0.75]);
    assert_eq!(field(&out, 1), (vec![1], vec![2.0]));
    let unclipped = run(
        "vision.multibox_transform_loc",
        &[
            ("variances", float_list(&[0.5, 0.5, 0.5, 0.5])),
            ("clip", boolean(false)),
        ],
        &[cls, loc.clone(), anchor.clone()],
    );
    assert_eq!(field(&unclipped, 0).1[10], 1.25);
    // An anchor under the threshold leaves a row TVM never writes.
    let low = f32s(&[1, 2, 2], &[0.2, 0.4, 0.8, 0.001]);
    assert!(matches!(
        run_err("vision.multibox_transform_loc", &[], &[low, loc, anchor]),
        EvalError::Unsupported(_)
    ));
}

// ---- signal ----

#[test]
fn dft_of_an_impulse_is_flat() {
    let out = run(
        "dft",
        &[("inverse", boolean(false))],
        &[f32s(&[4], &[1.0, 0.0, 0.0, 0.0]), f32s(&[4], &[0.0; 4])],
    );
    assert_eq!(field(&out, 0), (vec![4], vec![1.0; 4]));
    assert_eq!(field(&out, 1), (vec![4], vec![0.0; 4]));
    // The inverse of a constant: the mean at 0, (nearly) nothing elsewhere.
    let out = run(
        "dft",
        &[("inverse", boolean(true))],
        &[f32s(&[1, 4], &[2.0; 4]), f32s(&[1, 4], &[0.0; 4])],
    );
    let (_, re) = field(&out, 0);
    assert_eq!(re[0], 2.0);
    assert!(re[1..].iter().all(|v| v.abs() < 1e-6), "{re:?}");
}

#[test]
fn stft_sums_windowed_frames() {
    let out = run(
        "stft",
        &[
            ("n_fft", int(2)),
            ("hop_length", int(2)),
            ("win_length", int(2)),
            ("normalized", boolean(false)),
            ("onesided", boolean(true)),
        ],
        &[
            f32s(&[1, 4], &[1.0, 2.0, 3.0, 4.0]),
            f32s(&[2], &[1.0, 1.0]),
        ],
    );
    let (shape, v) = values(&out);
    assert_eq!(shape, vec![1, 2, 2, 2]);
    // Row 0: the frame sums; row 1: x0 - x1 (cos π is -1 in float32).
    assert_eq!([v[0], v[1], v[2], v[3]], [3.0, 0.0, 7.0, 0.0]);
    assert_eq!([v[4], v[6]], [-1.0, -1.0]);
    // −x1 · sin(π as float32): a tiny positive imaginary part.
    assert!(v[5] > 0.0 && v[5] < 1e-6, "{v:?}");
    // A 1-D signal is not compiled by TVM's stft.
    assert!(matches!(
        run_err(
            "stft",
            &[
                ("n_fft", int(2)),
                ("hop_length", int(2)),
                ("win_length", int(2))
            ],
            &[f32s(&[4], &[1.0, 2.0, 3.0, 4.0]), f32s(&[2], &[1.0, 1.0])],
        ),
        EvalError::Unsupported(_)
    ));
}

// ---- correlation ----

fn correlation(dtype: &str, channels: i64, values_: &[f64], is_multiply: bool) -> Vec<Vec<f64>> {
    let data = floats(dtype, &[1, channels, 2, 2], values_);
    let out = run(
        "nn.correlation",
        &[
            ("kernel_size", int(1)),
            ("max_displacement", int(1)),
            ("stride1", int(1)),
            ("stride2", int(1)),
            ("padding", AttrValue::Array(vec![int(1), int(1)])),
            ("is_multiply", boolean(is_multiply)),
            ("layout", AttrValue::Str("NCHW".to_string())),
        ],
        &[data.clone(), data],
    );
    let (shape, v) = values(&out);
    assert_eq!(shape, vec![1, 9, 2, 2]);
    v.chunks(4).map(<[f64]>::to_vec).collect()
}

#[test]
fn correlation_multiplies_or_subtracts_displaced_pixels() {
    let q = correlation("float32", 1, &[1.0, 2.0, 3.0, 4.0], true);
    assert_eq!(q[4], vec![1.0, 4.0, 9.0, 16.0], "no displacement");
    assert_eq!(
        q[5],
        vec![2.0, 0.0, 12.0, 0.0],
        "one column right, zero padding"
    );
    let q = correlation("float32", 1, &[1.0, 2.0, 3.0, 4.0], false);
    assert_eq!(q[4], vec![0.0; 4]);
    assert_eq!(q[5], vec![1.0, 2.0, 1.0, 4.0]);
    // Integers divide by kernel_size² · C = 2, truncating.
    let q = correlation("int32", 2, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], true);
    assert_eq!(q[4], vec![13.0, 20.0, 29.0, 40.0]);
}

// ---- deformable_conv2d ----

fn deformable(
    layout: &str,
    data: Value,
    offset: Value,
    weight: Value,
    padding: i64,
) -> (Vec<i64>, Vec<f64>) {
    values(&run(
        "nn.deformable_conv2d",
        &[
            ("strides", AttrValue::Array(vec![int(1), int(1)])),
            (
                "padding",
                AttrValue::Array(vec![int(padding), int(padding)]),
            ),
            ("dilation", AttrValue::Array(vec![int(1), int(1)])),
            ("deformable_groups", int(1)),
            ("groups", int(1)),
            ("data_layout", AttrValue::Str(layout.to_string())),
        ],
        &[data, offset, weight],
    ))
}

#[test]
fn deformable_conv2d_samples_at_the_offsets() {
    // f(y, x) = 3y + x: a half-pixel offset samples 3y + x + 2 inside the map.
    let ramp: Vec<f64> = (0..9).map(f64::from).collect();
    let half = vec![0.5; 18];
    let nchw = deformable(
        "NCHW",
        f32s(&[1, 1, 3, 3], &ramp),
        f32s(&[1, 2, 3, 3], &half),
        f32s(&[1, 1, 1, 1], &[1.0]),
        0,
    );
    assert_eq!(nchw.0, vec![1, 1, 3, 3]);
    assert_eq!(nchw.1[0..2], [2.0, 3.0]);
    assert_eq!(nchw.1[3], 5.0);
    // At (2.5, 2.5) only the corner (2, 2) is inside: 8 · 0.25.
    assert_eq!(nchw.1[8], 2.0);
    let nhwc = deformable(
        "NHWC",
        f32s(&[1, 3, 3, 1], &ramp),
        f32s(&[1, 3, 3, 2], &half),
        f32s(&[1, 1, 1, 1], &[1.0]),
        0,
    );
    assert_eq!(nhwc, (vec![1, 3, 3, 1], nchw.1.clone()));
    // An offset of -1 row at the top row samples outside: 0.
    let mut up = vec![0.0; 18];
    up[0] = -1.0;
    let (_, v) = deformable(
        "NCHW",
        f32s(&[1, 1, 3, 3], &ramp),
        f32s(&[1, 2, 3, 3], &up),
        f32s(&[1, 1, 1, 1], &[1.0]),
        0,
    );
    assert_eq!(v[..3], [0.0, 1.0, 2.0]);
}

#[test]
fn deformable_conv2d_without_offsets_is_a_convolution() {
    let data: Vec<f64> = (0..32).map(|v| f64::from(v % 7) - 3.0).collect();
    let weight: Vec<f64> = (0..36).map(|v| f64::from(v % 5) - 2.0).collect();
    let (shape, deformed) = deformable(
        "NCHW",
        f32s(&[1, 2, 4, 4], &data),
        f32s(&[1, 18, 4, 4], &[0.0; 288]),
        f32s(&[2, 2, 3, 3], &weight),
        1,
    );
    let conv = run(
        "nn.conv2d",
        &[
            ("strides", AttrValue::Array(vec![int(1), int(1)])),
            (
                "padding",
                AttrValue::Array(vec![int(1), int(1), int(1), int(1)]),
            ),
            ("dilation", AttrValue::Array(vec![int(1), int(1)])),
            ("groups", int(1)),
            ("data_layout", AttrValue::Str("NCHW".to_string())),
            ("kernel_layout", AttrValue::Str("OIHW".to_string())),
        ],
        &[f32s(&[1, 2, 4, 4], &data), f32s(&[2, 2, 3, 3], &weight)],
    );
    assert_eq!((shape, deformed), values(&conv));
}

// ---- grid_sample ----

fn grid_sample(method: &str, padding: &str, align: bool, gx: f64, gy: f64) -> f64 {
    let out = run(
        "image.grid_sample",
        &[
            ("method", AttrValue::Str(method.to_string())),
            ("layout", AttrValue::Str("NCHW".to_string())),
            ("padding_mode", AttrValue::Str(padding.to_string())),
            ("align_corners", boolean(align)),
        ],
        &[
            f32s(&[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]),
            f32s(&[1, 2, 1, 1], &[gx, gy]),
        ],
    );
    values(&out).1[0]
}

#[test]
fn grid_sample_reads_corners_exactly_with_align_corners() {
    for method in ["bilinear", "nearest", "bicubic"] {
        let corners: Vec<f64> = [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)]
            .iter()
            .map(|&(x, y)| grid_sample(method, "zeros", true, x, y))
            .collect();
        assert_eq!(corners, vec![1.0, 2.0, 3.0, 4.0], "{method}");
    }
}

#[test]
fn grid_sample_padding_modes() {
    // The centre is (0.5, 0.5) either way.
    assert_eq!(grid_sample("bilinear", "zeros", true, 0.0, 0.0), 2.5);
    assert_eq!(grid_sample("bilinear", "zeros", false, 0.0, 0.0), 2.5);
    // Nearest rounds 0.5 to even: pixel (0, 0).
    assert_eq!(grid_sample("nearest", "zeros", true, 0.0, 0.0), 1.0);
    // (2, 2) maps to (1.5, 1.5): a quarter of pixel (1, 1), the pixel
    // itself when clamped, and (0.5, 0.5) when mirrored.
    assert_eq!(grid_sample("bilinear", "zeros", true, 2.0, 2.0), 1.0);
    assert_eq!(grid_sample("bilinear", "border", true, 2.0, 2.0), 4.0);
    assert_eq!(grid_sample("bilinear", "reflection", true, 2.0, 2.0), 2.5);
    // Without align_corners (2, 2) maps to 2.5, mirrored about 1.5 to 0.5.
    assert_eq!(grid_sample("bilinear", "reflection", false, 2.0, 2.0), 2.5);
    // Bicubic with border: the taps clamp to the last pixel.
    assert_eq!(grid_sample("bicubic", "border", true, 3.0, 3.0), 4.0);
}

#[test]
fn grid_sample_3d_is_trilinear() {
    let data: Vec<f64> = (1..=8).map(f64::from).collect();
    let sample = |g: [f64; 3], method: &str| {
        values(&run(
            "image.grid_sample",
            &[
                ("method", AttrValue::Str(method.to_string())),
                ("layout", AttrValue::Str("NCDHW".to_string())),
                ("padding_mode", AttrValue::Str("zeros".to_string())),
                ("align_corners", boolean(true)),
            ],
            &[f32s(&[1, 1, 2, 2, 2], &data), f32s(&[1, 3, 1, 1, 1], &g)],
        ))
        .1[0]
    };
    assert_eq!(sample([1.0, 1.0, 1.0], "bilinear"), 8.0);
    assert_eq!(
        sample([1.0, -1.0, -1.0], "bilinear"),
        2.0,
        "x is the grid's first field"
    );
    assert_eq!(sample([0.0, 0.0, 0.0], "bilinear"), 4.5);
    assert_eq!(sample([0.0, 0.0, 0.0], "nearest"), 1.0);
}

// ---- all_class_non_max_suppression: test_op_level5.py ----

fn all_class_nms(
    format: &str,
    boxes: Value,
    scores: Value,
    max_out: i64,
    iou: f64,
    score: f64,
) -> Result<Value, EvalError> {
    let a = attrs(&[("output_format", AttrValue::Str(format.to_string()))]);
    eval_call(
        &CallInfo::new("vision.all_class_non_max_suppression", Some(&a)),
        &[
            boxes,
            scores,
            ints("int64", &[], &[max_out]),
            f32s(&[], &[iou]),
            f32s(&[], &[score]),
        ],
    )
}

#[test]
fn all_class_nms_selects_per_class() {
    let boxes = f32s(
        &[2, 5, 4],
        &[
            0.0, 0.0, 0.3, 0.3, 0.0, 0.0, 0.4, 0.4, 0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 0.9, 0.9, //
            0.5, 0.5, 1.0, 1.0, 0.0, 0.0, 0.3, 0.3, 0.0, 0.0, 0.4, 0.4, 0.5, 0.5, 0.95,
            0.95, //
            0.5, 0.5, 0.96, 0.96, 0.5, 0.5, 1.0, 1.0,
        ],
    );
    let row = [0.1, 0.2, 0.6, 0.3, 0.9];
    let scores = f32s(&[2, 2, 5], &[row, row, row, row].concat());
    let out = all_class_nms("tensorflow", boxes.clone(), scores.clone(), 2, 0.8, 0.0).unwrap();
    let (shape, pairs) = field(&out, 0);
    assert_eq!(shape, vec![2, 10, 2]);
    // TVM's expectation [[0, 0, 4], [0, 0, 2], [0, 1, 4], [0, 1, 2], [1, 0, 4], [1, 0, 1], …].
    assert_eq!(pairs[..8], [0.0, 4.0, 0.0, 2.0, 1.0, 4.0, 1.0, 2.0]);
    assert!(pairs[8..20].iter().all(|&v| v == 0.0));
    assert_eq!(pairs[20..28], [0.0, 4.0, 0.0, 1.0, 1.0, 4.0, 1.0, 1.0]);
    assert_eq!(field(&out, 1).1[..2], [0.9f32 as f64, 0.6f32 as f64]);
    assert_eq!(field(&out, 2), (vec![2], vec![4.0, 4.0]));
    // ONNX rows past the selections are never written by TOPI: not folded.
    assert!(all_class_nms("onnx", boxes, scores, 2, 0.8, 0.0).is_err());
}

#[test]
fn all_class_nms_thresholds_and_onnx_rows() {
    let boxes = f32s(
        &[1, 6, 4],
        &[
            0.0, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.1, 0.0, -0.1, 1.0, 0.9, //
            0.0, 10.0, 1.0, 11.0, 0.0, 10.1, 1.0, 11.1, 0.0, 100.0, 1.0, 101.0,
        ],
    );
    let scores = f32s(&[1, 1, 6], &[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]);
    let out = all_class_nms("tensorflow", boxes.clone(), scores.clone(), 3, 0.5, 0.4).unwrap();
    assert_eq!(field(&out, 0).1[..4], [0.0, 3.0, 0.0, 0.0]);
    assert_eq!(field(&out, 2).1, vec![2.0]);
    // With every box selected the ONNX rows are all defined.
    let one = all_class_nms(
        "onnx",
        f32s(&[1, 1, 4], &[0.0, 0.0, 1.0, 1.0]),
        f32s(&[1, 1, 1], &[0.5]),
        0,
        0.5,
        0.0,
    )
    .unwrap();
    assert_eq!(field(&one, 0), (vec![1, 3], vec![0.0, 0.0, 0.0]));
    assert_eq!(field(&one, 1), (vec![1], vec![1.0]));
    // A non-positive IoU threshold selects nothing, as TOPI's loop does.
    let none = all_class_nms("tensorflow", boxes, scores, 3, 0.0, 0.4).unwrap();
    assert_eq!(field(&none, 2).1, vec![0.0]);
}
