//! Region-of-interest pooling (`vision.roi_align`, `vision.roi_pool`), in
//! `float32` as TVM's `llvm` kernels compute it. Each ROI is
//! `[batch_index, x1, y1, x2, y2]` in image coordinates, scaled by
//! `spatial_scale`.
//!
//! `roi_align` in `NCHW` is TOPI's x86 hybrid script (`topi/x86/roi_align.py`,
//! chosen for any CPU target): per ROI it precomputes, for every sample
//! point, the four neighbours and weights (a point more than one pixel
//! outside the map weighs nothing; a point on or past the last row or
//! column uses that row or column only), then averages
//! `((w1·p1 + w2·p2) + w3·p3) + w4·p4` over the `grid_h × grid_w` samples
//! of each bin, adding `value / count` sample by sample in row-major order,
//! or takes their maximum from `-inf` in `max` mode. The grid is
//! `sample_ratio`, or `ceil(bin size)` when that is not positive; TVM's
//! precomputation buffer has room for `ceil(H / pooled_h) · ceil(W /
//! pooled_w)` points per bin, so a ROI needing more (larger than the map) is
//! not folded (TVM writes past the buffer there). `NHWC` is the generic
//! compute (`topi/vision/rcnn/roi_align.py`): coordinates clamped to the
//! map, `bilinear_sample_nhwc`'s four terms `wx·wy·p` summed in the order
//! (x0, y0), (x0, y1), (x1, y0), (x1, y1), the average summing `value /
//! count` from zero, the maximum starting from the lowest `float32`.
//! Every operation is a single `float32` rounding in TVM's order; the sums
//! are sequential, so results are bit-exact with TVM's code.
//!
//! `roi_pool` (`NCHW` only, TOPI's `roi_pool_nchw`) rounds the scaled
//! corners (`llvm.round`: half away from zero), splits the ROI into bins
//! with a `1e-5` margin and takes each bin's maximum, `0` for an empty bin:
//! comparisons only, exact.

use super::vision_util::{bilinear_sample, f32_tensor, f32_values, tvm_max, tvm_min};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "vision.roi_align" => roi_align,
        "vision.roi_pool" => roi_pool,
        _ => return None,
    })
}

/// The inputs of a region op: the feature map as `(N, C, H, W)` with its
/// layout, the ROIs, the pooled size and the scale.
struct Regions {
    nhwc: bool,
    c: usize,
    h: usize,
    w: usize,
    n: usize,
    data: Vec<f32>,
    rois: Vec<f32>,
    pooled: [usize; 2],
    spatial_scale: f32,
}

impl Regions {
    fn read(args: &[Value], call: &CallInfo) -> EvalResult<Regions> {
        expect_args(args, 2, call)?;
        let data_t = arg_tensor(args, 0, call)?;
        let rois_t = arg_tensor(args, 1, call)?;
        let nhwc = match call.str("layout").unwrap_or("NCHW") {
            "NCHW" => false,
            "NHWC" => true,
            other => return unsupported(format!("{}: layout {other}", call.op)),
        };
        let dims = match *data_t.shape.as_slice() {
            [n, a, b, c] if n >= 0 && a >= 0 && b >= 0 && c >= 0 => {
                [n as usize, a as usize, b as usize, c as usize]
            }
            _ => return unsupported(format!("{}: the data is not 4-D", call.op)),
        };
        let (c, h, w) = if nhwc {
            (dims[3], dims[1], dims[2])
        } else {
            (dims[1], dims[2], dims[3])
        };
        if rois_t.ndim() != 2 || rois_t.shape[1] != 5 {
            return unsupported(format!("{}: the ROIs are not [num_roi, 5]", call.op));
        }
        let pooled = match call.ints("pooled_size")?.as_deref() {
            Some(&[ph, pw]) if ph > 0 && pw > 0 => [ph as usize, pw as usize],
            Some(&[p]) if p > 0 => [p as usize, p as usize],
            _ => return unsupported(format!("{}: `pooled_size` is not two sizes", call.op)),
        };
        Ok(Regions {
            nhwc,
            c,
            h,
            w,
            n: dims[0],
            data: f32_values(data_t, "the data")?,
            rois: f32_values(rois_t, "the ROIs")?,
            pooled,
            spatial_scale: call.f64("spatial_scale")? as f32,
        })
    }

