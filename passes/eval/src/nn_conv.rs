//! Convolutions: `nn.conv1d`, `nn.conv2d`, `nn.conv3d` and their
//! transposes (TOPI's `nn/conv*.py`, `nn/conv*_transpose.py`), with
//! groups, dilation, asymmetric padding and every permutation of plain
//! layouts (`NCHW`/`NHWC`/`HWCN` data, `OIHW`/`HWIO`/`HWOI`/… kernels).
//!
//! A convolution casts data and weight to `out_dtype` (when set), pads the
//! data with zeros and sums `data · weight` over (input channel of the
//! group, kernel positions in row-major order), products of padding
//! included (`0 · ∞` is NaN in TVM too). A transpose is what TOPI computes:
//! the data dilated by the strides and padded by `dilation·(k-1) - pad`
//! (plus `output_padding` at the end), convolved with stride 1 by the
//! kernel dilated, flipped and with its in/out channels swapped.
//!
//! Integer results are exact. Float results round each product and
//! partial sum to the output type; TVM's x86 schedules (`conv2d_NCHWc`)
//! reorder the reduction (channel blocks outside the kernel window,
//! vector lanes inside), so float results may differ from TVM's in the
//! last bits: by at most `n · ε · Σ|terms|` for `n` terms, ε = 2⁻²⁴ for
//! float32.

use super::layout::{axes_of, padding, per_axis, spatial_letters};
use super::linalg::out_dtype;
use super::num::{decode_as, on_cols, Num};
use super::tensor::{dims, encode, for_each_index, numel, strides};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.conv1d" | "nn.conv2d" | "nn.conv3d" => conv,
        "nn.conv1d_transpose" | "nn.conv2d_transpose" | "nn.conv3d_transpose" => conv_transpose,
        _ => return None,
    })
}

/// The number of spatial axes of a convolution operator.
fn spatial_rank(op: &str) -> usize {
    if op.contains("1d") {
        1
    } else if op.contains("3d") {
        3
    } else {
        2
    }
}

/// A convolution in canonical terms: data `[N, C, spatial…]`, weight
/// `[O, C/groups, kernel…]`, each read through its strides in the real
/// layout.
struct Geometry {
    batch: usize,
    in_channels: usize,
    in_spatial: Vec<usize>,
    out_channels: usize,
    kernel: Vec<usize>,
    stride: Vec<usize>,
    dilation: Vec<usize>,
    pad_before: Vec<usize>,
    out_spatial: Vec<usize>,
    groups: usize,
    /// Strides of the data's N, C and spatial axes.
    data_st: Vec<usize>,
    /// Strides of the weight's O, I and spatial axes.
    weight_st: Vec<usize>,
    /// Strides of the output's N, C and spatial axes.
    out_st: Vec<usize>,
}

impl Geometry {
    /// Computes every output element (canonical order) into an output
    /// buffer laid out by `out_st`.
    fn run<T: Num>(&self, data: &[T], weight: &[T], dt: DataType) -> Vec<T> {
        let s = self.kernel.len();
        let og = self.out_channels / self.groups;
        let ig = self.in_channels / self.groups;
        let total = self.batch * self.out_channels * numel(&self.out_spatial);
        let mut out = vec![T::default(); total];
        let mut canonical = vec![self.batch, self.out_channels];
        canonical.extend(&self.out_spatial);
        for_each_index(&canonical, |_, idx| {
            let (n, o) = (idx[0], idx[1]);
            let g = o / og;
            let mut acc = T::default();
            for ic in 0..ig {
                let c = g * ig + ic;
                let data_base = n * self.data_st[0] + c * self.data_st[1];
                let weight_base = o * self.weight_st[0] + ic * self.weight_st[1];
                for_each_index(&self.kernel, |_, k| {
                    let mut at = Some(data_base);
                    for a in 0..s {
                        let pos = (idx[2 + a] * self.stride[a] + k[a] * self.dilation[a])
                            .checked_sub(self.pad_before[a])
                            .filter(|&p| p < self.in_spatial[a]);
                        at = match (at, pos) {
                            (Some(base), Some(p)) => Some(base + p * self.data_st[2 + a]),
                            _ => None,
                        };
                    }
                    // Padding reads zero; its product is summed like any other.
                    let x = at.map_or_else(T::default, |i| data[i]);
                    let w_at =
                        weight_base + (0..s).map(|a| k[a] * self.weight_st[2 + a]).sum::<usize>();
                    acc = (acc + (x * weight[w_at]).fix(dt)).fix(dt);
                });
            }
            let at: usize = idx.iter().zip(&self.out_st).map(|(i, st)| i * st).sum();
            out[at] = acc;
        });
        out
    }
}

