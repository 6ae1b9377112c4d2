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
fn metadata_references_link_to_their_entries() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/constants.relay";
    let text = include_str!("diff_inputs/constants_a.relay");
    client.open(uri, text);
    client.diagnostics(uri, 1);
    let links = client.request(
        "textDocument/documentLink",
        json!({ "textDocument": td(uri) }),
    );
    let entry_line = text
        .lines()
        .position(|l| l.contains("\"type_key\": \"relay.Constant\""))
        .unwrap();
    // The entry's `{` is on the line before its type key (0-based), the
    // fragment is 1-based.
    assert_eq!(
        links[0]["target"],
        format!("{uri}#L{},5", entry_line),
        "{links}"
    );
    let at = text.find("meta[").unwrap() + 6;
    let def = client.request(
        "textDocument/definition",
        json!({ "textDocument": td(uri), "position": position(text, at, false) }),
    );
    assert_eq!(def["range"]["start"]["line"], entry_line - 1, "{def}");
    client.shutdown();
}

#[test]
fn call_hierarchy_round_trip() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/calls.relay";
    let text = "#[version = \"0.0.5\"]\ndef @main(%x: float32) {\n  @id(@id(%x))\n}\ndef @id(%v: float32) -> float32 { %v }\n";
    client.open(uri, text);
    client.diagnostics(uri, 1);
    let at = text.find("@id(%x)").unwrap() + 1;
    let items = client.request(
        "textDocument/prepareCallHierarchy",
        json!({ "textDocument": td(uri), "position": position(text, at, false) }),
    );
    let item = items[0].clone();
    assert_eq!(item["name"], "@id", "{items}");
    assert_eq!(item["selectionRange"]["start"]["line"], 4);
    // The client sends the item back as it got it.
    let incoming = client.request("callHierarchy/incomingCalls", json!({ "item": item }));
    assert_eq!(incoming[0]["from"]["name"], "@main", "{incoming}");
    assert_eq!(incoming[0]["fromRanges"].as_array().unwrap().len(), 2);
    let main = incoming[0]["from"].clone();
    let outgoing = client.request("callHierarchy/outgoingCalls", json!({ "item": main }));
    assert_eq!(outgoing[0]["to"]["name"], "@id", "{outgoing}");
    assert_eq!(outgoing.as_array().unwrap().len(), 1);
    // Workspace symbols span the open documents.
    let other = "file:///tmp/relay-lsp-e2e/other.relay";
    client.open(
        other,
        "#[version = \"0.0.5\"]\ndef @identity2(%v: float32) { %v }\n",
    );
    client.diagnostics(other, 1);
    let symbols = client.request("workspace/symbol", json!({ "query": "id" }));
    let mut found: Vec<(String, String)> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["location"]["uri"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("@id".to_string(), uri.to_string()),
            ("@identity2".to_string(), other.to_string())
        ]
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
    // A `CompletionList`: `isIncomplete` is set only when names were capped.
    let labels = |answer: &Value| -> Vec<String> {
        assert_eq!(answer["isIncomplete"], json!(false), "{answer}");
        answer["items"]
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
    // Expand selection from inside `%x` in `add(%x, 1f)`: the name, then
    // the argument list, then the call.
    let at = |line: u32, character: u32| json!({ "line": line, "character": character });
    let steps = client.request(
        "textDocument/selectionRange",
        json!({ "textDocument": td(uri), "positions": [at(6, 16)] }),
    );
    let first = &steps[0];
    assert_eq!(
        first["range"],
        json!({ "start": at(6, 15), "end": at(6, 17) }),
        "{steps}"
    );
    assert_eq!(
        first["parent"]["range"],
        json!({ "start": at(6, 14), "end": at(6, 22) })
    );
    assert_eq!(
        first["parent"]["parent"]["range"],
        json!({ "start": at(6, 11), "end": at(6, 22) })
    );
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

/// Formatting keeps every comment (it used to reprint the IR and drop them),
/// answers with one edit covering only what changes, and breaks lists at the
/// width of the project's `relay.toml`.
#[test]
fn formatting_keeps_comments_at_the_project_width() {
    let dir = temp_dir("format");
    std::fs::write(dir.join("relay.toml"), "[format]\nwidth = 40\n").unwrap();
    let path = dir.join("commented.relay");
    let text = "#[version = \"0.0.5\"]\n// The model.\ndef @main(%input: float32, /* second */ %other: float32) {\n  %0 = add(%input, %other) /* ty=float32 */; // sum\n  /* result */\n  %0\n}\n";
    std::fs::write(&path, text).unwrap();
    let uri = file_uri(&path);
    let mut client = LspClient::start(false);
    client.open(&uri, text);
    client.diagnostics(&uri, 1);
    let edits = client.request(
        "textDocument/formatting",
        json!({ "textDocument": td(&uri), "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    let edits = edits.as_array().unwrap();
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(
        edits[0]["range"]["start"]["line"], 2,
        "only the changed stretch: {edits:?}"
    );
    let after = apply_edits(text, edits, false);
    assert_eq!(
        after,
        "#[version = \"0.0.5\"]\n// The model.\ndef @main(\n  %input: float32, /* second */\n  %other: float32\n) {\n  %0 = add(\n    %input,\n    %other\n  ) /* ty=float32 */; // sum\n  /* result */\n  %0\n}\n"
    );
    // Formatted text needs no edit.
    client.change(&uri, 2, json!([{ "text": after }]));
    client.diagnostics(&uri, 2);
    let edits = client.request(
        "textDocument/formatting",
        json!({ "textDocument": td(&uri), "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert_eq!(edits, json!([]));
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

/// A module where one name means different things in different scopes:
/// navigation must follow lowering's resolution, never the spelling. (The
/// `let %x` comes second in its chain: as in TVM, the first `let` of a
/// chain binds into the function's own scope, where a parameter `%x` would
/// keep its name.)
const SCOPES_SRC: &str = "#[version = \"0.0.5\"]
type Tree[T] {
  Leaf,
  Node(T, Tree[T]),
}
def @f[A](%x: A, %t: Tree[A]) -> A {
  %0 = %x;
  let %y = %0;
  let %x = %y;
  match (%t) {
    Node(%x, _) => %x,
    Leaf => %x,
  }
}
def @g(%x: float32) -> float32 {
  %x
}
";

/// The byte offset of the `nth` match of `needle` in `text`, plus `skip`.
fn nth_offset(text: &str, needle: &str, nth: usize, skip: usize) -> usize {
    text.match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("no match {nth} of {needle:?}"))
        .0
        + skip
}

fn at(uri: &str, text: &str, offset: usize) -> Value {
    json!({ "textDocument": td(uri), "position": position(text, offset, false) })
}

/// The start offsets of the ranges of `locations` (or highlights).
fn starts(text: &str, locations: &Value) -> Vec<usize> {
    let mut out: Vec<usize> = locations
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {locations}"))
        .iter()
        .map(|l| {
            let range = if l["range"].is_object() {
                &l["range"]
            } else {
                &l["location"]["range"]
            };
            lsp_client::offset(text, &range["start"], false)
        })
        .collect();
    out.sort();
    out
}

fn references_at(client: &mut LspClient, uri: &str, text: &str, offset: usize) -> Vec<usize> {
    let mut params = at(uri, text, offset);
    params["context"] = json!({ "includeDeclaration": true });
    let refs = client.request("textDocument/references", params);
    starts(text, &refs)
}

fn definition_at(client: &mut LspClient, uri: &str, text: &str, offset: usize) -> usize {
    let def = client.request("textDocument/definition", at(uri, text, offset));
    lsp_client::offset(text, &def["range"]["start"], false)
}

fn rename_at(client: &mut LspClient, uri: &str, text: &str, offset: usize, name: &str) -> String {
    let mut params = at(uri, text, offset);
    params["newName"] = json!(name);
    let edit = client.request("textDocument/rename", params);
    apply_edits(text, edit["changes"][uri].as_array().unwrap(), false)
}

#[test]
fn navigation_follows_shadowing_and_scopes() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/scopes.relay";
    let text = SCOPES_SRC;
    client.open(uri, text);
    client.diagnostics(uri, 1);
    let x = |nth: usize| nth_offset(text, "%x", nth, 0);
    // %x: 0 param of @f, 1 its use in `%0 = %x`, 2 the `let`, 3 the pattern
    // variable, 4 its use, 5 the let's use in `Leaf => %x`, 6 param of @g, 7 its use.
    assert_eq!(definition_at(&mut client, uri, text, x(1) + 1), x(0));
    assert_eq!(definition_at(&mut client, uri, text, x(4) + 1), x(3));
    assert_eq!(definition_at(&mut client, uri, text, x(5) + 1), x(2));
    assert_eq!(definition_at(&mut client, uri, text, x(7) + 1), x(6));
    assert_eq!(references_at(&mut client, uri, text, x(0)), [x(0), x(1)]);
    assert_eq!(
        references_at(&mut client, uri, text, x(2) + 2),
        [x(2), x(5)]
    );
    assert_eq!(references_at(&mut client, uri, text, x(4)), [x(3), x(4)]);
    assert_eq!(references_at(&mut client, uri, text, x(6)), [x(6), x(7)]);
    // Highlights of the `let`: its definition (write) and its one use (read).
    let highlights = client.request("textDocument/documentHighlight", at(uri, text, x(5) + 1));
    assert_eq!(starts(text, &highlights), [x(2), x(5)]);
    let kinds: Vec<i64> = highlights
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_i64().unwrap())
        .collect();
    assert_eq!(kinds.iter().filter(|&&k| k == 3).count(), 1, "{highlights}");

    // Renaming the parameter of @f renames it and its one use, nothing else
    // spelt `%x` (the `let`, the pattern variable, @g's parameter).
    let after = rename_at(&mut client, uri, text, x(0) + 1, "inp");
    assert_eq!(after.matches("%inp").count(), 2, "{after}");
    assert!(
        after.contains("%0 = %inp;") && after.contains("let %x = %y;"),
        "{after}"
    );
    assert_eq!(after.matches("%x").count(), 6, "{after}");
    // Renaming @g's %x leaves @f alone.
    let after = rename_at(&mut client, uri, text, x(7) + 1, "%y");
    assert!(
        after.contains("def @g(%y: float32) -> float32 {\n  %y\n}"),
        "{after}"
    );
    assert_eq!(after.matches("%x").count(), 6, "{after}");
    // The pattern variable alone.
    let after = rename_at(&mut client, uri, text, x(3) + 1, "head");
    assert!(after.contains("Node(%head, _) => %head,"), "{after}");
    assert!(after.contains("Leaf => %x,"), "{after}");
    client.shutdown();
}

#[test]
fn navigation_of_graph_bindings_type_variables_and_constructors() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/types.relay";
    let text = SCOPES_SRC;
    client.open(uri, text);
    client.diagnostics(uri, 1);
    // The graph binding %0 and its use.
    let graph = nth_offset(text, "%0", 0, 0);
    let use_ = nth_offset(text, "%0", 1, 0);
    assert_eq!(definition_at(&mut client, uri, text, use_ + 1), graph);
    assert_eq!(references_at(&mut client, uri, text, graph), [graph, use_]);
    let after = rename_at(&mut client, uri, text, use_ + 1, "7");
    assert!(after.contains("%7 = %x;\n  let %y = %7;"), "{after}");
    let err = client
        .request_raw(
            "textDocument/rename",
            json!({ "textDocument": td(uri), "position": position(text, use_ + 1, false), "newName": "x" }),
        )
        .unwrap_err();
    assert!(err["message"]
        .as_str()
        .unwrap()
        .contains("not a valid name"));
    // The type variable A of @f: `[A]`, `%x: A`, `Tree[A]`, `-> A`; not the
    // T of the type definition.
    let a = |nth: usize| nth_offset(text, "A", nth, 0);
    assert_eq!(definition_at(&mut client, uri, text, a(3)), a(0));
    assert_eq!(
        references_at(&mut client, uri, text, a(2)),
        [a(0), a(1), a(2), a(3)]
    );
    let t = |nth: usize| nth_offset(text, "T", nth, 0);
    // `Tree[T]` (0), `Node(T, Tree[T])` (1, 2, 3: Tree, T, …): take the Ts.
    let ts: Vec<usize> = text.match_indices("[T]").map(|(i, _)| i + 1).collect();
    let params = references_at(&mut client, uri, text, ts[0]);
    assert_eq!(params.len(), 3, "{params:?} {:?}", t(0));
    assert!(params.contains(&nth_offset(text, "(T,", 0, 1)));
    let after = rename_at(&mut client, uri, text, a(0), "Elem");
    assert!(
        after.contains("def @f[Elem](%x: Elem, %t: Tree[Elem]) -> Elem {"),
        "{after}"
    );
    assert!(after.contains("type Tree[T]"), "{after}");
    // Constructors: the pattern `Node` and `Leaf` go to their definitions.
    let node = nth_offset(text, "Node", 0, 0);
    let node_use = nth_offset(text, "Node", 1, 0);
    assert_eq!(definition_at(&mut client, uri, text, node_use + 2), node);
    let after = rename_at(
        &mut client,
        uri,
        text,
        nth_offset(text, "Leaf", 1, 1),
        "Empty",
    );
    assert_eq!(after.matches("Empty").count(), 2, "{after}");
    assert!(!after.contains("Leaf"), "{after}");
    // The type name: its definition, `Tree[T]` in Node and `Tree[A]` in @f.
    let tree = nth_offset(text, "Tree", 0, 0);
    assert_eq!(
        references_at(&mut client, uri, text, nth_offset(text, "Tree[A]", 0, 1)),
        [
            tree,
            nth_offset(text, "Tree", 1, 0),
            nth_offset(text, "Tree", 2, 0)
        ]
    );
    // Hover on the type variable and the constructor say what they are.
    let shown = hover_text(&client.request("textDocument/hover", at(uri, text, a(3))));
    assert!(shown.contains("type parameter"), "{shown}");
    let shown = hover_text(&client.request("textDocument/hover", at(uri, text, node_use)));
    assert!(shown.contains("constructor 1 of `Tree`"), "{shown}");
    client.shutdown();
}

/// Every position-taking request, at `position`, on `uri`.
fn position_requests(uri: &str, position: Value) -> Vec<(&'static str, Value)> {
    let tdp = json!({ "textDocument": td(uri), "position": position });
    let mut references = tdp.clone();
    references["context"] = json!({ "includeDeclaration": true });
    let mut rename = tdp.clone();
    rename["newName"] = json!("renamed");
    vec![
        ("textDocument/hover", tdp.clone()),
        ("textDocument/definition", tdp.clone()),
        ("textDocument/references", references),
        ("textDocument/documentHighlight", tdp.clone()),
        ("textDocument/prepareRename", tdp.clone()),
        ("textDocument/rename", rename),
        ("textDocument/completion", tdp.clone()),
        ("textDocument/signatureHelp", tdp),
    ]
}

/// Every range-taking and whole-document request, with `range`.
fn document_requests(uri: &str, range: Value) -> Vec<(&'static str, Value)> {
    vec![
        (
            "textDocument/documentSymbol",
            json!({ "textDocument": td(uri) }),
        ),
        (
            "textDocument/foldingRange",
            json!({ "textDocument": td(uri) }),
        ),
        (
            "textDocument/semanticTokens/full",
            json!({ "textDocument": td(uri) }),
        ),
        (
            "textDocument/selectionRange",
            json!({ "textDocument": td(uri), "positions": [range["start"], range["end"]] }),
        ),
        (
            "textDocument/semanticTokens/range",
            json!({ "textDocument": td(uri), "range": range }),
        ),
        (
            "textDocument/inlayHint",
            json!({ "textDocument": td(uri), "range": range }),
        ),
        (
            "textDocument/codeAction",
            json!({ "textDocument": td(uri), "range": range, "context": { "diagnostics": [] } }),
        ),
        (
            "textDocument/formatting",
            json!({ "textDocument": td(uri), "options": { "tabSize": 2, "insertSpaces": true } }),
        ),
        (
            "relay/passOutput",
            json!({ "textDocument": td(uri), "pipeline": "InferType" }),
        ),
    ]
}

/// The error code of an answer, if it is an error that is not an internal
/// one (a handler that panicked or failed).
fn assert_not_internal(method: &str, answer: &Result<Value, Value>) {
    if let Err(error) = answer {
        assert_ne!(error["code"], -32603, "{method}: {error}");
    }
}

#[test]
fn requests_before_initialize_are_refused_and_the_server_goes_on() {
    let mut client = LspClient::spawn(std::path::Path::new(env!("CARGO_BIN_EXE_relay")), &[]);
    let uri = "file:///tmp/relay-lsp-e2e/early.relay";
    for (method, params) in position_requests(uri, json!({ "line": 0, "character": 0 })) {
        let error = client.request_raw(method, params).unwrap_err();
        assert_eq!(error["code"], -32002, "{method}: {error}");
    }
    // Notifications before initialize are dropped, not fatal.
    client.open(uri, FOLD_SRC);
    client.initialize(false, json!({}));
    client.open(uri, FOLD_SRC);
    client.diagnostics(uri, 1);
    let at = FOLD_SRC.find("multiply(%x").unwrap() + 10;
    let shown = hover_text(&client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(FOLD_SRC, at, false) }),
    ));
    assert!(shown.contains("Tensor[(2, 2), float32]"), "{shown}");
    client.shutdown();
}

#[test]
fn handlers_survive_unknown_documents_and_positions_past_the_end() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/garbage.relay";
    let unknown = "file:///tmp/relay-lsp-e2e/never-opened.relay";
    client.open(uri, SCOPES_SRC);
    client.diagnostics(uri, 1);
    // Unknown documents: a clean error for requests, nothing for notifications.
    let everywhere =
        json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 99, "character": 0 } });
    let mut requests = position_requests(unknown, json!({ "line": 1, "character": 1 }));
    requests.extend(document_requests(unknown, everywhere));
    for (method, params) in requests {
        let answer = client.request_raw(method, params);
        assert!(
            answer.is_err(),
            "{method} on an unknown document: {answer:?}"
        );
        assert_not_internal(method, &answer);
    }
    client.change(unknown, 2, json!([{ "text": "garbage" }]));
    client.notify(
        "textDocument/didSave",
        json!({ "textDocument": td(unknown) }),
    );
    client.notify(
        "textDocument/didClose",
        json!({ "textDocument": td(unknown) }),
    );
    for uri in ["not a uri", "untitled:Untitled-1", "file:///"] {
        let answer = client.request_raw(
            "textDocument/hover",
            json!({ "textDocument": td(uri), "position": { "line": 0, "character": 0 } }),
        );
        assert_not_internal("hover", &answer);
    }
    // Positions and ranges past the end of lines and of the text, huge
    // numbers, and ranges whose end comes before their start.
    let positions = [
        json!({ "line": 0, "character": 4_000_000_000u32 }),
        json!({ "line": 4_000_000_000u32, "character": 0 }),
        json!({ "line": 4_000_000_000u32, "character": 4_000_000_000u32 }),
        json!({ "line": 16, "character": 0 }),
        json!({ "line": 17, "character": 3 }),
    ];
    for p in &positions {
        for (method, params) in position_requests(uri, p.clone()) {
            let answer = client.request_raw(method, params);
            assert_not_internal(method, &answer);
        }
        let backwards = json!({ "start": p, "end": { "line": 0, "character": 0 } });
        let past = json!({ "start": { "line": 3, "character": 1 }, "end": p });
        for range in [backwards, past] {
            for (method, params) in document_requests(uri, range) {
                let answer = client.request_raw(method, params);
                assert_not_internal(method, &answer);
            }
        }
    }
    // Edits past the end and backwards append or insert; the text stays
    // usable and the server in step with the editor.
    client.change(
        uri,
        2,
        json!([{ "range": { "start": { "line": 999, "character": 5 }, "end": { "line": 999, "character": 9 } }, "text": "\n// end\n" }]),
    );
    client.change(
        uri,
        3,
        json!([{ "range": { "start": { "line": 3, "character": 99 }, "end": { "line": 2, "character": 0 } }, "text": "" }]),
    );
    let diags = client.diagnostics(uri, 3);
    assert!(
        diags.iter().all(|d| d["source"] != "relay syntax"),
        "{diags:?}"
    );
    client.shutdown();
}

