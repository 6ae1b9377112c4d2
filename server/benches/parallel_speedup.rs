//! What a second core gives, through the real binary: a pipeline of
//! function passes on the generated 64-function module (`relay opt`;
//! function passes transform the functions of a module in parallel), and
//! `relay check` of many files (checked in parallel), each run with
//! `RAYON_NUM_THREADS=1` and `=2`. The outputs of both runs must be
//! identical (the parallel run is deterministic).
//!
//!     cargo bench -p relay-server --bench parallel_speedup
//!
//! RELAY_BENCH_RUNS sets how many runs of each are made (the best counts;
//! default 3). The figures are wall-clock times of whole runs, reading and
//! printing included; the pass pipeline's own time is also read from
//! `--time-passes=json`.

use relay_test_support::generate::{resnet_module, RESNET152_UNITS};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Function passes that rewrite a ResNet (BatchNorm folded into the
/// convolutions, constants folded, common subexpressions merged, ops fused).
const PIPELINE: &str = "SimplifyInference, FoldConstant, BackwardFoldScaleAxis, ForwardFoldScaleAxis, SimplifyExpr, EliminateCommonSubexpr, FuseOps";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `relay args…` with `threads` worker threads `runs` times: the
/// best wall time, and the output (standard output and status) of the
/// last run.
fn best_of(args: &[&str], threads: usize, runs: usize) -> (Duration, String) {
    let mut best = Duration::MAX;
    let mut output = String::new();
    for _ in 0..runs {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(args)
            .env("RAYON_NUM_THREADS", threads.to_string())
            .output()
            .expect("run relay");
        best = best.min(start.elapsed());
        output = format!("{}\n{}", out.status, String::from_utf8_lossy(&out.stdout));
    }
    (best, output)
}

/// The pipeline's own time (ms) from `--time-passes=json`'s standard error.
fn pipeline_ms(args: &[&str], threads: usize) -> Option<f64> {
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(args)
        .arg("--time-passes=json")
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let start = text.find(['[', '{'])?;
    let json: serde_json::Value = serde_json::from_str(text[start..].trim()).ok()?;
    let total = |v: &serde_json::Value| -> Option<f64> {
        v.get("total_ms")
            .or_else(|| v.get("time_ms"))
            .and_then(serde_json::Value::as_f64)
    };
    match &json {
        serde_json::Value::Array(items) => items.iter().map(total).sum(),
        other => total(other),
    }
}

fn compare(what: &str, args: &[&str], runs: usize) {
    let (one, out_one) = best_of(args, 1, runs);
    let (two, out_two) = best_of(args, 2, runs);
    assert_eq!(
        out_one, out_two,
        "{what}: the output with 2 threads differs from 1 thread's"
    );
    println!(
        "{what:<52} 1 thread {:>8.1} ms   2 threads {:>8.1} ms   speed-up {:.2}x   (outputs identical)",
        one.as_secs_f64() * 1e3,
        two.as_secs_f64() * 1e3,
        one.as_secs_f64() / two.as_secs_f64()
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs benches as tests: nothing to do.
        return;
    }
    let runs = env_usize("RELAY_BENCH_RUNS", 3);
    let dir = std::env::temp_dir().join(format!("relay-parallel-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let module = dir.join("net64.relay");
    std::fs::write(&module, resnet_module(64, RESNET152_UNITS)).expect("write the module");
    let module_arg = module.to_str().expect("a UTF-8 path");
    let opt = ["opt", module_arg, "-p", PIPELINE];
    compare("relay opt (function passes, 64 functions)", &opt, runs);
    if let (Some(one), Some(two)) = (pipeline_ms(&opt, 1), pipeline_ms(&opt, 2)) {
        println!(
            "{:<52} 1 thread {one:>8.1} ms   2 threads {two:>8.1} ms   speed-up {:.2}x",
            "  of which the pipeline (--time-passes)",
            one / two
        );
    }
    // Many files: 32 networks of one function each.
    let files: Vec<String> = (0..32)
        .map(|i| {
            let path = dir.join(format!("net{i}.relay"));
            std::fs::write(&path, resnet_module(1, RESNET152_UNITS)).expect("write a file");
            path.to_str().expect("a UTF-8 path").to_string()
        })
        .collect();
    let mut check = vec!["check"];
    check.extend(files.iter().map(String::as_str));
    compare(
        "relay check (32 files of one ResNet-152 each)",
        &check,
        runs,
    );
    let _ = std::fs::remove_dir_all(Path::new(&dir));
}
