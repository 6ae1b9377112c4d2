//! Tests of the `vision.proposal` kernel, with boxes, scores and NMS
//! results worked out by hand from TOPI's `vision/rcnn/proposal.py`.

use super::{EvalError, Value};
use crate::test_util::{floats, run, run_err};
use relay_ir::dtype::DataType;
use relay_ir::AttrValue;

fn f32s(shape: &[i64], v: &[f64]) -> Value {
    floats("float32", shape, v)
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

fn rows(v: &Value) -> (Vec<i64>, Vec<f64>) {
    let t = v.as_tensor().unwrap();
    (t.shape.clone(), t.to_f64_vec().unwrap())
}

fn attrs(
    scales: &[f64],
    ratios: &[f64],
    threshold: f64,
    pre: i64,
    post: i64,
    min_size: i64,
    iou_loss: bool,
) -> Vec<(&'static str, AttrValue)> {
    vec![
        ("scales", float_list(scales)),
        ("ratios", float_list(ratios)),
        ("feature_stride", AttrValue::Int(4)),
        ("threshold", AttrValue::Double(threshold)),
        ("rpn_pre_nms_top_n", AttrValue::Int(pre)),
        ("rpn_post_nms_top_n", AttrValue::Int(post)),
        ("rpn_min_size", AttrValue::Int(min_size)),
        ("iou_loss", AttrValue::Bool(iou_loss)),
    ]
}

/// One batch, a 2×2 map with stride 4 and one anchor (scale 1, ratio 1):
/// `generate_anchor` gives `[0, 0, 3, 3]` (a 4×4 box centred at 1.5), so the
/// cells' anchors are `[0,0,3,3]`, `[4,0,7,3]` (h 0, w 1), `[0,4,3,7]`
/// (h 1, w 0) and `[4,4,7,7]`. The image is 8×8 at scale 1, `rpn_min_size`
/// 2. Deltas (centre/size regression, `exp(0) = 1` keeps sizes):
/// - box 0 stays `[0, 0, 3, 3]`, score 0.6;
/// - box 1 moves by `dx = -0.25` of its width 4: centre 5.5 → 4.5, box
///   `[3, 0, 6, 3]`, score 0.9;
/// - box 2 moves by `dy = 1`: centre 5.5 → 9.5, `y` 8..11 clipped to
///   7..7, one pixel high (< 2): it grows by 1 on every side to
///   `[-1, 6, 4, 8]` and scores -1 (its 0.95 is dropped);
/// - box 3 stays `[4, 4, 7, 7]`, score 0.6 (ties with box 0: the stable sort
///   keeps box 0 first).
///
/// Sorted: 1, 0, 3, 2. IoU(1, 0) counts the shared column `x = 3`: 1×4
/// pixels over 16 + 16 − 4, i.e. 1/7 ≈ 0.143 (without the `+1` convention
/// it would be 0). IoU(3, 2): 1×2 over 16 + 18 − 2 = 0.0625; the other
/// pairs do not touch.
fn two_by_two() -> [Value; 3] {
    [
        f32s(
            &[1, 2, 2, 2],
            // Background channel (unused), then the foreground scores.
            &[0.99, 0.98, 0.97, 0.96, 0.6, 0.9, 0.95, 0.6],
        ),
        f32s(
            &[1, 4, 2, 2],
            &[
                0.0, -0.25, 0.0, 0.0, // dx
                0.0, 0.0, 1.0, 0.0, // dy
                0.0, 0.0, 0.0, 0.0, // dw
                0.0, 0.0, 0.0, 0.0, // dh
            ],
        ),
        f32s(&[1, 3], &[8.0, 8.0, 1.0]),
    ]
}

#[test]
fn proposal_decodes_clips_sorts_and_suppresses_with_the_plus_one_iou() {
    let args = two_by_two();
    // Threshold 0.1 < 1/7: box 1 removes box 0; boxes 1, 3, 2 are kept and
    // the 5 rows cycle through them.
    let out = run(
        "vision.proposal",
        &attrs(&[1.0], &[1.0], 0.1, -1, 5, 2, false),
        &args,
    );
    assert_eq!(
        rows(&out),
        (
            vec![5, 5],
            vec![
                0.0, 3.0, 0.0, 6.0, 3.0, //
                0.0, 4.0, 4.0, 7.0, 7.0, //
                0.0, -1.0, 6.0, 4.0, 8.0, //
                0.0, 3.0, 0.0, 6.0, 3.0, //
                0.0, 4.0, 4.0, 7.0, 7.0,
            ]
        )
    );
    // Threshold 0.15 > 1/7: nothing is removed, in score order.
    let out = run(
        "vision.proposal",
        &attrs(&[1.0], &[1.0], 0.15, -1, 5, 2, false),
        &args,
    );
    assert_eq!(
        rows(&out).1,
        vec![
            0.0, 3.0, 0.0, 6.0, 3.0, //
            0.0, 0.0, 0.0, 3.0, 3.0, //
            0.0, 4.0, 4.0, 7.0, 7.0, //
            0.0, -1.0, 6.0, 4.0, 8.0, //
            0.0, 3.0, 0.0, 6.0, 3.0,
        ]
    );
    // `rpn_pre_nms_top_n` 3 drops box 2 before NMS: boxes 1 and 3 remain.
    let out = run(
        "vision.proposal",
        &attrs(&[1.0], &[1.0], 0.1, 3, 5, 2, false),
        &args,
    );
    assert_eq!(
        rows(&out).1,
        vec![
            0.0, 3.0, 0.0, 6.0, 3.0, //
            0.0, 4.0, 4.0, 7.0, 7.0, //
            0.0, 3.0, 0.0, 6.0, 3.0, //
            0.0, 4.0, 4.0, 7.0, 7.0, //
            0.0, 3.0, 0.0, 6.0, 3.0,
        ]
    );
}

/// A 1×1 map, stride 4, ratio 0.5 and scales 1, 2 (anchor `k` takes scale
/// `k mod 2`). `generate_anchor(0.5, 1, 4)`: `floor(16 / 0.5) = 32`, width
/// `floor(√32 + 0.5) = 6`, height `floor(6 · 0.5 + 0.5) = 3`, around the
/// centre 1.5: `[-1, 0.5, 4, 2.5]`; with scale 2, width 12 and height
/// `floor(12 / 2 · 0.5 + 0.5) · 2 = 6`: `[-4, -1, 7, 4]`. With `iou_loss`
/// the deltas add to the corners: anchor 0 + `(1, 0.5, -1, -0.5)` =
/// `[0, 1, 3, 2]` (4×2, not under `rpn_min_size 1 · scale 2`), anchor 1
/// clipped to the 8×8 image: `[0, 0, 7, 4]`. IoU 8 / (40 + 8 − 8) = 0.2,
/// under 0.7: both kept, anchor 1 (0.7) before anchor 0 (0.3).
#[test]
fn proposal_iou_loss_moves_corners_of_each_scale_and_ratio() {
    let out = run(
        "vision.proposal",
        &attrs(&[1.0, 2.0], &[0.5], 0.7, -1, 3, 1, true),
        &[
            f32s(&[1, 4, 1, 1], &[0.5, 0.5, 0.3, 0.7]),
            f32s(&[1, 8, 1, 1], &[1.0, 0.5, -1.0, -0.5, 0.0, 0.0, 0.0, 0.0]),
            f32s(&[1, 3], &[8.0, 8.0, 2.0]),
        ],
    );
    assert_eq!(
        rows(&out),
        (
            vec![3, 5],
            vec![
                0.0, 0.0, 0.0, 7.0, 4.0, //
                0.0, 0.0, 1.0, 3.0, 2.0, //
                0.0, 0.0, 0.0, 7.0, 4.0,
            ]
        )
    );
}

fn unsupported_message(e: EvalError) -> String {
    match e {
        EvalError::Unsupported(m) => m,
        other => panic!("expected an unsupported call, got {other}"),
    }
}

#[test]
fn proposal_is_not_folded_where_tvm_reads_or_writes_out_of_bounds() {
    let fields = attrs(&[1.0], &[1.0], 0.1, -1, 5, 2, false);
    // Two batches: the sort's one-element valid count is read past its end.
    let [cls, deltas, _] = two_by_two();
    let twice = |v: &Value, shape: &[i64]| {
        let (_, mut x) = rows(v);
        x.extend(x.clone());
        f32s(shape, &x)
    };
    let batched = [
        twice(&cls, &[2, 2, 2, 2]),
        twice(&deltas, &[2, 4, 2, 2]),
        f32s(&[2, 3], &[8.0, 8.0, 1.0, 8.0, 8.0, 1.0]),
    ];
    let m = unsupported_message(run_err("vision.proposal", &fields, &batched));
    assert!(m.contains("several batches"), "{m}");
    // Two scales but one anchor's channels in the inputs.
    let m = unsupported_message(run_err(
        "vision.proposal",
        &attrs(&[1.0, 2.0], &[1.0], 0.1, -1, 5, 2, false),
        &two_by_two(),
    ));
    assert!(m.contains("shapes"), "{m}");
}

/// TVM's `test_op_level5.py::test_proposal`: a 3×3 map, stride 16, scale
/// and ratio 0.5, a 48×48 image; its expected rows (printed to ~8 digits,
/// hence the tolerance), with centre/size regression and with `iou_loss`.
#[test]
fn proposal_matches_tvms_test_op_level5_expectations() {
    let args = [
        f32s(
            &[1, 2, 3, 3],
            &[
                0.3, 0.6, 0.2, 0.4, 0.7, 0.5, 0.1, 0.4, 0.3, //
                0.7, 0.5, 0.3, 0.6, 0.4, 0.8, 0.9, 0.2, 0.5,
            ],
        ),
        f32s(
            &[1, 4, 3, 3],
            &[
                0.5, 1.0, 0.6, 0.8, 1.2, 2.0, 0.9, 1.0, 0.8, //
                0.5, 1.0, 0.7, 0.8, 1.2, 1.6, 2.1, 1.5, 0.7, //
                1.0, 0.5, 0.7, 1.5, 0.9, 1.6, 1.4, 1.5, 0.8, //
                1.0, 0.5, 0.6, 1.5, 0.9, 2.0, 1.8, 1.0, 0.9,
            ],
        ),
        f32s(&[1, 3], &[48.0, 48.0, 1.0]),
    ];
    let fields = |iou_loss| {
        let mut f = attrs(&[0.5], &[0.5], 0.7, 200, 4, 16, iou_loss);
        f[2] = ("feature_stride", AttrValue::Int(16));
        f
    };
    let expected_regression = [
        0.0, 0.0, 2.8451548, 28.38012, 18.154846, //
        0.0, 0.0, 15.354933, 41.96971, 41.245064, //
        0.0, 18.019852, 1.0538368, 51.98015, 25.946163, //
        0.0, 27.320923, -1.266357, 55.0, 24.666357,
    ];
    let expected_iou_loss = [
        0.0, -5.25, -2.5, 21.75, 19.0, //
        0.0, 11.25, -2.0, 37.25, 18.5, //
        0.0, 26.849998, -2.3000002, 53.45, 18.6, //
        0.0, -4.95, 13.799999, 22.25, 35.5,
    ];
    for (iou_loss, expected) in [(false, expected_regression), (true, expected_iou_loss)] {
        let (shape, got) = rows(&run("vision.proposal", &fields(iou_loss), &args));
        assert_eq!(shape, vec![4, 5]);
        for (g, e) in got.iter().zip(expected) {
            assert!(
                (g - e).abs() <= 1e-4 * e.abs().max(1.0),
                "iou_loss {iou_loss}: {got:?}"
            );
        }
    }
}
