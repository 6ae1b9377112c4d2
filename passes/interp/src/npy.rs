//! NumPy's `.npy` format (version 1.0 to write; 1.0, 2.0 and 3.0 to read):
//! a magic string, a Python-literal header (`descr`, `fortran_order`,
//! `shape`) and the raw elements.

use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;

const MAGIC: &[u8] = b"\x93NUMPY";

/// The `descr` NumPy writes for a data type; `None` for types NumPy does not
/// have (`bfloat16`, vectors, sub-byte integers other than `bool`).
pub fn descr(dtype: DataType) -> Option<&'static str> {
    if dtype.lanes != 1 {
        return None;
    }
    Some(match (dtype.code, dtype.bits) {
        (TypeCode::UInt, 1) => "|b1",
        (TypeCode::Int, 8) => "|i1",
        (TypeCode::Int, 16) => "<i2",
        (TypeCode::Int, 32) => "<i4",
        (TypeCode::Int, 64) => "<i8",
        (TypeCode::UInt, 8) => "|u1",
        (TypeCode::UInt, 16) => "<u2",
        (TypeCode::UInt, 32) => "<u4",
        (TypeCode::UInt, 64) => "<u8",
        (TypeCode::Float, 16) => "<f2",
        (TypeCode::Float, 32) => "<f4",
        (TypeCode::Float, 64) => "<f8",
        _ => return None,
    })
}

/// The data type of a `descr`, and whether its bytes are big-endian.
fn dtype_of_descr(descr: &str) -> Result<(DataType, bool), String> {
    let (order, kind) = match descr.as_bytes().first() {
        Some(b'<' | b'|' | b'=') => (false, &descr[1..]),
        Some(b'>') => (true, &descr[1..]),
        _ => (false, descr),
    };
    let dtype = match kind {
        "b1" => DataType::bool(),
        "i1" => DataType::int(8),
        "i2" => DataType::int(16),
        "i4" => DataType::int(32),
        "i8" => DataType::int(64),
        "u1" => DataType::uint(8),
        "u2" => DataType::uint(16),
        "u4" => DataType::uint(32),
        "u8" => DataType::uint(64),
        "f2" => DataType::float(16),
        "f4" => DataType::float(32),
        "f8" => DataType::float(64),
        _ => return Err(format!("unsupported .npy element type '{descr}'")),
    };
    Ok((dtype, order))
}

/// Writes a tensor as `.npy` bytes. A `bfloat16` tensor is written as
/// `float32` (every value exactly), since NumPy has no `bfloat16`.
pub fn write_npy(tensor: &TensorData) -> Result<Vec<u8>, String> {
    let widened;
    let tensor = if tensor.dtype.is_bfloat16() {
        let values = tensor.to_f64_vec().map_err(|e| e.message)?;
        widened = TensorData::from_f64s(DataType::FLOAT32, tensor.shape.clone(), &values)
            .map_err(|e| e.message)?;
        &widened
    } else {
        tensor
    };
    let descr =
        descr(tensor.dtype).ok_or_else(|| format!("{} has no .npy element type", tensor.dtype))?;
    let shape = match tensor.shape.len() {
        1 => format!("({},)", tensor.shape[0]),
        _ => {
            let dims: Vec<String> = tensor.shape.iter().map(i64::to_string).collect();
            format!("({})", dims.join(", "))
        }
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + tensor.data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&tensor.data);
    Ok(out)
}

