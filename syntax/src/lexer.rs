//! The tokenizer: Relay text into tokens with exact byte lengths.
//!
//! It follows TVM v0.13's `tokenizer.h` decision for decision, so that the
//! same text splits into the same tokens (`%a/%b` is the local `a/` then `%b`,
//! `inffoo` is `inff` then `oo`, `%let` is `%` then `let`, `**/` does not
//! close a block comment). Where TVM aborts or reads to the end of the file
//! (an unterminated string, a bad `#[…]`), we produce an error token bounded
//! by the line instead, so one typo never swallows the rest of the file.
//! One deliberate difference: a backslash escapes the next character in a
//! string, so every string our printer writes reads back.
//!
//! The tokens go to a [`TokenSink`]: a plain list for [`tokenize`], or, for
//! the parser, `build_tree::Lexed`, which numbers each token for the tree
//! where it is made (the kind is then mostly known) instead of in a second
//! pass over the list.

use crate::literal::parse_number;
use crate::syntax_error::SyntaxErrorKind;
use crate::SyntaxKind::{self, *};
use rowan::{TextRange, TextSize};

/// One token: its kind and its length in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: SyntaxKind,
    pub len: TextSize,
}

/// A lexical error with the byte range it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub kind: SyntaxErrorKind,
    pub range: TextRange,
    pub message: String,
}

/// Splits `text` into tokens that cover it exactly, and lists lexical errors.
pub fn tokenize(text: &str) -> (Vec<Token>, Vec<LexError>) {
    // Real models average 2 to 5 bytes a token: one allocation, rarely
    // regrown (regrowing copies the list, and at this size may touch fresh
    // pages).
    lex(text, Vec::with_capacity(text.len() / 2 + 16))
}

/// Where the lexer puts its tokens: a list of [`Token`]s for [`tokenize`],
/// or what the parser and the tree builder need (`build_tree::Lexed`),
/// made in the same pass so that the tokens are not walked twice.
pub(crate) trait TokenSink {
    /// Takes the token of `kind` at `text[start..start + len]`.
    fn push(&mut self, text: &str, kind: SyntaxKind, start: usize, len: usize);

    /// Takes a `WHITESPACE` token of `len` spaces, the first of which may
    /// be a newline instead, at `text[start..start + len]`.
    #[inline]
    fn push_spaces(&mut self, text: &str, start: usize, len: usize, _newline: bool) {
        self.push(text, WHITESPACE, start, len);
    }
}

impl TokenSink for Vec<Token> {
    #[inline]
    fn push(&mut self, _text: &str, kind: SyntaxKind, _start: usize, len: usize) {
        self.push(Token {
            kind,
            len: TextSize::from(len as u32),
        });
    }
}

/// Tokenizes `text` into `sink`; returns it with the lexical errors.
pub(crate) fn lex<S: TokenSink>(text: &str, sink: S) -> (S, Vec<LexError>) {
    let (sink, errors, _) = lex_with(text, sink, false);
    (sink, errors)
}

/// [`lex`], optionally lenient: then names as frontends write them
/// (`%conv1.weight`, `%input_tensor:0`, `%1_bn.gamma`, `@foo.bar`) are one
/// token each, and the third result lists their ranges.
pub(crate) fn lex_with<S: TokenSink>(
    text: &str,
    sink: S,
    lenient: bool,
) -> (S, Vec<LexError>, Vec<TextRange>) {
    let mut lexer = Lexer {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        sink,
        errors: Vec::new(),
        no_bracket_from: usize::MAX,
        no_quote_from: usize::MAX,
        lenient,
        frontend_names: Vec::new(),
    };
    while lexer.pos < lexer.bytes.len() {
        lexer.lex_one();
        lexer.trailing_space();
    }
    (lexer.sink, lexer.errors, lexer.frontend_names)
}

struct Lexer<'a, S> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    sink: S,
    errors: Vec<LexError>,
    /// No `]` at or after this offset (a failed search need not be
    /// repeated: keeps unclosed `meta[`/`#[` runs linear).
    no_bracket_from: usize,
    /// No `"` and no `\\` at or after this offset (the same for strings).
    no_quote_from: usize,
    /// Whether names as frontends write them are read as one token.
    lenient: bool,
    /// The ranges of such names (lenient mode only).
    frontend_names: Vec<TextRange>,
}

fn is_ident_start(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphabetic()
}

