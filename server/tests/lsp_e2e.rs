//! End-to-end tests of `relay lsp`: the real binary, JSON-RPC over stdio.

mod lsp_client;

use lsp_client::{apply_edits, file_uri, position, LspClient, TIMEOUT};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

const FOLD_SRC: &str = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
";

const ERROR_SRC: &str = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  add(%x, %y)
}
";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "relay-lsp-test-{}-{}-{}",
        name,
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn messages(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| d["message"].as_str().unwrap_or("").to_string())
        .collect()
}

fn hover_text(result: &Value) -> String {
    result["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn td(uri: &str) -> Value {
    json!({ "uri": uri })
}

#[test]
fn initialize_announces_capabilities_and_encoding() {
    let client = LspClient::start(false);
    let caps = &client.initialize_result.as_ref().unwrap()["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16");
    let commands = caps["executeCommandProvider"]["commands"]
        .as_array()
        .unwrap();
    assert!(commands.contains(&json!("relay.applyPipeline")));
    assert!(commands.contains(&json!("relay.listPasses")));
    assert_eq!(caps["textDocumentSync"]["change"], 2);
    assert_eq!(caps["renameProvider"]["prepareProvider"], true);
    client.shutdown();
    let client = LspClient::start(true);
    let caps = &client.initialize_result.as_ref().unwrap()["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-8");
    client.shutdown();
}

#[test]
fn diagnostics_on_open_and_incremental_change() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/undeclared.relay";
    client.open(uri, ERROR_SRC);
    let diags = client.diagnostics(uri, 1);
    let undeclared: Vec<&Value> = diags
        .iter()
        .filter(|d| {
            d["message"]
                .as_str()
                .unwrap()
                .contains("has not been previously declared")
        })
        .collect();
    assert_eq!(undeclared.len(), 1, "{diags:?}");
    let d = undeclared[0];
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "relay names");
    assert_eq!(d["range"]["start"], json!({"line": 2, "character": 10}));
    assert_eq!(d["range"]["end"], json!({"line": 2, "character": 12}));

    // Rename the use %y to %x with an incremental edit: the error goes away.
    client.change(
        uri,
        2,
        json!([{ "range": { "start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 12} }, "text": "x" }]),
    );
    let diags = client.diagnostics(uri, 2);
    assert!(
        !messages(&diags)
            .iter()
            .any(|m| m.contains("not been previously declared")),
        "{diags:?}"
    );

    // A syntax error, then two quick edits: only the last version's
    // diagnostics may arrive, never a stale one after it.
    client.change(
        uri,
        3,
        json!([{ "range": { "start": {"line": 2, "character": 2}, "end": {"line": 2, "character": 2} }, "text": "(((" }]),
    );
    client.change(
        uri,
        4,
        json!([{ "range": { "start": {"line": 2, "character": 2}, "end": {"line": 2, "character": 5} }, "text": "" }]),
    );
    let diags = client.diagnostics(uri, 4);
    assert!(
        diags.iter().all(|d| d["source"] != "relay syntax"),
        "{diags:?}"
    );
    // Nothing for version 3 comes later.
    let late = client.wait_for(
        "textDocument/publishDiagnostics",
        Duration::from_millis(400),
        |p| p["version"] == 3,
    );
    assert!(late.is_none(), "stale diagnostics were published: {late:?}");
    client.shutdown();
}

#[test]
fn hover_types_operators_and_globals() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/hover.relay";
    let text = format!("{FOLD_SRC}def @second(%a: float32) -> float32 {{\n  @helper(%a)\n}}\ndef @helper(%b: float32) -> float32 {{ %b }}\n");
    client.open(uri, &text);
    client.diagnostics(uri, 1);
    // %x at its use.
    let at = text.find("multiply(%x").unwrap() + "multiply(%".len();
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(&text, at, false) }),
    );
    let shown = hover_text(&hover);
    assert!(shown.contains("%x: Tensor[(2, 2), float32]"), "{shown}");
    // An operator: documentation with attributes and defaults.
    let at = text.find("add(").unwrap() + 1;
    let shown = hover_text(&client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(&text, at, false) }),
    ));
    assert!(shown.contains("add("), "{shown}");
    // A global: its signature.
    let at = text.find("@helper(%a)").unwrap() + 2;
    let shown = hover_text(&client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(&text, at, false) }),
    ));
    assert!(
        shown.contains("def @helper(%b: float32) -> float32"),
        "{shown}"
    );
    client.shutdown();
}

