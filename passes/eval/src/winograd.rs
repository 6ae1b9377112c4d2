//! Winograd weight transforms (TOPI's `nn/conv2d.py`
//! `conv2d_winograd_weight_transform` and `nn/conv3d.py`
//! `conv3d_winograd_weight_transform`): `nn.contrib_conv2d_winograd_weight_transform`
//! and `nn.contrib_conv3d_winograd_weight_transform`.
//!
//! The filter matrix `G` is computed as TOPI's `nn/winograd_util.py` does,
//! from the tile size `m` and the kernel size `r`: the `m + r − 2`
//! interpolation points of its table, the diagonal matrix `f` of the
//! points' pairwise-difference products (its first row negated when its
//! first entry is negative), and `G[i][j] = a_i^j · (1 / f_i)` in `float64`
//! (the last row picks the kernel's last tap), then cast to the kernel's
//! data type (integer types truncate, as NumPy's `astype` does).
//!
//! Each output element is the sum over the kernel taps, `kh` outer and `kw`
//! inner (and `kd` outermost for the 3-D depth transform), of
//! `kernel · G[·][kh] · G[·][kw]`, multiplied left to right and rounded to
//! the data type after every operation, as TOPI's compute writes it. TVM's
//! schedules unroll these small reductions without reordering them, so the
//! sums agree bit for bit; float16 rounds after every step here, where an
//! LLVM target without native float16 may keep a product in float32.

use super::num::Num;
use super::tensor::{decode, encode, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.contrib_conv2d_winograd_weight_transform" => conv2d_weight_transform,
        "nn.contrib_conv3d_winograd_weight_transform" => conv3d_weight_transform,
        _ => return None,
    })
}

/// TOPI's interpolation points for `degree = m + r − 2` (Barabasz et al.'s
/// table in `_interpolation_points`); entry `d − 1` is used for degree `d`.
fn interpolation_points(degree: usize) -> Vec<f64> {
    let table: [&[f64]; 17] = [
        &[],
        &[],
        &[0.0, -1.0, 1.0],
        &[0.0, -1.0, 1.0, 1.0 / 2.0],
        &[0.0, -1.0, 1.0, 1.0 / 2.0, -2.0],
        &[0.0, -1.0, 1.0, 1.0 / 2.0, -2.0, -1.0 / 2.0],
        &[0.0, -1.0, 1.0, 1.0 / 2.0, -1.0 / 2.0, 2.0, -2.0],
        &[0.0, -1.0, 1.0, 1.0 / 2.0, -1.0 / 2.0, 2.0, -2.0, -1.0 / 4.0],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            4.0,
        ],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            3.0 / 4.0,
            -4.0 / 3.0,
        ],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            4.0,
            3.0 / 4.0,
            -4.0 / 3.0,
        ],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            4.0,
            3.0 / 4.0,
            -4.0 / 3.0,
            1.0 / 4.0,
        ],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            4.0,
            1.0 / 4.0,
            -3.0 / 4.0,
            4.0 / 3.0,
            -4.0,
        ],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            4.0,
            1.0 / 4.0,
            -3.0 / 4.0,
            4.0 / 3.0,
            3.0 / 4.0,
            -4.0 / 3.0,
        ],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            4.0,
            1.0 / 4.0,
            -3.0 / 4.0,
            4.0 / 3.0,
            -4.0,
            3.0 / 4.0,
            -4.0 / 3.0,
        ],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            4.0,
            1.0 / 4.0,
            -3.0 / 4.0,
            4.0 / 3.0,
            -4.0,
            2.0 / 3.0,
            -3.0 / 2.0,
            3.0 / 2.0,
        ],
        &[
            0.0,
            -1.0,
            1.0,
            1.0 / 2.0,
            -1.0 / 2.0,
            2.0,
            -2.0,
            -1.0 / 4.0,
            4.0,
            1.0 / 4.0,
            -3.0 / 4.0,
            4.0 / 3.0,
            -4.0,
            2.0 / 3.0,
            -3.0 / 2.0,
            -2.0 / 3.0,
            3.0 / 2.0,
        ],
    ];
    table[degree - 1].to_vec()
}