/// Positions in the middle of a surrogate pair (UTF-16 column between the
/// two halves of 😀) mean the character's start, for requests and edits.
#[test]
fn positions_inside_a_surrogate_pair() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/surrogates.relay";
    let text = "#[version = \"0.0.5\"]\ndef @main(%x: float32) -> float32 {\n  /*😀😀*/ %x\n}\n";
    client.open(uri, text);
    client.diagnostics(uri, 1);
    let line = 2;
    // `  /*` is 4 units, each 😀 two: 5 and 7 are inside the pairs.
    for character in [5, 7, 8, 9] {
        let p = json!({ "line": line, "character": character });
        for (method, params) in position_requests(uri, p.clone()) {
            let answer = client.request_raw(method, params);
            assert_not_internal(method, &answer);
        }
        let range = json!({ "start": p, "end": { "line": line, "character": 7 } });
        for (method, params) in document_requests(uri, range) {
            let answer = client.request_raw(method, params);
            assert_not_internal(method, &answer);
        }
    }
    // Replace from inside the first pair to inside the second: both emoji
    // start there, so the first emoji is replaced and the second kept.
    client.change(
        uri,
        2,
        json!([{ "range": { "start": { "line": line, "character": 5 }, "end": { "line": line, "character": 7 } }, "text": "é" }]),
    );
    let diags = client.diagnostics(uri, 2);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:?}");
    let after = "#[version = \"0.0.5\"]\ndef @main(%x: float32) -> float32 {\n  /*é😀*/ %x\n}\n";
    // The hover on %x lands on %x: the server's text is `after`.
    let x = after.rfind("%x").unwrap() + 1;
    let shown = hover_text(&client.request(
        "textDocument/hover",
        json!({ "textDocument": td(uri), "position": position(after, x, false) }),
    ));
    assert!(shown.contains("%x: float32"), "{shown}");
    client.shutdown();
}