/// The output shape in `layout_axes` order (position of N, C, spatial…).
fn shape_in_layout(axes: &[usize], canonical: &[usize]) -> Vec<usize> {
    let mut shape = vec![0; axes.len()];
    for (&a, &d) in axes.iter().zip(canonical) {
        shape[a] = d;
    }
    shape
}

/// The strides of the canonical axes in a tensor of `shape` whose axis
/// positions are `axes`.
fn canonical_strides(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    let st = strides(shape);
    axes.iter().map(|&a| st[a]).collect()
}

/// The data, weight and output layouts' axis positions.
struct Layouts {
    data: Vec<usize>,
    weight: Vec<usize>,
    out: Vec<usize>,
}

fn layouts(call: &CallInfo, s: usize, default_kernel: &str) -> EvalResult<Layouts> {
    let spatial = spatial_letters(s);
    let default_data: String = ['N', 'C'].iter().chain(spatial).collect();
    let data_layout = call.str("data_layout").unwrap_or(&default_data);
    let kernel_layout = call.str("kernel_layout").unwrap_or(default_kernel);
    let out_layout = match call.str("out_layout") {
        Some(l) if !l.is_empty() => l,
        _ => data_layout,
    };
    let data_letters: Vec<char> = ['N', 'C'].iter().chain(spatial).copied().collect();
    let kernel_letters: Vec<char> = ['O', 'I'].iter().chain(spatial).copied().collect();
    Ok(Layouts {
        data: axes_of(data_layout, &data_letters, call)?,
        weight: axes_of(kernel_layout, &kernel_letters, call)?,
        out: axes_of(out_layout, &data_letters, call)?,
    })
}

/// The sizes in canonical order: `[N, C, spatial…]` from a tensor of
/// `shape` whose axis positions are `axes`.
fn canonical_dims(shape: &[i64], axes: &[usize]) -> Vec<usize> {
    let d = dims(shape);
    axes.iter().map(|&a| d[a]).collect()
}

