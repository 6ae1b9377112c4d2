//! Gradients of 2-D pooling (`topi::nn::pool_grad`): `nn.max_pool2d_grad`
//! and `nn.avg_pool2d_grad`, on 4-D data in any permutation of `NCHW` (or
//! 5-D with a split channel), as Relay's `Pool2DGradCompute` calls TOPI
//! (dilation is ignored there, and here).
//!
//! Each input element sums, over the output windows that may cover it
//! (row-major over `ceil(k / s)` candidates per axis), the output gradient
//! of those that do: for an average divided by TOPI's count, for a maximum
//! only where the window's first maximal element (TOPI's argmax reducer,
//! seeded with index -1 and the type's lowest value, so a window whose
//! elements all equal that value routes nothing) is this element. Each
//! step of the sum rounds to the type, zeros included, as TOPI's reduction
//! does; TVM's x86 schedule does not reorder it, so float results agree.
//!
//! TOPI's max-gradient compute bounds the candidate windows only from
//! below; a candidate past the last output row reads beyond the argmax
//! buffer in TVM's code (its tests pass because such reads never match).
//! We take those candidates as not covering the element.

use super::num::{on_cols, Num};
use super::tensor::{decode, dims, encode};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.max_pool2d_grad" | "nn.avg_pool2d_grad" => pool2d_grad,
        _ => return None,
    })
}

/// The window geometry along the two pooled axes.
struct Geometry {
    /// Positions of `H` and `W` among the axes.
    axes: [usize; 2],
    kernel: [i64; 2],
    stride: [i64; 2],
    /// Padding before each axis.
    head: [i64; 2],
    /// The data's extent along each axis.
    extent: [i64; 2],
    /// The output gradient's extent along each axis.
    out: [i64; 2],
    /// The padded extent (data + both paddings, ceil mode included).
    padded: [i64; 2],
}

/// `find_height_width`: the positions of `H` and `W` among the layout's
/// axes (digits of split axes skipped); split `h`/`w` are refused.
fn height_width(layout: &str, rank: usize) -> EvalResult<[usize; 2]> {
    let letters: Vec<char> = layout.chars().filter(|c| c.is_ascii_alphabetic()).collect();
    let at = |c: char| letters.iter().position(|&l| l == c);
    match (at('H'), at('W')) {
        (Some(h), Some(w)) if letters.len() == rank && at('h').is_none() && at('w').is_none() => {
            Ok([h, w])
        }
        _ => unsupported(format!("pool2d_grad: layout {layout} for {rank}-D data")),
    }
}

/// A 2-entry attribute (one value is repeated).
fn pair(call: &CallInfo, name: &str, default: i64) -> EvalResult<[i64; 2]> {
    let v = call.ints(name)?.unwrap_or_else(|| vec![default; 2]);
    match v.as_slice() {
        [a] => Ok([*a, *a]),
        [a, b] => Ok([*a, *b]),
        _ => unsupported(format!("{}: `{name}` must have 1 or 2 entries", call.op)),
    }
}

