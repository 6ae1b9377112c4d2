//! `nn.deformable_conv2d`: TOPI's `deformable_conv2d_nchw` (kernel `OIHW`)
//! and `deformable_conv2d_nhwc` (kernel `HWIO`), the generic computes TVM
//! uses on every CPU target; `groups` must be 1, as TOPI asserts.
//!
//! Each kernel tap samples the `float32` data bilinearly
//! (`bilinear_sample_nchw`/`_nhwc`) at its regular position `y · stride -
//! pad_top + kh · dilation` (an integer) plus the offset, `0` when the point
//! is outside the map; the samples are cast to `out_dtype` (`float32` or
//! `float64`) and multiplied with the kernel, summed sequentially from zero
//! over input channels, then kernel rows, then kernel columns (`NCHW`), or
//! rows, columns, channels (`NHWC`): TOPI's reduction order, so the sums
//! are TVM's, each operation rounded once. The deformable group of input
//! channel `c` is `c div (C / deformable_groups)`.

use super::vision_util::{bilinear_sample, f32_values};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.deformable_conv2d" => deformable_conv2d,
        _ => return None,
    })
}

/// A pair attribute, `[1, 1]` when absent.
fn pair(call: &CallInfo, name: &str) -> EvalResult<[usize; 2]> {
    match call.ints(name)?.as_deref() {
        None => Ok([1, 1]),
        Some(&[a, b]) if a > 0 && b > 0 => Ok([a as usize, b as usize]),
        Some(other) => unsupported(format!("{}: `{name}` {other:?}", call.op)),
    }
}

fn dims4(t: &TensorData, what: &str) -> EvalResult<[usize; 4]> {
    match *t.shape.as_slice() {
        [a, b, c, d] if a >= 0 && b >= 0 && c >= 0 && d >= 0 => {
            Ok([a as usize, b as usize, c as usize, d as usize])
        }
        _ => unsupported(format!("nn.deformable_conv2d: {what} is not 4-D")),
    }
}

