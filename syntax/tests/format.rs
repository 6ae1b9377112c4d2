//! Data-driven snapshot tests of the formatter.
//!
//! Every `test_data/format/*.relay` file is formatted (as an expression when
//! its name ends in `.expr.relay`; at the width a first line `// width=N`
//! asks for, else the default) and the result is compared with the snapshot
//! `tests/snapshots/format__format@NAME.snap`. Each result must also keep
//! every comment of the input in order, and formatting it again must change
//! nothing.
//!
//! To add a case, write the input file and run
//! `INSTA_UPDATE=always cargo test -p relay-syntax --test format`, then read
//! the new snapshot.

use relay_syntax::format::{format, FormatError, FormatOptions, DEFAULT_WIDTH};
use relay_syntax::{parse, Entry, SyntaxKind};
use std::path::Path;

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

fn entry_for(name: &str) -> Entry {
    if name.ends_with(".expr") {
        Entry::Expr
    } else {
        Entry::Module
    }
}

#[test]
fn formats_every_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/format");
    let mut paths: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 5, "no test data in {}", root.display());
    for path in paths {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let entry = entry_for(&name);
        let width = text
            .strip_prefix("// width=")
            .and_then(|rest| rest.lines().next())
            .map_or(DEFAULT_WIDTH, |w| w.trim().parse().unwrap());
        let options = FormatOptions { width };
        let formatted = format(&text, entry, &options)
            .unwrap_or_else(|e| panic!("{name}: not formatted: {e:?}"));
        assert_eq!(
            comments(&text, entry),
            comments(&formatted, entry),
            "{name}: the comments changed"
        );
        let again = format(&formatted, entry, &options).unwrap();
        assert_eq!(
            again, formatted,
            "{name}: formatting twice changes the text"
        );
        for line in formatted.lines() {
            let has_comment = line.contains("//") || line.contains("/*");
            assert!(
                line.chars().count() <= width || has_comment,
                "{name}: a line over {width} characters: {line}"
            );
        }
        insta::assert_snapshot!(name.as_str(), formatted);
    }
}

/// A text with syntax errors is refused with those errors, and nothing is
/// formatted.
#[test]
fn syntax_errors_are_refused_with_their_place() {
    let text = "#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(%x, %x // unclosed\n}\n";
    let Err(FormatError::Syntax(errors)) = format(text, Entry::Module, &FormatOptions::default())
    else {
        panic!("a text with a syntax error was formatted");
    };
    let rendered: Vec<String> = errors
        .iter()
        .map(|e| format!("{:?}: {}", e.range(), e.message()))
        .collect();
    insta::assert_snapshot!("refused_syntax_error", rendered.join("\n"));
    assert!(format!("{:?}", FormatError::Syntax(errors).errors()).contains("range"));
}

/// The width is honoured down to tiny values, and a width of 1 does not
/// lose text.
#[test]
fn tiny_widths_keep_the_text() {
    let text =
        "#[version = \"0.0.5\"]\ndef @main(%x: float32 /* x */, %y: float32) { add(%x, %y) }\n";
    for width in [1, 5, 20] {
        let formatted = format(text, Entry::Module, &FormatOptions { width }).unwrap();
        assert_eq!(
            format(&formatted, Entry::Module, &FormatOptions { width }).unwrap(),
            formatted
        );
        assert!(formatted.contains("/* x */"));
    }
}