#[test]
fn operator_hover_shows_attributes_with_defaults() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/conv.relay";
    let text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {\n  nn.conv2d(%x, %w, channels=4, kernel_size=[3, 3])\n}\n";
    client.open(uri, text);
    client.diagnostics(uri, 1);
    let at = text.find("conv2d").unwrap();
    let shown = hover_text(&client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(text, at, false) }),
    ));
    assert!(shown.contains("nn.conv2d"), "{shown}");
    assert!(shown.contains("`strides`: `Array<"), "{shown}");
    assert!(shown.contains("= `[1, 1]`"), "{shown}");
    // The attribute under the cursor.
    let at = text.find("channels").unwrap() + 2;
    let shown = hover_text(&client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(text, at, false) }),
    ));
    assert!(shown.contains("channels:"), "{shown}");
    // Signature help inside the call.
    let at = text.find("%w, channels").unwrap() + 1;
    let help = client.request(
        "textDocument/signatureHelp",
        json!({ "textDocument": td(uri), "position": position(text, at, false) }),
    );
    assert!(help["signatures"][0]["label"]
        .as_str()
        .unwrap()
        .starts_with("nn.conv2d(data, weight, strides=[1, 1]"));
    assert_eq!(help["activeParameter"], 1);
    client.shutdown();
}

/// The hover position is computed after a comment with `é` and `😀` on the
/// same line, in UTF-16 and in UTF-8.
#[test]
fn non_ascii_positions_in_both_encodings() {
    for utf8 in [false, true] {
        let mut client = LspClient::start(utf8);
        let uri = format!("file:///tmp/relay-lsp-e2e/unicode-{utf8}.relay");
        let text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 2), float32]) {\n  /* é😀 */ add(%x, %zz)\n}\n";
        client.open(&uri, text);
        let diags = client.diagnostics(&uri, 1);
        let d = diags
            .iter()
            .find(|d| {
                d["message"]
                    .as_str()
                    .unwrap()
                    .contains("not been previously declared")
            })
            .expect("the undeclared %zz");
        let start = text.find("%zz").unwrap();
        assert_eq!(
            d["range"]["start"],
            position(text, start, utf8),
            "utf8={utf8}"
        );
        assert_eq!(
            d["range"]["end"],
            position(text, start + 3, utf8),
            "utf8={utf8}"
        );
        // Hover on %x after the comment.
        let at = text.find("add(%x").unwrap() + 5;
        let shown = hover_text(&client.request(
            "textDocument/hover",
            json!({ "textDocument": td(&uri), "position": position(text, at, utf8) }),
        ));
        assert!(
            shown.contains("%x: Tensor[(2, 2), float32]"),
            "utf8={utf8}: {shown}"
        );
        // An edit after the emoji lands where it should.
        let at = text.find("%zz").unwrap();
        let p = position(text, at + 1, utf8);
        client.change(
            &uri,
            2,
            json!([{ "range": { "start": p, "end": position(text, at + 3, utf8) }, "text": "x" }]),
        );
        let diags = client.diagnostics(&uri, 2);
        assert!(
            !messages(&diags)
                .iter()
                .any(|m| m.contains("not been previously declared")),
            "utf8={utf8}: {diags:?}"
        );
        client.shutdown();
    }
}

fn code_actions(
    client: &mut LspClient,
    uri: &str,
    text: &str,
    start: usize,
    end: usize,
) -> Vec<Value> {
    client
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": td(uri),
                "range": { "start": position(text, start, false), "end": position(text, end, false) },
                "context": { "diagnostics": [] }
            }),
        )
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn run_action(client: &mut LspClient, action: &Value) -> Result<Value, Value> {
    let command = &action["command"];
    client.request_raw(
        "workspace/executeCommand",
        json!({ "command": command["command"], "arguments": command["arguments"] }),
    )
}

