//! Bit-serial operators: `nn.bitpack` (TOPI's `nn/bitserial_util.py`
//! `bitpack`) and `nn.bitserial_dense` (the x86 strategy's
//! `topi.x86.bitserial_dense`, whose compute is the generic one with the
//! weight tiled by rows).
//!
//! Everything is integer arithmetic with TVM's types, so results are
//! bit-exact: words are of the `pack_type` (`uint8` … `uint64`), a
//! `popcount` is of the word's type, the unipolar difference of two
//! popcounts wraps in that unsigned type before its cast to `out_dtype`
//! (so a negative difference cast to a wider `out_dtype` is a large
//! positive number there, as in TVM), and shifts and sums wrap in
//! `out_dtype`.

use super::tensor::{decode, encode, for_each_index, numel, strides, wrap, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.bitpack" => bitpack_kernel,
        "nn.bitserial_dense" => bitserial_dense,
        _ => return None,
    })
}

/// The width of a packing word type, or why TOPI refuses it.
fn word_bits(pack: Option<DataType>, op: &str) -> EvalResult<u32> {
    match pack {
        Some(dt) if dt.is_uint() && matches!(dt.bits, 8 | 16 | 32 | 64) && dt.lanes == 1 => {
            Ok(u32::from(dt.bits))
        }
        _ => unsupported(format!(
            "{op}: the pack type must be one of uint8, uint16, uint32, uint64"
        )),
    }
}

fn integers(t: &TensorData, op: &str) -> EvalResult<Vec<i128>> {
    match decode(t)? {
        Col::Int(v) => Ok(v),
        _ => unsupported(format!("{op}: bit packing needs integer data")),
    }
}

/// A bit-packed tensor: `shape` with `bits` at `bit_axis` and the packed
/// axis divided by the word width; words hold their bits as `u64`.
struct Packed {
    shape: Vec<usize>,
    words: Vec<u64>,
}

/// TOPI's `bitpack`: along `pack_axis`, each run of `width` elements
/// becomes one word per bit plane `b < bits`, the run's first element in
/// the word's most significant bit. An element's bit `b` is that of its
/// two's complement value.
fn bitpack(
    values: &[i128],
    shape: &[usize],
    bits: usize,
    pack_axis: usize,
    bit_axis: usize,
    width: u32,
    op: &str,
) -> EvalResult<Packed> {
    let n = shape.len();
    if pack_axis >= n || bit_axis > n {
        return unsupported(format!("{op}: an axis outside the data's {n} dimensions"));
    }
    if !(1..=8).contains(&bits) {
        // TOPI takes each bit's mask from an 8-entry table.
        return unsupported(format!("{op}: bits must be from 1 to 8"));
    }
    let w = width as usize;
    if shape[pack_axis] % w != 0 {
        return unsupported(format!("{op}: Not a multiple of word size"));
    }
    let mut out_shape = shape.to_vec();
    out_shape[pack_axis] /= w;
    out_shape.insert(bit_axis, bits);
    let packed_axis = if bit_axis <= pack_axis {
        pack_axis + 1
    } else {
        pack_axis
    };
    let in_strides = strides(shape);
    let mut words = vec![0u64; numel(&out_shape)];
    for_each_index(&out_shape, |flat, index| {
        let b = index[bit_axis];
        let mut base = 0usize;
        let mut j = 0usize;
        for (i, &x) in index.iter().enumerate() {
            if i == bit_axis {
                continue;
            }
            let x = if i == packed_axis { x * w } else { x };
            base += x * in_strides[j];
            j += 1;
        }
        let mut word = 0u64;
        for k in 0..w {
            let element = values[base + k * in_strides[pack_axis]];
            word = (word << 1) | ((element >> b) & 1) as u64;
        }
        words[flat] = word;
    });
    Ok(Packed {
        shape: out_shape,
        words,
    })
}

fn axis(call: &CallInfo, name: &str, default: i64) -> EvalResult<usize> {
    let v = call.int_or(name, default);
    if v < 0 {
        // TOPI's packing loop never meets a negative axis and indexes past
        // the data's rank.
        return unsupported(format!("{}: a negative {name}", call.op));
    }
    Ok(v as usize)
}

