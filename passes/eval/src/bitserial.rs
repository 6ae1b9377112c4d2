//! Bit-serial operators: `nn.bitpack` (TOPI's `nn/bitserial_util.py`
//! `bitpack`), `nn.bitserial_dense` (the x86 strategy's
//! `topi.x86.bitserial_dense`, whose compute is the generic one with the
//! weight tiled by rows) and `nn.bitserial_conv2d` (the x86 strategy's
//! `topi.x86.bitserial_conv2d_nchw` / `_nhwc`: batch 1, the data packed
//! along its channels, the kernel OIHW or HWIO, or HWIO already packed).
//!
//! The x86 convolutions pad the packed data only when both the top and the
//! right padding (NCHW) or both the bottom and the right padding (NHWC) are
//! non-zero, and otherwise read it unpadded with a padded extent, outside
//! the data: such calls are not folded. Their unipolar NCHW form casts both
//! words to `out_dtype` before the first popcount (only the low
//! `out_dtype` bits count) and, for the second, ANDs the cast data with the
//! un-cast complemented kernel word in TVM's promoted integer type; this
//! kernel does the same.
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
        "nn.bitserial_conv2d" => bitserial_conv2d,
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
    if !shape[pack_axis].is_multiple_of(w) {
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

/// The bits of a `width`-bit word.
fn word_mask(width: u32) -> u64 {
    if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// The bits of `v` in a `bits`-wide integer type (two's complement).
fn low_bits(v: i128, bits: u32) -> u128 {
    (v as u128) & ((1u128 << bits) - 1)
}

/// TVM's type for `a & b` of an `a`-typed and a `b`-typed integer
/// (`BinaryOpMatchTypes`): the wider of the two, signed when they differ
/// in signedness; values are extended by their own type's signedness.
fn and_promoted(a: i128, at: DataType, b: i128, bt: DataType) -> (u128, u32) {
    let bits = u32::from(at.bits.max(bt.bits));
    let extend = |v: i128, t: DataType| low_bits(wrap(t, v), bits);
    (extend(a, at) & extend(b, bt), bits)
}

/// One term of TOPI's x86 NCHW unipolar convolution (see the module doc).
fn nchw_unipolar_term(d: u64, k: u64, width: u32, shift: u32, out: DataType) -> i128 {
    let pack = DataType::uint(width as u8);
    let ob = u32::from(out.bits);
    let a = wrap(out, i128::from(d));
    let b = wrap(out, i128::from(k));
    let ones = i128::from((low_bits(a, ob) & low_bits(b, ob)).count_ones());
    let not_k = i128::from(!k & word_mask(width));
    let (masked, _) = and_promoted(a, out, not_k, pack);
    let zeros = wrap(out, i128::from(masked.count_ones()));
    wrap(out, wrap(out, ones - zeros) << shift)
}

/// TOPI's `get_pad_tuple` for the x86 computes: two values pad both sides
/// equally, four are `(top, left, bottom, right)`.
fn pad_tuple(call: &CallInfo) -> EvalResult<[usize; 4]> {
    let p = call.ints("padding")?.unwrap_or_else(|| vec![0, 0]);
    if p.iter().any(|&x| x < 0) {
        return unsupported(format!("{}: negative padding", call.op));
    }
    let p: Vec<usize> = p.iter().map(|&x| x as usize).collect();
    match *p.as_slice() {
        [h, w] => Ok([h, w, h, w]),
        [t, l, b, r] => Ok([t, l, b, r]),
        _ => unsupported(format!("{}: padding of 2 or 4 values expected", call.op)),
    }
}

/// `out[oh][ow][co] = Σ_{kh, kw, ci, b1, b2} term(data word, kernel word)
/// << (b1 + b2)` over the zero-padded packed data.
fn bitserial_conv2d(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let kernel = arg_tensor(args, 1, call)?;
    let op = call.op;
    let width = word_bits(call.dtype("pack_dtype")?, op)?;
    let out = out_type(call, data.dtype)?;
    let unipolar = call.bool_or("unipolar", true);
    let nhwc = match call.str("data_layout").unwrap_or("NCHW") {
        "NCHW" => false,
        "NHWC" => true,
        other => return unsupported(format!("{op}: Data layout {other} not supported.")),
    };
    if data.ndim() != 4 || data.shape[0] != 1 {
        return unsupported(format!(
            "{op}: spatial pack convolution only support batch size=1"
        ));
    }
    let in_bits = call.int_or("activation_bits", 1).clamp(0, 9) as usize;
    let weight_bits = call.int_or("weight_bits", 1).clamp(0, 9) as usize;
    let dims = |t: &TensorData| t.shape.iter().map(|&d| d as usize).collect::<Vec<_>>();
    let values = integers(data, op)?;
    // Both packed operands as `[h][w][ci][bit]` words for the data and
    // `[co][kh][kw][ci][bit]` for the kernel.
    let (h, w, ci, ib, dwords) = if nhwc {
        let p = bitpack(&values, &dims(data), in_bits, 3, 4, width, op)?;
        (p.shape[1], p.shape[2], p.shape[3], p.shape[4], p.words)
    } else {
        // [IB, 1, CI, H, W] → [H][W][CI][IB].
        let p = bitpack(&values, &dims(data), in_bits, 1, 0, width, op)?;
        let (ib, ci, h, w) = (p.shape[0], p.shape[2], p.shape[3], p.shape[4]);
        let mut words = vec![0u64; p.words.len()];
        for b in 0..ib {
            for c in 0..ci {
                for y in 0..h {
                    for x in 0..w {
                        words[((y * w + x) * ci + c) * ib + b] =
                            p.words[((b * ci + c) * h + y) * w + x];
                    }
                }
            }
        }
        (h, w, ci, ib, words)
    };
    let (co, kh, kw, kb, kwords) = match (nhwc, kernel.ndim()) {
        (false, 4) => {
            // [KB, CO, CI, KH, KW] → [CO][KH][KW][CI][KB].
            let p = bitpack(
                &integers(kernel, op)?,
                &dims(kernel),
                weight_bits,
                1,
                0,
                width,
                op,
            )?;
            let (kb, co, kci, kh, kw) =
                (p.shape[0], p.shape[1], p.shape[2], p.shape[3], p.shape[4]);
            if kci != ci {
                return unsupported(format!(
                    "{op}: the kernel's channels differ from the data's"
                ));
            }
            let mut words = vec![0u64; p.words.len()];
            for b in 0..kb {
                for o in 0..co {
                    for c in 0..ci {
                        for y in 0..kh {
                            for x in 0..kw {
                                words[(((o * kh + y) * kw + x) * ci + c) * kb + b] =
                                    p.words[(((b * co + o) * ci + c) * kh + y) * kw + x];
                            }
                        }
                    }
                }
            }
            (co, kh, kw, kb, words)
        }
        (true, 4 | 5) => {
            // [KH, KW, CI, CO, KB] → [CO][KH][KW][CI][KB].
            let p = if kernel.ndim() == 4 {
                bitpack(
                    &integers(kernel, op)?,
                    &dims(kernel),
                    weight_bits,
                    2,
                    4,
                    width,
                    op,
                )?
            } else {
                Packed {
                    shape: dims(kernel),
                    words: integers(kernel, op)?
                        .into_iter()
                        .map(|w| w as u64)
                        .collect(),
                }
            };
            let (kh, kw, kci, co, kb) =
                (p.shape[0], p.shape[1], p.shape[2], p.shape[3], p.shape[4]);
            if kci != ci {
                return unsupported(format!(
                    "{op}: the kernel's channels differ from the data's"
                ));
            }
            let mut words = vec![0u64; p.words.len()];
            for y in 0..kh {
                for x in 0..kw {
                    for c in 0..ci {
                        for o in 0..co {
                            for b in 0..kb {
                                words[(((o * kh + y) * kw + x) * ci + c) * kb + b] =
                                    p.words[(((y * kw + x) * ci + c) * co + o) * kb + b];
                            }
                        }
                    }
                }
            }
            (co, kh, kw, kb, words)
        }
        _ => {
            return unsupported(format!(
                "{op}: an OIHW (NCHW) or HWIO (NHWC) kernel expected"
            ))
        }
    };
    let [top, left, bottom, right] = pad_tuple(call)?;
    let padded = if nhwc {
        bottom != 0 && right != 0
    } else {
        top != 0 && right != 0
    };
    if !padded && (top, left, bottom, right) != (0, 0, 0, 0) {
        return unsupported(format!(
            "{op}: TVM's x86 compute skips this padding and reads outside the data"
        ));
    }
    let strides = call.ints("strides")?.unwrap_or_else(|| vec![1, 1]);
    let (sh, sw) = match strides.as_slice() {
        &[a, b] if a > 0 && b > 0 => (a as usize, b as usize),
        _ => return unsupported(format!("{op}: two positive strides expected")),
    };
    let (ph, pw) = (h + top + bottom, w + left + right);
    if ph < kh || pw < kw {
        return unsupported(format!("{op}: the kernel is larger than the padded data"));
    }
    let (oh, ow) = ((ph - kh) / sh + 1, (pw - kw) / sw + 1);
    let shape: Vec<i64> = if nhwc {
        vec![1, oh as i64, ow as i64, co as i64]
    } else {
        vec![1, co as i64, oh as i64, ow as i64]
    };
    call.check_size(&shape)?;
    let mut result = vec![0i128; oh * ow * co];
    for o in 0..co {
        for y in 0..oh {
            for x in 0..ow {
                let mut acc: i128 = 0;
                for dy in 0..kh {
                    for dx in 0..kw {
                        let (iy, ix) = (y * sh + dy, x * sw + dx);
                        if iy < top || iy >= top + h || ix < left || ix >= left + w {
                            continue; // a zero word contributes nothing
                        }
                        let (iy, ix) = (iy - top, ix - left);
                        for c in 0..ci {
                            for b1 in 0..ib {
                                let d = dwords[((iy * w + ix) * ci + c) * ib + b1];
                                for b2 in 0..kb {
                                    let k = kwords[(((o * kh + dy) * kw + dx) * ci + c) * kb + b2];
                                    let shift = (b1 + b2) as u32;
                                    let t = match (unipolar, nhwc) {
                                        (true, false) => {
                                            nchw_unipolar_term(d, k, width, shift, out)
                                        }
                                        (true, true) => {
                                            // Each popcount is cast before the difference.
                                            let mask = !k & word_mask(width);
                                            let ones = wrap(out, i128::from((d & k).count_ones()));
                                            let zeros =
                                                wrap(out, i128::from((d & mask).count_ones()));
                                            wrap(out, wrap(out, ones - zeros) << shift)
                                        }
                                        (false, _) => term(d, k, width, false, shift, out),
                                    };
                                    acc = wrap(out, acc + t);
                                }
                            }
                        }
                    }
                }
                let at = if nhwc {
                    (y * ow + x) * co + o
                } else {
                    (o * oh + y) * ow + x
                };
                result[at] = acc;
            }
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

    /// TVM's tests/python/topi/python/test_topi_bitserial_conv2d.py: with
    /// `uint32` words and an `int32` result, both x86 layouts give the
    /// convolution of the activations with the weights (unipolar: with
    /// `1 → 1, 0 → −1`), zero padding contributing nothing; the reference
    /// here is the same direct window sum the test takes from NumPy.
    #[test]
    fn bitserial_conv2d_is_the_integer_convolution() {
        let (c, h, w, o, k) = (32usize, 3usize, 4usize, 2usize, 3usize);
        let act: Vec<i64> = (0..c * h * w)
            .map(|i| ((i * 5 + i / 7) % 4) as i64)
            .collect();
        let wt: Vec<i64> = (0..o * c * k * k)
            .map(|i| ((i * 3 + i / 5) % 2) as i64)
            .collect();
        for nhwc in [false, true] {
            for unipolar in [true, false] {
                let (data, kernel, dshape, kshape) = if nhwc {
                    let d: Vec<i64> = (0..h * w * c)
                        .map(|i| act[(i % c * h + i / (w * c)) * w + i / c % w])
                        .collect();
                    // HWIO
                    let kk: Vec<i64> = (0..k * k * c * o)
                        .map(|i| {
                            let (y, x, ch, oo) =
                                (i / (k * c * o), i / (c * o) % k, i / o % c, i % o);
                            wt[((oo * c + ch) * k + y) * k + x]
                        })
                        .collect();
                    (
                        d,
                        kk,
                        vec![1, h as i64, w as i64, c as i64],
                        vec![k as i64, k as i64, c as i64, o as i64],
                    )
                } else {
                    (
                        act.clone(),
                        wt.clone(),
                        vec![1, c as i64, h as i64, w as i64],
                        vec![o as i64, c as i64, k as i64, k as i64],
                    )
                };
                let out = run(
                    "nn.bitserial_conv2d",
                    &[
                        (
                            "padding",
                            AttrValue::Array(vec![AttrValue::Int(1), AttrValue::Int(1)]),
                        ),
                        ("activation_bits", AttrValue::Int(2)),
                        ("weight_bits", AttrValue::Int(1)),
                        (
                            "data_layout",
                            AttrValue::Str(if nhwc { "NHWC" } else { "NCHW" }.into()),
                        ),
                        ("pack_dtype", dt("uint32")),
                        ("out_dtype", dt("int32")),
                        ("unipolar", AttrValue::Bool(unipolar)),
                    ],
                    &[
                        ints("int32", &dshape, &data),
                        ints("int32", &kshape, &kernel),
                    ],
                );
                let got = out.as_tensor().unwrap().to_i64_vec().unwrap();
                for oo in 0..o {
                    for y in 0..h {
                        for x in 0..w {
                            let mut want = 0;
                            for ch in 0..c {
                                for dy in 0..k {
                                    for dx in 0..k {
                                        let (iy, ix) = (y + dy, x + dx);
                                        if iy < 1 || iy > h || ix < 1 || ix > w {
                                            continue;
                                        }
                                        let a = act[(ch * h + iy - 1) * w + ix - 1];
                                        let b = wt[((oo * c + ch) * k + dy) * k + dx];
                                        want += a * if unipolar { 2 * b - 1 } else { b };
                                    }
                                }
                            }
                            let at = if nhwc {
                                (y * w + x) * o + oo
                            } else {
                                (oo * h + y) * w + x
                            };
                            assert_eq!(
                                got[at], want,
                                "nhwc={nhwc} unipolar={unipolar} {oo},{y},{x}"
                            );
                        }
                    }
                }
            }
        }
    }
}
