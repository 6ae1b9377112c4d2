//! Latency and memory of `relay lsp`, end to end over stdio (the real
//! binary, the path an editor takes): open time, edit → diagnostics, hover,
//! definition and completion (p50, p99), resident memory after open and
//! after the edits, on resnet152 (from the shared models, skipped loudly
//! when absent) and on a generated 10 MB module of ResNet-152 networks
//! (`relay_test_support::generate`).
//!
//!     cargo bench -p relay-server --bench lsp_latency
//!
//! RELAY_BENCH_EDITS sets the number of edits replayed on resnet152 (default
//! 200); RELAY_BENCH_LARGE_EDITS on the 10 MB module (default 10; the
//! acceptance run is 10,000, with resident memory printed after 1, 100,
//! 400, 1,000, 2,000 and 5,000 edits and every fifth of the run);
//! RELAY_BENCH_BINARY runs another `relay` build (e.g. a copy of an older
//! one, for before/after figures) instead of this one;
//! RELAY_BENCH_QUERIES the number of hover/definition/completion requests
//! (default 200);
//! RELAY_BENCH_DEBOUNCE_MS the server's debounce (default 0, so the figures
//! are the server's own latency; the editor default adds 150 ms).
//!
//! Before the end-to-end figures, the phases of one analysis of each file
//! are timed in process (snapshot of the rope, parse, lowering, InferType,
//! line index, span index), to show where an edit's time goes.
//! RELAY_BENCH_PHASES_ONLY=1 stops after them.
//!
//! RELAY_BENCH_MEMORY_ONLY=1 is the memory run of the acceptance, cheap
//! enough to run by hand (a few minutes): only the 10 MB module, no phases
//! and no request timings, 10,000 edits (or RELAY_BENCH_LARGE_EDITS) with
//! the server's resident memory after open and along the run.
//!
//! RELAY_BENCH_OPEN_ONLY=N opens the 10 MB module N times, each in a new
//! server, and prints each open -> diagnostics and their median (no phases,
//! edits or queries): the figure of issue 19, cheap to repeat.
//!
//! RELAY_BENCH_SMAPS=DIR writes the server's memory map (`/proc/PID/smaps`)
//! at each resident-memory report into DIR.

#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

use lsp_client::{position, LspClient, TIMEOUT};
use relay_passes::source::SourceMap;
use relay_server::lsp::analysis::{analyze_incrementally, Incremental, SpanIndex};
use relay_server::lsp::text::{Document, Encoding, LineIndex};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i.min(samples.len() - 1)]
}