fn bitpack_kernel(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let pack_type = call.dtype("pack_type")?;
    let width = word_bits(pack_type, call.op)?;
    let bits = call.int_or("bits", 1);
    if !(1..=8).contains(&bits) {
        return unsupported(format!("{}: bits must be from 1 to 8", call.op));
    }
    let shape: Vec<usize> = data.shape.iter().map(|&d| d as usize).collect();
    let mut out_shape: Vec<i64> = data.shape.clone();
    let (pack_axis, bit_axis) = (axis(call, "pack_axis", 1)?, axis(call, "bit_axis", -1)?);
    if pack_axis >= shape.len() || bit_axis > shape.len() {
        return unsupported(format!("{}: an axis outside the data", call.op));
    }
    out_shape[pack_axis] /= i64::from(width);
    out_shape.insert(bit_axis, bits);
    call.check_size(&out_shape)?;
    let packed = bitpack(
        &integers(data, call.op)?,
        &shape,
        bits as usize,
        pack_axis,
        bit_axis,
        width,
        call.op,
    )?;
    let words = packed.words.iter().map(|&w| i128::from(w)).collect();
    let dt = pack_type.expect("checked by word_bits");
    let shape = packed.shape.iter().map(|&d| d as i64).collect();
    Ok(Value::tensor(encode(&Col::Int(words), dt, shape)?))
}

/// One term of a bit-serial product: the popcount (difference) of two
/// words, cast to `out` and shifted by `shift`, as TOPI writes it.
fn term(d: u64, w: u64, width: u32, unipolar: bool, shift: u32, out: DataType) -> i128 {
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let ones = i128::from((w & d).count_ones());
    let count = if unipolar {
        let zeros = i128::from((!w & mask & d).count_ones());
        // The difference wraps in the unsigned word type.
        (ones - zeros).rem_euclid(1i128 << width)
    } else {
        ones
    };
    wrap(out, wrap(out, count) << shift)
}

fn out_type(call: &CallInfo, data: DataType) -> EvalResult<DataType> {
    let out = call.dtype("out_dtype")?.unwrap_or(data);
    if !(out.is_int() || out.is_uint()) || out.lanes != 1 || out.bits > 64 {
        return unsupported(format!("{}: an integer out_dtype expected", call.op));
    }
    Ok(out)
}

/// `out[i][j] = Σ_{wb, db, k} term(data[i][db][k], weight[j][wb][k]) <<
/// (db + wb)`, the weight bit-packed from `[X, K·width]` or already packed
/// `[X, WB, K]`.
fn bitserial_dense(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let weight = arg_tensor(args, 1, call)?;
    let op = call.op;
    let width = word_bits(call.dtype("pack_dtype")?, op)?;
    let out = out_type(call, data.dtype)?;
    let unipolar = call.bool_or("unipolar", true);
    if data.ndim() != 2 {
        return unsupported(format!("{op}: 2-D data expected"));
    }
    let dims = |t: &TensorData| t.shape.iter().map(|&d| d as usize).collect::<Vec<_>>();
    let dp = bitpack(
        &integers(data, op)?,
        &dims(data),
        call.int_or("data_bits", 1).clamp(0, 9) as usize,
        1,
        1,
        width,
        op,
    )?;
    let wp = match weight.ndim() {
        2 => bitpack(
            &integers(weight, op)?,
            &dims(weight),
            call.int_or("weight_bits", 1).clamp(0, 9) as usize,
            1,
            1,
            width,
            op,
        )?,
        3 => Packed {
            shape: dims(weight),
            words: integers(weight, op)?
                .into_iter()
                .map(|w| w as u64)
                .collect(),
        },
        _ => return unsupported(format!("{op}: a 2-D or packed 3-D weight expected")),
    };
    let (y, db, k) = (dp.shape[0], dp.shape[1], dp.shape[2]);
    let (x, wb, wk) = (wp.shape[0], wp.shape[1], wp.shape[2]);
    if wk != k {
        return unsupported(format!("{op}: the packed data and weight lengths differ"));
    }
    let shape = vec![y as i64, x as i64];
    call.check_size(&shape)?;
    let mut result = Vec::with_capacity(y * x);
    for i in 0..y {
        for j in 0..x {
            let mut acc: i128 = 0;
            for b2 in 0..wb {
                for b1 in 0..db {
                    for kk in 0..k {
                        let d = dp.words[(i * db + b1) * k + kk];
                        let w = wp.words[(j * wb + b2) * k + kk];
                        let shift = (b1 + b2) as u32;
                        acc = wrap(out, acc + term(d, w, width, unipolar, shift, out));
                    }
                }
            }
            result.push(acc);
        }
    }
    Ok(Value::tensor(encode(&Col::Int(result), out, shape)?))
}

