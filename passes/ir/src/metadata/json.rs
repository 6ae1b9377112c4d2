//! A small JSON reader that keeps byte offsets, and a writer that reproduces the exact
//! layout of dmlc-core's `dmlc::JSONWriter`, which TVM uses for `SaveJSON`.
//!
//! # The reader
//!
//! It parses one JSON value into a [`Json`] tree whose nodes remember the byte offset they
//! start at, so later checks (missing fields, bad references) can point at the offending
//! text. Object members keep their order and duplicates. It accepts what dmlc's reader
//! accepts for TVM's files: C `isspace` whitespace (space, `\t`, `\n`, `\v`, `\f`, `\r`), the
//! string escapes `\"`, `\\`, `\n`, `\r`, `\t` and, beyond dmlc, the other standard JSON escapes
//! (`\/`, `\b`, `\f`, `\uXXXX`). A raw newline or carriage return inside a string is an error, as
//! in dmlc; other raw control characters are kept. Nesting deeper than [`MAX_DEPTH`] is an
//! error rather than a stack overflow. It never panics.
//!
//! # The writer
//!
//! `dmlc::JSONWriter` keeps a stack of scopes, each *multi-line* or not, and a count of items
//! written in each:
//!
//! * before the first item of a scope, and before the closing bracket of a multi-line scope
//!   that has items, it writes a *separator*: when the innermost scope is multi-line (or there
//!   is none), a newline and two spaces per open scope (the closing bracket's scope is popped
//!   first, so it lines up with its opening line);
//! * between items it writes `", "` and then the separator — hence TVM's trailing space at the
//!   end of every line that ends with a comma;
//! * an object member is the separator logic, then `"key": ` (the key is not escaped), then
//!   the value;
//! * objects written from a `std::map` are multi-line when they have more than one entry;
//!   arrays written from a `std::vector` are multi-line when they have more than ten
//!   elements or their element type is not plain-old-data (strings and objects), so a short
//!   list of indices stays on one line: `"data": [3, 6, 7]`;
//! * strings escape only `\r`, `\n`, `\\`, `\t` and `"`; every other byte is written as is.

use std::fmt::Write as _;

/// Deepest nesting of arrays and objects the reader accepts.
pub const MAX_DEPTH: usize = 256;

/// A parsed JSON value with the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Json {
    /// Byte offset of the first character of the value in the parsed text.
    pub offset: usize,
    /// The value.
    pub value: JsonValue,
}

/// The kinds of JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, kept as its source text.
    Number(String),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object: (key offset, key, value), in source order, duplicates kept.
    Object(Vec<(usize, String, Json)>),
}

impl JsonValue {
    /// A short name of the kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            JsonValue::Null => "null",
            JsonValue::Bool(_) => "a boolean",
            JsonValue::Number(_) => "a number",
            JsonValue::String(_) => "a string",
            JsonValue::Array(_) => "an array",
            JsonValue::Object(_) => "an object",
        }
    }
}

/// A JSON syntax error: a message and the byte offset it refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset in the parsed text.
    pub offset: usize,
    /// What went wrong.
    pub message: String,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Parses one JSON value starting at the first non-space byte of `text`. Returns the value
/// and the offset just after it (trailing text is left to the caller).
pub fn parse_value(text: &str) -> Result<(Json, usize), JsonError> {
    let mut r = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    let v = r.value(0)?;
    Ok((v, r.pos))
}