/// `nn.conv{1,2,3}d`.
fn conv(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (x, w) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    let s = spatial_rank(call.op);
    if x.ndim() != s + 2 || w.ndim() != s + 2 {
        return unsupported(format!("{}: data and weight must be {}-D", call.op, s + 2));
    }
    let default_kernel: String = ['O', 'I'].iter().chain(spatial_letters(s)).collect();
    let l = layouts(call, s, &default_kernel)?;
    let xd = canonical_dims(&x.shape, &l.data);
    let wd = canonical_dims(&w.shape, &l.weight);
    let groups = usize::try_from(call.int_or("groups", 1))
        .ok()
        .filter(|&g| g > 0)
        .map_or_else(|| unsupported(format!("{}: groups", call.op)), Ok)?;
    let (c, o) = (xd[1], wd[0]);
    if c % groups != 0 || o % groups != 0 || wd[1] * groups != c {
        return unsupported(format!("{}: the channels do not match the groups", call.op));
    }
    let stride = per_axis(call, "strides", s, 1)?;
    let dilation = per_axis(call, "dilation", s, 1)?;
    let (before, after) = padding(call, s)?;
    let mut out_spatial = Vec::with_capacity(s);
    for a in 0..s {
        let span = (wd[2 + a] as i64 - 1) * dilation[a] + 1;
        let room = xd[2 + a] as i64 + before[a] + after[a] - span;
        if room < 0 {
            return unsupported(format!("{}: the kernel is larger than the data", call.op));
        }
        out_spatial.push((room / stride[a] + 1) as usize);
    }
    let mut out_canonical = vec![xd[0], o];
    out_canonical.extend(&out_spatial);
    let out_shape = shape_in_layout(&l.out, &out_canonical);
    let out_shape_i64: Vec<i64> = out_shape.iter().map(|&d| d as i64).collect();
    call.check_size(&out_shape_i64)?;
    let geometry = Geometry {
        batch: xd[0],
        in_channels: c,
        in_spatial: xd[2..].to_vec(),
        out_channels: o,
        kernel: wd[2..].to_vec(),
        stride: stride.iter().map(|&v| v as usize).collect(),
        dilation: dilation.iter().map(|&v| v as usize).collect(),
        pad_before: before.iter().map(|&v| v as usize).collect(),
        out_spatial,
        groups,
        data_st: canonical_strides(&dims(&x.shape), &l.data),
        weight_st: canonical_strides(&dims(&w.shape), &l.weight),
        out_st: canonical_strides(&out_shape, &l.out),
    };
    let dt = out_dtype(call, x.dtype)?;
    let out = on_cols!(
        decode_as(x, dt)?,
        decode_as(w, dt)?,
        (a, b) => geometry.run(&a, &b, dt),
        unsupported(format!("{}: operands of different classes", call.op))
    );
    Ok(Value::tensor(encode(&out, dt, out_shape_i64)?))
}

/// Where an element of the dilated, padded data (batch, channel, position)
/// or of the dilated, flipped kernel (channel, output channel, tap) is:
/// `None` for the zeros between and around the real elements.
type Locate<'a> = dyn Fn(usize, usize, &[usize]) -> Option<usize> + 'a;

