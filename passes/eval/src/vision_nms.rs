//! Box selection of TOPI's `vision/nms.py` (the hybrid scripts TVM compiles
//! for the `llvm` target): `vision.get_valid_counts` and
//! `vision.non_max_suppression`.
//!
//! `get_valid_counts` compacts the boxes whose score is above the threshold
//! (and whose class id is not negative, unless `id_index < 0`) to the top,
//! filling the rest with `-1`: comparisons and copies only, exact for every
//! float type. The threshold is the `score_threshold` attribute when set
//! (a constant of the data's type), else the scalar second argument.
//!
//! `non_max_suppression` ranks the first `valid_count` boxes of each batch
//! by descending score as `tvm.contrib.sort.argsort_nms` does (a stable
//! sort of `float32` scores, later positions keep their own index), keeps
//! `top_k`, and suppresses each box whose IoU with an earlier kept box of the
//! same class (any class with `force_suppress`) reaches `iou_threshold`, up
//! to `max_output_size` boxes; then `return_indices` compacts the kept
//! indices (`hybrid_rearrange_indices_out`) and `invalid_to_bottom` moves the
//! kept boxes up (`hybrid_rearrange_box_out`). The IoU is TOPI's formula in
//! `float32`, each operation rounded as TVM's code rounds it (no
//! accumulation: results are exact). `argsort_nms` only takes `float32`, so
//! other types are not folded; NaN scores (where `std::stable_sort`'s
//! order is unspecified) and valid counts outside `[0, num_anchors]`
//! (where TVM's loops write outside the tensors) are not folded either.

use super::vision_util::{
    f32_scalar, f32_tensor, f32_values, int_scalar, int_tensor, int_values, tvm_max, tvm_min,
};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "vision.get_valid_counts" => get_valid_counts,
        "vision.non_max_suppression" => non_max_suppression,
        _ => return None,
    })
}

/// `[batch, anchors, box length]` of a 3-D box tensor.
fn box_dims(t: &TensorData, op: &str) -> EvalResult<(usize, usize, usize)> {
    match *t.shape.as_slice() {
        [b, n, l] if b >= 0 && n >= 0 && l >= 0 => Ok((b as usize, n as usize, l as usize)),
        _ => unsupported(format!("{op}: the boxes are not a 3-D tensor")),
    }
}

/// An index attribute that must address an element of a box.
fn box_index(call: &CallInfo, name: &str, default: i64, len: usize) -> EvalResult<i64> {
    let v = call.int_or(name, default);
    if v >= len as i64 {
        return unsupported(format!(
            "{}: `{name}` {v} is outside a box of {len}",
            call.op
        ));
    }
    Ok(v)
}

fn get_valid_counts(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    if !data.dtype.is_float() {
        return unsupported("vision.get_valid_counts: the boxes are not floats");
    }
    let (batch, anchors, len) = box_dims(data, call.op)?;
    let id_index = box_index(call, "id_index", 0, len)?;
    let score_index = box_index(call, "score_index", 1, len)?;
    if score_index < 0 {
        return unsupported("vision.get_valid_counts: negative `score_index`");
    }
    let threshold = match call.attr("score_threshold").and_then(|v| v.as_f64()) {
        // TOPI makes the attribute a constant of the data's type.
        Some(v) => round_to(data.dtype, v)?,
        None => {
            let t = arg_tensor(args, 1, call)?;
            if t.dtype != data.dtype || t.num_elements() != 1 {
                return unsupported(
                    "vision.get_valid_counts: the threshold is not one value of the boxes' type",
                );
            }
            t.to_f64_vec()
                .map_err(|e| super::EvalError::Unsupported(e.message))?[0]
        }
    };
    let values = data
        .to_f64_vec()
        .map_err(|e| super::EvalError::Unsupported(e.message))?;
    let mut counts = vec![0i64; batch];
    let mut boxes = vec![-1.0f64; values.len()];
    let mut indices = vec![-1i64; batch * anchors];
    for b in 0..batch {
        let mut count = 0usize;
        for j in 0..anchors {
            let row = &values[(b * anchors + j) * len..][..len];
            let score = row[score_index as usize];
            if score > threshold && (id_index < 0 || row[id_index as usize] >= 0.0) {
                boxes[(b * anchors + count) * len..][..len].copy_from_slice(row);
                indices[b * anchors + count] = j as i64;
                count += 1;
            }
        }
        counts[b] = count as i64;
    }
    let wrap = |e: relay_ir::metadata::NdArrayError| super::EvalError::Unsupported(e.message);
    Ok(Value::Tuple(vec![
        Value::tensor(int_tensor(DataType::INT32, vec![batch as i64], &counts)?),
        Value::tensor(TensorData::from_f64s(data.dtype, data.shape.clone(), &boxes).map_err(wrap)?),
        Value::tensor(int_tensor(
            DataType::INT32,
            vec![batch as i64, anchors as i64],
            &indices,
        )?),
    ]))
}

