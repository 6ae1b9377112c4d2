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
//! multiply-add is used (it would round differently): the kernels are
//! plain multiplications and additions, which the compiler never fuses
//! (Rust emits no floating-point contraction).
//!
//! The release binary targets baseline x86-64 (SSE2, four `f32` lanes).
//! On a CPU with AVX2 the same micro-kernel is also compiled for it (see
//! [`Isa`]) with a tile as wide as its registers, chosen at run time;
//! lanes are independent, so the wider registers compute the very same
//! values. (Compiled for AVX-512F, the compiler vectorises this kernel
//! across the tile's rows with gathers and scatters, slower than AVX2, so
//! AVX-512 CPUs use the AVX2 kernel.)
//!
//! float16 is held in `f32` and rounded after every multiplication and
//! addition. Rounded one value at a time that costs two conversions per
//! multiply-add and dominates the product; on a CPU with F16C as well
//! ([`Isa::Avx2F16c`]) a float16 tile is computed by [`f16c`], which
//! rounds eight lanes at once with the same round-to-nearest-even
//! conversions (`vcvtps2ph`, `vcvtph2ps`), so again the very same values.

use super::num::Num;
use relay_ir::dtype::DataType;

/// Reduction steps per packed block (a `KC × NR` panel of `B` stays in L1).
const KC: usize = 256;
/// Rows of `A` per packed block, at most (an `MC × KC` block stays in L2);
/// rounded down to whole tiles.
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

/// The instruction set the micro-kernel runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// What the binary was compiled for (SSE2 on x86-64; every non-x86
    /// target).
    Baseline,
    /// 256-bit registers, sixteen of them.
    Avx2,
    /// AVX2 and the float16 conversions of F16C, with which a float16
    /// product rounds whole registers (other types use the AVX2 kernel).
    Avx2F16c,
}

impl Isa {
    /// The widest instruction set this CPU has (detected once; the standard
    /// library caches the answer).
    pub(crate) fn best() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                if std::arch::is_x86_feature_detected!("f16c") {
                    return Isa::Avx2F16c;
                }
                return Isa::Avx2;
            }
        }
        Isa::Baseline
    }

    /// Every instruction set this CPU can run, narrowest first.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Isa> {
        [Isa::Baseline, Isa::Avx2, Isa::Avx2F16c]
            .into_iter()
            .filter(|&isa| isa <= Isa::best())
            .collect()
    }
}

