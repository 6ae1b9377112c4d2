//! Walking two broadcast operands together without an index per element.
//!
//! NumPy broadcasting of `x` and `y` to an output shape is planned once as
//! *runs*: stretches of consecutive output elements along which each
//! operand either advances by one element or stays on the same one (a
//! broadcast axis). Axes of size one are dropped and adjacent axes along
//! which both operands are laid out alike are merged, so the common cases
//! are a handful of long runs: the same shape is one run with both
//! advancing, a scalar operand one run with it standing still, and a
//! per-channel operand (`[N, C, H, W] + [C, 1, 1]`) `N·C` runs of `H·W`
//! elements. The inner loops over a run are plain slice loops the compiler
//! vectorises; the element function is the same as an indexed loop's, so
//! the results are too.

/// One run: `len` output elements; operand `x` starts at element `x` and
/// advances by `x_step` per element (0: broadcast, else 1), `y` likewise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) x: usize,
    pub(crate) x_step: usize,
    pub(crate) y: usize,
    pub(crate) y_step: usize,
    pub(crate) len: usize,
}

/// The stride of each output axis in a row-major operand of shape `shape`
/// broadcast to `out` (0 along a broadcast or size-one axis).
fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let offset = out.len() - shape.len();
    let mut strides = vec![0; out.len()];
    let mut stride = 1;
    for (i, &d) in shape.iter().enumerate().rev() {
        if d != 1 {
            strides[offset + i] = stride;
        }
        stride *= d;
    }
    strides
}

/// Calls `visit` with the runs of `x` (shape `x_shape`) and `y` (shape
/// `y_shape`) broadcast to `out_shape`, in row-major output order. The
/// shapes must broadcast to `out_shape` (see
/// [`broadcast_shapes`](super::tensor::broadcast_shapes)).
pub(crate) fn for_each_run(
    x_shape: &[i64],
    y_shape: &[i64],
    out_shape: &[i64],
    mut visit: impl FnMut(Run),
) {
    let dims = |s: &[i64]| -> Vec<usize> { s.iter().map(|&d| d.max(0) as usize).collect() };
    let out = dims(out_shape);
    if out.contains(&0) {
        return;
    }
    let xs = broadcast_strides(&dims(x_shape), &out);
    let ys = broadcast_strides(&dims(y_shape), &out);
    // Merge adjacent axes (outermost first) where both operands continue
    // the inner axis's layout; drop size-one axes.
    let mut axes: Vec<(usize, usize, usize)> = Vec::new(); // (size, x stride, y stride)
    for ((&d, &sx), &sy) in out.iter().zip(&xs).zip(&ys) {
        if d == 1 {
            continue;
        }
        match axes.last_mut() {
            Some((size, px, py)) if *px == sx * d && *py == sy * d => {
                *size *= d;
                (*px, *py) = (sx, sy);
            }
            _ => axes.push((d, sx, sy)),
        }
    }
    let Some(&(len, x_step, y_step)) = axes.last() else {
        // A single element.
        visit(Run {
            x: 0,
            x_step: 0,
            y: 0,
            y_step: 0,
            len: 1,
        });
        return;
    };
    let outer = &axes[..axes.len() - 1];
    let mut index = vec![0usize; outer.len()];
    let (mut x, mut y) = (0usize, 0usize);
    loop {
        visit(Run {
            x,
            x_step,
            y,
            y_step,
            len,
        });
        // Advance the outer multi-index, innermost first.
        let mut ax = outer.len();
        loop {
            if ax == 0 {
                return;
            }
            ax -= 1;
            let (size, sx, sy) = outer[ax];
            index[ax] += 1;
            x += sx;
            y += sy;
            if index[ax] < size {
                break;
            }
            x -= sx * size;
            y -= sy * size;
            index[ax] = 0;
        }
    }
}

/// `f(x[i], y[j])` for every element of `out_shape`, `x` and `y`
/// broadcast to it (see [`for_each_run`]).
pub(crate) fn broadcast_map<X: Copy, Y: Copy, O>(
    x: &[X],
    x_shape: &[i64],
    y: &[Y],
    y_shape: &[i64],
    out_shape: &[i64],
    mut f: impl FnMut(X, Y) -> O,
) -> Vec<O> {
    let total = out_shape.iter().map(|&d| d.max(0) as usize).product();
    let mut out = Vec::with_capacity(total);
    for_each_run(x_shape, y_shape, out_shape, |run| {
        let xs = &x[run.x..run.x + (run.len - 1) * run.x_step + 1];
        let ys = &y[run.y..run.y + (run.len - 1) * run.y_step + 1];
        match (run.x_step, run.y_step) {
            (1, 1) => out.extend(xs.iter().zip(ys).map(|(&a, &b)| f(a, b))),
            (1, 0) => out.extend(xs.iter().map(|&a| f(a, ys[0]))),
            (0, 1) => out.extend(ys.iter().map(|&b| f(xs[0], b))),
            _ => out.extend((0..run.len).map(|_| f(xs[0], ys[0]))),
        }
    });
    out
}

