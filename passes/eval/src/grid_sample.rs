//! `image.grid_sample`: TOPI's `topi/image/grid_sample.py` (`NCHW` with
//! `bilinear`, `nearest` or `bicubic`; `NCDHW` with `bilinear`
//! (trilinear) or `nearest`), every padding mode, in `float32`.
//!
//! A grid value `g ∈ [-1, 1]` maps to `(g + 1) · (size - 1) / 2` with
//! `align_corners`, else `-0.5 + (g + 1) · size / 2`. `border` clamps the
//! coordinate to the map, `reflection` mirrors it into the map first
//! (TOPI's `__reflect`: the distance from the corner, its whole number of
//! map sizes by truncating integer division, and the remainder mirrored on
//! odd counts), `zeros` reads `0` outside. The interpolation is TOPI's
//! expression: bilinear `p00 · (1 - dy) · (1 - dx) + p01 · (1 - dy) · dx +
//! p10 · dy · (1 - dx) + p11 · dy · dx` (trilinear: TOPI's eight terms in
//! its order), nearest rounds half to even (`nearbyint`), bicubic is the
//! `A = -0.75` convolution over 4 × 4 pixels, rows then the column; in
//! bicubic, `border` and `reflection` act on the integer pixel indices
//! (TOPI's code; with `align_corners` off the mirrored index is a float,
//! truncated back). Each operation is one `float32` rounding in TVM's
//! order: results are TVM's. Where TOPI's index arithmetic divides by zero
//! (reflection over a map of one pixel with `align_corners`) or converts a
//! non-finite coordinate, the call is not folded.

use super::vision_util::{f32_tensor, f32_values, tvm_max, tvm_min};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "image.grid_sample" => grid_sample,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Padding {
    Zeros,
    Border,
    Reflection,
}

#[derive(Clone, Copy, PartialEq)]
enum Method {
    Bilinear,
    Nearest,
    Bicubic,
}

/// One spatial axis of the input: its size and the call's coordinate mode.
#[derive(Clone, Copy)]
struct Axis {
    size: usize,
    align: bool,
    padding: Padding,
}

const NOT_FOLDED: &str = "image.grid_sample: TOPI's index arithmetic is undefined here";

impl Axis {
    fn unnormalize(self, g: f32) -> f32 {
        let size = self.size as f32;
        if self.align {
            (g + 1.0) * (self.size as f32 - 1.0) / 2.0
        } else {
            -0.5 + (g + 1.0) * size / 2.0
        }
    }

    /// `__refelection` on a float coordinate.
    fn reflect(self, x: f32) -> EvalResult<f32> {
        let (size, corner) = if self.align {
            (self.size as i64 - 1, 0.0f32)
        } else {
            (self.size as i64, -0.5)
        };
        if x >= corner && x <= size as f32 + corner {
            return Ok(x);
        }
        let distance = (corner - x).abs();
        if size == 0 || !distance.is_finite() || distance >= 2_147_483_520.0 {
            return unsupported(NOT_FOLDED);
        }
        let times = (distance as i32 as i64) / size;
        let extra = distance - (times * size) as f32;
        Ok(if times % 2 == 0 {
            extra + corner
        } else {
            size as f32 - extra + corner
        })
    }

    /// `_clip_coordinates` on a float coordinate.
    fn clip(self, x: f32) -> f32 {
        tvm_min(tvm_max(x, 0.0), self.size as f32 - 1.0)
    }

    /// The source coordinate of a grid value, after the padding mode.
    fn source(self, g: f32) -> EvalResult<f32> {
        let x = self.unnormalize(g);
        Ok(match self.padding {
            Padding::Zeros => x,
            Padding::Border => self.clip(x),
            Padding::Reflection => self.clip(self.reflect(x)?),
        })
    }

