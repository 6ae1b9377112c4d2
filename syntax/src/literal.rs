//! The values of numeric literals, read exactly as TVM v0.13's tokenizer reads
//! them (`Tokenizer::ParseNumber` and `support::ValueTo{Int,Float}Imm`).
//!
//! A literal is a run of `0-9 . e E + -` with an optional `i`/`f` suffix and
//! width, possibly after a run of `-` signs (an odd count negates), or `inff`
//! (and, beyond TVM's reader, the `inff64`/`nanf`… its printer writes).
//! Only an `f` suffix makes a float: `1.5` is an invalid *integer*.

/// A checked numeric literal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumberValue {
    /// An integer with its width in bits (16, 32 or 64).
    Int { value: i64, bits: u8 },
    /// A float with its width in bits (16, 32 or 64).
    Float { value: f64, bits: u8 },
}

/// Reads the text of an `INT` or `FLOAT` token. The error message is TVM's.
pub fn parse_number(text: &str) -> Result<NumberValue, String> {
    let negs = text.bytes().take_while(|&b| b == b'-').count();
    let is_pos = negs % 2 == 0;
    let body = &text[negs..];
    // `inff` (TVM's own), and the other non-finite literals its printer
    // writes: `inff64`, `nanf`, `-nanf16`, … (see the lexer).
    for (word, magnitude) in [("inff", f64::INFINITY), ("nanf", f64::NAN)] {
        if let Some(width) = body.strip_prefix(word) {
            let bits = match width {
                "" => 32,
                "16" => 16,
                "32" => 32,
                "64" => 64,
                _ => return Err(format!("unrecognized float scalar width: {width}")),
            };
            let value = if is_pos { magnitude } else { -magnitude };
            return Ok(NumberValue::Float { value, bits });
        }
    }
    let marker = body.find(['f', 'i']);
    let is_float = marker.is_some_and(|i| body.as_bytes()[i] == b'f');
    let suffix_pos = marker.unwrap_or(body.len());
    let literal = &body[..suffix_pos];
    let suffix = if suffix_pos < body.len() {
        &body[suffix_pos + 1..]
    } else {
        ""
    };
    let width = if suffix.is_empty() {
        32
    } else {
        match leading_int(suffix) {
            Some(w) => w,
            // Digits that do not even fit the width parser: say what is
            // wrong rather than calling the suffix invalid.
            None if suffix
                .trim_start_matches(['+', '-'])
                .starts_with(|c: char| c.is_ascii_digit()) =>
            {
                let kind = if is_float { "float" } else { "integer" };
                return Err(format!(
                    "{kind} literal `{text}` has bit width `{suffix}`, which is out of range (expected 16, 32 or 64)"
                ));
            }
            None => return Err(format!("invalid numeric suffix `{suffix}`")),
        }
    };
    if is_float {
        let Some(magnitude) = parse_c_double(literal) else {
            return Err(format!("invalid floating point number `{literal}`"));
        };
        let value = if is_pos { magnitude } else { -magnitude };
        let limit = match width {
            16 => 65504.0,
            32 => f32::MAX as f64,
            64 => f64::INFINITY,
            _ => return Err(format!("unrecognized float scalar width: {width}")),
        };
        if !value.is_infinite() && value.abs() > limit {
            return Err(format!(
                "floating point number `{literal}` unrepresentable in width {width}"
            ));
        }
        Ok(NumberValue::Float {
            value,
            bits: width as u8,
        })
    } else {
        let Some(magnitude) = parse_c_long_long(literal) else {
            return Err(format!("invalid integer number `{literal}`"));
        };
        let value = if is_pos {
            magnitude
        } else {
            magnitude.wrapping_neg()
        };
        let fits = |w: i64| match w {
            16 => Some(i16::try_from(value).is_ok()),
            32 => Some(i32::try_from(value).is_ok()),
            64 => Some(true),
            _ => None,
        };
        match fits(width) {
            None => Err(format!("unrecognized integer scalar width: {width}")),
            Some(true) => Ok(NumberValue::Int {
                value,
                bits: width as u8,
            }),
            // Without a suffix TVM silently widens to int64.
            Some(false) if suffix.is_empty() => Ok(NumberValue::Int { value, bits: 64 }),
            Some(false) => Err(format!(
                "integer number `{literal}` unrepresentable in width {width}"
            )),
        }
    }
}

/// `std::stoi` on a suffix: an optional sign and at least one digit, the rest ignored.
fn leading_int(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i == digits_start || i - digits_start > 9 {
        return None;
    }
    text[..i].parse().ok()
}

