//! Fourier transforms (`stft`, `dft`): TOPI's `topi/signal.py`, the IR
//! TVM builds for CPUs, in `float32` (other types are not folded).
//!
//! Both sum plainly, term by term in index order, into the output element:
//! no FFT, no reassociation, so the sums are TVM's own. The angles are
//! `float32` expressions as TOPI writes them: `2π` (Python's `math.pi`,
//! rounded to `float32`) `· row · wlen / win_length` for `stft`,
//! `∓2π · n / n_fft · k` for `dft`, and `sin`/`cos` are the C library's
//! `sinf`/`cosf` (what LLVM's intrinsics call): results agree with TVM's
//! where both use the same libm (glibc), else within an ulp or so of each
//! term.
//!
//! `stft` takes 2-D `[batch, length]` data (TOPI indexes the data and
//! the output with a batch axis, so a 1-D call is not compiled by TVM and
//! not folded): `out[b, row, col] = Σ_w window[w] · data[b, col · hop + w]
//! · (cos, -sin)(angle)` over the first `win_length` samples, divided by
//! `sqrt(n_fft)` when `normalized`; `onesided` keeps `n_fft / 2 + 1` rows.
//! `dft` transforms the last axis of `(re, im)`; `inverse` turns the angle
//! and scales by `1 / n` (a constant TVM folds in double precision).

use super::vision_util::{f32_tensor, f32_values};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "stft" => stft,
        "dft" => dft,
        _ => return None,
    })
}

/// Python's `2 * math.pi` as the `float32` constant TVM makes of it.
const TWO_PI: f32 = std::f64::consts::TAU as f32;

fn stft(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data_t = arg_tensor(args, 0, call)?;
    let (batch, length) = match *data_t.shape.as_slice() {
        [b, l] if b >= 0 && l >= 0 => (b as usize, l as usize),
        _ => return unsupported("stft: TVM compiles only 2-D data"),
    };
    let data = f32_values(data_t, "stft: the data")?;
    let window = f32_values(arg_tensor(args, 1, call)?, "stft: the window")?;
    let n_fft = call.req_int("n_fft")?;
    let hop = call.req_int("hop_length")?;
    let win_length = call.req_int("win_length")?;
    let normalized = call.bool_or("normalized", false);
    let onesided = call.bool_or("onesided", true);
    if n_fft <= 0 || hop <= 0 || win_length <= 0 || (length as i64) < n_fft {
        return unsupported("stft: n_fft, hop_length or win_length do not fit the data");
    }
    let rows = if onesided { n_fft / 2 + 1 } else { n_fft } as usize;
    let frames = ((length as i64 - n_fft) / hop + 1) as usize;
    let (hop, win) = (hop as usize, win_length as usize);
    if (frames - 1) * hop + win > length || window.len() < win {
        return unsupported("stft: the window reaches past the data or the window tensor");
    }
    let shape = vec![batch as i64, rows as i64, frames as i64, 2];
    let mut out = vec![0.0f32; call.check_size(&shape)?];
    let norm = (n_fft as f32).sqrt();
    for b in 0..batch {
        for row in 0..rows {
            for col in 0..frames {
                let (mut re, mut im) = (0.0f32, 0.0f32);
                for w in 0..win {
                    let angle = TWO_PI * row as f32 * w as f32 / win_length as f32;
                    let x = window[w] * data[b * length + col * hop + w];
                    re += x * angle.cos();
                    im -= x * angle.sin();
                }
                if normalized {
                    re /= norm;
                    im /= norm;
                }
                let at = ((b * rows + row) * frames + col) * 2;
                out[at] = re;
                out[at + 1] = im;
            }
        }
    }
    Ok(Value::tensor(f32_tensor(shape, &out)?))
}

fn dft(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let re_t = arg_tensor(args, 0, call)?;
    let im_t = arg_tensor(args, 1, call)?;
    if re_t.shape != im_t.shape || re_t.ndim() == 0 {
        return unsupported("dft: the real and imaginary parts differ in shape");
    }
    let re_in = f32_values(re_t, "dft: the real part")?;
    let im_in = f32_values(im_t, "dft: the imaginary part")?;
    let n = *re_t.shape.last().expect("not a scalar") as usize;
    let inverse = call.bool_or("inverse", false);
    let sign_two_pi = if inverse { TWO_PI } else { -TWO_PI };
    let factor = if inverse {
        (1.0 / n as f64) as f32
    } else {
        1.0
    };
    let (mut re_out, mut im_out) = (vec![0.0f32; re_in.len()], vec![0.0f32; re_in.len()]);
    for base in (0..re_in.len()).step_by(n.max(1)) {
        for k_out in 0..n {
            let step = sign_two_pi * k_out as f32 / n as f32;
            let (mut re, mut im) = (0.0f32, 0.0f32);
            for k in 0..n {
                let w = step * k as f32;
                let (sin_w, cos_w) = (w.sin(), w.cos());
                re += re_in[base + k] * cos_w - im_in[base + k] * sin_w;
                im += re_in[base + k] * sin_w + im_in[base + k] * cos_w;
            }
            re_out[base + k_out] = re * factor;
            im_out[base + k_out] = im * factor;
        }
    }
    Ok(Value::Tuple(vec![
        Value::tensor(f32_tensor(re_t.shape.clone(), &re_out)?),
        Value::tensor(f32_tensor(re_t.shape.clone(), &im_out)?),
    ]))
}
