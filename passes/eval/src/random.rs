//! The `random.*` operators (TOPI's `topi/random/kernel.py`): TVM's
//! variant of Threefry-4×64 with a splittable key, and the uniform, normal
//! and multinomial samplers built on its bits. They are pure functions of
//! the key (TVM does not mark them stateful), so a call on a constant key
//! folds; the bits are exact, the samplers' float arithmetic follows TOPI's
//! order (one rounding per operation; `log`/`sin`/`sqrt` as the C library).
//!
//! A key is ten `uint64` words: key (0–3), path (4–5), counter (6–7) and
//! the path's next bit position (8–9). TVM's Threefry is not the reference
//! Threefry-4×64-20 of Random123: it adds the key schedule five times (before
//! each group of four rounds, none after the last) and permutes the words
//! after every round; each of the four counter words of block `i` is
//! incremented by `i`.
//!
//! Two quirks of TOPI's code are reproduced because they decide the bits:
//! its "path is full" test is written `gen[8] == 0 and gen[9] == 0` in
//! Python, which TVM's deferred `==` turns into `gen[8] == 0` alone; and when
//! `threefry_generate` runs out of counter with a full path it hashes a
//! two-word counter buffer as four words (reading past it), so that case is
//! not folded.

use super::tensor::{decode, encode, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "random.threefry_generate" => threefry_generate,
        "random.threefry_split" => threefry_split,
        "random.uniform" => uniform,
        "random.normal" => normal,
        "random.multinomial" => multinomial,
        _ => return None,
    })
}

/// Skein's rotation constants for four words.
const ROTATIONS: [[u32; 2]; 8] = [
    [14, 16],
    [52, 57],
    [23, 40],
    [5, 37],
    [25, 33],
    [46, 12],
    [58, 22],
    [32, 32],
];
/// Skein's word permutation for four words.
const PERMUTATION: [usize; 4] = [0, 3, 2, 1];
/// The constant of the key's fifth word (Skein's `C240`).
const KEY_PARITY: u64 = 0x1BD1_1BDA_A9FC_1A22;

type Key = [u64; 10];

/// TOPI's `_threefry`: `blocks` blocks of four words hashed from `key` and
/// `counter + i` (every counter word plus the block's index).
fn threefry(key: &[u64], counter: &[u64], blocks: u64) -> Vec<u64> {
    let mut full_key = [0u64; 5];
    full_key[..4].copy_from_slice(&key[..4]);
    full_key[4] = key[..4].iter().fold(KEY_PARITY, |acc, k| acc ^ k);
    let schedule = |s: usize, i: usize| {
        let word = full_key[(s + i) % 5];
        if i == 3 {
            word.wrapping_add(s as u64)
        } else {
            word
        }
    };
    let mut out = Vec::with_capacity(blocks as usize * 4);
    for block in 0..blocks {
        let mut x: [u64; 4] = std::array::from_fn(|j| counter[j].wrapping_add(block));
        for group in 0..5 {
            for (j, word) in x.iter_mut().enumerate() {
                *word = word.wrapping_add(schedule(group, j));
            }
            for round in 0..4 {
                let rotation = ROTATIONS[(group * 4 + round) % 8];
                for pair in 0..2 {
                    let (a, b) = (x[2 * pair], x[2 * pair + 1]);
                    let sum = a.wrapping_add(b);
                    x[2 * pair] = sum;
                    x[2 * pair + 1] = sum ^ b.rotate_left(rotation[pair]);
                }
                x = std::array::from_fn(|j| x[PERMUTATION[j]]);
            }
        }
        out.extend_from_slice(&x);
    }
    out
}

/// TOPI's `_shift_right` of the 128-bit path position `(a, b)`.
fn shift_right(a: u64, b: u64) -> (u64, u64) {
    match a {
        1 => (0, 1 << 63),
        0 => (0, b >> 1),
        _ => (a >> 1, 0),
    }
}

fn key_arg(args: &[Value], call: &CallInfo) -> EvalResult<Key> {
    let t = arg_tensor(args, 0, call)?;
    if t.dtype != DataType::parse("uint64").expect("uint64") || t.shape != [10] {
        return unsupported(format!("{}: the key must be uint64[10]", call.op));
    }
    let Col::Int(words) = decode(t)? else {
        return unsupported(format!("{}: the key must be integers", call.op));
    };
    Ok(std::array::from_fn(|i| words[i] as u64))
}

