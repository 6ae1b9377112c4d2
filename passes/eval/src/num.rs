//! Arithmetic written once for the three element classes of [`Col`]:
//! kernels that multiply, add, compare and divide (convolutions, pooling,
//! matrix products, normalisations) are generic over [`Num`], whose `fix`
//! rounds a `float16`/`bfloat16` result to its type after every operation
//! (as TVM's generated code does) or wraps an integer to its width.

use super::tensor::{round_f32, wrap, Col};
use relay_ir::dtype::DataType;
use std::ops::{Add, Mul, Sub};

/// An element type kernels compute with: `f32` (float16, bfloat16,
/// float32), `f64` or `i128` (every integer type, wrapped by `fix`).
pub(crate) trait Num:
    Copy
    + PartialOrd
    + Default
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
{
    /// Rounds or wraps a result to the data type `dt`.
    fn fix(self, dt: DataType) -> Self;
    /// Whether `fix` leaves every value of `dt` unchanged (float32 in
    /// `f32`, `f64`), so hot loops can skip it.
    fn fix_is_identity(dt: DataType) -> bool;
    /// An integer count converted to `dt` (TVM's `cast(dtype, n)`).
    fn from_count(n: i64, dt: DataType) -> Self;
    /// `self / d`: a float division, or C's truncating integer division
    /// (`None` for an integer division by zero).
    fn div(self, d: Self, dt: DataType) -> Option<Self>;
    /// TVM's `min_value(dt)`: the identity of `max`.
    fn lowest(dt: DataType) -> Self;
    /// The elements as `f32`s when `Self` is `f32` (kernels with code
    /// written for `f32` registers only, such as the float16 product).
    fn as_f32_slice(_: &[Self]) -> Option<&[f32]> {
        None
    }
    /// [`Num::as_f32_slice`], mutable.
    fn as_f32_slice_mut(_: &mut [Self]) -> Option<&mut [f32]> {
        None
    }
    /// `select(a > b, a, b)`.
    fn max_of(self, b: Self) -> Self {
        if self > b {
            self
        } else {
            b
        }
    }
}

impl Num for f32 {
    fn fix(self, dt: DataType) -> f32 {
        round_f32(dt, self)
    }
    fn fix_is_identity(dt: DataType) -> bool {
        !(dt.is_float16() || dt.is_bfloat16())
    }
    fn from_count(n: i64, dt: DataType) -> f32 {
        round_f32(dt, n as f32)
    }
    fn div(self, d: f32, dt: DataType) -> Option<f32> {
        Some(round_f32(dt, self / d))
    }
    fn lowest(dt: DataType) -> f32 {
        if dt.is_float16() {
            half::f16::MIN.to_f32()
        } else if dt.is_bfloat16() {
            half::bf16::MIN.to_f32()
        } else {
            f32::MIN
        }
    }
    fn as_f32_slice(s: &[f32]) -> Option<&[f32]> {
        Some(s)
    }
    fn as_f32_slice_mut(s: &mut [f32]) -> Option<&mut [f32]> {
        Some(s)
    }
}

impl Num for f64 {
    fn fix(self, _: DataType) -> f64 {
        self
    }
    fn fix_is_identity(_: DataType) -> bool {
        true
    }
    fn from_count(n: i64, _: DataType) -> f64 {
        n as f64
    }
    fn div(self, d: f64, _: DataType) -> Option<f64> {
        Some(self / d)
    }
    fn lowest(_: DataType) -> f64 {
        f64::MIN
    }
}

impl Num for i128 {
    fn fix(self, dt: DataType) -> i128 {
        wrap(dt, self)
    }
    fn fix_is_identity(_: DataType) -> bool {
        false
    }
    fn from_count(n: i64, dt: DataType) -> i128 {
        wrap(dt, i128::from(n))
    }
    fn div(self, d: i128, dt: DataType) -> Option<i128> {
        (d != 0).then(|| wrap(dt, self / d))
    }
    fn lowest(dt: DataType) -> i128 {
        int_range(dt).0
    }
}

/// The smallest and largest value of an integer type.
pub(crate) fn int_range(dt: DataType) -> (i128, i128) {
    if dt.is_bool() {
        (0, 1)
    } else if dt.is_int() {
        (-(1i128 << (dt.bits - 1)), (1i128 << (dt.bits - 1)) - 1)
    } else {
        (0, (1i128 << dt.bits) - 1)
    }
}

/// Runs a generic computation on one column, keeping its class:
/// `on_col!(col, v => expr)` where `expr` builds a `Vec<T>` from `v: Vec<T>`.
macro_rules! on_col {
    ($col:expr, $v:ident => $body:expr) => {
        match $col {
            $crate::tensor::Col::F32($v) => $crate::tensor::Col::F32($body),
            $crate::tensor::Col::F64($v) => $crate::tensor::Col::F64($body),
            $crate::tensor::Col::Int($v) => $crate::tensor::Col::Int($body),
        }
    };
}

/// The same over two columns of one class; `$mismatch` is returned
/// (`return $mismatch`) when their classes differ.
macro_rules! on_cols {
    ($a:expr, $b:expr, ($x:ident, $y:ident) => $body:expr, $mismatch:expr) => {
        match ($a, $b) {
            ($crate::tensor::Col::F32($x), $crate::tensor::Col::F32($y)) => {
                $crate::tensor::Col::F32($body)
            }
            ($crate::tensor::Col::F64($x), $crate::tensor::Col::F64($y)) => {
                $crate::tensor::Col::F64($body)
            }
            ($crate::tensor::Col::Int($x), $crate::tensor::Col::Int($y)) => {
                $crate::tensor::Col::Int($body)
            }
            _ => return $mismatch,
        }
    };
}

pub(crate) use {on_col, on_cols};

/// Both a tensor's elements and its data type, for kernels that cast their
/// inputs to an output type first (`out_dtype`).
pub(crate) fn decode_as(
    t: &relay_ir::metadata::TensorData,
    dt: DataType,
) -> super::EvalResult<Col> {
    let col = super::tensor::decode(t)?;
    if t.dtype == dt {
        Ok(col)
    } else {
        super::cast::convert(&col, dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fix_rounds_halves_and_wraps_integers() {
        assert_eq!(
            (1.0 + 2f32.powi(-11)).fix(DataType::float(16)),
            1.0,
            "a tie rounds to even"
        );
        assert_eq!(300i128.fix(DataType::parse("int8").unwrap()), 44);
        assert_eq!(
            7i128.div(-2, DataType::INT32),
            Some(-3),
            "C division truncates"
        );
        assert_eq!(1i128.div(0, DataType::INT32), None);
        assert_eq!(f32::lowest(DataType::float(16)), -65504.0);
        assert_eq!(
            i128::lowest(DataType::parse("uint8").unwrap()),
            0,
            "unsigned minimum"
        );
    }
}