/// Reads `.npy` bytes.
pub fn read_npy(bytes: &[u8]) -> Result<TensorData, String> {
    if !bytes.starts_with(MAGIC) || bytes.len() < 10 {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated .npy header".into());
            }
            let len = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
            (len as usize, 12)
        }
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes
        .get(start..start + header_len)
        .ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let descr = header_value(header, "descr")
        .and_then(|v| v.strip_prefix('\'')?.split('\'').next())
        .ok_or("the .npy header has no 'descr'")?;
    let fortran =
        header_value(header, "fortran_order").ok_or("the .npy header has no 'fortran_order'")?;
    let shape_text = header_value(header, "shape").ok_or("the .npy header has no 'shape'")?;
    let shape = parse_shape(shape_text)?;
    let (dtype, big_endian) = dtype_of_descr(descr)?;
    let mut data = bytes[start + header_len..].to_vec();
    let expected = relay_ir::metadata::saved_byte_size(dtype, &shape)
        .ok_or_else(|| format!("invalid .npy shape {shape:?}"))?;
    if data.len() != expected {
        return Err(format!(
            "the .npy file has {} bytes of data, its header ({descr}, shape {shape:?}) says {expected}",
            data.len()
        ));
    }
    if big_endian {
        for chunk in data.chunks_mut(dtype.bytes()) {
            chunk.reverse();
        }
    }
    if fortran.starts_with("True") && shape.len() > 1 {
        data = fortran_to_c(&data, &shape, dtype.bytes());
    }
    TensorData::new(dtype, shape, data).map_err(|e| e.message)
}

/// The text after `'key':` in a header dict.
fn header_value<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let at = header.find(&format!("'{key}'"))?;
    let rest = &header[at + key.len() + 2..];
    Some(rest.trim_start().strip_prefix(':')?.trim_start())
}

fn parse_shape(text: &str) -> Result<Vec<i64>, String> {
    let inner = text
        .strip_prefix('(')
        .and_then(|t| t.split(')').next())
        .ok_or("the .npy shape is not a tuple")?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim_end_matches('L')
                .parse::<i64>()
                .map_err(|_| format!("bad .npy dimension `{s}`"))
        })
        .collect()
}

/// Reorders column-major elements to row-major.
fn fortran_to_c(data: &[u8], shape: &[i64], width: usize) -> Vec<u8> {
    let n = data.len() / width.max(1);
    let mut out = vec![0u8; data.len()];
    let mut index = vec![0i64; shape.len()];
    for c_pos in 0..n {
        // Position of `index` in column-major order.
        let mut f_pos = 0i64;
        let mut stride = 1i64;
        for (i, d) in index.iter().zip(shape) {
            f_pos += i * stride;
            stride *= d;
        }
        let f = f_pos as usize * width;
        out[c_pos * width..(c_pos + 1) * width].copy_from_slice(&data[f..f + width]);
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_numpy_type() {
        for dtype in [
            "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64",
        ] {
            let dtype = DataType::parse(dtype).unwrap();
            let t = TensorData::from_i64s(dtype, vec![2, 3], &[1, 0, 1, 1, 0, 1]).unwrap();
            let bytes = write_npy(&t).unwrap();
            assert_eq!(
                (bytes.len() - t.data.len()) % 64,
                0,
                "{dtype}: header aligned to 64"
            );
            assert_eq!(read_npy(&bytes).unwrap(), t, "{dtype}");
        }
    }

    #[test]
    fn scalars_and_vectors_have_numpy_shapes() {
        let scalar = TensorData::from_f64s(DataType::FLOAT32, vec![], &[1.5]).unwrap();
        let text = String::from_utf8_lossy(&write_npy(&scalar).unwrap()).to_string();
        assert!(text.contains("'shape': (), }"), "{text}");
        let vector = TensorData::from_f64s(DataType::FLOAT32, vec![1], &[1.5]).unwrap();
        let text = String::from_utf8_lossy(&write_npy(&vector).unwrap()).to_string();
        assert!(text.contains("'shape': (1,), }"), "{text}");
    }

    #[test]
    fn fortran_order_and_big_endian_are_reordered() {
        // [[1, 2, 3], [4, 5, 6]] stored column-major, big-endian int16.
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        let header = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }\n";
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        for v in [1i16, 4, 2, 5, 3, 6] {
            bytes.extend_from_slice(&v.to_be_bytes());
        }
        let t = read_npy(&bytes).unwrap();
        assert_eq!(t.to_i64_vec().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(read_npy(b"PK\x03\x04").unwrap_err().contains("magic"));
        let mut t = write_npy(&TensorData::zeros(DataType::FLOAT32, vec![4]).unwrap()).unwrap();
        t.truncate(t.len() - 1);
        assert!(read_npy(&t).unwrap_err().contains("bytes of data"));
    }
}
