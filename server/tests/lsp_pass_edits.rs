//! The edits `relay.applyPipeline` makes (what a pass's code action runs),
//! through the real `relay lsp` binary: a pass that changes nothing
//! structurally makes no edit, an unchanged definition keeps its bytes
//! (comments and `ty=` annotations included), and what a pass writes reads
//! back. Also: a request that fails is answered with an error and the
//! server goes on serving every document.

mod lsp_client;

use lsp_client::{apply_edits, position, LspClient};
use serde_json::{json, Value};

/// Runs `pipeline` on the document through `relay.applyPipeline`.
fn apply(client: &mut LspClient, uri: &str, pipeline: &str) -> Result<Value, Value> {
    client.request_raw(
        "workspace/executeCommand",
        json!({ "command": "relay.applyPipeline", "arguments": [{ "uri": uri, "pipeline": pipeline }] }),
    )
}

/// The edits of the last `workspace/applyEdit` for `uri`.
fn last_edits(client: &LspClient, uri: &str) -> Vec<Value> {
    client.applied_edits.last().expect("an edit was applied")["edit"]["changes"][uri]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn error_messages(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .filter(|d| d["severity"] == 1)
        .map(|d| d["message"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Typed text with comments, as `relay print` writes it and people edit it.
const TYPED_SRC: &str = "#[version = \"0.0.5\"]
// A helper, with its types written out.
def @square(%x: Tensor[(2), float32] /* ty=Tensor[(2), float32] */) -> Tensor[(2), float32] {
  %0 = add(%x, %x) /* ty=Tensor[(2), float32] */; // doubled
  multiply(%0, %0) /* ty=Tensor[(2), float32] */
}

def @main(%y: Tensor[(2), float32] /* ty=Tensor[(2), float32] */) -> Tensor[(2), float32] {
  /* the entry point */
  %1 = @square(%y) /* ty=Tensor[(2), float32] */;
  negative(%1) /* ty=Tensor[(2), float32] */
}
";

/// ToBasicBlockNormalForm rebuilds every node of a module that is already in
/// basic-block form (dropping checked types, so the printed text differs)
/// but changes nothing: no edit, and the document stays as it is.
#[test]
fn a_pass_that_changes_nothing_makes_no_edit() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-pass-edits/noop.relay";
    client.open(uri, TYPED_SRC);
    assert_eq!(
        error_messages(&client.diagnostics(uri, 1)),
        Vec::<String>::new()
    );
    for pipeline in ["ToBasicBlockNormalForm", "InferType", "ToGraphNormalForm"] {
        let answer = apply(&mut client, uri, pipeline);
        assert_eq!(answer, Ok(Value::Null), "{pipeline}");
        assert!(
            client.applied_edits.is_empty(),
            "{pipeline} edited the document: {:?}",
            client.applied_edits
        );
    }
    client.shutdown();
}

/// FoldConstant changes @fold only: @keep (with its comments) keeps its
/// bytes, and the one edit lies inside @fold.
#[test]
fn only_changed_definitions_are_replaced() {
    let src = "#[version = \"0.0.5\"]
def @keep(%x: Tensor[(2), float32] /* ty=Tensor[(2), float32] */) -> Tensor[(2), float32] {
  // kept as written
  negative(%x) /* ty=Tensor[(2), float32] */
}

def @fold(%x: Tensor[(2), float32]) {
  add(%x, add(1f, 2f))
}
";
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-pass-edits/changed.relay";
    client.open(uri, src);
    client.diagnostics(uri, 1);
    apply(&mut client, uri, "FoldConstant").expect("FoldConstant runs");
    let edits = last_edits(&client, uri);
    assert_eq!(edits.len(), 1, "{edits:?}");
    let fold_start = src.find("def @fold").unwrap();
    let start = lsp_client::offset(src, &edits[0]["range"]["start"], false);
    assert!(start >= fold_start, "the edit starts in @keep: {edits:?}");
    let after = apply_edits(src, &edits, false);
    let keep_end = src.find("\n\ndef @fold").unwrap();
    assert_eq!(&after[..keep_end], &src[..keep_end]);
    assert!(after.contains("3f"), "{after}");
    client.shutdown();
}

/// ToANormalForm binds a match to a variable: `let %x = match …` does not
/// parse (in TVM's grammar either), so it is written `let %x = (match …)`,
/// and the edited document reads back without errors.
#[test]
fn a_normal_form_of_a_match_reads_back() {
    let src = "#[version = \"0.0.5\"]
type Opt[A] {
  Some(A),
  None,
}

def @main(%x: Opt[int32]) -> int32 {
  add(match (%x) {
    Some(%y) => %y,
    None => 0,
  }, 1)
}
";
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-pass-edits/adt.relay";
    client.open(uri, src);
    assert_eq!(
        error_messages(&client.diagnostics(uri, 1)),
        Vec::<String>::new()
    );
    apply(&mut client, uri, "ToANormalForm").expect("ToANormalForm runs");
    let after = apply_edits(src, &last_edits(&client, uri), false);
    assert!(after.contains("= (match (%x) {"), "{after}");
    let reread = "file:///tmp/relay-lsp-pass-edits/adt-after.relay";
    client.open(reread, &after);
    assert_eq!(
        error_messages(&client.diagnostics(reread, 1)),
        Vec::<String>::new(),
        "{after}"
    );
    client.shutdown();
}

/// A failing pipeline and a panicking handler are each answered with an
/// error; the server then goes on serving that document (after an edit
/// too) and others.
#[test]
fn failing_requests_are_answered_and_the_server_keeps_serving() {
    let mut client = LspClient::start_with_env(
        std::path::Path::new(env!("CARGO_BIN_EXE_relay")),
        false,
        json!({}),
        &[("RELAY_LSP_DEBUG_PANIC", "1")],
    );
    let first = "file:///tmp/relay-lsp-pass-edits/first.relay";
    client.open(first, TYPED_SRC);
    client.diagnostics(first, 1);

    let failed = apply(&mut client, first, "EtaExpand").expect_err("EtaExpand fails");
    assert!(
        failed["message"].as_str().unwrap().contains("EtaExpand"),
        "{failed}"
    );
    let panicked = client
        .request_raw(
            "workspace/executeCommand",
            json!({ "command": "relay.debug.panic", "arguments": [{ "uri": first }] }),
        )
        .expect_err("the deliberate panic is answered with an error");
    assert!(
        panicked["message"].as_str().unwrap().contains("panicked"),
        "{panicked}"
    );

    // The same document, edited: new diagnostics, hover.
    let broken = TYPED_SRC.replace("negative(%1)", "negative(%2)");
    client.change(first, 2, json!([{ "text": broken }]));
    let messages = error_messages(&client.diagnostics(first, 2));
    assert!(
        messages
            .iter()
            .any(|m| m.contains("not yet been defined") || m.contains("%2")),
        "{messages:?}"
    );
    // Another document.
    let second = "file:///tmp/relay-lsp-pass-edits/second.relay";
    client.open(second, TYPED_SRC);
    assert_eq!(
        error_messages(&client.diagnostics(second, 1)),
        Vec::<String>::new()
    );
    let at = TYPED_SRC.find("multiply(").unwrap() + 2;
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": second }, "position": position(TYPED_SRC, at, false) }),
    );
    assert!(hover.to_string().contains("multiply"), "{hover}");
    apply(&mut client, second, "FoldConstant").expect("a pipeline still runs");
    client.shutdown();
}
