//! Tensor blobs: the entries of a metadata section's `b64ndarrays` list.
//!
//! Each blob is the base64 text (standard alphabet, `=` padding, no line breaks: TVM's
//! `support::Base64OutStream`) of what `runtime::SaveDLTensor` writes, all little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `u64` `0xDD5E40F096B4A13F` |
//! | 8 | reserved `u64`, 0 |
//! | 4 + 4 | device: `i32` type, always 1 (CPU), and `i32` id, 0 |
//! | 4 | `i32` ndim |
//! | 1 + 1 + 2 | dtype: `u8` code, `u8` bits, `u16` lanes |
//! | 8 × ndim | `i64` shape |
//! | 8 | `i64` byte size = `(bits + 7) / 8` × product of the shape |
//! | byte size | the elements, little-endian, row-major |
//!
//! Reading follows `NDArray::Load`: a wrong magic, a device other than the CPU, or a byte
//! size that does not match the shape is an error; the reserved word and the device id are
//! ignored, and so are bytes after the data. Unlike TVM we also reject truncated data and
//! negative dimensions instead of reading past the end. Nothing here panics on bad input.
//!
//! **QUIRK (TVM):** the byte size ignores the lane count, so for a vector dtype (`lanes > 1`)
//! TVM saves only the first `(bits + 7) / 8 × elements` bytes of the data. [`TensorData`]
//! keeps exactly the saved bytes; the element accessors index those bytes one lane value at a
//! time. Values narrower than a byte (`bool`, `int4`, ...) take one byte each.
//!
//! Writing ([`TensorData::to_bytes`], [`TensorData::to_base64`]) produces TVM's canonical
//! header (reserved 0, device CPU 0), so a blob TVM wrote decodes and re-encodes to the
//! identical text.

use std::fmt;

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;

use crate::dtype::{DataType, TypeCode};

/// The first word of a saved tensor (`kTVMNDArrayMagic`).
pub const NDARRAY_MAGIC: u64 = 0xDD5E_40F0_96B4_A13F;

/// DLPack's device type for the CPU (`kDLCPU`).
pub const DEVICE_CPU: i32 = 1;

/// Bytes before the shape: magic, reserved, device, ndim and dtype.
const HEADER_BYTES: usize = 8 + 8 + 4 + 4 + 4 + 4;

/// TVM's base64: standard alphabet, padded output. Like TVM's decoder we do not insist
/// that the unused bits of the last character are zero.
pub(crate) const TVM_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_encode_padding(true)
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// Decodes TVM base64 text; the error offset is a byte offset in `text`.
pub(crate) fn decode_base64(text: &str) -> Result<Vec<u8>, (usize, String)> {
    TVM_BASE64.decode(text).map_err(|e| match e {
        base64::DecodeError::InvalidByte(at, b) => {
            (at, format!("invalid base64 character {:?}", char::from(b)))
        }
        base64::DecodeError::InvalidLength(n) => {
            (n.min(text.len()), "invalid base64 length".to_string())
        }
        base64::DecodeError::InvalidLastSymbol(at, _) => {
            (at, "invalid last base64 character".to_string())
        }
        base64::DecodeError::InvalidPadding => (text.len(), "invalid base64 padding".to_string()),
    })
}

/// Encodes bytes as TVM does.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    TVM_BASE64.encode(bytes)
}

/// A tensor: data type, shape and the raw little-endian bytes TVM saves for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorData {
    /// The element type.
    pub dtype: DataType,
    /// The dimensions (none for a scalar).
    pub shape: Vec<i64>,
    /// `(bits + 7) / 8 × product(shape)` bytes, little-endian, row-major.
    pub data: Vec<u8>,
}

/// Why a tensor blob could not be read or a value could not be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NdArrayError {
    /// Byte offset of the problem: in the base64 text for base64 errors, in the decoded
    /// binary otherwise (0 for errors that are not about a position).
    pub offset: usize,
    /// What went wrong.
    pub message: String,
}

