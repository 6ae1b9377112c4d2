//! End-to-end tests of running the program from the editor, through the
//! real `relay lsp` binary over stdio: the "Run with random inputs" code
//! lens (`relay.runFunction`: the summary in the answer and, after the run,
//! in the lens title; a run-time error as a diagnostic at its expression),
//! "Check pass semantics" (`relay.checkSemantics`: a deliberately wrong
//! external pass is named with the seed, the element, both values and a
//! reproducer, and a diagnostic at the function; a correct pipeline
//! agrees), and the bounds of both: a time limit stops a long run without
//! a diagnostic, and a cancelled request is answered as cancelled while the
//! server keeps serving.

mod lsp_client;

use lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const MODULE: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = add(%x, 1f);
  nn.relu(%0)
}
"#;

/// Every `add` becomes `subtract`: a pass that changes what the module
/// computes.
const WRONG_PASS: &str = r#"
[passes.AddToSubtract]
command = ["sed", "-e", "s/add(/subtract(/"]
required = ["InferType"]
"#;

/// A countdown by recursion: long enough for a millisecond's time limit.
const LONG_RUN: &str = r#"#[version = "0.0.5"]
def @count(%n: int32) -> int32 {
  if (less(%n, 1)) { %n } else { @count(subtract(%n, 1)) }
}
def @main() -> int32 { @count(50000) }
"#;

fn project(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("lsp_run")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("relay.toml"), WRONG_PASS).unwrap();
    dir
}

fn start() -> LspClient {
    LspClient::start_with(
        std::path::Path::new(env!("CARGO_BIN_EXE_relay")),
        false,
        json!({ "trusted": true }),
    )
}

fn execute(client: &mut LspClient, command: &str, arg: Value) -> Value {
    client.request(
        "workspace/executeCommand",
        json!({ "command": command, "arguments": [arg] }),
    )
}

fn lens_titles(client: &mut LspClient, uri: &str) -> Vec<String> {
    let lenses = client.request(
        "textDocument/codeLens",
        json!({ "textDocument": { "uri": uri } }),
    );
    lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap().to_string())
        .collect()
}

/// Waits for published diagnostics of `uri` that satisfy `pred`.
fn diagnostics_where(
    client: &mut LspClient,
    uri: &str,
    pred: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let params = client
        .wait_for(
            "textDocument/publishDiagnostics",
            Duration::from_secs(60),
            |p| p["uri"] == uri && pred(p["diagnostics"].as_array().map_or(&[], Vec::as_slice)),
        )
        .unwrap_or_else(|| panic!("no such diagnostics for {uri}"));
    params["diagnostics"].as_array().unwrap().clone()
}

#[test]
fn the_run_lens_runs_the_function_and_shows_its_summary() {
    let dir = project("lens");
    let path = dir.join("model.relay");
    std::fs::write(&path, MODULE).unwrap();
    let uri = file_uri(&path);
    let mut client = start();
    let commands = client.initialize_result.as_ref().unwrap()["capabilities"]
        ["executeCommandProvider"]["commands"]
        .clone();
    for command in ["relay.runFunction", "relay.checkSemantics"] {
        assert!(
            commands.as_array().unwrap().contains(&json!(command)),
            "{commands}"
        );
    }
    client.open(&uri, MODULE);
    client.diagnostics(&uri, 1);

    let lenses = client.request(
        "textDocument/codeLens",
        json!({ "textDocument": { "uri": uri } }),
    );
    let run_lens = lenses
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["command"]["title"] == "▶ Run with random inputs")
        .unwrap_or_else(|| panic!("no run lens in {lenses}"))
        .clone();
    assert_eq!(run_lens["command"]["command"], "relay.runFunction");
    assert_eq!(run_lens["range"]["start"]["line"], 1);

    // What clicking the lens sends.
    let arg = run_lens["command"]["arguments"][0].clone();
    assert_eq!(arg, json!({ "uri": uri, "function": "main" }));
    let run = execute(&mut client, "relay.runFunction", arg);
    assert_eq!(run["error"], Value::Null, "{run}");
    assert_eq!(run["outputs"][0]["shape"], json!([2, 3]));
    assert_eq!(run["outputs"][0]["dtype"], "float32");
    // relu: nothing below 0; inputs in [-1, 1) plus 1: below 2.
    let (min, max) = (
        run["outputs"][0]["min"].as_f64().unwrap(),
        run["outputs"][0]["max"].as_f64().unwrap(),
    );
    assert!(
        (0.0..2.0).contains(&min) && min <= max && max < 2.0,
        "{run}"
    );
    let summary = run["summary"].as_str().unwrap();
    assert!(summary.starts_with("(2, 3) float32 min "), "{summary}");

    // The same seed gives the same numbers as `relay run --random 0`.
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["run", path.to_str().unwrap(), "--random", "0"])
        .output()
        .unwrap();
    assert!(cli.status.success());
    let printed = String::from_utf8(cli.stdout).unwrap();
    let body = printed
        .split_once("array(")
        .and_then(|(_, rest)| rest.split_once("dtype"))
        .map(|(numbers, _)| numbers)
        .unwrap_or_else(|| panic!("not an array: {printed}"));
    let values: Vec<f64> = body
        .split(|c: char| "[], \n".contains(c))
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect();
    assert_eq!(values.len(), 6, "{printed}");
    let cli_min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let cli_max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(
        (cli_min - min).abs() < 1e-6 && (cli_max - max).abs() < 1e-6,
        "{printed} vs {run}"
    );

    // The lens now shows the result.
    let titles = lens_titles(&mut client, &uri);
    let wanted = format!("▶ Random inputs: {summary} · seed 0");
    assert!(titles.contains(&wanted), "{titles:?} lacks {wanted}");
    client.shutdown();
}

