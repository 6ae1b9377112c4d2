//! Seeded random inputs for a function's parameters, from their types.
//!
//! The generator is SplitMix64, so the same seed gives the same inputs on
//! every machine. The ranges keep typical programs away from overflow and
//! out-of-range indices while exercising signs:
//!
//! | dtype | values |
//! |---|---|
//! | `float16/32/64`, `bfloat16` | uniform in [-1, 1) |
//! | … a positive parameter (a variance, a `sqrt`/`rsqrt`/`log` operand) | uniform in [0.5, 1.5] |
//! | … an exponent of `power` | 2 |
//! | `int8`…`int64` | integers in [-8, 8] |
//! | `uint8`…`uint64` | integers in [0, 16) |
//! | `bool` | 0 or 1 |
//!
//! The two constrained rows are the [`Domain`]s that
//! [`crate::input_domains`] finds from how the function uses a parameter;
//! a domain reshapes each element's uniform draw, so every element still
//! consumes the same random numbers and a parameter without a domain gets
//! the same values as it would without the analysis.
//!
//! A `?` dimension (known only at run time) gets [`ANY_DIM_SIZE`]: every
//! `?` the same size, so parameters that must agree (`add(%x, %y)` of two
//! `(?, 3)` tensors) do; a symbolic size from the metadata has no value to
//! take and is an error (give that input as a file).

use crate::input_domains::Domain;
use crate::value::Value;
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;
use relay_ir::{Type, TypeKind};

/// SplitMix64 (Steele, Lea and Flood): small, fast and good enough to make
/// test inputs.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Moves the stream past `n` draws at once, as `n` calls of
    /// [`SplitMix64::next_u64`] would (the state only adds a constant per
    /// draw).
    pub fn skip(&mut self, n: u64) {
        self.0 = self
            .0
            .wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(n));
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A random tensor of `dtype` and `shape` whose float elements lie in
/// `domain` (see the module docs for ranges; an integer or boolean tensor
/// keeps its range whatever the domain).
pub fn random_tensor(
    rng: &mut SplitMix64,
    dtype: DataType,
    shape: &[i64],
    domain: Domain,
    max_elements: u64,
) -> Result<TensorData, String> {
    relay_ir::limits::check_elements(shape, max_elements)?;
    let mut t = TensorData::zeros(dtype, shape.to_vec()).map_err(|e| e.message)?;
    let n = t.len();
    if n == 0 {
        return Ok(t);
    }
    let b = dtype.bytes();
    if b == 0 || b > 8 || t.data.len() < n * b {
        return Err(format!("cannot write elements of type {dtype}"));
    }
    // Each element's raw little-endian bits, as `TensorData::set_i64` /
    // `set_f64` would store them (written here in one pass: a model's
    // weights are tens of millions of elements).
    let elements = t.data.chunks_exact_mut(b).take(n);
    let float = |u: f64| domain.from_unit(u);
    match (dtype.code, dtype.bits) {
        (TypeCode::UInt, 1) => fill(elements, rng, |rng| rng.below(2)),
        (TypeCode::Int, _) => fill(elements, rng, |rng| (rng.below(17) as i64 - 8) as u64),
        (TypeCode::UInt, _) => fill(elements, rng, |rng| rng.below(16)),
        (TypeCode::Float, 16) => fill(elements, rng, |rng| {
            u64::from(half::f16::from_f64(float(unit(rng))).to_bits())
        }),
        (TypeCode::Float, 32) => fill(elements, rng, |rng| {
            u64::from((float(unit(rng)) as f32).to_bits())
        }),
        (TypeCode::Float, 64) => fill(elements, rng, |rng| float(unit(rng)).to_bits()),
        (TypeCode::BFloat, 16) => fill(elements, rng, |rng| {
            u64::from(half::bf16::from_f64(float(unit(rng))).to_bits())
        }),
        (TypeCode::Float | TypeCode::BFloat, _) => {
            return Err(format!("cannot store numbers in elements of type {dtype}"))
        }
        _ => return Err(format!("cannot make random values of type {dtype}")),
    }
    Ok(t)
}

