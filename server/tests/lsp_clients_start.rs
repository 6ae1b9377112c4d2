//! The server started the way real clients start it, and the code actions
//! a client gets at a cursor position.
//!
//! vscode-languageclient (the VS Code extension's client) runs the
//! configured command with `--stdio` appended when the transport is
//! `TransportKind.stdio`: the extension's `serverOptions` are
//! `{command: relay.server.path, args: ["lsp", ...relay.server.extraArgs],
//! transport: stdio}`, so users get `relay lsp --stdio`.

mod lsp_client;

use lsp_client::{file_uri, position, LspClient};
use serde_json::{json, Value};
use std::path::Path;

const SRC: &str = "#[version = \"0.0.5\"]
def @helper(%a: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  negative(%a)
}

def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
";

const TYPE_ERROR_SRC: &str = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(2, 2), float32], %y: Tensor[(3), float32]) {
  add(%x, %y)
}
";

/// What the VS Code extension sends as `initializationOptions`.
fn vscode_init_options() -> Value {
    json!({ "defaultPipeline": "InferType, FoldConstant", "clientCommands": ["relay.applyPass"] })
}

fn start_like_vscode() -> LspClient {
    let binary = Path::new(env!("CARGO_BIN_EXE_relay"));
    let mut client = LspClient::spawn_args(binary, &["lsp", "--stdio"], &[]);
    client.initialize(false, vscode_init_options());
    client
}

fn code_actions_at(client: &mut LspClient, uri: &str, text: &str, at: usize) -> Vec<Value> {
    client
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": { "uri": uri },
                "range": { "start": position(text, at, false), "end": position(text, at, false) },
                "context": { "diagnostics": [], "triggerKind": 1 }
            }),
        )
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn titles(actions: &[Value]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| a["title"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_command_line_vscode_languageclient_runs_serves_lsp() {
    let mut client = start_like_vscode();
    let uri = "file:///tmp/relay-clients/type_error.relay";
    client.open(uri, TYPE_ERROR_SRC);
    let diagnostics = client.diagnostics(uri, 1);
    assert!(
        diagnostics.iter().any(|d| d["message"]
            .as_str()
            .is_some_and(|m| m.contains("Incompatible broadcast type"))),
        "{diagnostics:?}"
    );
    client.shutdown();
}

#[test]
fn other_transports_are_refused_with_a_usage_error() {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["lsp", "--pipe=/tmp/relay-no-such-pipe"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
}

#[test]
fn only_passes_that_change_the_function_are_offered_plus_one_picker() {
    let mut client = start_like_vscode();
    let uri = "file:///tmp/relay-clients/actions.relay";
    client.open(uri, SRC);
    client.diagnostics(uri, 1);

    let in_main = SRC.find("add(1f").unwrap();
    let main_titles = titles(&code_actions_at(&mut client, uri, SRC, in_main));
    assert!(
        main_titles.contains(&"Apply FoldConstant".to_string()),
        "{main_titles:?}"
    );
    assert!(
        main_titles.contains(&"Apply FoldConstant to @main only".to_string()),
        "{main_titles:?}"
    );
    // Passes with nothing to do here are not offered.
    for idle in [
        "Apply AlterOpLayout",
        "Apply CombineParallelConv2D",
        "Apply InferType",
    ] {
        assert!(!main_titles.contains(&idle.to_string()), "{main_titles:?}");
    }
    // Of the ~70 registered passes, the ones that change this small module
    // (folding, fusion, normal forms, the gradients, …) and the picker.
    assert!(main_titles.len() <= 20, "{main_titles:?}");

    // In @helper (negative of a parameter) nothing folds.
    let in_helper = SRC.find("negative").unwrap();
    let helper_actions = code_actions_at(&mut client, uri, SRC, in_helper);
    let helper_titles = titles(&helper_actions);
    assert!(
        !helper_titles.iter().any(|t| t.contains("FoldConstant")),
        "{helper_titles:?}"
    );

    // The full list is one action away: the client's pass picker.
    let picker: Vec<&Value> = helper_actions
        .iter()
        .filter(|a| a["title"] == "Apply pass…")
        .collect();
    assert_eq!(picker.len(), 1, "{helper_titles:?}");
    let command = &picker[0]["command"];
    assert_eq!(command["command"], "relay.applyPass");
    assert_eq!(command["arguments"][0]["uri"], uri);
    assert!(
        command["arguments"][0]["applicable"].is_array(),
        "{command}"
    );
    client.shutdown();
}

#[test]
fn the_picker_is_offered_only_to_clients_that_implement_it() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-clients/plain.relay";
    client.open(uri, SRC);
    client.diagnostics(uri, 1);
    let at = SRC.find("add(1f").unwrap();
    let offered = titles(&code_actions_at(&mut client, uri, SRC, at));
    assert!(
        offered.contains(&"Apply FoldConstant".to_string()),
        "{offered:?}"
    );
    assert!(!offered.contains(&"Apply pass…".to_string()), "{offered:?}");
    client.shutdown();
}

#[test]
fn relay_toml_pipelines_are_always_offered() {
    let dir = std::env::temp_dir().join(format!("relay-clients-toml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("relay.toml"),
        "[pipelines]\ncleanup = \"InferType, DeadCodeElimination\"\n",
    )
    .unwrap();
    let path = dir.join("model.relay");
    std::fs::write(&path, SRC).unwrap();
    let uri = file_uri(&path);
    let mut client = start_like_vscode();
    client.open(&uri, SRC);
    client.diagnostics(&uri, 1);
    let at = SRC.find("negative").unwrap();
    let offered = titles(&code_actions_at(&mut client, &uri, SRC, at));
    assert!(
        offered.contains(&"Run the relay.toml pipeline `cleanup`".to_string()),
        "{offered:?}"
    );
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}
