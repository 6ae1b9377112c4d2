//! Long work in the language server, through the real binary: what takes
//! longer than 300 ms is shown as `$/progress` (created with
//! `window/workDoneProgress/create`), on-save pipelines run off the edit
//! path (an edit made while they run is analysed and published at once)
//! and a newer edit stops them before their next pass.

mod lsp_client;

use lsp_client::{file_uri, position, LspClient, TIMEOUT};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MODULE: &str = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
";

/// A project whose on-save pipeline is two external passes: `Slow` waits
/// a second, then marks `slow` in `ran.txt`; `Mark` marks `mark`.
fn project(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("lsp_progress")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("relay.toml"),
        r#"on_save = ["slow"]
[pipelines]
slow = "Slow, Mark"
[passes.Slow]
command = ["sh", "-c", "sleep 1; echo slow >> ran.txt; cat"]
[passes.Mark]
command = ["sh", "-c", "echo mark >> ran.txt; cat"]
"#,
    )
    .unwrap();
    std::fs::write(dir.join("model.relay"), MODULE).unwrap();
    dir
}

fn marks(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("ran.txt")).unwrap_or_default()
}

fn start() -> LspClient {
    LspClient::start_with(
        Path::new(env!("CARGO_BIN_EXE_relay")),
        false,
        json!({ "trusted": true, "debounceMs": 0 }),
    )
}

/// Waits for the `$/progress` of `kind` (`begin`, `end`), for the token
/// given or any; returns its token and value.
fn progress(client: &mut LspClient, kind: &str, token: Option<&Value>) -> Option<(Value, Value)> {
    client
        .wait_for("$/progress", TIMEOUT, |p| {
            p["value"]["kind"] == kind && token.is_none_or(|t| &p["token"] == t)
        })
        .map(|p| (p["token"].clone(), p["value"].clone()))
}

#[test]
fn on_save_pipelines_show_progress_run_off_the_edit_path_and_stop_on_an_edit() {
    let dir = project("on_save");
    let uri = file_uri(&dir.join("model.relay"));
    let mut client = start();
    client.open(&uri, MODULE);
    client.diagnostics(&uri, 1);
    client.notify(
        "textDocument/didSave",
        json!({ "textDocument": { "uri": uri } }),
    );
    // The pipeline takes over a second: progress is shown.
    let (token, begin) = progress(&mut client, "begin", None).expect("progress begins");
    assert_eq!(begin["title"], "Running the on-save pipelines", "{begin}");
    // An edit while `Slow` runs is analysed and published before it ends.
    let at = position(MODULE, MODULE.find("%0 = add").unwrap(), false);
    client.change(
        &uri,
        2,
        json!([{ "range": { "start": at, "end": at }, "text": " " }]),
    );
    client.diagnostics(&uri, 2);
    assert_eq!(
        marks(&dir),
        "",
        "the edit's diagnostics waited for the on-save pipeline"
    );
    // The run ends without its second pass: the edit made it obsolete.
    progress(&mut client, "end", Some(&token)).expect("progress ends");
    assert_eq!(marks(&dir), "slow\n", "the obsolete run went on");
    // Nothing of the stopped run is published for the new version.
    let late = client.wait_for(
        "textDocument/publishDiagnostics",
        Duration::from_millis(500),
        |p| p["uri"] == uri.as_str(),
    );
    assert!(
        late.as_ref()
            .is_none_or(|p| p["diagnostics"].as_array().is_some_and(Vec::is_empty)),
        "{late:?}"
    );

    // Saved again without an edit, the whole pipeline runs.
    client.notify(
        "textDocument/didSave",
        json!({ "textDocument": { "uri": uri } }),
    );
    let (token, _) = progress(&mut client, "begin", None).expect("progress begins");
    progress(&mut client, "end", Some(&token)).expect("progress ends");
    assert_eq!(marks(&dir), "slow\nslow\nmark\n");
    client.shutdown();
}

#[test]
fn opening_a_large_file_shows_progress_while_it_is_analysed() {
    let text = relay_test_support::generate::resnet_module_of_size(6 << 20);
    let uri = "file:///tmp/relay-progress/large.relay";
    let mut client = start();
    let opened = Instant::now();
    client.open(uri, &text);
    client.diagnostics(uri, 1);
    let took = opened.elapsed();
    let begun = client.wait_for("$/progress", Duration::from_millis(200), |p| {
        p["value"]["kind"] == "begin"
    });
    if took > Duration::from_millis(800) {
        // Long enough that the 300 ms mark was certainly passed.
        let begun = begun.unwrap_or_else(|| panic!("no progress in {took:?}"));
        assert_eq!(begun["value"]["title"], "Analysing large.relay", "{begun}");
        assert!(
            progress(&mut client, "end", Some(&begun["token"])).is_some(),
            "the progress never ended"
        );
    } else if took < Duration::from_millis(250) {
        assert!(begun.is_none(), "progress for {took:?} of work: {begun:?}");
    }
    client.shutdown();
}
