//! `erf`, `acosh`, `asinh` and `atanh` by the C library's functions, which
//! is what TVM's code calls for them on `llvm` (`DispatchPureExtern` with
//! the `f` suffix for float32: `erff`, `acoshf`, …). Rust's own `acosh`,
//! `asinh` and `atanh` use different formulas, and it has no `erf`, so
//! these go to libm directly. float32 and float64 only (TVM has no
//! float16 version either).

use super::tensor::{decode, encode, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};

mod ffi {
    extern "C" {
        pub fn erff(x: f32) -> f32;
        pub fn erf(x: f64) -> f64;
        pub fn acoshf(x: f32) -> f32;
        pub fn acosh(x: f64) -> f64;
        pub fn asinhf(x: f32) -> f32;
        pub fn asinh(x: f64) -> f64;
        pub fn atanhf(x: f32) -> f32;
        pub fn atanh(x: f64) -> f64;
    }
}

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "erf" | "acosh" | "asinh" | "atanh" => unary,
        _ => return None,
    })
}

/// The float32 and float64 functions of `op`.
fn functions(
    op: &str,
) -> (
    unsafe extern "C" fn(f32) -> f32,
    unsafe extern "C" fn(f64) -> f64,
) {
    match op {
        "erf" => (ffi::erff, ffi::erf),
        "acosh" => (ffi::acoshf, ffi::acosh),
        "asinh" => (ffi::asinhf, ffi::asinh),
        _ => (ffi::atanhf, ffi::atanh),
    }
}

fn unary(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let (f32_fn, f64_fn) = functions(call.op);
    let out = match decode(x)? {
        Col::F32(v) if x.dtype == relay_ir::dtype::DataType::FLOAT32 => Col::F32(
            v.into_iter()
                // SAFETY: the C library's math functions take and return
                // plain floats, touch no memory of ours and are defined for
                // every input (a domain error gives NaN and sets errno,
                // which nothing reads).
                .map(|e| unsafe { f32_fn(e) })
                .collect(),
        ),
        // SAFETY: as above.
        Col::F64(v) => Col::F64(v.into_iter().map(|e| unsafe { f64_fn(e) }).collect()),
        _ => return unsupported(format!("{} on {}", call.op, x.dtype)),
    };
    Ok(Value::tensor(encode(&out, x.dtype, x.shape.clone())?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_library_answers() {
        let (erf32, erf64) = functions("erf");
        // SAFETY: pure math functions, as in `unary`.
        let (a, b) = unsafe { (erf32(0.5), erf64(1.0)) };
        assert!((a - 0.520_499_9).abs() < 1e-6);
        assert!((b - 0.842_700_792_949_714_9).abs() < 1e-15);
        let (acosh32, _) = functions("acosh");
        // SAFETY: as above.
        assert!(unsafe { acosh32(0.5) }.is_nan());
    }
}
