//! TVM's scalar/vector data types (`runtime::DataType`, a DLPack `DLDataType`).
//!
//! A data type is a type code, a bit width and a lane count. Parsing and display
//! follow TVM v0.13.0 exactly (`include/tvm/runtime/data_type.h`,
//! `String2DLDataType` and `operator<<(std::ostream&, DLDataType)`), quirks included:
//!
//! * `bool` is `uint1`; `uint1` (one lane) prints as `bool`, but `uint1x4` prints as `uint1x4`.
//! * `void` (and the empty string) is the handle type with zero bits and zero lanes; it prints
//!   as `void` with [`Display`](fmt::Display), while TVM's `DLDataType2String` (used for the
//!   JSON metadata section, see [`DataType::to_tvm_string`]) gives the empty string for any type
//!   with zero bits.
//! * A handle prints as `handle` whatever its bits and lanes; `handle` parses to 64 bits.
//! * A missing or zero bit count means 32 (`int` is `int32`, `int0` is `int32`); bit and lane
//!   counts are read like C's `strtoul` and truncated to `u8`/`u16`, so `int264` is `int8`.
//! * `int8x` (nothing after the `x`) is accepted with zero lanes, as TVM does.
//! * Custom types (`custom[NAME]bits`) need TVM's runtime registry to map a name to a code. We
//!   have no registry, so a custom type is written `custom[CODE]` with its numeric code
//!   (129–255), and only that numeric form parses.
//! * A type code TVM does not know (for example DLPack's complex, 5) cannot be printed by TVM (it
//!   aborts); we print it as `unknown_type_codeN` followed by the bits, which does not parse.

use std::fmt;
use std::str::FromStr;

/// The type code of a [`DataType`] (`DLDataTypeCode`, extended by TVM).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeCode {
    /// Signed integer (`kDLInt`, 0).
    Int,
    /// Unsigned integer (`kDLUInt`, 1); `uint1` is `bool`.
    UInt,
    /// IEEE floating point (`kDLFloat`, 2).
    Float,
    /// Opaque handle (`kTVMOpaqueHandle`, 3); with zero bits and lanes it is `void`.
    Handle,
    /// Brain floating point (`kDLBfloat`, 4).
    BFloat,
    /// NVIDIA float8 e4m3 (6).
    E4M3Float,
    /// NVIDIA float8 e5m2 (7).
    E5M2Float,
    /// A custom type registered with TVM's runtime (code 129 and up).
    Custom(u8),
    /// Any other code (5 = DLPack complex, 8–128): TVM cannot print these.
    Other(u8),
}

impl TypeCode {
    /// The first code TVM reserves for custom data types (`kCustomBegin`).
    pub const CUSTOM_BEGIN: u8 = 129;

    /// The numeric DLPack/TVM code.
    pub fn to_u8(self) -> u8 {
        match self {
            TypeCode::Int => 0,
            TypeCode::UInt => 1,
            TypeCode::Float => 2,
            TypeCode::Handle => 3,
            TypeCode::BFloat => 4,
            TypeCode::E4M3Float => 6,
            TypeCode::E5M2Float => 7,
            TypeCode::Custom(c) | TypeCode::Other(c) => c,
        }
    }

    /// The type code for a numeric DLPack/TVM code.
    pub fn from_u8(code: u8) -> TypeCode {
        match code {
            0 => TypeCode::Int,
            1 => TypeCode::UInt,
            2 => TypeCode::Float,
            3 => TypeCode::Handle,
            4 => TypeCode::BFloat,
            6 => TypeCode::E4M3Float,
            7 => TypeCode::E5M2Float,
            c if c >= Self::CUSTOM_BEGIN => TypeCode::Custom(c),
            c => TypeCode::Other(c),
        }
    }

    /// The name TVM prints for this code (`DLDataTypeCode2Str`), if it has one.
    pub fn name(self) -> Option<&'static str> {
        match self {
            TypeCode::Int => Some("int"),
            TypeCode::UInt => Some("uint"),
            TypeCode::Float => Some("float"),
            TypeCode::Handle => Some("handle"),
            TypeCode::BFloat => Some("bfloat"),
            TypeCode::E4M3Float => Some("e4m3_float"),
            TypeCode::E5M2Float => Some("e5m2_float"),
            TypeCode::Custom(_) | TypeCode::Other(_) => None,
        }
    }
}

