//! The parser core: lookahead over non-trivia tokens, markers that open and
//! close nodes, and error reporting with exact ranges.
//!
//! The grammar (in `grammar/`) only calls this API. The parser never fails:
//! every error is recorded and parsing goes on, and every token of the input
//! ends up in the tree. The tree is built as the parser goes (see
//! `build_tree`): markers start, finish, abandon and wrap nodes of the
//! builder directly, with no list of events to replay afterwards.

pub(crate) mod grammar;

use crate::build_tree::{Builder, Lexed, Placed};
use crate::token_set::TokenSet;
use crate::{SyntaxError, SyntaxErrorKind, SyntaxKind, SyntaxKind::*};
use rowan::{GreenNode, TextRange, TextSize};

/// Nesting (of expressions, types, patterns) beyond which the parser stops
/// descending and skips the nested text, so that no input overflows the stack.
const MAX_DEPTH: u32 = 256;

pub(crate) struct Parser<'t> {
    text: &'t str,
    /// Non-trivia tokens: kind and range. Whether trivia precedes a token
    /// is whether it starts after the end of the one before.
    kinds: Vec<SyntaxKind>,
    ranges: Vec<TextRange>,
    pos: usize,
    builder: Builder,
    errors: Vec<SyntaxError>,
    depth: u32,
    depth_error_reported: bool,
    /// Where the last skip of a too-deep construct stopped: the constructs
    /// around it are cut short there, and their complaints would only repeat
    /// the nesting error.
    nested_skip_end: Option<usize>,
    /// Whether to read leniently (see `crate::leniency`).
    pub(crate) lenient: bool,
    /// What the lenient reading accepted.
    pub(crate) leniencies: Vec<crate::Leniency>,
}

impl<'t> Parser<'t> {
    pub(crate) fn new(text: &'t str, lexed: Lexed) -> Parser<'t> {
        let (kinds, ranges, builder) = lexed.into_parts();
        Parser {
            text,
            kinds,
            ranges,
            pos: 0,
            builder,
            errors: Vec::new(),
            depth: 0,
            depth_error_reported: false,
            nested_skip_end: None,
            lenient: false,
            leniencies: Vec::new(),
        }
    }

    /// The tree, the errors found and what a lenient reading accepted.
    pub(crate) fn finish(self) -> (GreenNode, Vec<SyntaxError>, Vec<crate::Leniency>) {
        (self.builder.finish(), self.errors, self.leniencies)
    }

    /// The range of the first non-trivia token (empty at the end of an
    /// empty text).
    pub(crate) fn first_token_range(&self) -> TextRange {
        match self.ranges.first() {
            Some(range) => *range,
            None => TextRange::empty(TextSize::of(self.text)),
        }
    }

    // ---- lookahead ----

    /// The kind of the `n`th non-trivia token from here (`EOF` past the end).
    pub(crate) fn nth(&self, n: usize) -> SyntaxKind {
        self.kinds.get(self.pos + n).copied().unwrap_or(EOF)
    }

    pub(crate) fn current(&self) -> SyntaxKind {
        self.nth(0)
    }

    pub(crate) fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == kind
    }

    pub(crate) fn nth_at(&self, n: usize, kind: SyntaxKind) -> bool {
        self.nth(n) == kind
    }

    pub(crate) fn at_ts(&self, set: TokenSet) -> bool {
        set.contains(self.current())
    }

    /// Whether the `n`th token touches the one before it (no trivia between),
    /// as TVM requires for `=>`, `<=`, `>=`, `==` and `!=`.
    pub(crate) fn nth_joint(&self, n: usize) -> bool {
        let index = self.pos + n;
        match (
            index.checked_sub(1).and_then(|i| self.ranges.get(i)),
            self.ranges.get(index),
        ) {
            (Some(before), Some(this)) => before.end() == this.start(),
            _ => false,
        }
    }