#[test]
fn code_action_fold_constant_applies_one_edit() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/fold.relay";
    client.open(uri, FOLD_SRC);
    client.diagnostics(uri, 1);
    let actions = code_actions(&mut client, uri, FOLD_SRC, 0, FOLD_SRC.len());
    let titles: Vec<&str> = actions.iter().filter_map(|a| a["title"].as_str()).collect();
    let fold: Vec<&Value> = actions
        .iter()
        .filter(|a| a["title"].as_str().unwrap().contains("FoldConstant"))
        .collect();
    assert_eq!(fold.len(), 1, "{titles:?}");
    assert_eq!(fold[0]["title"], "Apply FoldConstant");
    run_action(&mut client, fold[0]).expect("FoldConstant runs");
    assert_eq!(client.applied_edits.len(), 1);
    let edit = &client.applied_edits[0]["edit"]["changes"][uri];
    let after = apply_edits(FOLD_SRC, edit.as_array().unwrap(), false);
    assert!(!after.contains("add(1f, 2f)"), "{after}");
    assert!(after.contains("3f"), "{after}");
    assert!(after.contains("multiply("), "{after}");
    client.shutdown();
}

#[test]
fn apply_pipeline_command_and_pass_output() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/pipeline.relay";
    client.open(uri, FOLD_SRC);
    client.diagnostics(uri, 1);
    let out = client.request(
        "relay/passOutput",
        json!({ "textDocument": td(uri), "pipeline": "InferType, FoldConstant" }),
    );
    let stages = out["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2, "{out}");
    assert_eq!(stages[0]["pass"], "InferType");
    assert_eq!(stages[1]["pass"], "FoldConstant");
    assert!(stages[1]["timeMs"].is_number());
    assert_eq!(stages[1]["changed"], true);
    assert!(stages[1]["text"].as_str().unwrap().contains("3f"));
    // A bad pipeline: an error, no stages.
    let out = client.request(
        "relay/passOutput",
        json!({ "textDocument": td(uri), "pipeline": "FoldConstan" }),
    );
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("did you mean `FoldConstant`?"),
        "{out}"
    );
    // relay.listPasses.
    let passes = client.request(
        "workspace/executeCommand",
        json!({ "command": "relay.listPasses", "arguments": [] }),
    );
    assert!(passes
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "PrintIR"));
    // relay.applyPipeline.
    client.request(
        "workspace/executeCommand",
        json!({ "command": "relay.applyPipeline", "arguments": [{ "uri": uri, "pipeline": "InferType, FoldConstant" }] }),
    );
    let edits = client.applied_edits[0]["edit"]["changes"][uri]
        .as_array()
        .unwrap()
        .clone();
    let after = apply_edits(FOLD_SRC, &edits, false);
    assert!(
        after.contains("3f") && !after.contains("add(1f, 2f)"),
        "{after}"
    );
    client.shutdown();
}