/// `v` as a constant of the float type `dtype` (rounded to nearest).
fn round_to(dtype: DataType, v: f64) -> EvalResult<f64> {
    TensorData::from_f64s(dtype, Vec::new(), &[v])
        .and_then(|t| t.get_f64(0))
        .map_err(|e| super::EvalError::Unsupported(e.message))
}

/// `argsort_nms` of one batch: the first `valid` scores by descending value
/// (ties keep their order), then the remaining positions' own indices.
/// `op` names the operator sorting, for the error on a NaN score.
pub(crate) fn argsort_valid(scores: &[f32], valid: usize, op: &str) -> EvalResult<Vec<usize>> {
    if scores[..valid].iter().any(|s| s.is_nan()) {
        return unsupported(format!("{op}: a NaN score (its sort order is unspecified)"));
    }
    let mut order: Vec<usize> = (0..valid).collect();
    order.sort_by(|&a, &b| scores[b].partial_cmp(&scores[a]).expect("no NaN"));
    order.extend(valid..scores.len());
    Ok(order)
}

/// The `[left, top, right, bottom]` of the box at `row[start..start + 4]`.
pub(crate) fn corners(row: &[f32], start: usize) -> [f32; 4] {
    let (x0, y0, x1, y1) = (row[start], row[start + 1], row[start + 2], row[start + 3]);
    [
        tvm_min(x0, x1),
        tvm_min(y0, y1),
        tvm_max(x0, x1),
        tvm_max(y0, y1),
    ]
}

/// TOPI's intersection over union of two boxes, in `float32`.
pub(crate) fn iou(a: [f32; 4], b: [f32; 4]) -> f32 {
    let w = tvm_max(0.0, tvm_min(a[2], b[2]) - tvm_max(a[0], b[0]));
    let h = tvm_max(0.0, tvm_min(a[3], b[3]) - tvm_max(a[1], b[1]));
    let area = h * w;
    let union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - area;
    if union <= 0.0 {
        0.0
    } else {
        area / union
    }
}

/// The attributes of one `non_max_suppression` call.
struct Nms {
    max_output_size: i64,
    iou_threshold: f32,
    force_suppress: bool,
    top_k: i64,
    coord_start: usize,
    score_index: usize,
    id_index: i64,
}

impl Nms {
    /// `hybrid_nms` on one batch: the kept boxes (suppressed rows `-1`) and
    /// their positions in the sorted order (`-1` when suppressed).
    fn run(&self, data: &[f32], len: usize, valid: usize, order: &[usize]) -> (Vec<f32>, Vec<i64>) {
        let anchors = order.len();
        let mut out = vec![-1.0f32; anchors * len];
        let mut kept = vec![-1i64; anchors];
        let row = |out: &[f32], j: usize| out[j * len..(j + 1) * len].to_vec();
        if self.iou_threshold > 0.0 {
            let nkeep = if self.top_k > 0 && (self.top_k as usize) < valid {
                self.top_k as usize
            } else {
                valid
            };
            for j in 0..nkeep {
                out[j * len..(j + 1) * len].copy_from_slice(&data[order[j] * len..][..len]);
                kept[j] = order[j] as i64;
            }
            let mut num_valid = 0i64;
            for j in 0..valid {
                if num_valid == self.max_output_size {
                    out[j * len..(j + 1) * len].fill(-1.0);
                    kept[j] = -1;
                } else if out[j * len + self.score_index] > 0.0 {
                    let current = row(&out, j);
                    let a = corners(&current, self.coord_start);
                    let mut is_valid = true;
                    for k in 0..j {
                        let other = row(&out, k);
                        if !is_valid
                            || other[self.score_index] <= 0.0
                            || (self.id_index >= 0 && other[self.id_index as usize] < 0.0)
                        {
                            continue;
                        }
                        let same_class = self.id_index < 0
                            || current[self.id_index as usize] == other[self.id_index as usize];
                        if (self.force_suppress || same_class)
                            && iou(a, corners(&other, self.coord_start)) >= self.iou_threshold
                        {
                            is_valid = false;
                        }
                    }
                    if is_valid {
                        num_valid += 1;
                    } else {
                        out[j * len..(j + 1) * len].fill(-1.0);
                        kept[j] = -1;
                    }
                }
            }
        } else {
            out[..valid * len].copy_from_slice(&data[..valid * len]);
            for (j, k) in kept.iter_mut().enumerate().take(valid) {
                *k = j as i64;
            }
        }
        (out, kept)
    }
}

