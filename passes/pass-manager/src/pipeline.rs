//! Textual pipelines: `InferType, FoldConstant, FuseOps(fuse_opt_level=2),
//! Sequential(A, B)`.
//!
//! A comma list of several passes is a `Sequential` (opt_level 0); one pass
//! alone is run directly. Keyword arguments take ints, floats, `true`/
//! `false`, JSON strings, `[lists]` and `{"maps": …}`. Errors carry the byte
//! range of the bad spot, and [`PipelineError::render`] draws a caret under
//! it. Printing a parsed pipeline gives it back in canonical form.
//!
//! Nesting (`Sequential(` inside `Sequential(`, lists inside lists) is
//! bounded by [`MAX_PIPELINE_DEPTH`]: reading, building, describing and
//! running a pipeline all recurse once per level, so a deeper pipeline gets
//! an error at the opening delimiter instead of overflowing the stack.

use crate::{registry, Pass, PassInfo, Sequential};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// How deeply passes and argument values may nest. Real pipelines nest a
/// few levels; 64 keeps the recursion of reading, building and running a
/// pipeline far inside the smallest thread stack it runs on (the CLI's
/// main thread, 8 MiB by default; an embedder's 2 MiB threads too).
pub const MAX_PIPELINE_DEPTH: usize = 64;

/// A value of a keyword argument.
#[derive(Debug, Clone, PartialEq)]
pub enum PipelineValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    List(Vec<PipelineValue>),
    Map(Vec<(String, PipelineValue)>),
}

impl PipelineValue {
    pub fn type_name(&self) -> &'static str {
        match self {
            PipelineValue::Int(_) => "an integer",
            PipelineValue::Float(_) => "a float",
            PipelineValue::Bool(_) => "a boolean",
            PipelineValue::Str(_) => "a string",
            PipelineValue::List(_) => "a list",
            PipelineValue::Map(_) => "a map",
        }
    }
}

impl fmt::Display for PipelineValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PipelineValue::Int(i) => write!(f, "{i}"),
            PipelineValue::Float(x) => {
                if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x}")
                }
            }
            PipelineValue::Bool(b) => write!(f, "{b}"),
            PipelineValue::Str(s) => write!(f, "{}", serde_json::to_string(s).unwrap_or_default()),
            PipelineValue::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            PipelineValue::Map(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {v}", serde_json::to_string(k).unwrap_or_default())?;
                }
                f.write_str("}")
            }
        }
    }
}

/// One pass of a pipeline: `Name`, `Name(key=value, …)` or
/// `Sequential(A, B, opt_level=…)`.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineItem {
    pub name: String,
    /// Nested passes (only `Sequential` takes them).
    pub passes: Vec<PipelineItem>,
    pub args: Vec<(String, PipelineValue)>,
    /// Where the item is in the text.
    pub range: Range<usize>,
    /// Where each argument's value is, for error messages.
    pub arg_ranges: Vec<Range<usize>>,
}

/// A parsed pipeline: one or more passes.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    pub items: Vec<PipelineItem>,
}

/// A pipeline that could not be read or built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineError {
    pub message: String,
    pub range: Range<usize>,
}

impl PipelineError {
    pub fn new(message: impl Into<String>, range: Range<usize>) -> PipelineError {
        PipelineError {
            message: message.into(),
            range,
        }
    }

    /// The message, the pipeline text and a caret line under the bad spot.
    /// A long line is cut to a window around the spot (`…` marks the cuts),
    /// so that a 100,000-character pipeline gives a readable error.
    pub fn render(&self, text: &str) -> String {
        // Pipelines are one line; show the line that holds the error.
        let start = self.range.start.min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let chars: Vec<char> = text[line_start..line_end].chars().collect();
        let column = text[line_start..start].chars().count();
        let width = text[start..self.range.end.clamp(start, line_end)]
            .chars()
            .count()
            .max(1);
        // Up to CONTEXT characters either side of the spot (and all of a
        // spot that is longer).
        const CONTEXT: usize = 60;
        let from = column.saturating_sub(CONTEXT);
        let to = (column + width + CONTEXT).min(chars.len());
        let mut shown: String = chars[from..to].iter().collect();
        let mut caret_column = column - from;
        if from > 0 {
            shown.insert(0, '…');
            caret_column += 1;
        }
        if to < chars.len() {
            shown.push('…');
        }
        format!(
            "error: {}\n  | {}\n  | {}{}\n",
            self.message,
            shown,
            " ".repeat(caret_column),
            "^".repeat(width)
        )
    }
}

