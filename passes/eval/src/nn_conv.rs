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
//! Both are computed as matrix products (`gemm.rs`): per batch
//! element and group, the weights `[out channels, (in channel, taps)]`
//! times the data unrolled into one column per output position (im2col),
//! which keeps that order of summation for every output; a transpose
//! materialises its dilated, padded data and its flipped kernel first.
//!
//! Integer results are exact. Float results round each product and
//! partial sum to the output type; TVM's x86 schedules (`conv2d_NCHWc`)
//! reorder the reduction (channel blocks outside the kernel window,
//! vector lanes inside), so float results may differ from TVM's in the
//! last bits: by at most `n · ε · Σ|terms|` for `n` terms, ε = 2⁻²⁴ for
//! float32.

use super::gemm::{gemm, Rows, Strided};
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
    /// Computes every output element into an output buffer laid out by
    /// `out_st`: per batch element and group, the weights as a matrix
    /// `[out channels of the group, (input channel, kernel tap…)]` times
    /// the data unrolled into columns (`im2col`: one column per output
    /// position, padding read as zero), by the blocked product, which sums
    /// each output over (input channel, taps in row-major order) as the
    /// definition does.
    fn run<T: Num>(&self, data: &[T], weight: &[T], dt: DataType) -> Vec<T> {
        let s = self.kernel.len();
        let og = self.out_channels / self.groups;
        let ig = self.in_channels / self.groups;
        let positions = numel(&self.out_spatial);
        let taps = numel(&self.kernel);
        let total = self.batch * self.out_channels * positions;
        let mut out = vec![T::default(); total];
        if total == 0 {
            return out;
        }
        // Per tap: its offset in the weight, and per axis its distance
        // from the window's origin.
        let mut tap_weight = Vec::with_capacity(taps);
        let mut tap_reach = Vec::with_capacity(taps * s);
        for_each_index(&self.kernel, |_, k| {
            tap_weight.push((0..s).map(|a| k[a] * self.weight_st[2 + a]).sum::<usize>());
            tap_reach.extend((0..s).map(|a| k[a] * self.dilation[a]));
        });
        // Per output position: its window's origin per axis (in padded
        // coordinates) and its offset in the output.
        let mut origin = Vec::with_capacity(positions * s);
        let mut out_offset = Vec::with_capacity(positions);
        for_each_index(&self.out_spatial, |_, idx| {
            origin.extend((0..s).map(|a| idx[a] * self.stride[a]));
            out_offset.push((0..s).map(|a| idx[a] * self.out_st[2 + a]).sum::<usize>());
        });
        let reduce = ig * taps;
        let mut weights = Vec::with_capacity(og * reduce);
        for g in 0..self.groups {
            weights.clear();
            for oo in 0..og {
                for ic in 0..ig {
                    let base = (g * og + oo) * self.weight_st[0] + ic * self.weight_st[1];
                    weights.extend(tap_weight.iter().map(|&t| weight[base + t]));
                }
            }
            let a = Strided {
                data: &weights,
                offset: 0,
                row_stride: reduce,
                col_stride: 1,
            };
            for n in 0..self.batch {
                let columns = Im2col {
                    data,
                    base: n * self.data_st[0] + g * ig * self.data_st[1],
                    channel_stride: self.data_st[1],
                    taps,
                    tap_reach: &tap_reach,
                    origin: &origin,
                    geometry: self,
                };
                let product = gemm(og, positions, reduce, &a, &columns, dt);
                for (oo, row) in product.chunks_exact(positions).enumerate() {
                    let base = n * self.out_st[0] + (g * og + oo) * self.out_st[1];
                    for (&v, &at) in row.iter().zip(&out_offset) {
                        out[base + at] = v;
                    }
                }
            }
        }
        out
    }
}

/// The data of one batch element and group unrolled into a matrix: row
/// (input channel, tap), column an output position, the element the tap
/// reads for that position (zero in the padding).
struct Im2col<'a, T> {
    data: &'a [T],
    base: usize,
    channel_stride: usize,
    taps: usize,
    tap_reach: &'a [usize],
    origin: &'a [usize],
    geometry: &'a Geometry,
}