    /// Checks that every ROI field is finite and scales to a value an
    /// `int32` holds (TVM converts them to integers without checks).
    fn check_rois(&self, op: &str) -> EvalResult<()> {
        let limit = 2_147_483_520.0f32;
        if self
            .rois
            .iter()
            .any(|v| !v.is_finite() || (v * self.spatial_scale).abs() >= limit)
        {
            return unsupported(format!(
                "{op}: a ROI coordinate that is not finite or too large"
            ));
        }
        Ok(())
    }

    fn num_rois(&self) -> usize {
        self.rois.len() / 5
    }

    /// The map's value at `(b, ch, y, x)`, all in range.
    fn at(&self, b: usize, ch: usize, y: usize, x: usize) -> f32 {
        self.data[if self.nhwc {
            ((b * self.h + y) * self.w + x) * self.c + ch
        } else {
            ((b * self.c + ch) * self.h + y) * self.w + x
        }]
    }

    /// The ROI's batch index (`int32` of its first field), checked.
    fn batch_index(&self, roi: &[f32], op: &str) -> EvalResult<usize> {
        let b = roi[0];
        if !(b >= 0.0 && (b as usize) < self.n) {
            return unsupported(format!("{op}: batch index {b} outside the data"));
        }
        Ok(b as usize)
    }

    fn output_shape(&self) -> Vec<i64> {
        let [ph, pw] = self.pooled;
        let r = self.num_rois() as i64;
        if self.nhwc {
            vec![r, ph as i64, pw as i64, self.c as i64]
        } else {
            vec![r, self.c as i64, ph as i64, pw as i64]
        }
    }

    /// Output index of `(roi, ch, ph, pw)`.
    fn out_index(&self, r: usize, ch: usize, py: usize, px: usize) -> usize {
        let [ph, pw] = self.pooled;
        if self.nhwc {
            ((r * ph + py) * pw + px) * self.c + ch
        } else {
            ((r * self.c + ch) * ph + py) * pw + px
        }
    }
}

/// The scaled geometry of one `roi_align` ROI.
struct AlignRoi {
    start_h: f32,
    start_w: f32,
    bin_h: f32,
    bin_w: f32,
    grid_h: i32,
    grid_w: i32,
}

impl AlignRoi {
    fn new(roi: &[f32], regions: &Regions, sample_ratio: i64, x86: bool) -> AlignRoi {
        let s = regions.spatial_scale;
        let (start_w, start_h, end_w, end_h) = (roi[1] * s, roi[2] * s, roi[3] * s, roi[4] * s);
        let roi_h = tvm_max(end_h - start_h, 1.0);
        let roi_w = tvm_max(end_w - start_w, 1.0);
        let bin_h = roi_h / regions.pooled[0] as f32;
        let bin_w = roi_w / regions.pooled[1] as f32;
        let (grid_h, grid_w) = if sample_ratio > 0 {
            (sample_ratio as i32, sample_ratio as i32)
        } else if x86 {
            // `int32(bin)`, plus one when that truncated.
            let up = |b: f32| (b as i32) + i32::from(((b as i32) as f32) < b);
            (up(bin_h), up(bin_w))
        } else {
            (
                (roi_h / regions.pooled[0] as f32).ceil() as i32,
                (roi_w / regions.pooled[1] as f32).ceil() as i32,
            )
        };
        AlignRoi {
            start_h,
            start_w,
            bin_h,
            bin_w,
            grid_h,
            grid_w,
        }
    }

    /// The sample point `(iy, ix)` of bin `(py, px)`.
    fn point(&self, py: usize, px: usize, iy: i32, ix: i32) -> (f32, f32) {
        let y = self.start_h
            + py as f32 * self.bin_h
            + (iy as f32 + 0.5) * self.bin_h / self.grid_h as f32;
        let x = self.start_w
            + px as f32 * self.bin_w
            + (ix as f32 + 0.5) * self.bin_w / self.grid_w as f32;
        (y, x)
    }
}

