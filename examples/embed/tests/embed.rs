//! Runs the example: its pass is listed by the CLI, runs in `opt`, and is
//! offered by the language server it starts.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_relay-embed");

#[test]
fn the_cli_lists_and_runs_the_custom_pass() {
    let out = Command::new(BIN)
        .args(["passes", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let passes: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(passes
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "CountCalls"));

    let dir = std::env::temp_dir().join(format!("relay-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.relay");
    std::fs::write(
        &file,
        "#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(multiply(%x, %x), %x) }\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["opt", file.to_str().unwrap(), "-p", "CountCalls"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Two calls: the shared traversal counts each node once.
    assert!(stderr.contains("CountCalls: 2 calls"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

fn send(stdin: &mut impl Write, message: Value) {
    let body = serde_json::to_vec(&message).unwrap();
    write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
    stdin.write_all(&body).unwrap();
    stdin.flush().unwrap();
}

fn read(reader: &mut impl BufRead) -> Value {
    let mut length = 0;
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the server closed its output"
        );
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

fn answer(reader: &mut impl BufRead, id: i64) -> Value {
    loop {
        let message = read(reader);
        if message["id"] == id && message.get("method").is_none() {
            return message["result"].clone();
        }
    }
}

#[test]
fn the_language_server_offers_the_custom_pass() {
    let mut child = Command::new(BIN)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    );
    answer(&mut reader, 1);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
               "params": {"command": "relay.listPasses", "arguments": []}}),
    );
    let passes = answer(&mut reader, 2);
    assert!(
        passes
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "CountCalls"),
        "{passes}"
    );
    let uri = "file:///tmp/relay-embed/m.relay";
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "relay", "version": 1,
            "text": "#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(%x, %x) }\n"}}}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}},
            "context": {"diagnostics": []}}}),
    );
    let actions = answer(&mut reader, 3);
    // Code actions offer the passes that change the code there; CountCalls
    // only logs, so it is left to the pass list above.
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert!(!titles.contains(&"Apply CountCalls"), "{actions}");
    assert!(titles.iter().any(|t| t.starts_with("Apply ")), "{actions}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}),
    );
    answer(&mut reader, 4);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
}
