//! The parser of the pattern syntax (see `docs/patterns.md` for the
//! grammar): text to a [`Pattern`], with the `$name` captures it binds.
//! Every error carries the range of the text it is about.

use super::lexer::{range, LexError, Lexer, Tok, Token};
use crate::pattern::{self, Pattern, ShapeDim};
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Expr, Type};
use relay_syntax::{TextRange, TextSize};

/// A pattern read from text.
#[derive(Debug, Clone)]
pub struct ParsedPattern {
    pub pattern: Pattern,
    /// The `$name` captures, in order of first appearance.
    pub captures: Vec<(String, Pattern)>,
}

impl ParsedPattern {
    pub fn capture(&self, name: &str) -> Option<&Pattern> {
        self.captures
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p)
    }
}

/// A syntax or name error in a pattern, with the range it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternError {
    pub message: String,
    pub range: TextRange,
}

impl From<LexError> for PatternError {
    fn from(e: LexError) -> Self {
        PatternError {
            message: e.message,
            range: e.range,
        }
    }
}

type PResult<T> = Result<T, PatternError>;

/// Looks up `@name` patterns (the project's `[patterns]`).
pub type NamedPatterns<'a> = &'a dyn Fn(&str) -> Option<Pattern>;

const METHODS: &[&str] = &[
    "has_attr",
    "has_type",
    "has_dtype",
    "has_shape",
    "dominates",
    "optional",
];

/// Parses a whole pattern.
pub fn parse_pattern(text: &str, named: NamedPatterns<'_>) -> PResult<ParsedPattern> {
    let mut parser = Parser::new(text, named);
    let pattern = parser.program()?;
    parser.expect_end()?;
    Ok(ParsedPattern {
        pattern,
        captures: parser.captures,
    })
}

/// Parses `PATTERN => TEMPLATE`: the pattern and the template's text and
/// offset.
pub fn parse_rule<'t>(
    text: &'t str,
    named: NamedPatterns<'_>,
) -> PResult<(ParsedPattern, usize, &'t str)> {
    let mut parser = Parser::new(text, named);
    let pattern = parser.program()?;
    let arrow = parser.bump()?;
    if arrow.tok != Tok::FatArrow {
        return Err(PatternError {
            message: format!(
                "expected `=>` and the replacement, found {}",
                arrow.tok.describe()
            ),
            range: arrow.range,
        });
    }
    let start = parser.lexer.pos;
    let template = &text[start..];
    if template.trim().is_empty() {
        return Err(PatternError {
            message: "expected the replacement after `=>`".to_string(),
            range: arrow.range,
        });
    }
    Ok((
        ParsedPattern {
            pattern,
            captures: parser.captures,
        },
        start,
        template,
    ))
}

struct Hole {
    pattern: Pattern,
    uses: usize,
}

/// How deeply patterns may nest: deeper text is refused rather than
/// overflowing the stack of the recursive parser (and of the matcher).
const MAX_DEPTH: usize = 200;
/// How many chained forms (`|>` stages, calls, `.0`, `{…}`, methods) a
/// pattern may have in all: each wraps what is before it, so this bounds
/// how deep a pattern read from text can be.
const MAX_CHAIN: usize = 2000;

struct Parser<'a, 'n> {
    depth: usize,
    chained: usize,
    lexer: Lexer<'a>,
    peeked: Option<Token>,
    captures: Vec<(String, Pattern)>,
    holes: Vec<Hole>,
    named: NamedPatterns<'n>,
}

fn err<T>(message: impl Into<String>, range: TextRange) -> PResult<T> {
    Err(PatternError {
        message: message.into(),
        range,
    })
}

impl<'a, 'n> Parser<'a, 'n> {
    fn new(text: &'a str, named: NamedPatterns<'n>) -> Self {
        Parser {
            depth: 0,
            chained: 0,
            lexer: Lexer::new(text),
            peeked: None,
            captures: Vec::new(),
            holes: Vec::new(),
            named,
        }
    }

