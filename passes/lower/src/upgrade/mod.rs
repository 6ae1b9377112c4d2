//! `relay fmt --upgrade` and the editor's "Upgrade to Relay 0.0.5": a text
//! read leniently, rewritten so that TVM v0.13's parser reads the module it
//! means. One function, called by the CLI and the language server.
//!
//! The upgrade edits the text rather than printing the module again: only
//! what a lenient reading accepted is rewritten (the version header, a bare
//! `fn` made `def @main`, frontend names renamed, attributes of other
//! versions written out or dropped, attributes types named, metadata
//! objects completed), so every comment, blank line and layout choice of
//! the user stays where it was. Each edit comes from the lossless syntax
//! tree; the result is read again and must mean the same module (the same
//! reparseable print), else the text is refused rather than changed.
//! What no edit can make readable (a constant whose value the text never
//! had, an operator nobody declared) stays as it was written.

mod attrs;
mod edits;
mod names;

use self::edits::Edits;
use crate::{lower_parse, parse_and_lower_with, LowerOptions};
use relay_ir::diagnostic::{Code, Diagnostic, Diagnostics};
use relay_ir::printer::{print_module, PrintOptions};
use relay_ir::source::{FileId, SourceMap, Span};
use relay_ir::IRModule;
use relay_syntax::{Entry, LeniencyKind, ParseOptions, SyntaxKind, SyntaxNode, TextRange};

/// The header TVM v0.13 reads.
const HEADER: &str = "#[version = \"0.0.5\"]";

/// Why a text cannot be upgraded by editing it: where, and what to do.
pub(super) struct Refusal {
    pub range: TextRange,
    pub message: String,
}

impl Refusal {
    pub fn new(range: TextRange, message: impl Into<String>) -> Refusal {
        Refusal {
            range,
            message: message.into(),
        }
    }
}

/// The upgraded text and the warnings of the lenient reading (what was
/// changed; constants whose value the text did not have stay references),
/// or the errors that stop the reading or the upgrade (the text is then
/// left as it is).
pub fn upgrade(name: &str, text: &str) -> Result<(String, Diagnostics), Diagnostics> {
    let mut sources = SourceMap::new();
    let file = sources.add(name, text);
    let parse = relay_syntax::parse_with(text, Entry::Module, ParseOptions::LENIENT);
    let mut diagnostics: Vec<Diagnostic> = Diagnostic::of_parse(file, &parse);
    let lowered = lower_parse(file, &parse, LowerOptions::LENIENT);
    let mut module = IRModule::new();
    if let Some(lowered) = lowered {
        diagnostics.extend(lowered.diagnostics);
        module = lowered.module;
    }
    module.sources = sources;
    let diagnostics: Diagnostics = diagnostics.into_iter().collect();
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    let root = parse.syntax_node();
    let refused = |refusal: Refusal| refusal_diagnostics(file, refusal);
    let edits = edits_for(&root, &parse, &diagnostics).map_err(refused)?;
    let upgraded = edits.apply(text).map_err(refused)?;
    check_same_module(name, &module, &upgraded).map_err(refused)?;
    Ok((upgraded, diagnostics))
}

/// Every edit the lenient reading's warnings call for.
fn edits_for(
    root: &SyntaxNode,
    parse: &relay_syntax::Parse,
    diagnostics: &Diagnostics,
) -> Result<Edits, Refusal> {
    let mut edits = Edits::default();
    for leniency in parse.leniencies() {
        match leniency.kind {
            LeniencyKind::MissingVersion => edits.insert(0.into(), format!("{HEADER}\n")),
            LeniencyKind::OtherVersion => edits.replace(leniency.range, HEADER),
            LeniencyKind::ExpressionFile => expression_file_as_main(root, &mut edits)?,
            // All of a name's occurrences at once, below.
            LeniencyKind::FrontendName => {}
        }
    }
    names::rename_frontend_names(root, parse.leniencies(), &mut edits)?;
    let mut fixed = attrs::Fixed::default();
    for d in diagnostics.iter() {
        let Some(span) = d.span else { continue };
        match d.code {
            Code::OldAttributes => {
                attrs::write_old_defaults(root, span.range, &mut fixed, &mut edits)?
            }
            Code::DroppedAttribute => attrs::drop_attribute(root, span.range, &mut edits)?,
            Code::AttrsTypeFromOperator => {
                attrs::name_attrs_type(root, span.range, &mut fixed, &mut edits)?
            }
            // Nothing to write: the value or the operator is not in the text.
            _ => {}
        }
    }
    Ok(edits)
}