fn report(what: &str, samples: &mut [Duration]) {
    let p50 = percentile(samples, 0.5);
    let p99 = percentile(samples, 0.99);
    let max = *samples.iter().max().unwrap();
    println!(
        "{what:<44} n={:<4} p50 {:>9.2} ms   p99 {:>9.2} ms   max {:>9.2} ms",
        samples.len(),
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
}

/// Times the stages of one analysis of `text`, as the server runs them.
fn bench_phases(label: &str, text: &str) {
    let mut phases: Vec<(&str, Duration)> = Vec::new();
    let mut timed = |name: &'static str, took: Duration| phases.push((name, took));
    let start = Instant::now();
    let document = Document::new(text, 1);
    timed("rope from text (didOpen)", start.elapsed());
    let start = Instant::now();
    let snapshot = document.text();
    timed("snapshot of the rope", start.elapsed());
    let start = Instant::now();
    let mut sources = SourceMap::new();
    let file = sources.add(label, snapshot.clone());
    timed("source map (line starts)", start.elapsed());
    let start = Instant::now();
    let parse = relay_syntax::parse_module(&snapshot);
    timed("parse", start.elapsed());
    // One keystroke in the middle of the file, parsed again incrementally
    // (what the server does on an edit inside a definition).
    if let Some(at) = snapshot[snapshot.len() / 2..]
        .find("\n  %")
        .map(|i| i + snapshot.len() / 2 + 3)
    {
        let edited = format!("{} {}", &snapshot[..at], &snapshot[at..]);
        // The best of 10 (one run is at the mercy of a busy machine), the
        // edit found by comparing the texts as the server does.
        let mut best = Duration::MAX;
        for _ in 0..10 {
            let start = Instant::now();
            let edit = relay_syntax::TextEdit::between(&snapshot, &edited).expect("an edit");
            let (reparsed, how) = relay_syntax::reparse_module(&parse, edit, &edited);
            best = best.min(start.elapsed());
            assert!(
                matches!(how, relay_syntax::Reparsed::Item { .. }),
                "{how:?}"
            );
            drop(reparsed);
        }
        timed("re-parse after a keystroke (best of 10, not summed)", best);
    }
    let start = Instant::now();
    let lowered = parse
        .source_file()
        .map(|root| relay_passes::lower::lower_module(file, &root));
    timed("lowering (with the name index)", start.elapsed());
    let Some(lowered) = lowered else {
        println!("{label}: no source file");
        return;
    };
    let mut module = lowered.module;
    module.sources = sources;
    let start = Instant::now();
    let (typed, _) = relay_passes::infer::infer_module(&module);
    timed("InferType", start.elapsed());
    let start = Instant::now();
    let lines = LineIndex::new(snapshot.clone(), Encoding::Utf16);
    timed("line index", start.elapsed());
    let start = Instant::now();
    let index = SpanIndex::build(&typed);
    timed("span index (first hover)", start.elapsed());
    let total: Duration = phases
        .iter()
        .filter(|(name, _)| !name.contains("not summed"))
        .map(|(_, d)| *d)
        .sum();
    println!(
        "{label}: phases of one analysis ({} names, {} nodes, {} lines), total {:.1} ms",
        lowered.names.len(),
        index.len(),
        lines.line_count(),
        total.as_secs_f64() * 1e3
    );
    for (name, took) in &phases {
        println!(
            "    {name:<34} {:>9.2} ms  {:>5.1} %",
            took.as_secs_f64() * 1e3,
            100.0 * took.as_secs_f64() / total.as_secs_f64().max(1e-9)
        );
    }
    // Dropping a large IR takes time of its own; not part of an edit's latency.
    let start = Instant::now();
    drop((typed, module, index, parse));
    println!(
        "    (dropping the analysis           {:>9.2} ms)",
        start.elapsed().as_secs_f64() * 1e3
    );
    bench_incremental_edit(label, text);
}

/// The stages of the server's analysis after one keystroke, as an edit
/// runs them (incrementally, from the kept state of the last analysis),
/// and what the first requests after it and retiring the old analysis
/// cost.
fn bench_incremental_edit(label: &str, text: &str) {
    let Some(at) = text[text.len() / 2..]
        .find("\n  %")
        .map(|i| i + text.len() / 2 + 3)
    else {
        return;
    };
    let kept = Incremental::default();
    let analyse = |text: &str, version: i32| {
        // The editor's rope is there already: only its snapshot is timed.
        let document = Document::new(text, version);
        let start = Instant::now();
        let snapshot = document.text();
        let snapshot_took = start.elapsed();
        let analysis =
            analyze_incrementally(label, snapshot, version, Encoding::Utf16, &|| false, &kept)
                .expect("not obsolete");
        let took = start.elapsed();
        drop(document);
        (analysis, snapshot_took, took)
    };
    let (mut last, _, open) = analyse(text, 1);
    println!(
        "{label}: analysis at open {:.1} ms ({})",
        open.as_secs_f64() * 1e3,
        stages(&last.timings)
    );
    // Insert a space and delete it again, five times: the best of each stage.
    let edited = format!("{} {}", &text[..at], &text[at..]);
    let mut best: Vec<(&'static str, Duration)> = Vec::new();
    for version in 2..12 {
        let now = if version % 2 == 0 { &edited } else { text };
        let (analysis, snapshot, took) = analyse(now, version);
        let mut timings = vec![("snapshot of the rope", snapshot)];
        timings.extend(analysis.timings.iter().copied());
        let offset = (at as u32 + 2).into();
        let start = Instant::now();
        let _ = analysis.names.at(offset);
        timings.push(("first name lookup", start.elapsed()));
        let start = Instant::now();
        let _ = analysis.index().starting_at(at as u32 + 1).count();
        timings.push(("first span lookup", start.elapsed()));
        let start = Instant::now();
        drop(std::mem::replace(&mut last, analysis));
        timings.push(("dropping the previous analysis", start.elapsed()));
        timings.push(("(analysis total)", took));
        if best.is_empty() {
            best = timings;
        } else {
            for (b, t) in best.iter_mut().zip(timings) {
                b.1 = b.1.min(t.1);
            }
        }
    }
    println!("{label}: a keystroke, best of 10 per stage:");
    for (name, took) in &best {
        println!("    {name:<34} {:>9.2} ms", took.as_secs_f64() * 1e3);
    }
}

fn stages(timings: &[(&'static str, Duration)]) -> String {
    timings
        .iter()
        .map(|(name, took)| format!("{name} {:.1} ms", took.as_secs_f64() * 1e3))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The server's resident memory, in MB (Linux; `None` elsewhere).
fn resident_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn print_memory(label: &str, when: &str, pid: u32) {
    // RELAY_BENCH_SMAPS=DIR: a copy of the server's memory map at each
    // report, to see which mappings the resident memory is in.
    if let Some(dir) = std::env::var_os("RELAY_BENCH_SMAPS") {
        let name = format!("{label}-{}.smaps", when.replace(' ', "-"));
        if let Ok(maps) = std::fs::read(format!("/proc/{pid}/smaps")) {
            let _ = std::fs::write(Path::new(&dir).join(name), maps);
        }
    }
    match resident_mb(pid) {
        Some(mb) => println!("{label}: resident memory {when}: {mb:.1} MB"),
        None => println!("{label}: resident memory {when}: unknown (no /proc)"),
    }
}

/// `count` offsets spread evenly over `offsets`.
fn spread(offsets: Vec<usize>, count: usize) -> Vec<usize> {
    let step = (offsets.len() / count.max(1)).max(1);
    offsets.into_iter().step_by(step).take(count).collect()
}

fn bench_file(label: &str, text: &str, edits: usize, queries: usize) {
    let debounce = env_usize("RELAY_BENCH_DEBOUNCE_MS", 0);
    // RELAY_BENCH_BINARY: another build to measure (a baseline).
    let binary = std::env::var("RELAY_BENCH_BINARY")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_relay").to_string());
    let mut client =
        LspClient::start_with(Path::new(&binary), false, json!({ "debounceMs": debounce }));
    let pid = client.pid();
    let uri = format!("file:///tmp/relay-bench/{label}.relay");
    let start = Instant::now();
    client.open(&uri, text);
    let diagnostics = client.diagnostics(&uri, 1);
    println!(
        "{label}: {} bytes, {} diagnostics, open -> diagnostics {:.1} ms",
        text.len(),
        diagnostics.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    // Uses of graph bindings as call arguments, spread over the file: the
    // places edits, hovers, definitions and completions go to.
    let uses = spread(
        text.match_indices("(%").map(|(i, _)| i + 1).collect(),
        queries.max(1),
    );
    let query = |client: &mut LspClient, method: &str, at: usize| {
        let sent = Instant::now();
        client.request(
            method,
            json!({ "textDocument": { "uri": uri }, "position": position(text, at + 1, false) }),
        );
        sent.elapsed()
    };
    // The first hover waits for the span index the server builds after
    // publishing; memory is measured once that is there.
    let first_hover = query(&mut client, "textDocument/hover", uses[0]);
    println!(
        "{label}: first hover {:.1} ms",
        first_hover.as_secs_f64() * 1e3
    );
    print_memory(label, "after open", pid);
    // Edits: insert a space before a binding's argument and delete it again,
    // at sites spread over the file (each pair leaves the text as it was).
    let sites = spread(
        text.match_indices("\n  %").map(|(i, _)| i + 3).collect(),
        50,
    );
    let mut samples = Vec::new();
    for i in 0..edits {
        let version = i as i64 + 2;
        let pos = position(text, sites[(i / 2) % sites.len()], false);
        let change = if i % 2 == 0 {
            json!([{ "range": { "start": pos, "end": pos }, "text": " " }])
        } else {
            let end =
                json!({ "line": pos["line"], "character": pos["character"].as_u64().unwrap() + 1 });
            json!([{ "range": { "start": pos, "end": end }, "text": "" }])
        };
        let sent = Instant::now();
        client.change(&uri, version, change);
        client
            .wait_for("textDocument/publishDiagnostics", TIMEOUT, |p| {
                p["uri"] == uri.as_str() && p["version"] == version
            })
            .expect("diagnostics");
        samples.push(sent.elapsed());
        // Resident memory along the way: it must not grow with the edits
        // (after the first, the first hundreds, then every fifth).
        let done = i + 1;
        if edits >= 100
            && (done % (edits / 5) == 0 || [1, 100, 400, 1000, 2000, 5000].contains(&done))
        {
            print_memory(label, &format!("after {} edits", i + 1), pid);
        }
    }
    if edits % 2 == 1 {
        let version = edits as i64 + 2;
        // Undo the last insertion so the query positions hold.
        let pos = position(text, sites[((edits - 1) / 2) % sites.len()], false);
        let end =
            json!({ "line": pos["line"], "character": pos["character"].as_u64().unwrap() + 1 });
        client.change(
            &uri,
            version,
            json!([{ "range": { "start": pos, "end": end }, "text": "" }]),
        );
        let _ = client.diagnostics(&uri, version);
    }
    if edits > 0 {
        report(&format!("{label}: edit -> diagnostics"), &mut samples);
    }
    let _ = query(&mut client, "textDocument/hover", uses[0]);
    print_memory(label, &format!("after {edits} edits"), pid);
    if queries == 0 {
        client.shutdown();
        return;
    }
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/completion",
    ] {
        let mut samples: Vec<Duration> = uses
            .iter()
            .map(|&at| query(&mut client, method, at))
            .collect();
        report(&format!("{label}: {method}"), &mut samples);
    }
    client.shutdown();
}

/// Opens `text` `count` times, each in a new server: open -> diagnostics
/// and the resident memory once the first hover answered.
fn bench_opens(label: &str, text: &str, count: usize) {
    let debounce = env_usize("RELAY_BENCH_DEBOUNCE_MS", 0);
    let binary = std::env::var("RELAY_BENCH_BINARY")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_relay").to_string());
    let uri = format!("file:///tmp/relay-bench/{label}.relay");
    let at = text.find("(%").map_or(0, |i| i + 1);
    let mut samples = Vec::new();
    for _ in 0..count {
        let mut client =
            LspClient::start_with(Path::new(&binary), false, json!({ "debounceMs": debounce }));
        let start = Instant::now();
        client.open(&uri, text);
        let _ = client.diagnostics(&uri, 1);
        let took = start.elapsed();
        client.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": position(text, at + 1, false) }),
        );
        let memory = resident_mb(client.pid()).unwrap_or(f64::NAN);
        println!(
            "{label}: open -> diagnostics {:.1} ms, resident memory after open {memory:.1} MB",
            took.as_secs_f64() * 1e3
        );
        samples.push(took);
        client.shutdown();
    }
    if !samples.is_empty() {
        report(&format!("{label}: open -> diagnostics"), &mut samples);
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs benches as tests: nothing to do.
        return;
    }
    let resnet = relay_test_support::tvm::expected_root().join("models/resnet152.relay");
    let large = relay_test_support::generate::resnet_module_of_size(10 << 20);
    if let Some(opens) = std::env::var("RELAY_BENCH_OPEN_ONLY")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        bench_opens("generated-10MB", &large, opens);
        return;
    }
    if std::env::var_os("RELAY_BENCH_MEMORY_ONLY").is_some() {
        bench_file(
            "generated-10MB",
            &large,
            env_usize("RELAY_BENCH_LARGE_EDITS", 10_000),
            0,
        );
        return;
    }
    if let Ok(text) = std::fs::read_to_string(&resnet) {
        bench_phases("resnet152", &text);
    }
    bench_phases("generated-10MB", &large);
    if std::env::var_os("RELAY_BENCH_PHASES_ONLY").is_some() {
        return;
    }
    match std::fs::read_to_string(&resnet) {
        _ if std::env::var_os("RELAY_BENCH_SKIP_RESNET").is_some() => {}
        Ok(text) => bench_file(
            "resnet152",
            &text,
            env_usize("RELAY_BENCH_EDITS", 200),
            env_usize("RELAY_BENCH_QUERIES", 200),
        ),
        Err(e) => {
            println!(
                "!!!!!! SKIPPED resnet152: {} is not readable ({e})",
                resnet.display()
            );
            eprintln!(
                "!!!!!! SKIPPED resnet152: {} is not readable ({e})",
                resnet.display()
            );
        }
    }
    bench_file(
        "generated-10MB",
        &large,
        env_usize("RELAY_BENCH_LARGE_EDITS", 10),
        env_usize("RELAY_BENCH_QUERIES", 200),
    );
}