/// Offset of the first byte at or after `pos` that is not whitespace.
pub fn skip_space(text: &str, mut pos: usize) -> usize {
    let b = text.as_bytes();
    while pos < b.len() && is_space(b[pos]) {
        pos += 1;
    }
    pos
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn err<T>(&self, offset: usize, message: impl Into<String>) -> Result<T, JsonError> {
        Err(JsonError {
            offset,
            message: message.into(),
        })
    }

    fn skip_space(&mut self) {
        while self.pos < self.bytes.len() && is_space(self.bytes[self.pos]) {
            self.pos += 1;
        }
    }

    fn describe_here(&self) -> String {
        match self.text.get(self.pos..).and_then(|t| t.chars().next()) {
            None => "end of input".to_string(),
            Some(c) => format!("`{}`", c.escape_debug()),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        self.skip_space();
        let offset = self.pos;
        if depth > MAX_DEPTH {
            return self.err(offset, "JSON nested too deeply");
        }
        let value = match self.bytes.get(self.pos) {
            None => return self.err(offset, "expected a JSON value, found end of input"),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => JsonValue::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.keyword("true", JsonValue::Bool(true))?,
            Some(b'f') => self.keyword("false", JsonValue::Bool(false))?,
            Some(b'n') => self.keyword("null", JsonValue::Null)?,
            Some(_) => {
                return self.err(
                    offset,
                    format!("expected a JSON value, found {}", self.describe_here()),
                )
            }
        };
        Ok(Json { offset, value })
    }

    fn keyword(&mut self, word: &str, value: JsonValue) -> Result<JsonValue, JsonError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            self.err(
                self.pos,
                format!("expected a JSON value, found {}", self.describe_here()),
            )
        }
    }

    fn number(&mut self) -> Result<JsonValue, JsonError> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = self.pos;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == int_start {
            return self.err(i, "expected a digit in a number");
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == s {
                return self.err(i, "expected a digit after the decimal point");
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == s {
                return self.err(i, "expected a digit in the exponent");
            }
        }
        self.pos = i;
        Ok(JsonValue::Number(self.text[start..i].to_string()))
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let start = self.pos;
        let digits = self.bytes.get(start..start + 4);
        let value = digits
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|s| u32::from_str_radix(s, 16).ok());
        match value {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => self.err(start, "expected four hex digits after `\\u`"),
        }
    }

    /// Reads a string; `self.pos` is at the opening quote.
    fn string(&mut self) -> Result<String, JsonError> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            // Copy a run of ordinary characters at once (always on char boundaries, since
            // the bytes that stop the run are ASCII).
            let run_start = self.pos;
            while self.pos < self.bytes.len()
                && !matches!(self.bytes[self.pos], b'"' | b'\\' | b'\n' | b'\r')
            {
                self.pos += 1;
            }
            out.push_str(&self.text[run_start..self.pos]);
            match self.bytes.get(self.pos) {
                None => return self.err(open, "unterminated string"),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\n' | b'\r') => {
                    return self.err(self.pos, "expected `\"` but reached the end of the line")
                }
                Some(_) => {
                    let esc = self.pos;
                    self.pos += 1;
                    let c = match self.bytes.get(self.pos) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'u') => {
                            self.pos += 1;
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi)
                                && self.bytes[self.pos..].starts_with(b"\\u")
                            {
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return self.err(esc, "invalid UTF-16 surrogate pair");
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            match char::from_u32(code) {
                                Some(c) => {
                                    out.push(c);
                                    continue;
                                }
                                None => return self.err(esc, "invalid `\\u` escape"),
                            }
                        }
                        _ => return self.err(esc, "unknown string escape"),
                    };
                    self.pos += 1;
                    out.push(c);
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<JsonValue, JsonError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(JsonValue::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(JsonValue::Array(items));
                }
                _ => {
                    return self.err(
                        self.pos,
                        format!("expected `,` or `]`, found {}", self.describe_here()),
                    )
                }
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<JsonValue, JsonError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_space();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(JsonValue::Object(members));
        }
        loop {
            self.skip_space();
            let key_offset = self.pos;
            if self.bytes.get(self.pos) != Some(&b'"') {
                return self.err(
                    self.pos,
                    format!("expected a string key, found {}", self.describe_here()),
                );
            }
            let key = self.string()?;
            self.skip_space();
            if self.bytes.get(self.pos) != Some(&b':') {
                return self.err(
                    self.pos,
                    format!("expected `:`, found {}", self.describe_here()),
                );
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            members.push((key_offset, key, value));
            self.skip_space();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(JsonValue::Object(members));
                }
                _ => {
                    return self.err(
                        self.pos,
                        format!("expected `,` or `}}`, found {}", self.describe_here()),
                    )
                }
            }
        }
    }
}

/// An emulation of `dmlc::JSONWriter` (see the module documentation).
#[derive(Debug, Default)]
pub struct JsonWriter {
    out: String,
    multi_line: Vec<bool>,
    counter: Vec<usize>,
}

