//! Resizing (TOPI's `image/resize.py`): `image.resize1d`, `image.resize2d`,
//! `image.resize3d`, `image.crop_and_resize`, `nn.upsampling` and
//! `nn.upsampling3d` (a resize with
//! `align_corners` or `asymmetric` coordinates and the size `round(n ·
//! scale)`), with every method (`nearest_neighbor`, `linear`, `cubic`),
//! coordinate transformation mode and rounding method of TOPI, for
//! channel-first and channel-last layouts.
//!
//! As in TOPI, coordinates and interpolation are computed in float32
//! whatever the data type (pixels are read as float32, indices clamped to
//! the image), with TOPI's formulas in their order: `lerp(a, b, t) = a·(1-t)
//! + b·t` along the innermost axis first, cubic weights
//! `α(t³-2t²+t)`, `(α+2)t³-(3+α)t²+1`, … (normalised when
//! `cubic_exclude`); the result is cast to `out_dtype` (or the data type)
//! at the end, truncating towards zero for integers. `round` is
//! `nearbyint` (ties to even), as LLVM lowers TVM's `round`.
//!
//! Each float32 operation is correctly rounded both here and in TVM's
//! code, so results are bit-exact unless LLVM contracts a multiply-add (it
//! does not without fast-math).

use super::layout::spatial_letters;
use super::tensor::{decode, dims, encode, for_each_index, numel, strides, Col};
use super::{arg_tensor, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::AttrValue;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "image.resize1d" | "image.resize2d" | "image.resize3d" => resize,
        "nn.upsampling" | "nn.upsampling3d" => upsampling,
        "image.crop_and_resize" => crop_and_resize,
        _ => return None,
    })
}

/// What a resize needs to know, per spatial axis where it varies.
struct Resize<'a> {
    /// Positions of the spatial axes in the data.
    axes: Vec<usize>,
    out_sizes: Vec<usize>,
    method: &'a str,
    mode: &'a str,
    rounding: String,
    alpha: f64,
    exclude_outside: bool,
    extrapolation: f32,
    roi: Vec<f32>,
}

/// The spatial axes of a `N C spatial…` or `N spatial… C` layout.
fn spatial_axes(layout: &str, s: usize, call: &CallInfo) -> EvalResult<Vec<usize>> {
    let letters: String = spatial_letters(s).iter().collect();
    if layout == format!("NC{letters}") {
        Ok((2..s + 2).collect())
    } else if layout == format!("N{letters}C") {
        Ok((1..s + 1).collect())
    } else {
        unsupported(format!("{}: layout {layout}", call.op))
    }
}

