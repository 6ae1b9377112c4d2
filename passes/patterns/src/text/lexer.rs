//! Tokens of the pattern syntax, read one at a time so that the parser can
//! take the raw text of an embedded Relay expression or type (`is_expr(…)`,
//! `has_type(…)`) and go on after it.

use relay_syntax::{TextRange, TextSize};

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// `nn`, `conv2d`, `is_op`, … (dotted names are joined by the parser).
    Ident(String),
    /// `$name`.
    Capture(String),
    /// `@name`: a named pattern of the project.
    Named(String),
    /// `%name` (or `%` alone: any variable).
    Var(String),
    Int(i64),
    Float(f64),
    Str(String),
    Star,
    Underscore,
    Ellipsis,
    Dot,
    Comma,
    Colon,
    Semi,
    Eq,
    Question,
    Pipe,
    PipeArrow,
    FatArrow,
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Eof,
}

impl Tok {
    /// How the token is named in "expected …, found …" messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Capture(s) => format!("`${s}`"),
            Tok::Named(s) => format!("`@{s}`"),
            Tok::Var(s) => format!("`%{s}`"),
            Tok::Int(i) => format!("`{i}`"),
            Tok::Float(x) => format!("`{x}`"),
            Tok::Str(s) => format!("{s:?}"),
            Tok::Eof => "the end of the pattern".to_string(),
            other => format!("`{}`", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            Tok::Star => "*",
            Tok::Underscore => "_",
            Tok::Ellipsis => "...",
            Tok::Dot => ".",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Semi => ";",
            Tok::Eq => "=",
            Tok::Question => "?",
            Tok::Pipe => "|",
            Tok::PipeArrow => "|>",
            Tok::FatArrow => "=>",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            _ => "",
        }
    }
}

/// A token and where it is.
#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub range: TextRange,
}

/// An error of the lexer: what and where.
#[derive(Debug, Clone)]
pub struct LexError {
    pub message: String,
    pub range: TextRange,
}

pub struct Lexer<'a> {
    text: &'a str,
    pub pos: usize,
}