impl PartialOrd for Isa {
    fn partial_cmp(&self, other: &Isa) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Isa {
    fn cmp(&self, other: &Isa) -> std::cmp::Ordering {
        (*self as u8).cmp(&(*other as u8))
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
    gemm_with(Isa::best(), m, n, k, a, b, dt)
}

/// [`gemm`] with the micro-kernel compiled for `isa`, which the CPU must
/// have (tests run every available one).
pub(crate) fn gemm_with<T: Num>(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    a: &(impl Rows<T> + Sync),
    b: &(impl Rows<T> + Sync),
    dt: DataType,
) -> Vec<T> {
    assert!(isa <= Isa::best(), "{isa:?} is not available on this CPU");
    let mut c = vec![T::default(); m * n];
    if m == 0 || n == 0 || k == 0 {
        return c;
    }
    let identity = T::fix_is_identity(dt);
    let run = |rows: std::ops::Range<usize>, c: &mut [T]| {
        #[cfg(target_arch = "x86_64")]
        if isa == Isa::Avx2F16c && dt.is_float16() {
            if let Some(done) = f16c::gemm_rows(rows.clone(), n, k, a, b, c) {
                return done;
            }
        }
        if identity {
            dispatch(isa, rows, n, k, a, b, |x| x, c)
        } else {
            dispatch(isa, rows, n, k, a, b, |x: T| x.fix(dt), c)
        }
    };
    let split = (m / 2).next_multiple_of(tile_rows::<T>(isa));
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

/// Whether `T` is a float that vector registers hold (`f32`, `f64`); the
/// `i128` of integers has no vector arithmetic, so it keeps the baseline
/// tile.
fn vectorises<T>() -> bool {
    matches!(std::mem::size_of::<T>(), 4 | 8)
}

/// The tile shape `(MR, NR)` per instruction set and element size: `NR`
/// is two registers' worth of lanes, and the `MR × 2` accumulators plus
/// two registers of `B` and a broadcast of `A` fit AVX2's sixteen
/// registers (the baseline shape is the one the SSE2 build was tuned
/// with).
macro_rules! with_tile {
    ($isa:expr, $t:ty, |$mr:ident, $nr:ident| $body:expr) => {
        match ($isa, vectorises::<$t>(), std::mem::size_of::<$t>()) {
            (Isa::Avx2 | Isa::Avx2F16c, true, 4) => {
                const $mr: usize = 6;
                const $nr: usize = 16;
                $body
            }
            (Isa::Avx2 | Isa::Avx2F16c, true, _) => {
                const $mr: usize = 6;
                const $nr: usize = 8;
                $body
            }
            _ => {
                const $mr: usize = 4;
                const $nr: usize = 8;
                $body
            }
        }
    };
}

/// The rows of a register tile for `T` on `isa`.
fn tile_rows<T>(isa: Isa) -> usize {
    with_tile!(isa, T, |MR, NR| {
        let _ = NR;
        MR
    })
}

/// Rows `rows` of `A · B` into `c` with the tile and micro-kernel of `isa`.
#[allow(clippy::too_many_arguments)]
fn dispatch<T: Num>(
    isa: Isa,
    rows: std::ops::Range<usize>,
    n: usize,
    k: usize,
    a: &impl Rows<T>,
    b: &impl Rows<T>,
    fix: impl Fn(T) -> T + Copy,
    c: &mut [T],
) {
    with_tile!(isa, T, |MR, NR| {
        let micro = |a_panel: &[T], b_panel: &[T], tile: &mut [[T; NR]; MR]| match isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `gemm_with` checked that the CPU has `isa`.
            Isa::Avx2 | Isa::Avx2F16c => unsafe {
                x86::micro_kernel_avx2(a_panel, b_panel, tile, fix)
            },
            _ => micro_kernel(a_panel, b_panel, tile, fix),
        };
        blocked::<T, MR, NR>(rows, n, k, a, b, micro, c)
    })
}

/// The float16 product with F16C: `f32` operands holding float16 values,
/// each multiplication and addition rounded to float16 in whole registers.
#[cfg(target_arch = "x86_64")]
mod f16c {
    use super::{blocked, Num, Rows};
    use std::arch::x86_64::*;

    /// The tile: six rows of sixteen columns, two registers per row (twelve
    /// accumulators, two registers of `B` and a broadcast of `A`: fifteen
    /// of AVX2's sixteen).
    const MR: usize = 6;
    const NR: usize = 16;

    /// Rows `rows` of `A · B` into `c` when `T` is `f32` (`None`, nothing
    /// done, for any other element type). The CPU must have AVX2 and F16C.
    pub(super) fn gemm_rows<T: Num>(
        rows: std::ops::Range<usize>,
        n: usize,
        k: usize,
        a: &impl Rows<T>,
        b: &impl Rows<T>,
        c: &mut [T],
    ) -> Option<()> {
        T::as_f32_slice_mut(c)?;
        let micro = |a_panel: &[T], b_panel: &[T], tile: &mut [[T; NR]; MR]| {
            let (Some(a_panel), Some(b_panel), Some(tile)) = (
                T::as_f32_slice(a_panel),
                T::as_f32_slice(b_panel),
                T::as_f32_slice_mut(tile.as_flattened_mut()),
            ) else {
                unreachable!("T was checked to be f32")
            };
            // SAFETY: the caller checked that the CPU has AVX2 and F16C.
            unsafe { micro_kernel(a_panel, b_panel, tile) }
        };
        blocked::<T, MR, NR>(rows, n, k, a, b, micro, c);
        Some(())
    }

    /// Rounds eight `f32` lanes to float16 and back: `vcvtps2ph` with
    /// round-to-nearest-even given in the instruction (not taken from
    /// MXCSR), then the exact widening `vcvtph2ps`; NaN stays NaN,
    /// overflow becomes infinity, tiny values become float16 subnormals or
    /// zero — exactly what rounding one value at a time gives.
    #[inline(always)]
    unsafe fn round8(x: __m256) -> __m256 {
        // SAFETY: the callers are compiled with F16C enabled.
        unsafe { _mm256_cvtph_ps(_mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x)) }
    }

    /// [`super::micro_kernel`] for float16 in `f32`: per step, per element,
    /// `sum = round(sum + round(a · b))`, in the same order.
    #[target_feature(enable = "avx2,f16c")]
    unsafe fn micro_kernel(a_panel: &[f32], b_panel: &[f32], tile: &mut [f32]) {
        assert_eq!(tile.len(), MR * NR);
        let steps = b_panel.len() / NR;
        assert!(a_panel.len() >= steps * MR && b_panel.len() >= steps * NR);
        // SAFETY: every load and store is within the lengths asserted above
        // (unaligned accesses), and the CPU has the enabled features.
        unsafe {
            let t = tile.as_mut_ptr();
            let mut acc = [[_mm256_setzero_ps(); 2]; MR];
            for (r, row) in acc.iter_mut().enumerate() {
                row[0] = _mm256_loadu_ps(t.add(r * NR));
                row[1] = _mm256_loadu_ps(t.add(r * NR + 8));
            }
            let (ap, bp) = (a_panel.as_ptr(), b_panel.as_ptr());
            for step in 0..steps {
                let b0 = _mm256_loadu_ps(bp.add(step * NR));
                let b1 = _mm256_loadu_ps(bp.add(step * NR + 8));
                for (r, row) in acc.iter_mut().enumerate() {
                    let x = _mm256_broadcast_ss(&*ap.add(step * MR + r));
                    row[0] = round8(_mm256_add_ps(row[0], round8(_mm256_mul_ps(x, b0))));
                    row[1] = round8(_mm256_add_ps(row[1], round8(_mm256_mul_ps(x, b1))));
                }
            }
            for (r, row) in acc.iter().enumerate() {
                _mm256_storeu_ps(t.add(r * NR), row[0]);
                _mm256_storeu_ps(t.add(r * NR + 8), row[1]);
            }
        }
    }
}

/// The micro-kernel compiled for AVX2: the same code as [`micro_kernel`],
/// inlined into a function the compiler may use the wider registers in.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{micro_kernel, Num};

