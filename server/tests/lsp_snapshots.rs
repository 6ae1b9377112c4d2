//! Snapshots of the diagnostics `relay lsp` publishes for every file of
//! `test_data/lsp/broken/`: one snapshot per file, rendered as the editor
//! would show them (position, severity, source, message, the source line
//! with carets, related information).

mod lsp_client;

use lsp_client::{file_uri, offset, LspClient};
use serde_json::Value;
use std::path::Path;

fn severity(d: &Value) -> &'static str {
    match d["severity"].as_u64() {
        Some(1) => "error",
        Some(2) => "warning",
        Some(3) => "info",
        _ => "hint",
    }
}

fn render(text: &str, diagnostics: &[Value]) -> String {
    let mut out = String::new();
    if diagnostics.is_empty() {
        out.push_str("(no diagnostics)\n");
    }
    for d in diagnostics {
        let start = &d["range"]["start"];
        let end = &d["range"]["end"];
        let line = start["line"].as_u64().unwrap() as usize;
        out.push_str(&format!(
            "{} [{}] {}:{}-{}:{}\n",
            severity(d),
            d["source"].as_str().unwrap_or("?"),
            line + 1,
            start["character"].as_u64().unwrap() + 1,
            end["line"].as_u64().unwrap() + 1,
            end["character"].as_u64().unwrap() + 1,
        ));
        for message_line in d["message"].as_str().unwrap_or("").lines() {
            out.push_str(&format!("  {message_line}\n"));
        }
        if let Some(source_line) = text.lines().nth(line) {
            let from = offset(text, start, false);
            let to = offset(text, end, false);
            let line_start = from - text[..from].rfind('\n').map_or(from, |i| from - i - 1);
            let col = text[line_start..from].chars().count();
            let width = text[from..to.max(from)]
                .split('\n')
                .next()
                .unwrap_or("")
                .chars()
                .count()
                .max(1);
            out.push_str(&format!(
                "  | {source_line}\n  | {}{}\n",
                " ".repeat(col),
                "^".repeat(width)
            ));
        }
        if let Some(related) = d["relatedInformation"].as_array() {
            for r in related {
                let pos = &r["location"]["range"]["start"];
                out.push_str(&format!(
                    "  related {}:{}: {}\n",
                    pos["line"].as_u64().unwrap() + 1,
                    pos["character"].as_u64().unwrap() + 1,
                    r["message"].as_str().unwrap_or("")
                ));
            }
        }
    }
    out
}

#[test]
fn diagnostics_of_broken_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lsp/broken");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "{} files", files.len());
    let mut client = LspClient::start(false);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir.join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            let uri = file_uri(path);
            client.open(&uri, &text);
            let diagnostics = client.diagnostics(&uri, 1);
            let name = path.file_stem().unwrap().to_str().unwrap();
            insta::assert_snapshot!(name, render(&text, &diagnostics));
        }
    });
    client.shutdown();
}