impl PipelineItem {
    /// How many parentheses of passes nest in this item (`A` is 0,
    /// `Sequential(A)` 1).
    pub fn depth(&self) -> usize {
        if self.passes.is_empty() && self.args.is_empty() {
            0
        } else {
            1 + self
                .passes
                .iter()
                .map(PipelineItem::depth)
                .max()
                .unwrap_or(0)
        }
    }
}

impl Pipeline {
    /// The deepest nesting of its items.
    pub fn depth(&self) -> usize {
        self.items
            .iter()
            .map(PipelineItem::depth)
            .max()
            .unwrap_or(0)
    }
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for PipelineItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if self.passes.is_empty() && self.args.is_empty() {
            return Ok(());
        }
        f.write_str("(")?;
        let mut first = true;
        for pass in &self.passes {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{pass}")?;
        }
        for (key, value) in &self.args {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{key}={value}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

// ---- reading ----

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Float(f64),
    Str(String),
    Punct(char),
    End,
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    tok: Tok,
    tok_range: Range<usize>,
    /// Where the last consumed token ended.
    last_end: usize,
    /// How many `(`, `[` and `{` are open.
    depth: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Result<Reader<'a>, PipelineError> {
        let mut r = Reader {
            text,
            pos: 0,
            tok: Tok::End,
            tok_range: 0..0,
            last_end: 0,
            depth: 0,
        };
        r.advance()?;
        Ok(r)
    }