/// Whether `c` may continue an identifier (`_`, `/`, letters, digits), as a
/// table: one load per byte in the loops that scan names.
static IDENT_CONTINUE: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = b == b'_' || b == b'/' || b.is_ascii_alphanumeric();
        c += 1;
    }
    table
};

/// The length of the run of identifier characters at the start of `bytes`.
#[inline]
/// The length of the non-finite float literal at the start of `rest`, if
/// there is one. TVM's tokenizer reads `inff` (and stops there: `inffoo` is
/// `inff` then `oo`); its printer also writes `inff16`, `inff64` and, for a
/// NaN, `nanf`, `nanf16`, `nanf64` (C++ stream output of the value, then the
/// dtype suffix). We read those back too, so that every constant we print
/// parses: a width is taken when it ends the word, and `nanf` only when the
/// whole word is the literal (`nanfoo` stays a name).
fn special_float_len(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    let (head, whole_word) = if rest.starts_with("inff") {
        (4, false)
    } else if rest.starts_with("nanf") {
        (4, true)
    } else {
        return None;
    };
    let digits = bytes[head..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let word_ends =
        |at: usize| !matches!(bytes.get(at), Some(&c) if IDENT_CONTINUE[usize::from(c)]);
    if digits > 0 && word_ends(head + digits) {
        Some(head + digits)
    } else if !whole_word || word_ends(head) {
        Some(head)
    } else {
        None
    }
}

fn ident_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&c| !IDENT_CONTINUE[usize::from(c)])
        .unwrap_or(bytes.len())
}

/// The keyword spelled `word`, if any. Most names cannot be one (keywords
/// are 2 to 9 bytes and start with one of a few letters): they are turned
/// away before the comparisons.
#[inline]
fn keyword(word: &str) -> Option<SyntaxKind> {
    match word.as_bytes() {
        [b'd' | b'e' | b'f' | b'i' | b'l' | b'm' | b'r' | b't', _, ..] if word.len() <= 9 => {
            SyntaxKind::from_keyword(word)
        }
        _ => None,
    }
}

fn is_numeric(c: u8) -> bool {
    c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n')
}

impl<'a, S: TokenSink> Lexer<'a, S> {
    /// The offset of the first `]` at or after `from`, remembering failures
    /// so that a run of unclosed `meta[` or `#[` stays linear.
    fn find_bracket(&mut self, from: usize) -> Option<usize> {
        if from >= self.no_bracket_from || from > self.bytes.len() {
            return None;
        }
        match self.bytes[from..].iter().position(|&c| c == b']') {
            Some(i) => Some(from + i),
            None => {
                self.no_bracket_from = from;
                None
            }
        }
    }

    fn peek(&self, offset: usize) -> Option<u8> {
        self.bytes.get(self.pos + offset).copied()
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    #[inline]
    fn push(&mut self, kind: SyntaxKind, len: usize) {
        debug_assert!(len > 0);
        self.sink.push(self.text, kind, self.pos, len);
        self.pos += len;
    }

    fn error(&mut self, start: usize, len: usize, message: impl Into<String>) {
        self.error_of(SyntaxErrorKind::Lexical, start, len, message);
    }

    /// A malformed or out-of-range number.
    fn number_error(&mut self, start: usize, len: usize, message: impl Into<String>) {
        self.error_of(SyntaxErrorKind::Number, start, len, message);
    }

    fn error_of(
        &mut self,
        kind: SyntaxErrorKind,
        start: usize,
        len: usize,
        message: impl Into<String>,
    ) {
        self.errors.push(LexError {
            kind,
            range: TextRange::at(TextSize::from(start as u32), TextSize::from(len as u32)),
            message: message.into(),
        });
    }

    /// Length of the rest of the current line (up to, not including, `\n`).
    fn line_len_from(&self, start: usize) -> usize {
        self.bytes[start..]
            .iter()
            .position(|&c| c == b'\n')
            .unwrap_or(self.bytes.len() - start)
    }

    #[inline(always)]
    fn lex_one(&mut self) {
        let c = self.bytes[self.pos];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => self.whitespace(),
            b'"' => self.string(),
            b'-' => self.minus(),
            b'0'..=b'9' => {
                let len = self.number_len(self.pos);
                self.number(len);
            }
            // Only these letters can start a token that is not an
            // identifier; test the prefix only for them.
            b'i' | b'n' => match special_float_len(self.rest()) {
                Some(len) => self.push(FLOAT, len),
                None => self.identifier(),
            },
            b'm' if self.rest().starts_with("meta[") => self.meta_ref(),
            b'.' => self.push(DOT, 1),
            b',' => self.push(COMMA, 1),
            b'=' => self.push(EQ, 1),
            b';' => self.push(SEMICOLON, 1),
            b':' => self.push(COLON, 1),
            b'(' => self.push(L_PAREN, 1),
            b')' => self.push(R_PAREN, 1),
            b'+' => self.push(PLUS, 1),
            b'*' => self.push(STAR, 1),
            b'<' => self.push(L_ANGLE, 1),
            b'>' => self.push(R_ANGLE, 1),
            b'{' => self.push(L_CURLY, 1),
            b'}' => self.push(R_CURLY, 1),
            b'[' => self.push(L_BRACK, 1),
            b']' => self.push(R_BRACK, 1),
            b'!' => self.push(BANG, 1),
            b'?' => self.push(QUESTION, 1),
            b'@' => match self.plain_identifier_len(self.pos + 1) {
                Some(len) => {
                    let plain = 1 + len;
                    let len = self.frontend_name_len(self.pos, plain);
                    if len > plain {
                        self.note_frontend_name(self.pos, len);
                    }
                    self.push(GLOBAL, len)
                }
                None => self.push(AT, 1),
            },
            b'#' => self.attribute(),
            b'%' => self.percent(),
            b'/' => self.slash(),
            _ if is_ident_start(c) => self.identifier(),
            _ => self.unknown(),
        }
    }