/// Writes the low bytes of `next`'s value into each element, in order.
fn fill<'a>(
    elements: impl Iterator<Item = &'a mut [u8]>,
    rng: &mut SplitMix64,
    mut next: impl FnMut(&mut SplitMix64) -> u64,
) {
    for dst in elements {
        let b = dst.len();
        dst.copy_from_slice(&next(rng).to_le_bytes()[..b]);
    }
}

/// A float uniform in [-1, 1).
fn unit(rng: &mut SplitMix64) -> f64 {
    rng.next_f64() * 2.0 - 1.0
}

/// The size a `?` dimension of a random input gets.
pub const ANY_DIM_SIZE: i64 = 4;

/// A random value of a parameter type in `domain`: tensors (a `?`
/// dimension of size [`ANY_DIM_SIZE`]) and tuples of them (each field in
/// `domain`).
pub fn random_value(
    rng: &mut SplitMix64,
    ty: &Type,
    domain: Domain,
    max_elements: u64,
) -> Result<Value, String> {
    match ty.kind() {
        TypeKind::Tensor(t) => {
            let shape = t
                .shape
                .iter()
                .map(|d| match d {
                    relay_ir::Dim::Any => Some(ANY_DIM_SIZE),
                    d => d.as_int(),
                })
                .collect::<Option<Vec<i64>>>()
                .ok_or_else(|| {
                    format!(
                        "the type {} has a dimension that is not a number; give this input as a file",
                        relay_ir::printer::readable::ty(ty)
                    )
                })?;
            random_tensor(rng, t.dtype, &shape, domain, max_elements).map(Value::tensor)
        }
        TypeKind::Tuple(fields) => fields
            .iter()
            .map(|f| random_value(rng, f, domain, max_elements))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::tuple),
        _ => Err(format!(
            "cannot make a random value of type {}",
            relay_ir::printer::readable::ty(ty)
        )),
    }
}

