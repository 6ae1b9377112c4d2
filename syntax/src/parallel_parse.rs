//! Parsing a large module's top-level definitions in parallel.
//!
//! A module is a header, definitions and perhaps a metadata section. Above
//! [`MIN_PARALLEL_LEN`] bytes, the text is cut before every `def` that starts
//! a line and before a `#[metadata]` that starts a line; the header and every
//! piece are lexed and parsed on their own (a `rayon` task each), and the
//! root is assembled from their children. The result is the tree and the
//! errors the sequential parse gives, because a piece is used only when its
//! boundaries cannot depend on the text around it:
//!
//! * a definition's piece is one `def` and trivia: up to its last `}`, it
//!   is parsed as the incremental re-parse parses an edited definition
//!   (`lone_def.rs`: lexes cleanly, ends with the `}` of its body, is
//!   exactly one `def`, no error at its end, no leniency), and after that
//!   `}` it lexes without errors as whitespace and comments only (a comment
//!   left open would, in the whole text, run on into the next piece; a cut
//!   inside a comment or a string leaves one of those behind);
//! * the header parses without errors, as the version and perhaps `type`
//!   definitions — no `extern type` (after one, TVM reads no definition);
//! * the metadata piece is one `#[metadata]` token, as in the whole text;
//! * nothing is accepted leniently (a full parse reports the leniencies
//!   sorted, one warning per name), and no nesting limit is hit (reported
//!   once per parse: two pieces could each report one).
//!
//! Otherwise the caller parses the whole text sequentially. A piece's
//! tokens are shared within the piece only (see `build_tree.rs`): equal
//! green tokens of different pieces are equal values, not one allocation.

use crate::build_tree::Lexed;
use crate::lexer::Token;
use crate::lone_def::parse_lone_def;
use crate::parser::{self, grammar};
use crate::syntax_error::SyntaxErrorKind;
use crate::{lexer, ParseOptions, SyntaxError, SyntaxKind};
use rayon::prelude::*;
use rowan::{GreenNode, GreenToken, NodeOrToken, TextRange, TextSize};

type GreenElement = NodeOrToken<GreenNode, GreenToken>;

/// Below this size the sequential parse is fast enough (and cutting and
/// assembling would cost more than a second thread saves).
pub(crate) const MIN_PARALLEL_LEN: usize = 256 << 10;

/// The root of a module and its parse errors (before validation), parsed
/// piece by piece in parallel; `None` when the text cannot be cut so that
/// the pieces give what the sequential parse gives (see the module docs).
pub(crate) fn parse_module(
    text: &str,
    options: ParseOptions,
) -> Option<(GreenNode, Vec<SyntaxError>)> {
    let cuts = cuts(text);
    if cuts.len() < 2 {
        return None;
    }
    let header = &text[..cuts[0]];
    let mut bounds: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    let last = *cuts.last().expect("at least two cuts");
    let metadata_start = text[last..].starts_with(METADATA_CUT).then_some(last);
    if metadata_start.is_none() {
        bounds.push((last, text.len()));
    }

    let (header, pieces) = rayon::join(
        || parse_header(header, options),
        || {
            bounds
                .par_iter()
                .map(|&(start, end)| parse_def_piece(&text[start..end], options))
                .collect::<Option<Vec<Piece>>>()
        },
    );
    let header = header?;
    let pieces = pieces?;
    let metadata = match metadata_start {
        Some(start) => Some(metadata_section(&text[start..], options)?),
        None => None,
    };

    let mut children: Vec<GreenElement> = header.children;
    let mut errors: Vec<SyntaxError> = header.errors;
    for (piece, &(start, _)) in pieces.into_iter().zip(&bounds) {
        children.extend(piece.children);
        let offset = TextSize::from(start as u32);
        errors.extend(
            piece
                .errors
                .into_iter()
                .map(|e| e.map_ranges(|r| r + offset)),
        );
    }
    children.extend(metadata);
    Some((
        GreenNode::new(SyntaxKind::SOURCE_FILE.into(), children),
        errors,
    ))
}

const DEF_CUT: &str = "def";
const METADATA_CUT: &str = "#[metadata]";

/// Where the pieces start: before every `def` keyword at the start of a
/// line, and before the first `#[metadata]` at the start of a line (which
/// ends the cuts: the metadata section runs to the end of the text). A cut
/// inside a comment or a string is caught by the pieces' checks.
fn cuts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts = Vec::new();
    let mut line_start = 0;
    loop {
        let line = &text[line_start..];
        if line.starts_with(DEF_CUT)
            && !bytes
                .get(line_start + DEF_CUT.len())
                .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
        {
            cuts.push(line_start);
        } else if line.starts_with(METADATA_CUT) && !cuts.is_empty() {
            cuts.push(line_start);
            break;
        }
        match bytes[line_start..].iter().position(|&b| b == b'\n') {
            Some(newline) => line_start += newline + 1,
            None => break,
        }
    }
    cuts
}

/// The root's children from one piece, and its errors (relative to the
/// piece).
struct Piece {
    children: Vec<GreenElement>,
    errors: Vec<SyntaxError>,
}