fn key_value(key: &[u64]) -> EvalResult<Value> {
    let words = Col::Int(key.iter().map(|&w| i128::from(w)).collect());
    Ok(Value::tensor(encode(
        &words,
        DataType::parse("uint64").expect("uint64"),
        vec![10],
    )?))
}

/// `out_shape` and its number of elements, checked against the call's limit.
fn out_shape(call: &CallInfo) -> EvalResult<(Vec<i64>, u64)> {
    let shape = call
        .ints("out_shape")?
        .ok_or_else(|| super::EvalError::Unsupported(format!("{}: no out_shape", call.op)))?;
    if shape.iter().any(|&d| d < 0) {
        return unsupported(format!("{}: a negative out_shape", call.op));
    }
    let n = call.check_size(&shape)? as u64;
    Ok((shape, n))
}

/// TOPI's `threefry_generate`: the new key and `len` random words.
fn generate(gen: &Key, len: u64, call: &CallInfo) -> EvalResult<(Key, Vec<u64>)> {
    let mut tmp = *gen;
    if gen[7] >= u64::MAX.wrapping_sub(len) {
        if gen[8] == 0 {
            return unsupported(format!(
                "{}: the key's counter and path are used up; TVM then hashes memory past its \
                 counter buffer",
                call.op
            ));
        }
        tmp[4] = gen[4] | gen[8];
        tmp[5] = gen[5] | gen[9];
        tmp[6] = 0;
        tmp[7] = 0;
        (tmp[8], tmp[9]) = shift_right(gen[8], gen[9]);
    }
    let mut bits = Vec::with_capacity(len as usize);
    if len >= 4 {
        bits = threefry(&tmp[..4], &tmp[4..8], len / 4);
    }
    let rest = len % 4;
    if rest != 0 {
        tmp[7] = tmp[7].wrapping_add(len / 4 * 4);
        let block = threefry(&tmp[..4], &tmp[4..8], 1);
        bits.extend_from_slice(&block[..rest as usize]);
    }
    let step = if rest != 0 { 4 } else { len };
    let new_key = [
        tmp[0],
        tmp[1],
        tmp[2],
        tmp[3],
        tmp[4],
        tmp[5],
        0,
        tmp[7].wrapping_add(step),
        tmp[8],
        tmp[9],
    ];
    Ok((new_key, bits))
}

fn threefry_generate(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let gen = key_arg(args, call)?;
    let (shape, len) = out_shape(call)?;
    let (new_key, bits) = generate(&gen, len, call)?;
    let bits = Col::Int(bits.into_iter().map(i128::from).collect());
    Ok(Value::Tuple(vec![
        key_value(&new_key)?,
        Value::tensor(encode(
            &bits,
            DataType::parse("uint64").expect("uint64"),
            shape,
        )?),
    ]))
}

fn threefry_split(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let gen = key_arg(args, call)?;
    let (left, right) = if gen[8] == 0 {
        let hashed = threefry(&gen[..4], &gen[4..8], 1);
        let mut left = [0u64; 10];
        left[..4].copy_from_slice(&hashed);
        left[8] = 1 << 62;
        let mut right = left;
        right[4] = 1 << 63;
        (left, right)
    } else {
        let (a, b) = shift_right(gen[8], gen[9]);
        let mut left = gen;
        (left[8], left[9]) = (a, b);
        let mut right = left;
        right[4] = gen[4] | gen[8];
        right[5] = gen[5] | gen[9];
        (left, right)
    };
    Ok(Value::Tuple(vec![key_value(&left)?, key_value(&right)?]))
}

/// A float type the samplers produce.
#[derive(Clone, Copy, PartialEq)]
enum Float {
    F32,
    F64,
}

fn float_dtype(call: &CallInfo) -> EvalResult<Float> {
    match call.dtype("out_dtype")? {
        Some(d) if d == DataType::FLOAT32 => Ok(Float::F32),
        Some(d) if d == DataType::float(64) => Ok(Float::F64),
        other => unsupported(format!(
            "{}: TOPI samples only float32 or float64, not {}",
            call.op,
            other.map_or("void".to_string(), |d| d.to_string())
        )),
    }
}