    fn advance(&mut self) -> Result<(), PipelineError> {
        self.last_end = self.tok_range.end;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        let start = self.pos;
        if start >= bytes.len() {
            self.tok = Tok::End;
            self.tok_range = start..start;
            return Ok(());
        }
        let c = bytes[start];
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            let len = bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_' || **b == b'.')
                .count();
            self.pos += len;
            Tok::Ident(self.text[start..self.pos].to_string())
        } else if c.is_ascii_digit() || c == b'-' || c == b'+' {
            let len = bytes[start..]
                .iter()
                .enumerate()
                .take_while(|(i, b)| {
                    b.is_ascii_digit()
                        || matches!(b, b'.' | b'e' | b'E')
                        || (matches!(b, b'-' | b'+')
                            && (*i == 0 || matches!(bytes[start + i - 1], b'e' | b'E')))
                })
                .count();
            self.pos += len;
            let text = &self.text[start..self.pos];
            if let Ok(i) = text.parse::<i64>() {
                Tok::Int(i)
            } else if let Ok(x) = text.parse::<f64>() {
                Tok::Float(x)
            } else {
                return Err(PipelineError::new(
                    format!("`{text}` is not a number"),
                    start..self.pos,
                ));
            }
        } else if c == b'"' {
            let mut i = start + 1;
            let mut closed = false;
            while i < bytes.len() {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'"' => {
                        closed = true;
                        i += 1;
                        break;
                    }
                    _ => i += 1,
                }
            }
            if !closed {
                return Err(PipelineError::new(
                    "this string is not closed",
                    start..bytes.len(),
                ));
            }
            self.pos = i;
            let literal = &self.text[start..i];
            match serde_json::from_str::<String>(literal) {
                Ok(s) => Tok::Str(s),
                Err(e) => return Err(PipelineError::new(format!("invalid string: {e}"), start..i)),
            }
        } else if "()[]{},=:".contains(c as char) {
            self.pos += 1;
            Tok::Punct(c as char)
        } else {
            let ch = self.text[start..].chars().next().unwrap_or('?');
            return Err(PipelineError::new(
                format!("unexpected `{ch}`"),
                start..start + ch.len_utf8(),
            ));
        };
        self.tok = tok;
        self.tok_range = start..self.pos;
        Ok(())
    }

    fn describe(&self) -> String {
        match &self.tok {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(i) => format!("`{i}`"),
            Tok::Float(x) => format!("`{x}`"),
            Tok::Str(s) => format!("{s:?}"),
            Tok::Punct(c) => format!("`{c}`"),
            Tok::End => "the end of the pipeline".into(),
        }
    }

    fn expected(&self, what: &str) -> PipelineError {
        PipelineError::new(
            format!("expected {what}, found {}", self.describe()),
            self.tok_range.clone(),
        )
    }

    /// Enters one more level of nesting at the current token (an opening
    /// delimiter), or refuses past [`MAX_PIPELINE_DEPTH`].
    fn open(&mut self) -> Result<(), PipelineError> {
        self.depth += 1;
        if self.depth > MAX_PIPELINE_DEPTH {
            return Err(PipelineError::new(
                format!("the pipeline nests deeper than {MAX_PIPELINE_DEPTH} levels here"),
                self.tok_range.clone(),
            ));
        }
        Ok(())
    }

    fn eat(&mut self, c: char) -> Result<bool, PipelineError> {
        if self.tok == Tok::Punct(c) {
            self.advance()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn item(&mut self) -> Result<PipelineItem, PipelineError> {
        let start = self.tok_range.start;
        let Tok::Ident(name) = self.tok.clone() else {
            return Err(self.expected("a pass name"));
        };
        self.advance()?;
        let mut item = PipelineItem {
            name,
            passes: Vec::new(),
            args: Vec::new(),
            range: start..self.last_end,
            arg_ranges: Vec::new(),
        };
        if self.tok == Tok::Punct('(') {
            self.open()?;
            self.advance()?;
            if !self.eat(')')? {
                loop {
                    self.argument(&mut item)?;
                    if self.eat(')')? {
                        break;
                    }
                    if !self.eat(',')? {
                        return Err(self.expected("`,` or `)`"));
                    }
                    if self.eat(')')? {
                        break;
                    }
                }
            }
            item.range = start..self.last_end;
            self.depth -= 1;
        }
        Ok(item)
    }

    fn argument(&mut self, item: &mut PipelineItem) -> Result<(), PipelineError> {
        let Tok::Ident(name) = self.tok.clone() else {
            return Err(self.expected("a keyword argument or a pass"));
        };
        let name_range = self.tok_range.clone();
        // `key=value`, or a nested pass (for Sequential).
        let save = (
            self.pos,
            self.tok.clone(),
            self.tok_range.clone(),
            self.last_end,
        );
        self.advance()?;
        if self.eat('=')? {
            if item.args.iter().any(|(k, _)| *k == name) {
                return Err(PipelineError::new(
                    format!("`{name}` is given twice"),
                    name_range,
                ));
            }
            let value_start = self.tok_range.start;
            let value = self.value()?;
            item.args.push((name, value));
            item.arg_ranges.push(value_start..self.last_end);
            return Ok(());
        }
        if !item.args.is_empty() {
            return Err(PipelineError::new(
                "a pass cannot follow keyword arguments",
                name_range,
            ));
        }
        (self.pos, self.tok, self.tok_range, self.last_end) = save;
        let nested = self.item()?;
        item.passes.push(nested);
        Ok(())
    }

    fn value(&mut self) -> Result<PipelineValue, PipelineError> {
        let value = match self.tok.clone() {
            Tok::Int(i) => PipelineValue::Int(i),
            Tok::Float(x) => PipelineValue::Float(x),
            Tok::Str(s) => PipelineValue::Str(s),
            Tok::Ident(word) => match word.as_str() {
                "true" | "True" => PipelineValue::Bool(true),
                "false" | "False" => PipelineValue::Bool(false),
                _ => {
                    return Err(PipelineError::new(
                        format!(
                        "expected a value, found `{word}` (strings are written in double quotes)"
                    ),
                        self.tok_range.clone(),
                    ))
                }
            },
            Tok::Punct('[') => {
                self.open()?;
                self.advance()?;
                let mut items = Vec::new();
                if !self.eat(']')? {
                    loop {
                        items.push(self.value()?);
                        if self.eat(']')? {
                            break;
                        }
                        if !self.eat(',')? {
                            return Err(self.expected("`,` or `]`"));
                        }
                    }
                }
                self.depth -= 1;
                return Ok(PipelineValue::List(items));
            }
            Tok::Punct('{') => {
                self.open()?;
                self.advance()?;
                let mut entries = Vec::new();
                if !self.eat('}')? {
                    loop {
                        let Tok::Str(key) = self.tok.clone() else {
                            return Err(self.expected("a string key"));
                        };
                        self.advance()?;
                        if !self.eat(':')? {
                            return Err(self.expected("`:`"));
                        }
                        entries.push((key, self.value()?));
                        if self.eat('}')? {
                            break;
                        }
                        if !self.eat(',')? {
                            return Err(self.expected("`,` or `}`"));
                        }
                    }
                }
                self.depth -= 1;
                return Ok(PipelineValue::Map(entries));
            }
            _ => return Err(self.expected("a value")),
        };
        self.advance()?;
        Ok(value)
    }
}

/// Reads a pipeline.
pub fn parse_pipeline(text: &str) -> Result<Pipeline, PipelineError> {
    let mut reader = Reader::new(text)?;
    let mut items = Vec::new();
    loop {
        items.push(reader.item()?);
        if reader.tok == Tok::End {
            break;
        }
        if !reader.eat(',')? {
            return Err(reader.expected("`,` between passes"));
        }
        if reader.tok == Tok::End {
            break;
        }
    }
    Ok(Pipeline { items })
}

/// Builds the passes of a pipeline through the registry: one item is that
/// pass; several are a `Sequential`.
pub fn build_pipeline(pipeline: &Pipeline) -> Result<Arc<dyn Pass>, PipelineError> {
    if pipeline.items.len() == 1 {
        return build_item(&pipeline.items[0]);
    }
    let passes = pipeline
        .items
        .iter()
        .map(build_item)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(Sequential::new(passes)))
}

