//! Workspace trust in the language server: relay.toml's external passes and
//! on-save pipelines run no command until the editor says the workspace is
//! trusted (`initializationOptions.trusted`, then `workspace/
//! didChangeConfiguration` with `settings.trusted`); a skipped command is
//! shown to the user once (`window/showMessage`) with what would have run.
//! Also: a pipeline nested 100,000 deep is answered with an error, and the
//! server keeps serving.

mod lsp_client;

use lsp_client::{file_uri, LspClient, TIMEOUT};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

const MODULE: &str = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
";

/// A project whose on-save pipeline runs an external pass that leaves a
/// mark (`ran.txt`, one line per run) in the project directory.
fn project(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("lsp_trust")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("relay.toml"),
        r#"on_save = ["mark"]
[pipelines]
mark = "Mark"
[passes.Mark]
command = ["sh", "-c", "echo ran >> ran.txt; cat"]
"#,
    )
    .unwrap();
    std::fs::write(dir.join("model.relay"), MODULE).unwrap();
    dir
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("ran.txt")).map_or(0, |t| t.lines().count())
}

/// Saves and waits for the diagnostics published after the on-save
/// pipelines (they follow the on-save run).
fn save(client: &mut LspClient, uri: &str) {
    client.notify(
        "textDocument/didSave",
        json!({ "textDocument": { "uri": uri } }),
    );
    client
        .wait_for("textDocument/publishDiagnostics", TIMEOUT, |p| {
            p["uri"] == uri
        })
        .expect("diagnostics after the save");
    client
        .wait_for("textDocument/publishDiagnostics", TIMEOUT, |p| {
            p["uri"] == uri
        })
        .expect("diagnostics after the on-save pipelines");
}

fn untrusted_messages(client: &mut LspClient) -> Vec<String> {
    let mut found = Vec::new();
    while let Some(params) =
        client.wait_for("window/showMessage", Duration::from_millis(300), |p| {
            p["message"]
                .as_str()
                .is_some_and(|m| m.contains("not trusted"))
        })
    {
        found.push(params["message"].as_str().unwrap_or_default().to_string());
    }
    found
}

fn start(trusted: Option<bool>) -> LspClient {
    let options = match trusted {
        Some(t) => json!({ "trusted": t }),
        None => json!({}),
    };
    LspClient::start_with(Path::new(env!("CARGO_BIN_EXE_relay")), false, options)
}

#[test]
fn an_untrusted_workspace_runs_no_command_until_trusted() {
    let dir = project("untrusted");
    let uri = file_uri(&dir.join("model.relay"));
    // No `trusted` option at all: untrusted.
    let mut client = start(None);
    client.open(&uri, MODULE);
    client.diagnostics(&uri, 1);
    save(&mut client, &uri);
    save(&mut client, &uri);
    // Applying the project's pipeline by hand does not run it either.
    let _ = client.request_raw(
        "workspace/executeCommand",
        json!({ "command": "relay.applyPipeline", "arguments": [{ "uri": uri, "pipeline": "mark" }] }),
    );
    assert_eq!(
        runs(&dir),
        0,
        "an external command ran in an untrusted workspace"
    );
    let told = untrusted_messages(&mut client);
    assert_eq!(told.len(), 1, "told once: {told:?}");
    assert!(
        told[0].contains("`sh -c echo ran >> ran.txt; cat`"),
        "the message names the command: {}",
        told[0]
    );

    // The editor grants trust.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({ "settings": { "trusted": true } }),
    );
    save(&mut client, &uri);
    assert_eq!(
        runs(&dir),
        1,
        "the on-save pipeline did not run once trusted"
    );
    assert!(untrusted_messages(&mut client).is_empty());
    client.shutdown();
}

#[test]
fn a_trusted_workspace_runs_on_save_pipelines() {
    let dir = project("trusted");
    let uri = file_uri(&dir.join("model.relay"));
    let mut client = start(Some(true));
    client.open(&uri, MODULE);
    client.diagnostics(&uri, 1);
    save(&mut client, &uri);
    assert_eq!(runs(&dir), 1);
    assert!(untrusted_messages(&mut client).is_empty());
    client.shutdown();
}

#[test]
fn a_deeply_nested_pipeline_does_not_kill_the_server() {
    let dir = project("deep");
    let uri = file_uri(&dir.join("model.relay"));
    let mut client = start(Some(false));
    client.open(&uri, MODULE);
    client.diagnostics(&uri, 1);
    let depth = 100_000;
    let pipeline = format!(
        "{}FoldConstant{}",
        "Sequential(".repeat(depth),
        ")".repeat(depth)
    );
    let answer = client.request(
        "relay/passOutput",
        json!({ "textDocument": { "uri": uri }, "pipeline": pipeline }),
    );
    let error = answer["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("the pipeline nests deeper than 64 levels here"),
        "{answer}"
    );
    // Still serving.
    let answer: Value = client.request(
        "relay/passOutput",
        json!({ "textDocument": { "uri": uri }, "pipeline": "FoldConstant" }),
    );
    assert!(answer["error"].is_null(), "{answer}");
    assert_eq!(
        answer["stages"].as_array().map(Vec::len),
        Some(1),
        "{answer}"
    );
    client.shutdown();
}
