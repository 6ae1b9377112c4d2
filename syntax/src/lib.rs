//! A lossless, error-tolerant syntax tree for the TVM Relay text format
//! (`#[version = "0.0.5"]`), in the style of rust-analyzer's `syntax` crate.
//!
//! * [`parse_module`] and [`parse_expr`] never fail: they return a [`Parse`]
//!   holding a rowan green tree whose text is the input, byte for byte, and a
//!   list of [`SyntaxError`]s with exact ranges.
//! * The grammar accepts what TVM v0.13's parser accepts (quirks included);
//!   every rejection has a message in TVM's words where TVM has one.
//! * [`ast`], the typed layer, is the one place that says which child is
//!   what. Its wrappers are generic over the node they hold: rowan's cursors
//!   by default (parents, siblings: what the language server and the
//!   formatter need), or [`green_view::Node`], a copy-free reference into the
//!   green tree for readers that go through a whole file once (lowering),
//!   several times faster. The same accessor code reads both.
//! * [`format`](mod@crate::format) lays a file out in TVM's printed style, keeping its comments.
//!
//! This crate knows nothing about the IR, types or passes (those are in
//! the crates under `passes/`).
//!
//! ```
//! use relay_syntax::ast::AstNode;
//!
//! let text = "#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(%x, %x) }\n";
//! let parse = relay_syntax::parse_module(text);
//! assert!(parse.errors().is_empty());
//! // Lossless: the tree holds every byte, comments and whitespace included.
//! assert_eq!(parse.syntax_node().to_string(), text);
//! let file = parse.source_file().unwrap();
//! assert_eq!(file.syntax().text_range().len(), (text.len() as u32).into());
//!
//! // Errors never stop the parse: the tree still covers the whole input.
//! let broken = relay_syntax::parse_module("#[version = \"0.0.5\"]\ndef @f(%x) { %x, }");
//! assert!(!broken.errors().is_empty());
//! ```

pub mod ast;
mod build_tree;
pub mod format;
pub mod green_view;
mod leniency;
mod lexer;
pub mod literal;
mod lone_def;
mod parallel_parse;
mod parser;
mod reparse;
mod syntax_error;
mod syntax_kind;
mod token_set;
mod validation;

pub use crate::leniency::{Leniency, LeniencyKind, ParseOptions};
pub use crate::lexer::{tokenize, LexError, Token};
pub use crate::parser::grammar::is_dtype_name;
pub use crate::reparse::{reparse_module, reparse_module_with, Reparsed, TextEdit};
pub use crate::syntax_error::{SyntaxError, SyntaxErrorKind, SyntaxLabel};
pub use crate::syntax_kind::{RelayLanguage, SyntaxElement, SyntaxKind, SyntaxNode, SyntaxToken};
pub use rowan::{GreenNode, TextRange, TextSize};

/// The result of parsing: a tree that always exists, and the errors found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parse {
    green: GreenNode,
    errors: Vec<SyntaxError>,
    /// What a lenient reading accepted (always empty in strict mode).
    leniencies: Vec<Leniency>,
}

impl Parse {
    /// The root of the tree (a `SOURCE_FILE` or an `EXPR_FILE`).
    pub fn syntax_node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    /// The green tree, cheap to clone and to send across threads.
    pub fn green(&self) -> &GreenNode {
        &self.green
    }

    /// Syntax errors, sorted by position.
    pub fn errors(&self) -> &[SyntaxError] {
        &self.errors
    }

    /// What a lenient reading accepted that TVM's parser rejects, sorted
    /// by position (empty for a strict parse).
    pub fn leniencies(&self) -> &[Leniency] {
        &self.leniencies
    }

    /// The typed root of a module parse.
    pub fn source_file(&self) -> Option<ast::SourceFile> {
        ast::AstNode::cast(self.syntax_node())
    }

    /// The typed root of an expression parse.
    pub fn expr_file(&self) -> Option<ast::ExprFile> {
        ast::AstNode::cast(self.syntax_node())
    }

    /// An indented dump of the tree with token texts, and the errors, for
    /// tests and `relay check --dump-tree`.
    pub fn debug_dump(&self) -> String {
        let mut out = debug_tree(&self.syntax_node());
        for error in &self.errors {
            out.push_str(&format!("error {:?}: {}\n", error.range(), error.message()));
        }
        out
    }
}

/// Which entry point of TVM's parser a text is read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `tvm.relay.parse`: a version header, definitions, metadata.
    Module,
    /// `tvm.relay.parse_expr`: one expression.
    Expr,
}

/// Parses a module (`tvm.relay.parse`).
pub fn parse_module(text: &str) -> Parse {
    parse(text, Entry::Module)
}

/// Parses one expression (`tvm.relay.parse_expr`).
pub fn parse_expr(text: &str) -> Parse {
    parse(text, Entry::Expr)
}

/// Parses `text` with the given entry point.
pub fn parse(text: &str, entry: Entry) -> Parse {
    parse_with(text, entry, ParseOptions::STRICT)
}

/// Parses `text` with the given entry point and options. A lenient module
/// parse of a text that is one `fn` expression gives an `EXPR_FILE` root
/// (see [`LeniencyKind::ExpressionFile`]).
pub fn parse_with(text: &str, entry: Entry, options: ParseOptions) -> Parse {
    parse_with_parallel_threshold(text, entry, options, parallel_parse::MIN_PARALLEL_LEN)
}