    fn peek(&mut self) -> PResult<&Token> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next()?);
        }
        Ok(self.peeked.as_ref().expect("just filled"))
    }

    fn peek_tok(&mut self) -> PResult<Tok> {
        Ok(self.peek()?.tok.clone())
    }

    fn bump(&mut self) -> PResult<Token> {
        self.peek()?;
        Ok(self.peeked.take().expect("just peeked"))
    }

    /// The token after the next one, without consuming anything.
    fn peek_second(&mut self) -> PResult<Tok> {
        self.peek()?;
        let saved = self.lexer.pos;
        let second = self.lexer.next();
        self.lexer.pos = saved;
        Ok(second?.tok)
    }

    fn expect(&mut self, want: Tok, what: &str) -> PResult<Token> {
        let token = self.bump()?;
        if token.tok == want {
            Ok(token)
        } else {
            err(
                format!("expected {what}, found {}", token.tok.describe()),
                token.range,
            )
        }
    }

    fn expect_end(&mut self) -> PResult<()> {
        let token = self.bump()?;
        match token.tok {
            Tok::Eof => Ok(()),
            Tok::FatArrow => err(
                "`=>` (a rewrite rule) is not allowed here: this is a pattern alone",
                token.range,
            ),
            other => err(
                format!(
                    "expected the end of the pattern (or `|`, `|>`), found {}",
                    other.describe()
                ),
                token.range,
            ),
        }
    }

    /// `($name = pattern;)* pattern`
    fn program(&mut self) -> PResult<Pattern> {
        while let Tok::Capture(name) = self.peek_tok()? {
            if self.peek_second()? != Tok::Eq {
                break;
            }
            let token = self.bump()?;
            self.bump()?;
            if self.captures.iter().any(|(n, _)| *n == name) {
                return err(format!("`${name}` is already bound"), token.range);
            }
            let value = self.alt()?;
            self.expect(Tok::Semi, "`;` after the binding")?;
            self.captures.push((name, value));
        }
        self.alt()
    }

    fn alt(&mut self) -> PResult<Pattern> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let at = self.peek()?.range;
            return err(
                format!("the pattern nests more than {MAX_DEPTH} levels deep"),
                at,
            );
        }
        let out = self.alt_inner();
        self.depth -= 1;
        out
    }

    fn alt_inner(&mut self) -> PResult<Pattern> {
        let mut left = self.pipe()?;
        while self.peek_tok()? == Tok::Pipe {
            self.bump()?;
            let right = self.pipe()?;
            left = left.or(&right);
        }
        Ok(left)
    }

    fn pipe(&mut self) -> PResult<Pattern> {
        let mut left = self.postfix()?;
        while self.peek_tok()? == Tok::PipeArrow {
            self.chain()?;
            let arrow = self.bump()?;
            let stage = self.stage(&left, arrow.range)?;
            left = if self.peek_tok()? == Tok::Question {
                self.bump()?;
                left.or(&stage)
            } else {
                stage
            };
        }
        Ok(left)
    }

    /// A pattern in which `_` stands for `input`.
    fn stage(&mut self, input: &Pattern, arrow: TextRange) -> PResult<Pattern> {
        self.holes.push(Hole {
            pattern: input.clone(),
            uses: 0,
        });
        let start = self.peek()?.range.start();
        let stage = self.postfix();
        let hole = self.holes.pop().expect("pushed above");
        let stage = stage?;
        if hole.uses == 0 {
            let end = self.lexer.pos.min(self.lexer.text().len());
            let at = TextRange::new(start, TextSize::from(end as u32).max(start));
            let at = if at.is_empty() { arrow } else { at };
            return err("this stage does not use `_`, the pattern before `|>`", at);
        }
        Ok(stage)
    }

    /// Counts one more chained form, refusing patterns too deep to match.
    fn chain(&mut self) -> PResult<()> {
        self.chained += 1;
        if self.chained > MAX_CHAIN {
            let at = self.peek()?.range;
            return err(
                format!("the pattern chains more than {MAX_CHAIN} forms; split it"),
                at,
            );
        }
        Ok(())
    }

    fn postfix(&mut self) -> PResult<Pattern> {
        let mut p = self.primary()?;
        loop {
            if matches!(self.peek_tok()?, Tok::LParen | Tok::LBrace | Tok::Dot) {
                self.chain()?;
            }
            match self.peek_tok()? {
                Tok::LParen => {
                    let open = self.bump()?;
                    p = match self.arguments(open.range)? {
                        Some(args) => p.call(args),
                        None => p.call_any_args(),
                    };
                }
                Tok::LBrace => {
                    let open = self.bump()?;
                    let attrs = self.attr_entries(open.range, Tok::RBrace)?;
                    p = p.has_attr(attrs);
                }
                Tok::Dot => {
                    let dot = self.bump()?;
                    let next = self.bump()?;
                    p = match next.tok {
                        Tok::Int(i) if i >= 0 => pattern::is_tuple_get_item(&p, Some(i as usize)),
                        Tok::Star => pattern::is_tuple_get_item(&p, None),
                        Tok::Ident(method) if METHODS.contains(&method.as_str()) => {
                            self.method(p, &method, next.range)?
                        }
                        Tok::Ident(other) => {
                            return err(
                                format!(
                                    "unknown method `.{other}`; expected a tuple index, `.*`, or one of {}",
                                    METHODS.join(", ")
                                ),
                                next.range,
                            )
                        }
                        other => {
                            return err(
                                format!(
                                    "expected a tuple index, `*` or a method after `.`, found {}",
                                    other.describe()
                                ),
                                dot.range.cover(next.range),
                            )
                        }
                    };
                }
                _ => return Ok(p),
            }
        }
    }

    /// After `(`: `...` (any arguments) or a list of patterns, then `)`.
    fn arguments(&mut self, open: TextRange) -> PResult<Option<Vec<Pattern>>> {
        if self.peek_tok()? == Tok::Ellipsis {
            self.bump()?;
            self.close(open, Tok::RParen)?;
            return Ok(None);
        }
        self.list(open, Tok::RParen).map(Some)
    }

    /// Patterns separated by commas up to `close` (a trailing comma allowed).
    fn list(&mut self, open: TextRange, close: Tok) -> PResult<Vec<Pattern>> {
        let mut items = Vec::new();
        loop {
            if self.peek_tok()? == close {
                self.bump()?;
                return Ok(items);
            }
            items.push(self.alt()?);
            let token = self.bump()?;
            match token.tok {
                Tok::Comma => {}
                t if t == close => return Ok(items),
                Tok::Eof => {
                    return err(
                        format!("this `{}` is never closed", open_symbol(&close)),
                        open,
                    )
                }
                other => {
                    return err(
                        format!(
                            "expected `,` or {}, found {}",
                            close.describe(),
                            other.describe()
                        ),
                        token.range,
                    )
                }
            }
        }
    }

    fn close(&mut self, open: TextRange, close: Tok) -> PResult<()> {
        let token = self.bump()?;
        if token.tok == close {
            return Ok(());
        }
        if token.tok == Tok::Eof {
            return err(
                format!("this `{}` is never closed", open_symbol(&close)),
                open,
            );
        }
        err(
            format!(
                "expected {}, found {}",
                close.describe(),
                token.tok.describe()
            ),
            token.range,
        )
    }

    fn method(&mut self, p: Pattern, method: &str, at: TextRange) -> PResult<Pattern> {
        let open = self.expect(Tok::LParen, &format!("`(` after `.{method}`"))?;
        match method {
            "has_attr" => {
                let brace = self.expect(Tok::LBrace, "`{` and the attributes")?;
                let attrs = self.attr_entries(brace.range, Tok::RBrace)?;
                self.close(open.range, Tok::RParen)?;
                Ok(p.has_attr(attrs))
            }
            "has_type" => {
                let ty = self.raw_type(open.range)?;
                Ok(p.has_type(ty))
            }
            "has_dtype" => {
                let dtype = self.dtype()?;
                self.close(open.range, Tok::RParen)?;
                Ok(p.has_dtype(dtype))
            }
            "has_shape" => {
                let shape = self.shape()?;
                self.close(open.range, Tok::RParen)?;
                Ok(p.has_shape(shape))
            }
            "dominates" => {
                let args = self.list(open.range, Tok::RParen)?;
                match args.as_slice() {
                    [parent] => Ok(p.dominates(parent, &pattern::wildcard())),
                    [parent, path] => Ok(p.dominates(parent, path)),
                    _ => err("`.dominates` takes the parent and optionally the path", at),
                }
            }
            "optional" => {
                let stage = self.stage(&p, at)?;
                self.close(open.range, Tok::RParen)?;
                Ok(p.or(&stage))
            }
            _ => unreachable!("METHODS lists the methods handled here"),
        }
    }

    fn primary(&mut self) -> PResult<Pattern> {
        let token = self.bump()?;
        match token.tok {
            Tok::Star => Ok(pattern::wildcard()),
            Tok::Underscore => match self.holes.last_mut() {
                Some(hole) => {
                    hole.uses += 1;
                    Ok(hole.pattern.clone())
                }
                None => err(
                    "`_` stands for the pattern before `|>` and is allowed only after `|>` or in `.optional(…)`; use `*` for any expression",
                    token.range,
                ),
            },
            Tok::Capture(name) => {
                if let Some((_, p)) = self.captures.iter().find(|(n, _)| *n == name) {
                    return Ok(p.clone());
                }
                let p = pattern::wildcard();
                self.captures.push((name, p.clone()));
                Ok(p)
            }
            // Each use is new nodes: `add(@p, @p)` matches two
            // expressions that each match `p` (`$x = @p` shares one).
            Tok::Named(name) => (self.named)(&name).map_or_else(
                || err(format!("no pattern is named `@{name}`"), token.range),
                |p| Ok(p.fresh_copy()),
            ),
            Tok::Var(name) => Ok(pattern::is_var(&name)),
            Tok::LParen => self.parenthesised(token.range),
            Tok::Ident(name) => self.named_primary(name, token.range),
            other => err(
                format!("expected a pattern, found {}", other.describe()),
                token.range,
            ),
        }
    }

    /// `()`, `(p)`, `(p,)`, `(p, q)`, `(...)`.
    fn parenthesised(&mut self, open: TextRange) -> PResult<Pattern> {
        match self.peek_tok()? {
            Tok::RParen => {
                self.bump()?;
                return Ok(pattern::is_tuple(Vec::new()));
            }
            Tok::Ellipsis => {
                self.bump()?;
                self.close(open, Tok::RParen)?;
                return Ok(pattern::Pattern::new(pattern::PatternKind::Tuple(None)));
            }
            _ => {}
        }
        let first = self.alt()?;
        let token = self.bump()?;
        match token.tok {
            Tok::RParen => Ok(first),
            Tok::Comma => {
                let mut fields = vec![first];
                fields.extend(self.list(open, Tok::RParen)?);
                Ok(pattern::is_tuple(fields))
            }
            Tok::Eof => err("this `(` is never closed", open),
            other => err(
                format!("expected `,` or `)`, found {}", other.describe()),
                token.range,
            ),
        }
    }

    /// An operator name (dotted), a keyword or one of TVM's constructors.
    fn named_primary(&mut self, first: String, at: TextRange) -> PResult<Pattern> {
        let mut name = first;
        let mut full = at;
        while self.peek_tok()? == Tok::Dot {
            match self.peek_second()? {
                Tok::Ident(seg) if !METHODS.contains(&seg.as_str()) => {
                    self.bump()?;
                    let seg_token = self.bump()?;
                    name.push('.');
                    name.push_str(&seg);
                    full = full.cover(seg_token.range);
                }
                _ => break,
            }
        }
        let called = self.peek_tok()? == Tok::LParen;
        match (name.as_str(), called) {
            ("const", false) => return Ok(pattern::is_constant()),
            ("fn", true) => return self.function(),
            ("wildcard" | "is_constant", true) => {
                let open = self.bump()?;
                self.close(open.range, Tok::RParen)?;
                return Ok(if name == "wildcard" {
                    pattern::wildcard()
                } else {
                    pattern::is_constant()
                });
            }
            ("is_var", true) => {
                let open = self.bump()?;
                if self.peek_tok()? == Tok::RParen {
                    self.bump()?;
                    return Ok(pattern::is_var(""));
                }
                let name = self.string("the variable's name")?;
                self.close(open.range, Tok::RParen)?;
                return Ok(pattern::is_var(&name));
            }
            ("is_op", true) => {
                let open = self.bump()?;
                let op_token = self.peek()?.range;
                let op = self.string("the operator's name")?;
                self.close(open.range, Tok::RParen)?;
                return pattern::is_op(&op).or_else(|m| err(m, op_token));
            }
            ("is_expr", true) => {
                let open = self.bump()?;
                let (offset, text) = self.raw(open.range)?;
                let expr = parse_relay_expr(text, offset, open.range)?;
                return Ok(pattern::is_expr(expr));
            }
            ("is_tuple", true) => {
                let open = self.bump()?;
                if self.peek_tok()? == Tok::Ellipsis {
                    self.bump()?;
                    self.close(open.range, Tok::RParen)?;
                    return Ok(Pattern::new(pattern::PatternKind::Tuple(None)));
                }
                let bracket = self.expect(Tok::LBracket, "`[` and the fields (or `...`)")?;
                let fields = self.list(bracket.range, Tok::RBracket)?;
                self.close(open.range, Tok::RParen)?;
                return Ok(pattern::is_tuple(fields));
            }
            ("is_tuple_get_item", true) => {
                let open = self.bump()?;
                let tuple = self.alt()?;
                let index = if self.peek_tok()? == Tok::Comma {
                    self.bump()?;
                    Some(self.index()?)
                } else {
                    None
                };
                self.close(open.range, Tok::RParen)?;
                return Ok(pattern::is_tuple_get_item(&tuple, index));
            }
            ("is_if" | "is_let" | "dominates", true) => {
                let open = self.bump()?;
                let args = self.list(open.range, Tok::RParen)?;
                let [a, b, c] = args.as_slice() else {
                    return err(format!("`{name}` takes three patterns"), full);
                };
                return Ok(match name.as_str() {
                    "is_if" => pattern::is_if(a, b, c),
                    "is_let" => pattern::is_let(a, b, c),
                    _ => pattern::dominates(a, b, c),
                });
            }
            ("has_attr" | "has_dtype" | "has_shape" | "has_type", true) => {
                // TVM's free functions: the constraint on `*`, or on the
                // pattern given after it.
                let open = self.bump()?;
                let base = pattern::wildcard();
                let constrained = match name.as_str() {
                    "has_type" => return Ok(base.has_type(self.raw_type(open.range)?)),
                    "has_attr" => {
                        let brace = self.expect(Tok::LBrace, "`{` and the attributes")?;
                        let attrs = self.attr_entries(brace.range, Tok::RBrace)?;
                        (attrs.len(), Constraint::Attr(attrs))
                    }
                    "has_dtype" => (0, Constraint::DType(self.dtype()?)),
                    _ => (0, Constraint::Shape(self.shape()?)),
                }
                .1;
                let target = if self.peek_tok()? == Tok::Comma {
                    self.bump()?;
                    self.alt()?
                } else {
                    base
                };
                self.close(open.range, Tok::RParen)?;
                return Ok(match constrained {
                    Constraint::Attr(a) => target.has_attr(a),
                    Constraint::DType(d) => target.has_dtype(d),
                    Constraint::Shape(s) => target.has_shape(s),
                });
            }
            _ => {}
        }
        pattern::is_op(&name).or_else(|_| {
            let hint = if called || name.contains('.') {
                ""
            } else {
                " (a pattern is `*`, `%name`, `$name`, `const`, an operator or one of TVM's constructors such as `is_constant()`)"
            };
            err(format!("unknown operator `{name}`{hint}"), full)
        })
    }

    /// `fn (params) { body }` (TVM's `FunctionPattern`).
    fn function(&mut self) -> PResult<Pattern> {
        let open = self.bump()?;
        let params = self.arguments(open.range)?;
        let brace = self.expect(Tok::LBrace, "`{` and the function's body")?;
        let body = self.alt()?;
        self.close(brace.range, Tok::RBrace)?;
        Ok(pattern::function(params, &body))
    }

    fn raw(&mut self, open: TextRange) -> PResult<(usize, &'a str)> {
        // The lexer may have read one token past `(`; start from there.
        if let Some(t) = self.peeked.take() {
            self.lexer.pos = usize::from(t.range.start());
        }
        Ok(self.lexer.raw_until_close(open)?)
    }

    fn raw_type(&mut self, open: TextRange) -> PResult<Type> {
        let (offset, text) = self.raw(open)?;
        parse_relay_type(text, offset, open)
    }

    fn string(&mut self, what: &str) -> PResult<String> {
        let token = self.bump()?;
        match token.tok {
            Tok::Str(s) => Ok(s),
            other => err(
                format!("expected {what} as a string, found {}", other.describe()),
                token.range,
            ),
        }
    }

    fn index(&mut self) -> PResult<usize> {
        let token = self.bump()?;
        match token.tok {
            Tok::Int(i) if i >= 0 => Ok(i as usize),
            other => err(
                format!("expected a tuple index, found {}", other.describe()),
                token.range,
            ),
        }
    }

    fn dtype(&mut self) -> PResult<DataType> {
        let at = self.peek()?.range;
        let text = match self.bump()?.tok {
            Tok::Str(s) | Tok::Ident(s) => s,
            other => {
                return err(
                    format!(
                        "expected a dtype such as \"float32\", found {}",
                        other.describe()
                    ),
                    at,
                )
            }
        };
        DataType::parse(&text).or_else(|_| err(format!("`{text}` is not a dtype"), at))
    }

    fn shape(&mut self) -> PResult<Vec<ShapeDim>> {
        let open = self.expect(Tok::LBracket, "`[` and the shape")?;
        let mut dims = Vec::new();
        loop {
            let token = self.bump()?;
            match token.tok {
                Tok::RBracket => return Ok(dims),
                Tok::Int(i) => dims.push(ShapeDim::Known(i)),
                Tok::Question => dims.push(ShapeDim::Any),
                Tok::Eof => return err("this `[` is never closed", open.range),
                other => {
                    return err(
                        format!(
                            "expected a dimension (an integer or `?`), found {}",
                            other.describe()
                        ),
                        token.range,
                    )
                }
            }
            let sep = self.bump()?;
            match sep.tok {
                Tok::Comma => {}
                Tok::RBracket => return Ok(dims),
                other => {
                    return err(
                        format!("expected `,` or `]`, found {}", other.describe()),
                        sep.range,
                    )
                }
            }
        }
    }

    /// `name = value, …` (or `"name": value`) up to `close`.
    fn attr_entries(&mut self, open: TextRange, close: Tok) -> PResult<Vec<(String, AttrValue)>> {
        let mut entries = Vec::new();
        loop {
            let token = self.bump()?;
            let key = match token.tok {
                t if t == close => return Ok(entries),
                Tok::Ident(k) | Tok::Str(k) => k,
                Tok::Eof => return err("this `{` is never closed", open),
                other => {
                    return err(
                        format!("expected an attribute name, found {}", other.describe()),
                        token.range,
                    )
                }
            };
            let sep = self.bump()?;
            if !matches!(sep.tok, Tok::Eq | Tok::Colon) {
                return err(
                    format!(
                        "expected `=` after the attribute name, found {}",
                        sep.tok.describe()
                    ),
                    sep.range,
                );
            }
            let value = self.attr_value()?;
            entries.push((key, value));
            let next = self.bump()?;
            match next.tok {
                Tok::Comma => {}
                t if t == close => return Ok(entries),
                other => {
                    return err(
                        format!(
                            "expected `,` or {}, found {}",
                            close.describe(),
                            other.describe()
                        ),
                        next.range,
                    )
                }
            }
        }
    }

    fn attr_value(&mut self) -> PResult<AttrValue> {
        let token = self.bump()?;
        match token.tok {
            Tok::Int(i) => Ok(AttrValue::Int(i)),
            Tok::Float(x) => Ok(AttrValue::Double(x)),
            Tok::Str(s) => Ok(AttrValue::Str(s)),
            Tok::Ident(b) if b == "true" || b == "True" => Ok(AttrValue::Bool(true)),
            Tok::Ident(b) if b == "false" || b == "False" => Ok(AttrValue::Bool(false)),
            Tok::Ident(n) if n == "None" => Ok(AttrValue::Null),
            Tok::LBracket | Tok::LParen => {
                let close = if token.tok == Tok::LBracket {
                    Tok::RBracket
                } else {
                    Tok::RParen
                };
                let mut items = Vec::new();
                loop {
                    if self.peek_tok()? == close {
                        self.bump()?;
                        return Ok(AttrValue::Array(items));
                    }
                    items.push(self.attr_value()?);
                    let sep = self.bump()?;
                    match sep.tok {
                        Tok::Comma => {}
                        t if t == close => return Ok(AttrValue::Array(items)),
                        Tok::Eof => return err("this bracket is never closed", token.range),
                        other => {
                            return err(
                                format!("expected `,` or {}, found {}", close.describe(), other.describe()),
                                sep.range,
                            )
                        }
                    }
                }
            }
            other => err(
                format!(
                    "expected an attribute value (a number, a string, true/false or a list), found {}",
                    other.describe()
                ),
                token.range,
            ),
        }
    }
}