/// Garbage that is large: megabytes of bytes that are not Relay, a very
/// long line, and deep nesting. Every answer comes, none is internal.
#[test]
fn huge_garbage_documents() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/huge-garbage.relay";
    let mut text = String::from("#[version = \"0.0.5\"]\n");
    let mut seed = 12345u64;
    let alphabet: Vec<char> = "%@(){}[],;=:.-+*/ \nabcxyz019é😀\"#".chars().collect();
    while text.len() < 2 << 20 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text.push(alphabet[(seed >> 33) as usize % alphabet.len()]);
    }
    text.push_str(&"(".repeat(100_000));
    text.push_str(&"x".repeat(500_000));
    client.open(uri, &text);
    let diags = client.diagnostics(uri, 1);
    assert!(!diags.is_empty());
    let end = lsp_client::position(&text, text.len(), false);
    for p in [json!({ "line": 1, "character": 3 }), end.clone()] {
        for (method, params) in position_requests(uri, p) {
            let answer = client.request_raw(method, params);
            assert_not_internal(method, &answer);
        }
    }
    let everything = json!({ "start": { "line": 0, "character": 0 }, "end": end });
    for (method, params) in document_requests(uri, everything) {
        let answer = client.request_raw(method, params);
        assert_not_internal(method, &answer);
    }
    client.shutdown();
}

