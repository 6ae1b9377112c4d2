//! The language server reads leniently by default: for every file of
//! `test_data/lenient/` (one leniency each), through a real client, the
//! published diagnostics are warnings with their codes (no error), and the
//! quick fixes include "Upgrade to Relay 0.0.5", whose edit gives text the
//! strict CLI accepts. One snapshot per file: diagnostics, fix titles and
//! the upgraded text.

mod lsp_client;

use lsp_client::{apply_edits, file_uri, position, LspClient};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lenient");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    files.sort();
    files
}

fn render(diagnostics: &[Value]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let severity = match d["severity"].as_u64() {
            Some(1) => "error",
            Some(2) => "warning",
            _ => "other",
        };
        let start = &d["range"]["start"];
        out.push_str(&format!(
            "{severity}[{}] {}:{}: {}\n",
            d["code"].as_str().unwrap_or("?"),
            start["line"].as_u64().unwrap() + 1,
            start["character"].as_u64().unwrap() + 1,
            d["message"].as_str().unwrap_or("")
        ));
    }
    out
}

#[test]
fn the_editor_reads_leniently_with_warnings_and_an_upgrade() {
    let files = cases();
    assert!(files.len() >= 10);
    let mut client = LspClient::start(false);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lenient/snapshots"),
    );
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for path in &files {
            let name = path.file_stem().unwrap().to_str().unwrap();
            let text = std::fs::read_to_string(path).unwrap();
            let uri = file_uri(path);
            client.open(&uri, &text);
            let diagnostics = client.diagnostics(&uri, 1);
            assert!(
                diagnostics.iter().all(|d| d["severity"] != 1),
                "{name}: {diagnostics:#?}"
            );
            assert!(!diagnostics.is_empty(), "{name}: no warning");
            let actions = client.request(
                "textDocument/codeAction",
                json!({
                    "textDocument": { "uri": uri },
                    "range": { "start": position(&text, 0, false), "end": position(&text, text.len(), false) },
                    "context": { "diagnostics": [] }
                }),
            );
            let actions = actions.as_array().cloned().unwrap_or_default();
            let fixes: Vec<&Value> = actions
                .iter()
                .filter(|a| a["kind"].as_str() == Some("quickfix"))
                .collect();
            let titles: Vec<&str> = fixes.iter().filter_map(|a| a["title"].as_str()).collect();
            let upgrade = fixes
                .iter()
                .find(|a| a["title"] == "Upgrade to Relay 0.0.5")
                .unwrap_or_else(|| panic!("{name}: no upgrade among {titles:?}"));
            let edits = upgrade["edit"]["changes"][uri.as_str()]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let upgraded = apply_edits(&text, &edits, false);
            assert!(upgraded.starts_with("#[version = \"0.0.5\"]\n"), "{upgraded}");
            insta::assert_snapshot!(
                format!("lsp_{name}"),
                format!(
                    "== diagnostics\n{}\n== quick fixes\n{}\n\n== after \"Upgrade to Relay 0.0.5\"\n{upgraded}",
                    render(&diagnostics),
                    titles.join("\n")
                )
            );
        }
    });
    client.shutdown();
}