#[test]
fn a_run_time_error_is_a_diagnostic_at_the_failing_expression() {
    let text = "#[version = \"0.0.5\"]\n\
                type List[A] { Cons(A, List[A]), Nil }\n\
                def @main() -> float32 {\n  match? (Nil) { Cons(%x, _) => %x }\n}\n";
    let dir = project("error");
    let uri = file_uri(&dir.join("error.relay"));
    let mut client = start();
    client.open(&uri, text);
    client.diagnostics(&uri, 1);
    let run = execute(
        &mut client,
        "relay.runFunction",
        json!({ "uri": uri, "function": "main" }),
    );
    assert_eq!(
        run["error"]["range"]["start"],
        json!({"line": 3, "character": 2}),
        "{run}"
    );
    let diagnostics = diagnostics_where(&mut client, &uri, |d| !d.is_empty());
    assert_eq!(diagnostics[0]["code"], "E0305", "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"]["start"]["line"], 3);
    assert!(diagnostics[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("running @main on random inputs: "));
    client.shutdown();
}

#[test]
fn check_semantics_names_the_wrong_pass_and_agrees_on_a_correct_pipeline() {
    let dir = project("check");
    let path = dir.join("model.relay");
    std::fs::write(&path, MODULE).unwrap();
    let uri = file_uri(&path);
    let mut client = start();
    client.open(&uri, MODULE);
    client.diagnostics(&uri, 1);

    let result = execute(
        &mut client,
        "relay.checkSemantics",
        json!({ "uri": uri, "pipeline": "FoldConstant, AddToSubtract, DeadCodeElimination" }),
    );
    assert_eq!(result["agree"], false, "{result}");
    let difference = &result["difference"];
    assert_eq!(difference["pass"], "AddToSubtract", "{result}");
    assert_eq!(difference["seed"], 0);
    assert_eq!(difference["function"], "main");
    let element = difference["element"].as_str().unwrap();
    assert!(element.starts_with("output["), "{element}");
    assert_ne!(difference["before"], difference["after"]);
    let reproducer = PathBuf::from(difference["reproducer"].as_str().unwrap());
    assert_eq!(reproducer, dir.join("relay-check-semantics"));
    for file in ["before.relay", "pipeline.txt", "inputs/x.npy"] {
        assert!(reproducer.join(file).exists(), "{file} is missing");
    }
    let diagnostics = diagnostics_where(&mut client, &uri, |d| !d.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    // At `@main`'s name.
    assert_eq!(
        diagnostics[0]["range"],
        json!({"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 9}})
    );
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "semantic check: pass AddToSubtract changed the result on the input of seed 0: output["
        ),
        "{message}"
    );

    // A correct pipeline agrees, and the diagnostic goes away.
    let result = execute(
        &mut client,
        "relay.checkSemantics",
        json!({ "uri": uri, "pipeline": "FoldConstant, ToANormalForm", "inputs": 2 }),
    );
    assert_eq!(result["agree"], true, "{result}");
    let checked = result["checked"].as_u64().unwrap();
    assert!(
        checked >= 1 && result["agreed"].as_u64() == Some(checked),
        "{result}"
    );
    assert!(
        result["headline"].as_str().unwrap().starts_with(&format!(
            "FoldConstant, ToANormalForm: the results agree ({checked} pass"
        )),
        "{result}"
    );
    assert_eq!(result["difference"], Value::Null);
    diagnostics_where(&mut client, &uri, <[Value]>::is_empty);

    // Without a pipeline: relay.toml's (the project's only one).
    std::fs::write(
        dir.join("relay.toml"),
        format!("{WRONG_PASS}\n[pipelines]\nbroken = \"AddToSubtract\"\n"),
    )
    .unwrap();
    let result = execute(&mut client, "relay.checkSemantics", json!({ "uri": uri }));
    assert_eq!(result["pipeline"], "broken", "{result}");
    assert_eq!(result["difference"]["pass"], "AddToSubtract", "{result}");
    client.shutdown();
}

#[test]
fn a_time_limit_stops_a_long_run_and_a_cancelled_request_is_answered() {
    let dir = project("bounds");
    let uri = file_uri(&dir.join("long.relay"));
    let mut client = start();
    client.open(&uri, LONG_RUN);
    client.diagnostics(&uri, 1);
    let run = execute(
        &mut client,
        "relay.runFunction",
        json!({ "uri": uri, "function": "main", "timeLimitSeconds": 0.001 }),
    );
    assert_eq!(run["stopped"], true, "{run}");
    assert!(
        run["error"]["message"]
            .as_str()
            .unwrap()
            .contains("time limit"),
        "{run}"
    );
    let bad = client.request_raw(
        "workspace/executeCommand",
        json!({ "command": "relay.runFunction", "arguments": [{ "uri": uri, "function": "main", "timeLimitSeconds": -1 }] }),
    );
    assert!(bad.is_err(), "{bad:?}");

    // Cancelled: the answer says so, and the server goes on serving.
    client.send(json!({
        "jsonrpc": "2.0", "id": 9001, "method": "workspace/executeCommand",
        "params": { "command": "relay.runFunction", "arguments": [{ "uri": uri, "function": "main" }] },
    }));
    client.notify("$/cancelRequest", json!({ "id": 9001 }));
    let start = Instant::now();
    let answer = client
        .response(9001, Duration::from_secs(60))
        .expect("an answer to the cancelled request");
    assert!(
        answer.get("error").is_some() || answer["result"]["stopped"] == true,
        "{answer}"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    // (Whether the run stopped or had finished when the cancel came.)
    let titles = lens_titles(&mut client, &uri);
    assert!(titles.iter().any(|t| t.starts_with("▶ ")), "{titles:?}");
    client.shutdown();
}
