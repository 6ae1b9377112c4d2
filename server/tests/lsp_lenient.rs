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

fn hover_text(hover: &Value) -> String {
    hover["contents"]["value"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| hover["contents"].to_string())
}

/// An operator declared in the project's relay.toml: hover shows its
/// declaration, completion offers it, and its calls are type-checked.
#[test]
fn declared_operators_in_hover_completion_and_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lenient/declared");
    let mut client = LspClient::start(false);
    let path = dir.join("model.relay");
    let text = std::fs::read_to_string(&path).unwrap();
    let uri = file_uri(&path);
    client.open(&uri, &text);
    let diagnostics = client.diagnostics(&uri, 1);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let at = text.find("vendor.gemm(").unwrap() + 3;
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": position(&text, at, false) }),
    );
    let shown = hover_text(&hover);
    assert!(shown.contains("vendor.gemm"), "{shown}");
    assert!(shown.contains("GEMM on the vendor"), "{shown}");
    assert!(shown.contains("units"), "{shown}");
    let at = text.find("vendor.scale(").unwrap();
    let completion = client.request(
        "textDocument/completion",
        json!({ "textDocument": { "uri": uri }, "position": position(&text, at, false) }),
    );
    let items = completion["items"]
        .as_array()
        .or_else(|| completion.as_array())
        .cloned()
        .unwrap_or_default();
    let labels: Vec<&str> = items.iter().filter_map(|i| i["label"].as_str()).collect();
    for op in [
        "vendor.gemm",
        "vendor.scale",
        "vendor.quantize",
        "vendor.checksum",
    ] {
        assert!(labels.contains(&op), "{op} not offered");
    }
    // Type errors by the declared rules.
    let wrong_path = dir.join("wrong.relay");
    let wrong = std::fs::read_to_string(&wrong_path).unwrap();
    let wrong_uri = file_uri(&wrong_path);
    client.open(&wrong_uri, &wrong);
    let diagnostics = client.diagnostics(&wrong_uri, 1);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir.join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!("lsp_declared_wrong", render(&diagnostics));
    });
    client.shutdown();
}