/// The text before the first definition: the version header, trivia and
/// perhaps `type` definitions, parsed as the module they make up.
fn parse_header(header: &str, options: ParseOptions) -> Option<Piece> {
    let (lexed, lex_errors, frontend_names) =
        lexer::lex_with(header, Lexed::new(header.len()), options.lenient);
    if !lex_errors.is_empty() || !frontend_names.is_empty() {
        return None;
    }
    let mut p = parser::Parser::new(header, lexed);
    p.lenient = options.lenient;
    if grammar::is_expression_file(&p) {
        return None;
    }
    grammar::source_file(&mut p);
    let (green, errors, leniencies) = p.finish();
    if !errors.is_empty() || !leniencies.is_empty() {
        return None;
    }
    let children: Vec<GreenElement> = green.children().map(|c| c.to_owned()).collect();
    // After an `extern type` TVM reads no definition; a metadata section
    // runs to the end of the whole text, over the definitions.
    if children.iter().any(|c| {
        matches!(
            kind_of(c),
            SyntaxKind::EXTERN_TYPE_DEF | SyntaxKind::METADATA_SECTION
        )
    }) {
        return None;
    }
    Some(Piece { children, errors })
}

/// One `def` and the trivia after it, if its boundaries are those it has in
/// the whole text (see the module docs).
fn parse_def_piece(piece: &str, options: ParseOptions) -> Option<Piece> {
    // The `}` that closes the body is the last token; a `}` in a comment
    // after it makes the definition fail the checks, and the text is then
    // parsed sequentially.
    let def_end = piece.rfind('}')? + 1;
    let (def, errors) = parse_lone_def(&piece[..def_end], options)?;
    if errors.iter().any(|e| e.kind() == SyntaxErrorKind::Limit) {
        return None;
    }
    let mut children = vec![NodeOrToken::Node(def)];
    push_trivia(&piece[def_end..], options, &mut children)?;
    Some(Piece { children, errors })
}

/// Pushes the tokens of `text` onto `children`, if it lexes without errors
/// as whitespace and comments only.
fn push_trivia(text: &str, options: ParseOptions, children: &mut Vec<GreenElement>) -> Option<()> {
    let (tokens, lex_errors, _) = lexer::lex_with(text, Vec::<Token>::new(), options.lenient);
    if !lex_errors.is_empty() {
        return None;
    }
    let mut start = 0;
    for token in tokens {
        if !token.kind.is_trivia() {
            return None;
        }
        let end = start + usize::from(token.len);
        let token_text = text.get(start..end)?;
        children.push(NodeOrToken::Token(GreenToken::new(
            token.kind.into(),
            token_text,
        )));
        start = end;
    }
    Some(())
}

/// The metadata section: one token to the end of the text, as the lexer
/// reads it in the whole text.
fn metadata_section(piece: &str, options: ParseOptions) -> Option<GreenElement> {
    let (tokens, lex_errors, _) = lexer::lex_with(piece, Lexed::new(16), options.lenient);
    if !lex_errors.is_empty()
        || tokens.last_token()
            != Some((SyntaxKind::METADATA, TextRange::up_to(TextSize::of(piece))))
    {
        return None;
    }
    let token = GreenToken::new(SyntaxKind::METADATA.into(), piece);
    Some(NodeOrToken::Node(GreenNode::new(
        SyntaxKind::METADATA_SECTION.into(),
        [NodeOrToken::Token(token)],
    )))
}

fn kind_of(element: &GreenElement) -> SyntaxKind {
    let raw = match element {
        NodeOrToken::Node(node) => node.kind(),
        NodeOrToken::Token(token) => token.kind(),
    };
    <crate::RelayLanguage as rowan::Language>::kind_from_raw(raw)
}

#[cfg(test)]
mod tests {
    //! Which texts take the parallel path (`tests/parallel_parse.rs` checks
    //! that it gives what the sequential parse gives).
    use super::*;

    const TWO_DEFS: &str =
        "#[version = \"0.0.5\"]\n// header\ndef @f() { 1 }\n\ndef @g(%x) {\n  %x\n}\n";

    fn parallel(text: &str) -> bool {
        parse_module(text, ParseOptions::STRICT).is_some()
    }

    #[test]
    fn the_generated_module_is_parsed_in_parallel() {
        let text = relay_test_support::generate::resnet_module_of_size(1 << 20);
        assert!(parallel(&text));
    }

    #[test]
    fn definitions_and_metadata_are_parsed_in_parallel() {
        assert!(parallel(TWO_DEFS));
        assert!(parallel(&format!("{TWO_DEFS}#[metadata]\n{{}}\n")));
        // An error inside a definition does not move its boundaries.
        assert!(parallel(&TWO_DEFS.replace("%x\n", "%x +\n")));
        // Comments after a definition's `}` are its piece's trivia.
        assert!(parallel(
            &TWO_DEFS.replace("{ 1 }\n", "{ 1 } // f\n/* { */\n")
        ));
    }

    #[test]
    fn texts_whose_pieces_could_differ_are_not() {
        // The body of `@f` is left open: it swallows `@g`.
        assert!(!parallel(&TWO_DEFS.replace("{ 1 }", "{ 1")));
        // A comment opened in `@f` runs on over `@g`.
        assert!(!parallel(&TWO_DEFS.replace("{ 1 }", "{ 1 } /*")));
        // Not trivia after the `}` of `@f`.
        assert!(!parallel(&TWO_DEFS.replace("{ 1 }", "{ 1 } %x")));
        assert!(!parallel(&TWO_DEFS.replace("// header", "extern type T")));
        assert!(!parallel(&TWO_DEFS.replace("// header", "#[metadata]")));
        assert!(!parallel(&TWO_DEFS.replace("#[version = \"0.0.5\"]", "")));
        assert!(!parallel("#[version = \"0.0.5\"]\ndef @f() { 1 }\n"));
    }
}