#[test]
fn quick_fixes() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/fixes.relay";
    let text = "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {\n  %0 = nn.conv2d(%x, %w, chanels=4);\n  %1 = nn.rel(%0);\n  add(%1, %bias)\n}\n";
    client.open(uri, text);
    client.diagnostics(uri, 1);
    let actions = code_actions(&mut client, uri, text, 0, text.len());
    let find = |title: &str| -> Value {
        actions
            .iter()
            .find(|a| a["title"] == title)
            .unwrap_or_else(|| panic!("no {title:?} in {actions:#?}"))
            .clone()
    };
    let header = find("Add the `#[version = \"0.0.5\"]` header");
    assert_eq!(header["kind"], "quickfix");
    let mut fixed = text.to_string();
    for title in [
        "Add the `#[version = \"0.0.5\"]` header",
        "Replace with `channels`",
        "Replace with `nn.relu`",
        "Declare `%bias` as a parameter of @main",
    ] {
        let action = find(title);
        let edits = action["edit"]["changes"][uri].as_array().unwrap().clone();
        // Each fix is against the original text; apply them all at once below.
        let _ = apply_edits(text, &edits, false);
    }
    let all: Vec<Value> = [
        "Add the `#[version = \"0.0.5\"]` header",
        "Replace with `channels`",
        "Replace with `nn.relu`",
        "Declare `%bias` as a parameter of @main",
    ]
    .iter()
    .flat_map(|t| find(t)["edit"]["changes"][uri].as_array().unwrap().clone())
    .collect();
    fixed = apply_edits(&fixed, &all, false);
    assert!(fixed.starts_with("#[version = \"0.0.5\"]\n"), "{fixed}");
    assert!(
        fixed.contains("channels=4") && fixed.contains("nn.relu(%0)"),
        "{fixed}"
    );
    assert!(fixed.contains("float32], %bias"), "{fixed}");
    client.change(uri, 2, json!([{ "text": fixed }]));
    let diags = client.diagnostics(uri, 2);
    assert!(
        diags
            .iter()
            .all(|d| d["source"] != "relay syntax" && d["source"] != "relay names"),
        "{diags:#?}"
    );
    client.shutdown();
}

#[test]
fn rename_definition_references() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/rename.relay";
    let text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 2), float32]) {\n  let %y = add(%x, %x);\n  @id(%y)\n}\ndef @id(%v: Tensor[(2, 2), float32]) { %v }\n";
    client.open(uri, text);
    client.diagnostics(uri, 1);
    let at = text.find("%x)").unwrap() + 1;
    let prep = client.request(
        "textDocument/prepareRename",
        json!({ "textDocument": td(uri), "position": position(text, at, false) }),
    );
    assert_eq!(prep["placeholder"], "x");
    let edit = client.request(
        "textDocument/rename",
        json!({ "textDocument": td(uri), "position": position(text, at, false), "newName": "inp" }),
    );
    let after = apply_edits(text, edit["changes"][uri].as_array().unwrap(), false);
    assert_eq!(after.matches("%inp").count(), 3, "{after}");
    assert!(!after.contains("%x"), "{after}");
    // A global, renamed with its sigil typed.
    let at = text.find("@id(%y)").unwrap() + 1;
    let edit = client.request(
        "textDocument/rename",
        json!({ "textDocument": td(uri), "position": position(text, at, false), "newName": "@identity" }),
    );
    let after = apply_edits(text, edit["changes"][uri].as_array().unwrap(), false);
    assert_eq!(after.matches("@identity").count(), 2, "{after}");
    // Invalid names are refused.
    let err = client
        .request_raw(
            "textDocument/rename",
            json!({ "textDocument": td(uri), "position": position(text, at, false), "newName": "1x" }),
        )
        .unwrap_err();
    assert!(err["message"]
        .as_str()
        .unwrap()
        .contains("not a valid name"));
    // Definition and references of %y.
    let at = text.find("@id(%y)").unwrap() + 5;
    let def = client.request(
        "textDocument/definition",
        json!({ "textDocument": td(uri), "position": position(text, at, false) }),
    );
    assert_eq!(
        def["range"]["start"],
        position(text, text.find("%y").unwrap(), false)
    );
    let refs = client.request(
        "textDocument/references",
        json!({ "textDocument": td(uri), "position": position(text, at, false), "context": { "includeDeclaration": true } }),
    );
    assert_eq!(refs.as_array().unwrap().len(), 2);
    client.shutdown();
}