impl NdArrayError {
    fn new(offset: usize, message: impl Into<String>) -> Self {
        NdArrayError {
            offset,
            message: message.into(),
        }
    }
}

impl fmt::Display for NdArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for NdArrayError {}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], NdArrayError> {
        match self.bytes.get(self.pos..self.pos + N) {
            Some(s) => {
                self.pos += N;
                let mut a = [0u8; N];
                a.copy_from_slice(s);
                Ok(a)
            }
            None => Err(NdArrayError::new(
                self.pos,
                format!("invalid DLTensor format: truncated {what}"),
            )),
        }
    }
}

/// Number of bytes TVM saves for `shape` with `dtype`, if it fits in memory.
pub fn saved_byte_size(dtype: DataType, shape: &[i64]) -> Option<usize> {
    let mut n: usize = dtype.bytes();
    for &d in shape {
        n = n.checked_mul(usize::try_from(d).ok()?)?;
    }
    // Keep the size representable as the i64 TVM writes.
    i64::try_from(n).ok()?;
    Some(n)
}

impl TensorData {
    /// A tensor from its parts; `data` must have [`saved_byte_size`] bytes.
    pub fn new(dtype: DataType, shape: Vec<i64>, data: Vec<u8>) -> Result<Self, NdArrayError> {
        let expected = saved_byte_size(dtype, &shape)
            .ok_or_else(|| NdArrayError::new(0, format!("invalid shape {shape:?}")))?;
        if data.len() != expected {
            return Err(NdArrayError::new(
                0,
                format!(
                    "{} bytes of data for a {dtype} tensor of shape {shape:?}, expected {expected}",
                    data.len()
                ),
            ));
        }
        Ok(TensorData { dtype, shape, data })
    }

    /// A tensor of zero bytes.
    pub fn zeros(dtype: DataType, shape: Vec<i64>) -> Result<Self, NdArrayError> {
        let n = saved_byte_size(dtype, &shape)
            .ok_or_else(|| NdArrayError::new(0, format!("invalid shape {shape:?}")))?;
        Ok(TensorData {
            dtype,
            shape,
            data: vec![0; n],
        })
    }

    /// A tensor from floating-point values, converted to `dtype` (rounded to float16,
    /// bfloat16 or float32, or cast `as` an integer type).
    pub fn from_f64s(
        dtype: DataType,
        shape: Vec<i64>,
        values: &[f64],
    ) -> Result<Self, NdArrayError> {
        let mut t = Self::zeros(dtype, shape)?;
        t.check_count(values.len())?;
        for (i, &v) in values.iter().enumerate() {
            t.set_f64(i, v)?;
        }
        Ok(t)
    }

    /// A tensor from integer values, converted to `dtype` (truncated to its width for
    /// integer types, converted to the nearest value for float types).
    pub fn from_i64s(
        dtype: DataType,
        shape: Vec<i64>,
        values: &[i64],
    ) -> Result<Self, NdArrayError> {
        let mut t = Self::zeros(dtype, shape)?;
        t.check_count(values.len())?;
        for (i, &v) in values.iter().enumerate() {
            t.set_i64(i, v)?;
        }
        Ok(t)
    }

