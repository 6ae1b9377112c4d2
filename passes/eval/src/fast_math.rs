//! The approximations FastMath substitutes, TOPI's `fast_exp`, `fast_tanh`
//! (float32 only; other types use `exp` / `tanh`) and `fast_erf` (float32
//! and float16; `fast_erf_float_expr`): TOPI's polynomials with its
//! constants, evaluated in its order. `min(a, b)` and `max(a, b)` are TVM's
//! `select(a < b, a, b)` / `select(a > b, a, b)`. Every operation is one
//! correctly rounded float operation here and in TVM's code (float16
//! rounds after each, as LLVM's promotion does): bit-exact.

// TOPI's constants are kept as written: a literal with C++'s `f` suffix is
// rounded from decimal to float32 once, as Rust's `f32` literal is.
#![allow(clippy::excessive_precision)]

use super::elemwise::map_unary;
use super::tensor::{decode, encode, round_f32, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "fast_exp" | "fast_tanh" | "fast_erf" => fast,
        _ => return None,
    })
}

fn min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

fn max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `fast_exp_float32`: `2^n · p(f)` with `n = ⌊x·log2(e) + ½⌋`.
pub(crate) fn fast_exp(x0: f32) -> f32 {
    let p = [
        1.987_569_15e-4f32,
        1.398_199_950_7e-3,
        8.333_451_907_3e-3,
        4.166_579_589_4e-2,
        1.666_666_545_9e-1,
        5.000_000_120_1e-1,
    ];
    let x = max(min(x0, 88.376_262_664_795_0), -88.376_262_664_794_9);
    let n = (x * std::f32::consts::LOG2_E + 0.5).floor();
    let f = x - n * std::f32::consts::LN_2;
    let poly = ((((p[0] * f + p[1]) * f + p[2]) * f + p[3]) * f + p[4]) * f + p[5];
    let y = poly * f * f + f + 1.0;
    // `cast(int32, n + 127) << 23`, reinterpreted as a float.
    let bits = ((n + 127.0) as i32).wrapping_shl(23);
    max(f32::from_bits(bits as u32) * y, x0)
}

/// `fast_tanh_float`: a 13/6 rational approximation on [-9, 9]. Its
/// constants are C++ doubles given to `make_const(float32, …)`: rounded
/// to double, then to float32.
fn fast_tanh(input: f32) -> f32 {
    let c = |v: f64| v as f32;
    let x = max(c(-9.0), min(c(9.0), input));
    let x2 = x * x;
    let mut p = x2 * c(-2.760_768_477_423_55e-16) + c(2.000_187_904_824_77e-13);
    for a in [
        -8.604_671_522_137_35e-11f64,
        5.122_297_090_371_14e-8,
        1.485_722_357_179_79e-5,
        6.372_619_288_754_36e-4,
        4.893_524_558_917_86e-3,
    ] {
        p = x2 * p + c(a);
    }
    p *= x;
    let mut q = x2 * c(1.198_258_394_667_02e-6) + c(1.185_347_056_866_54e-4);
    for b in [2.268_434_632_439_00e-3f64, 4.893_525_185_543_85e-3] {
        q = x2 * q + c(b);
    }
    p / q
}

/// `fast_erf_float_expr` in float32 (`dt` float32) or float16 (every
/// constant and result rounded to half).
fn fast_erf(arg: f32, dt: DataType) -> f32 {
    let r = |v: f32| round_f32(dt, v);
    let x = max(min(arg, 4.0), -4.0);
    let x2 = r(x * x);
    let alpha = [
        -2.726_142_258_013_06e-10f32,
        2.770_681_424_959_02e-8,
        -2.101_024_020_825_08e-6,
        -5.692_506_394_623_46e-5,
        -7.349_906_303_268_55e-4,
        -2.954_599_808_540_25e-3,
        -1.609_603_332_624_15e-2,
    ]
    .map(r);
    let beta = [
        -1.456_607_184_649_96e-5f32,
        -2.133_740_552_789_05e-4,
        -1.682_826_974_382_03e-3,
        -7.373_329_167_204_68e-3,
        -1.426_473_905_141_89e-2,
    ]
    .map(r);
    let mut p = r(r(x2 * alpha[0]) + alpha[1]);
    for &a in &alpha[2..] {
        p = r(r(x2 * p) + a);
    }
    p = r(x * p);
    let mut q = r(r(x2 * beta[0]) + beta[1]);
    for &b in &beta[2..] {
        q = r(r(x2 * q) + b);
    }
    r(p / q)
}

fn fast(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let dt = x.dtype;
    let f32_only = dt == DataType::FLOAT32;
    let out = match (call.op, decode(x)?) {
        ("fast_exp", Col::F32(v)) if f32_only => v.into_iter().map(fast_exp).collect(),
        ("fast_tanh", Col::F32(v)) if f32_only => v.into_iter().map(fast_tanh).collect(),
        ("fast_erf", Col::F32(v)) if f32_only || dt.is_float16() => {
            v.into_iter().map(|e| fast_erf(e, dt)).collect()
        }
        ("fast_exp", _) => return map_unary(x, "exp").map(Value::tensor),
        ("fast_tanh", _) => return map_unary(x, "tanh").map(Value::tensor),
        // Other types use `erf`, which has no kernel (see the crate docs).
        _ => return unsupported(format!("{} on {dt}", call.op)),
    };
    Ok(Value::tensor(encode(&Col::F32(out), dt, x.shape.clone())?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximations_are_close_to_the_functions() {
        for x in [-3.0f32, -0.5, 0.0, 0.25, 1.0, 2.5, 10.0] {
            assert!(
                (fast_exp(x) - x.exp()).abs() <= 1e-6 * x.exp().max(1.0),
                "exp {x}"
            );
            assert!((fast_tanh(x) - x.tanh()).abs() < 1e-6, "tanh {x}");
        }
        // erf(0.5) and erf(-1.5), from tables.
        assert!((fast_erf(0.5, DataType::FLOAT32) - 0.520_499_9).abs() < 1e-6);
        assert!((fast_erf(-1.5, DataType::FLOAT32) + 0.966_105_2).abs() < 1e-6);
        // Below the clamp, the result is the clamp's.
        assert_eq!(fast_exp(-100.0), fast_exp(-88.376_262_664_794_9));
    }
}