impl<T: Num> Rows<T> for Im2col<'_, T> {
    fn fill(&self, row: usize, col0: usize, dst: &mut [T]) {
        let g = self.geometry;
        let s = g.kernel.len();
        let (channel, tap) = (row / self.taps, row % self.taps);
        let reach = &self.tap_reach[tap * s..tap * s + s];
        let channel_base = self.base + channel * self.channel_stride;
        for (i, d) in dst.iter_mut().enumerate() {
            let origin = &self.origin[(col0 + i) * s..(col0 + i) * s + s];
            let mut at = channel_base;
            let mut inside = true;
            for a in 0..s {
                // `p` in padded coordinates; the data starts at `pad_before`.
                let p = origin[a] + reach[a];
                match p.checked_sub(g.pad_before[a]) {
                    Some(q) if q < g.in_spatial[a] => at += q * g.data_st[2 + a],
                    _ => inside = false,
                }
            }
            // Padding reads zero; its product is summed like any other.
            *d = if inside { self.data[at] } else { T::default() };
        }
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
    let span: Vec<usize> = span.iter().map(|&k| k as usize).collect();
    let padded: Vec<usize> = padded.iter().map(|&p| p as usize).collect();
    let xs = strides(&xd);
    let ws = strides(&wd);
    // The dilated, padded data `[N, C, padded…]`: where each element comes
    // from in `x`, or `None` for the zeros between and around.
    let mut data_dims = vec![xd[0], c];
    data_dims.extend(&padded);
    let mut data_src = Vec::with_capacity(numel(&data_dims));
    for_each_index(&data_dims, |_, idx| {
        let mut at = idx[0] * xs[0] + idx[1] * xs[1];
        for a in 0..s {
            let q = idx[2 + a] as i64 - lead[a];
            if q < 0 || q % stride[a] != 0 || q / stride[a] >= xd[2 + a] as i64 {
                data_src.push(None);
                return;
            }
            at += (q / stride[a]) as usize * xs[2 + a];
        }
        data_src.push(Some(at));
    });
    // The kernel of the equivalent convolution `[O, C/groups, span…]`:
    // dilated (zeros between the taps), flipped, in/out channels swapped.
    let mut weight_dims = vec![o, ig];
    weight_dims.extend(&span);
    let mut weight_src = Vec::with_capacity(numel(&weight_dims));
    for_each_index(&weight_dims, |_, idx| {
        let (g, oo) = (idx[0] / og, idx[0] % og);
        let ch = g * ig + idx[1];
        let mut at = ch * ws[0] + oo * ws[1];
        for a in 0..s {
            let flipped = span[a] - 1 - idx[2 + a];
            if !flipped.is_multiple_of(dilation[a] as usize) {
                weight_src.push(None);
                return;
            }
            at += flipped / dilation[a] as usize * ws[2 + a];
        }
        weight_src.push(Some(at));
    });
    // That convolution has stride 1, no dilation and no padding, and sums
    // over (input channel, tap) in the order of the definition.
    let geometry = Geometry {
        batch: xd[0],
        in_channels: c,
        in_spatial: padded.clone(),
        out_channels: o,
        kernel: span.clone(),
        stride: vec![1; s],
        dilation: vec![1; s],
        pad_before: vec![0; s],
        out_spatial: out_dims[2..].to_vec(),
        groups,
        data_st: strides(&data_dims),
        weight_st: strides(&weight_dims),
        out_st: strides(&out_dims),
    };
    fn gather<T: Num>(values: &[T], src: &[Option<usize>]) -> Vec<T> {
        src.iter()
            .map(|at| at.map_or_else(T::default, |i| values[i]))
            .collect()
    }
    let out = on_cols!(
        decode_as(x, dt)?,
        decode_as(w, dt)?,
        (a, b) => geometry.run(&gather(&a, &data_src), &gather(&b, &weight_src), dt),
        unsupported(format!("{}: operands of different classes", call.op))
    );
    Ok(Value::tensor(encode(&out, dt, out_shape)?))
}
