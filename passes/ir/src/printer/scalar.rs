//! How TVM's printer writes numbers, strings and names: C++ stream output
//! of doubles (6 significant digits, like `printf("%g")`), the scalar
//! constant suffixes of `src/support/scalars.cc`, `support::StrEscape`, and
//! the spelling of variable names.

use crate::dtype::{DataType, TypeCode};
use crate::metadata::TensorData;

/// `printf("%.{precision}g", v)`, which is what `std::ostream << double`
/// writes with the default precision of 6.
pub(crate) fn format_g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let p = precision.max(1);
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // The exponent after rounding to `p` significant digits.
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        format!(
            "{}e{}{:02}",
            strip(mantissa),
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        )
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip(&format!("{v:.decimals$}"))
    }
}

/// `std::ostream << double` with the default precision.
pub(crate) fn stream_double(v: f64) -> String {
    format_g(v, 6)
}

/// `std::to_string(double)`: `printf("%f")`.
pub(crate) fn to_string_double(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    format!("{v:.6}")
}

fn is(dtype: DataType, code: TypeCode, bits: u8) -> bool {
    dtype.code == code && dtype.bits == bits && dtype.lanes == 1
}

/// `support::IsSimpleScalarDtype`: int16/32/64, float16/32/64, bool.
pub(crate) fn is_simple_scalar_dtype(dtype: DataType) -> bool {
    dtype == DataType::bool()
        || [16, 32, 64]
            .iter()
            .any(|&b| is(dtype, TypeCode::Int, b) || is(dtype, TypeCode::Float, b))
}

/// `support::IsSimpleScalar`: a rank-0 tensor of a simple dtype, printed as
/// a literal rather than as a `meta[relay.Constant][…]` reference.
pub(crate) fn is_simple_scalar(data: &TensorData) -> bool {
    data.shape.is_empty() && is_simple_scalar_dtype(data.dtype)
}

/// `support::NDArrayScalarToString`: `42`, `42i16`, `42i64`, `3f`, `3f16`,
/// `3f64`, `True`. `None` when the constant is not a simple scalar.
pub(crate) fn scalar_constant_text(data: &TensorData) -> Option<String> {
    if !is_simple_scalar(data) {
        return None;
    }
    let d = data.dtype;
    if d == DataType::bool() {
        let v = data.data.first().copied().unwrap_or(0);
        return Some(if v != 0 { "True" } else { "False" }.to_string());
    }
    let suffix = match (d.code, d.bits) {
        (TypeCode::Int, 16) => "i16",
        (TypeCode::Int, 32) => "",
        (TypeCode::Int, 64) => "i64",
        (TypeCode::Float, 16) => "f16",
        (TypeCode::Float, 32) => "f",
        (TypeCode::Float, 64) => "f64",
        _ => return None,
    };
    let value = if d.code == TypeCode::Int {
        data.get_i64(0).ok()?.to_string()
    } else {
        // float16 and float32 values are widened to double for printing,
        // exactly as C++ promotes a `float` in `operator<<`.
        stream_double(data.get_f64(0).ok()?)
    };
    Some(format!("{value}{suffix}"))
}

/// `support::IntImmToString` and the printer's fallback for other dtypes.
pub(crate) fn int_imm_text(value: i64, dtype: DataType) -> String {
    let mut out = String::new();
    push_int_imm(&mut out, value, dtype);
    out
}

/// [`int_imm_text`], appended to `out`.
pub(crate) fn push_int_imm(out: &mut String, value: i64, dtype: DataType) {
    if dtype == DataType::bool() {
        out.push_str(if value != 0 { "True" } else { "False" });
        return;
    }
    push_i64(out, value);
    match (dtype.code, dtype.bits, dtype.lanes) {
        (TypeCode::Int, 16, 1) => out.push_str("i16"),
        (TypeCode::Int, 64, 1) => out.push_str("i64"),
        _ => {}
    }
}

