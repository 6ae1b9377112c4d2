//! Typed tokens: names, numbers, strings, meta references and headers, with
//! their values read the way TVM reads them.
//!
//! The lexer guarantees each token's shape (a `LOCAL` starts with `%`, a
//! `STRING` has both quotes, …), but the accessors do not rely on it and
//! never panic.

use rowan::{TextRange, TextSize};
use std::borrow::Cow;

use crate::ast::{AstToken, TreeToken};
use crate::literal::{parse_number, NumberValue};

ast_token! {
    /// `%x`: a local variable, in a binding, a parameter or a use.
    Local: LOCAL
}

impl<T: TreeToken> Local<T> {
    /// The name without the `%` (`x` for `%x`).
    pub fn name(&self) -> &str {
        let text = self.text();
        text.strip_prefix('%').unwrap_or(text)
    }

    /// The range of the name without the `%` (what a rename replaces).
    pub fn name_range(&self) -> TextRange {
        sigil_name_range(&self.syntax, '%')
    }
}

ast_token! {
    /// `%0`: a graph binding number, bound by `%0 = …;` and used as `%0`.
    Graph: GRAPH
}

impl<T: TreeToken> Graph<T> {
    /// The number without the `%`, if it fits a `u64`.
    #[inline]
    pub fn number(&self) -> Option<u64> {
        let text = self.text();
        let digits = text.strip_prefix('%').unwrap_or(text);
        // Plain digits that cannot overflow (nearly every binding of a
        // model) without `str::parse`; lowering reads thousands of them.
        if (1..=19).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
            return Some(
                digits
                    .bytes()
                    .fold(0u64, |acc, b| acc * 10 + u64::from(b - b'0')),
            );
        }
        digits.parse().ok()
    }
}

ast_token! {
    /// `@f`: a global function name.
    Global: GLOBAL
}

impl<T: TreeToken> Global<T> {
    /// The name without the `@` (`main` for `@main`).
    pub fn name(&self) -> &str {
        let text = self.text();
        text.strip_prefix('@').unwrap_or(text)
    }

    /// The range of the name without the `@` (what a rename replaces).
    pub fn name_range(&self) -> TextRange {
        sigil_name_range(&self.syntax, '@')
    }
}

fn sigil_name_range<T: TreeToken>(token: &T, sigil: char) -> TextRange {
    let range = token.text_range();
    if token.text().starts_with(sigil) && !range.is_empty() {
        TextRange::new(range.start() + TextSize::of(sigil), range.end())
    } else {
        range
    }
}

ast_token! {
    /// An integer literal: `1`, `-2`, `3i64`.
    IntNumber: INT
}

impl<T: TreeToken> IntNumber<T> {
    /// The checked value, or TVM's error message (see [`parse_number`]).
    pub fn number(&self) -> Result<NumberValue, String> {
        parse_number(self.text())
    }

    /// The value, if the literal is a valid integer.
    pub fn value(&self) -> Option<i64> {
        match self.number() {
            Ok(NumberValue::Int { value, .. }) => Some(value),
            _ => None,
        }
    }

    /// The width in bits (16, 32 or 64), if the literal is a valid integer.
    pub fn bits(&self) -> Option<u8> {
        match self.number() {
            Ok(NumberValue::Int { bits, .. }) => Some(bits),
            _ => None,
        }
    }
}

ast_token! {
    /// A float literal: `1f`, `0.5f`, `1e-05f`, `2f64`, `-inff`.
    FloatNumber: FLOAT
}

impl<T: TreeToken> FloatNumber<T> {
    /// The checked value, or TVM's error message (see [`parse_number`]).
    pub fn number(&self) -> Result<NumberValue, String> {
        parse_number(self.text())
    }

    /// The value, if the literal is a valid float.
    pub fn value(&self) -> Option<f64> {
        match self.number() {
            Ok(NumberValue::Float { value, .. }) => Some(value),
            _ => None,
        }
    }

    /// The width in bits (16, 32 or 64), if the literal is a valid float.
    pub fn bits(&self) -> Option<u8> {
        match self.number() {
            Ok(NumberValue::Float { bits, .. }) => Some(bits),
            _ => None,
        }
    }
}

ast_token! {
    /// `True` or `False`.
    Bool: BOOL
}

impl<T: TreeToken> Bool<T> {
    /// `true` for `True`.
    pub fn value(&self) -> bool {
        self.text() == "True"
    }
}

ast_token! {
    /// `"…"`: a string (attribute values only; TVM has no escapes).
    StringLit: STRING
}