/// A TVM data type: type code, bits per lane and number of lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DataType {
    /// The type code.
    pub code: TypeCode,
    /// Bits per lane (0 only for `void`).
    pub bits: u8,
    /// Number of lanes (1 for scalars, 0 only for `void`).
    pub lanes: u16,
}

/// Why a data type string did not parse; the message is TVM's (`unknown type ⟨s⟩`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataTypeParseError {
    /// The text that failed to parse.
    pub text: String,
}

impl fmt::Display for DataTypeParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown type {}", self.text)
    }
}

impl std::error::Error for DataTypeParseError {}

impl Default for DataType {
    /// TVM's default-constructed `DataType` is `void`.
    fn default() -> Self {
        DataType::void()
    }
}

impl DataType {
    /// A data type from its parts.
    pub const fn new(code: TypeCode, bits: u8, lanes: u16) -> DataType {
        DataType { code, bits, lanes }
    }
    /// `intN`.
    pub const fn int(bits: u8) -> DataType {
        DataType::new(TypeCode::Int, bits, 1)
    }
    /// `uintN`.
    pub const fn uint(bits: u8) -> DataType {
        DataType::new(TypeCode::UInt, bits, 1)
    }
    /// `floatN`.
    pub const fn float(bits: u8) -> DataType {
        DataType::new(TypeCode::Float, bits, 1)
    }
    /// `bfloatN` (TVM only uses `bfloat16`).
    pub const fn bfloat(bits: u8) -> DataType {
        DataType::new(TypeCode::BFloat, bits, 1)
    }
    /// `bool`, i.e. `uint1`.
    pub const fn bool() -> DataType {
        DataType::new(TypeCode::UInt, 1, 1)
    }
    /// `handle`: a 64-bit opaque handle.
    pub const fn handle() -> DataType {
        DataType::new(TypeCode::Handle, 64, 1)
    }
    /// `void`: the handle code with zero bits and zero lanes.
    pub const fn void() -> DataType {
        DataType::new(TypeCode::Handle, 0, 0)
    }
    /// `int32`.
    pub const INT32: DataType = DataType::int(32);
    /// `int64`.
    pub const INT64: DataType = DataType::int(64);
    /// `float32`.
    pub const FLOAT32: DataType = DataType::float(32);

    /// A data type from the three raw DLPack fields.
    pub fn from_dl(code: u8, bits: u8, lanes: u16) -> DataType {
        DataType::new(TypeCode::from_u8(code), bits, lanes)
    }
    /// The three raw DLPack fields `(code, bits, lanes)`.
    pub fn to_dl(self) -> (u8, u8, u16) {
        (self.code.to_u8(), self.bits, self.lanes)
    }

    /// The same type with another lane count.
    pub fn with_lanes(self, lanes: u16) -> DataType {
        DataType { lanes, ..self }
    }
    /// The same type with another bit width.
    pub fn with_bits(self, bits: u8) -> DataType {
        DataType { bits, ..self }
    }
    /// The scalar type of one lane.
    pub fn element_of(self) -> DataType {
        self.with_lanes(1)
    }

    /// Bytes to store one lane: `(bits + 7) / 8` (so `bool` takes one byte).
    pub fn bytes(self) -> usize {
        usize::from(self.bits).div_ceil(8)
    }
    /// One lane.
    pub fn is_scalar(self) -> bool {
        self.lanes == 1
    }
    /// More than one lane.
    pub fn is_vector(self) -> bool {
        self.lanes > 1
    }
    /// IEEE float code (`float16`, `float32`, ...; not `bfloat16`).
    pub fn is_float(self) -> bool {
        self.code == TypeCode::Float
    }
    /// `float16` (any lanes).
    pub fn is_float16(self) -> bool {
        self.is_float() && self.bits == 16
    }
    /// `bfloat16` (any lanes).
    pub fn is_bfloat16(self) -> bool {
        self.code == TypeCode::BFloat && self.bits == 16
    }
    /// Any 8-bit float (`float8`, `e4m3_float8`, `e5m2_float8`).
    pub fn is_float8(self) -> bool {
        matches!(
            self.code,
            TypeCode::Float | TypeCode::E4M3Float | TypeCode::E5M2Float
        ) && self.bits == 8
    }
    /// Signed integer code.
    pub fn is_int(self) -> bool {
        self.code == TypeCode::Int
    }
    /// Unsigned integer code (including `bool`).
    pub fn is_uint(self) -> bool {
        self.code == TypeCode::UInt
    }
    /// `uint1`, any lanes (TVM's `is_bool`).
    pub fn is_bool(self) -> bool {
        self.code == TypeCode::UInt && self.bits == 1
    }
    /// A handle that is not `void`.
    pub fn is_handle(self) -> bool {
        self.code == TypeCode::Handle && !self.is_void()
    }
    /// `void`: handle code, zero bits, zero lanes.
    pub fn is_void(self) -> bool {
        self.code == TypeCode::Handle && self.bits == 0 && self.lanes == 0
    }