/// A scalar argument of the sampler's type, as `f64` (exact for both).
fn scalar_arg(args: &[Value], i: usize, ty: Float, call: &CallInfo) -> EvalResult<f64> {
    let t = arg_tensor(args, i, call)?;
    match (ty, decode(t)?) {
        (Float::F32, Col::F32(v)) if t.dtype == DataType::FLOAT32 && v.len() == 1 => {
            Ok(f64::from(v[0]))
        }
        (Float::F64, Col::F64(v)) if v.len() == 1 => Ok(v[0]),
        _ => unsupported(format!(
            "{}: argument {i} must be a scalar of the output type",
            call.op
        )),
    }
}

/// TOPI's standard uniform values in `[0, 1)`: the top fraction bits of
/// each word under the exponent of 1.0, minus 1. float32 takes the low 32
/// bits of the word first.
fn standard_uniform(bits: &[u64], ty: Float) -> Vec<f64> {
    bits.iter()
        .map(|&w| match ty {
            Float::F32 => {
                let low = w as u32;
                f64::from(f32::from_bits((low >> 9) | (127 << 23)) - 1.0)
            }
            Float::F64 => f64::from_bits((w >> 12) | (1023 << 52)) - 1.0,
        })
        .collect()
}

fn encode_floats(v: Vec<f64>, ty: Float, shape: Vec<i64>) -> EvalResult<Value> {
    let t = match ty {
        Float::F32 => encode(
            &Col::F32(v.into_iter().map(|x| x as f32).collect()),
            DataType::FLOAT32,
            shape,
        )?,
        Float::F64 => encode(&Col::F64(v), DataType::float(64), shape)?,
    };
    Ok(Value::tensor(t))
}

/// `a * b + c`, rounded after each operation to the type (a float32 value
/// held in `f64` is exact, and so is its rounding back).
fn mul_add(a: f64, b: f64, c: f64, ty: Float) -> f64 {
    match ty {
        Float::F32 => f64::from((a as f32) * (b as f32) + (c as f32)),
        Float::F64 => a * b + c,
    }
}

fn uniform(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let gen = key_arg(args, call)?;
    let ty = float_dtype(call)?;
    let (low, high) = (
        scalar_arg(args, 1, ty, call)?,
        scalar_arg(args, 2, ty, call)?,
    );
    let (shape, len) = out_shape(call)?;
    let (new_key, bits) = generate(&gen, len, call)?;
    let range = match ty {
        Float::F32 => f64::from(high as f32 - low as f32),
        Float::F64 => high - low,
    };
    let values = standard_uniform(&bits, ty)
        .into_iter()
        .map(|u| mul_add(u, range, low, ty))
        .collect();
    Ok(Value::Tuple(vec![
        key_value(&new_key)?,
        encode_floats(values, ty, shape)?,
    ]))
}

/// Box–Muller as TOPI writes it: uniform values of shape `[2, …]`,
/// `sqrt(-2·log(1 - u₁)) · sin(2π·u₂) · scale + mean`.
fn normal(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let gen = key_arg(args, call)?;
    let ty = float_dtype(call)?;
    let (mean, scale) = (
        scalar_arg(args, 1, ty, call)?,
        scalar_arg(args, 2, ty, call)?,
    );
    let (shape, len) = out_shape(call)?;
    call.check_size(&[2, len as i64])?;
    let (new_key, bits) = generate(&gen, 2 * len, call)?;
    let u = standard_uniform(&bits, ty);
    let (first, second) = u.split_at(len as usize);
    let values = first
        .iter()
        .zip(second)
        .map(|(&u1, &u2)| match ty {
            Float::F32 => {
                let (u1, u2) = (u1 as f32, u2 as f32);
                let radius = (-2.0f32 * (1.0f32 - u1).ln()).sqrt();
                let angle = (2.0 * std::f64::consts::PI) as f32 * u2;
                f64::from(radius * angle.sin() * scale as f32 + mean as f32)
            }
            Float::F64 => {
                let radius = (-2.0 * (1.0 - u1).ln()).sqrt();
                radius * (2.0 * std::f64::consts::PI * u2).sin() * scale + mean
            }
        })
        .collect();
    Ok(Value::Tuple(vec![
        key_value(&new_key)?,
        encode_floats(values, ty, shape)?,
    ]))
}