/// The `alpha × r` matrix `G` (`alpha = m + r − 1`) in `float64`, or why
/// TOPI refuses the sizes.
pub(crate) fn winograd_g(tile: i64, r: i64) -> EvalResult<Vec<Vec<f64>>> {
    if !(2..=8).contains(&tile) {
        return unsupported(format!("Unsupported tile size for Winograd: {tile}"));
    }
    if !(3..=7).contains(&r) {
        return unsupported(format!("Unsupported kernel size for Winograd: {r}"));
    }
    let (m, r) = (tile as usize, r as usize);
    let points = interpolation_points(m + r - 2);
    let alpha = m + r - 1;
    // f_i = Π_{k ≠ i} (a_i − a_k), multiplied in k order from 1.
    let mut f: Vec<f64> = (0..alpha - 1)
        .map(|i| {
            (0..alpha - 1)
                .filter(|&k| k != i)
                .fold(1.0, |acc, k| acc * (points[i] - points[k]))
        })
        .collect();
    if f[0] < 0.0 {
        f[0] = -f[0];
    }
    let mut g = vec![vec![0.0; r]; alpha];
    for (i, row) in g.iter_mut().enumerate().take(alpha - 1) {
        let inverse = 1.0 / f[i];
        for (j, x) in row.iter_mut().enumerate() {
            *x = points[i].powf(j as f64) * inverse;
        }
    }
    g[alpha - 1][r - 1] = 1.0;
    Ok(g)
}

/// `G` cast to the kernel's data type, in the class the kernel computes in.
fn cast_g<T: Num>(g: &[Vec<f64>], dt: DataType, from: impl Fn(f64) -> T) -> Vec<Vec<T>> {
    g.iter()
        .map(|row| row.iter().map(|&x| from(x).fix(dt)).collect())
        .collect()
}