/// [`broadcast_map`] with a function that may fail: the first error in
/// element order is returned.
pub(crate) fn try_broadcast_map<X: Copy, Y: Copy, O, E>(
    x: &[X],
    x_shape: &[i64],
    y: &[Y],
    y_shape: &[i64],
    out_shape: &[i64],
    mut f: impl FnMut(X, Y) -> Result<O, E>,
) -> Result<Vec<O>, E> {
    let total = out_shape.iter().map(|&d| d.max(0) as usize).product();
    let mut out = Vec::with_capacity(total);
    let mut result = Ok(());
    for_each_run(x_shape, y_shape, out_shape, |run| {
        if result.is_err() {
            return;
        }
        for i in 0..run.len {
            match f(x[run.x + i * run.x_step], y[run.y + i * run.y_step]) {
                Ok(v) => out.push(v),
                Err(e) => {
                    result = Err(e);
                    return;
                }
            }
        }
    });
    result.map(|()| out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{broadcast_index, broadcast_shapes};

    /// Pairs of shapes covering same shape, scalars, leading and trailing
    /// broadcasts, broadcasts on both sides, size-one and empty axes.
    const CASES: &[(&[i64], &[i64])] = &[
        (&[], &[]),
        (&[2, 3, 4, 5], &[2, 3, 4, 5]),
        (&[2, 3, 4, 5], &[]),
        (&[], &[2, 3, 4, 5]),
        (&[1], &[2, 3]),
        (&[2, 3, 4, 5], &[3, 1, 1]),
        (&[2, 3, 4, 5], &[1, 3, 1, 1]),
        (&[2, 3, 4, 5], &[5]),
        (&[2, 3, 4, 5], &[4, 1]),
        (&[3, 1], &[1, 4]),
        (&[2, 1, 4, 1], &[1, 3, 1, 5]),
        (&[1, 1, 7], &[1, 1, 7]),
        (&[3, 1, 1], &[1, 1, 1]),
        (&[2, 0, 3], &[3]),
        (&[6, 1, 2], &[6, 5, 1]),
    ];

    #[test]
    fn runs_visit_the_same_elements_as_the_broadcast_index() {
        for &(xs, ys) in CASES {
            let out = broadcast_shapes(xs, ys).unwrap();
            let x: Vec<usize> = (0..xs.iter().product::<i64>() as usize).collect();
            let y: Vec<usize> = (0..ys.iter().product::<i64>() as usize).collect();
            let got = broadcast_map(&x, xs, &y, ys, &out, |a, b| (a, b));
            let want: Vec<(usize, usize)> = broadcast_index(xs, &out)
                .into_iter()
                .zip(broadcast_index(ys, &out))
                .collect();
            assert_eq!(got, want, "{xs:?} and {ys:?} to {out:?}");
        }
    }

    #[test]
    fn common_broadcasts_are_few_long_runs() {
        let runs = |xs: &[i64], ys: &[i64]| {
            let out = broadcast_shapes(xs, ys).unwrap();
            let mut runs = Vec::new();
            for_each_run(xs, ys, &out, |r| runs.push((r.len, r.x_step, r.y_step)));
            runs
        };
        assert_eq!(runs(&[2, 3, 4, 5], &[2, 3, 4, 5]), vec![(120, 1, 1)]);
        assert_eq!(runs(&[2, 3, 4, 5], &[]), vec![(120, 1, 0)]);
        assert_eq!(runs(&[2, 3, 4, 5], &[3, 1, 1]), vec![(20, 1, 0); 6]);
        assert_eq!(runs(&[8, 16], &[16]), vec![(16, 1, 1); 8]);
    }

    #[test]
    fn a_failure_is_returned_as_the_first_error() {
        let x = [1i32, 2, 3, 4];
        let y = [0i32];
        let got: Result<Vec<i32>, i32> = try_broadcast_map(&x, &[4], &y, &[], &[4], |a, b| {
            if a >= 2 {
                Err(a)
            } else {
                Ok(a + b)
            }
        });
        assert_eq!(got, Err(2));
        let ok: Result<Vec<i32>, i32> =
            try_broadcast_map(&x, &[4], &y, &[], &[4], |a, b| Ok(a + b));
        assert_eq!(ok, Ok(vec![1, 2, 3, 4]));
    }
}
