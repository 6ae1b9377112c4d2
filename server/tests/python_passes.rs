//! relay.toml's Python passes (`[passes.ReplaceRelu] python =
//! "mypasses:ReplaceRelu"`), run by the `relay_tools` host through the
//! external-pass protocol: listed by `relay passes`, run by `relay opt` in
//! pipelines, failures reported with the Python exception, and offered and
//! applied through the language server's code action.
//!
//! They need a Python with `relay_tools` installed, named by `RELAY_PYTHON`
//! (`passes/python/run_tests.sh` sets it up and runs these tests); without
//! it they say so and pass.

mod lsp_client;

use lsp_client::{file_uri, position, LspClient};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const MODEL: &str = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = add(%x, %x);
  nn.relu(%0)
}
";

const PASSES: &str = r#"
import relay_tools as tvm
from relay_tools import relay


@relay.transform.function_pass(opt_level=1, name="ReplaceRelu")
class ReplaceRelu:
    """nn.relu(x) -> clip(x, 0, 6)."""

    def transform_function(self, func, mod, ctx):
        class Rewrite(relay.ExprMutator):
            def visit_call(self, call):
                new = super().visit_call(call)
                if isinstance(new.op, tvm.ir.Op) and new.op.name == "nn.relu":
                    return relay.clip(new.args[0], 0.0, 6.0)
                return new

        return Rewrite().visit(func)


@tvm.transform.module_pass(opt_level=0)
def Broken(mod, ctx):
    raise ValueError("the pass gave up")
"#;

/// The interpreter with relay_tools, or `None` (after saying so).
fn python() -> Option<String> {
    match std::env::var("RELAY_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            eprintln!(
                "SKIPPED: RELAY_PYTHON is not set (passes/python/run_tests.sh runs these tests \
                 with a Python that has relay_tools)"
            );
            None
        }
    }
}

fn project(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("python_passes")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("relay.toml"),
        r#"[pipelines]
relu = "InferType, ReplaceRelu"

[passes.ReplaceRelu]
python = "mypasses:ReplaceRelu"
opt_level = 1

[passes.Broken]
python = "mypasses:Broken"
"#,
    )
    .unwrap();
    std::fs::write(dir.join("mypasses.py"), PASSES).unwrap();
    std::fs::write(dir.join("model.relay"), MODEL).unwrap();
    dir
}

fn relay(dir: &Path, python: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(args)
        .current_dir(dir)
        .env("RELAY_PYTHON", python)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn relay_opt_runs_a_python_pass_from_relay_toml() {
    let Some(python) = python() else { return };
    let dir = project("opt");
    let (code, out, err) = relay(&dir, &python, &["passes"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("ReplaceRelu") && out.contains("Python pass: mypasses:ReplaceRelu"),
        "{out}"
    );

    let (code, out, err) = relay(
        &dir,
        &python,
        &[
            "opt",
            "model.relay",
            "-p",
            "InferType, ReplaceRelu, FoldConstant",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("clip(%0, a_min=0f, a_max=6f)"), "{out}");
    assert!(!out.contains("nn.relu"), "{out}");

    // The pass's opt_level from relay.toml counts in a pipeline.
    let (code, out, err) = relay(
        &dir,
        &python,
        &[
            "opt",
            "model.relay",
            "-p",
            "Sequential(ReplaceRelu)",
            "--opt-level",
            "0",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nn.relu"), "opt_level 0 < 1 skips it: {out}");
}

#[test]
fn a_failing_python_pass_names_the_exception() {
    let Some(python) = python() else { return };
    let dir = project("broken");
    let (code, _out, err) = relay(&dir, &python, &["opt", "model.relay", "-p", "Broken"]);
    assert_ne!(code, 0);
    assert!(err.contains("Broken"), "{err}");
    assert!(err.contains("ValueError: the pass gave up"), "{err}");
}

#[test]
fn the_language_server_offers_and_applies_a_python_pass() {
    let Some(python) = python() else { return };
    let dir = project("lsp");
    let uri = file_uri(&dir.join("model.relay"));
    let mut client = LspClient::start_with_env(
        Path::new(env!("CARGO_BIN_EXE_relay")),
        false,
        json!({ "trusted": true }),
        &[("RELAY_PYTHON", python.as_str())],
    );
    client.open(&uri, MODEL);
    client.diagnostics(&uri, 1);
    let at = MODEL.find("nn.relu").unwrap();
    let actions: Vec<Value> = client
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": { "uri": uri },
                "range": { "start": position(MODEL, at, false), "end": position(MODEL, at, false) },
                "context": { "diagnostics": [] }
            }),
        )
        .as_array()
        .cloned()
        .unwrap_or_default();
    let action = actions
        .iter()
        .find(|a| a["title"] == "Run the relay.toml pipeline `relu`")
        .unwrap_or_else(|| panic!("no action for the Python pass's pipeline: {actions:?}"));
    let command = &action["command"];
    let answer = client.request_raw(
        "workspace/executeCommand",
        json!({ "command": command["command"], "arguments": command["arguments"] }),
    );
    assert!(answer.is_ok(), "{answer:?}");
    let edit = client.applied_edits.last().expect("an edit was applied");
    let changes = edit["edit"]["changes"][&uri]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let new_text: String = changes
        .iter()
        .map(|c| c["newText"].as_str().unwrap_or_default())
        .collect();
    assert!(new_text.contains("clip("), "{edit}");
    assert!(!new_text.contains("nn.relu"), "{edit}");
    client.shutdown();
}
