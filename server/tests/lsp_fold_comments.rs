//! Applying FoldConstant from a code action replaces only the definition
//! that changed: comments and formatting of the other definitions keep
//! their bytes, and it is one WorkspaceEdit (one undo).

mod lsp_client;

use lsp_client::{apply_edits, position, LspClient};
use serde_json::json;

const SRC: &str = "#[version = \"0.0.5\"]
// The helper keeps its comments   and   odd spacing.
def @helper(%a: float32) -> float32 {
  /* a block comment é😀 */
  multiply(%a,   %a)   // trailing
}

def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}

// Last words.
def @tail(%t: float32) -> float32 {
  %t  // untouched
}
";

#[test]
fn fold_constant_code_action_keeps_other_definitions_byte_for_byte() {
    let mut client = LspClient::start(false);
    let uri = "file:///tmp/relay-lsp-fold/comments.relay";
    client.open(uri, SRC);
    client.diagnostics(uri, 1);
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": { "uri": uri },
            "range": { "start": position(SRC, 0, false), "end": position(SRC, SRC.len(), false) },
            "context": { "diagnostics": [] }
        }),
    );
    let action = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Apply FoldConstant")
        .cloned()
        .expect("an Apply FoldConstant action");
    client
        .request_raw(
            "workspace/executeCommand",
            json!({ "command": action["command"]["command"], "arguments": action["command"]["arguments"] }),
        )
        .expect("the command runs");
    assert_eq!(client.applied_edits.len(), 1, "one WorkspaceEdit");
    let changes = client.applied_edits[0]["edit"]["changes"]
        .as_object()
        .unwrap()
        .clone();
    assert_eq!(changes.len(), 1);
    let edits = changes[uri].as_array().unwrap().clone();
    let after = apply_edits(SRC, &edits, false);
    // Every edit lies inside @main.
    let main_start = SRC.find("def @main").unwrap();
    let main_end = SRC[main_start..].find("\n}\n").unwrap() + main_start + 2;
    for edit in &edits {
        let start = lsp_client::offset(SRC, &edit["range"]["start"], false);
        let end = lsp_client::offset(SRC, &edit["range"]["end"], false);
        assert!(
            start >= main_start && end <= main_end,
            "edit outside @main: {edit}"
        );
    }
    // The bytes before and after @main are untouched.
    assert!(after.starts_with(&SRC[..main_start]), "{after}");
    assert!(after.ends_with(&SRC[main_end..]), "{after}");
    assert!(
        after.contains("3f") && !after.contains("add(1f, 2f)"),
        "{after}"
    );
    client.shutdown();
}
