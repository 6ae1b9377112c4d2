//! Pooling (TOPI's `nn/pooling.h`): `nn.max_pool{1,2,3}d`,
//! `nn.avg_pool{1,2,3}d` (padding, dilation, `ceil_mode`,
//! `count_include_pad`), `nn.global_{max,avg}_pool2d` and
//! `nn.adaptive_{max,avg}_pool{1,2,3}d`, in any permutation of plain
//! layouts.
//!
//! The window is walked in row-major order of its axes. A max pool's
//! padding reads the type's lowest value; an average sums the window
//! (padding reads zero), then divides by TOPI's element count: the whole
//! window clipped to the padded extent with `count_include_pad`, else the
//! elements inside the data (at least 1); an adaptive average divides by
//! the product of the window's extents cast to the data type. Integer
//! averages truncate (C division).
//!
//! Max pooling is exact for every type. Averages round each partial sum to
//! the type, in the order above, which is TOPI's compute; TVM's x86
//! schedule keeps that order (it vectorises over the output, not the
//! window), so float sums agree too, up to LLVM's choice of the division
//! (a correctly rounded `fdiv` either way).

use super::layout::{axes_of, padding, per_axis, spatial_letters};
use super::num::{on_col, Num};
use super::tensor::{decode, dims, encode, for_each_index, numel, strides};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.max_pool1d" | "nn.max_pool2d" | "nn.max_pool3d" | "nn.avg_pool1d" | "nn.avg_pool2d"
        | "nn.avg_pool3d" => pool,
        "nn.global_max_pool2d" | "nn.global_avg_pool2d" => global_pool,
        "nn.adaptive_max_pool1d"
        | "nn.adaptive_max_pool2d"
        | "nn.adaptive_max_pool3d"
        | "nn.adaptive_avg_pool1d"
        | "nn.adaptive_avg_pool2d"
        | "nn.adaptive_avg_pool3d" => adaptive_pool,
        _ => return None,
    })
}

fn spatial_rank(op: &str) -> usize {
    if op.contains("1d") {
        1
    } else if op.contains("3d") {
        3
    } else {
        2
    }
}

/// The positions of the spatial axes in the call's `layout`.
fn spatial_axes(call: &CallInfo, x_rank: usize, s: usize) -> EvalResult<Vec<usize>> {
    let spatial = spatial_letters(s);
    let letters: Vec<char> = ['N', 'C'].iter().chain(spatial).copied().collect();
    let default: String = letters.iter().collect();
    let layout = call.str("layout").unwrap_or(&default);
    if let Some(out) = call
        .str("out_layout")
        .filter(|l| !l.is_empty() && *l != layout)
    {
        return unsupported(format!(
            "{}: out_layout {out} differs from the layout",
            call.op
        ));
    }
    if x_rank != s + 2 {
        return unsupported(format!("{}: the data must be {}-D", call.op, s + 2));
    }
    Ok(axes_of(layout, &letters, call)?[2..].to_vec())
}

/// One pooling window per output element: where it starts along each
/// spatial axis (possibly in the padding), how many taps it has, the
/// spacing of its taps, and what an average divides by.
struct Windows {
    out_shape: Vec<usize>,
    axes: Vec<usize>,
    /// Per output element and spatial axis: first tap (in data
    /// coordinates, may be negative) — computed on the fly.
    start: Box<dyn Fn(usize, usize) -> i64>,
    /// Per output element and spatial axis: number of taps.
    taps: Box<dyn Fn(usize, usize) -> usize>,
    dilation: Vec<usize>,
}