/// TOPI's `multinomial`: the probabilities cast to float32, negatives
/// clipped to 0, divided by their row's sum, accumulated; each sample is the
/// first index whose cumulative probability exceeds a uniform value (the
/// argmin of `cum - u` over positive differences, 1 elsewhere).
fn multinomial(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let gen = key_arg(args, call)?;
    let probs = arg_tensor(args, 1, call)?;
    if probs.ndim() == 0 {
        return unsupported("random.multinomial: the probabilities need an axis");
    }
    let samples = call.int_or("num_samples", 1);
    let k = *probs.shape.last().expect("an axis") as usize;
    let mut shape = probs.shape[..probs.ndim() - 1].to_vec();
    shape.push(samples);
    let total = call.check_size(&shape)? as u64;
    let p = float32_values(probs)?;
    let (new_key, bits) = generate(&gen, total, call)?;
    // `uniform(0, 1)`: `u · (1 - 0) + 0` is `u` exactly.
    let u: Vec<f32> = standard_uniform(&bits, Float::F32)
        .into_iter()
        .map(|x| x as f32)
        .collect();
    let rows = p.len().checked_div(k).unwrap_or(0);
    let s = samples.max(0) as usize;
    let mut out = Vec::with_capacity(rows * s);
    for row in 0..rows {
        let clipped: Vec<f32> = p[row * k..(row + 1) * k]
            .iter()
            .map(|&x| if x > 0.0 { x } else { 0.0 })
            .collect();
        let sum = clipped.iter().fold(0.0f32, |acc, &x| acc + x);
        let mut cumulative = Vec::with_capacity(k);
        let mut running = 0.0f32;
        for (i, &x) in clipped.iter().enumerate() {
            let q = x / sum;
            running = if i == 0 { q } else { running + q };
            cumulative.push(running);
        }
        for j in 0..s {
            let draw = u[row * s + j];
            let (mut best, mut best_val) = (-1i128, f32::MAX);
            for (i, &c) in cumulative.iter().enumerate() {
                let diff = c - draw;
                let v = if diff > 0.0 { diff } else { 1.0 };
                // The reducer keeps the accumulator when it is smaller, or
                // equal with a smaller index (NaN never compares less).
                let kept = best_val.partial_cmp(&v) == Some(std::cmp::Ordering::Less);
                let tie_kept = best_val == v && best < i as i128;
                if !(kept || tie_kept) {
                    best = i as i128;
                }
                if !kept {
                    best_val = v;
                }
            }
            out.push(best);
        }
    }
    Ok(Value::Tuple(vec![
        key_value(&new_key)?,
        Value::tensor(encode(&Col::Int(out), DataType::INT32, shape)?),
    ]))
}

