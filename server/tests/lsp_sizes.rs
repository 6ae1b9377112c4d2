//! `relay lsp` under a 4 GB address-space limit keeps serving when a
//! document asks for impossible sizes: opening a module whose type
//! inference would build a 5-billion-dimension shape publishes a
//! diagnostic, "Apply FoldConstant" on a module with a 70-billion-element
//! `full` folds what is small and leaves that call, and the server answers
//! requests afterwards.

mod lsp_client;

use lsp_client::{apply_edits, position, LspClient};
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

const EXPAND_SRC: &str = "#[version = \"0.0.5\"]
def @main(%a: Tensor[(3, 4), float32]) {
  expand_dims(%a, axis=1, num_newaxis=5000000000)
}
";

const FULL_SRC: &str = "#[version = \"0.0.5\"]
def @main(%a: Tensor[(2), float32]) {
  %0 = full(2f, shape=[70000000000], dtype=\"float32\");
  %1 = add(1f, 2f);
  (%0, multiply(%a, %1))
}
";

/// A script that starts the built binary with the address space limited
/// to about 4 GB (the client starts it as `SCRIPT lsp`).
fn limited_server() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relay-lsp-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("relay-limited");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nulimit -v 4000000\nexec '{}' \"$@\"\n",
            env!("CARGO_BIN_EXE_relay")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn td(uri: &str) -> Value {
    json!({ "uri": uri })
}

/// The server still answers: a hover on the operator of `text`.
fn answers_hover(client: &mut LspClient, uri: &str, text: &str, word: &str) {
    let at = text.find(word).expect("the word");
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(text, at + 1, false) }),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains(word), "hover on `{word}`: {hover}");
}

#[test]
fn impossible_sizes_leave_the_server_serving() {
    let mut client = LspClient::start_with(&limited_server(), false, json!({}));

    let expand_uri = "file:///tmp/relay-lsp-sizes/expand.relay";
    client.open(expand_uri, EXPAND_SRC);
    let diagnostics = client.diagnostics(expand_uri, 1);
    let messages: Vec<&str> = diagnostics
        .iter()
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("dimensions a tensor type can have")),
        "{messages:?}"
    );
    answers_hover(&mut client, expand_uri, EXPAND_SRC, "expand_dims");

    let full_uri = "file:///tmp/relay-lsp-sizes/full.relay";
    client.open(full_uri, FULL_SRC);
    client.diagnostics(full_uri, 1);
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": td(full_uri),
            "range": { "start": position(FULL_SRC, 0, false), "end": position(FULL_SRC, FULL_SRC.len(), false) },
            "context": { "diagnostics": [] }
        }),
    );
    let fold = actions
        .as_array()
        .and_then(|a| a.iter().find(|a| a["title"] == "Apply FoldConstant"))
        .cloned()
        .unwrap_or_else(|| panic!("no Apply FoldConstant in {actions}"));
    client
        .request_raw(
            "workspace/executeCommand",
            json!({ "command": fold["command"]["command"], "arguments": fold["command"]["arguments"] }),
        )
        .expect("FoldConstant runs");
    let edit = &client.applied_edits.last().expect("an edit")["edit"]["changes"][full_uri];
    let after = apply_edits(FULL_SRC, edit.as_array().unwrap(), false);
    assert!(after.contains("shape=[70000000000i64]"), "{after}\n{edit}");
    assert!(!after.contains("add(1f, 2f)"), "{after}\n{edit}");

    answers_hover(&mut client, full_uri, FULL_SRC, "multiply");
    answers_hover(&mut client, expand_uri, EXPAND_SRC, "expand_dims");
    client.shutdown();
}