/// Reduces every window: `each` gets the output index and a walker that
/// visits the window's taps in row-major order (`None` for a tap in the
/// padding). The windows' starts and sizes are tabulated per axis once,
/// and the walk reuses its buffers, so no output element allocates.
fn reduce_windows<T: Num>(
    x: &[T],
    in_shape: &[usize],
    w: &Windows,
    mut each: impl FnMut(&[usize], &mut dyn FnMut(&mut dyn FnMut(Option<T>))) -> T,
) -> Vec<T> {
    let st = strides(in_shape);
    let s = w.axes.len();
    let starts: Vec<Vec<i64>> = (0..s)
        .map(|a| {
            (0..w.out_shape[w.axes[a]])
                .map(|i| (w.start)(i, a))
                .collect()
        })
        .collect();
    let taps: Vec<Vec<usize>> = (0..s)
        .map(|a| {
            (0..w.out_shape[w.axes[a]])
                .map(|i| (w.taps)(i, a))
                .collect()
        })
        .collect();
    let mut out = Vec::with_capacity(numel(&w.out_shape));
    let mut first = vec![0i64; s];
    let mut count = vec![0usize; s];
    let mut tap = vec![0usize; s];
    for_each_index(&w.out_shape, |_, idx| {
        let mut base = 0usize;
        for (k, &i) in idx.iter().enumerate() {
            if !w.axes.contains(&k) {
                base += i * st[k];
            }
        }
        for a in 0..s {
            first[a] = starts[a][idx[w.axes[a]]];
            count[a] = taps[a][idx[w.axes[a]]];
        }
        let mut walk = |visit: &mut dyn FnMut(Option<T>)| {
            if count.contains(&0) {
                return;
            }
            tap.fill(0);
            loop {
                let mut at = Some(base);
                for a in 0..s {
                    let p = first[a] + (tap[a] * w.dilation[a]) as i64;
                    let ax = w.axes[a];
                    at = match at {
                        Some(b) if p >= 0 && (p as usize) < in_shape[ax] => {
                            Some(b + p as usize * st[ax])
                        }
                        _ => None,
                    };
                }
                visit(at.map(|i| x[i]));
                // The next tap in row-major order, or the end of the window.
                let mut a = s;
                loop {
                    if a == 0 {
                        return;
                    }
                    a -= 1;
                    tap[a] += 1;
                    if tap[a] < count[a] {
                        break;
                    }
                    tap[a] = 0;
                }
            }
        };
        out.push(each(idx, &mut walk));
    });
    out
}

/// `nn.{max,avg}_pool{1,2,3}d`.
fn pool(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let s = spatial_rank(call.op);
    let axes = spatial_axes(call, x.ndim(), s)?;
    let kernel = per_axis(call, "pool_size", s, 1)?;
    let stride = per_axis(call, "strides", s, 1)?;
    let dilation = per_axis(call, "dilation", s, 1)?;
    let (head, mut tail) = padding(call, s)?;
    let ceil_mode = call.bool_or("ceil_mode", false);
    let offset: Vec<i64> = stride
        .iter()
        .map(|&st| if ceil_mode { st - 1 } else { 0 })
        .collect();
    for a in 0..s {
        tail[a] += offset[a];
    }
    let d = dims(&x.shape);
    let mut out_shape = d.clone();
    for a in 0..s {
        let room = d[axes[a]] as i64 - (kernel[a] - 1) * dilation[a] - 1 + head[a] + tail[a];
        if room < 0 {
            return unsupported(format!("{}: the window is larger than the data", call.op));
        }
        out_shape[axes[a]] = (room / stride[a] + 1) as usize;
    }
    let out_i64: Vec<i64> = out_shape.iter().map(|&v| v as i64).collect();
    call.check_size(&out_i64)?;
    let (st2, hd2, k2) = (stride.clone(), head.clone(), kernel.clone());
    let windows = Windows {
        out_shape,
        axes: axes.clone(),
        start: Box::new(move |i, a| i as i64 * st2[a] - hd2[a]),
        taps: Box::new(move |_, a| k2[a] as usize),
        dilation: dilation.iter().map(|&v| v as usize).collect(),
    };
    let dt = x.dtype;
    let is_max = call.op.contains("max");
    let include_pad = call.bool_or("count_include_pad", false);
    // TOPI's divisor for the window of output element `idx`.
    let count = |idx: &[usize]| -> i64 {
        let mut n = 1i64;
        for a in 0..s {
            let start = idx[axes[a]] as i64 * stride[a] - head[a];
            let end = start + (kernel[a] - 1) * dilation[a];
            n *= if include_pad {
                let end = end.min(d[axes[a]] as i64 + tail[a] - 1 - offset[a]);
                c_div(end - start, dilation[a]) + 1
            } else {
                let jumps = c_div(dilation[a] - 1 - start, dilation[a]).max(0);
                let end = end.min(d[axes[a]] as i64 - 1);
                c_div(end - (start + dilation[a] * jumps), dilation[a]) + 1
            };
        }
        if include_pad {
            n
        } else {
            n.max(1)
        }
    };
    fn run<T: Num>(
        v: Vec<T>,
        d: &[usize],
        w: &Windows,
        dt: DataType,
        is_max: bool,
        count: &dyn Fn(&[usize]) -> i64,
    ) -> EvalResult<Vec<T>> {
        let mut bad = false;
        let out = reduce_windows(&v, d, w, |idx, walk| {
            if is_max {
                let mut acc = T::lowest(dt);
                walk(&mut |t| acc = acc.max_of(t.unwrap_or_else(|| T::lowest(dt))));
                acc
            } else {
                let mut acc = T::default();
                walk(&mut |t| acc = (acc + t.unwrap_or_default()).fix(dt));
                acc.div(T::from_count(count(idx), dt), dt)
                    .unwrap_or_else(|| {
                        bad = true;
                        T::default()
                    })
            }
        });
        if bad {
            return unsupported("average pooling: an integer division by zero");
        }
        Ok(out)
    }
    let out = on_col!(decode(x)?, v => run(v, &d, &windows, dt, is_max, &count)?);
    Ok(Value::tensor(encode(&out, dt, out_i64)?))
}

