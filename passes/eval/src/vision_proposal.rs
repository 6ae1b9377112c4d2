//! `vision.proposal`: TOPI's `vision/rcnn/proposal.py` (the IR builders
//! TVM compiles for the `llvm` target), all in `float32`.
//!
//! Per batch, feature-map cell `(h, w)` and anchor `k` (ratio
//! `ratios[k / len(scales)]`, scale `scales[k % len(scales)]`), box
//! `(h·W + w)·A + k` is the anchor of `generate_anchor` (worked out in
//! double precision, as Python does, then a `float32` constant) shifted by
//! `feature_stride` per cell, moved by the four deltas of `bbox_pred`
//! (centre/size regression, or corner offsets with `iou_loss`), clipped to
//! `[0, width - 1] × [0, height - 1]` of `im_info`. Its score is channel
//! `A + k` of `cls_prob`, `-1` for cells past the image's
//! `im_info / feature_stride` (truncated); a box narrower or lower than
//! `rpn_min_size · scale` grows by half that on every side and scores `-1`
//! (it stays a candidate, sorted last).
//!
//! The boxes are ranked by `tvm.contrib.sort.argsort_nms` (a stable
//! descending sort), the first `rpn_pre_nms_top_n` (all when not positive)
//! go through TOPI's NMS (a box is removed when its IoU — with the `+1`
//! pixel convention — with an earlier box that was not removed exceeds
//! `threshold`), and the kept boxes fill the
//! `rpn_post_nms_top_n` output rows `[batch, x1, y1, x2, y2]` in order,
//! cycling through them again when there are fewer.
//!
//! Not folded: other types than `float32` (`argsort_nms` takes only
//! `float32`); inputs whose shapes disagree with the attributes (TVM indexes
//! past them); more than one batch (TOPI hands `argsort_nms` a one-element
//! valid count, which it reads at every batch's index, past its end); no
//! box at all (the output is left unwritten); NaN scores (their order in
//! `std::stable_sort` is unspecified).

use super::vision_nms::argsort_valid;
use super::vision_util::{f32_tensor, f32_values, float_list, tvm_max, tvm_min};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "vision.proposal" => proposal,
        _ => return None,
    })
}

/// The attributes of one call (defaults of `ProposalAttrs`).
struct Proposal {
    scales: Vec<f64>,
    ratios: Vec<f64>,
    feature_stride: i64,
    threshold: f32,
    pre_nms_top_n: i64,
    post_nms_top_n: i64,
    min_size: i64,
    iou_loss: bool,
}

/// TOPI's `generate_anchor`, in Python's double precision:
/// `[x1, y1, x2, y2]` of the anchor of `ratio` and `scale` in a
/// `base_size`-pixel cell.
fn generate_anchor(ratio: f64, scale: f64, base_size: f64) -> [f64; 4] {
    let (w, h) = (base_size, base_size);
    let x_ctr = 0.5 * (w - 1.0);
    let y_ctr = 0.5 * (h - 1.0);
    let size_ratios = (w * h / ratio).floor();
    let new_w = (size_ratios.sqrt() + 0.5).floor() * scale;
    let new_h = (new_w / scale * ratio + 0.5).floor() * scale;
    [
        x_ctr - 0.5 * (new_w - 1.0),
        y_ctr - 0.5 * (new_h - 1.0),
        x_ctr + 0.5 * (new_w - 1.0),
        y_ctr + 0.5 * (new_h - 1.0),
    ]
}

/// `reg_bbox`: the anchor's centre moves by `(dx, dy)` of its size, its size
/// scales by `exp(dw)`, `exp(dh)`.
fn reg_bbox(b: [f32; 4], d: [f32; 4]) -> [f32; 4] {
    let bbox_w = b[2] - b[0] + 1.0;
    let bbox_h = b[3] - b[1] + 1.0;
    let ctr_x = b[0] + 0.5 * (bbox_w - 1.0);
    let ctr_y = b[1] + 0.5 * (bbox_h - 1.0);
    let pred_ctr_x = d[0] * bbox_w + ctr_x;
    let pred_ctr_y = d[1] * bbox_h + ctr_y;
    let pred_w = d[2].exp() * bbox_w;
    let pred_h = d[3].exp() * bbox_h;
    [
        pred_ctr_x - 0.5 * (pred_w - 1.0),
        pred_ctr_y - 0.5 * (pred_h - 1.0),
        pred_ctr_x + 0.5 * (pred_w - 1.0),
        pred_ctr_y + 0.5 * (pred_h - 1.0),
    ]
}

