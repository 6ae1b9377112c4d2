//! NumPy's `.npz`: a zip archive of `.npy` files, one per array
//! (`np.savez`). Entries are written stored (uncompressed), as `np.savez`
//! writes them; reading takes stored entries (`np.savez_compressed`'s
//! deflated ones are refused with a message).

use crate::npy::{read_npy, write_npy};
use relay_ir::metadata::TensorData;

/// CRC-32 (IEEE), as zip requires.
fn crc32(bytes: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, entry) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *entry = c;
    }
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc = table[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

fn u16le(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn u32le(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Writes named arrays as an `.npz` archive (`NAME.npy` entries).
pub fn write_npz(arrays: &[(String, &TensorData)]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, tensor) in arrays {
        let data = write_npy(tensor).map_err(|e| format!("{name}: {e}"))?;
        let file_name = format!("{name}.npy");
        let size = u32::try_from(data.len()).map_err(|_| format!("{name}: larger than 4 GiB"))?;
        let offset = u32::try_from(out.len()).map_err(|_| "archive larger than 4 GiB")?;
        let crc = crc32(&data);
        // Local file header.
        u32le(&mut out, 0x0403_4b50);
        u16le(&mut out, 20); // version needed
        u16le(&mut out, 0); // flags
        u16le(&mut out, 0); // stored
        u16le(&mut out, 0); // time
        u16le(&mut out, 0x21); // date: 1980-01-01
        u32le(&mut out, crc);
        u32le(&mut out, size);
        u32le(&mut out, size);
        u16le(&mut out, file_name.len() as u16);
        u16le(&mut out, 0);
        out.extend_from_slice(file_name.as_bytes());
        out.extend_from_slice(&data);
        // Central directory entry.
        u32le(&mut central, 0x0201_4b50);
        u16le(&mut central, 20); // made by
        u16le(&mut central, 20); // needed
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, 0x21);
        u32le(&mut central, crc);
        u32le(&mut central, size);
        u32le(&mut central, size);
        u16le(&mut central, file_name.len() as u16);
        u16le(&mut central, 0); // extra
        u16le(&mut central, 0); // comment
        u16le(&mut central, 0); // disk
        u16le(&mut central, 0); // internal attributes
        u32le(&mut central, 0); // external attributes
        u32le(&mut central, offset);
        central.extend_from_slice(file_name.as_bytes());
    }
    let central_offset = u32::try_from(out.len()).map_err(|_| "archive larger than 4 GiB")?;
    let count = arrays.len() as u16;
    out.extend_from_slice(&central);
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, count);
    u16le(&mut out, count);
    u32le(&mut out, central.len() as u32);
    u32le(&mut out, central_offset);
    u16le(&mut out, 0);
    Ok(out)
}

fn read_u16(bytes: &[u8], at: usize) -> Result<u16, String> {
    bytes
        .get(at..at + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or_else(|| "truncated .npz archive".to_string())
}
fn read_u32(bytes: &[u8], at: usize) -> Result<u32, String> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| "truncated .npz archive".to_string())
}

/// Reads an `.npz` archive: `(name without .npy, tensor)` in archive order.
pub fn read_npz(bytes: &[u8]) -> Result<Vec<(String, TensorData)>, String> {
    // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
    let search_from = bytes.len().saturating_sub(22 + 65_535);
    let end = (search_from..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| bytes[i..].starts_with(&[0x50, 0x4b, 0x05, 0x06]))
        .ok_or("not an .npz archive (no zip directory)")?;
    let count = read_u16(bytes, end + 10)? as usize;
    let mut at = read_u32(bytes, end + 16)? as usize;
    let mut arrays = Vec::with_capacity(count);
    for _ in 0..count {
        if read_u32(bytes, at)? != 0x0201_4b50 {
            return Err("corrupt .npz directory".into());
        }
        let method = read_u16(bytes, at + 10)?;
        let compressed = read_u32(bytes, at + 20)? as usize;
        let name_len = read_u16(bytes, at + 28)? as usize;
        let extra_len = read_u16(bytes, at + 30)? as usize;
        let comment_len = read_u16(bytes, at + 32)? as usize;
        let local = read_u32(bytes, at + 42)? as usize;
        let name = bytes
            .get(at + 46..at + 46 + name_len)
            .ok_or("truncated .npz directory")?;
        let name = String::from_utf8_lossy(name).to_string();
        at += 46 + name_len + extra_len + comment_len;
        if method != 0 {
            return Err(format!(
                "{name} is compressed (np.savez_compressed); save the arrays with np.savez"
            ));
        }
        let local_name = read_u16(bytes, local + 26)? as usize;
        let local_extra = read_u16(bytes, local + 28)? as usize;
        let start = local + 30 + local_name + local_extra;
        let data = bytes
            .get(start..start + compressed)
            .ok_or_else(|| format!("{name}: truncated .npz entry"))?;
        let tensor = read_npy(data).map_err(|e| format!("{name}: {e}"))?;
        let key = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        arrays.push((key, tensor));
    }
    Ok(arrays)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::dtype::DataType;

    #[test]
    fn crc_of_a_known_string() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn archives_round_trip() {
        let a = TensorData::from_f64s(DataType::FLOAT32, vec![2], &[1.0, -2.5]).unwrap();
        let b = TensorData::from_i64s(DataType::INT64, vec![], &[7]).unwrap();
        let bytes = write_npz(&[("output_0".into(), &a), ("x".into(), &b)]).unwrap();
        let back = read_npz(&bytes).unwrap();
        assert_eq!(
            back,
            vec![("output_0".to_string(), a), ("x".to_string(), b)]
        );
    }
}
