//! Reading data layouts (`NCHW`, `NHWC`, `OIHW`, `HWIO`, …) and the window
//! attributes (`padding`, `strides`, `dilation`) the spatial kernels share.
//! Kernels index tensors through the axis positions a layout names, so
//! every permutation of plain axes is handled by one code path; packed
//! layouts (`NCHW8c`) are not evaluated.

use super::{unsupported, CallInfo, EvalResult};

/// The spatial axis letters of a kernel with `n` spatial dimensions.
pub(crate) fn spatial_letters(n: usize) -> &'static [char] {
    match n {
        1 => &['W'],
        2 => &['H', 'W'],
        _ => &['D', 'H', 'W'],
    }
}

/// The position in `layout` of each of `letters`; `layout` must be a
/// permutation of exactly those letters (upper case, no split axes).
pub(crate) fn axes_of(layout: &str, letters: &[char], call: &CallInfo) -> EvalResult<Vec<usize>> {
    let chars: Vec<char> = layout.chars().collect();
    let exact = chars.len() == letters.len() && letters.iter().all(|l| chars.contains(l));
    if !exact {
        let wanted: String = letters.iter().collect();
        return unsupported(format!(
            "{}: layout {layout} is not a permutation of {wanted}",
            call.op
        ));
    }
    Ok(letters
        .iter()
        .map(|l| chars.iter().position(|c| c == l).unwrap_or(0))
        .collect())
}

/// A positive integer list attribute of `n` entries (one value is
/// repeated), with a default.
pub(crate) fn per_axis(
    call: &CallInfo,
    name: &str,
    n: usize,
    default: i64,
) -> EvalResult<Vec<i64>> {
    let v = call.ints(name)?.unwrap_or_else(|| vec![default; n]);
    let v = match v.len() {
        1 => vec![v[0]; n],
        len if len == n => v,
        len => {
            return unsupported(format!(
                "{}: `{name}` has {len} entries for {n} axes",
                call.op
            ))
        }
    };
    if v.iter().any(|&x| x < 1) {
        return unsupported(format!("{}: `{name}` must be positive", call.op));
    }
    Ok(v)
}

/// `padding` as (before, after) per spatial axis: one value for all,
/// one per axis for both sides, or all befores then all afters (TOPI's
/// `get_pad_tuple`).
pub(crate) fn padding(call: &CallInfo, n: usize) -> EvalResult<(Vec<i64>, Vec<i64>)> {
    let p = call.ints("padding")?.unwrap_or_else(|| vec![0; n]);
    let (before, after) = match p.len() {
        1 => (vec![p[0]; n], vec![p[0]; n]),
        len if len == n => (p.clone(), p),
        len if len == 2 * n => (p[..n].to_vec(), p[n..].to_vec()),
        len => {
            return unsupported(format!(
                "{}: `padding` has {len} entries for {n} axes",
                call.op
            ))
        }
    };
    if before.iter().chain(&after).any(|&x| x < 0) {
        return unsupported(format!("{}: negative padding", call.op));
    }
    Ok((before, after))
}