/// `std::stoll` that must consume the whole text: `[+-]? digits`, in range.
fn parse_c_long_long(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i64>().ok()
}

/// `std::stod` that must consume the whole text, failing (as libstdc++ does)
/// on overflow and underflow.
fn parse_c_double(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut mantissa_digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        mantissa_digits += i - frac_start;
    }
    if mantissa_digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    if i != b.len() {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    if value.is_infinite() {
        return None; // ERANGE overflow
    }
    let has_nonzero_digit = text
        .bytes()
        .take_while(|&c| c != b'e' && c != b'E')
        .any(|c| (b'1'..=b'9').contains(&c));
    if has_nonzero_digit && value.abs() < f64::MIN_POSITIVE {
        return None; // ERANGE underflow
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(value: i64, bits: u8) -> Result<NumberValue, String> {
        Ok(NumberValue::Int { value, bits })
    }
    fn float(value: f64, bits: u8) -> Result<NumberValue, String> {
        Ok(NumberValue::Float { value, bits })
    }

    #[test]
    fn integers() {
        assert_eq!(parse_number("1"), int(1, 32));
        assert_eq!(parse_number("2i64"), int(2, 64));
        assert_eq!(parse_number("-1i16"), int(-1, 16));
        assert_eq!(parse_number("--10"), int(10, 32));
        assert_eq!(parse_number("---10"), int(-10, 32));
        assert_eq!(parse_number("3i"), int(3, 32));
        assert_eq!(parse_number("2147483648"), int(2147483648, 64));
        assert_eq!(parse_number("-2147483648"), int(-2147483648, 32));
    }

    #[test]
    fn integer_errors() {
        assert_eq!(
            parse_number("1.5").unwrap_err(),
            "invalid integer number `1.5`"
        );
        assert_eq!(
            parse_number("1-2").unwrap_err(),
            "invalid integer number `1-2`"
        );
        assert_eq!(
            parse_number("70000i16").unwrap_err(),
            "integer number `70000` unrepresentable in width 16"
        );
        assert!(parse_number("1i8").is_err());
        assert!(parse_number("99999999999999999999").is_err());
        assert_eq!(
            parse_number("1i1234567890").unwrap_err(),
            "integer literal `1i1234567890` has bit width `1234567890`, which is out of range (expected 16, 32 or 64)"
        );
        assert_eq!(
            parse_number("-2f99999999999").unwrap_err(),
            "float literal `-2f99999999999` has bit width `99999999999`, which is out of range (expected 16, 32 or 64)"
        );
    }

    #[test]
    fn floats() {
        assert_eq!(parse_number("1f"), float(1.0, 32));
        assert_eq!(parse_number("0.5f"), float(0.5, 32));
        assert_eq!(parse_number("1e-05f"), float(1e-05, 32));
        assert_eq!(parse_number("3f16"), float(3.0, 16));
        assert_eq!(parse_number("2.5f64"), float(2.5, 64));
        assert_eq!(parse_number("-0.5f"), float(-0.5, 32));
        assert_eq!(parse_number("inff"), float(f64::INFINITY, 32));
        assert_eq!(parse_number("-inff"), float(f64::NEG_INFINITY, 32));
        assert_eq!(parse_number("inff64"), float(f64::INFINITY, 64));
        assert_eq!(parse_number("-inff16"), float(f64::NEG_INFINITY, 16));
        let nan = |text: &str| match parse_number(text) {
            Ok(NumberValue::Float { value, bits }) => {
                (value.is_nan(), value.is_sign_negative(), bits)
            }
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(nan("nanf"), (true, false, 32));
        assert_eq!(nan("-nanf64"), (true, true, 64));
        assert!(parse_number("inff8").is_err());
        assert_eq!(parse_number("5.f"), float(5.0, 32));
        assert_eq!(parse_number(".5f"), float(0.5, 32));
    }

    #[test]
    fn float_errors() {
        assert!(parse_number("1e999f").is_err());
        assert!(parse_number("1e-400f").is_err());
        assert!(parse_number("70000f16").is_err());
        assert!(parse_number("1.2.3f").is_err());
        assert!(parse_number("1f8").is_err());
        assert_eq!(
            parse_number("1fx").unwrap_err(),
            "invalid numeric suffix `x`"
        );
        assert_eq!(parse_number("0e-400f"), float(0.0, 32));
    }
}
