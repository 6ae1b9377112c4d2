//! The value hashes TVM v0.13's structural hash is built from: the hash of a
//! type key (libstdc++'s `std::hash<std::string>`, which TVM's type table
//! stores per registered type), TVM's platform-stable byte hash
//! (`String::StableHashBytes`) and its hash combiner
//! (`support::HashCombine`).

use crate::dtype::DataType;

/// libstdc++'s `std::hash<std::string>` on a 64-bit target: `_Hash_bytes`
/// (a MurmurHash2 64A variant) with the seed `0xc70f6907`. TVM hashes every
/// object's type key with it when the type is registered.
pub fn std_string_hash(bytes: &[u8]) -> u64 {
    const MUL: u64 = (0xc6a4_a793_u64 << 32) + 0x5bd1_e995;
    const SEED: u64 = 0xc70f_6907;
    let shift_mix = |v: u64| v ^ (v >> 47);
    let mut hash = SEED ^ (bytes.len() as u64).wrapping_mul(MUL);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("an 8-byte chunk"));
        let data = shift_mix(word.wrapping_mul(MUL)).wrapping_mul(MUL);
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        // The tail is loaded as a little-endian integer of its length.
        let data = tail
            .iter()
            .rev()
            .fold(0u64, |acc, &byte| (acc << 8) | u64::from(byte));
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    hash = shift_mix(hash).wrapping_mul(MUL);
    shift_mix(hash)
}

/// The hash of a type key, as `Object::GetTypeKeyHash` returns it.
pub fn type_key_hash(type_key: &str) -> u64 {
    std_string_hash(type_key.as_bytes())
}

/// TVM's `String::StableHashBytes`: little-endian 8-byte words (the tail
/// zero-padded) folded as `(h * 1099511628211 + word) mod (2^31 - 1)`, the
/// multiplication wrapping at 64 bits. Strings and tensor data hash with it.
pub fn stable_hash_bytes(bytes: &[u8]) -> u64 {
    const MULTIPLIER: u64 = 1_099_511_628_211;
    const MODULUS: u64 = 2_147_483_647;
    bytes.chunks(8).fold(0u64, |result, chunk| {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        result
            .wrapping_mul(MULTIPLIER)
            .wrapping_add(u64::from_le_bytes(word))
            % MODULUS
    })
}

/// TVM's `support::HashCombine(key, value)`.
pub fn hash_combine(key: u64, value: u64) -> u64 {
    key ^ (value
        .wrapping_add(0x9e37_79b9)
        .wrapping_add(key << 6)
        .wrapping_add(key >> 2))
}

/// A `DataType` as TVM hashes it: the bytes of its `DLDataType`
/// (code, bits, lanes) read as one little-endian 32-bit integer.
pub fn data_type_value(dtype: DataType) -> u64 {
    u64::from(dtype.code.to_u8()) | u64::from(dtype.bits) << 8 | u64::from(dtype.lanes) << 16
}

/// A C++ `int` as TVM hashes it: its 32 bits, zero-extended.
pub fn c_int_value(value: i64) -> u64 {
    u64::from(value as i32 as u32)
}

/// A `String` object: its type key's hash combined with its bytes' hash.
pub fn string_object_hash(text: &str) -> u64 {
    hash_combine(
        type_key_hash("runtime.String"),
        stable_hash_bytes(text.as_bytes()),
    )
}

/// An object all of whose children are plain values: TVM folds the
/// children into the type key's hash last child first.
pub fn fold_children(type_key: &str, children: &[u64]) -> u64 {
    children
        .iter()
        .rev()
        .fold(type_key_hash(type_key), |hash, &child| {
            hash_combine(hash, child)
        })
}