enum Constraint {
    Attr(Vec<(String, AttrValue)>),
    DType(DataType),
    Shape(Vec<ShapeDim>),
}

fn open_symbol(close: &Tok) -> &'static str {
    match close {
        Tok::RParen => "(",
        Tok::RBracket => "[",
        _ => "{",
    }
}

/// Moves a range in `wrapped` (which has `prefix_len` bytes before the user's
/// text) to the user's text at `offset`, inside `text_len`.
fn shift(r: TextRange, prefix_len: usize, offset: usize, text_len: usize) -> TextRange {
    let clamp = |x: TextSize| {
        let x = usize::from(x).saturating_sub(prefix_len).min(text_len);
        offset + x
    };
    let (s, e) = (clamp(r.start()), clamp(r.end()));
    range(s, e.max(s))
}

fn first_error(
    diagnostics: &relay_ir::diagnostic::Diagnostics,
    prefix_len: usize,
    offset: usize,
    text_len: usize,
    fallback: TextRange,
) -> Option<PatternError> {
    let d = diagnostics.iter().find(|d| d.is_error())?;
    let at = d
        .span
        .map(|s| shift(s.range, prefix_len, offset, text_len))
        .unwrap_or(fallback);
    Some(PatternError {
        message: d.message.clone(),
        range: at,
    })
}