#[test]
fn completion_of_operators_attributes_locals_and_globals() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/complete.relay";
    let text = "#[version = \"0.0.5\"]\ndef @main(%data: Tensor[(1, 3, 8, 8), float32], %weight: Tensor[(4, 3, 3, 3), float32]) {\n  nn.conv2d(%data, %weight, )\n}\ndef @other() { 1f }\n";
    client.open(uri, text);
    client.diagnostics(uri, 1);
    let labels = |items: &Value| -> Vec<String> {
        items
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    };
    // Attributes of nn.conv2d and operators at the empty argument.
    let at = text.find(", )").unwrap() + 2;
    let items = client.request(
        "textDocument/completion",
        json!({ "textDocument": td(uri), "position": position(text, at, false) }),
    );
    let got = labels(&items);
    assert!(got.contains(&"kernel_size".to_string()), "{got:?}");
    assert!(got.contains(&"nn.relu".to_string()));
    assert!(got.contains(&"%data".to_string()));
    assert!(got.contains(&"@other".to_string()));
    // After `%`: locals only.
    client.change(
        uri,
        2,
        json!([{ "range": { "start": position(text, at, false), "end": position(text, at, false) }, "text": "%we" }]),
    );
    let text2 = format!("{}%we{}", &text[..at], &text[at..]);
    let items = client.request(
        "textDocument/completion",
        json!({ "textDocument": td(uri), "position": position(&text2, at + 3, false) }),
    );
    let got = labels(&items);
    assert!(got.contains(&"%weight".to_string()), "{got:?}");
    assert!(!got.contains(&"nn.relu".to_string()));
    client.shutdown();
}