/// Appends `n` in decimal (what `to_string` writes, without the
/// formatting machinery: numbers are most of what the printer writes).
pub fn push_decimal(out: &mut String, n: u64) {
    /// The two-digit numbers, `00` to `99`, back to back.
    const PAIRS: &str = "0001020304050607080910111213141516171819\
                         2021222324252627282930313233343536373839\
                         4041424344454647484950515253545556575859\
                         6061626364656667686970717273747576777879\
                         8081828384858687888990919293949596979899";
    let pair = |k: u64| {
        let at = 2 * k as usize;
        &PAIRS[at..at + 2]
    };
    if n < 10 {
        out.push_str(&pair(n)[1..]);
    } else if n < 100 {
        out.push_str(pair(n));
    } else if n < 10_000 {
        push_decimal(out, n / 100);
        out.push_str(pair(n % 100));
    } else {
        push_decimal(out, n / 10_000);
        let rest = n % 10_000;
        out.push_str(pair(rest / 100));
        out.push_str(pair(rest % 100));
    }
}

/// Appends `v` in decimal.
pub(crate) fn push_i64(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_decimal(out, v.unsigned_abs());
}

/// `support::FloatImmToString` and the printer's fallback (`std::to_string`)
/// for other dtypes.
pub(crate) fn float_imm_text(value: f64, dtype: DataType) -> String {
    match (dtype.code, dtype.bits, dtype.lanes) {
        (TypeCode::Float, 16, 1) => format!("{}f16", stream_double(value)),
        (TypeCode::Float, 32, 1) => format!("{}f", stream_double(value)),
        (TypeCode::Float, 64, 1) => format!("{}f64", stream_double(value)),
        _ => to_string_double(value),
    }
}

/// `Doc::StrLiteral`: the string in double quotes, escaped as
/// `support::StrEscape` does (`\"`, `\\`, `\t`, `\r`, `\n`, and `\xHH` for
/// every other byte outside printable ASCII). Our lexer reads a backslash as
/// escaping the next character, so every string we print reads back.
pub(crate) fn str_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_str_literal(&mut out, s);
    out
}

/// [`str_literal`], appended to `out`.
pub(crate) fn push_str_literal(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    for &c in s.as_bytes() {
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\n' => out.push_str("\\n"),
            b' '..=b'~' => out.push(c as char),
            _ => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                out.push_str("\\x");
                out.push(HEX[(c >> 4) as usize] as char);
                out.push(HEX[(c & 0xf) as usize] as char);
            }
        }
    }
    out.push('"');
}

/// Whether `name` reads back as a plain identifier after `%` or `@`: a
/// letter or `_`, then letters, digits, `_` or `/`, and not a keyword or a
/// word the lexer takes for something else (`inff…` is a float).
pub(crate) fn is_plain_identifier(name: &str) -> bool {
    let b = name.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    (first == b'_' || first.is_ascii_alphabetic())
        && b[1..]
            .iter()
            .all(|&c| c == b'_' || c == b'/' || c.is_ascii_alphanumeric())
        && !name.starts_with("inff")
        && relay_syntax::SyntaxKind::from_keyword(name).is_none()
}

/// The name a variable is printed with, before it is made unique.
///
/// TVM (`AllocVar`) prefixes `v` when the name hint is empty or does not
/// start with a letter, and otherwise prints the hint as it is, so a hint
/// such as `a.b`, `a-b` or `x:0` (common in imported models) produces text
/// that does not parse (TVM issues #6470, #13133, #15797). We keep TVM's
/// prefix rule and replace every character that cannot continue an
/// identifier with `_`; a keyword or `inff…` gets the `v` prefix too. The
/// result is then made unique like any other name, so a sanitised `a_b`
/// never collides with a real `a_b`.
pub(crate) fn var_base_name(hint: &str) -> String {
    let mut name = String::new();
    push_var_base_name(&mut name, hint);
    name
}

/// [`var_base_name`], appended to `out`.
pub(crate) fn push_var_base_name(out: &mut String, hint: &str) {
    // Most hints are plain identifiers already, printed as they are.
    if hint.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) && is_plain_identifier(hint) {
        out.push_str(hint);
        return;
    }
    let mut name = String::with_capacity(hint.len() + 1);
    if !hint
        .as_bytes()
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic())
    {
        name.push('v');
    }
    for c in hint.chars() {
        if c == '_' || c == '/' || c.is_ascii_alphanumeric() {
            name.push(c);
        } else {
            name.push('_');
        }
    }
    if !is_plain_identifier(&name) {
        name.insert(0, 'v');
    }
    out.push_str(&name);
}