    fn check_count(&self, n: usize) -> Result<(), NdArrayError> {
        if n != self.len() {
            return Err(NdArrayError::new(
                0,
                format!("{n} values for a tensor of {} elements", self.len()),
            ));
        }
        Ok(())
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Product of the shape (1 for a scalar).
    pub fn num_elements(&self) -> i64 {
        self.shape.iter().product()
    }

    /// Number of lane values stored: `data.len() / ((bits + 7) / 8)`. Equal to
    /// [`num_elements`](Self::num_elements) (see the module documentation about vectors).
    pub fn len(&self) -> usize {
        match self.dtype.bytes() {
            0 => 0,
            b => self.data.len() / b,
        }
    }

    /// No stored values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn raw(&self, i: usize) -> Result<u64, NdArrayError> {
        let b = self.dtype.bytes();
        if b == 0 || b > 8 {
            return Err(NdArrayError::new(
                0,
                format!("cannot read elements of type {}", self.dtype),
            ));
        }
        let start = i
            .checked_mul(b)
            .filter(|s| s.checked_add(b).is_some_and(|e| e <= self.data.len()))
            .ok_or_else(|| {
                NdArrayError::new(
                    0,
                    format!("element {i} is out of range ({} elements)", self.len()),
                )
            })?;
        let mut buf = [0u8; 8];
        buf[..b].copy_from_slice(&self.data[start..start + b]);
        Ok(u64::from_le_bytes(buf))
    }

    fn put_raw(&mut self, i: usize, v: u64) -> Result<(), NdArrayError> {
        let b = self.dtype.bytes();
        if b == 0 || b > 8 {
            return Err(NdArrayError::new(
                0,
                format!("cannot write elements of type {}", self.dtype),
            ));
        }
        let len = self.len();
        let start = i
            .checked_mul(b)
            .filter(|s| s.checked_add(b).is_some_and(|e| e <= self.data.len()))
            .ok_or_else(|| {
                NdArrayError::new(0, format!("element {i} is out of range ({len} elements)"))
            })?;
        self.data[start..start + b].copy_from_slice(&v.to_le_bytes()[..b]);
        Ok(())
    }

    /// Sign-extends a raw value of `bytes` bytes.
    fn signed(raw: u64, bytes: usize) -> i64 {
        let shift = 64 - 8 * bytes as u32;
        ((raw << shift) as i64) >> shift
    }

    /// Element `i` (in stored order) as a float. Works for `float16/32/64`, `bfloat16`, and
    /// every integer type including `bool` (narrow integers are read from their whole byte).
    pub fn get_f64(&self, i: usize) -> Result<f64, NdArrayError> {
        let raw = self.raw(i)?;
        let d = self.dtype;
        match (d.code, d.bits) {
            (TypeCode::Float, 16) => Ok(half::f16::from_bits(raw as u16).to_f64()),
            (TypeCode::Float, 32) => Ok(f64::from(f32::from_bits(raw as u32))),
            (TypeCode::Float, 64) => Ok(f64::from_bits(raw)),
            (TypeCode::BFloat, 16) => Ok(half::bf16::from_bits(raw as u16).to_f64()),
            (TypeCode::Int, _) => Ok(Self::signed(raw, d.bytes()) as f64),
            (TypeCode::UInt, _) => Ok(raw as f64),
            _ => Err(NdArrayError::new(
                0,
                format!("cannot read elements of type {d} as numbers"),
            )),
        }
    }

    /// Element `i` (in stored order) as an integer: signed and unsigned integer types and
    /// `bool` only. A `uint64` above `i64::MAX` is an error.
    pub fn get_i64(&self, i: usize) -> Result<i64, NdArrayError> {
        let raw = self.raw(i)?;
        let d = self.dtype;
        match d.code {
            TypeCode::Int => Ok(Self::signed(raw, d.bytes())),
            TypeCode::UInt => i64::try_from(raw).map_err(|_| {
                NdArrayError::new(0, format!("element {i} ({raw}) does not fit in an i64"))
            }),
            _ => Err(NdArrayError::new(
                0,
                format!("cannot read elements of type {d} as integers"),
            )),
        }
    }