/// The elements of `t` cast to float32 (TOPI's first step).
fn float32_values(t: &TensorData) -> EvalResult<Vec<f32>> {
    let col = super::cast::convert(&decode(t)?, DataType::FLOAT32)?;
    match col {
        Col::F32(v) => Ok(v),
        _ => unsupported("random.multinomial: the probabilities are not numbers"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{eval_call, EvalError};
    use relay_ir::{AttrValue, Attrs};

    fn key(words: [u64; 10]) -> Value {
        key_value(&words).unwrap()
    }

    fn words(v: &Value) -> Vec<u64> {
        match decode(v.as_tensor().unwrap()).unwrap() {
            Col::Int(w) => w.into_iter().map(|x| x as u64).collect(),
            _ => panic!("integers"),
        }
    }

    fn attrs(fields: Vec<(&str, AttrValue)>) -> Attrs {
        Attrs::new(
            "test",
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    fn shape(v: &[i64]) -> AttrValue {
        AttrValue::Array(v.iter().map(|&d| AttrValue::Int(d)).collect())
    }

    fn scalar(v: f32) -> Value {
        Value::tensor(encode(&Col::F32(vec![v]), DataType::FLOAT32, vec![]).unwrap())
    }

    const FRESH: [u64; 10] = [0, 0, 0, 0, 0, 0, 0, 0, 1 << 63, 0];

    #[test]
    fn a_full_path_rekeys_on_split_as_tvm_tests_only_word_8() {
        // gen[8] == 0 with gen[9] != 0: TOPI's `and` of deferred `==` checks
        // word 8 alone, so the key is hashed although the path has room.
        let gen = [1, 2, 3, 4, 5, 6, 7, 8, 0, 1 << 10];
        let out = eval_call(&CallInfo::new("random.threefry_split", None), &[key(gen)]).unwrap();
        let fields = out.as_tuple().unwrap();
        let (left, right) = (words(&fields[0]), words(&fields[1]));
        assert_eq!(left[..4], threefry(&gen[..4], &gen[4..8], 1)[..]);
        assert_eq!(left[4..], [0, 0, 0, 0, 1 << 62, 0]);
        assert_eq!(right[..4], left[..4]);
        assert_eq!(right[4..], [1 << 63, 0, 0, 0, 1 << 62, 0]);
    }

    #[test]
    fn an_exhausted_counter_extends_the_path_or_is_not_folded() {
        let a = attrs(vec![("out_shape", shape(&[4]))]);
        let call = CallInfo::new("random.threefry_generate", Some(&a));
        let mut gen = FRESH;
        gen[7] = u64::MAX - 2;
        let out = eval_call(&call, &[key(gen)]).unwrap();
        let new_key = words(&out.as_tuple().unwrap()[0]);
        assert_eq!(new_key[4..], [1 << 63, 0, 0, 4, 1 << 62, 0]);
        gen[8] = 0;
        assert!(matches!(
            eval_call(&call, &[key(gen)]),
            Err(EvalError::Unsupported(_))
        ));
    }

    #[test]
    fn normal_is_box_muller_over_the_uniform_values() {
        let n = attrs(vec![
            ("out_shape", shape(&[3])),
            ("out_dtype", AttrValue::DataType(DataType::FLOAT32)),
        ]);
        let u = attrs(vec![
            ("out_shape", shape(&[2, 3])),
            ("out_dtype", AttrValue::DataType(DataType::FLOAT32)),
        ]);
        let normal = eval_call(
            &CallInfo::new("random.normal", Some(&n)),
            &[key(FRESH), scalar(1.5), scalar(2.0)],
        )
        .unwrap();
        let uniform = eval_call(
            &CallInfo::new("random.uniform", Some(&u)),
            &[key(FRESH), scalar(0.0), scalar(1.0)],
        )
        .unwrap();
        let (nf, uf) = (normal.as_tuple().unwrap(), uniform.as_tuple().unwrap());
        assert_eq!(words(&nf[0]), words(&uf[0]), "the same new key");
        let Col::F32(u) = decode(uf[1].as_tensor().unwrap()).unwrap() else {
            panic!()
        };
        let Col::F32(got) = decode(nf[1].as_tensor().unwrap()).unwrap() else {
            panic!()
        };
        for i in 0..3 {
            let radius = (-2.0f32 * (1.0f32 - u[i]).ln()).sqrt();
            let angle = (2.0 * std::f64::consts::PI) as f32 * u[i + 3];
            assert_eq!(
                got[i].to_bits(),
                (radius * angle.sin() * 2.0 + 1.5).to_bits()
            );
        }
    }

    #[test]
    fn multinomial_picks_the_only_possible_categories() {
        let a = attrs(vec![("num_samples", AttrValue::Int(5))]);
        let probs = Value::tensor(
            encode(
                &Col::F32(vec![-1.0, 0.0, 2.0, 0.0, 3.0, 0.0]),
                DataType::FLOAT32,
                vec![2, 3],
            )
            .unwrap(),
        );
        let out = eval_call(
            &CallInfo::new("random.multinomial", Some(&a)),
            &[key(FRESH), probs],
        )
        .unwrap();
        let samples = out.as_tuple().unwrap()[1].as_tensor().unwrap().clone();
        assert_eq!(samples.shape, vec![2, 5]);
        assert_eq!(
            decode(&samples).unwrap(),
            Col::Int(vec![2, 2, 2, 2, 2, 1, 1, 1, 1, 1])
        );
    }
}