/// C's truncating division of window coordinates.
fn c_div(a: i64, b: i64) -> i64 {
    a / b
}

/// `nn.global_{max,avg}_pool2d`: an adaptive pool to 1×1.
fn global_pool(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let axes = spatial_axes(call, x.ndim(), 2)?;
    adaptive(x, call, &axes, &[1, 1], call.op.contains("max"))
}

/// `nn.adaptive_{max,avg}_pool{1,2,3}d`.
fn adaptive_pool(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let s = spatial_rank(call.op);
    let axes = spatial_axes(call, x.ndim(), s)?;
    let d = dims(&x.shape);
    let sizes = call.ints("output_size")?.unwrap_or_default();
    let sizes: Vec<i64> = match sizes.len() {
        0 => axes.iter().map(|&a| d[a] as i64).collect(),
        1 => vec![sizes[0]; s],
        n if n == s => sizes,
        _ => return unsupported(format!("{}: output_size", call.op)),
    };
    if sizes.iter().any(|&v| v < 1) {
        return unsupported(format!("{}: output_size must be positive", call.op));
    }
    adaptive(x, call, &axes, &sizes, call.op.contains("max"))
}

/// TOPI's adaptive pool: output `i` of `out` along an axis of `n` covers
/// `[⌊i·n/out⌋, ⌈(i+1)·n/out⌉)`.
fn adaptive(
    x: &relay_ir::metadata::TensorData,
    call: &CallInfo,
    axes: &[usize],
    sizes: &[i64],
    is_max: bool,
) -> EvalResult {
    let d = dims(&x.shape);
    let mut out_shape = d.clone();
    for (a, &ax) in axes.iter().enumerate() {
        out_shape[ax] = sizes[a] as usize;
    }
    let out_i64: Vec<i64> = out_shape.iter().map(|&v| v as i64).collect();
    call.check_size(&out_i64)?;
    let in_sizes: Vec<i64> = axes.iter().map(|&a| d[a] as i64).collect();
    let out_sizes = sizes.to_vec();
    let (ins, outs) = (in_sizes.clone(), out_sizes.clone());
    let start = move |i: usize, a: usize| (i as i64 * ins[a]) / outs[a];
    let (ins2, outs2) = (in_sizes, out_sizes);
    let end = move |i: usize, a: usize| ((i as i64 + 1) * ins2[a] + outs2[a] - 1) / outs2[a];
    let start2 = start.clone();
    let windows = Windows {
        out_shape,
        axes: axes.to_vec(),
        start: Box::new(start.clone()),
        taps: Box::new(move |i, a| (end(i, a) - start2(i, a)).max(0) as usize),
        dilation: vec![1; axes.len()],
    };
    let dt = x.dtype;
    fn run<T: Num>(v: Vec<T>, d: &[usize], w: &Windows, dt: DataType, is_max: bool) -> Vec<T> {
        let axes = w.axes.clone();
        reduce_windows(&v, d, w, |idx, walk| {
            if is_max {
                let mut acc = T::lowest(dt);
                walk(&mut |t| acc = acc.max_of(t.unwrap_or_else(|| T::lowest(dt))));
                acc
            } else {
                let mut acc = T::default();
                walk(&mut |t| acc = (acc + t.unwrap_or_default()).fix(dt));
                let mut factor = T::from_count(1, dt);
                for (a, &ax) in axes.iter().enumerate() {
                    let taps = (w.taps)(idx[ax], a) as i64;
                    factor = (factor * T::from_count(taps, dt)).fix(dt);
                }
                acc.div(factor, dt).unwrap_or_default()
            }
        })
    }
    let out = on_col!(decode(x)?, v => run(v, &d, &windows, dt, is_max));
    Ok(Value::tensor(encode(&out, dt, out_i64)?))
}
