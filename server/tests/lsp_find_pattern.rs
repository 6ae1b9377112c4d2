//! End-to-end test of the "Find pattern" command (`relay.findPattern`):
//! the real `relay lsp` binary over stdio, a project whose `relay.toml`
//! names a pattern, inline and named patterns, and a pattern that does not
//! parse.

mod lsp_client;

use lsp_client::{file_uri, offset, LspClient};
use serde_json::{json, Value};

const MODEL: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w, padding=[1, 1, 1, 1]);
  nn.relu(%3)
}
"#;

const PROJECT: &str = r#"
[patterns]
conv = "nn.conv2d(*, *)"
"#;

/// The text of each match's range.
fn matched_texts(result: &Value) -> Vec<String> {
    result["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|m| {
            let start = offset(MODEL, &m["range"]["start"], false);
            let end = offset(MODEL, &m["range"]["end"], false);
            MODEL[start..end].to_string()
        })
        .collect()
}

#[test]
fn find_pattern_lists_every_match() {
    let dir = std::env::temp_dir().join(format!("relay-find-pattern-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("relay.toml"), PROJECT).unwrap();
    let path = dir.join("model.relay");
    std::fs::write(&path, MODEL).unwrap();
    let uri = file_uri(&path);

    let mut client = LspClient::start(false);
    let caps = &client.initialize_result.as_ref().unwrap()["capabilities"];
    assert!(caps["executeCommandProvider"]["commands"]
        .as_array()
        .unwrap()
        .contains(&json!("relay.findPattern")));
    client.open(&uri, MODEL);

    let find = |client: &mut LspClient, pattern: &str| {
        client.request_raw(
            "workspace/executeCommand",
            json!({ "command": "relay.findPattern", "arguments": [{ "uri": uri, "pattern": pattern }] }),
        )
    };

    // Inline: the conv2d-bias-relu chain (once) and every relu (twice).
    let chain = find(
        &mut client,
        "nn.conv2d(*, *) |> nn.bias_add(_, *) |> nn.relu(_)",
    )
    .unwrap();
    assert_eq!(matched_texts(&chain), ["nn.relu(%1)"], "{chain}");
    let chain_parts = chain["matches"][0]["parts"].as_array().unwrap();
    assert_eq!(chain_parts.len(), 2, "the conv2d and the bias_add: {chain}");
    assert_eq!(chain["matches"][0]["function"], "main");
    let relus = find(&mut client, "nn.relu(*)").unwrap();
    assert_eq!(matched_texts(&relus), ["nn.relu(%1)", "nn.relu(%3)"]);

    // A named pattern of the project.
    let convs = find(&mut client, "@conv |> nn.relu(_)").unwrap();
    assert_eq!(matched_texts(&convs), ["nn.relu(%3)"]);

    // Not a pattern: an error that shows where.
    let err = find(&mut client, "nn.relu(_)").unwrap_err();
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("`_` stands for the pattern before `|>`"),
        "{message}"
    );
    assert!(message.contains("        ^"), "{message}");

    // The server is still there.
    let again = find(&mut client, "nn.bias_add(*, *)").unwrap();
    assert_eq!(matched_texts(&again), ["nn.bias_add(%0, %b)"]);
    client.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
