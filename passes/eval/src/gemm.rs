//! A blocked matrix product `C[M, N] = A[M, K] · B[K, N]`, the engine of
//! the matrix-product and convolution kernels.
//!
//! Every element of `C` is still accumulated exactly as the scalar
//! definition does: from zero, adding `fix(a · b)` for `k = 0, 1, …` in
//! order and fixing each partial sum (rounding to float16/bfloat16,
//! wrapping integers; nothing for float32/float64). Only the order in
//! which *different* output elements are computed changes: the operands
//! are packed into small contiguous panels (`MR` rows of `A`, `NR` columns
//! of `B`, `KC` steps of the reduction at a time, the BLIS loop nest) and a
//! register tile of `MR × NR` outputs advances together, which the
//! compiler vectorises across the `NR` columns. So results are
//! bit-for-bit those of the naive loop, only much faster. No fused
//! multiply-add is used (it would round differently).

use super::num::Num;
use relay_ir::dtype::DataType;

/// Rows of `A` in a register tile.
const MR: usize = 4;
/// Columns of `B` in a register tile.
const NR: usize = 8;
/// Reduction steps per packed block (a `KC × NR` panel of `B` stays in L1).
const KC: usize = 256;
/// Rows of `A` per packed block (an `MC × KC` block stays in L2).
const MC: usize = 64;
/// Columns of `B` per packed block.
const NC: usize = 1024;

/// A matrix operand, read a row segment at a time.
pub(crate) trait Rows<T> {
    /// Sets `dst[i]` to the element at (`row`, `col0 + i`).
    fn fill(&self, row: usize, col0: usize, dst: &mut [T]);
}

/// A matrix in a slice: element (r, c) at `offset + r·row_stride +
/// c·col_stride` (a transpose is the same data with the strides swapped).
pub(crate) struct Strided<'a, T> {
    pub(crate) data: &'a [T],
    pub(crate) offset: usize,
    pub(crate) row_stride: usize,
    pub(crate) col_stride: usize,
}

impl<T: Copy> Rows<T> for Strided<'_, T> {
    fn fill(&self, row: usize, col0: usize, dst: &mut [T]) {
        let base = self.offset + row * self.row_stride + col0 * self.col_stride;
        if self.col_stride == 1 {
            dst.copy_from_slice(&self.data[base..base + dst.len()]);
        } else {
            for (i, d) in dst.iter_mut().enumerate() {
                *d = self.data[base + i * self.col_stride];
            }
        }
    }
}

/// Products with at least this many multiply-adds split their rows
/// between two threads (a few milliseconds of work, so the thread's start
/// is noise).
const PARALLEL_WORK: usize = 1 << 22;

/// `A · B` (`a` is `m × k`, `b` is `k × n`), row-major, each element
/// accumulated in increasing `k` with the rounding of `dt`. A large
/// product computes the top and bottom halves of its rows on two threads;
/// every element is computed the same way either way, so the result does
/// not depend on it.
pub(crate) fn gemm<T: Num>(
    m: usize,
    n: usize,
    k: usize,
    a: &(impl Rows<T> + Sync),
    b: &(impl Rows<T> + Sync),
    dt: DataType,
) -> Vec<T> {
    let mut c = vec![T::default(); m * n];
    if m == 0 || n == 0 || k == 0 {
        return c;
    }
    let identity = T::fix_is_identity(dt);
    let run = |rows: std::ops::Range<usize>, c: &mut [T]| {
        if identity {
            blocked(rows, n, k, a, b, |x| x, c)
        } else {
            blocked(rows, n, k, a, b, |x: T| x.fix(dt), c)
        }
    };
    let split = (m / 2).next_multiple_of(MR);
    if m.saturating_mul(n).saturating_mul(k) >= PARALLEL_WORK && split < m {
        let (top, bottom) = c.split_at_mut(split * n);
        std::thread::scope(|scope| {
            scope.spawn(|| run(split..m, bottom));
            run(0..split, top);
        });
    } else {
        run(0..m, &mut c);
    }
    c
}

/// Rows `rows` of `A · B` into `c` (`rows.len() × n`).
fn blocked<T: Num>(
    rows: std::ops::Range<usize>,
    n: usize,
    k: usize,
    a: &impl Rows<T>,
    b: &impl Rows<T>,
    fix: impl Fn(T) -> T + Copy,
    c: &mut [T],
) {
    let (first, m) = (rows.start, rows.len());
    let mut a_packed = Vec::new();
    let mut b_packed = Vec::new();
    let mut row = Vec::new();
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            pack_b(b, pc, kc, jc, nc, &mut b_packed);
            for ic in (0..m).step_by(MC) {
                let mc = MC.min(m - ic);
                pack_a(a, first + ic, mc, pc, kc, &mut a_packed, &mut row);
                for (jr, b_panel) in b_packed.chunks_exact(kc * NR).enumerate() {
                    let cols = NR.min(nc - jr * NR);
                    for (ir, a_panel) in a_packed.chunks_exact(kc * MR).enumerate() {
                        let rows = MR.min(mc - ir * MR);
                        let origin = (ic + ir * MR) * n + jc + jr * NR;
                        let mut tile = [[T::default(); NR]; MR];
                        for (r, tile_row) in tile.iter_mut().enumerate().take(rows) {
                            let at = origin + r * n;
                            tile_row[..cols].copy_from_slice(&c[at..at + cols]);
                        }
                        micro_kernel(a_panel, b_panel, &mut tile, fix);
                        for (r, tile_row) in tile.iter().enumerate().take(rows) {
                            let at = origin + r * n;
                            c[at..at + cols].copy_from_slice(&tile_row[..cols]);
                        }
                    }
                }
            }
        }
    }
}