/// `reg_iou`: each corner moves by its own delta.
fn reg_iou(b: [f32; 4], d: [f32; 4]) -> [f32; 4] {
    [b[0] + d[0], b[1] + d[1], b[2] + d[2], b[3] + d[3]]
}

/// The overlap of `nms_ir`: intersection over union of two
/// `[x1, y1, x2, y2]` boxes counting both end pixels (`x2 - x1 + 1` wide).
fn iou_inclusive(a: &[f32], b: &[f32]) -> f32 {
    let w = tvm_max(0.0, tvm_min(a[2], b[2]) - tvm_max(a[0], b[0]) + 1.0);
    let h = tvm_max(0.0, tvm_min(a[3], b[3]) - tvm_max(a[1], b[1]) + 1.0);
    let i = w * h;
    let u =
        (a[2] - a[0] + 1.0) * (a[3] - a[1] + 1.0) + (b[2] - b[0] + 1.0) * (b[3] - b[1] + 1.0) - i;
    i / u
}

impl Proposal {
    fn from_call(call: &CallInfo) -> EvalResult<Self> {
        let p = Proposal {
            scales: float_list(call, "scales")?.unwrap_or_else(|| vec![4.0, 8.0, 16.0, 32.0]),
            ratios: float_list(call, "ratios")?.unwrap_or_else(|| vec![0.5, 1.0, 2.0]),
            feature_stride: call.int_or("feature_stride", 16),
            // A Python float compared with a `float32` IoU: a `float32` constant.
            threshold: call
                .attr("threshold")
                .and_then(|v| v.as_f64())
                .unwrap_or(0.7) as f32,
            pre_nms_top_n: call.int_or("rpn_pre_nms_top_n", 6000),
            post_nms_top_n: call.int_or("rpn_post_nms_top_n", 300),
            min_size: call.int_or("rpn_min_size", 16),
            iou_loss: call.bool_or("iou_loss", false),
        };
        if p.post_nms_top_n < 0 {
            return unsupported("vision.proposal: negative `rpn_post_nms_top_n`");
        }
        if p.feature_stride == 0 {
            return unsupported("vision.proposal: `feature_stride` is 0");
        }
        Ok(p)
    }

    /// `predict_bbox_ir` for batch 0: `num_bbox` rows `[x1, y1, x2, y2, score]`.
    fn predict(
        &self,
        scores: &[f32],
        deltas: &[f32],
        im_info: &[f32],
        (height, width): (usize, usize),
    ) -> EvalResult<Vec<[f32; 5]>> {
        let anchors = self.scales.len() * self.ratios.len();
        let stride = self.feature_stride as f32;
        let (im_height, im_width, im_scale) = (im_info[0], im_info[1], im_info[2]);
        let cells = |extent: f32| -> EvalResult<i64> {
            let q = (extent / stride).trunc();
            if !(q >= i32::MIN as f32 && q < i32::MAX as f32) {
                return unsupported("vision.proposal: the image size is out of int32's range");
            }
            Ok(q as i64)
        };
        let (real_height, real_width) = (cells(im_height)?, cells(im_width)?);
        let min_size = im_scale * self.min_size as f32;
        let plane = height * width;
        let mut out = Vec::with_capacity(plane * anchors);
        for h in 0..height {
            for w in 0..width {
                for k in 0..anchors {
                    let ratio = self.ratios[k / self.scales.len()];
                    let scale = self.scales[k % self.scales.len()];
                    let anchor = generate_anchor(ratio, scale, self.feature_stride as f64);
                    let (sx, sy) = (
                        (w as i64 * self.feature_stride) as f32,
                        (h as i64 * self.feature_stride) as f32,
                    );
                    let base = [
                        anchor[0] as f32 + sx,
                        anchor[1] as f32 + sy,
                        anchor[2] as f32 + sx,
                        anchor[3] as f32 + sy,
                    ];
                    let delta: [f32; 4] =
                        std::array::from_fn(|i| deltas[(k * 4 + i) * plane + h * width + w]);
                    let pred = if self.iou_loss {
                        reg_iou(base, delta)
                    } else {
                        reg_bbox(base, delta)
                    };
                    let clip = |v: f32, extent: f32| tvm_max(tvm_min(v, extent - 1.0), 0.0);
                    let mut row = [
                        clip(pred[0], im_width),
                        clip(pred[1], im_height),
                        clip(pred[2], im_width),
                        clip(pred[3], im_height),
                        if h as i64 >= real_height || w as i64 >= real_width {
                            -1.0
                        } else {
                            scores[(anchors + k) * plane + h * width + w]
                        },
                    ];
                    let bbox_w = row[2] - row[0] + 1.0;
                    let bbox_h = row[3] - row[1] + 1.0;
                    if bbox_w < min_size || bbox_h < min_size {
                        let half = min_size / 2.0;
                        row[0] -= half;
                        row[1] -= half;
                        row[2] += half;
                        row[3] += half;
                        row[4] = -1.0;
                    }
                    out.push(row);
                }
            }
        }
        Ok(out)
    }
}