/// A file that is one expression becomes a module whose `@main` it is: a
/// `fn` at the top is written `def @main`; any other expression is wrapped
/// in `def @main() { … }`. A header is added when there is none.
fn expression_file_as_main(root: &SyntaxNode, edits: &mut Edits) -> Result<(), Refusal> {
    if !root.children().any(|n| n.kind() == SyntaxKind::VERSION) {
        edits.insert(0.into(), format!("{HEADER}\n"));
    }
    let Some(expr) = root
        .children()
        .find(|n| !matches!(n.kind(), SyntaxKind::VERSION | SyntaxKind::METADATA_SECTION))
    else {
        return Err(Refusal::new(
            root.text_range(),
            "this file has no expression to make the module's `@main`",
        ));
    };
    // A `fn` that is the whole expression (possibly inside a one-statement
    // sequence).
    let mut top = expr.clone();
    while top.kind() == SyntaxKind::SEQ_EXPR {
        let mut statements = top.children();
        match (statements.next(), statements.next()) {
            (Some(only), None) => top = only,
            _ => break,
        }
        if top.kind() == SyntaxKind::EXPR_STMT {
            match top.first_child() {
                Some(inner) => top = inner,
                None => break,
            }
        }
    }
    if top.kind() == SyntaxKind::FN_EXPR {
        let fn_kw = top
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .find(|t| t.kind() == SyntaxKind::FN_KW);
        if let Some(fn_kw) = fn_kw {
            // `fn (` → `def @main(`: the space after `fn` goes too.
            let mut end = fn_kw.text_range().end();
            let mut next = fn_kw.next_token();
            while let Some(token) = next.filter(|t| t.kind() == SyntaxKind::WHITESPACE) {
                end = token.text_range().end();
                next = token.next_token();
            }
            edits.replace(TextRange::new(fn_kw.text_range().start(), end), "def @main");
            return Ok(());
        }
    }
    let range = expr.text_range();
    edits.insert(range.start(), "def @main() {\n".to_string());
    edits.insert(range.end(), "\n}".to_string());
    Ok(())
}

/// Checks that `upgraded` reads (leniently: references to constants
/// without values and undeclared operators may stay) to the module
/// `original` is, with nothing left that a lenient reading had to accept
/// but an upgrade could write.
fn check_same_module(name: &str, original: &IRModule, upgraded: &str) -> Result<(), Refusal> {
    let (module, diagnostics) = parse_and_lower_with(name, upgraded, LowerOptions::LENIENT);
    let whole = TextRange::up_to(0.into());
    if let Some(d) = diagnostics
        .iter()
        .find(|d| d.is_error() || (is_fixable_leniency(d.code)))
    {
        return Err(Refusal::new(
            whole,
            format!(
                "the upgraded text would not read as clean Relay 0.0.5 ({}: {}); the text was \
                 left as it is (please report this)",
                d.code, d.message
            ),
        ));
    }
    let options = PrintOptions {
        show_types: false,
        ..PrintOptions::default()
    };
    if print_module(original, &options) != print_module(&module, &options) {
        return Err(Refusal::new(
            whole,
            "the upgraded text would mean another module; the text was left as it is (please \
             report this)",
        ));
    }
    Ok(())
}

/// Whether `code` reports a leniency an upgrade writes out (those it
/// cannot, a reference without a metadata section and an operator nobody
/// declared, may stay).
fn is_fixable_leniency(code: Code) -> bool {
    matches!(
        code,
        Code::NoVersionHeader
            | Code::OtherVersionHeader
            | Code::ExpressionFile
            | Code::FrontendName
            | Code::OldAttributes
            | Code::DroppedAttribute
            | Code::AttrsTypeFromOperator
    )
}

fn refusal_diagnostics(file: FileId, refusal: Refusal) -> Diagnostics {
    let diagnostic = Diagnostic::error(Code::InvalidUpgrade, refusal.message)
        .with_span(Span::new(file, refusal.range));
    std::iter::once(diagnostic).collect()
}

#[cfg(test)]
mod tests;
