//! SSD detection ops of TOPI's `vision/ssd/multibox.py`:
//! `vision.multibox_prior` and `vision.multibox_transform_loc`, in
//! `float32`.
//!
//! `multibox_prior` places `len(sizes) + len(ratios) - 1` anchors at the
//! centre `((i + offset) · step)` of each cell. The sizes, ratios, steps
//! and offsets are `FloatImm` constants in TOPI's hybrid script, so its
//! constant sub-expressions (`size · H / W / 2`, `size / 2`, `1 / H`) are
//! folded by TVM's simplifier in double precision and rounded to `float32`
//! once; the rest (the centres, `· sqrt(ratio)`, `/ sqrt(ratio)`, the
//! corners) is `float32` arithmetic, each operation rounded: exact. `clip`
//! clamps the boxes to `[0, 1]` (`topi.clip`).
//!
//! `multibox_transform_loc` takes, for each anchor, the best class above 0
//! (first of equal scores), drops it under `threshold`, and decodes the
//! kept anchors' boxes (`exp` is the C library's `expf`, as LLVM's
//! intrinsic). TOPI writes only the rows of kept anchors and leaves the
//! others as the allocator gave them, so a call where some anchor is
//! dropped has no defined value and is not folded.

use super::vision_util::{f32_tensor, f32_values, float_list, int_tensor, tvm_max, tvm_min};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "vision.multibox_prior" => multibox_prior,
        "vision.multibox_transform_loc" => multibox_transform_loc,
        _ => return None,
    })
}

/// `topi.clip(x, 0, 1)`.
fn clip01(x: f32) -> f32 {
    tvm_max(tvm_min(x, 1.0), 0.0)
}

fn multibox_prior(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let (h, w) = match *data.shape.as_slice() {
        [_, _, h, w] if h > 0 && w > 0 => (h as usize, w as usize),
        _ => return unsupported("vision.multibox_prior: the data is not 4-D"),
    };
    let sizes = float_list(call, "sizes")?.unwrap_or_else(|| vec![1.0]);
    let ratios = float_list(call, "ratios")?.unwrap_or_else(|| vec![1.0]);
    let steps = float_list(call, "steps")?.unwrap_or_else(|| vec![-1.0, -1.0]);
    let offsets = float_list(call, "offsets")?.unwrap_or_else(|| vec![0.5, 0.5]);
    if sizes.is_empty() || ratios.is_empty() || steps.len() < 2 || offsets.len() < 2 {
        return unsupported("vision.multibox_prior: sizes, ratios, steps or offsets missing");
    }
    let clip = call.bool_or("clip", false);
    let (hf, wf) = (h as f64, w as f64);
    let step_h = (if steps[0] > 0.0 { steps[0] } else { 1.0 / hf }) as f32;
    let step_w = (if steps[1] > 0.0 { steps[1] } else { 1.0 / wf }) as f32;
    let (offset_h, offset_w) = (offsets[0] as f32, offsets[1] as f32);
    let per_cell = sizes.len() + ratios.len() - 1;
    // The half extents of each anchor of a cell, `(w, h)`.
    let halves: Vec<(f32, f32)> = (0..per_cell)
        .map(|k| {
            if k < sizes.len() {
                ((sizes[k] * hf / wf / 2.0) as f32, (sizes[k] / 2.0) as f32)
            } else {
                let root = (ratios[k - sizes.len() + 1] as f32).sqrt();
                let base = (sizes[0] * hf / wf) as f32;
                (base * root / 2.0, sizes[0] as f32 / root / 2.0)
            }
        })
        .collect();
    let shape = vec![1, (h * w * per_cell) as i64, 4];
    let mut out = Vec::with_capacity(call.check_size(&shape)?);
    for i in 0..h {
        let center_h = (i as f32 + offset_h) * step_h;
        for j in 0..w {
            let center_w = (j as f32 + offset_w) * step_w;
            for &(half_w, half_h) in &halves {
                out.extend([
                    center_w - half_w,
                    center_h - half_h,
                    center_w + half_w,
                    center_h + half_h,
                ]);
            }
        }
    }
    if clip {
        out.iter_mut().for_each(|v| *v = clip01(*v));
    }
    Ok(Value::tensor(f32_tensor(shape, &out)?))
}

fn multibox_transform_loc(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let cls_t = arg_tensor(args, 0, call)?;
    let (batch, classes, anchors) = match *cls_t.shape.as_slice() {
        [b, c, n] if b >= 0 && c >= 0 && n >= 0 => (b as usize, c as usize, n as usize),
        _ => return unsupported("vision.multibox_transform_loc: cls_prob is not 3-D"),
    };
    let cls = f32_values(cls_t, "cls_prob")?;
    let loc = f32_values(arg_tensor(args, 1, call)?, "loc_pred")?;
    let anchor = f32_values(arg_tensor(args, 2, call)?, "anchor")?;
    if loc.len() != batch * anchors * 4 || anchor.len() < anchors * 4 {
        return unsupported("vision.multibox_transform_loc: loc_pred or anchor of another size");
    }
    let clip = call.bool_or("clip", true);
    let threshold = call
        .attr("threshold")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.01) as f32;
    let variances: Vec<f32> = float_list(call, "variances")?
        .unwrap_or_else(|| vec![0.1, 0.1, 0.2, 0.2])
        .into_iter()
        .map(|v| v as f32)
        .collect();
    let [vx, vy, vw, vh] = variances[..] else {
        return unsupported("vision.multibox_transform_loc: `variances` is not four numbers");
    };
    let clip_if = |v: f32| {
        if clip {
            tvm_max(0.0, tvm_min(1.0, v))
        } else {
            v
        }
    };
    let mut out = Vec::with_capacity(batch * anchors * 6);
    for i in 0..batch {
        for j in 0..anchors {
            let mut score = -1.0f32;
            let mut cls_id = 0usize;
            for k in 1..classes {
                let temp = cls[(i * classes + k) * anchors + j];
                if temp > score {
                    cls_id = k;
                }
                score = tvm_max(temp, score);
            }
            if cls_id == 0 || score < threshold {
                return unsupported(
                    "vision.multibox_transform_loc: an anchor is dropped, and TVM leaves its row unwritten",
                );
            }
            let a = &anchor[j * 4..j * 4 + 4];
            let p = &loc[(i * anchors + j) * 4..][..4];
            let (aw, ah) = (a[2] - a[0], a[3] - a[1]);
            let ax = (a[0] + a[2]) / 2.0;
            let ay = (a[1] + a[3]) / 2.0;
            let ox = p[0] * vx * aw + ax;
            let oy = p[1] * vy * ah + ay;
            let ow = (p[2] * vw).exp() * aw / 2.0;
            let oh = (p[3] * vh).exp() * ah / 2.0;
            out.extend([
                cls_id as f32 - 1.0,
                score,
                clip_if(ox - ow),
                clip_if(oy - oh),
                clip_if(ox + ow),
                clip_if(oy + oh),
            ]);
        }
    }
    let counts = vec![anchors as i64; batch];
    Ok(Value::Tuple(vec![
        Value::tensor(f32_tensor(vec![batch as i64, anchors as i64, 6], &out)?),
        Value::tensor(int_tensor(DataType::INT32, vec![batch as i64], &counts)?),
    ]))
}