fn resize(args: &[Value], call: &CallInfo) -> EvalResult {
    if args.len() != 1 && args.len() != 2 {
        return unsupported(format!("{}: one data argument expected", call.op));
    }
    let x = arg_tensor(args, 0, call)?;
    let s = match call.op {
        "image.resize1d" => 1,
        "image.resize3d" => 3,
        _ => 2,
    };
    let default_layout: String = ['N', 'C'].iter().chain(spatial_letters(s)).collect();
    let layout = call.str("layout").unwrap_or(&default_layout);
    let axes = spatial_axes(layout, s, call)?;
    if x.ndim() != s + 2 {
        return unsupported(format!("{}: the data must be {}-D", call.op, s + 2));
    }
    let sizes = call.ints("size")?.unwrap_or_default();
    if sizes.len() != s || sizes.iter().any(|&v| v < 1) {
        return unsupported(format!(
            "{}: `size` must have {s} positive entries",
            call.op
        ));
    }
    let roi: Vec<f32> = match call.attr("roi").and_then(AttrValue::as_array) {
        Some(values) => values
            .iter()
            .map(|v| v.as_f64().map(|f| f as f32))
            .collect::<Option<_>>()
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let mode = call
        .str("coordinate_transformation_mode")
        .unwrap_or("half_pixel");
    if mode == "tf_crop_and_resize" && roi.len() != 2 * s {
        return unsupported(format!("{}: tf_crop_and_resize needs a roi", call.op));
    }
    let r = Resize {
        axes,
        out_sizes: sizes.iter().map(|&v| v as usize).collect(),
        method: call.str("method").unwrap_or("linear"),
        mode,
        rounding: call.str("rounding_method").unwrap_or("").to_string(),
        alpha: call.f64("cubic_alpha").unwrap_or(-0.5),
        exclude_outside: call.int_or("cubic_exclude", 0) != 0,
        extrapolation: call.f64("extrapolation_value").unwrap_or(0.0) as f32,
        roi,
    };
    let out_dtype = call.dtype("out_dtype")?.unwrap_or(x.dtype);
    run(x, &r, out_dtype, call)
}

/// `nn.upsampling` / `nn.upsampling3d`: the size is `round(n · scale)`,
/// coordinates `align_corners` or `asymmetric`; `bilinear`/`trilinear` and
/// `bicubic` name the linear and cubic methods.
fn upsampling(args: &[Value], call: &CallInfo) -> EvalResult {
    super::expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let three = call.op == "nn.upsampling3d";
    let s = if three { 3 } else { 2 };
    let default_layout = if three { "NCDHW" } else { "NCHW" };
    let layout = call.str("layout").unwrap_or(default_layout);
    let axes = spatial_axes(layout, s, call)?;
    if x.ndim() != s + 2 {
        return unsupported(format!("{}: the data must be {}-D", call.op, s + 2));
    }
    let scale_names: &[&str] = if three {
        &["scale_d", "scale_h", "scale_w"]
    } else {
        &["scale_h", "scale_w"]
    };
    let d = dims(&x.shape);
    let mut out_sizes = Vec::with_capacity(s);
    for (a, name) in scale_names.iter().enumerate() {
        let size = (d[axes[a]] as f64 * call.f64(name)?).round_ties_even();
        if !(1.0..1e12).contains(&size) {
            return unsupported(format!("{}: scale {name}", call.op));
        }
        out_sizes.push(size as usize);
    }
    let method = match call.str("method").unwrap_or("nearest_neighbor") {
        "nearest_neighbor" => "nearest_neighbor",
        "bilinear" | "trilinear" | "linear" => "linear",
        "bicubic" | "cubic" => "cubic",
        other => return unsupported(format!("{}: method {other}", call.op)),
    };
    let align = if three {
        call.str("coordinate_transformation_mode") == Some("align_corners")
    } else {
        call.bool_or("align_corners", false)
    };
    let mode = if three {
        call.str("coordinate_transformation_mode")
            .unwrap_or("half_pixel")
    } else if align {
        "align_corners"
    } else {
        "asymmetric"
    };
    let r = Resize {
        axes,
        out_sizes,
        method,
        mode,
        rounding: String::new(),
        alpha: -0.5,
        exclude_outside: false,
        extrapolation: 0.0,
        roi: Vec::new(),
    };
    run(x, &r, x.dtype, call)
}

/// TOPI's `can_convert_multiply_to_intdiv`: a nearest, asymmetric resize by
/// a whole factor indexes with an integer division.
fn int_div_factor(image: usize, target: usize) -> Option<usize> {
    if image == 0 || !target.is_multiple_of(image) {
        return None;
    }
    let factor = target / image;
    let check = 1.0 / (1e-5 * image as f64 + 1e-5);
    (factor as f64 <= check).then_some(factor)
}

/// `get_inx`: the input coordinate of output position `x` along an axis.
fn input_coordinate(r: &Resize, a: usize, x: usize, image: usize, target: usize) -> f32 {
    let (xf, w, t) = (x as f32, image as f32, target as f32);
    let scale = w / t;
    match r.mode {
        "half_pixel" => (xf + 0.5) * scale - 0.5,
        "align_corners" => (image as f32 - 1.0) / (target as f32 - 1.0) * xf,
        "pytorch_half_pixel" => {
            if target > 1 {
                (xf + 0.5) * scale - 0.5
            } else {
                0.0
            }
        }
        "tf_half_pixel_for_nn" => (xf + 0.5) * scale,
        "tf_crop_and_resize" => {
            let s = r.axes.len();
            let (start, end) = (r.roi[a], r.roi[s + a]);
            let last = image as f32 - 1.0;
            if target > 1 {
                start * last + xf * (end - start) * last / (target as f32 - 1.0)
            } else {
                0.5 * (start + end) * last
            }
        }
        // asymmetric
        _ => scale * xf,
    }
}

/// `get_closest_index`.
fn closest(v: f32, rounding: &str) -> i64 {
    let r = match rounding {
        "round" => v.round_ties_even(),
        "round_prefer_floor" => (v - 0.5).ceil(),
        "round_prefer_ceil" => (v + 0.5).floor(),
        "ceil" => (v - 1e-5).ceil(),
        _ => (v + 1e-5).floor(),
    };
    r as i64
}

/// The four cubic weights of fraction `t` (`_cubic_spline_weights`).
fn cubic_weights(t: f32, alpha: f64) -> [f32; 4] {
    let a = alpha as f32;
    let (t2, t3) = (t * t, t * t * t);
    [
        a * (t3 - 2.0 * t2 + t),
        (alpha + 2.0) as f32 * t3 - (3.0 + alpha) as f32 * t2 + 1.0,
        -(alpha + 2.0) as f32 * t3 + (3.0 + 2.0 * alpha) as f32 * t2 - a * t,
        -a * t3 + a * t2,
    ]
}

/// One axis of the interpolation of an output element: the taps (input
/// positions before clamping) and their weights (`None` for nearest).
struct Taps {
    positions: Vec<i64>,
    weights: Option<Vec<f32>>,
    /// Whether the coordinate lies outside the image (tf_crop_and_resize
    /// then returns the extrapolation value).
    outside: bool,
}

fn taps(r: &Resize, a: usize, x: usize, image: usize) -> EvalResult<Taps> {
    let target = r.out_sizes[a];
    if r.mode == "align_corners" && target == 1 {
        return unsupported("resize: align_corners to a size of 1 divides by zero in TOPI");
    }
    let int_div = if r.method == "nearest_neighbor" && r.mode == "asymmetric" {
        int_div_factor(image, target)
    } else {
        None
    };
    let v = match int_div {
        Some(factor) => (x / factor) as f32,
        None => input_coordinate(r, a, x, image, target),
    };
    let outside = r.mode == "tf_crop_and_resize" && (v < 0.0 || v > image as f32 - 1.0);
    if !v.is_finite() {
        return unsupported("resize: a coordinate is not finite");
    }
    Ok(match r.method {
        "nearest_neighbor" => {
            let index = match int_div {
                Some(factor) => (x / factor) as i64,
                None => {
                    let rounding = match r.rounding.as_str() {
                        "" if r.mode == "align_corners" => "round",
                        "" => "floor",
                        other => other,
                    };
                    closest(v, rounding)
                }
            };
            Taps {
                positions: vec![index],
                weights: None,
                outside,
            }
        }
        "linear" => {
            let floor = v.floor();
            let t = v - floor;
            let i = floor as i64;
            Taps {
                positions: vec![i, i + 1],
                weights: Some(vec![1.0 - t, t]),
                outside,
            }
        }
        "cubic" => {
            let floor = v.floor();
            let t = v - floor;
            let i = floor as i64;
            let mut w = cubic_weights(t, r.alpha);
            if r.exclude_outside {
                for (k, wk) in w.iter_mut().enumerate() {
                    if i - 1 + (k as i64) < 0 || i + k as i64 > image as i64 {
                        *wk = 0.0;
                    }
                }
                let sum = w[0] + w[1] + w[2] + w[3];
                w.iter_mut().for_each(|wk| *wk /= sum);
            }
            Taps {
                positions: (0..4).map(|k| i - 1 + k).collect(),
                weights: Some(w.to_vec()),
                outside,
            }
        }
        other => return unsupported(format!("resize: method {other}")),
    })
}

/// Interpolates along axes `a..` (outermost first, so the innermost axis
/// is combined first, as TOPI nests its lerps).
fn interpolate(
    v: &[f32],
    base: usize,
    all: &[&Taps],
    a: usize,
    st: &[usize],
    d: &[usize],
    axes: &[usize],
) -> f32 {
    if a == all.len() {
        return v[base];
    }
    let ax = axes[a];
    let at = |p: i64| base + (p.clamp(0, d[ax] as i64 - 1) as usize) * st[ax];
    let t = &all[a];
    match &t.weights {
        None => interpolate(v, at(t.positions[0]), all, a + 1, st, d, axes),
        Some(w) if w.len() == 2 => {
            let p0 = interpolate(v, at(t.positions[0]), all, a + 1, st, d, axes);
            let p1 = interpolate(v, at(t.positions[1]), all, a + 1, st, d, axes);
            p0 * w[0] + p1 * w[1]
        }
        Some(w) => {
            let mut acc = 0.0f32;
            for (k, &wk) in w.iter().enumerate() {
                let p = interpolate(v, at(t.positions[k]), all, a + 1, st, d, axes);
                acc += p * wk;
            }
            acc
        }
    }
}

fn run(
    x: &relay_ir::metadata::TensorData,
    r: &Resize,
    out_dtype: relay_ir::dtype::DataType,
    call: &CallInfo,
) -> EvalResult {
    let d = dims(&x.shape);
    let mut out_shape = d.clone();
    for (a, &ax) in r.axes.iter().enumerate() {
        out_shape[ax] = r.out_sizes[a];
    }
    let out_i64: Vec<i64> = out_shape.iter().map(|&v| v as i64).collect();
    call.check_size(&out_i64)?;
    if r.axes.iter().any(|&ax| d[ax] == 0) {
        return unsupported(format!("{}: an empty image", call.op));
    }
    // Every pixel read as float32, as `get_2d_pixel` does.
    let pixels = match super::cast::convert(&decode(x)?, relay_ir::dtype::DataType::FLOAT32)? {
        Col::F32(v) => v,
        _ => return unsupported("resize: pixels"),
    };
    // The taps of each output position along each axis.
    let per_axis: Vec<Vec<Taps>> = r
        .axes
        .iter()
        .enumerate()
        .map(|(a, &ax)| (0..r.out_sizes[a]).map(|i| taps(r, a, i, d[ax])).collect())
        .collect::<EvalResult<_>>()?;
    let st = strides(&d);
    let mut out = Vec::with_capacity(numel(&out_shape));
    for_each_index(&out_shape, |_, idx| {
        let base: usize = idx
            .iter()
            .enumerate()
            .filter(|(k, _)| !r.axes.contains(k))
            .map(|(k, &i)| i * st[k])
            .sum();
        let chosen: Vec<&Taps> = r
            .axes
            .iter()
            .enumerate()
            .map(|(a, &ax)| &per_axis[a][idx[ax]])
            .collect();
        let value = if chosen.iter().any(|t| t.outside) {
            r.extrapolation
        } else {
            interpolate(&pixels, base, &chosen, 0, &st, &d, &r.axes)
        };
        out.push(value);
    });
    let col = super::cast::convert(&Col::F32(out), out_dtype)?;
    Ok(Value::tensor(encode(&col, out_dtype, out_i64)?))
}

/// `image.crop_and_resize` (TOPI's `_resize_2d` with boxes): box `b` of
/// image `box_indices[b]` is sampled at `y1·(H-1) + ((H-1)·(y2-y1) /
/// (crop_h-1))·i` (likewise x), nearest (`round`) or bilinear; a sample
/// outside the image is `extrapolation_value`. A crop size of 1 divides by
/// zero in TOPI and is not folded.
fn crop_and_resize(args: &[Value], call: &CallInfo) -> EvalResult {
    super::expect_args(args, 3, call)?;
    let x = arg_tensor(args, 0, call)?;
    let (boxes, box_indices) = (arg_tensor(args, 1, call)?, arg_tensor(args, 2, call)?);
    let (h_axis, w_axis, c_axis) = match call.str("layout").unwrap_or("NCHW") {
        "NCHW" => (2, 3, 1),
        "NHWC" => (1, 2, 3),
        other => return unsupported(format!("image.crop_and_resize: layout {other}")),
    };
    let crop = call.ints("crop_size")?.unwrap_or_default();
    let method = match call.str("method").unwrap_or("bilinear") {
        "bilinear" | "linear" => "linear",
        "nearest_neighbor" => "nearest_neighbor",
        other => return unsupported(format!("image.crop_and_resize: method {other}")),
    };
    let Col::F32(b) = decode(boxes)? else {
        return unsupported("image.crop_and_resize: float32 boxes expected");
    };
    let Col::Int(index) = decode(box_indices)? else {
        return unsupported("image.crop_and_resize: integer box indices expected");
    };
    let count = index.len();
    if x.ndim() != 4 || crop.len() != 2 || crop.iter().any(|&v| v < 2) || b.len() != 4 * count {
        return unsupported(
            "image.crop_and_resize: 4-D data, [B, 4] boxes and a crop of at least 2x2 expected",
        );
    }
    let d = dims(&x.shape);
    let (height, width, channels) = (d[h_axis], d[w_axis], d[c_axis]);
    let (th, tw) = (crop[0] as usize, crop[1] as usize);
    let mut out_shape = vec![count, 0, 0, 0];
    out_shape[h_axis] = th;
    out_shape[w_axis] = tw;
    out_shape[c_axis] = channels;
    let out_i64: Vec<i64> = out_shape.iter().map(|&v| v as i64).collect();
    call.check_size(&out_i64)?;
    let out_dtype = call.dtype("out_dtype")?.unwrap_or(x.dtype);
    let extrapolation = call.f64("extrapolation_value").unwrap_or(0.0) as f32;
    let pixels = match super::cast::convert(&decode(x)?, relay_ir::dtype::DataType::FLOAT32)? {
        Col::F32(v) => v,
        _ => return unsupported("image.crop_and_resize: pixels"),
    };
    let st = strides(&d);
    let axes = [h_axis, w_axis];
    // The taps of one sample coordinate along an axis of `image` pixels.
    let sample = |v: f32, image: usize| -> Taps {
        let outside = v < 0.0 || v > image as f32 - 1.0;
        if method == "nearest_neighbor" {
            Taps {
                positions: vec![closest(v, "round")],
                weights: None,
                outside,
            }
        } else {
            let floor = v.floor();
            let t = v - floor;
            Taps {
                positions: vec![floor as i64, floor as i64 + 1],
                weights: Some(vec![1.0 - t, t]),
                outside,
            }
        }
    };
    let mut out = vec![0f32; numel(&out_shape)];
    let out_st = strides(&out_shape);
    for (k, &n) in index.iter().enumerate() {
        let Some(n) = usize::try_from(n).ok().filter(|&n| n < d[0]) else {
            return unsupported("image.crop_and_resize: a box index outside the batch");
        };
        let (y1, x1, y2, x2) = (b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]);
        let h_scale = (height as f32 - 1.0) * (y2 - y1) / (th as f32 - 1.0);
        let w_scale = (width as f32 - 1.0) * (x2 - x1) / (tw as f32 - 1.0);
        for i in 0..th {
            let ty = sample(y1 * (height as f32 - 1.0) + h_scale * i as f32, height);
            for j in 0..tw {
                let tx = sample(x1 * (width as f32 - 1.0) + w_scale * j as f32, width);
                for c in 0..channels {
                    let value = if ty.outside || tx.outside {
                        extrapolation
                    } else {
                        let base = n * st[0] + c * st[c_axis];
                        interpolate(&pixels, base, &[&ty, &tx], 0, &st, &d, &axes)
                    };
                    let mut at = k * out_st[0] + c * out_st[c_axis];
                    at += i * out_st[h_axis] + j * out_st[w_axis];
                    out[at] = value;
                }
            }
        }
    }
    let col = super::cast::convert(&Col::F32(out), out_dtype)?;
    Ok(Value::tensor(encode(&col, out_dtype, out_i64)?))
}