fn proposal(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let p = Proposal::from_call(call)?;
    let (cls_t, delta_t, info_t) = (
        arg_tensor(args, 0, call)?,
        arg_tensor(args, 1, call)?,
        arg_tensor(args, 2, call)?,
    );
    let anchors = (p.scales.len() * p.ratios.len()) as i64;
    let [batch, channels, height, width] = cls_t.shape[..] else {
        return unsupported("vision.proposal: `cls_prob` is not 4-D");
    };
    if channels != 2 * anchors
        || delta_t.shape != [batch, 4 * anchors, height, width]
        || info_t.shape != [batch, 3]
    {
        return unsupported(
            "vision.proposal: the inputs' shapes do not match the anchors of `scales` × `ratios`",
        );
    }
    if batch != 1 {
        return unsupported(
            "vision.proposal: with several batches TOPI's sort reads its valid count past its end",
        );
    }
    let post = p.post_nms_top_n as usize;
    call.check_size(&[batch, p.post_nms_top_n, 5])?;
    let scores = f32_values(cls_t, "vision.proposal: `cls_prob`")?;
    let deltas = f32_values(delta_t, "vision.proposal: `bbox_pred`")?;
    let im_info = f32_values(info_t, "vision.proposal: `im_info`")?;
    let boxes = p.predict(
        &scores,
        &deltas,
        &im_info,
        (height as usize, width as usize),
    )?;
    let num_bbox = boxes.len();
    let pre = if p.pre_nms_top_n > 0 {
        (p.pre_nms_top_n as usize).min(num_bbox)
    } else {
        num_bbox
    };
    let box_scores: Vec<f32> = boxes.iter().map(|b| b[4]).collect();
    let order = argsort_valid(&box_scores, num_bbox, call.op)?;
    let sorted: Vec<&[f32; 5]> = order[..pre].iter().map(|&i| &boxes[i]).collect();
    // `nms_ir`: a removed box suppresses no later box.
    let mut removed = vec![false; pre];
    for l in 0..pre.saturating_sub(1) {
        if removed[l] {
            continue;
        }
        for i in l + 1..pre {
            if iou_inclusive(sorted[l], sorted[i]) > p.threshold {
                removed[i] = true;
            }
        }
    }
    let kept: Vec<&[f32; 5]> = (0..pre)
        .filter(|&i| !removed[i])
        .map(|i| sorted[i])
        .collect();
    if kept.is_empty() && post > 0 {
        return unsupported("vision.proposal: no box to keep (TVM leaves the output unwritten)");
    }
    // `prepare_output_ir` passes over the kept boxes
    // `ceil(float32(post) / nkeep)` times, stopping when the rows are full.
    let passes = if kept.is_empty() {
        0
    } else {
        (post as f32 / kept.len() as f32).ceil() as usize
    };
    if passes.saturating_mul(kept.len()) < post {
        return unsupported("vision.proposal: TVM leaves some output rows unwritten here");
    }
    let mut out = Vec::with_capacity(post * 5);
    for row in kept.iter().cycle().take(post) {
        out.push(0.0);
        out.extend_from_slice(&row[..4]);
    }
    Ok(Value::tensor(f32_tensor(vec![p.post_nms_top_n, 5], &out)?))
}