#[cfg(test)]
mod tests {
    use crate::test_util::{ints, run};
    use relay_ir::dtype::DataType;
    use relay_ir::AttrValue;

    fn dt(s: &str) -> AttrValue {
        AttrValue::DataType(DataType::parse(s).unwrap())
    }

    /// After TVM's tests/python/topi/python/test_topi_bitserial_dense.py
    /// (whose reference packs with NumPy): 8 elements per uint8 word, the
    /// first in the most significant bit, one plane per bit.
    #[test]
    fn bitpack_puts_the_first_element_in_the_top_bit() {
        let data: Vec<i64> = vec![1, 0, 3, 2, 0, 1, 1, 3];
        let out = run(
            "nn.bitpack",
            &[
                ("bits", AttrValue::Int(2)),
                ("pack_axis", AttrValue::Int(1)),
                ("bit_axis", AttrValue::Int(1)),
                ("pack_type", dt("uint8")),
            ],
            &[ints("int32", &[1, 8], &data)],
        );
        let t = out.as_tensor().unwrap();
        assert_eq!(t.shape, vec![1, 2, 1]);
        // Bit 0 of 1,0,3,2,0,1,1,3 is 1,0,1,0,0,1,1,1; bit 1 is 0,0,1,1,0,0,0,1.
        assert_eq!(t.to_i64_vec().unwrap(), vec![0b1010_0111, 0b0011_0001]);
    }

    /// `test_topi_bitserial_dense.py`'s reference: unipolar is
    /// `data · (2·weight − 1)`, bipolar-free (`unipolar=false`) is
    /// `data · weight`, over unsigned activations of `data_bits` bits and
    /// one-bit weights.
    #[test]
    fn bitserial_dense_is_the_integer_product() {
        let data: Vec<i64> = (0..32).map(|i| (i * 5 + 1) % 4).collect();
        let weight: Vec<i64> = (0..64).map(|i| (i * 7 / 3) % 2).collect();
        let attrs = |unipolar: bool| {
            vec![
                ("units", AttrValue::Int(2)),
                ("data_bits", AttrValue::Int(2)),
                ("weight_bits", AttrValue::Int(1)),
                ("pack_dtype", dt("uint32")),
                ("out_dtype", dt("int16")),
                ("unipolar", AttrValue::Bool(unipolar)),
            ]
        };
        for unipolar in [true, false] {
            let out = run(
                "nn.bitserial_dense",
                &attrs(unipolar),
                &[
                    ints("int32", &[1, 32], &data),
                    ints("int32", &[2, 32], &weight),
                ],
            );
            let want: Vec<i64> = (0..2)
                .map(|j| {
                    (0..32)
                        .map(|k| {
                            let w = weight[j * 32 + k];
                            data[k] * if unipolar { 2 * w - 1 } else { w }
                        })
                        .sum()
                })
                .collect();
            assert_eq!(out.as_tensor().unwrap().to_i64_vec().unwrap(), want);
        }
    }

    /// With `uint8` words and an `int16` result, TVM's popcount difference
    /// wraps at 8 bits and is zero-extended: a word pair with one more
    /// zero-weight bit than one-weight bits gives 255, not −1.
    #[test]
    fn the_unipolar_difference_wraps_in_the_word_type() {
        let out = run(
            "nn.bitserial_dense",
            &[
                ("units", AttrValue::Int(1)),
                ("pack_dtype", dt("uint8")),
                ("out_dtype", dt("int16")),
            ],
            &[
                ints("int32", &[1, 8], &[1, 1, 1, 0, 0, 0, 0, 0]),
                ints("int32", &[1, 8], &[1, 0, 0, 0, 0, 0, 0, 0]),
            ],
        );
        assert_eq!(out.as_tensor().unwrap().to_i64_vec().unwrap(), vec![255]);
    }
}