    /// The source text of the `n`th token (empty past the end).
    pub(crate) fn nth_text(&self, n: usize) -> &'t str {
        match self.ranges.get(self.pos + n) {
            Some(range) => &self.text[*range],
            None => "",
        }
    }

    /// The range of the current token (an empty range at the end of the text).
    pub(crate) fn current_range(&self) -> TextRange {
        match self.ranges.get(self.pos) {
            Some(range) => *range,
            None => TextRange::empty(TextSize::of(self.text)),
        }
    }

    /// A cursor that identifies the current position, to detect progress.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    // ---- consuming ----

    pub(crate) fn bump_any(&mut self) {
        if self.pos < self.kinds.len() {
            self.pos += 1;
            self.builder.token();
        }
    }

    /// A node of `kind` holding just the next token: `start`, `bump_any`
    /// and `complete` in one step, the commonest node shape (literals, uses
    /// of variables, dimensions).
    pub(crate) fn bump_node(&mut self, kind: SyntaxKind) -> CompletedMarker {
        if self.pos < self.kinds.len() {
            self.pos += 1;
            CompletedMarker {
                placed: self.builder.token_node(kind),
            }
        } else {
            let m = self.start();
            m.complete(self, kind)
        }
    }

    pub(crate) fn bump(&mut self, kind: SyntaxKind) {
        debug_assert_eq!(self.current(), kind);
        self.bump_any();
    }

    pub(crate) fn eat(&mut self, kind: SyntaxKind) -> bool {
        if self.at(kind) {
            self.bump_any();
            true
        } else {
            false
        }
    }

    /// Consumes `kind` or reports ``expected `kind` found …``.
    pub(crate) fn expect(&mut self, kind: SyntaxKind) -> bool {
        if self.eat(kind) {
            return true;
        }
        self.error_expected(kind.describe());
        false
    }

    // ---- errors ----

    /// Reports an error at the current token (or at the end of the text).
    /// Nothing is reported at an error token: the lexer already explained it.
    pub(crate) fn error(&mut self, message: impl Into<String>) {
        self.error_of(SyntaxErrorKind::Unexpected, message);
    }

    /// [`Parser::error`] with the kind of the problem.
    pub(crate) fn error_of(&mut self, kind: SyntaxErrorKind, message: impl Into<String>) {
        if self.at(ERROR_TOKEN) || self.nested_skip_end == Some(self.pos) {
            return;
        }
        let range = self.current_range();
        self.push_error(SyntaxError::new(kind, message, range));
    }

    /// Reports an unexpected token at `range`.
    pub(crate) fn error_at(&mut self, range: TextRange, message: impl Into<String>) {
        self.push_error(SyntaxError::new(
            SyntaxErrorKind::Unexpected,
            message,
            range,
        ));
    }

    /// Records `error`, unless one was just reported at the same spot: when
    /// a construct gives up, the constructs around it often give up at the
    /// same token, and only the first (innermost, most specific) message
    /// says something.
    fn push_error(&mut self, error: SyntaxError) {
        if self
            .errors
            .last()
            .is_some_and(|last| last.range().start() == error.range().start())
        {
            return;
        }
        self.errors.push(error);
    }

    /// ``expected WHAT found `tok` ``, TVM's wording for a missing token.
    pub(crate) fn error_expected(&mut self, what: &str) {
        let found = self.current().describe();
        self.error(format!("expected {what} found {found}"));
    }

    /// ``expected `)` found …`` where the closer of the group opened at
    /// `open` is missing. When the text ends, or moves on to the next
    /// definition, a block or another group's closer, the group is unclosed: the
    /// error says so and points at the opening bracket too.
    pub(crate) fn error_unclosed(&mut self, open: TextRange, close: SyntaxKind) {
        if self.at(ERROR_TOKEN) || self.nested_skip_end == Some(self.pos) {
            return;
        }
        let found = self.current().describe();
        let message = format!("expected {} found {found}", close.describe());
        let unclosed = matches!(
            self.current(),
            EOF | DEF_KW | TYPE_KW | EXTERN_KW | METADATA | R_PAREN | R_BRACK | R_CURLY | L_CURLY
        );
        let range = self.current_range();
        let opener = &self.text[open];
        let error = if unclosed {
            SyntaxError::new(SyntaxErrorKind::Unclosed, message, range)
                .with_label(open, format!("this `{opener}` is never closed"))
        } else {
            SyntaxError::new(SyntaxErrorKind::Unexpected, message, range)
                .with_label(open, format!("the group opened by this `{opener}`"))
        };
        self.push_error(error);
    }

    /// Consumes the closer of the group opened at `open`, or reports it
    /// missing ([`Parser::error_unclosed`]).
    pub(crate) fn expect_closer(&mut self, open: TextRange, close: SyntaxKind) -> bool {
        if self.eat(close) {
            return true;
        }
        self.error_unclosed(open, close);
        false
    }

    /// Skips text that cannot be read here, into one `ERROR` node: up to a
    /// token of `until`, the end of an enclosing group or block, or the next
    /// definition, stepping over bracketed groups whole. One error stands
    /// for the whole skipped run, instead of one per token.
    pub(crate) fn recover_until(&mut self, until: TokenSet) {
        let m = self.start();
        let mut skipped = false;
        loop {
            match self.current() {
                k if until.contains(k) => break,
                EOF | DEF_KW | TYPE_KW | EXTERN_KW | METADATA | VERSION_ATTR => break,
                R_PAREN | R_BRACK | R_CURLY | SEMICOLON => break,
                L_PAREN | L_BRACK | L_CURLY => self.skip_group(),
                _ => self.bump_any(),
            }
            skipped = true;
        }
        if skipped {
            m.complete(self, ERROR);
        } else {
            m.abandon(self);
        }
    }

    // ---- nesting ----

    /// Enters a nested construct; false (with one error) when nested too deep,
    /// in which case the caller must not descend and should call
    /// [`Parser::skip_nested`].
    pub(crate) fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            if !self.depth_error_reported {
                self.depth_error_reported = true;
                let range = self.current_range();
                self.push_error(SyntaxError::new(
                    SyntaxErrorKind::Limit,
                    format!("this expression nests more than {MAX_DEPTH} levels deep; the nested part is not parsed"),
                    range,
                ));
            }
            return false;
        }
        self.depth += 1;
        true
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skips the rest of a construct nested too deeply, into one `ERROR`
    /// node: everything up to the closing bracket of the enclosing group
    /// (brackets in between balanced), or up to the next definition. The
    /// enclosing constructs then find their own closers, so a deep input gets
    /// the one nesting error and no others. Linear: each token is skipped once.
    pub(crate) fn skip_nested(&mut self) {
        let m = self.start();
        let mut level = 0usize;
        let mut skipped = false;
        loop {
            match self.current() {
                EOF | DEF_KW | TYPE_KW | EXTERN_KW | METADATA => break,
                L_PAREN | L_BRACK | L_CURLY => level += 1,
                R_PAREN | R_BRACK | R_CURLY => {
                    if level == 0 {
                        break;
                    }
                    level -= 1;
                }
                _ => {}
            }
            self.bump_any();
            skipped = true;
        }
        self.nested_skip_end = Some(self.pos);
        if skipped {
            m.complete(self, ERROR);
        } else {
            m.abandon(self);
        }
    }

    /// Skips one balanced bracketed group (the current token is its opener)
    /// into an `ERROR` node, for error recovery. It never skips a following
    /// definition, even when the group is not closed before it.
    pub(crate) fn skip_group(&mut self) {
        let m = self.start();
        let mut level = 0usize;
        loop {
            match self.current() {
                EOF | DEF_KW | TYPE_KW | EXTERN_KW | METADATA => break,
                L_PAREN | L_BRACK | L_CURLY => level += 1,
                R_PAREN | R_BRACK | R_CURLY => level = level.saturating_sub(1),
                _ => {}
            }
            self.bump_any();
            if level == 0 {
                break;
            }
        }
        m.complete(self, ERROR);
    }

    // ---- markers ----

    pub(crate) fn start(&mut self) -> Marker {
        self.builder.start_node();
        Marker { completed: false }
    }
}