impl<T: TreeToken> StringLit<T> {
    /// The contents without the quotes, with backslash escapes decoded:
    /// `\"`, `\\`, `\n`, `\t`, `\r`, and `\xHH` for one byte (our
    /// printer writes every byte outside printable ASCII that way, so the
    /// bytes of a UTF-8 character come back as that character). A backslash
    /// before any other character stands for that character, as the lexer
    /// reads it. TVM's own strings have no escapes and come back unchanged.
    /// Bytes that are not valid UTF-8 after decoding become U+FFFD.
    pub fn value(&self) -> Cow<'_, str> {
        unescape(self.raw_value())
    }

    /// The contents without the quotes, as written (escapes not decoded).
    pub fn raw_value(&self) -> &str {
        let text = self.text();
        let text = text.strip_prefix('"').unwrap_or(text);
        text.strip_suffix('"').unwrap_or(text)
    }

    /// The range of the contents without the quotes.
    pub fn value_range(&self) -> TextRange {
        let start = self.syntax.text_range().start();
        let open = if self.text().starts_with('"') {
            TextSize::of('"')
        } else {
            TextSize::from(0)
        };
        let len = TextSize::of(self.raw_value());
        TextRange::at(start + open, len)
    }
}

/// Decodes the escapes of a string literal's contents (see
/// [`StringLit::value`]); borrows when there is nothing to decode.
fn unescape(raw: &str) -> Cow<'_, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte != b'\\' {
            out.push(byte);
            i += 1;
            continue;
        }
        let Some(&escaped) = bytes.get(i + 1) else {
            // A lone backslash at the end (not in a well-formed literal).
            out.push(byte);
            break;
        };
        i += 2;
        match escaped {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'x' => match (
                bytes.get(i).and_then(hex_digit),
                bytes.get(i + 1).and_then(hex_digit),
            ) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 2;
                }
                // Not a byte escape: the `x` stands for itself.
                _ => out.push(b'x'),
            },
            // `\"`, `\\` and any other escaped character stand for
            // themselves (a multi-byte character is copied byte by byte by
            // the loop).
            other => out.push(other),
        }
    }
    match String::from_utf8(out) {
        Ok(text) => Cow::Owned(text),
        Err(error) => Cow::Owned(String::from_utf8_lossy(error.as_bytes()).into_owned()),
    }
}

fn hex_digit(c: &u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

ast_token! {
    /// `meta[Key][index]`: a reference into the metadata section.
    MetaRef: META_REF
}

impl<T: TreeToken> MetaRef<T> {
    /// The type key: `relay.Constant` in `meta[relay.Constant][0]`.
    pub fn key(&self) -> Option<&str> {
        self.parts().map(|(key, _)| key)
    }

    /// The index text: `0` in `meta[relay.Constant][0]`.
    pub fn index_text(&self) -> Option<&str> {
        self.parts().map(|(_, index)| index)
    }

    /// The index, if it is a valid `u64`.
    pub fn index(&self) -> Option<u64> {
        let index = self.index_text()?;
        if index.bytes().all(|b| b.is_ascii_digit()) {
            index.parse().ok()
        } else {
            None
        }
    }

    fn parts(&self) -> Option<(&str, &str)> {
        let rest = self.text().strip_prefix("meta[")?;
        let key_end = rest.find(']')?;
        let key = &rest[..key_end];
        let rest = rest[key_end + 1..].strip_prefix('[')?;
        let index = rest.strip_suffix(']').unwrap_or(rest);
        Some((key, index))
    }
}

ast_token! {
    /// `#[version = "0.0.5"]`.
    VersionAttr: VERSION_ATTR
}

impl<T: TreeToken> VersionAttr<T> {
    /// What TVM takes for the version: the text after the `=`, trimmed,
    /// quotes included (`"0.0.5"`).
    pub fn value(&self) -> &str {
        crate::validation::version_value(self.text())
    }

    /// Whether this is the version TVM v0.13 reads (`"0.0.5"`).
    pub fn is_supported(&self) -> bool {
        self.value() == crate::validation::SUPPORTED_VERSION
    }
}

ast_token! {
    /// `#[metadata]` and everything after it, up to the end of the file.
    Metadata: METADATA
}

impl<T: TreeToken> Metadata<T> {
    /// The text after the `#[metadata]` header (the JSON of the section,
    /// with its leading whitespace).
    pub fn body(&self) -> &str {
        let text = self.text();
        match text.find(']') {
            Some(i) => &text[i + 1..],
            None => "",
        }
    }

    /// The range of [`Metadata::body`].
    pub fn body_range(&self) -> TextRange {
        let range = self.syntax.text_range();
        TextRange::new(range.end() - TextSize::of(self.body()), range.end())
    }
}

ast_token! {
    /// A plain identifier: a name segment, a type, constructor or dtype name.
    Ident: IDENT
}

impl<T: TreeToken> Ident<T> {
    /// The identifier's text.
    pub fn name(&self) -> &str {
        self.text()
    }
}