fn roi_align(args: &[Value], call: &CallInfo) -> EvalResult {
    let regions = Regions::read(args, call)?;
    regions.check_rois(call.op)?;
    let max_mode = match call.str("mode").unwrap_or("avg") {
        "avg" => false,
        "max" => true,
        other => return unsupported(format!("vision.roi_align: mode {other}")),
    };
    let sample_ratio = call.int_or("sample_ratio", -1);
    let shape = regions.output_shape();
    let mut out = vec![0.0f32; call.check_size(&shape)?];
    if regions.nhwc {
        align_nhwc(&regions, sample_ratio, max_mode, &mut out, call.op)?;
    } else {
        align_nchw_x86(&regions, sample_ratio, max_mode, &mut out, call.op)?;
    }
    Ok(Value::tensor(f32_tensor(shape, &out)?))
}

/// One precomputed sample of the x86 kernel: `[x_low, x_high, y_low,
/// y_high]` and the four weights.
#[derive(Clone, Copy)]
struct Sample {
    pos: [usize; 4],
    weights: [f32; 4],
}

fn x86_sample(y: f32, x: f32, h: usize, w: usize) -> Sample {
    if y < -1.0 || y > h as f32 || x < -1.0 || x > w as f32 {
        return Sample {
            pos: [0; 4],
            weights: [0.0; 4],
        };
    }
    let (mut y, mut x) = (if y < 0.0 { 0.0 } else { y }, if x < 0.0 { 0.0 } else { x });
    let (mut y_low, mut x_low) = (y as i32, x as i32);
    let (mut y_high, mut x_high) = (y_low + 1, x_low + 1);
    if y_low >= h as i32 - 1 {
        y_high = h as i32 - 1;
        y_low = y_high;
        y = y_low as f32;
    }
    if x_low >= w as i32 - 1 {
        x_high = w as i32 - 1;
        x_low = x_high;
        x = x_low as f32;
    }
    let ly = y - y_low as f32;
    let lx = x - x_low as f32;
    let (hy, hx) = (1.0 - ly, 1.0 - lx);
    Sample {
        pos: [
            x_low as usize,
            x_high as usize,
            y_low as usize,
            y_high as usize,
        ],
        weights: [hy * hx, hy * lx, ly * hx, ly * lx],
    }
}

fn align_nchw_x86(
    regions: &Regions,
    sample_ratio: i64,
    max_mode: bool,
    out: &mut [f32],
    op: &str,
) -> EvalResult<()> {
    let [ph, pw] = regions.pooled;
    if regions.h == 0 || regions.w == 0 {
        return unsupported(format!("{op}: an empty feature map"));
    }
    // The size of TVM's precomputation buffer, per bin.
    let room = if sample_ratio > 0 {
        (sample_ratio * sample_ratio) as usize
    } else {
        regions.h.div_ceil(ph) * regions.w.div_ceil(pw)
    };
    for r in 0..regions.num_rois() {
        let roi = &regions.rois[r * 5..r * 5 + 5];
        let b = regions.batch_index(roi, op)?;
        let geo = AlignRoi::new(roi, regions, sample_ratio, true);
        let (gh, gw) = (geo.grid_h.max(0) as usize, geo.grid_w.max(0) as usize);
        if gh * gw > room {
            return unsupported(format!(
                "{op}: ROI {r} needs more samples than TVM's x86 kernel has room for"
            ));
        }
        let mut samples = Vec::with_capacity(ph * pw * gh * gw);
        for py in 0..ph {
            for px in 0..pw {
                for iy in 0..gh as i32 {
                    for ix in 0..gw as i32 {
                        let (y, x) = geo.point(py, px, iy, ix);
                        samples.push(x86_sample(y, x, regions.h, regions.w));
                    }
                }
            }
        }
        let count = (geo.grid_h * geo.grid_w) as f32;
        for ch in 0..regions.c {
            let mut next = samples.iter();
            for py in 0..ph {
                for px in 0..pw {
                    let mut acc = if max_mode { f32::NEG_INFINITY } else { 0.0 };
                    for _ in 0..gh * gw {
                        let s = next.next().expect("one sample per point");
                        let [x0, x1, y0, y1] = s.pos;
                        let v = s.weights[0] * regions.at(b, ch, y0, x0)
                            + s.weights[1] * regions.at(b, ch, y0, x1)
                            + s.weights[2] * regions.at(b, ch, y1, x0)
                            + s.weights[3] * regions.at(b, ch, y1, x1);
                        acc = if max_mode {
                            tvm_max(acc, v)
                        } else {
                            acc + v / count
                        };
                    }
                    out[regions.out_index(r, ch, py, px)] = acc;
                }
            }
        }
    }
    Ok(())
}