fn deformable_conv2d(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let data_t = arg_tensor(args, 0, call)?;
    let offset_t = arg_tensor(args, 1, call)?;
    let weight_t = arg_tensor(args, 2, call)?;
    let nhwc = match call.str("data_layout").unwrap_or("NCHW") {
        "NCHW" => false,
        "NHWC" => true,
        other => return unsupported(format!("nn.deformable_conv2d: layout {other}")),
    };
    if call.int_or("groups", 1) != 1 {
        return unsupported("nn.deformable_conv2d: TOPI supports only groups = 1");
    }
    let out_dtype = match call.dtype("out_dtype")? {
        None => data_t.dtype,
        Some(d) => d,
    };
    let wide = match out_dtype {
        d if d == DataType::FLOAT32 => false,
        d if d == DataType::float(64) => true,
        other => return unsupported(format!("nn.deformable_conv2d: out_dtype {other}")),
    };
    let data = f32_values(data_t, "the data")?;
    let offset = f32_values(offset_t, "the offsets")?;
    let weight = f32_values(weight_t, "the weight")?;
    let [n, a1, a2, a3] = dims4(data_t, "the data")?;
    let (c, h, w) = if nhwc { (a3, a1, a2) } else { (a1, a2, a3) };
    let [o0, o1, o2, o3] = dims4(offset_t, "the offsets")?;
    let (offset_c, out_h, out_w) = if nhwc { (o3, o1, o2) } else { (o1, o2, o3) };
    let [k0, k1, k2, k3] = dims4(weight_t, "the weight")?;
    let (out_c, kernel_c, kh, kw) = if nhwc {
        (k3, k2, k0, k1)
    } else {
        (k0, k1, k2, k3)
    };
    let groups = call.int_or("deformable_groups", 1);
    if o0 != n || kernel_c != c || groups <= 0 || c % groups as usize != 0 || c == 0 {
        return unsupported("nn.deformable_conv2d: the shapes do not fit together");
    }
    if offset.iter().any(|v| !v.is_finite()) {
        // TVM converts the sample's floor to an integer unchecked.
        return unsupported("nn.deformable_conv2d: an offset that is not finite");
    }
    let per_group = kernel_c / groups as usize;
    if (c - 1) / per_group * kh * kw * 2 + (kh * kw - 1) * 2 + 1 >= offset_c {
        return unsupported("nn.deformable_conv2d: too few offset channels");
    }
    let [stride_h, stride_w] = pair(call, "strides")?;
    let [dil_h, dil_w] = pair(call, "dilation")?;
    let (pad_top, pad_left) = match call.ints("padding")?.as_deref() {
        None => (0, 0),
        Some(&[ph, pw]) | Some(&[ph, pw, _, _]) => (ph, pw),
        Some(other) => return unsupported(format!("nn.deformable_conv2d: padding {other:?}")),
    };
    let shape: Vec<i64> = if nhwc {
        vec![n, out_h, out_w, out_c]
    } else {
        vec![n, out_c, out_h, out_w]
    }
    .into_iter()
    .map(|d| d as i64)
    .collect();
    call.check_size(&shape)?;
    let data_at = |b: usize, ch: usize, y: usize, x: usize| {
        data[if nhwc {
            ((b * h + y) * w + x) * c + ch
        } else {
            ((b * c + ch) * h + y) * w + x
        }]
    };
    let offset_at = |b: usize, ch: usize, y: usize, x: usize| {
        offset[if nhwc {
            ((b * out_h + y) * out_w + x) * offset_c + ch
        } else {
            ((b * offset_c + ch) * out_h + y) * out_w + x
        }]
    };
    let weight_at = |f: usize, ch: usize, ry: usize, rx: usize| {
        weight[if nhwc {
            ((ry * kw + rx) * c + ch) * out_c + f
        } else {
            ((f * c + ch) * kh + ry) * kw + rx
        }]
    };
    // The deformed sample of tap (ry, rx) of channel ch at output (y, x).
    let sample = |b: usize, ch: usize, ry: usize, rx: usize, y: usize, x: usize| -> f32 {
        let base = ch / per_group * (kh * kw * 2) + (ry * kw + rx) * 2;
        let yy = (y * stride_h) as i64 - pad_top + (ry * dil_h) as i64;
        let xx = (x * stride_w) as i64 - pad_left + (rx * dil_w) as i64;
        let sy = yy as f32 + offset_at(b, base, y, x);
        let sx = xx as f32 + offset_at(b, base + 1, y, x);
        if sy < 0.0 || sx < 0.0 || sy >= h as f32 || sx >= w as f32 {
            return 0.0;
        }
        bilinear_sample(sy, sx, h, w, |yp, xp| data_at(b, ch, yp, xp))
    };
    // The taps in TOPI's reduction order.
    let taps: Vec<(usize, usize, usize)> = if nhwc {
        (0..kh)
            .flat_map(|ry| (0..kw).flat_map(move |rx| (0..c).map(move |ch| (ch, ry, rx))))
            .collect()
    } else {
        (0..c)
            .flat_map(|ch| (0..kh).flat_map(move |ry| (0..kw).map(move |rx| (ch, ry, rx))))
            .collect()
    };
    let mut out32 = Vec::new();
    let mut out64 = Vec::new();
    let mut emit = |b: usize, f: usize, y: usize, x: usize| {
        if wide {
            let mut acc = 0.0f64;
            for &(ch, ry, rx) in &taps {
                acc += f64::from(sample(b, ch, ry, rx, y, x)) * f64::from(weight_at(f, ch, ry, rx));
            }
            out64.push(acc);
        } else {
            let mut acc = 0.0f32;
            for &(ch, ry, rx) in &taps {
                acc += sample(b, ch, ry, rx, y, x) * weight_at(f, ch, ry, rx);
            }
            out32.push(acc);
        }
    };
    for b in 0..n {
        if nhwc {
            for y in 0..out_h {
                for x in 0..out_w {
                    for f in 0..out_c {
                        emit(b, f, y, x);
                    }
                }
            }
        } else {
            for f in 0..out_c {
                for y in 0..out_h {
                    for x in 0..out_w {
                        emit(b, f, y, x);
                    }
                }
            }
        }
    }
    let tensor = if wide {
        TensorData::from_f64s(out_dtype, shape, &out64)
    } else {
        TensorData::from_f64s(
            out_dtype,
            shape,
            &out32.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>(),
        )
    };
    tensor
        .map(Value::tensor)
        .map_err(|e| super::EvalError::Unsupported(e.message))
}
