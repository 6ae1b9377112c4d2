//! Snapshot tests of the printer on hand-written programs covering every
//! node kind: `test_data/print/*.relay` (read with `parse_expr` when the name
//! ends in `.expr.relay`) is read, lowered and printed, and the print is
//! compared with `tests/snapshots/print_snapshots__NAME.snap`. Each print
//! must also read back to the same print (the printer's output is a fixed
//! point).
//!
//! To add a case, write the file and run
//! `INSTA_UPDATE=always cargo test -p relay-passes --test print_snapshots`,
//! then read the new snapshot.

use relay_passes::lower::{parse_and_lower, parse_and_lower_expr};
use relay_passes::printer::{print_expr, print_module, PrintOptions};
use std::path::{Path, PathBuf};

fn errors(diagnostics: &relay_passes::diagnostic::Diagnostics) -> Vec<String> {
    diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect()
}

/// Reads and prints `text`; panics on lowering errors.
fn print(name: &str, text: &str, expr: bool) -> String {
    let options = PrintOptions::default();
    if expr {
        let (e, diagnostics) = parse_and_lower_expr(name, text);
        assert!(
            !diagnostics.has_errors(),
            "{name}: {:?}",
            errors(&diagnostics)
        );
        print_expr(&e, &options)
    } else {
        let (m, diagnostics) = parse_and_lower(name, text);
        assert!(
            !diagnostics.has_errors(),
            "{name}: {:?}",
            errors(&diagnostics)
        );
        print_module(&m, &options)
    }
}

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/print");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "relay"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no test data in {}", dir.display());
    files
}

#[test]
fn printed_programs() {
    for path in cases() {
        let file_name = path.file_name().unwrap().to_string_lossy().to_string();
        let name = file_name.strip_suffix(".relay").unwrap().to_string();
        let expr = name.ends_with(".expr");
        let text = std::fs::read_to_string(&path).unwrap();
        let printed = print(&file_name, &text, expr);
        let again = print(&format!("{file_name} (printed)"), &printed, expr);
        assert_eq!(
            again, printed,
            "{file_name}: the print does not read back to itself"
        );
        insta::with_settings!({
            input_file => &path,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, printed);
        });
    }
}
