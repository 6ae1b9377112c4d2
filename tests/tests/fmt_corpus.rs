//! `relay fmt` (the library formatter) over every Relay text of the
//! repository and of `../shared/tvm` (models, accepted parser inputs, pass
//! inputs): every comment is kept in order, formatting twice changes
//! nothing, the formatted module means what the input meant (structural
//! equality, what `relay diff` reports), and no line is longer than the
//! width unless one token on it does not fit in the room it has.
//!
//! The counts are printed (run with `--nocapture` to see them); the repository
//! part runs without the TVM data, the rest is skipped loudly without it.

use relay_passes::ir::equal::{first_difference, module_first_difference};
use relay_passes::lower::{parse_and_lower, parse_and_lower_expr_in};
use relay_passes::source::SourceMap;
use relay_syntax::format::{format, FormatError, FormatOptions, DEFAULT_WIDTH};
use relay_syntax::{parse, tokenize, Entry, SyntaxKind};
use relay_tests::{files_with_suffix, parser_cases, read, root_or_skip};
use std::path::{Path, PathBuf};

struct Input {
    name: String,
    text: String,
    entry: Entry,
}

#[derive(Default, Debug)]
struct Counts {
    files: usize,
    formatted: usize,
    refused_syntax: usize,
    refused_other: Vec<String>,
    comments_before: usize,
    comments_after: usize,
    comments_lost: Vec<String>,
    idempotent: usize,
    not_idempotent: Vec<String>,
    equal: usize,
    not_comparable: usize,
    different: Vec<String>,
    long_single_token: usize,
    long_bound_comment: usize,
    long_other: Vec<String>,
}

fn entry_of(path: &Path) -> Entry {
    if path.to_string_lossy().ends_with(".expr.relay") {
        Entry::Expr
    } else {
        Entry::Module
    }
}

/// Every `.relay` file under `dir`, skipping build output and node modules.
fn relay_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "target" | "node_modules" | ".git") {
                relay_files(&path, out);
            }
        } else if name.ends_with(".relay") {
            out.push(path);
        }
    }
}

fn repository_inputs() -> Vec<Input> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = Vec::new();
    relay_files(&root, &mut paths);
    paths
        .iter()
        .map(|path| Input {
            name: path
                .strip_prefix(&root)
                .unwrap_or(path)
                .display()
                .to_string(),
            text: read(path),
            entry: entry_of(path),
        })
        .collect()
}

fn shared_inputs(root: &Path) -> Vec<Input> {
    let mut inputs = Vec::new();
    for path in files_with_suffix(&root.join("models"), ".relay") {
        inputs.push(Input {
            name: format!("models/{}", path.file_name().unwrap().to_string_lossy()),
            text: read(&path),
            entry: Entry::Module,
        });
    }
    for case in parser_cases(root)
        .into_iter()
        .filter(|c| c.category == "ok")
    {
        inputs.push(Input {
            name: format!("parser/{}", case.name()),
            text: case.source(),
            entry: if case.is_expr() {
                Entry::Expr
            } else {
                Entry::Module
            },
        });
    }
    let passes = root.join("passes");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&passes)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    for dir in dirs {
        for path in files_with_suffix(&dir, ".before.relay") {
            inputs.push(Input {
                name: path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
                text: read(&path),
                entry: Entry::Module,
            });
        }
    }
    inputs
}

fn comments(text: &str, entry: Entry) -> Vec<String> {
    parse(text, entry)
        .syntax_node()
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| {
            matches!(
                t.kind(),
                SyntaxKind::LINE_COMMENT | SyntaxKind::BLOCK_COMMENT
            )
        })
        .map(|t| t.text().to_string())
        .collect()
}

/// `Some(true)` when both texts lower to structurally equal IR, `None` when
/// the input itself does not lower cleanly (an error test case).
fn same_meaning(name: &str, before: &str, after: &str, entry: Entry) -> Option<bool> {
    match entry {
        Entry::Module => {
            let (a, da) = parse_and_lower(name, before);
            if da.has_errors() {
                return None;
            }
            let (b, db) = parse_and_lower(name, after);
            Some(!db.has_errors() && module_first_difference(&a, &b, false).is_none())
        }
        Entry::Expr => {
            let mut sources = SourceMap::new();
            let (a, da) = parse_and_lower_expr_in(&mut sources, name, before);
            if da.has_errors() {
                return None;
            }
            let (b, db) = parse_and_lower_expr_in(&mut sources, name, after);
            Some(!db.has_errors() && first_difference(&a, &b, true).is_none())
        }
    }
}