    #[target_feature(enable = "avx2")]
    pub(super) fn micro_kernel_avx2<T: Num, const MR: usize, const NR: usize>(
        a_panel: &[T],
        b_panel: &[T],
        tile: &mut [[T; NR]; MR],
        fix: impl Fn(T) -> T + Copy,
    ) {
        micro_kernel(a_panel, b_panel, tile, fix)
    }
}

/// Rows `rows` of `A · B` into `c` (`rows.len() × n`), `MR × NR` outputs
/// at a time by `micro`.
fn blocked<T: Num, const MR: usize, const NR: usize>(
    rows: std::ops::Range<usize>,
    n: usize,
    k: usize,
    a: &impl Rows<T>,
    b: &impl Rows<T>,
    micro: impl Fn(&[T], &[T], &mut [[T; NR]; MR]),
    c: &mut [T],
) {
    let (first, m) = (rows.start, rows.len());
    let mc_max = (MC / MR).max(1) * MR;
    let mut a_packed = Vec::new();
    let mut b_packed = Vec::new();
    let mut row = Vec::new();
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            pack_b::<T, NR>(b, pc, kc, jc, nc, &mut b_packed);
            for ic in (0..m).step_by(mc_max) {
                let mc = mc_max.min(m - ic);
                pack_a::<T, MR>(a, first + ic, mc, pc, kc, &mut a_packed, &mut row);
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
                        micro(a_panel, b_panel, &mut tile);
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
/// of `B` (both `kc` steps long, interleaved per step) to the tile. The
/// tile is worked on in a local copy, which the compiler keeps in
/// registers, one vector per `NR / lanes` columns of a row.
#[inline(always)]
fn micro_kernel<T: Num, const MR: usize, const NR: usize>(
    a_panel: &[T],
    b_panel: &[T],
    tile: &mut [[T; NR]; MR],
    fix: impl Fn(T) -> T + Copy,
) {
    let mut acc = *tile;
    for (a_step, b_step) in a_panel.chunks_exact(MR).zip(b_panel.chunks_exact(NR)) {
        let a_step: &[T; MR] = a_step.try_into().expect("MR values");
        let b_step: &[T; NR] = b_step.try_into().expect("NR values");
        for (acc_row, &x) in acc.iter_mut().zip(a_step) {
            for (sum, &y) in acc_row.iter_mut().zip(b_step) {
                *sum = fix(*sum + fix(x * y));
            }
        }
    }
    *tile = acc;
}

/// Packs rows `pc..pc + kc` and columns `jc..jc + nc` of `B` into panels of
/// `NR` columns, each stored step by step (`NR` values per step), the last
/// panel padded with zeros.
fn pack_b<T: Num, const NR: usize>(
    b: &impl Rows<T>,
    pc: usize,
    kc: usize,
    jc: usize,
    nc: usize,
    out: &mut Vec<T>,
) {
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
fn pack_a<T: Num, const MR: usize>(
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

    /// A row-major matrix of `cols` columns held in `data` from its start.
    fn row_major<T>(data: &[T], cols: usize) -> Strided<'_, T> {
        Strided {
            data,
            offset: 0,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The naive definition the blocked product must reproduce bit for
    /// bit: `a` is read at `a[i·a_row + r·a_col]`, `b` at `b[r·b_row +
    /// j·b_col]`.
    fn naive<T: Num>(
        (m, n, k): (usize, usize, usize),
        a: &Strided<'_, T>,
        b: &Strided<'_, T>,
        dt: DataType,
    ) -> Vec<T> {
        let mut out = Vec::new();
        for i in 0..m {
            for j in 0..n {
                let mut acc = T::default();
                for r in 0..k {
                    let x = a.data[a.offset + i * a.row_stride + r * a.col_stride];
                    let y = b.data[b.offset + r * b.row_stride + j * b.col_stride];
                    acc = (acc + (x * y).fix(dt)).fix(dt);
                }
                out.push(acc);
            }
        }
        out
    }

    /// Pseudo-random values in [-1, 1) with all 24 bits of an `f32`
    /// mantissa in use, so that any change of rounding shows.
    fn values(len: usize, seed: u32) -> Vec<f64> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                f64::from(state >> 8) / f64::from(1u32 << 24) * 2.0 - 1.0
            })
            .collect()
    }

    /// Sizes that straddle every tile and block edge of every instruction
    /// set's tile (MR 4/6, NR 8/16, KC, MC, NC), with k beyond KC.
    const SHAPES: &[(usize, usize, usize)] = &[
        (1, 1, 1),
        (3, 7, 5),
        (5, 9, 257),
        (7, 33, 300),
        (13, 17, 513),
        (65, 31, 260),
        (4, 1030, 3),
        (70, 1033, 259),
    ];

    /// Checks every available instruction set, with `B` stored as given
    /// and transposed, on every shape, against [`naive`].
    fn check_all<T: Num + std::fmt::Debug>(
        dt: DataType,
        convert: impl Fn(f64) -> T,
        bits: impl Fn(T) -> u128,
    ) {
        for &(m, n, k) in SHAPES {
            let a: Vec<T> = values(m * k, 1).into_iter().map(&convert).collect();
            let b: Vec<T> = values(k * n, 2).into_iter().map(&convert).collect();
            // A read transposed from a [K, M] buffer after an offset.
            let mut a_t = vec![T::default(); 3];
            for r in 0..k {
                for i in 0..m {
                    a_t.push(a[i * k + r]);
                }
            }
            let operands = [
                (row_major(&a, k), row_major(&b, n)),
                (
                    Strided {
                        data: &a_t[..],
                        offset: 3,
                        row_stride: 1,
                        col_stride: m,
                    },
                    // B read as the transpose of a [N, K] matrix.
                    Strided {
                        data: &b[..],
                        offset: 0,
                        row_stride: 1,
                        col_stride: k,
                    },
                ),
            ];
            for (a, b) in &operands {
                let want = naive((m, n, k), a, b, dt);
                for isa in Isa::available() {
                    let got = gemm_with(isa, m, n, k, a, b, dt);
                    let differs = got
                        .iter()
                        .zip(&want)
                        .position(|(&x, &y)| bits(x) != bits(y));
                    assert_eq!(got.len(), want.len());
                    assert!(
                        differs.is_none(),
                        "{dt} {m}×{n}×{k} ({isa:?}, col strides {}/{}): element {:?}: {:?} vs naive {:?}",
                        a.col_stride,
                        b.col_stride,
                        differs,
                        differs.map(|i| got[i]),
                        differs.map(|i| want[i]),
                    );
                }
            }
        }
    }

    #[test]
    fn every_instruction_set_matches_the_naive_loop_bit_for_bit_in_float32() {
        check_all(DataType::FLOAT32, |x| x as f32, |x| u128::from(x.to_bits()));
    }

    #[test]
    fn every_instruction_set_matches_the_naive_loop_bit_for_bit_in_float64() {
        // Values with more than 24 significant bits, so f64 arithmetic is
        // really exercised.
        check_all(
            DataType::float(64),
            |x| x * (1.0 + 1e-9),
            |x| u128::from(x.to_bits()),
        );
    }

    #[test]
    fn every_instruction_set_matches_the_naive_loop_bit_for_bit_in_float16_and_bfloat16() {
        for dt in [DataType::float(16), DataType::parse("bfloat16").unwrap()] {
            check_all(dt, |x| (x as f32).fix(dt), |x| u128::from(x.to_bits()));
        }
    }

    #[test]
    fn every_instruction_set_rounds_float16_subnormals_infinities_and_nan_as_the_naive_loop() {
        let f16 = DataType::float(16);
        // Every NaN counts as one value: which operand's payload (and sign)
        // a NaN sum carries is not fixed (the compiler may swap the
        // operands of an addition, and does in release builds).
        let bits = |x: f32| u128::from(if x.is_nan() { f32::NAN } else { x }.to_bits());
        // Products of at most 2^-24 and sums below 2^-14: float16
        // subnormals, many rounding to zero or to even.
        check_all(f16, |x| ((x as f32) * 2f32.powi(-12)).fix(f16), bits);
        // Products beyond 65504 become infinities, sums of both signs NaN.
        check_all(f16, |x| ((x as f32) * 300.0).fix(f16), bits);
        // Rare NaNs (two payloads) and infinities among ordinary values.
        let special = |x: f64| {
            let v = match (x * 1e6) as i64 % 211 {
                0 => f32::NAN,
                1 => f32::from_bits(0x7fc1_2000),
                2 => f32::INFINITY,
                3 => f32::NEG_INFINITY,
                _ => x as f32,
            };
            v.fix(f16)
        };
        check_all(f16, special, bits);
    }

    #[test]
    fn every_instruction_set_matches_the_naive_loop_bit_for_bit_in_integers() {
        // int8 wraps often: products reach ±64·64 and sums leave the range.
        for dt in [DataType::parse("int8").unwrap(), DataType::INT32] {
            check_all(dt, |x| (x * 64.0) as i128, |x| x as u128);
        }
    }

    #[test]
    fn the_best_instruction_set_is_the_one_gemm_uses() {
        let (m, n, k) = (9, 40, 300);
        let a: Vec<f32> = values(m * k, 5).into_iter().map(|x| x as f32).collect();
        let b: Vec<f32> = values(k * n, 6).into_iter().map(|x| x as f32).collect();
        let a = row_major(&a, k);
        let b = row_major(&b, n);
        let dt = DataType::FLOAT32;
        assert_eq!(
            gemm(m, n, k, &a, &b, dt),
            gemm_with(Isa::best(), m, n, k, &a, &b, dt)
        );
    }

    #[test]
    fn a_product_split_between_threads_matches_the_naive_loop() {
        // m·n·k ≥ PARALLEL_WORK: the rows are split at a tile boundary.
        let (m, n, k) = (37, 300, 400);
        assert!(m * n * k >= PARALLEL_WORK);
        let a: Vec<f32> = values(m * k, 7).into_iter().map(|x| x as f32).collect();
        let b: Vec<f32> = values(k * n, 8).into_iter().map(|x| x as f32).collect();
        let a = row_major(&a, k);
        let b = row_major(&b, n);
        let want = naive((m, n, k), &a, &b, DataType::FLOAT32);
        for isa in Isa::available() {
            let got = gemm_with(isa, m, n, k, &a, &b, DataType::FLOAT32);
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "{isa:?}"
            );
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