/// `bilinear_sample_nhwc` of the generic compute at a clamped point.
fn nhwc_bilinear(regions: &Regions, b: usize, ch: usize, y: f32, x: f32) -> f32 {
    let (h, w) = (regions.h as f32, regions.w as f32);
    if y < -1.0 || x < -1.0 || y > h || x > w {
        return 0.0;
    }
    let y = tvm_min(tvm_max(y, 0.0), h - 1.0);
    let x = tvm_min(tvm_max(x, 0.0), w - 1.0);
    bilinear_sample(y, x, regions.h, regions.w, |yp, xp| {
        regions.at(b, ch, yp, xp)
    })
}

fn align_nhwc(
    regions: &Regions,
    sample_ratio: i64,
    max_mode: bool,
    out: &mut [f32],
    op: &str,
) -> EvalResult<()> {
    let [ph, pw] = regions.pooled;
    for r in 0..regions.num_rois() {
        let roi = &regions.rois[r * 5..r * 5 + 5];
        let b = regions.batch_index(roi, op)?;
        let geo = AlignRoi::new(roi, regions, sample_ratio, false);
        let count = (geo.grid_h * geo.grid_w) as f32;
        for py in 0..ph {
            for px in 0..pw {
                for ch in 0..regions.c {
                    let mut acc = if max_mode { f32::MIN } else { 0.0 };
                    for iy in 0..geo.grid_h.max(0) {
                        for ix in 0..geo.grid_w.max(0) {
                            let (y, x) = geo.point(py, px, iy, ix);
                            let v = nhwc_bilinear(regions, b, ch, y, x);
                            acc = if max_mode {
                                tvm_max(acc, v)
                            } else {
                                acc + v / count
                            };
                        }
                    }
                    out[regions.out_index(r, ch, py, px)] = acc;
                }
            }
        }
    }
    Ok(())
}

fn roi_pool(args: &[Value], call: &CallInfo) -> EvalResult {
    let regions = Regions::read(args, call)?;
    regions.check_rois(call.op)?;
    if regions.nhwc {
        return unsupported("vision.roi_pool: TVM computes only NCHW");
    }
    let [ph, pw] = regions.pooled;
    let (h, w) = (regions.h as i32, regions.w as i32);
    let shape = regions.output_shape();
    let mut out = vec![0.0f32; call.check_size(&shape)?];
    let s = regions.spatial_scale;
    let eps = 0.00001f32;
    for r in 0..regions.num_rois() {
        let roi = &regions.rois[r * 5..r * 5 + 5];
        let b = regions.batch_index(roi, call.op)?;
        let corner = |v: f32| (v * s).round() as i32;
        let (start_w, start_h, end_w, end_h) = (
            corner(roi[1]),
            corner(roi[2]),
            corner(roi[3]),
            corner(roi[4]),
        );
        let roi_h = (end_h.wrapping_sub(start_h).wrapping_add(1)).max(1);
        let roi_w = (end_w.wrapping_sub(start_w).wrapping_add(1)).max(1);
        let bin_h = roi_h as f32 / ph as f32;
        let bin_w = roi_w as f32 / pw as f32;
        for ch in 0..regions.c {
            for py in 0..ph {
                for px in 0..pw {
                    let clamp = |v: i32, hi: i32| v.max(0).min(hi);
                    let hstart = clamp(((py as f32 * bin_h + eps).floor() as i32) + start_h, h);
                    let wstart = clamp(((px as f32 * bin_w + eps).floor() as i32) + start_w, w);
                    let hend = clamp((((py + 1) as f32 * bin_h - eps).ceil() as i32) + start_h, h);
                    let wend = clamp((((px + 1) as f32 * bin_w - eps).ceil() as i32) + start_w, w);
                    let non_empty = hstart < hend && wstart < wend;
                    let mut acc = if non_empty { f32::MIN } else { 0.0 };
                    for y in hstart..hend {
                        for x in wstart..wend {
                            acc = tvm_max(acc, regions.at(b, ch, y as usize, x as usize));
                        }
                    }
                    out[regions.out_index(r, ch, py, px)] = acc;
                }
            }
        }
    }
    Ok(Value::tensor(f32_tensor(shape, &out)?))
}
