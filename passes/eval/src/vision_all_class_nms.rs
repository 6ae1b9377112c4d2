//! `vision.all_class_non_max_suppression` (ONNX `NonMaxSuppression`,
//! TensorFlow's combined NMS): TOPI's `all_class_non_max_suppression` with
//! the IR of `topi/vision/nms_util.py`, in `float32`.
//!
//! Each (batch, class) row of scores is sorted descending
//! (`tvm.contrib.sort.argsort`, a stable sort), the boxes scoring above
//! `score_threshold` are kept (TOPI's binary search over the sorted row),
//! and the greedy loop selects a box still above `-1`, then marks every
//! later box with a positive score whose IoU (the same `float32` formula as
//! `non_max_suppression`) reaches `iou_threshold`, until
//! `max_output_boxes_per_class` (all when not positive) are selected; with
//! `iou_threshold <= 0` nothing is selected, as in TOPI. `onnx` output is
//! the `[batch, class, box]` rows of the selections then their total;
//! TOPI leaves the rows past the total unwritten, so an `onnx` call that
//! does not select every box has no defined value and is not folded.
//! `tensorflow` output is per batch `[class, box]` pairs and scores, class
//! by class, zero-filled, and the per-batch totals. Selection and copies
//! only: exact.

use super::vision_nms::{argsort_valid, corners, iou};
use super::vision_util::{f32_scalar, f32_tensor, f32_values, int_scalar, int_tensor};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "vision.all_class_non_max_suppression" => all_class_nms,
        _ => return None,
    })
}

/// The selected boxes of one (batch, class) row: their indices and scores.
fn select(
    boxes: &[f32],
    scores: &[f32],
    max_out: i64,
    iou_threshold: f32,
    score_threshold: f32,
) -> EvalResult<(Vec<i64>, Vec<f32>)> {
    let order = argsort_valid(scores, scores.len(), "vision.all_class_non_max_suppression")?;
    let mut sorted: Vec<f32> = order.iter().map(|&i| scores[i]).collect();
    // The binary search's count of scores above the threshold.
    let (mut lo, mut hi) = (0usize, sorted.len());
    while lo < hi {
        let mid = (lo + hi) >> 1;
        if sorted[mid] > score_threshold {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let valid = lo;
    let limit = if max_out > 0 { max_out as usize } else { valid };
    let (mut indices, mut selected) = (Vec::new(), Vec::new());
    let positive = iou_threshold > 0.0;
    if !positive || valid == 0 {
        return Ok((indices, selected));
    }
    let corners_of = |j: usize| corners(&boxes[order[j] * 4..order[j] * 4 + 4], 0);
    let mut j = 0;
    while j < valid && indices.len() < limit {
        if sorted[j] > -1.0 {
            indices.push(order[j] as i64);
            selected.push(sorted[j]);
            let a = corners_of(j);
            for (k, score) in sorted.iter_mut().enumerate().take(valid).skip(j + 1) {
                if *score > 0.0 && iou(a, corners_of(k)) >= iou_threshold {
                    *score = -1.0;
                }
            }
        }
        j += 1;
    }
    Ok((indices, selected))
}

fn all_class_nms(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 5, call)?;
    let boxes_t = arg_tensor(args, 0, call)?;
    let scores_t = arg_tensor(args, 1, call)?;
    let (batch, classes, num) = match *scores_t.shape.as_slice() {
        [b, c, n] if b >= 0 && c >= 0 && n >= 0 => (b as usize, c as usize, n as usize),
        _ => return unsupported("vision.all_class_non_max_suppression: the scores are not 3-D"),
    };
    if boxes_t.shape != [batch as i64, num as i64, 4] {
        return unsupported(
            "vision.all_class_non_max_suppression: the boxes do not match the scores",
        );
    }
    let boxes = f32_values(boxes_t, "the boxes")?;
    let scores = f32_values(scores_t, "the scores")?;
    let max_out = int_scalar(arg_tensor(args, 2, call)?, "max_output_boxes_per_class")?;
    let iou_threshold = f32_scalar(arg_tensor(args, 3, call)?, "iou_threshold")?;
    let score_threshold = f32_scalar(arg_tensor(args, 4, call)?, "score_threshold")?;
    let tensorflow = match call.str("output_format").unwrap_or("onnx") {
        "onnx" => false,
        "tensorflow" => true,
        other => {
            return unsupported(format!(
                "vision.all_class_non_max_suppression: format {other}"
            ))
        }
    };
    let mut rows = Vec::with_capacity(batch * classes);
    for b in 0..batch {
        for c in 0..classes {
            rows.push(select(
                &boxes[b * num * 4..(b + 1) * num * 4],
                &scores[(b * classes + c) * num..][..num],
                max_out,
                iou_threshold,
                score_threshold,
            )?);
        }
    }
    if !tensorflow {
        let total: usize = rows.iter().map(|(i, _)| i.len()).sum();
        if total != batch * classes * num {
            return unsupported(
                "vision.all_class_non_max_suppression: TOPI leaves the onnx rows past the selections unwritten",
            );
        }
        let mut out = Vec::with_capacity(total * 3);
        for (row, (indices, _)) in rows.iter().enumerate() {
            for &i in indices {
                out.extend([(row / classes) as i64, (row % classes) as i64, i]);
            }
        }
        return Ok(Value::Tuple(vec![
            Value::tensor(int_tensor(DataType::INT64, vec![total as i64, 3], &out)?),
            Value::tensor(int_tensor(DataType::INT64, vec![1], &[total as i64])?),
        ]));
    }
    let per_batch = classes * num;
    let mut pairs = vec![0i64; batch * per_batch * 2];
    let mut kept = vec![0.0f32; batch * per_batch];
    let mut totals = Vec::with_capacity(batch);
    for b in 0..batch {
        let mut at = 0usize;
        for c in 0..classes {
            let (indices, selected) = &rows[b * classes + c];
            for (&i, &s) in indices.iter().zip(selected) {
                pairs[(b * per_batch + at) * 2] = c as i64;
                pairs[(b * per_batch + at) * 2 + 1] = i;
                kept[b * per_batch + at] = s;
                at += 1;
            }
        }
        totals.push(at as i64);
    }
    Ok(Value::Tuple(vec![
        Value::tensor(int_tensor(
            DataType::INT64,
            vec![batch as i64, per_batch as i64, 2],
            &pairs,
        )?),
        Value::tensor(f32_tensor(vec![batch as i64, per_batch as i64], &kept)?),
        Value::tensor(int_tensor(DataType::INT64, vec![batch as i64], &totals)?),
    ]))
}