/// `nn.conv{1,2,3}d_transpose` on channel-first data (`NCW`, `NCHW`,
/// `NCDHW`) and `IO…` kernels, the layouts TVM's x86 strategy compiles.
fn conv_transpose(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (x, w) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    let s = spatial_rank(call.op);
    if x.ndim() != s + 2 || w.ndim() != s + 2 {
        return unsupported(format!("{}: data and weight must be {}-D", call.op, s + 2));
    }
    let spatial: String = spatial_letters(s).iter().collect();
    let (nc, io) = (format!("NC{spatial}"), format!("IO{spatial}"));
    let data_layout = call.str("data_layout").unwrap_or(&nc);
    let kernel_layout = call.str("kernel_layout").unwrap_or(&io);
    let out_layout = call.str("out_layout").filter(|l| !l.is_empty());
    if data_layout != nc || kernel_layout != io || out_layout.is_some_and(|l| l != nc) {
        return unsupported(format!(
            "{}: only {nc} data with {io} kernels is evaluated",
            call.op
        ));
    }
    let xd = dims(&x.shape);
    let wd = dims(&w.shape);
    let groups = usize::try_from(call.int_or("groups", 1))
        .ok()
        .filter(|&g| g > 0)
        .map_or_else(|| unsupported(format!("{}: groups", call.op)), Ok)?;
    let (c, og) = (xd[1], wd[1]);
    if wd[0] != c || c % groups != 0 {
        return unsupported(format!("{}: the channels do not match the groups", call.op));
    }
    let ig = c / groups;
    let o = og * groups;
    let stride = per_axis(call, "strides", s, 1)?;
    let dilation = per_axis(call, "dilation", s, 1)?;
    let (before, after) = padding(call, s)?;
    let output_padding = call.ints("output_padding")?.unwrap_or_else(|| vec![0; s]);
    let output_padding = match output_padding.len() {
        1 => vec![output_padding[0]; s],
        len if len == s => output_padding,
        _ => return unsupported(format!("{}: output_padding", call.op)),
    };
    // The dilated, padded data and the dilated kernel's extent.
    let mut padded = Vec::with_capacity(s);
    let mut lead = Vec::with_capacity(s);
    let mut span = Vec::with_capacity(s);
    for a in 0..s {
        let k = (wd[2 + a] as i64 - 1) * dilation[a] + 1;
        let dilated = (xd[2 + a] as i64 - 1) * stride[a] + 1;
        let head = k - 1 - before[a];
        let tail = k - 1 - after[a] + output_padding[a];
        if head < 0 || tail < 0 || output_padding[a] >= stride[a] {
            return unsupported(format!("{}: padding larger than the kernel", call.op));
        }
        padded.push(dilated + head + tail);
        lead.push(head);
        span.push(k);
    }
    let mut out_shape = vec![xd[0] as i64, o as i64];
    out_shape.extend(padded.iter().zip(&span).map(|(p, k)| p - k + 1));
    call.check_size(&out_shape)?;
    let out_dims = dims(&out_shape);
    let dt = out_dtype(call, x.dtype)?;
    let xs = strides(&xd);
    let ws = strides(&wd);
    let span: Vec<usize> = span.iter().map(|&k| k as usize).collect();
    let value_at = |n: usize, ch: usize, pos: &[usize]| -> Option<usize> {
        // A position of the dilated, padded data: a real element or zero.
        let mut at = n * xs[0] + ch * xs[1];
        for a in 0..s {
            let q = (pos[a] as i64) - lead[a];
            if q < 0 || q % stride[a] != 0 || q / stride[a] >= xd[2 + a] as i64 {
                return None;
            }
            at += (q / stride[a]) as usize * xs[2 + a];
        }
        Some(at)
    };
    let weight_at = |ch: usize, oo: usize, k: &[usize]| -> Option<usize> {
        // The dilated, flipped kernel: zero between the taps.
        let mut at = ch * ws[0] + oo * ws[1];
        for a in 0..s {
            let flipped = span[a] - 1 - k[a];
            if !flipped.is_multiple_of(dilation[a] as usize) {
                return None;
            }
            at += flipped / dilation[a] as usize * ws[2 + a];
        }
        Some(at)
    };
    #[allow(clippy::too_many_arguments)]
    fn sum<T: Num>(
        data: &[T],
        weight: &[T],
        out_dims: &[usize],
        span: &[usize],
        ig: usize,
        og: usize,
        value_at: &Locate<'_>,
        weight_at: &Locate<'_>,
        dt: DataType,
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(numel(out_dims));
        let mut pos = vec![0usize; span.len()];
        for_each_index(out_dims, |_, idx| {
            let (n, o) = (idx[0], idx[1]);
            let (g, oo) = (o / og, o % og);
            let mut acc = T::default();
            for ic in 0..ig {
                let ch = g * ig + ic;
                for_each_index(span, |_, k| {
                    for a in 0..k.len() {
                        pos[a] = idx[2 + a] + k[a];
                    }
                    let x = value_at(n, ch, &pos).map_or_else(T::default, |i| data[i]);
                    let w = weight_at(ch, oo, k).map_or_else(T::default, |i| weight[i]);
                    acc = (acc + (x * w).fix(dt)).fix(dt);
                });
            }
            out.push(acc);
        });
        out
    }
    let out = on_cols!(
        decode_as(x, dt)?,
        decode_as(w, dt)?,
        (a, b) => sum(&a, &b, &out_dims, &span, ig, og, &value_at, &weight_at, dt),
        unsupported(format!("{}: operands of different classes", call.op))
    );
    Ok(Value::tensor(encode(&out, dt, out_shape)?))
}