#[test]
fn outline_folding_tokens_hints_and_formatting() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/outline.relay";
    let text = "#[version = \"0.0.5\"]\ntype Opt[A] {\n  Some(A),\n  None,\n}\ndef @main(%x: float32) -> float32 {\n  let %y = add(%x, 1f);\n  %y\n}\n";
    client.open(uri, text);
    let diags = client.diagnostics(uri, 1);
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": td(uri) }),
    );
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Opt", "@main"]);
    assert_eq!(symbols[0]["children"][0]["name"], "Some");
    let folds = client.request(
        "textDocument/foldingRange",
        json!({ "textDocument": td(uri) }),
    );
    assert!(folds
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["startLine"] == 5 && f["endLine"] == 8));
    let tokens = client.request(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": td(uri) }),
    );
    let data = tokens["data"].as_array().unwrap();
    assert_eq!(data.len() % 5, 0);
    assert!(data.len() >= 5 * 15, "{}", data.len());
    let hints = client.request(
        "textDocument/inlayHint",
        json!({ "textDocument": td(uri), "range": { "start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0} } }),
    );
    if diags.iter().all(|d| d["severity"] != 1) {
        assert_eq!(hints[0]["label"], ": float32", "{hints}");
        let formatted = client.request(
            "textDocument/formatting",
            json!({ "textDocument": td(uri), "options": { "tabSize": 2, "insertSpaces": true } }),
        );
        let after = apply_edits(text, formatted.as_array().unwrap(), false);
        assert!(after.starts_with("#[version = \"0.0.5\"]"), "{after}");
    }
    // Formatting refuses files with errors.
    client.change(
        uri,
        2,
        json!([{ "text": "#[version = \"0.0.5\"]\ndef @main( {" }]),
    );
    client.diagnostics(uri, 2);
    let formatted = client.request(
        "textDocument/formatting",
        json!({ "textDocument": td(uri), "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert!(formatted.is_null(), "{formatted}");
    client.shutdown();
}

#[test]
fn save_runs_on_save_pipelines_from_relay_toml() {
    let dir = temp_dir("save");
    std::fs::write(
        dir.join("relay.toml"),
        "on_save = [\"show\", \"broken\"]\n[pipelines]\nshow = \"PrintIR\"\nbroken = \"InferType, NoSuchPass\"\n",
    )
    .unwrap();
    let path = dir.join("model.relay");
    std::fs::write(&path, FOLD_SRC).unwrap();
    let uri = file_uri(&path);
    let mut client = LspClient::start(false);
    client.open(&uri, FOLD_SRC);
    client.diagnostics(&uri, 1);
    client.notify("textDocument/didSave", json!({ "textDocument": td(&uri) }));
    let params = client
        .wait_for("textDocument/publishDiagnostics", TIMEOUT, |p| {
            p["uri"] == uri.as_str()
                && p["diagnostics"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|d| d["source"] == "relay passes"))
        })
        .expect("diagnostics of the on-save pipelines");
    let msgs: Vec<String> = messages(params["diagnostics"].as_array().unwrap());
    assert!(
        msgs.iter()
            .any(|m| m.contains("on-save pipeline `broken` failed")),
        "{msgs:?}"
    );
    // PrintIR's output went to window/logMessage.
    let log = client.wait_for("window/logMessage", TIMEOUT, |p| {
        p["message"]
            .as_str()
            .is_some_and(|m| m.contains("def @main"))
    });
    assert!(log.is_some(), "no PrintIR output in window/logMessage");
    // The code actions offer the project's pipelines.
    let actions = code_actions(&mut client, &uri, FOLD_SRC, 0, 0);
    assert!(actions
        .iter()
        .any(|a| a["title"] == "Run the relay.toml pipeline `show`"));
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn large_documents_are_accepted() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/large.relay";
    // ~12 MB: a small module under a long comment with non-ASCII text.
    let mut text = String::from("#[version = \"0.0.5\"]\n");
    let line =
        "// padding é😀 ........................................................................\n";
    while text.len() < 12 << 20 {
        text.push_str(line);
    }
    text.push_str("def @main(%x: Tensor[(2, 2), float32]) {\n  add(%x, %y)\n}\n");
    client.open(uri, &text);
    let diags = client.diagnostics(uri, 1);
    let start = text.find("%y").unwrap();
    assert_eq!(diags[0]["range"]["start"], position(&text, start, false));
    // An edit at the very end, one in the middle of the comment.
    let at = text.find("%y").unwrap();
    client.change(
        uri,
        2,
        json!([{ "range": { "start": position(&text, at + 1, false), "end": position(&text, at + 2, false) }, "text": "x" }]),
    );
    let mid = text.len() / 2;
    let mid = text[mid..].find('\n').unwrap() + mid + 1;
    client.change(
        uri,
        3,
        json!([{ "range": { "start": position(&text, mid, false), "end": position(&text, mid, false) }, "text": "// more é\n" }]),
    );
    let diags = client.diagnostics(uri, 3);
    assert!(diags.is_empty(), "{diags:?}");
    client.shutdown();
}

/// `relay check --pipeline NAME` runs a relay.toml pipeline, as the editor's
/// on-save checks do.
#[test]
fn check_with_a_pipeline_from_relay_toml() {
    let dir = temp_dir("check");
    std::fs::write(
        dir.join("relay.toml"),
        "[pipelines]\nok = \"InferType, FoldConstant\"\nbroken = \"InferType, NoSuchPass\"\n",
    )
    .unwrap();
    let path = dir.join("model.relay");
    std::fs::write(&path, FOLD_SRC).unwrap();
    let run = |pipeline: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(["check", "--pipeline", pipeline, path.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let ok = run("ok");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let broken = run("broken");
    assert_eq!(broken.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(stderr.contains("unknown pass `NoSuchPass`"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A panic in a handler is caught, logged and answered with an error; the
/// server goes on serving.
#[test]
fn a_panicking_handler_does_not_take_the_server_down() {
    let mut client = LspClient::start_with_env(
        std::path::Path::new(env!("CARGO_BIN_EXE_relay")),
        false,
        json!({}),
        &[("RELAY_LSP_DEBUG_PANIC", "1")],
    );
    let uri = "file:///tmp/relay-lsp-e2e/panic.relay";
    client.open(uri, FOLD_SRC);
    client.diagnostics(uri, 1);
    let error = client
        .request_raw(
            "workspace/executeCommand",
            json!({ "command": "relay.debug.panic", "arguments": [{ "uri": uri }] }),
        )
        .unwrap_err();
    assert!(
        error["message"].as_str().unwrap().contains("panicked"),
        "{error}"
    );
    let log = client.wait_for("window/logMessage", TIMEOUT, |p| {
        p["message"]
            .as_str()
            .is_some_and(|m| m.contains("deliberate panic"))
    });
    assert!(log.is_some());
    // Still answering.
    let at = FOLD_SRC.find("multiply(%x").unwrap() + 10;
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(FOLD_SRC, at, false) }),
    );
    assert!(hover_text(&hover).contains("Tensor[(2, 2), float32]"));
    client.shutdown();
}