/// An open node; must be completed or abandoned, innermost first.
pub(crate) struct Marker {
    completed: bool,
}

impl Marker {
    pub(crate) fn complete(mut self, p: &mut Parser<'_>, kind: SyntaxKind) -> CompletedMarker {
        self.completed = true;
        CompletedMarker {
            placed: p.builder.finish_node(kind),
        }
    }

    /// Drops the node; its children attach to the enclosing node.
    pub(crate) fn abandon(mut self, p: &mut Parser<'_>) {
        self.completed = true;
        p.builder.abandon_node();
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        if !self.completed && !std::thread::panicking() {
            debug_assert!(false, "a marker was neither completed nor abandoned");
        }
    }
}

/// A finished node, which can still be wrapped in a new parent.
#[derive(Clone, Copy)]
pub(crate) struct CompletedMarker {
    placed: Placed,
}

impl CompletedMarker {
    /// Opens a node that will become the parent of this one (for `a + b`,
    /// `f(x)`, `t.0`: the left part is parsed before we know it is a child).
    /// Nothing may be started between this node's completion and the call.
    pub(crate) fn precede(self, p: &mut Parser<'_>) -> Marker {
        p.builder.start_node_before(self.placed);
        Marker { completed: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser's own errors, before `parse` sorts and merges them.
    fn raw_errors(text: &str) -> Vec<SyntaxError> {
        let (lexed, _) = crate::lexer::lex(text, Lexed::new(text.len()));
        let mut p = Parser::new(text, lexed);
        grammar::source_file(&mut p);
        p.finish().1
    }

    #[test]
    fn one_error_per_spot() {
        for body in [
            "f(1 2",
            "f(1, 2 }",
            "(1, 2",
            "(1 2)",
            "[1 2",
            "f(%x, a=1 2)",
            "f(%x, a=[1, 2)",
            "match (%x) { A(%y => 1 }",
            "if (True { 1 } else { 2 }",
            "let %x = ; %x",
        ] {
            let text =
                format!("#[version = \"0.0.5\"]\ndef @f(%x) {{ {body} }}\ndef @g() {{ 1 }}\n");
            let errors = raw_errors(&text);
            assert!(!errors.is_empty(), "{body}: no error");
            for pair in errors.windows(2) {
                assert_ne!(
                    pair[0].range().start(),
                    pair[1].range().start(),
                    "{body}: two errors at one spot: {errors:?}"
                );
            }
        }
        let text = "#[version = \"0.0.5\"]\ndef @f(%x: Tensor[(1, 2 %y) { %x }\n";
        let errors = raw_errors(text);
        assert!(!errors.is_empty());
        for pair in errors.windows(2) {
            assert_ne!(
                pair[0].range().start(),
                pair[1].range().start(),
                "{errors:?}"
            );
        }
    }

    /// Issue 15, item 4: one unclosed delimiter followed by thousands of
    /// tokens that cannot start a parameter was one error per token.
    #[test]
    fn a_run_of_unreadable_parameters_is_one_error() {
        let text = format!("#[version = \"0.0.5\"]\ndef @main({}\n", "(".repeat(16_000));
        let parse = crate::parse_module(&text);
        let errors = parse.errors();
        assert!(
            errors.len() <= 2,
            "{} errors: {:?}",
            errors.len(),
            &errors[..3]
        );
        let unclosed = errors
            .iter()
            .find(|e| e.kind() == crate::SyntaxErrorKind::Unclosed)
            .expect("an unclosed-delimiter error");
        let open = text.find("@main(").unwrap() + "@main".len();
        assert_eq!(usize::from(unclosed.labels()[0].range.start()), open);
    }

    #[test]
    fn a_run_of_lets_without_variables_is_one_error() {
        let text = format!(
            "#[version = \"0.0.5\"]\ndef @main() {{ {} }}\n",
            "let ".repeat(8_000)
        );
        let errors = crate::parse_module(&text).errors().to_vec();
        assert_eq!(errors.len(), 1, "{:?}", &errors[..errors.len().min(3)]);
        assert_eq!(errors[0].message(), "expected local variable found `let`");
    }

    /// Issue 14, defect 4: an unclosed `(` is labelled at the `(` itself.
    #[test]
    fn an_unclosed_group_points_at_its_opener() {
        for (text, opener) in [
            (
                "#[version = \"0.0.5\"]\ndef @f(%x) { add(%x, %x }\n",
                "add(",
            ),
            ("#[version = \"0.0.5\"]\ndef @f(%x) { (%x, %x\n", "(%x,"),
            (
                "#[version = \"0.0.5\"]\ndef @f(%x: Tensor[(1, 2), float32 { %x }\n",
                "Tensor[",
            ),
            (
                "#[version = \"0.0.5\"]\ndef @f(%x { %x }\ndef @g() { 1 }\n",
                "(%x {",
            ),
            ("#[version = \"0.0.5\"]\ndef @f(%x) { %x\n", "{ %x"),
        ] {
            let errors = crate::parse_module(text).errors().to_vec();
            let unclosed = errors
                .iter()
                .find(|e| e.kind() == crate::SyntaxErrorKind::Unclosed)
                .unwrap_or_else(|| panic!("{text}: no unclosed-group error in {errors:?}"));
            let at = text.find(opener).unwrap() + opener.find(['(', '[', '{']).unwrap();
            assert_eq!(
                usize::from(unclosed.labels()[0].range.start()),
                at,
                "{text}: {errors:?}"
            );
        }
    }
}
