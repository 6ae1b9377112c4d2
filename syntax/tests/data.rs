//! Data-driven snapshot tests of the parser.
//!
//! Every `test_data/ok/*.relay` and `test_data/err/*.relay` file is parsed
//! (with `parse_expr` when its name ends in `.expr.relay`, else with
//! `parse_module`) and the tree dump with its errors is compared with the
//! snapshot `tests/snapshots/data__{ok,err}@NAME.snap`. Files in `ok/` must
//! parse without errors, files in `err/` with at least one.
//!
//! To add a case, write the input file and run
//! `INSTA_UPDATE=always cargo test -p relay-syntax --test data` (or
//! `cargo insta test --accept`), then read the new snapshot.
//!
//! Two more tests keep the data complete: every `SyntaxKind` must appear in
//! some tree, and every error message the lexer and parser can emit must be
//! produced by some input.

use relay_syntax::{parse, Entry, Parse, SyntaxElement, SyntaxKind};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

struct Case {
    /// The file name without `.relay`, e.g. `literals.expr`.
    name: String,
    path: PathBuf,
    text: String,
    entry: Entry,
}

fn cases(dir: &str) -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(dir);
    let mut cases: Vec<Case> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "relay"))
        .map(|path| {
            let file_name = path.file_name().unwrap().to_str().unwrap();
            let name = file_name.strip_suffix(".relay").unwrap().to_string();
            let entry = if name.ends_with(".expr") {
                Entry::Expr
            } else {
                Entry::Module
            };
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            Case {
                name,
                path,
                text,
                entry,
            }
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(!cases.is_empty(), "no test data in {}", root.display());
    cases
}

/// Parses every case of `dir`, checks it is lossless and snapshots its dump.
fn run_dir(dir: &str, expect_errors: bool) {
    let mut wrong = Vec::new();
    for case in cases(dir) {
        let parse = parse(&case.text, case.entry);
        assert_eq!(
            parse.syntax_node().to_string(),
            case.text,
            "{}: the tree does not give back the text",
            case.path.display()
        );
        if parse.errors().is_empty() == expect_errors {
            wrong.push(format!("{}:\n{}", case.name, errors_of(&parse)));
        }
        insta::with_settings!({
            input_file => &case.path,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("{dir}@{}", case.name), parse.debug_dump());
        });
    }
    assert!(
        wrong.is_empty(),
        "files in {dir}/ that {}:\n{}",
        if expect_errors {
            "parse without errors"
        } else {
            "have errors"
        },
        wrong.join("\n")
    );
}

fn errors_of(parse: &Parse) -> String {
    parse
        .errors()
        .iter()
        .map(|e| format!("  {:?}: {}\n", e.range(), e.message()))
        .collect()
}

#[test]
fn ok_files() {
    run_dir("ok", false);
}

#[test]
fn err_files() {
    run_dir("err", true);
}

// ---- coverage of the data ----

/// The names of all `SyntaxKind` variants, read from the source of the enum
/// so that a kind added later is noticed here.
fn all_kinds() -> BTreeSet<String> {
    let source = include_str!("../src/syntax_kind.rs");
    let start = source
        .find("pub enum SyntaxKind {")
        .expect("the SyntaxKind enum");
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("\n}").unwrap()];
    let kinds: BTreeSet<String> = body
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//") && !line.starts_with('#'))
        .map(|line| line.split([',', ' ']).next().unwrap().to_string())
        .filter(|name| name != "__LAST" && name != "EOF")
        .collect();
    assert!(kinds.contains("SOURCE_FILE") && kinds.contains("WHITESPACE"));
    kinds
}

fn kinds_in(dir: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for case in cases(dir) {
        let parse = parse(&case.text, case.entry);
        for element in parse.syntax_node().descendants_with_tokens() {
            let kind: SyntaxKind = match element {
                SyntaxElement::Node(node) => node.kind(),
                SyntaxElement::Token(token) => token.kind(),
            };
            seen.insert(format!("{kind:?}"));
        }
    }
    seen
}

