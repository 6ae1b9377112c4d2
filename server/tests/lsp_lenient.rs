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

/// "Upgrade to Relay 0.0.5" is `relay fmt --upgrade`: for every file of
/// `test_data/upgrade/` (comments everywhere) the code action's edit gives
/// the text the CLI writes, with every comment kept; a text the upgrade
/// refuses gets no such action.
#[test]
fn the_upgrade_action_keeps_comments_as_the_cli_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/upgrade");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "relay"))
        .collect();
    files.sort();
    assert!(files.len() >= 8);
    let mut client = LspClient::start(false);
    for path in &files {
        let name = path.file_stem().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        let uri = file_uri(path);
        client.open(&uri, &text);
        let _ = client.diagnostics(&uri, 1);
        let actions = client.request(
            "textDocument/codeAction",
            json!({
                "textDocument": { "uri": uri },
                "range": { "start": position(&text, 0, false), "end": position(&text, text.len(), false) },
                "context": { "diagnostics": [] }
            }),
        );
        let actions = actions.as_array().cloned().unwrap_or_default();
        let upgrade = actions
            .iter()
            .find(|a| a["title"] == "Upgrade to Relay 0.0.5");
        let cli = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(["fmt", "--upgrade"])
            .arg(path)
            .arg("--check")
            .output()
            .unwrap();
        if name.starts_with("refused") {
            assert!(upgrade.is_none(), "{name}: offered {upgrade:?}");
            assert_eq!(cli.status.code(), Some(1));
            continue;
        }
        let upgrade = upgrade.unwrap_or_else(|| panic!("{name}: no upgrade"));
        let edits = upgrade["edit"]["changes"][uri.as_str()]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let upgraded = apply_edits(&text, &edits, false);
        // The CLI's result for the same file, through standard input.
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(["fmt", "--upgrade", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}");
        assert_eq!(upgraded, String::from_utf8_lossy(&out.stdout), "{name}");
        for comment in text
            .lines()
            .filter_map(|line| line.find("//").map(|at| &line[at..]))
        {
            assert!(upgraded.contains(comment), "{name}: lost {comment}");
        }
    }
    client.shutdown();
}

/// A `relay.toml` in a scratch directory declaring `acme.norm` with the
/// given output rule and documentation.
fn write_project(dir: &Path, output: &str, doc: &str) {
    let toml = dir.join("relay.toml");
    std::fs::write(
        &toml,
        format!(
            "[ops.\"acme.norm\"]\nargs = [\"data\"]\noutput = \"{output}\"\npattern = \"ElemWise\"\ndoc = \"{doc}\"\n"
        ),
    )
    .unwrap();
    // A modification time the server cannot take for the previous one
    // (file systems with coarse times).
    let file = std::fs::File::options().write(true).open(&toml).unwrap();
    let bump = std::time::SystemTime::now()
        + std::time::Duration::from_secs(60 * (1 + doc.len() as u64 % 7));
    file.set_modified(bump).unwrap();
}

/// Declared operators follow relay.toml while the editor is open: a
/// changed type rule or documentation shows in the diagnostics and hover
/// of open documents — at once when the client reports the change
/// (`workspace/didChangeWatchedFiles`, which the server asks the client
/// to send), at the next edit otherwise (also in a definition the edit
/// does not touch).
#[test]
fn declared_operators_follow_relay_toml_changes() {
    let dir = std::env::temp_dir().join(format!("relay-lsp-ops-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    write_project(&dir, "input 0", "Normalises, version one.");
    let path = dir.join("model.relay");
    let text = "#[version = \"0.0.5\"]\ndef @other(%y: Tensor[(4), float32]) -> Tensor[(4), float32] {\n  acme.norm(%y)\n}\n\ndef @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n  %x\n}\n";
    std::fs::write(&path, text).unwrap();
    let uri = file_uri(&path);
    let toml_uri = file_uri(&dir.join("relay.toml"));

    let mut client = LspClient::start(false);
    client.open(&uri, text);
    let first = client.diagnostics(&uri, 1);
    assert!(first.is_empty(), "{first:#?}");
    let watched = client.registrations.iter().any(|r| {
        r["registrations"].as_array().is_some_and(|list| {
            list.iter().any(|r| {
                r["method"] == "workspace/didChangeWatchedFiles"
                    && r["registerOptions"]["watchers"][0]["globPattern"] == "**/relay.toml"
            })
        })
    });
    assert!(
        watched,
        "the server did not ask to watch relay.toml: {:?}",
        client.registrations
    );
    let at = text.find("acme.norm").unwrap() + 2;
    let hover_at = |client: &mut LspClient| {
        hover_text(&client.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": position(text, at, false) }),
        ))
    };
    assert!(hover_at(&mut client).contains("version one"));

    // The rule changes: the client reports it; the open document is
    // analysed again at the same version.
    write_project(&dir, "Tensor[(1), float32]", "Normalises, version two.");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": toml_uri, "type": 2 }] }),
    );
    let second = client.diagnostics(&uri, 1);
    let rendered = render(&second);
    assert!(rendered.contains("error[E02"), "{rendered}");
    assert!(hover_at(&mut client).contains("version two"));

    // Back to the first rule, without a notification: the next edit (in
    // @main only) reads relay.toml again, and @other is checked again.
    write_project(&dir, "input 0", "Normalises, version three.");
    let edited = text.replace("  %x\n", "  (%x)\n");
    client.change(&uri, 2, json!([{ "text": edited }]));
    let third = client.diagnostics(&uri, 2);
    assert!(third.is_empty(), "{third:#?}");
    let hover = hover_text(&client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": position(&edited, at, false) }),
    ));
    assert!(hover.contains("version three"), "{hover}");
    client.shutdown();
    std::fs::remove_dir_all(&dir).ok();
}