/// Relay expression text (in `is_expr(…)`), read by the Relay parser.
fn parse_relay_expr(text: &str, offset: usize, open: TextRange) -> PResult<Expr> {
    if text.trim().is_empty() {
        return err("`is_expr` needs a Relay expression", open);
    }
    let (expr, diagnostics) = relay_lower::parse_and_lower_expr("pattern", text);
    if let Some(e) = first_error(&diagnostics, 0, offset, text.len(), open) {
        return Err(e);
    }
    Ok(expr)
}

/// A Relay type (in `has_type(…)`), read by the Relay parser as the
/// annotation of a parameter.
fn parse_relay_type(text: &str, offset: usize, open: TextRange) -> PResult<Type> {
    if text.trim().is_empty() {
        return err("`has_type` needs a Relay type", open);
    }
    let prefix = "fn (%t: ";
    let wrapped = format!("{prefix}{text}) {{ %t }}");
    let (expr, diagnostics) = relay_lower::parse_and_lower_expr("pattern", &wrapped);
    if let Some(e) = first_error(&diagnostics, prefix.len(), offset, text.len(), open) {
        return Err(e);
    }
    expr.as_function()
        .and_then(|f| {
            f.params()
                .first()
                .and_then(|p| p.type_annotation().cloned())
        })
        .map_or_else(
            || err(format!("`{}` is not a Relay type", text.trim()), open),
            Ok,
        )
}