impl JsonWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text written so far.
    pub fn finish(self) -> String {
        self.out
    }

    fn separator(&mut self) {
        if self.multi_line.last().copied().unwrap_or(true) {
            self.out.push('\n');
            for _ in 0..self.multi_line.len() * 2 {
                self.out.push(' ');
            }
        }
    }

    /// `BeginObject(multi_line)`.
    pub fn begin_object(&mut self, multi_line: bool) {
        self.out.push('{');
        self.multi_line.push(multi_line);
        self.counter.push(0);
    }

    /// `EndObject()`.
    pub fn end_object(&mut self) {
        self.end_scope();
        self.out.push('}');
    }

    /// `BeginArray(multi_line)`.
    pub fn begin_array(&mut self, multi_line: bool) {
        self.out.push('[');
        self.multi_line.push(multi_line);
        self.counter.push(0);
    }

    /// `EndArray()`.
    pub fn end_array(&mut self) {
        self.end_scope();
        self.out.push(']');
    }

    fn end_scope(&mut self) {
        let newline = self.multi_line.pop().unwrap_or(false);
        let items = self.counter.pop().unwrap_or(0);
        if newline && items != 0 {
            self.separator();
        }
    }

    /// The part of `WriteObjectKeyValue` before the value: separator and `"key": `.
    pub fn key(&mut self, key: &str) {
        if self.counter.last().copied().unwrap_or(0) != 0 {
            self.out.push_str(", ");
        }
        self.separator();
        self.out.push('"');
        self.out.push_str(key);
        self.out.push_str("\": ");
        if let Some(c) = self.counter.last_mut() {
            *c += 1;
        }
    }

    /// `WriteArraySeperator()`, the part of `WriteArrayItem` before the value.
    pub fn array_item(&mut self) {
        if self.counter.last().copied().unwrap_or(0) != 0 {
            self.out.push_str(", ");
        }
        if let Some(c) = self.counter.last_mut() {
            *c += 1;
        }
        self.separator();
    }

    /// `WriteString`: a quoted string with dmlc's five escapes.
    pub fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '\r' => self.out.push_str("\\r"),
                '\n' => self.out.push_str("\\n"),
                '\\' => self.out.push_str("\\\\"),
                '\t' => self.out.push_str("\\t"),
                '"' => self.out.push_str("\\\""),
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }

    /// An unsigned number, as `std::ostream << size_t` writes it.
    pub fn number(&mut self, n: usize) {
        let _ = write!(self.out, "{n}");
    }

    /// A `std::vector<std::string>`: multi-line (strings are not plain-old-data).
    pub fn string_array(&mut self, items: &[String]) {
        self.begin_array(true);
        for s in items {
            self.array_item();
            self.string(s);
        }
        self.end_array();
    }

    /// A `std::vector<size_t>`: one line unless it has more than ten elements.
    pub fn index_array(&mut self, items: &[usize]) {
        self.begin_array(items.len() > 10);
        for &n in items {
            self.array_item();
            self.number(n);
        }
        self.end_array();
    }

    /// A `std::map<std::string, std::string>`: one line unless it has more than one entry.
    pub fn string_map<'a>(&mut self, entries: impl ExactSizeIterator<Item = (&'a str, &'a str)>) {
        self.begin_object(entries.len() > 1);
        for (k, v) in entries {
            self.key(k);
            self.string(v);
        }
        self.end_object();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Json, JsonError> {
        parse_value(text).map(|(v, _)| v)
    }

    #[test]
    fn parses_values_with_offsets() {
        let v = parse(" {\"a\": [1, -2.5e3, \"x\\ny\"], \"b\": null, \"c\": true}").unwrap();
        assert_eq!(v.offset, 1);
        let JsonValue::Object(m) = v.value else {
            panic!()
        };
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].1, "a");
        assert_eq!(m[0].0, 2);
        let JsonValue::Array(items) = &m[0].2.value else {
            panic!()
        };
        assert_eq!(items[0].value, JsonValue::Number("1".into()));
        assert_eq!(items[0].offset, 8);
        assert_eq!(items[1].value, JsonValue::Number("-2.5e3".into()));
        assert_eq!(items[2].value, JsonValue::String("x\ny".into()));
        assert_eq!(m[1].2.value, JsonValue::Null);
        assert_eq!(m[2].2.value, JsonValue::Bool(true));
    }

    #[test]
    fn unicode_escapes() {
        let v = parse(r#""\u00e9\ud83d\ude00\/""#).unwrap();
        assert_eq!(v.value, JsonValue::String("é😀/".into()));
        assert!(parse(r#""\ud83d\u0041""#).is_err());
        assert!(parse(r#""\udc00""#).is_err());
        assert!(parse(r#""\u12""#).is_err());
    }

    #[test]
    fn errors_have_offsets() {
        let cases: &[(&str, usize)] = &[
            ("", 0),
            ("{", 1),
            ("{\"a\" 1}", 5),
            ("{\"a\": 1,}", 8),
            ("[1 2]", 3),
            ("[1,", 3),
            ("\"abc", 0),
            ("\"a\nb\"", 2),
            ("\"\\q\"", 1),
            ("-", 1),
            ("1.", 2),
            ("1e", 2),
            ("tru", 0),
            ("@", 0),
            ("{1: 2}", 1),
        ];
        for &(text, offset) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.offset, offset, "{text:?}: {}", e.message);
        }
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let text = "[".repeat(100_000);
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("deeply"));
        let ok = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn writer_layout() {
        let mut w = JsonWriter::new();
        w.begin_object(true);
        w.key("root");
        w.number(1);
        w.key("list");
        w.index_array(&[1, 2]);
        w.key("strs");
        w.string_array(&["a\"b".into()]);
        w.key("empty");
        w.string_array(&[]);
        w.key("one");
        w.string_map([("k", "v")].into_iter());
        w.end_object();
        assert_eq!(
            w.finish(),
            "{\n  \"root\": 1, \n  \"list\": [1, 2], \n  \"strs\": [\n    \"a\\\"b\"\n  ], \n  \
             \"empty\": [], \n  \"one\": {\"k\": \"v\"}\n}"
        );
    }
}