/// How many draws [`random_value`] takes from the stream for a value of
/// `ty` (one per element; a `?` dimension counts [`ANY_DIM_SIZE`]), or
/// `None` when it would make no value (a symbolic dimension, a type that
/// is neither a tensor nor a tuple).
pub fn draws_of(ty: &Type) -> Option<u64> {
    match ty.kind() {
        TypeKind::Tensor(t) => t.shape.iter().try_fold(1u64, |n, d| {
            let size = match d {
                relay_ir::Dim::Any => ANY_DIM_SIZE,
                d => d.as_int()?,
            };
            n.checked_mul(u64::try_from(size).ok()?)
        }),
        TypeKind::Tuple(fields) => fields
            .iter()
            .try_fold(0u64, |n, f| n.checked_add(draws_of(f)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The element-by-element definition: each value converted and stored
    /// by `TensorData`'s own setters.
    fn by_setters(seed: u64, dtype: DataType, shape: &[i64]) -> TensorData {
        let mut rng = SplitMix64::new(seed);
        let mut t = TensorData::zeros(dtype, shape.to_vec()).unwrap();
        for i in 0..t.len() {
            match (dtype.code, dtype.bits) {
                (TypeCode::UInt, 1) => t.set_i64(i, rng.below(2) as i64),
                (TypeCode::Int, _) => t.set_i64(i, rng.below(17) as i64 - 8),
                (TypeCode::UInt, _) => t.set_i64(i, rng.below(16) as i64),
                _ => t.set_f64(i, rng.next_f64() * 2.0 - 1.0),
            }
            .unwrap();
        }
        t
    }

    #[test]
    fn random_tensors_hold_the_values_the_setters_would_store() {
        for name in [
            "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
            "uint8", "uint16", "uint32", "uint64", "bool",
        ] {
            let dtype = DataType::parse(name).unwrap();
            let got = random_tensor(
                &mut SplitMix64::new(11),
                dtype,
                &[3, 7],
                Domain::Any,
                1 << 20,
            )
            .unwrap();
            assert_eq!(got, by_setters(11, dtype, &[3, 7]), "{name}");
        }
    }

    #[test]
    fn skipping_draws_lands_where_drawing_them_does() {
        let mut drawn = SplitMix64::new(7);
        for _ in 0..1000 {
            drawn.next_u64();
        }
        let mut skipped = SplitMix64::new(7);
        skipped.skip(1000);
        assert_eq!(drawn.next_u64(), skipped.next_u64());
    }

    #[test]
    fn ranges_follow_the_module_docs() {
        let mut rng = SplitMix64::new(3);
        let ints = random_tensor(&mut rng, DataType::INT32, &[1000], Domain::Any, 1 << 20).unwrap();
        let ints = ints.to_i64_vec().unwrap();
        assert!(ints.iter().all(|v| (-8..=8).contains(v)));
        assert!(ints.contains(&-8) && ints.contains(&8));
        let floats =
            random_tensor(&mut rng, DataType::FLOAT32, &[1000], Domain::Any, 1 << 20).unwrap();
        let floats = floats.to_f64_vec().unwrap();
        assert!(floats.iter().all(|v| (-1.0..1.0).contains(v)));
        assert!(floats.iter().any(|&v| v < -0.9) && floats.iter().any(|&v| v > 0.9));
    }

    #[test]
    fn a_domain_reshapes_each_draw_and_consumes_the_same_stream() {
        for name in ["float16", "bfloat16", "float32", "float64"] {
            let dtype = DataType::parse(name).unwrap();
            let uniform = by_setters(7, dtype, &[64]);
            for domain in [Domain::Positive, Domain::EvenInteger] {
                let mut rng = SplitMix64::new(7);
                let got = random_tensor(&mut rng, dtype, &[64], domain, 1 << 20).unwrap();
                // The next tensor starts where it would have without a domain.
                let mut plain = SplitMix64::new(7);
                random_tensor(&mut plain, dtype, &[64], Domain::Any, 1 << 20).unwrap();
                assert_eq!(rng.next_u64(), plain.next_u64(), "{name} {domain}");
                // Each element is the domain's image of the uniform value
                // (recovered exactly from a float64 draw; within the
                // narrower types' rounding otherwise).
                for i in 0..64 {
                    let u = uniform.get_f64(i).unwrap();
                    let v = got.get_f64(i).unwrap();
                    match domain {
                        Domain::Positive => {
                            assert!((0.5..=1.5).contains(&v), "{name}: {v}");
                            assert!((v - (1.0 + u / 2.0)).abs() <= 1e-2, "{name}: {u} -> {v}");
                        }
                        _ => assert_eq!(v, 2.0, "{name}: {u}"),
                    }
                }
            }
        }
    }

    #[test]
    fn a_domain_leaves_integer_tensors_alone() {
        let plain = random_tensor(
            &mut SplitMix64::new(2),
            DataType::INT32,
            &[50],
            Domain::Any,
            1 << 20,
        );
        let positive = random_tensor(
            &mut SplitMix64::new(2),
            DataType::INT32,
            &[50],
            Domain::Positive,
            1 << 20,
        );
        assert_eq!(plain.unwrap(), positive.unwrap());
    }

    #[test]
    fn an_empty_tensor_or_an_unsupported_type_is_handled() {
        let mut rng = SplitMix64::new(0);
        let empty =
            random_tensor(&mut rng, DataType::FLOAT32, &[0, 3], Domain::Any, 1 << 20).unwrap();
        assert_eq!(empty.len(), 0);
        let err =
            random_tensor(&mut rng, DataType::float(8), &[2], Domain::Any, 1 << 20).unwrap_err();
        assert!(err.contains("float8"), "{err}");
    }
}