    /// A bicubic tap's pixel index after the padding mode (TOPI's integer
    /// path).
    fn tap(self, i: i64) -> EvalResult<i64> {
        let last = self.size as i64 - 1;
        let clip = |v: i64| v.max(0).min(last);
        Ok(match self.padding {
            Padding::Zeros => i,
            Padding::Border => clip(i),
            Padding::Reflection if self.align => {
                let size = last;
                let reflected = if i >= 0 && i <= size {
                    i
                } else {
                    if size == 0 {
                        return unsupported(NOT_FOLDED);
                    }
                    let distance = (0 - i).abs();
                    let times = distance / size;
                    let extra = distance - times * size;
                    if times % 2 == 0 {
                        extra
                    } else {
                        size - extra
                    }
                };
                clip(reflected)
            }
            Padding::Reflection => {
                let v = self.reflect(i as f32)?;
                tvm_min(tvm_max(v, 0.0), last as f32) as i32 as i64
            }
        })
    }
}

fn check_coordinate(v: f32) -> EvalResult<f32> {
    if v.is_finite() && v.abs() < 2_147_483_520.0 {
        Ok(v)
    } else {
        unsupported(NOT_FOLDED)
    }
}

fn grid_sample(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data_t = arg_tensor(args, 0, call)?;
    let grid_t = arg_tensor(args, 1, call)?;
    let method = match call.str("method").unwrap_or("bilinear") {
        "bilinear" => Method::Bilinear,
        "nearest" => Method::Nearest,
        "bicubic" => Method::Bicubic,
        other => return unsupported(format!("image.grid_sample: method {other}")),
    };
    let padding = match call.str("padding_mode").unwrap_or("zeros") {
        "zeros" => Padding::Zeros,
        "border" => Padding::Border,
        "reflection" => Padding::Reflection,
        other => return unsupported(format!("image.grid_sample: padding_mode {other}")),
    };
    let align = call.bool_or("align_corners", true);
    let layout = call.str("layout").unwrap_or("NCHW");
    let data = f32_values(data_t, "image.grid_sample: the data")?;
    let grid = f32_values(grid_t, "image.grid_sample: the grid")?;
    let dims: Vec<usize> = data_t.shape.iter().map(|&d| d.max(0) as usize).collect();
    let gdims: Vec<usize> = grid_t.shape.iter().map(|&d| d.max(0) as usize).collect();
    let spatial = dims.len().saturating_sub(2);
    let expected = if spatial == 2 { "NCHW" } else { "NCDHW" };
    if !(spatial == 2 || spatial == 3)
        || layout != expected
        || gdims.len() != dims.len()
        || gdims[0] != dims[0]
        || gdims[1] != spatial
        || (spatial == 3 && method == Method::Bicubic)
    {
        return unsupported(format!(
            "image.grid_sample: TOPI computes NCHW (any method) or NCDHW (bilinear, nearest), not {layout} here"
        ));
    }
    let axes: Vec<Axis> = dims[2..]
        .iter()
        .map(|&size| Axis {
            size,
            align,
            padding,
        })
        .collect();
    let (n, c) = (dims[0], dims[1]);
    let out_spatial: Vec<usize> = gdims[2..].to_vec();
    let points: usize = out_spatial.iter().product();
    let in_points: usize = dims[2..].iter().product();
    let mut shape = vec![n as i64, c as i64];
    shape.extend(out_spatial.iter().map(|&d| d as i64));
    let mut out = vec![0.0f32; call.check_size(&shape)?];
    for b in 0..n {
        for p in 0..points {
            // The grid's coordinates of this output point, x first.
            let g: Vec<f32> = (0..spatial)
                .map(|k| grid[(b * spatial + k) * points + p])
                .collect();
            for ch in 0..c {
                let plane = &data[(b * c + ch) * in_points..][..in_points];
                out[(b * c + ch) * points + p] = if spatial == 2 {
                    sample_2d(plane, &axes, g[1], g[0], method)?
                } else {
                    sample_3d(plane, &axes, g[2], g[1], g[0], method)?
                };
            }
        }
    }
    Ok(Value::tensor(f32_tensor(shape, &out)?))
}

/// `_get_pixel_value` of a 2-D plane: `0` outside.
fn pixel(plane: &[f32], h: usize, w: usize, y: i64, x: i64) -> f32 {
    if y >= 0 && x >= 0 && y < h as i64 && x < w as i64 {
        plane[y as usize * w + x as usize]
    } else {
        0.0
    }
}