/// Reads and builds a pipeline.
pub fn pipeline_from_text(text: &str) -> Result<Arc<dyn Pass>, PipelineError> {
    build_pipeline(&parse_pipeline(text)?)
}

fn build_item(item: &PipelineItem) -> Result<Arc<dyn Pass>, PipelineError> {
    let name_range = item.range.start..item.range.start + item.name.len();
    if item.name == "Sequential" {
        let passes = item
            .passes
            .iter()
            .map(build_item)
            .collect::<Result<Vec<_>, _>>()?;
        let mut info = PassInfo::new("sequential", 0, &[]);
        for ((key, value), range) in item.args.iter().zip(&item.arg_ranges) {
            match (key.as_str(), value) {
                ("opt_level", PipelineValue::Int(level)) => {
                    info.opt_level = crate::target::check_opt_level(*level)
                        .map_err(|e| PipelineError::new(e, range.clone()))?;
                }
                ("name", PipelineValue::Str(name)) => info.name = name.clone(),
                ("required", PipelineValue::List(names)) => {
                    info.required = names
                        .iter()
                        .map(|n| match n {
                            PipelineValue::Str(s) => Ok(s.clone()),
                            _ => Err(PipelineError::new("`required` takes a list of pass names in quotes", range.clone())),
                        })
                        .collect::<Result<_, _>>()?;
                }
                ("opt_level" | "name" | "required", _) => {
                    return Err(PipelineError::new(
                        format!("`{key}` of Sequential does not take {}", value.type_name()),
                        range.clone(),
                    ))
                }
                _ => {
                    return Err(PipelineError::new(
                        format!("Sequential has no parameter `{key}` (it takes opt_level, name and required)"),
                        range.clone(),
                    ))
                }
            }
        }
        return Ok(Arc::new(Sequential::with_info(info, passes)));
    }
    if let Some(nested) = item.passes.first() {
        return Err(PipelineError::new(
            format!(
                "{} takes keyword arguments only; only Sequential takes passes",
                item.name
            ),
            nested.range.clone(),
        ));
    }
    registry::create(&item.name, &item.args).map_err(|error| {
        let range = match error.argument {
            Some(i) => item
                .arg_ranges
                .get(i)
                .cloned()
                .unwrap_or(name_range.clone()),
            None => name_range.clone(),
        };
        PipelineError::new(error.message, range)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_prints_back() {
        let text = r#"InferType,FoldConstant, FuseOps(fuse_opt_level=2), Sequential(A, B(x=[1, 2.5, "s"], m={"k": true}))"#;
        let pipeline = parse_pipeline(text).unwrap();
        let printed = pipeline.to_string();
        assert_eq!(
            printed,
            r#"InferType, FoldConstant, FuseOps(fuse_opt_level=2), Sequential(A, B(x=[1, 2.5, "s"], m={"k": true}))"#
        );
        assert_eq!(parse_pipeline(&printed).unwrap().to_string(), printed);
    }

    #[test]
    fn errors_point_at_the_bad_spot() {
        let text = "InferType, FuseOps(fuse_opt_level=)";
        let error = parse_pipeline(text).unwrap_err();
        assert_eq!(error.message, "expected a value, found `)`");
        assert_eq!(&text[error.range.clone()], ")");
        let rendered = error.render(text);
        assert!(
            rendered.contains("  |                                   ^"),
            "{rendered}"
        );
        let error = parse_pipeline("A B").unwrap_err();
        assert_eq!(error.message, "expected `,` between passes, found `B`");
        let error = parse_pipeline("A(x=1, x=2)").unwrap_err();
        assert_eq!(error.message, "`x` is given twice");
        let error = parse_pipeline("A(x=\"open").unwrap_err();
        assert_eq!(error.message, "this string is not closed");
    }
}