fn non_max_suppression(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 5, call)?;
    let data_t = arg_tensor(args, 0, call)?;
    let (batch, anchors, len) = box_dims(data_t, call.op)?;
    let data = f32_values(data_t, "vision.non_max_suppression: the boxes")?;
    let valid_counts = int_values(arg_tensor(args, 1, call)?, "the valid count")?;
    let indices_t = arg_tensor(args, 2, call)?;
    let indices = int_values(indices_t, "the indices")?;
    if valid_counts.len() != batch || indices.len() != batch * anchors {
        return unsupported("vision.non_max_suppression: valid counts or indices of another shape");
    }
    let coord_start = call.int_or("coord_start", 2);
    let score_index = call.int_or("score_index", 1);
    if coord_start < 0
        || coord_start + 4 > len as i64
        || score_index < 0
        || score_index >= len as i64
    {
        return unsupported(
            "vision.non_max_suppression: `coord_start` or `score_index` outside a box",
        );
    }
    let nms = Nms {
        max_output_size: int_scalar(arg_tensor(args, 3, call)?, "max_output_size")?,
        iou_threshold: f32_scalar(arg_tensor(args, 4, call)?, "iou_threshold")?,
        force_suppress: call.bool_or("force_suppress", false),
        top_k: call.int_or("top_k", -1),
        coord_start: coord_start as usize,
        score_index: score_index as usize,
        id_index: box_index(call, "id_index", 0, len)?,
    };
    let return_indices = call.bool_or("return_indices", true);
    let invalid_to_bottom = call.bool_or("invalid_to_bottom", false);
    let mut out = Vec::with_capacity(data.len());
    let mut box_indices = Vec::with_capacity(batch * anchors);
    for b in 0..batch {
        let valid = valid_counts[b];
        if valid < 0 || valid > anchors as i64 {
            return unsupported(format!(
                "vision.non_max_suppression: valid count {valid} outside [0, {anchors}]"
            ));
        }
        let valid = valid as usize;
        let boxes = &data[b * anchors * len..(b + 1) * anchors * len];
        let scores: Vec<f32> = (0..anchors)
            .map(|j| boxes[j * len + nms.score_index])
            .collect();
        let order = argsort_valid(&scores, valid, call.op)?;
        let (rows, mut kept) = nms.run(boxes, len, valid, &order);
        if return_indices {
            for k in kept.iter_mut().take(valid) {
                if *k >= 0 {
                    *k = indices[b * anchors + *k as usize];
                }
            }
        }
        out.extend(rows);
        box_indices.extend(kept);
    }
    if return_indices {
        let (compact, counts) = rearrange_indices(&box_indices, batch, anchors)?;
        return Ok(Value::Tuple(vec![
            Value::tensor(int_tensor(
                DataType::INT32,
                vec![batch as i64, anchors as i64],
                &compact,
            )?),
            Value::tensor(int_tensor(DataType::INT32, vec![batch as i64, 1], &counts)?),
        ]));
    }
    if invalid_to_bottom {
        out = rearrange_boxes(&out, batch, anchors, len);
    }
    Ok(Value::tensor(f32_tensor(data_t.shape.clone(), &out)?))
}

/// `hybrid_rearrange_indices_out`, step by step: kept indices move to the
/// front; an index beyond `±anchors` also takes a `0` after it.
fn rearrange_indices(
    kept: &[i64],
    batch: usize,
    anchors: usize,
) -> EvalResult<(Vec<i64>, Vec<i64>)> {
    let mut out = vec![0i64; kept.len()];
    let mut counts = Vec::with_capacity(batch);
    let n = anchors as i64;
    for b in 0..batch {
        let (row, dst) = (
            &kept[b * anchors..][..anchors],
            &mut out[b * anchors..][..anchors],
        );
        let mut next = 0usize;
        for (j, &v) in row.iter().enumerate() {
            if v >= 0 {
                *dst.get_mut(next).ok_or_else(out_of_range)? = v;
                next += 1;
            }
            if v > n || v < -n {
                *dst.get_mut(next).ok_or_else(out_of_range)? = 0;
                next += 1;
            }
            if j >= next {
                dst[j] = -1;
            }
        }
        counts.push(next as i64);
    }
    Ok((out, counts))
}

fn out_of_range() -> super::EvalError {
    super::EvalError::Unsupported(
        "vision.non_max_suppression: TOPI writes past the indices here".to_string(),
    )
}

/// `hybrid_rearrange_box_out`: boxes whose first field is not negative move
/// to the front, the other rows become `-1`.
fn rearrange_boxes(boxes: &[f32], batch: usize, anchors: usize, len: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; boxes.len()];
    for b in 0..batch {
        let base = b * anchors * len;
        let mut next = 0usize;
        for j in 0..anchors {
            let row = &boxes[base + j * len..][..len];
            if row[0] >= 0.0 {
                out[base + next * len..][..len].copy_from_slice(row);
                next += 1;
            }
            if j >= next {
                out[base + j * len..][..len].fill(-1.0);
            }
        }
    }
    out
}