/// [`parse_with`], parsing a module's definitions in parallel (see
/// `parallel_parse.rs`) from `min_parallel_len` bytes on instead of the
/// default 256 KiB: the result is the same either way. For tests
/// (`usize::MAX` forces the sequential parse).
#[doc(hidden)]
pub fn parse_with_parallel_threshold(
    text: &str,
    entry: Entry,
    options: ParseOptions,
    min_parallel_len: usize,
) -> Parse {
    if entry == Entry::Module && text.len() >= min_parallel_len {
        if let Some((green, errors)) = parallel_parse::parse_module(text, options) {
            return finish_parse(green, errors, Vec::new(), options);
        }
    }
    let (lexed, lex_errors, frontend_names) =
        lexer::lex_with(text, build_tree::Lexed::new(text.len()), options.lenient);
    let mut p = parser::Parser::new(text, lexed);
    p.lenient = options.lenient;
    match entry {
        Entry::Module if options.lenient && parser::grammar::is_expression_file(&p) => {
            parser::grammar::expr_file(&mut p);
            let range = p.first_token_range();
            p.leniencies.push(Leniency::new(
                LeniencyKind::ExpressionFile,
                "this file is one `fn` expression, not a module; read as the module's `@main` \
                 (TVM reads it with `relay.parse_expr`, `relay check --expr`)",
                range,
            ));
        }
        Entry::Module => parser::grammar::source_file(&mut p),
        Entry::Expr => parser::grammar::expr_file(&mut p),
    }
    let (green, parse_errors, mut leniencies) = p.finish();
    // One warning per name, at its first occurrence.
    let mut warned = std::collections::HashSet::new();
    for range in frontend_names {
        let name = &text[range];
        if !warned.insert(name) {
            continue;
        }
        leniencies.push(Leniency::new(
            LeniencyKind::FrontendName,
            format!(
                "`{name}` is a name as frontends write it; TVM's parser stops it at the first \
                 character that cannot continue a name. Read as one name"
            ),
            range,
        ));
    }
    let errors: Vec<SyntaxError> = lex_errors
        .into_iter()
        .map(|e| SyntaxError::new(e.kind, e.message, e.range))
        .chain(parse_errors)
        .collect();
    finish_parse(green, errors, leniencies, options)
}

/// Validates the tree and sorts the findings: one error per spot.
fn finish_parse(
    green: GreenNode,
    mut errors: Vec<SyntaxError>,
    mut leniencies: Vec<Leniency>,
    options: ParseOptions,
) -> Parse {
    validation::validate(
        &SyntaxNode::new_root(green.clone()),
        &mut errors,
        options.lenient.then_some(&mut leniencies),
    );
    // One message per spot: the first is the most specific (the lexer's,
    // or the parser's first expectation); the rest repeat it.
    errors.sort_by_key(|e| e.range().start());
    errors.dedup_by_key(|e| e.range().start());
    leniencies.sort_by_key(|l| l.range.start());
    Parse {
        green,
        errors,
        leniencies,
    }
}

fn debug_tree(root: &SyntaxNode) -> String {
    use rowan::WalkEvent;
    let mut out = String::new();
    let mut indent = 0usize;
    for event in root.preorder_with_tokens() {
        match event {
            WalkEvent::Enter(element) => {
                out.push_str(&"  ".repeat(indent));
                match element {
                    SyntaxElement::Node(node) => {
                        out.push_str(&format!("{:?}@{:?}\n", node.kind(), node.text_range()));
                        indent += 1;
                    }
                    SyntaxElement::Token(token) => {
                        out.push_str(&format!(
                            "{:?}@{:?} {:?}\n",
                            token.kind(),
                            token.text_range(),
                            token.text()
                        ));
                    }
                }
            }
            WalkEvent::Leave(SyntaxElement::Node(_)) => indent -= 1,
            WalkEvent::Leave(SyntaxElement::Token(_)) => {}
        }
    }
    out
}

#[cfg(test)]
mod lenient_tests {
    use super::*;

    fn kinds_of(parse: &Parse) -> Vec<LeniencyKind> {
        parse.leniencies().iter().map(|l| l.kind).collect()
    }

    #[test]
    fn strict_parsing_reports_what_lenient_parsing_accepts() {
        let cases: &[(&str, &[LeniencyKind])] = &[
            ("def @main() { 1 }\n", &[LeniencyKind::MissingVersion]),
            (
                "#[version = \"0.0.4\"]\ndef @main() { 1 }\n",
                &[LeniencyKind::OtherVersion],
            ),
            ("fn (%x: float32) { %x }\n", &[LeniencyKind::ExpressionFile]),
            (
                "#[version = \"0.0.5\"]\ndef @main(%a.b: float32) { %a.b }\n",
                &[LeniencyKind::FrontendName],
            ),
        ];
        for (text, expected) in cases {
            let strict = parse_module(text);
            assert!(!strict.errors().is_empty(), "{text}");
            assert!(strict.leniencies().is_empty(), "{text}");
            let lenient = parse_with(text, Entry::Module, ParseOptions::LENIENT);
            assert!(
                lenient.errors().is_empty(),
                "{text}: {:?}",
                lenient.errors()
            );
            assert_eq!(kinds_of(&lenient), *expected, "{text}");
            // Lossless either way.
            assert_eq!(lenient.syntax_node().to_string(), *text);
        }
        let expr = parse_with(
            "fn (%x: float32) { %x }",
            Entry::Module,
            ParseOptions::LENIENT,
        );
        assert!(expr.expr_file().is_some());
    }

    #[test]
    fn a_bare_fn_in_strict_mode_points_at_expr() {
        let strict = parse_module("fn (%x: float32) { %x }\n");
        assert!(
            strict.errors()[0].message().contains("--expr"),
            "{:?}",
            strict.errors()
        );
    }
}