#[test]
fn graph_request_stage_diff_and_code_lenses() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-e2e/graph.relay";
    client.open(uri, FOLD_SRC);
    client.diagnostics(uri, 1);
    // The function as written: SVG, nodes with their ranges in the document.
    let out = client.request("relay/graph", json!({ "textDocument": td(uri) }));
    assert_eq!(out["function"], "main", "{out}");
    assert!(out["svg"].as_str().unwrap().starts_with("<svg"));
    let nodes = out["graph"]["nodes"].as_array().unwrap();
    let multiply = nodes.iter().find(|n| n["label"] == "multiply").unwrap();
    assert_eq!(
        multiply["range"]["start"],
        json!({"line": 3, "character": 2})
    );
    // A stage of a pipeline against the one before.
    let out = client.request(
        "relay/graph",
        json!({ "textDocument": td(uri), "pipeline": "InferType, FoldConstant", "stage": 1, "diff": true }),
    );
    assert_eq!(out["stage"], 1, "{out}");
    assert_eq!(out["stages"].as_array().unwrap().len(), 2);
    assert!(out["summary"]
        .as_str()
        .unwrap()
        .starts_with("FoldConstant: "));
    let statuses: Vec<&str> = out["graph"]["before"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["status"].as_str())
        .collect();
    assert!(statuses.contains(&"removed"), "{statuses:?}");
    // An unknown function: an answer with an error, and the server goes on.
    let out = client.request(
        "relay/graph",
        json!({ "textDocument": td(uri), "function": "nope" }),
    );
    assert!(out["error"].as_str().unwrap().contains("@main"), "{out}");
    // Lenses above @main: the graph, the last run, the size, running it.
    let lenses = client.request("textDocument/codeLens", json!({ "textDocument": td(uri) }));
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap())
        .collect();
    // The pipeline run above is remembered: its lens says what it did.
    assert_eq!(
        titles,
        [
            "Graph",
            "Run pipeline ▸ InferType, FoldConstant: 1 call removed (2 → 1); 1 node rewritten",
            "2 calls",
            "▶ Run with random inputs"
        ],
        "{lenses}"
    );
    assert_eq!(lenses[0]["command"]["command"], "relay.showGraph");
    assert_eq!(lenses[0]["command"]["arguments"][0]["function"], "main");
}