/// The transform over a kernel of `co · ci · depth` planes of `r × r` taps;
/// `depth_transform` also transforms the depth (whose size is then `r`).
/// Output layout: `[alpha, alpha, (alpha | depth), co, ci]`.
#[allow(clippy::too_many_arguments)]
fn transform<T: Num>(
    w: &[T],
    g: &[Vec<T>],
    co: usize,
    ci: usize,
    depth: usize,
    r: usize,
    depth_transform: bool,
    dt: DataType,
) -> Vec<T> {
    let alpha = g.len();
    let plane = r * r;
    let outer = if depth_transform { alpha } else { depth };
    let mut out = Vec::with_capacity(alpha * alpha * outer * co * ci);
    let fix = |x: T| x.fix(dt);
    for eps in 0..alpha {
        for nu in 0..alpha {
            for d in 0..outer {
                for o in 0..co {
                    for i in 0..ci {
                        let mut acc = T::default();
                        if depth_transform {
                            // `omg = eps, eps = nu, nu = d`: three-axis transform.
                            let (omg, e, n) = (eps, nu, d);
                            for kd in 0..depth {
                                let base = ((o * ci + i) * depth + kd) * plane;
                                for kh in 0..r {
                                    for kw in 0..r {
                                        let t = fix(w[base + kh * r + kw] * g[omg][kd]);
                                        let t = fix(t * g[e][kh]);
                                        acc = fix(acc + fix(t * g[n][kw]));
                                    }
                                }
                            }
                        } else {
                            let base = ((o * ci + i) * depth + d) * plane;
                            for kh in 0..r {
                                for kw in 0..r {
                                    let t = fix(w[base + kh * r + kw] * g[eps][kh]);
                                    acc = fix(acc + fix(t * g[nu][kw]));
                                }
                            }
                        }
                        out.push(acc);
                    }
                }
            }
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn run(
    args: &[Value],
    call: &CallInfo,
    co: usize,
    ci: usize,
    depth: usize,
    r: usize,
    depth_transform: bool,
    shape: Vec<i64>,
) -> EvalResult {
    let w = arg_tensor(args, 0, call)?;
    let dt = w.dtype;
    if dt.is_bfloat16() {
        // TOPI builds bfloat16 matrices as `uint16`, which TVM cannot
        // multiply with a bfloat16 kernel.
        return unsupported(format!("{}: a bfloat16 kernel", call.op));
    }
    call.check_size(&shape)?;
    let g = winograd_g(call.req_int("tile_size")?, r as i64)?;
    let col = decode(w)?;
    let out = match &col {
        Col::F32(v) => {
            let g = cast_g(&g, dt, |x| {
                if dt.is_float16() {
                    half::f16::from_f64(x).to_f32()
                } else {
                    x as f32
                }
            });
            Col::F32(transform(v, &g, co, ci, depth, r, depth_transform, dt))
        }
        Col::F64(v) => Col::F64(transform(
            v,
            &cast_g(&g, dt, |x| x),
            co,
            ci,
            depth,
            r,
            depth_transform,
            dt,
        )),
        Col::Int(v) => {
            let g = cast_g(&g, dt, |x| x.trunc() as i128);
            Col::Int(transform(v, &g, co, ci, depth, r, depth_transform, dt))
        }
    };
    Ok(Value::tensor(encode(&out, dt, shape)?))
}

fn conv2d_weight_transform(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let w = arg_tensor(args, 0, call)?;
    let &[co, ci, kh, kw] = w.shape.as_slice() else {
        return unsupported(format!("{}: a 4-D OIHW kernel", call.op));
    };
    if kh != kw {
        return unsupported(format!("{}: Only support NxN kernel", call.op));
    }
    let alpha = call.req_int("tile_size")? + kw - 1;
    let shape = vec![alpha, alpha, co, ci];
    run(
        args,
        call,
        co as usize,
        ci as usize,
        1,
        kw as usize,
        false,
        shape,
    )
}

fn conv3d_weight_transform(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let w = arg_tensor(args, 0, call)?;
    let &[co, ci, kd, kh, kw] = w.shape.as_slice() else {
        return unsupported(format!("{}: a 5-D OIDHW kernel", call.op));
    };
    let depth_transform = 2 < kd && kd < 8 && kd == kh;
    if kh != kw || (depth_transform && kd != kh) {
        return unsupported(format!("{}: Only support NxNxN or DxNxN kernels", call.op));
    }
    let alpha = call.req_int("tile_size")? + kh - 1;
    let shape = if depth_transform {
        vec![alpha, alpha, alpha, co, ci]
    } else {
        vec![alpha, alpha, kd, co, ci]
    };
    run(
        args,
        call,
        co as usize,
        ci as usize,
        kd as usize,
        kh as usize,
        depth_transform,
        shape,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{floats, run as run_op};
    use relay_ir::AttrValue;

    /// F(2, 3)'s `G` from TOPI's construction, by hand: points (0, −1, 1),
    /// f = diag(|(0+1)(0−1)|, (−1−0)(−1−1), (1−0)(1+1)) = diag(1, 2, 2),
    /// `G[i][j] = a_i^j / f_i`, and the last row picks the last tap.
    #[test]
    fn f2x3_matrix_by_hand() {
        let g = winograd_g(2, 3).unwrap();
        let want = vec![
            vec![1.0, 0.0, 0.0],
            vec![0.5, -0.5, 0.5],
            vec![0.5, 0.5, 0.5],
            vec![0.0, 0.0, 1.0],
        ];
        assert_eq!(g, want);
        assert!(winograd_g(9, 3).is_err());
        assert!(winograd_g(2, 2).is_err());
    }

    #[test]
    fn conv2d_transform_of_a_single_tap_kernel_is_g_outer_g() {
        // A kernel with one tap at (1, 2) gives G[eps][1] · G[nu][2].
        let mut taps = vec![0.0; 9];
        taps[5] = 1.0;
        let out = run_op(
            "nn.contrib_conv2d_winograd_weight_transform",
            &[("tile_size", AttrValue::Int(2))],
            &[floats("float32", &[1, 1, 3, 3], &taps)],
        );
        let t = out.as_tensor().unwrap();
        assert_eq!(t.shape, vec![4, 4, 1, 1]);
        let g = winograd_g(2, 3).unwrap();
        let want: Vec<f64> = (0..4)
            .flat_map(|e| {
                let g = &g;
                (0..4).map(move |n| f64::from(g[e][1] as f32 * g[n][2] as f32))
            })
            .collect();
        assert_eq!(t.to_f64_vec().unwrap(), want);
    }
}
