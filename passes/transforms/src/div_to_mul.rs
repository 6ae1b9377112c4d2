//! `DivToMul`: rewrites `divide(x, c)`, with `c` a floating-point constant,
//! into `multiply(x, 1/c)`, as TVM v0.13's `div_to_mul.cc` does.
//!
//! TVM's conditions, kept here:
//! - only the operator `divide`, and only when its second argument is a
//!   constant (a variable or a computed divisor is left alone);
//! - only `float16`, `float32` and `float64` constants: integer division
//!   truncates, so `1/c` would not be the same computation (bfloat16 and
//!   vector dtypes are left alone too);
//! - a divisor equal to zero (`+0` or `-0`) is left alone;
//! - the reciprocal is computed as TVM's C++ does: `1.0 / c` in double,
//!   then stored in the constant's dtype — through `float` first for
//!   `float16` (TVM converts with `__gnu_f2h_ieee`, which takes a `float`).
//!
//! TVM v0.13 reads and writes only element 0 of the divisor and leaves the
//! other elements of the new constant uninitialised, so its result for a
//! divisor with more than one element is not reproducible. Here every
//! element gets its reciprocal and a divisor with a zero anywhere is left
//! alone, which is what TVM's later versions compute; for the scalar and
//! one-element divisors TVM handles, both agree.
//!
//! Registered like TVM: a function pass at opt_level 0 requiring
//! `InferType` and `FoldConstant`.

use relay_ir::build::op_call;
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::rewrite::rewrite_function;
use relay_ir::{Expr, Function};
use relay_pass_manager::registry::PassSpec;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("DivToMul", 0)
        .required(&["InferType", "FoldConstant"])
        .doc("Replace division by a floating-point constant with multiplication by its reciprocal")
        .transform(|f, _m, _ctx| Ok(div_to_mul(&f)))
}

/// Rewrites every qualifying `divide` in `function` (nested functions too).
pub fn div_to_mul(function: &Function) -> Function {
    rewrite_function(function, |_pre, post| {
        let Some(call) = post.as_call() else {
            return post;
        };
        if call.callee.as_op().map(|op| op.name.as_str()) != Some("divide") {
            return post;
        }
        let (Some(dividend), Some(divisor)) = (call.args.first(), call.args.get(1)) else {
            return post;
        };
        let Some(reciprocal) = divisor.as_constant().and_then(|c| reciprocal(c)) else {
            return post;
        };
        op_call(
            "multiply",
            vec![dividend.clone(), Expr::constant(reciprocal, None)],
        )
    })
}

/// The element-wise reciprocal of `divisor` in its own dtype, rounded as
/// TVM's C++ rounds it; `None` when the pass must leave the division alone
/// (not a float16/32/64 scalar dtype, no elements, or a zero element).
pub fn reciprocal(divisor: &TensorData) -> Option<TensorData> {
    let dtype = divisor.dtype;
    if !dtype.is_float() || !dtype.is_scalar() || ![16, 32, 64].contains(&dtype.bits) {
        return None;
    }
    let values = divisor.to_f64_vec().ok()?;
    // `==` on floats: -0.0 matches too, as TVM's check does.
    if values.is_empty() || values.contains(&0.0) {
        return None;
    }
    let inverted: Vec<f64> = values.iter().map(|&v| inverse_as_tvm(dtype, v)).collect();
    TensorData::from_f64s(dtype, divisor.shape.clone(), &inverted).ok()
}

/// `1.0 / value` in double (C++ promotes `1. / float` to double), rounded to
/// `float` for the float16 and float32 dtypes; storing the result rounds it
/// once more to float16 from that exact `float`, as `__gnu_f2h_ieee` does.
fn inverse_as_tvm(dtype: DataType, value: f64) -> f64 {
    let inverse = 1.0 / value;
    if dtype.bits == 64 {
        inverse
    } else {
        f64::from(inverse as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(dtype: DataType, value: f64) -> TensorData {
        TensorData::from_f64s(dtype, vec![], &[value]).unwrap()
    }

    #[test]
    fn float16_reciprocal_rounds_through_float() {
        // 1/3 in float16 is 0x3555 (0.33325195…), reached from the float
        // 0.33333334 by round-to-nearest-even.
        let r = reciprocal(&scalar(DataType::float(16), 3.0)).unwrap();
        assert_eq!(r.data, 0x3555u16.to_le_bytes());
    }

    #[test]
    fn float32_reciprocal_is_rounded_from_double() {
        let r = reciprocal(&scalar(DataType::float(32), 3.0)).unwrap();
        assert_eq!(r.get_f64(0).unwrap(), f64::from((1.0f64 / 3.0) as f32));
    }

    #[test]
    fn zero_integer_and_bfloat_divisors_are_left_alone() {
        assert!(reciprocal(&scalar(DataType::float(32), 0.0)).is_none());
        assert!(reciprocal(&scalar(DataType::float(16), -0.0)).is_none());
        assert!(reciprocal(&scalar(DataType::int(32), 4.0)).is_none());
        assert!(reciprocal(&scalar(DataType::bfloat(16), 4.0)).is_none());
        let with_zero = TensorData::from_f64s(DataType::float(32), vec![2], &[2.0, 0.0]).unwrap();
        assert!(reciprocal(&with_zero).is_none());
    }
}