fn pool2d_grad(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let out_grad = arg_tensor(args, 0, call)?;
    let data = arg_tensor(args, 1, call)?;
    let rank = data.ndim();
    if !(rank == 4 || rank == 5) || out_grad.ndim() != rank {
        return unsupported(format!("{}: 4-D or 5-D tensors expected", call.op));
    }
    let axes = height_width(call.str("layout").unwrap_or("NCHW"), rank)?;
    let kernel = pair(call, "pool_size", 1)?;
    let stride = pair(call, "strides", 1)?;
    // Relay's compute widens `padding` to (top, left, bottom, right).
    let p = call.ints("padding")?.unwrap_or_else(|| vec![0]);
    let (head, mut tail) = match p.as_slice() {
        [a] => ([*a, *a], [*a, *a]),
        [a, b] => ([*a, *b], [*a, *b]),
        [a, b, c, d] => ([*a, *b], [*c, *d]),
        _ => return unsupported(format!("{}: `padding` of {} entries", call.op, p.len())),
    };
    if kernel.iter().chain(&stride).any(|&v| v < 1) || head.iter().chain(&tail).any(|&v| v < 0) {
        return unsupported(format!("{}: invalid window", call.op));
    }
    if call.bool_or("ceil_mode", false) {
        for a in 0..2 {
            tail[a] += stride[a] - 1;
        }
    }
    let extent = [data.shape[axes[0]], data.shape[axes[1]]];
    let mut out = [0; 2];
    for a in 0..2 {
        out[a] = (extent[a] - kernel[a] + head[a] + tail[a]) / stride[a] + 1;
    }
    let mut want_out_shape = data.shape.clone();
    want_out_shape[axes[0]] = out[0];
    want_out_shape[axes[1]] = out[1];
    if out_grad.shape != want_out_shape || out.iter().any(|&o| o < 1) {
        return unsupported(format!(
            "{}: the output gradient's shape is not the pooling's",
            call.op
        ));
    }
    if out_grad.dtype != data.dtype {
        return unsupported(format!("{}: the operands' types differ", call.op));
    }
    call.check_size(&data.shape)?;
    let g = Geometry {
        axes,
        kernel,
        stride,
        head,
        extent,
        out,
        padded: [extent[0] + head[0] + tail[0], extent[1] + head[1] + tail[1]],
    };
    let dt = data.dtype;
    let shape = dims(&data.shape);
    let is_max = call.op == "nn.max_pool2d_grad";
    let include_pad = call.bool_or("count_include_pad", false);
    let col = on_cols!(decode(out_grad)?, decode(data)?, (grad, x) => {
        if is_max {
            max_grad(&grad, &x, &shape, &g, dt)
        } else {
            avg_grad(&grad, &shape, &g, dt, include_pad)?
        }
    }, unsupported("pool2d_grad: the operands' types differ"));
    Ok(Value::tensor(encode(&col, dt, data.shape.clone())?))
}