    /// The white space after a token, when it is a newline or a space and
    /// then spaces only (after every comma, colon and `;`, around every
    /// `=`): the commonest tokens of all, taken here without a second trip
    /// through `lex_one`'s dispatch. It is what `whitespace` would make of
    /// them when no other white space follows.
    #[inline(always)]
    fn trailing_space(&mut self) {
        let start = self.pos;
        let newline = match self.bytes.get(start) {
            Some(b' ') => false,
            Some(b'\n') => true,
            _ => return,
        };
        let mut end = start + 1;
        while self.bytes.get(end) == Some(&b' ') {
            end += 1;
        }
        if matches!(self.bytes.get(end), Some(b'\t' | b'\n' | b'\r')) {
            return;
        }
        self.sink
            .push_spaces(self.text, start, end - start, newline);
        self.pos = end;
    }

    fn whitespace(&mut self) {
        let start = self.pos;
        let mut i = start;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b' ' | b'\t' | b'\n' => i += 1,
                b'\r' if self.bytes.get(i + 1) == Some(&b'\n') => i += 2,
                _ => break,
            }
        }
        if i == start {
            // A carriage return not followed by a newline.
            self.error(
                start,
                1,
                "\\r carriage returns must be followed by a \\n in the TVM text format",
            );
            self.push(ERROR_TOKEN, 1);
        } else {
            self.push(WHITESPACE, i - start);
        }
    }

    /// `"…"`. Unlike TVM, a backslash escapes the next character, so the
    /// escaped strings our printer writes (`\"`, `\\`, `\n`, `\xHH`) read
    /// back; TVM's own corpus never has a backslash in a string.
    fn string(&mut self) {
        let start = self.pos;
        let mut i = start + 1;
        let mut end = None;
        let mut saw_backslash = false;
        if i >= self.no_quote_from {
            i = self.bytes.len();
        }
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'\\' => {
                    saw_backslash = true;
                    i += 2
                }
                b'"' => {
                    end = Some(i);
                    break;
                }
                _ => i += 1,
            }
        }
        if end.is_none() && !saw_backslash {
            self.no_quote_from = self.no_quote_from.min(start + 1);
        }
        match end {
            Some(end) => self.push(STRING, end + 1 - start),
            None => {
                let len = self.line_len_from(start);
                self.error(start, len, "unterminated string literal");
                self.push(ERROR_TOKEN, len);
            }
        }
    }

    /// A run of `-`: folded into a following number or `inff`, else one `-`.
    fn minus(&mut self) {
        let negs = self.bytes[self.pos..]
            .iter()
            .take_while(|&&c| c == b'-')
            .count();
        let after = self.pos + negs;
        match self.bytes.get(after) {
            Some(c) if c.is_ascii_digit() => {
                let len = negs + self.number_len(after);
                self.number(len);
            }
            _ if special_float_len(&self.text[after..]).is_some() => {
                let len = special_float_len(&self.text[after..]).unwrap_or(0);
                self.push(FLOAT, negs + len)
            }
            // TVM lexes the run one `-` at a time; each ends up a minus.
            _ => {
                for _ in 0..negs {
                    self.push(MINUS, 1);
                }
            }
        }
    }

    /// The length of a number starting at `start` (a digit): the numeric run,
    /// then an optional `f`/`i` and a second numeric run (the width).
    fn number_len(&self, start: usize) -> usize {
        let mut i = start;
        while i < self.bytes.len() && is_numeric(self.bytes[i]) {
            i += 1;
        }
        if i < self.bytes.len() && matches!(self.bytes[i], b'f' | b'i') {
            i += 1;
            while i < self.bytes.len() && is_numeric(self.bytes[i]) {
                i += 1;
            }
        }
        i - start
    }

    fn number(&mut self, len: usize) {
        let start = self.pos;
        let text = &self.text[start..start + len];
        // Fast path for the common plain integer: up to 18 digits always fit
        // in an i64, which is all `parse_number` would check.
        if len <= 18 && text.bytes().all(|c| c.is_ascii_digit()) {
            self.push(INT, len);
            return;
        }
        let body = text.trim_start_matches('-');
        let is_float = body.contains('f');
        if let Err(message) = parse_number(text) {
            self.number_error(start, len, message);
        }
        self.push(if is_float { FLOAT } else { INT }, len);
    }

    /// The length of the identifier TVM's tokenizer would produce at `at`, if
    /// it would produce a plain identifier there (not a keyword, not `inff…`,
    /// not `meta[`). This decides whether `%`/`@` merge with what follows.
    fn plain_identifier_len(&self, at: usize) -> Option<usize> {
        let first = *self.bytes.get(at)?;
        if !is_ident_start(first) {
            return None;
        }
        let rest = &self.text[at..];
        if rest.starts_with("inff") || rest.starts_with("meta[") {
            return None;
        }
        let len = ident_len(&self.bytes[at..]);
        if keyword(&self.text[at..at + len]).is_some() {
            return None;
        }
        Some(len)
    }

    fn percent(&mut self) {
        let start = self.pos;
        let digits = self.bytes[start + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 {
            // Up to 18 digits always fit in an i64.
            if digits > 18
                && self.text[start + 1..start + 1 + digits]
                    .parse::<i64>()
                    .is_err()
            {
                self.number_error(
                    start,
                    1 + digits,
                    format!(
                        "invalid integer number `{}`",
                        &self.text[start + 1..start + 1 + digits]
                    ),
                );
            }
            if self.lenient {
                // `%1_bn.gamma`, `%1.weight`: a name that starts with a digit.
                let after = start + 1 + digits;
                let letter_follows = self
                    .bytes
                    .get(after)
                    .is_some_and(|&c| c == b'_' || c.is_ascii_alphabetic());
                let base = if letter_follows {
                    1 + ident_len(&self.bytes[start + 1..])
                } else {
                    1 + digits
                };
                let len = self.frontend_name_len(start, base);
                if letter_follows || len > base {
                    self.note_frontend_name(start, len);
                    self.push(LOCAL, len);
                    return;
                }
            }
            self.push(GRAPH, 1 + digits);
        } else if let Some(len) = self.plain_identifier_len(start + 1) {
            let plain = 1 + len;
            let len = self.frontend_name_len(start, plain);
            if len > plain {
                self.note_frontend_name(start, len);
            }
            self.push(LOCAL, len);
        } else {
            self.push(PERCENT, 1);
        }
    }

    /// In lenient mode, the length of the name starting at `start` whose
    /// plain part is `len` bytes long, extended over what frontends put in
    /// names: `.word` (`%conv1.weight`), `.N` when a `.word` follows
    /// (`%features.0.weight`; a lone `%t.0` stays a tuple projection) and
    /// `:N` (`%input_tensor:0`). Strict mode, and a name with nothing to
    /// extend, keep `len`.
    fn frontend_name_len(&self, start: usize, len: usize) -> usize {
        if !self.lenient {
            return len;
        }
        let b = self.bytes;
        let mut end = start + len;
        loop {
            match b.get(end) {
                Some(b'.') => {
                    let run = ident_len(&b[end + 1..]);
                    if run == 0 {
                        break;
                    }
                    let word = &b[end + 1..end + 1 + run];
                    let all_digits = word.iter().all(u8::is_ascii_digit);
                    let word_follows = b.get(end + 1 + run) == Some(&b'.')
                        && b.get(end + 2 + run).is_some_and(|&c| is_ident_start(c));
                    if all_digits && !word_follows {
                        break;
                    }
                    end += 1 + run;
                }
                Some(b':') if b.get(end + 1).is_some_and(u8::is_ascii_digit) => {
                    end += 1 + ident_len(&b[end + 1..]);
                }
                _ => break,
            }
        }
        end - start
    }

    /// Remembers the name at `text[start..start + len]` for its warning.
    fn note_frontend_name(&mut self, start: usize, len: usize) {
        self.frontend_names.push(TextRange::at(
            TextSize::from(start as u32),
            TextSize::from(len as u32),
        ));
    }

    fn slash(&mut self) {
        match self.peek(1) {
            Some(b'/') => {
                let len = self.line_len_from(self.pos);
                self.push(LINE_COMMENT, len);
            }
            Some(b'*') => self.block_comment(),
            _ => self.push(SLASH, 1),
        }
    }

    /// TVM's comment state machine, quirks included: `/*` nests, and a `*`
    /// that is not followed by `/` consumes the next character, so `**/`
    /// does not close the comment.
    fn block_comment(&mut self) {
        let start = self.pos;
        let b = self.bytes;
        let mut i = start + 2;
        let mut nesting = 1u32;
        #[derive(PartialEq)]
        enum State {
            Proceed,
            Forward,
            Backward,
        }
        let mut state = State::Proceed;
        let mut closed = false;
        while i < b.len() {
            match state {
                State::Proceed => {
                    if b[i] == b'/' {
                        state = State::Forward;
                    } else if b[i] == b'*' {
                        state = State::Backward;
                    }
                    i += 1;
                }
                State::Forward => {
                    if b[i] == b'*' {
                        nesting += 1;
                        i += 1;
                    }
                    state = State::Proceed;
                }
                State::Backward => {
                    if b[i] == b'/' {
                        nesting -= 1;
                        if nesting == 0 {
                            i += 1;
                            closed = true;
                            break;
                        }
                    }
                    i += 1;
                    state = State::Proceed;
                }
            }
        }
        if !closed {
            self.error(
                start,
                2,
                "unterminated block comment: it runs to the end of the file",
            );
        }
        self.push(BLOCK_COMMENT, i - start);
    }

    fn identifier(&mut self) {
        let start = self.pos;
        let mut len = ident_len(&self.bytes[start..]);
        let word = &self.text[start..start + len];
        let kind = match keyword(word) {
            Some(MATCH_KW) if self.bytes.get(start + len) == Some(&b'?') => {
                len += 1;
                MATCH_Q_KW
            }
            Some(keyword) => keyword,
            None => match word {
                "True" | "False" => BOOL,
                "_" => UNDERSCORE,
                _ => IDENT,
            },
        };
        self.push(kind, len);
    }

    /// `meta[Key][index]`: the key runs to the first `]`, as in TVM.
    fn meta_ref(&mut self) {
        let start = self.pos;
        let b = self.bytes;
        let key_start = start + 5;
        let parsed = (|| {
            let key_end = self.find_bracket(key_start)?;
            if b.get(key_end + 1) != Some(&b'[') {
                return None;
            }
            let index_start = key_end + 2;
            let index_end = self.find_bracket(index_start)?;
            Some((index_start, index_end))
        })();
        match parsed {
            Some((index_start, index_end)) => {
                let index = &self.text[index_start..index_end];
                let len = index_end + 1 - start;
                let digits_only = !index.is_empty() && index.bytes().all(|c| c.is_ascii_digit());
                if !digits_only || index.parse::<u64>().is_err() {
                    self.number_error(start, len, format!("invalid integer number `{index}`"));
                }
                self.push(META_REF, len);
            }
            None => {
                let len = self.line_len_from(start);
                self.error(
                    start,
                    len,
                    "malformed meta reference: expected `meta[Key][index]`",
                );
                self.push(ERROR_TOKEN, len);
            }
        }
    }

    /// `#[version = "…"]`, `#[metadata]` (to end of file), or an error.
    fn attribute(&mut self) {
        let start = self.pos;
        if self.peek(1) != Some(b'[') {
            let found = self.rest()[1..]
                .chars()
                .next()
                .map(|c| c.to_string())
                .unwrap_or_else(|| "end of file".to_string());
            self.error(
                start,
                1,
                format!("`#` denotes the start of an attribute can only be followed by `[` found `{found}`"),
            );
            self.push(ERROR_TOKEN, 1);
            return;
        }
        let Some(close) = self.find_bracket(start + 2).map(|end| end - (start + 2)) else {
            let len = self.line_len_from(start);
            self.error(start, len, "unterminated attribute: expected `]`");
            self.push(ERROR_TOKEN, len);
            return;
        };
        let end = start + 2 + close + 1;
        let inner = self.text[start + 2..end - 1]
            .trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'));
        if inner == "metadata" {
            let len = self.bytes.len() - start;
            self.push(METADATA, len);
        } else if inner.starts_with("version") {
            self.push(VERSION_ATTR, end - start);
        } else {
            self.error(start, end - start, format!("unsupported attribute {inner}"));
            self.push(ERROR_TOKEN, end - start);
        }
    }

    /// Anything else: like TVM, the token runs to the next white space.
    fn unknown(&mut self) {
        let start = self.pos;
        let len = self.bytes[start..]
            .iter()
            .position(|&c| is_whitespace(c))
            .unwrap_or(self.bytes.len() - start);
        let shown: String = self.text[start..start + len].chars().take(20).collect();
        self.error(start, len, format!("unexpected text `{shown}`"));
        self.push(ERROR_TOKEN, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(SyntaxKind, &str)> {
        let (tokens, _) = tokenize(text);
        let mut pos = 0usize;
        let mut out = Vec::new();
        for token in tokens {
            let end = pos + usize::from(token.len);
            if token.kind != WHITESPACE {
                out.push((token.kind, &text[pos..end]));
            }
            pos = end;
        }
        out
    }

    #[test]
    fn keyword_filter_keeps_every_keyword() {
        for word in [
            "let",
            "fn",
            "def",
            "if",
            "else",
            "type",
            "match",
            "extern",
            "free_var",
            "ref",
            "ref_read",
            "ref_write",
            "lets",
            "f",
            "",
            "nn",
            "float32",
            "ref_writes",
            "Tensor",
        ] {
            assert_eq!(keyword(word), SyntaxKind::from_keyword(word), "{word}");
        }
        for raw in 0..SyntaxKind::EOF as u16 {
            let kind =
                <crate::RelayLanguage as rowan::Language>::kind_from_raw(rowan::SyntaxKind(raw));
            if let Some(word) = kind
                .describe()
                .strip_prefix('`')
                .and_then(|s| s.strip_suffix('`'))
            {
                assert_eq!(keyword(word), SyntaxKind::from_keyword(word), "{word}");
            }
        }
    }

    #[test]
    fn sigils() {
        assert_eq!(
            kinds("%x %0 @main %a/b %_ %True"),
            vec![
                (LOCAL, "%x"),
                (GRAPH, "%0"),
                (GLOBAL, "@main"),
                (LOCAL, "%a/b"),
                (LOCAL, "%_"),
                (LOCAL, "%True")
            ]
        );
        // `%a/%b` is the local `a/` followed by `%b`.
        assert_eq!(kinds("%a/%b"), vec![(LOCAL, "%a/"), (LOCAL, "%b")]);
        // Keywords after `%` are not merged.
        assert_eq!(kinds("%let"), vec![(PERCENT, "%"), (LET_KW, "let")]);
    }

    fn lenient_kinds(text: &str) -> (Vec<(SyntaxKind, &str)>, Vec<&str>) {
        let (tokens, _, names) = lex_with(text, Vec::new(), true);
        let mut pos = 0usize;
        let mut out = Vec::new();
        for token in tokens {
            let end = pos + usize::from(token.len);
            if token.kind != WHITESPACE {
                out.push((token.kind, &text[pos..end]));
            }
            pos = end;
        }
        (out, names.into_iter().map(|r| &text[r]).collect())
    }

    #[test]
    fn frontend_names_are_one_token_only_when_lenient() {
        let text = "%conv1.weight %input_tensor:0 %1_bn.gamma @foo.bar %features.0.weight";
        let (tokens, names) = lenient_kinds(text);
        assert_eq!(
            tokens,
            vec![
                (LOCAL, "%conv1.weight"),
                (LOCAL, "%input_tensor:0"),
                (LOCAL, "%1_bn.gamma"),
                (GLOBAL, "@foo.bar"),
                (LOCAL, "%features.0.weight"),
            ]
        );
        assert_eq!(names.len(), 5);
        // Strict: TVM's tokens.
        assert_eq!(
            kinds("%conv1.weight %1_bn"),
            vec![
                (LOCAL, "%conv1"),
                (DOT, "."),
                (IDENT, "weight"),
                (GRAPH, "%1"),
                (IDENT, "_bn")
            ]
        );
        // What stays as it is: projections, graph variables, type annotations.
        let (tokens, names) = lenient_kinds("%t.0 %0.1 %x: %a.b.0 %2");
        assert_eq!(
            tokens,
            vec![
                (LOCAL, "%t"),
                (DOT, "."),
                (INT, "0"),
                (GRAPH, "%0"),
                (DOT, "."),
                (INT, "1"),
                (LOCAL, "%x"),
                (COLON, ":"),
                (LOCAL, "%a.b"),
                (DOT, "."),
                (INT, "0"),
                (GRAPH, "%2"),
            ]
        );
        assert_eq!(names, ["%a.b"]);
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("1 2i64 -1i16 1f 0.5f 1e-05f 3f16 2.5f64 inff -inff"),
            vec![
                (INT, "1"),
                (INT, "2i64"),
                (INT, "-1i16"),
                (FLOAT, "1f"),
                (FLOAT, "0.5f"),
                (FLOAT, "1e-05f"),
                (FLOAT, "3f16"),
                (FLOAT, "2.5f64"),
                (FLOAT, "inff"),
                (FLOAT, "-inff"),
            ]
        );
        assert_eq!(kinds("%x -1"), vec![(LOCAL, "%x"), (INT, "-1")]);
        assert_eq!(
            kinds("a - b"),
            vec![(IDENT, "a"), (MINUS, "-"), (IDENT, "b")]
        );
        assert_eq!(kinds("inffoo"), vec![(FLOAT, "inff"), (IDENT, "oo")]);
        // What the printer writes for non-finite constants of every width.
        assert_eq!(
            kinds("inff64 -inff16 nanf -nanf nanf64 nanfoo nan"),
            vec![
                (FLOAT, "inff64"),
                (FLOAT, "-inff16"),
                (FLOAT, "nanf"),
                (FLOAT, "-nanf"),
                (FLOAT, "nanf64"),
                (IDENT, "nanfoo"),
                (IDENT, "nan"),
            ]
        );
        assert_eq!(
            kinds("inff6a"),
            vec![(FLOAT, "inff"), (INT, "6"), (IDENT, "a")]
        );
    }

    #[test]
    fn keywords_and_attrs() {
        assert_eq!(
            kinds("match? match True _ #[version = \"0.0.5\"]"),
            vec![
                (MATCH_Q_KW, "match?"),
                (MATCH_KW, "match"),
                (BOOL, "True"),
                (UNDERSCORE, "_"),
                (VERSION_ATTR, "#[version = \"0.0.5\"]"),
            ]
        );
        assert_eq!(
            kinds("meta[relay.Constant][0] x"),
            vec![(META_REF, "meta[relay.Constant][0]"), (IDENT, "x")]
        );
        assert_eq!(
            kinds("#[metadata]\n{}"),
            vec![(METADATA, "#[metadata]\n{}")]
        );
    }

    #[test]
    fn comments() {
        assert_eq!(
            kinds("/* a /* b */ c */ x // y"),
            vec![
                (BLOCK_COMMENT, "/* a /* b */ c */"),
                (IDENT, "x"),
                (LINE_COMMENT, "// y")
            ]
        );
        // TVM's quirk: `**/` does not close.
        let (tokens, errors) = tokenize("/* a **/ x");
        assert_eq!(tokens.len(), 1);
        assert_eq!(errors.len(), 1);
    }

    #[test]
    fn errors_are_bounded_by_the_line() {
        let (tokens, errors) = tokenize("\"abc\nx");
        assert_eq!(tokens[0].kind, ERROR_TOKEN);
        assert_eq!(u32::from(tokens[0].len), 4);
        assert_eq!(errors.len(), 1);
        let (_, errors) = tokenize("#[foo]");
        assert_eq!(errors[0].message, "unsupported attribute foo");
        let (_, errors) = tokenize("a\rb");
        assert_eq!(errors.len(), 1);
    }
}