    /// TVM's `DLDataType2String`, used in the JSON metadata: the empty string when `bits` is 0
    /// (so `void` is ""), the [`Display`](fmt::Display) text otherwise.
    pub fn to_tvm_string(self) -> String {
        if self.bits == 0 {
            String::new()
        } else {
            self.to_string()
        }
    }

    /// Parses a type the way TVM's `String2DLDataType` does (see the module documentation).
    pub fn parse(s: &str) -> Result<DataType, DataTypeParseError> {
        let err = || DataTypeParseError {
            text: s.to_string(),
        };
        if s.is_empty() || s == "void" {
            return Ok(DataType::void());
        }
        if s == "bool" {
            return Ok(DataType::bool());
        }
        let (code, default_bits, rest) = if let Some(r) = s.strip_prefix("int") {
            (TypeCode::Int, 32, r)
        } else if let Some(r) = s.strip_prefix("uint") {
            (TypeCode::UInt, 32, r)
        } else if let Some(r) = s.strip_prefix("float") {
            (TypeCode::Float, 32, r)
        } else if let Some(r) = s.strip_prefix("handle") {
            (TypeCode::Handle, 64, r)
        } else if let Some(r) = s.strip_prefix("bfloat") {
            (TypeCode::BFloat, 32, r)
        } else if let Some(r) = s.strip_prefix("e4m3_float") {
            (TypeCode::E4M3Float, 32, r)
        } else if let Some(r) = s.strip_prefix("e5m2_float") {
            (TypeCode::E5M2Float, 32, r)
        } else if let Some(r) = s.strip_prefix("custom") {
            let r = r.strip_prefix('[').ok_or_else(err)?;
            let close = r.find(']').ok_or_else(err)?;
            let code: u8 = r[..close].parse().map_err(|_| err())?;
            if code < TypeCode::CUSTOM_BEGIN {
                return Err(err());
            }
            (TypeCode::Custom(code), 32, &r[close + 1..])
        } else {
            return Err(err());
        };
        let rest = rest.as_bytes();
        let (bits_value, xdelim) = strtoul(rest, 0);
        let bits = match bits_value as u8 {
            0 => default_bits,
            b => b,
        };
        let mut lanes = 1u16;
        let mut end = xdelim;
        if rest.get(xdelim) == Some(&b'x') {
            let (lanes_value, e) = strtoul(rest, xdelim + 1);
            lanes = lanes_value as u16;
            end = e;
        }
        if end != rest.len() {
            return Err(err());
        }
        Ok(DataType::new(code, bits, lanes))
    }
}

/// C's `strtoul(s + start, &end, 10)` on a byte string without a terminating NUL: the value
/// (wrapped or saturated as C does) and the index just after the number, or `start` when there
/// are no digits.
fn strtoul(s: &[u8], start: usize) -> (u64, usize) {
    let mut i = start;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let mut negative = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        negative = s[i] == b'-';
        i += 1;
    }
    let digits_start = i;
    let mut value: u64 = 0;
    let mut overflow = false;
    while i < s.len() && s[i].is_ascii_digit() {
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(s[i] - b'0')))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == digits_start {
        return (0, start);
    }
    if overflow {
        (u64::MAX, i)
    } else if negative {
        (value.wrapping_neg(), i)
    } else {
        (value, i)
    }
}

impl FromStr for DataType {
    type Err = DataTypeParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DataType::parse(s)
    }
}