/// Row-major strides of `shape`.
fn strides_of(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The multi-index of flat element `flat` of `shape`.
fn unravel(mut flat: usize, strides: &[usize]) -> Vec<usize> {
    strides
        .iter()
        .map(|&s| {
            let i = flat / s;
            flat %= s;
            i
        })
        .collect()
}

/// For the element at (padded) position `pad` along axis `a`: the
/// candidate output positions `pad / s - w` for `w` in `0..ceil(k / s)`
/// with TOPI's lower bound (`(pad - k) / s + 1`, or 0 near the start).
fn candidates(g: &Geometry, a: usize, pad: i64) -> impl Iterator<Item = Option<i64>> {
    let (k, s) = (g.kernel[a], g.stride[a]);
    let lower = if pad < k { 0 } else { (pad - k) / s + 1 };
    (0..(k + s - 1) / s).map(move |w| {
        let o = pad / s - w;
        (o >= lower).then_some(o)
    })
}

fn avg_grad<T: Num>(
    grad: &[T],
    shape: &[usize],
    g: &Geometry,
    dt: DataType,
    include_pad: bool,
) -> EvalResult<Vec<T>> {
    let [ah, aw] = g.axes;
    let in_strides = strides_of(shape);
    let mut out_shape = shape.to_vec();
    out_shape[ah] = g.out[0] as usize;
    out_shape[aw] = g.out[1] as usize;
    let out_strides = strides_of(&out_shape);
    let count = |oh: i64, ow: i64| -> i64 {
        if include_pad {
            return g.kernel[0] * g.kernel[1];
        }
        let span = |a: usize, o: i64| {
            let start = o * g.stride[a] - g.head[a];
            let end = (start + g.kernel[a]).min(g.extent[a]);
            end - start.max(0)
        };
        (span(0, oh) * span(1, ow)).max(1)
    };
    let total: usize = shape.iter().product();
    let mut result = Vec::with_capacity(total);
    for flat in 0..total {
        let idx = unravel(flat, &in_strides);
        let base: usize = (0..shape.len())
            .filter(|&d| d != ah && d != aw)
            .map(|d| idx[d] * out_strides[d])
            .sum();
        let mut acc = T::default();
        for oh in candidates(g, 0, idx[ah] as i64 + g.head[0]) {
            for ow in candidates(g, 1, idx[aw] as i64 + g.head[1]) {
                let term = match (oh, ow) {
                    (Some(oh), Some(ow)) if oh < g.out[0] && ow < g.out[1] => {
                        let at =
                            base + oh as usize * out_strides[ah] + ow as usize * out_strides[aw];
                        grad[at]
                            .div(T::from_count(count(oh, ow), dt), dt)
                            .ok_or_else(|| {
                                super::EvalError::Unsupported(
                                    "nn.avg_pool2d_grad: an integer division by zero".into(),
                                )
                            })?
                    }
                    _ => T::default(),
                };
                acc = (acc + term).fix(dt);
            }
        }
        result.push(acc);
    }
    Ok(result)
}

fn max_grad<T: Num>(grad: &[T], x: &[T], shape: &[usize], g: &Geometry, dt: DataType) -> Vec<T> {
    let [ah, aw] = g.axes;
    let in_strides = strides_of(shape);
    // Indices into the padded data, as TOPI ravels them.
    let mut padded_shape = shape.to_vec();
    padded_shape[ah] = g.padded[0] as usize;
    padded_shape[aw] = g.padded[1] as usize;
    let padded_strides = strides_of(&padded_shape);
    let mut out_shape = shape.to_vec();
    out_shape[ah] = g.out[0] as usize;
    out_shape[aw] = g.out[1] as usize;
    let out_strides = strides_of(&out_shape);
    // The argmax of each window (a padded flat index; -1 for none).
    let out_total: usize = out_shape.iter().product();
    let mut argmax = Vec::with_capacity(out_total);
    for flat in 0..out_total {
        let o = unravel(flat, &out_strides);
        let (mut best_index, mut best) = (-1i64, T::lowest(dt));
        for dh in 0..g.kernel[0] {
            for dw in 0..g.kernel[1] {
                let mut window = o.clone();
                window[ah] = (o[ah] as i64 * g.stride[0] + dh) as usize;
                window[aw] = (o[aw] as i64 * g.stride[1] + dw) as usize;
                let index: usize = window.iter().zip(&padded_strides).map(|(i, s)| i * s).sum();
                let (h, w) = (window[ah] as i64 - g.head[0], window[aw] as i64 - g.head[1]);
                let value = if (0..g.extent[0]).contains(&h) && (0..g.extent[1]).contains(&w) {
                    let mut at = window.clone();
                    at[ah] = h as usize;
                    at[aw] = w as usize;
                    x[at.iter()
                        .zip(&in_strides)
                        .map(|(i, s)| i * s)
                        .sum::<usize>()]
                } else {
                    T::lowest(dt)
                };
                // TOPI's argmax combiner: keep the accumulator when it is
                // larger, or equal with the smaller index.
                let bigger = best > value;
                let keep_index = bigger || (best == value && best_index < index as i64);
                if !keep_index {
                    best_index = index as i64;
                }
                if !bigger {
                    best = value;
                }
            }
        }
        argmax.push(best_index);
    }
    let total: usize = shape.iter().product();
    let mut result = Vec::with_capacity(total);
    for flat in 0..total {
        let idx = unravel(flat, &in_strides);
        let mut pad_idx = idx.clone();
        pad_idx[ah] += g.head[0] as usize;
        pad_idx[aw] += g.head[1] as usize;
        let own: usize = pad_idx
            .iter()
            .zip(&padded_strides)
            .map(|(i, s)| i * s)
            .sum();
        let base: usize = (0..shape.len())
            .filter(|&d| d != ah && d != aw)
            .map(|d| idx[d] * out_strides[d])
            .sum();
        let mut acc = T::default();
        for oh in candidates(g, 0, pad_idx[ah] as i64) {
            for ow in candidates(g, 1, pad_idx[aw] as i64) {
                let term = match (oh, ow) {
                    (Some(oh), Some(ow)) if oh < g.out[0] && ow < g.out[1] => {
                        let at =
                            base + oh as usize * out_strides[ah] + ow as usize * out_strides[aw];
                        if argmax[at] == own as i64 {
                            grad[at]
                        } else {
                            T::default()
                        }
                    }
                    _ => T::default(),
                };
                acc = (acc + term).fix(dt);
            }
        }
        result.push(acc);
    }
    result
}