/// [`push_var_base_name`] as TVM's `AllocVar` writes it, for text that is
/// TVM's `astext()` exactly: the hint as it is (`conv1.weight`,
/// `input_tensor:0`), with `v` before a hint that is empty or does not start
/// with a letter (`1_bn.gamma` is written `v1_bn.gamma`). A lenient reading
/// reads such names back.
pub(crate) fn push_tvm_var_name(out: &mut String, hint: &str) {
    if !hint
        .as_bytes()
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic())
    {
        out.push('v');
    }
    out.push_str(hint);
}

/// The name of a global function as printed after `@`: as it is when it
/// reads back, otherwise sanitised like [`var_base_name`] (without the
/// uniquing: a global's name is its identity).
pub(crate) fn global_name(name: &str) -> String {
    if is_plain_identifier(name) {
        name.to_string()
    } else {
        var_base_name(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_like_cpp_streams() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (3.0, "3"),
            (1e-5, "1e-05"),
            (2e-5, "2e-05"),
            (1e11, "1e+11"),
            (0.1, "0.1"),
            (1.23456789, "1.23457"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00012345678, "0.000123457"),
            (999999.5, "1e+06"),
            (-2.5, "-2.5"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (f64::from(0.1f32), "0.1"),
            (100.0, "100"),
        ];
        for &(v, s) in cases {
            assert_eq!(stream_double(v), s, "{v:e}");
        }
        assert_eq!(to_string_double(1.0), "1.000000");
    }

    #[test]
    fn scalars() {
        let t = |dtype: DataType, v: f64| TensorData::from_f64s(dtype, vec![], &[v]).unwrap();
        assert_eq!(
            scalar_constant_text(&t(DataType::INT32, 42.0)).unwrap(),
            "42"
        );
        assert_eq!(
            scalar_constant_text(&t(DataType::INT64, -3.0)).unwrap(),
            "-3i64"
        );
        assert_eq!(
            scalar_constant_text(&t(DataType::int(16), 7.0)).unwrap(),
            "7i16"
        );
        assert_eq!(
            scalar_constant_text(&t(DataType::FLOAT32, 3.0)).unwrap(),
            "3f"
        );
        assert_eq!(
            scalar_constant_text(&t(DataType::float(16), 0.5)).unwrap(),
            "0.5f16"
        );
        assert_eq!(
            scalar_constant_text(&t(DataType::float(64), 1e-5)).unwrap(),
            "1e-05f64"
        );
        assert_eq!(
            scalar_constant_text(&t(DataType::FLOAT32, f64::INFINITY)).unwrap(),
            "inff"
        );
        assert_eq!(
            scalar_constant_text(&t(DataType::bool(), 1.0)).unwrap(),
            "True"
        );
        assert!(scalar_constant_text(&t(DataType::uint(8), 1.0)).is_none());
        let v = TensorData::from_f64s(DataType::FLOAT32, vec![1], &[1.0]).unwrap();
        assert!(scalar_constant_text(&v).is_none());
    }

    #[test]
    fn names() {
        assert_eq!(var_base_name("x"), "x");
        assert_eq!(var_base_name(""), "v");
        assert_eq!(var_base_name("_"), "v_");
        assert_eq!(var_base_name("1"), "v1");
        assert_eq!(var_base_name("a.b"), "a_b");
        assert_eq!(var_base_name("a-b:0"), "a_b_0");
        assert_eq!(var_base_name("let"), "vlet");
        assert_eq!(var_base_name("inffoo"), "vinffoo");
        assert_eq!(var_base_name("é"), "v_");
        assert_eq!(var_base_name("conv/weight"), "conv/weight");
        assert_eq!(global_name("main"), "main");
        assert_eq!(global_name("a.b"), "a_b");
    }

    #[test]
    fn decimals() {
        let numbers = (0..20_000u64)
            .chain([99_999, 100_000, 123_456_789, u64::MAX])
            .chain((0..64).map(|k| 1u64 << k));
        for n in numbers {
            let mut out = String::new();
            push_decimal(&mut out, n);
            assert_eq!(out, n.to_string());
        }
        let mut out = String::new();
        push_i64(&mut out, i64::MIN);
        assert_eq!(out, i64::MIN.to_string());
    }

    #[test]
    fn strings() {
        assert_eq!(str_literal("NCHW"), "\"NCHW\"");
        assert_eq!(str_literal("a\"b\\c\n\t\r"), "\"a\\\"b\\\\c\\n\\t\\r\"");
        assert_eq!(str_literal("\u{1}é"), "\"\\x01\\xC3\\xA9\"");
    }
}