impl fmt::Display for DataType {
    /// TVM's `operator<<` for `DLDataType`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == DataType::bool() {
            return f.write_str("bool");
        }
        if self.is_void() {
            return f.write_str("void");
        }
        match self.code {
            TypeCode::Custom(c) => write!(f, "custom[{c}]")?,
            TypeCode::Other(c) => write!(f, "unknown_type_code{c}")?,
            code => f.write_str(code.name().unwrap_or_default())?,
        }
        if self.code == TypeCode::Handle {
            return Ok(());
        }
        write!(f, "{}", self.bits)?;
        if self.lanes != 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> DataType {
        DataType::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parse_common() {
        assert_eq!(p("float32"), DataType::float(32));
        assert_eq!(p("float16"), DataType::float(16));
        assert_eq!(p("int8x4"), DataType::int(8).with_lanes(4));
        assert_eq!(p("uint1x4"), DataType::bool().with_lanes(4));
        assert_eq!(p("bool"), DataType::uint(1));
        assert_eq!(p("bfloat16"), DataType::bfloat(16));
        assert_eq!(p("handle"), DataType::handle());
        assert_eq!(p("void"), DataType::void());
        assert_eq!(p(""), DataType::void());
        assert_eq!(p("int64"), DataType::INT64);
        assert_eq!(p("e4m3_float8"), DataType::new(TypeCode::E4M3Float, 8, 1));
        assert_eq!(
            p("custom[130]16"),
            DataType::new(TypeCode::Custom(130), 16, 1)
        );
    }

    #[test]
    fn parse_quirks() {
        assert_eq!(p("int"), DataType::int(32));
        assert_eq!(p("int0"), DataType::int(32));
        assert_eq!(p("uint"), DataType::uint(32));
        assert_eq!(p("handle32"), DataType::new(TypeCode::Handle, 32, 1));
        assert_eq!(p("int264"), DataType::int(8));
        assert_eq!(p("int8x"), DataType::int(8).with_lanes(0));
        assert_eq!(p("intx4"), DataType::int(32).with_lanes(4));
        assert_eq!(p("int +8"), DataType::int(8));
        assert_eq!(p("bfloat32"), DataType::bfloat(32));
    }

    #[test]
    fn parse_errors() {
        for s in [
            "boolx4",
            "float32 ",
            "int8y",
            "double",
            "Float32",
            "custom[abc]8",
            "custom[12]8",
            "custom[130",
            "int8x4x2",
        ] {
            let e = DataType::parse(s).unwrap_err();
            assert_eq!(e.to_string(), format!("unknown type {s}"));
        }
    }

    #[test]
    fn display() {
        for s in [
            "float32",
            "float16",
            "int8x4",
            "uint1x4",
            "bool",
            "bfloat16",
            "handle",
            "void",
            "int64",
            "uint8",
            "float64x2",
            "e5m2_float8",
            "custom[200]32",
        ] {
            assert_eq!(p(s).to_string(), s);
        }
        assert_eq!(DataType::new(TypeCode::Handle, 32, 4).to_string(), "handle");
        assert_eq!(DataType::uint(1).to_string(), "bool");
        assert_eq!(DataType::int(8).with_lanes(0).to_string(), "int8x0");
        assert_eq!(
            DataType::from_dl(5, 64, 1).to_string(),
            "unknown_type_code564"
        );
    }

    #[test]
    fn tvm_string() {
        assert_eq!(DataType::void().to_tvm_string(), "");
        assert_eq!(DataType::int(0).to_tvm_string(), "");
        assert_eq!(DataType::FLOAT32.to_tvm_string(), "float32");
        assert_eq!(DataType::int(0).to_string(), "int0");
    }

    #[test]
    fn helpers() {
        assert!(DataType::float(16).is_float());
        assert!(DataType::float(16).is_float16());
        assert!(!DataType::bfloat(16).is_float());
        assert!(DataType::bfloat(16).is_bfloat16());
        assert_eq!(DataType::bool().bytes(), 1);
        assert_eq!(DataType::int(4).bytes(), 1);
        assert_eq!(DataType::float(16).bytes(), 2);
        assert_eq!(DataType::FLOAT32.with_lanes(4).bytes(), 4);
        assert!(DataType::FLOAT32.is_scalar());
        assert!(DataType::FLOAT32.with_lanes(4).is_vector());
        assert!(!DataType::FLOAT32.with_lanes(4).is_scalar());
        assert!(DataType::bool().is_bool() && DataType::bool().is_uint());
        assert!(DataType::void().is_void() && !DataType::void().is_handle());
        assert!(DataType::handle().is_handle());
        assert_eq!(DataType::default(), DataType::void());
        assert_eq!(DataType::from_dl(2, 32, 1), DataType::FLOAT32);
        assert_eq!(DataType::FLOAT32.to_dl(), (2, 32, 1));
        assert_eq!(
            DataType::int(8).with_lanes(4).element_of(),
            DataType::int(8)
        );
        for c in 0..=255u8 {
            assert_eq!(TypeCode::from_u8(c).to_u8(), c);
        }
    }
}