#[test]
fn every_syntax_kind_is_covered() {
    let all = all_kinds();
    // Kinds that only erroneous text produces.
    let error_only: BTreeSet<String> = ["ERROR", "ERROR_TOKEN", "PERCENT", "AT"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let ok = kinds_in("ok");
    let err = kinds_in("err");
    let missing_ok: Vec<_> = all
        .difference(&ok)
        .filter(|k| !error_only.contains(*k))
        .collect();
    assert!(
        missing_ok.is_empty(),
        "kinds that no test_data/ok file produces: {missing_ok:?}"
    );
    let unexpected: Vec<_> = ok.intersection(&error_only).collect();
    assert!(
        unexpected.is_empty(),
        "error kinds in test_data/ok trees: {unexpected:?}"
    );
    let missing_err: Vec<_> = error_only.difference(&err).collect();
    assert!(
        missing_err.is_empty(),
        "error kinds that no test_data/err file produces: {missing_err:?}"
    );
}

/// Every message the lexer and the parser emit, with `…` standing for the
/// variable parts. Keep in sync with `error(`, `error_expected(`,
/// `error_at(` and `Err(format!(` in `src/`.
const MESSAGES: &[&str] = &[
    // lexer
    "\\r carriage returns must be followed by a \\n in the TVM text format",
    "unterminated string literal",
    "unterminated block comment: it runs to the end of the file",
    "`#` denotes the start of an attribute can only be followed by `[` found `…`",
    "`#` denotes the start of an attribute can only be followed by `[` found `end of file`",
    "unterminated attribute: expected `]`",
    "unsupported attribute …",
    "malformed meta reference: expected `meta[Key][index]`",
    "unexpected text `…`",
    // numbers
    "invalid integer number `…`",
    "integer number `…` unrepresentable in width …",
    "unrecognized integer scalar width: …",
    "invalid floating point number `…`",
    "floating point number `…` unrepresentable in width …",
    "unrecognized float scalar width: …",
    "invalid numeric suffix `…`",
    "… literal `…` has bit width `…`, which is out of range (expected 16, 32 or 64)",
    // the file
    "expected text format semantic version, found …; add `#[version = \"0.0.5\"]` as the first line",
    "invalid semantic version `…`",
    "expected end of file found …",
    "expected end of file found …: an `extern type` must be the last definition",
    "an external type may not have any constructors",
    // missing tokens
    "expected `(` found …",
    "expected `)` found …",
    "expected `[` found …",
    "expected `]` found …",
    "expected `{` found …",
    "expected `}` found …",
    "expected `,` found …",
    "expected `;` found …",
    "expected `=` found …",
    "expected `-` found …",
    "expected `>` found …",
    "expected `else` found …",
    "expected `type` found …",
    "expected local variable found …",
    "expected global variable found …",
    "expected identifier found …",
    "expected integer found …",
    "expected an expression found …",
    "expected a pattern found …",
    "expected `>` right after `=` (write `=>`), found …",
    "failed to parse type found …",
    // limits
    "this expression nests more than 256 levels deep; the nested part is not parsed",
    "more than 2048 infix operators in one expression; bind parts with `let`",
    "more than 2048 curried calls in a row",
];

/// Whether `message` matches `template`, where `…` matches any text.
fn matches(template: &str, message: &str) -> bool {
    let parts: Vec<&str> = template.split('…').collect();
    if parts.len() == 1 {
        return template == message;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !message.starts_with(first) || !message[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &message[first.len()..message.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// Inputs too large to keep as files and snapshots: the limits.
fn generated_error_inputs() -> Vec<(String, Entry)> {
    let n = 300;
    vec![
        (format!("{}1{}", "(".repeat(n), ")".repeat(n)), Entry::Expr),
        (format!("1{}", " + 1".repeat(2100)), Entry::Expr),
        (format!("@f{}", "()".repeat(2100)), Entry::Expr),
    ]
}

#[test]
fn every_error_message_is_covered() {
    let mut emitted: Vec<(String, String)> = Vec::new();
    for case in cases("err").into_iter().chain(cases("ok")) {
        for error in parse(&case.text, case.entry).errors() {
            emitted.push((case.name.clone(), error.message().to_string()));
        }
    }
    for (i, (text, entry)) in generated_error_inputs().into_iter().enumerate() {
        for error in parse(&text, entry).errors() {
            emitted.push((format!("generated #{i}"), error.message().to_string()));
        }
    }
    let uncovered: Vec<&str> = MESSAGES
        .iter()
        .copied()
        .filter(|template| !emitted.iter().any(|(_, m)| matches(template, m)))
        .collect();
    assert!(
        uncovered.is_empty(),
        "messages that no test_data/err file produces:\n  {}",
        uncovered.join("\n  ")
    );
    let unknown: Vec<String> = emitted
        .iter()
        .filter(|(_, m)| !MESSAGES.iter().any(|template| matches(template, m)))
        .map(|(name, m)| format!("{name}: {m}"))
        .collect();
    assert!(
        unknown.is_empty(),
        "messages missing from MESSAGES (add them):\n  {}",
        unknown.join("\n  ")
    );
}

/// `build_tree` promises that trivia lies outside the nodes next to it, so
/// that every node starts and ends at a real token, including nodes that end
/// with an empty node left by an error (a `BLOCK_EXPR` with no `{`: `def
/// main() {}` gives `DEF@21..24 "def"`, the space after it outside).
#[test]
fn nodes_start_and_end_at_tokens() {
    let mut wrong = Vec::new();
    for dir in ["ok", "err"] {
        for case in cases(dir) {
            let parse = parse(&case.text, case.entry);
            for node in parse.syntax_node().descendants().skip(1) {
                let children: Vec<SyntaxElement> = node
                    .children_with_tokens()
                    .filter(|child| !child.text_range().is_empty())
                    .collect();
                let at_ends = [children.first(), children.last()];
                if at_ends
                    .iter()
                    .flatten()
                    .any(|child| child.kind().is_trivia())
                {
                    wrong.push(format!(
                        "{}: {:?}@{:?}",
                        case.name,
                        node.kind(),
                        node.text_range()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "nodes that start or end with trivia:\n  {}",
        wrong.join("\n  ")
    );
}

/// Every snapshot of this file belongs to an input that still exists.
#[test]
fn no_orphan_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut names = BTreeSet::new();
    for kind in ["ok", "err"] {
        for case in cases(kind) {
            names.insert(format!("data__{kind}@{}.snap", case.name));
        }
    }
    let orphans: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("data__") && f.ends_with(".snap") && !names.contains(f))
        .collect();
    assert!(
        orphans.is_empty(),
        "snapshots without an input (delete them): {orphans:?}"
    );
}

#[test]
fn template_matching() {
    assert!(matches("a … b", "a x b"));
    assert!(matches("a … b … c", "a x b y c"));
    assert!(!matches("a … b", "a x c"));
    assert!(matches("exact", "exact"));
    assert!(!matches("exact", "exact!"));
}

/// One broken definition must never hide the ones after it: every prefix of
/// a rich definition (cut anywhere: unclosed brackets, strings, comments,
/// half a type, half an attribute), with or without stray text and an
/// unclosed group after it, followed by good definitions, still gives those
/// definitions as nodes with their names.
#[test]
fn a_broken_definition_never_hides_later_ones() {
    let broken = "def @broken[T](%x: Tensor[(1, 2), float32], %y {virtual_device=meta[VirtualDevice][0]}: (int32, fn (T) -> T), axis=[1, (2)], name=\"n\") -> Tensor[(?, 2), float32] { let %a = nn.relu(%x, axis=1); %0 = (%a, %y.0); match (%0) { Cons(%h, _) => if (%h) { ref(1) } else { 2 }, _ => fn (%p) { %p } } }";
    let good = "def @good1(%x) { add(%x, 1) }\ntype Good2 { C }\ndef @good3() { 3 }\n";
    let cut_points: Vec<usize> = (0..=broken.len())
        .filter(|&i| broken.is_char_boundary(i))
        .collect();
    for (cut, junk) in cut_points
        .iter()
        .flat_map(|&cut| ["", " %q (1", " ] [", " , {", " ; (", " } ("].map(|junk| (cut, junk)))
    {
        let text = format!("#[version = \"0.0.5\"]\n{}{junk}\n{good}", &broken[..cut]);
        let parse = parse(&text, Entry::Module);
        let names: Vec<String> = parse
            .syntax_node()
            .children()
            .filter(|node| matches!(node.kind(), SyntaxKind::DEF | SyntaxKind::TYPE_DEF))
            .map(|node| {
                node.children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| matches!(t.kind(), SyntaxKind::GLOBAL | SyntaxKind::IDENT))
                    .map(|t| t.text().to_string())
                    .unwrap_or_default()
            })
            .collect();
        let tail: Vec<&str> = names
            .iter()
            .rev()
            .take(3)
            .rev()
            .map(String::as_str)
            .collect();
        assert_eq!(
            tail,
            ["@good1", "Good2", "@good3"],
            "cut at {cut}: `{}{junk}` hides later definitions: {names:?}",
            &broken[..cut]
        );
    }
}