fn sample_2d(plane: &[f32], axes: &[Axis], gy: f32, gx: f32, method: Method) -> EvalResult<f32> {
    let (ay, ax) = (axes[0], axes[1]);
    let (h, w) = (ay.size, ax.size);
    match method {
        Method::Bilinear => {
            let y = check_coordinate(ay.source(gy)?)?;
            let x = check_coordinate(ax.source(gx)?)?;
            let (y0, x0) = (y.floor() as i64, x.floor() as i64);
            let dy = y - y0 as f32;
            let dx = x - x0 as f32;
            Ok(pixel(plane, h, w, y0, x0) * (1.0 - dy) * (1.0 - dx)
                + pixel(plane, h, w, y0, x0 + 1) * (1.0 - dy) * dx
                + pixel(plane, h, w, y0 + 1, x0) * dy * (1.0 - dx)
                + pixel(plane, h, w, y0 + 1, x0 + 1) * dy * dx)
        }
        Method::Nearest => {
            let y = check_coordinate(ay.source(gy)?)?;
            let x = check_coordinate(ax.source(gx)?)?;
            Ok(pixel(
                plane,
                h,
                w,
                y.round_ties_even() as i64,
                x.round_ties_even() as i64,
            ))
        }
        Method::Bicubic => {
            let y = check_coordinate(ay.unnormalize(gy))?;
            let x = check_coordinate(ax.unnormalize(gx))?;
            let (yf, xf) = (y.floor() as i64, x.floor() as i64);
            let (fy, fx) = (y - yf as f32, x - xf as f32);
            let mut rows = [0.0f32; 4];
            for (i, row) in rows.iter_mut().enumerate() {
                let yi = ay.tap(yf - 1 + i as i64)?;
                let mut p = [0.0f32; 4];
                for (k, v) in p.iter_mut().enumerate() {
                    *v = pixel(plane, h, w, yi, ax.tap(xf - 1 + k as i64)?);
                }
                *row = cubic(p, fx);
            }
            Ok(cubic(rows, fy))
        }
    }
}

/// TOPI's `cubic_interp_1d` with `A = -0.75`.
fn cubic(p: [f32; 4], t: f32) -> f32 {
    const A: f32 = -0.75;
    let near = |f: f32| ((1.25f32 * f - 2.25f32) * f) * f + 1.0;
    let far = |f: f32| ((A * f - (-3.75f32)) * f + -6.0f32) * f - (-3.0f32);
    p[0] * far(t + 1.0) + p[1] * near(t) + p[2] * near(1.0 - t) + p[3] * far(2.0 - t)
}

fn sample_3d(
    plane: &[f32],
    axes: &[Axis],
    gz: f32,
    gy: f32,
    gx: f32,
    method: Method,
) -> EvalResult<f32> {
    let (az, ay, ax) = (axes[0], axes[1], axes[2]);
    let (d, h, w) = (az.size, ay.size, ax.size);
    let z = check_coordinate(az.source(gz)?)?;
    let y = check_coordinate(ay.source(gy)?)?;
    let x = check_coordinate(ax.source(gx)?)?;
    let at = |zi: i64, yi: i64, xi: i64| {
        if zi >= 0 && zi < d as i64 {
            pixel(&plane[zi as usize * h * w..][..h * w], h, w, yi, xi)
        } else {
            0.0
        }
    };
    if method == Method::Nearest {
        return Ok(at(
            z.round_ties_even() as i64,
            y.round_ties_even() as i64,
            x.round_ties_even() as i64,
        ));
    }
    let (z0, y0, x0) = (z.floor() as i64, y.floor() as i64, x.floor() as i64);
    let (dz, dy, dx) = (z - z0 as f32, y - y0 as f32, x - x0 as f32);
    let (z1, y1, x1) = (z0 + 1, y0 + 1, x0 + 1);
    Ok(at(z0, y0, x0) * (1.0 - dx) * (1.0 - dy) * (1.0 - dz)
        + at(z0, y0, x1) * dx * (1.0 - dy) * (1.0 - dz)
        + at(z1, y1, x0) * (1.0 - dx) * dy * dz
        + at(z1, y1, x1) * dx * dy * dz
        + at(z0, y1, x0) * (1.0 - dx) * dy * (1.0 - dz)
        + at(z1, y0, x1) * dx * (1.0 - dy) * dz
        + at(z1, y0, x0) * (1.0 - dx) * (1.0 - dy) * dz
        + at(z0, y1, x1) * dx * dy * (1.0 - dz))
}
