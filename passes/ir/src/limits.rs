//! Bounds on sizes that come from user text: the one place that says how
//! many dimensions a tensor type may have, how many elements a shape may
//! describe, and how large a value the evaluator builds.
//!
//! A number in a document (`num_newaxis=99999999999`, a shape tensor of
//! type `Tensor[(99999999999), int64]`, `full(1f, shape=[99999999999])`)
//! must never become an allocation of that size: type inference would
//! abort, and with it the language server that opened the document. Every
//! place that sizes something from such a number checks it here first and
//! reports instead.

use crate::Dim;

/// The most dimensions a tensor type may have. TVM puts no bound on a Relay
/// type's rank, but nothing can run a tensor of more: NumPy stops at 64
/// dimensions, and no TVM kernel handles more than a few.
pub const MAX_RANK: usize = 64;

/// The most fields a tuple type built from a number in the text may have
/// (`split(x, indices_or_sections=N)` has N outputs).
pub const MAX_FIELDS: u64 = 1 << 16;

/// How many elements FoldConstant (and the evaluator behind it) builds at
/// most for one call's result when `relay.fold_constant.max_elements` is not
/// set: 16 Mi elements (64 MiB of float32). Folding exists to precompute
/// small values; a larger result is left as the call that computes it, in
/// the spirit of TVM, which does not fold what it should not materialise.
pub const DEFAULT_FOLD_MAX_ELEMENTS: u64 = 1 << 24;

/// Checks a rank computed from user input before anything of that length
/// is built.
pub fn check_rank(rank: u64) -> Result<(), String> {
    if rank > MAX_RANK as u64 {
        Err(format!(
            "a tensor of rank {rank} has more than the {MAX_RANK} dimensions a tensor type can have"
        ))
    } else {
        Ok(())
    }
}

/// Checks a number of tuple fields computed from user input before the
/// fields are built.
pub fn check_fields(count: u64) -> Result<(), String> {
    if count > MAX_FIELDS {
        Err(format!(
            "{count} outputs are more than the {MAX_FIELDS} fields a tuple type can have"
        ))
    } else {
        Ok(())
    }
}

/// The number of elements of a shape of known sizes: the product of the
/// dimensions, `None` when it does not fit in 64 bits. Negative sizes
/// count as 0 (such a tensor holds nothing).
pub fn element_count(dims: impl IntoIterator<Item = i64>) -> Option<u64> {
    dims.into_iter().try_fold(1u64, |acc, d| {
        acc.checked_mul(u64::try_from(d).unwrap_or(0))
    })
}

/// Checks that a value of shape `dims` has at most `limit` elements, the
/// check every allocation sized by a shape makes first; the count.
pub fn check_elements(dims: &[i64], limit: u64) -> Result<usize, String> {
    match element_count(dims.iter().copied()) {
        Some(n) if n <= limit => usize::try_from(n).map_err(|_| too_many(dims, limit)),
        _ => Err(too_many(dims, limit)),
    }
}

fn too_many(dims: &[i64], limit: u64) -> String {
    let shown: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!(
        "a value of shape ({}) has more than {limit} elements",
        shown.join(", ")
    )
}

/// Why a tensor type's shape describes no tensor that can exist: more than
/// [`MAX_RANK`] dimensions, or known sizes whose product overflows a 64-bit
/// element count (no memory holds such a tensor; TVM's own size arithmetic
/// is 64-bit). Unknown and symbolic sizes are not counted.
pub fn shape_error(shape: &[Dim]) -> Option<String> {
    if let Err(message) = check_rank(shape.len() as u64) {
        return Some(message);
    }
    let known = shape.iter().filter_map(|d| match d {
        Dim::Int { value, .. } => Some(value.unsigned_abs()),
        _ => None,
    });
    let mut count: u64 = 1;
    for d in known {
        match count.checked_mul(d) {
            Some(n) if n <= i64::MAX as u64 => count = n,
            _ if shape.iter().any(|d| matches!(d, Dim::Int { value: 0, .. })) => return None,
            _ => {
                return Some(format!(
                    "the shape ({}) has more elements than a tensor can hold (over 2^63)",
                    shape.iter().map(dim_text).collect::<Vec<_>>().join(", ")
                ))
            }
        }
    }
    None
}

fn dim_text(dim: &Dim) -> String {
    match dim {
        Dim::Int { value, .. } => value.to_string(),
        _ => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks() {
        assert!(check_rank(64).is_ok());
        assert!(check_rank(65).is_err());
        assert!(check_rank(99_999_999_999).is_err());
    }

    #[test]
    fn element_counts() {
        assert_eq!(element_count([2, 3, 4]), Some(24));
        assert_eq!(element_count([]), Some(1));
        assert_eq!(element_count([-1, 5]), Some(0));
        assert_eq!(element_count([99_999_999_999; 3]), None);
        assert_eq!(check_elements(&[4, 4], 16), Ok(16));
        assert!(check_elements(&[4, 5], 16).is_err());
        assert!(check_elements(&[99_999_999_999; 3], u64::MAX).is_err());
    }

    #[test]
    fn shapes() {
        assert_eq!(shape_error(&[Dim::int64(99_999_999_999)]), None);
        assert!(shape_error(&vec![Dim::int64(99_999_999_999); 3]).is_some());
        // An empty tensor holds nothing, however large its other sizes.
        let mut empty = vec![Dim::int64(99_999_999_999); 3];
        empty.push(Dim::int32(0));
        assert_eq!(shape_error(&empty), None);
        assert!(shape_error(&vec![Dim::int32(1); 65]).is_some());
        assert_eq!(shape_error(&[Dim::Any, Dim::int64(i64::MAX)]), None);
    }
}