/// Classifies the lines longer than `width` (the metadata section, kept
/// verbatim, aside): a token longer than the room the line's indentation
/// leaves; a comment bound to the token before it (`} /* ty=… */;`) that
/// makes the line too long; anything else.
fn long_lines(name: &str, text: &str, width: usize, counts: &mut Counts) {
    let body = match text.find("#[metadata]") {
        Some(index) => &text[..index],
        None => text,
    };
    let (tokens, _) = tokenize(body);
    let mut spans = Vec::with_capacity(tokens.len());
    let mut offset = 0;
    for token in &tokens {
        let len = usize::from(token.len);
        spans.push((offset, len, token.kind));
        offset += len;
    }
    let mut start = 0;
    for line in body.split('\n') {
        let end = start + line.len();
        let columns = line.chars().count();
        if columns > width {
            let indent = line.len() - line.trim_start().len();
            let on_line = spans
                .iter()
                .filter(|&&(s, l, _)| s < end && s + l > start && l > 0);
            let longest = on_line
                .clone()
                .filter(|&&(_, _, kind)| kind != SyntaxKind::WHITESPACE)
                .map(|&(s, l, kind)| (body[s..s + l].chars().count(), kind))
                .max();
            match longest {
                Some((len, _)) if indent + len > width => counts.long_single_token += 1,
                Some((len, SyntaxKind::BLOCK_COMMENT | SyntaxKind::LINE_COMMENT))
                    if columns - len <= width =>
                {
                    counts.long_bound_comment += 1
                }
                _ => counts.long_other.push(format!("{name}: {line}")),
            }
        }
        start = end + 1;
    }
}

fn check(inputs: &[Input], counts: &mut Counts) {
    let options = FormatOptions::default();
    for input in inputs {
        counts.files += 1;
        let formatted = match format(&input.text, input.entry, &options) {
            Ok(formatted) => formatted,
            Err(FormatError::Syntax(_)) => {
                counts.refused_syntax += 1;
                continue;
            }
            Err(error) => {
                counts
                    .refused_other
                    .push(format!("{}: {:?}", input.name, error.errors()));
                continue;
            }
        };
        counts.formatted += 1;
        let before = comments(&input.text, input.entry);
        let after = comments(&formatted, input.entry);
        counts.comments_before += before.len();
        counts.comments_after += after.len();
        if before != after {
            counts.comments_lost.push(input.name.clone());
        }
        match format(&formatted, input.entry, &options) {
            Ok(again) if again == formatted => counts.idempotent += 1,
            _ => counts.not_idempotent.push(input.name.clone()),
        }
        match same_meaning(&input.name, &input.text, &formatted, input.entry) {
            Some(true) => counts.equal += 1,
            Some(false) => counts.different.push(input.name.clone()),
            None => counts.not_comparable += 1,
        }
        long_lines(&input.name, &formatted, DEFAULT_WIDTH, counts);
    }
}

fn report(what: &str, counts: &Counts) {
    eprintln!(
        "relay fmt over {what}: {} files, {} formatted, {} refused for syntax errors, \
         {} refused otherwise; comments {} before, {} after ({} files lost some); \
         idempotent {}/{}; relay diff equal {}/{} ({} inputs do not lower cleanly, \
         not compared); lines over {DEFAULT_WIDTH}: {} with a single longer token, \
         {} made long by a comment bound to the token before it, {} others",
        counts.files,
        counts.formatted,
        counts.refused_syntax,
        counts.refused_other.len(),
        counts.comments_before,
        counts.comments_after,
        counts.comments_lost.len(),
        counts.idempotent,
        counts.formatted,
        counts.equal,
        counts.formatted - counts.not_comparable,
        counts.not_comparable,
        counts.long_single_token,
        counts.long_bound_comment,
        counts.long_other.len(),
    );
}

fn assert_clean(counts: &Counts) {
    assert!(
        counts.refused_other.is_empty(),
        "refused: {:#?}",
        counts.refused_other
    );
    assert!(
        counts.comments_lost.is_empty(),
        "comments changed: {:#?}",
        counts.comments_lost
    );
    assert_eq!(counts.comments_before, counts.comments_after);
    assert!(
        counts.not_idempotent.is_empty(),
        "not idempotent: {:#?}",
        counts.not_idempotent
    );
    assert!(
        counts.different.is_empty(),
        "meaning changed: {:#?}",
        counts.different
    );
    assert!(
        counts.long_other.is_empty(),
        "lines over the width: {:#?}",
        counts.long_other
    );
}

#[test]
fn formatting_the_repository_keeps_comments_and_meaning() {
    let mut counts = Counts::default();
    check(&repository_inputs(), &mut counts);
    report("the repository", &counts);
    assert!(counts.formatted > 100, "too few repository files found");
    assert_clean(&counts);
}

#[test]
fn formatting_the_tvm_corpus_keeps_comments_and_meaning() {
    let Some(root) = root_or_skip("fmt_corpus") else {
        return;
    };
    let mut counts = Counts::default();
    check(&shared_inputs(&root), &mut counts);
    report("../shared/tvm", &counts);
    assert!(counts.formatted > 2000, "too few TVM files found");
    assert_clean(&counts);
}