/// Adds the products of one `MR`-row panel of `A` and one `NR`-column panel
/// of `B` (both `kc` steps long, interleaved per step) to the tile.
#[inline(always)]
fn micro_kernel<T: Num>(
    a_panel: &[T],
    b_panel: &[T],
    tile: &mut [[T; NR]; MR],
    fix: impl Fn(T) -> T + Copy,
) {
    for (a_step, b_step) in a_panel.chunks_exact(MR).zip(b_panel.chunks_exact(NR)) {
        let a_step: &[T; MR] = a_step.try_into().expect("MR values");
        let b_step: &[T; NR] = b_step.try_into().expect("NR values");
        for (tile_row, &x) in tile.iter_mut().zip(a_step) {
            for (acc, &y) in tile_row.iter_mut().zip(b_step) {
                *acc = fix(*acc + fix(x * y));
            }
        }
    }
}

/// Packs rows `pc..pc + kc` and columns `jc..jc + nc` of `B` into panels of
/// `NR` columns, each stored step by step (`NR` values per step), the last
/// panel padded with zeros.
fn pack_b<T: Num>(b: &impl Rows<T>, pc: usize, kc: usize, jc: usize, nc: usize, out: &mut Vec<T>) {
    let panels = nc.div_ceil(NR);
    out.clear();
    out.resize(panels * kc * NR, T::default());
    for (p, panel) in out.chunks_exact_mut(kc * NR).enumerate() {
        let cols = NR.min(nc - p * NR);
        for (step, dst) in panel.chunks_exact_mut(NR).enumerate() {
            b.fill(pc + step, jc + p * NR, &mut dst[..cols]);
        }
    }
}

/// Packs rows `ic..ic + mc` and columns `pc..pc + kc` of `A` into panels of
/// `MR` rows, each stored step by step (`MR` values per step), the last
/// panel padded with zeros.
fn pack_a<T: Num>(
    a: &impl Rows<T>,
    ic: usize,
    mc: usize,
    pc: usize,
    kc: usize,
    out: &mut Vec<T>,
    row: &mut Vec<T>,
) {
    let panels = mc.div_ceil(MR);
    out.clear();
    out.resize(panels * kc * MR, T::default());
    row.clear();
    row.resize(kc, T::default());
    for (p, panel) in out.chunks_exact_mut(kc * MR).enumerate() {
        for r in 0..MR.min(mc - p * MR) {
            a.fill(ic + p * MR + r, pc, row);
            for (step, &v) in row.iter().enumerate() {
                panel[step * MR + r] = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive definition the blocked product must reproduce bit for bit.
    fn naive(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], dt: DataType) -> Vec<f32> {
        let mut out = Vec::new();
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0f32;
                for r in 0..k {
                    acc = (acc + (a[i * k + r] * b[r * n + j]).fix(dt)).fix(dt);
                }
                out.push(acc);
            }
        }
        out
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn blocked_product_is_bit_identical_to_the_naive_loop_at_every_edge() {
        // Sizes straddle every block edge: MR, NR, KC, MC and NC.
        for &(m, n, k) in &[
            (1, 1, 1),
            (3, 7, 5),
            (5, 9, 257),
            (65, 17, 300),
            (4, 1030, 3),
            (70, 1033, 513),
        ] {
            let (a, b) = (values(m * k, 1), values(k * n, 2));
            for dt in [DataType::FLOAT32, DataType::float(16)] {
                let got = gemm(
                    m,
                    n,
                    k,
                    &Strided {
                        data: &a,
                        offset: 0,
                        row_stride: k,
                        col_stride: 1,
                    },
                    &Strided {
                        data: &b,
                        offset: 0,
                        row_stride: n,
                        col_stride: 1,
                    },
                    dt,
                );
                let want = naive(m, n, k, &a, &b, dt);
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{m}×{n}×{k} {dt}");
            }
        }
    }

    #[test]
    fn transposed_operands_are_read_through_strides() {
        let (m, n, k) = (3, 5, 4);
        let a = values(m * k, 3);
        let b_t = values(n * k, 4); // B stored as [N, K]
        let got = gemm(
            m,
            n,
            k,
            &Strided {
                data: &a,
                offset: 0,
                row_stride: k,
                col_stride: 1,
            },
            &Strided {
                data: &b_t,
                offset: 0,
                row_stride: 1,
                col_stride: k,
            },
            DataType::FLOAT32,
        );
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0f32;
                for r in 0..k {
                    acc += a[i * k + r] * b_t[j * k + r];
                }
                assert_eq!(got[i * n + j].to_bits(), acc.to_bits());
            }
        }
    }

    #[test]
    fn integers_wrap_at_every_step() {
        let int8 = DataType::parse("int8").unwrap();
        let a = [100i128, 100];
        let b = [2i128, 2];
        let got = gemm(
            1,
            1,
            2,
            &Strided {
                data: &a,
                offset: 0,
                row_stride: 2,
                col_stride: 1,
            },
            &Strided {
                data: &b,
                offset: 0,
                row_stride: 1,
                col_stride: 1,
            },
            int8,
        );
        // 200 wraps to -56; -56 + -56 = -112.
        assert_eq!(got, vec![-112]);
    }
}