    /// Sets element `i` from a float (see [`from_f64s`](Self::from_f64s)).
    pub fn set_f64(&mut self, i: usize, v: f64) -> Result<(), NdArrayError> {
        let d = self.dtype;
        let raw = match (d.code, d.bits) {
            (TypeCode::Float, 16) => u64::from(half::f16::from_f64(v).to_bits()),
            (TypeCode::Float, 32) => u64::from((v as f32).to_bits()),
            (TypeCode::Float, 64) => v.to_bits(),
            (TypeCode::BFloat, 16) => u64::from(half::bf16::from_f64(v).to_bits()),
            (TypeCode::Int, _) => v as i64 as u64,
            (TypeCode::UInt, _) => v as u64,
            _ => {
                return Err(NdArrayError::new(
                    0,
                    format!("cannot store numbers in elements of type {d}"),
                ))
            }
        };
        self.put_raw(i, raw)
    }

    /// Sets element `i` from an integer (see [`from_i64s`](Self::from_i64s)).
    pub fn set_i64(&mut self, i: usize, v: i64) -> Result<(), NdArrayError> {
        match self.dtype.code {
            TypeCode::Int | TypeCode::UInt => self.put_raw(i, v as u64),
            _ => self.set_f64(i, v as f64),
        }
    }

    /// All elements as floats.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>, NdArrayError> {
        (0..self.len()).map(|i| self.get_f64(i)).collect()
    }

    /// All elements as integers.
    pub fn to_i64_vec(&self) -> Result<Vec<i64>, NdArrayError> {
        (0..self.len()).map(|i| self.get_i64(i)).collect()
    }

    /// Reads the binary form written by `SaveDLTensor` (see the module documentation).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, NdArrayError> {
        let mut c = Cursor { bytes, pos: 0 };
        let magic = u64::from_le_bytes(c.take::<8>("header")?);
        if magic != NDARRAY_MAGIC {
            return Err(NdArrayError::new(
                0,
                format!("invalid DLTensor format: bad magic number {magic:#018x}"),
            ));
        }
        let _reserved = c.take::<8>("header")?;
        let device_at = c.pos;
        let device_type = i32::from_le_bytes(c.take::<4>("header")?);
        let _device_id = c.take::<4>("header")?;
        if device_type != DEVICE_CPU {
            return Err(NdArrayError::new(
                device_at,
                format!("invalid DLTensor device {device_type}: can only load CPU tensors"),
            ));
        }
        let ndim_at = c.pos;
        let ndim = i32::from_le_bytes(c.take::<4>("header")?);
        let [code, bits, l0, l1] = c.take::<4>("header")?;
        let dtype = DataType::from_dl(code, bits, u16::from_le_bytes([l0, l1]));
        let ndim = usize::try_from(ndim).map_err(|_| {
            NdArrayError::new(ndim_at, format!("invalid DLTensor format: ndim {ndim}"))
        })?;
        if ndim > (bytes.len() - HEADER_BYTES) / 8 {
            return Err(NdArrayError::new(
                ndim_at,
                format!("invalid DLTensor format: truncated shape of {ndim} dimensions"),
            ));
        }
        let mut shape = Vec::with_capacity(ndim);
        for _ in 0..ndim {
            let at = c.pos;
            let d = i64::from_le_bytes(c.take::<8>("shape")?);
            if d < 0 {
                return Err(NdArrayError::new(
                    at,
                    format!("invalid DLTensor format: negative dimension {d}"),
                ));
            }
            shape.push(d);
        }
        let size_at = c.pos;
        let size = i64::from_le_bytes(c.take::<8>("byte size")?);
        let expected = saved_byte_size(dtype, &shape);
        if expected.and_then(|e| i64::try_from(e).ok()) != Some(size) {
            return Err(NdArrayError::new(
                size_at,
                format!(
                    "invalid DLTensor format: byte size {size} does not match a {dtype} tensor \
                     of shape {shape:?}"
                ),
            ));
        }
        let size = expected.unwrap_or(0);
        let data = c
            .pos
            .checked_add(size)
            .and_then(|end| bytes.get(c.pos..end))
            .ok_or_else(|| {
                NdArrayError::new(
                    bytes.len(),
                    format!(
                        "invalid DLTensor format: truncated data ({} of {size} bytes)",
                        bytes.len() - c.pos
                    ),
                )
            })?;
        Ok(TensorData {
            dtype,
            shape,
            data: data.to_vec(),
        })
    }

    /// The binary form `SaveDLTensor` writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES + 8 * self.shape.len() + 8 + self.data.len());
        out.extend_from_slice(&NDARRAY_MAGIC.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&DEVICE_CPU.to_le_bytes());
        out.extend_from_slice(&0i32.to_le_bytes());
        out.extend_from_slice(&(self.shape.len() as i32).to_le_bytes());
        let (code, bits, lanes) = self.dtype.to_dl();
        out.push(code);
        out.push(bits);
        out.extend_from_slice(&lanes.to_le_bytes());
        for d in &self.shape {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&(self.data.len() as i64).to_le_bytes());
        out.extend_from_slice(&self.data);
        out
    }

    /// Reads a `b64ndarrays` entry. Leading whitespace is skipped, as TVM does; base64
    /// error offsets are offsets in `text`.
    pub fn from_base64(text: &str) -> Result<Self, NdArrayError> {
        let trimmed = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
        let skipped = text.len() - trimmed.len();
        let bytes = decode_base64(trimmed)
            .map_err(|(at, message)| NdArrayError::new(skipped + at, message))?;
        Self::from_bytes(&bytes)
    }

    /// The `b64ndarrays` entry TVM writes for this tensor.
    pub fn to_base64(&self) -> String {
        encode_base64(&self.to_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A uint8 scalar 0, from passes/FoldExplicitPadding/0031.before.relay.
    const U8_SCALAR: &str = "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAAAAAAEIAQABAAAAAAAAAAA=";

    #[test]
    fn decodes_a_scalar() {
        let t = TensorData::from_base64(U8_SCALAR).unwrap();
        assert_eq!(t.dtype, DataType::uint(8));
        assert!(t.shape.is_empty());
        assert_eq!(t.data, vec![0]);
        assert_eq!(t.get_i64(0).unwrap(), 0);
        assert_eq!(t.to_base64(), U8_SCALAR);
    }

    #[test]
    fn round_trips_every_kind() {
        let cases: Vec<(DataType, Vec<i64>, Vec<f64>)> = vec![
            (DataType::FLOAT32, vec![2, 2], vec![1.5, -2.0, 0.0, 3.25]),
            (DataType::float(16), vec![3], vec![1.0, -0.5, 65504.0]),
            (DataType::float(64), vec![1], vec![0.1]),
            (DataType::bfloat(16), vec![2], vec![1.0, -3.0]),
            (DataType::int(8), vec![3], vec![-128.0, 0.0, 127.0]),
            (DataType::uint(8), vec![2], vec![0.0, 255.0]),
            (DataType::int(16), vec![1], vec![-300.0]),
            (DataType::int(32), vec![2], vec![-5.0, 7.0]),
            (DataType::int(64), vec![1], vec![-1e15]),
            (DataType::uint(32), vec![1], vec![4e9]),
            (DataType::bool(), vec![3], vec![1.0, 0.0, 1.0]),
            (DataType::FLOAT32, vec![], vec![42.0]),
            (DataType::FLOAT32, vec![0, 3], vec![]),
        ];
        for (dtype, shape, values) in cases {
            let t = TensorData::from_f64s(dtype, shape.clone(), &values).unwrap();
            assert_eq!(t.to_f64_vec().unwrap(), values, "{dtype}");
            let b64 = t.to_base64();
            let back = TensorData::from_base64(&b64).unwrap();
            assert_eq!(back, t);
            assert_eq!(back.to_base64(), b64);
            assert_eq!(back.shape, shape);
        }
    }

    #[test]
    fn integer_access() {
        let t = TensorData::from_i64s(DataType::int(8), vec![2], &[-1, 5]).unwrap();
        assert_eq!(t.to_i64_vec().unwrap(), vec![-1, 5]);
        assert_eq!(t.data, vec![0xff, 5]);
        let t = TensorData::from_i64s(DataType::uint(64), vec![1], &[-1]).unwrap();
        assert!(t.get_i64(0).is_err());
        assert_eq!(t.get_f64(0).unwrap(), u64::MAX as f64);
        let f = TensorData::from_i64s(DataType::FLOAT32, vec![1], &[3]).unwrap();
        assert_eq!(f.get_f64(0).unwrap(), 3.0);
        assert!(f.get_i64(0).is_err());
        assert!(f.get_f64(1).is_err());
        let h = TensorData::zeros(DataType::handle(), vec![1]).unwrap();
        assert!(h.get_f64(0).is_err());
    }

    #[test]
    fn huge_indices_are_errors() {
        let t = TensorData::zeros(DataType::FLOAT32, vec![2]).unwrap();
        assert!(t.get_f64(usize::MAX).is_err());
        assert!(t.get_f64(usize::MAX / 4).is_err());
        let mut t = t;
        assert!(t.set_f64(usize::MAX / 4, 1.0).is_err());
    }

    #[test]
    fn vector_dtype_keeps_tvm_byte_count() {
        let dt = DataType::int(8).with_lanes(4);
        let t = TensorData::zeros(dt, vec![2]).unwrap();
        assert_eq!(t.data.len(), 2);
        let back = TensorData::from_bytes(&t.to_bytes()).unwrap();
        assert_eq!(back.dtype, dt);
    }

    #[test]
    fn bad_input_is_an_error() {
        let good = TensorData::from_f64s(DataType::FLOAT32, vec![2, 3], &[0.0; 6])
            .unwrap()
            .to_bytes();
        // Every truncation fails cleanly.
        for n in 0..good.len() {
            assert!(TensorData::from_bytes(&good[..n]).is_err(), "prefix {n}");
        }
        // Trailing bytes are ignored, as in TVM.
        let mut longer = good.clone();
        longer.push(7);
        assert!(TensorData::from_bytes(&longer).is_ok());
        // Bad magic, device, ndim, byte size.
        let mut b = good.clone();
        b[0] ^= 1;
        assert_eq!(TensorData::from_bytes(&b).unwrap_err().offset, 0);
        let mut b = good.clone();
        b[16] = 2;
        assert_eq!(TensorData::from_bytes(&b).unwrap_err().offset, 16);
        let mut b = good.clone();
        b[24..28].copy_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(TensorData::from_bytes(&b).unwrap_err().offset, 24);
        let mut b = good.clone();
        b[24..28].copy_from_slice(&i32::MAX.to_le_bytes());
        assert!(TensorData::from_bytes(&b).is_err());
        let mut b = good.clone();
        b[32..40].copy_from_slice(&(-2i64).to_le_bytes());
        assert_eq!(TensorData::from_bytes(&b).unwrap_err().offset, 32);
        let mut b = good.clone();
        b[48] += 1;
        assert_eq!(TensorData::from_bytes(&b).unwrap_err().offset, 48);
        // Huge shapes do not overflow.
        let mut b = good.clone();
        b[32..40].copy_from_slice(&i64::MAX.to_le_bytes());
        assert!(TensorData::from_bytes(&b).is_err());
        // Garbage base64.
        assert_eq!(TensorData::from_base64("P6G0!").unwrap_err().offset, 4);
        assert!(TensorData::from_base64("P6G").is_err());
        assert!(TensorData::from_base64("").is_err());
        assert!(TensorData::from_base64("AAAA").is_err());
        assert!(TensorData::new(DataType::FLOAT32, vec![2], vec![0; 7]).is_err());
        assert!(TensorData::new(DataType::FLOAT32, vec![-1], vec![]).is_err());
        assert!(TensorData::from_f64s(DataType::FLOAT32, vec![2], &[1.0]).is_err());
    }
}
