//! Rounding an `f32` to float16 precision without leaving `f32`: the
//! value `half::f16::from_f32(x).to_f32()` gives (round to nearest, ties
//! to even; overflow to infinity; float16 subnormals; NaN quieted with its
//! payload cut to ten bits), computed with a few integer and float
//! operations the compiler inlines, instead of two out-of-line
//! conversions. Every float16 kernel rounds after each operation, so this
//! is on the hot path of every float16 model.

/// `x` rounded to the nearest float16, as an `f32`.
#[inline]
pub(crate) fn round_to_float16(x: f32) -> f32 {
    let bits = x.to_bits();
    let sign = bits & 0x8000_0000;
    let abs = bits & 0x7fff_ffff;
    let rounded = if abs > 0x7f80_0000 {
        // NaN: quiet, the payload's top ten bits kept (float16 has ten).
        0x7fc0_0000 | (abs & 0x007f_e000)
    } else if abs >= 0x477f_f000 {
        // From 65520 (halfway between 65504, the largest float16, and
        // 2^16) up: infinity.
        0x7f80_0000
    } else if abs < 0x3880_0000 {
        // Below 2^-14, the smallest normal float16: a multiple of 2^-24.
        // Adding 0.5 puts the value where one unit in the last place of an
        // `f32` is 2^-24, so the addition itself rounds to nearest even.
        ((f32::from_bits(abs) + 0.5) - 0.5).to_bits()
    } else {
        // A normal float16: keep ten of the 23 fraction bits, to nearest
        // even (a carry into the exponent is the correct result).
        let lsb = (abs >> 13) & 1;
        (abs + 0x0fff + lsb) & !0x1fff
    };
    f32::from_bits(sign | rounded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(x: f32) -> f32 {
        half::f16::from_f32(x).to_f32()
    }

    #[test]
    fn matches_the_half_conversion_on_a_sweep_of_every_exponent() {
        // A stride coprime to every power of two visits every exponent and
        // many fraction patterns of both signs; the edges are added.
        let mut patterns: Vec<u32> = (0..=u32::MAX).step_by(4093).collect();
        for edge in [
            0x0000_0000u32, // zero
            0x0000_0001,    // the smallest f32 subnormal
            0x3300_0000,    // 2^-25: half the smallest float16 subnormal, a tie to zero
            0x3300_0001,    // just above: rounds up to 2^-24
            0x33c0_0000,    // 1.5 · 2^-24: a tie to even (2^-23)
            0x387f_f000,    // just below 2^-14, rounds up to the smallest normal
            0x3880_0000,    // 2^-14
            0x3f80_1000,    // 1 + 2^-11: a tie to even (1)
            0x3f80_3000,    // 1 + 3 · 2^-11: a tie to even (1 + 2^-9)
            0x477f_e000,    // 65504
            0x477f_efff,    // just below 65520: 65504
            0x477f_f000,    // 65520: infinity
            0x7f80_0000,    // infinity
            0x7f80_0001,    // a signalling NaN whose payload is lost
            0x7fc0_0000,    // the quiet NaN
            0x7fa5_a000,    // a NaN with a payload in the kept bits
            0x7fff_ffff,
        ] {
            patterns.push(edge);
            patterns.push(edge | 0x8000_0000);
        }
        for bits in patterns {
            let x = f32::from_bits(bits);
            assert_eq!(
                round_to_float16(x).to_bits(),
                reference(x).to_bits(),
                "{bits:#010x} ({x:e})"
            );
        }
    }
}