pub fn range(start: usize, end: usize) -> TextRange {
    TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32))
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, pos: 0 }
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_trivia(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") || trimmed.starts_with('#') {
                let line = trimmed.find('\n').unwrap_or(trimmed.len());
                self.pos += line;
            } else {
                return;
            }
        }
    }

    fn word(&mut self) -> String {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .find(|&(_, c)| !is_ident_char(c))
            .map_or(rest.len(), |(i, _)| i);
        self.pos += len;
        rest[..len].to_string()
    }

    pub fn next(&mut self) -> Result<Token, LexError> {
        self.skip_trivia();
        let start = self.pos;
        let rest = self.rest();
        let Some(c) = rest.chars().next() else {
            return Ok(Token {
                tok: Tok::Eof,
                range: range(start, start),
            });
        };
        let two = rest.get(..2).unwrap_or("");
        let simple = |tok: Tok, len: usize, lexer: &mut Lexer| {
            lexer.pos += len;
            Ok(Token {
                tok,
                range: range(start, start + len),
            })
        };
        if rest.starts_with("...") {
            return simple(Tok::Ellipsis, 3, self);
        }
        match two {
            "|>" => return simple(Tok::PipeArrow, 2, self),
            "=>" => return simple(Tok::FatArrow, 2, self),
            _ => {}
        }
        match c {
            '*' => return simple(Tok::Star, 1, self),
            '.' => return simple(Tok::Dot, 1, self),
            ',' => return simple(Tok::Comma, 1, self),
            ':' => return simple(Tok::Colon, 1, self),
            ';' => return simple(Tok::Semi, 1, self),
            '=' => return simple(Tok::Eq, 1, self),
            '?' => return simple(Tok::Question, 1, self),
            '|' => return simple(Tok::Pipe, 1, self),
            '(' => return simple(Tok::LParen, 1, self),
            ')' => return simple(Tok::RParen, 1, self),
            '{' => return simple(Tok::LBrace, 1, self),
            '}' => return simple(Tok::RBrace, 1, self),
            '[' => return simple(Tok::LBracket, 1, self),
            ']' => return simple(Tok::RBracket, 1, self),
            _ => {}
        }
        if matches!(c, '$' | '@' | '%') {
            self.pos += 1;
            let name = self.word();
            if name.is_empty() && c != '%' {
                return Err(LexError {
                    message: format!("`{c}` must be followed by a name"),
                    range: range(start, self.pos),
                });
            }
            let tok = match c {
                '$' => Tok::Capture(name),
                '@' => Tok::Named(name),
                _ => Tok::Var(name),
            };
            return Ok(Token {
                tok,
                range: range(start, self.pos),
            });
        }
        if c == '"' {
            let mut value = String::new();
            let mut chars = rest.char_indices().skip(1);
            while let Some((i, ch)) = chars.next() {
                match ch {
                    '"' => {
                        self.pos += i + 1;
                        return Ok(Token {
                            tok: Tok::Str(value),
                            range: range(start, self.pos),
                        });
                    }
                    '\\' => match chars.next() {
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, other)) => value.push(other),
                        None => break,
                    },
                    other => value.push(other),
                }
            }
            return Err(LexError {
                message: "unterminated string".to_string(),
                range: range(start, self.text.len()),
            });
        }
        if c.is_ascii_digit() || (c == '-' && rest[1..].starts_with(|d: char| d.is_ascii_digit())) {
            let mut len = usize::from(c == '-');
            let bytes = rest.as_bytes();
            while len < bytes.len() && bytes[len].is_ascii_digit() {
                len += 1;
            }
            let mut is_float = false;
            if len + 1 < bytes.len() && bytes[len] == b'.' && bytes[len + 1].is_ascii_digit() {
                is_float = true;
                len += 1;
                while len < bytes.len() && bytes[len].is_ascii_digit() {
                    len += 1;
                }
            }
            if len < bytes.len() && (bytes[len] == b'e' || bytes[len] == b'E') {
                let mut e = len + 1;
                if e < bytes.len() && (bytes[e] == b'-' || bytes[e] == b'+') {
                    e += 1;
                }
                if e < bytes.len() && bytes[e].is_ascii_digit() {
                    is_float = true;
                    len = e;
                    while len < bytes.len() && bytes[len].is_ascii_digit() {
                        len += 1;
                    }
                }
            }
            let text = &rest[..len];
            self.pos += len;
            let r = range(start, self.pos);
            let tok = if is_float {
                text.parse().map(Tok::Float).map_err(|_| ())
            } else {
                text.parse().map(Tok::Int).map_err(|_| ())
            };
            return tok
                .map(|tok| Token { tok, range: r })
                .map_err(|()| LexError {
                    message: format!("`{text}` is not a number this syntax can hold"),
                    range: r,
                });
        }
        if is_ident_start(c) {
            let word = self.word();
            let tok = if word == "_" {
                Tok::Underscore
            } else {
                Tok::Ident(word)
            };
            return Ok(Token {
                tok,
                range: range(start, self.pos),
            });
        }
        let len = c.len_utf8();
        Err(LexError {
            message: format!("unexpected character `{c}`"),
            range: range(start, start + len),
        })
    }

    /// The raw text up to the `)` that closes an already consumed `(`
    /// (parentheses and brackets inside are balanced, strings skipped);
    /// the lexer stands after the `)`. Returns the text's start offset.
    pub fn raw_until_close(&mut self, open: TextRange) -> Result<(usize, &'a str), LexError> {
        let start = self.pos;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        for (i, c) in self.rest().char_indices() {
            if in_string {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if depth > 0 => depth -= 1,
                ')' => {
                    let text = &self.text[start..start + i];
                    self.pos = start + i + 1;
                    return Ok((start, text));
                }
                _ => {}
            }
        }
        Err(LexError {
            message: "this `(` is never closed".to_string(),
            range: open,
        })
    }
}
