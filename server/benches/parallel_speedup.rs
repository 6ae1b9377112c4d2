//! What a second core gives, through the real binary: a pipeline of
//! function passes on the generated 64-function module (`relay opt`;
//! function passes transform the functions of a module in parallel), and
//! `relay check` of many files (checked in parallel), each run with
//! `RAYON_NUM_THREADS=1` and `=2`. The outputs of both runs must be
//! identical (the parallel run is deterministic).
//!
//!     cargo bench -p relay-server --bench parallel_speedup
//!
//! RELAY_BENCH_RUNS sets how many runs of each are made (default 5), the
//! one- and two-thread runs alternating; the medians are printed. The
//! figures are wall-clock times of whole runs, reading and printing
//! included, with the CPU time (user + system) they used and the load
//! average before and after (on a machine others use, wall times of two
//! threads say less than the CPU times); the pass pipeline's own time is
//! also read from `--time-passes=json`.

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

/// One run of `relay args…` with `threads` worker threads: its wall time,
/// the CPU time (user + system) it used, and its output (standard output
/// and status).
fn run_once(args: &[&str], threads: usize) -> (Duration, Duration, String) {
    let cpu_before = children_cpu();
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .expect("run relay");
    let wall = start.elapsed();
    let cpu = children_cpu().saturating_sub(cpu_before);
    let output = format!("{}\n{}", out.status, String::from_utf8_lossy(&out.stdout));
    (wall, cpu, output)
}

/// The user + system CPU time of the children waited for so far.
#[cfg(unix)]
fn children_cpu() -> Duration {
    // SAFETY: `getrusage` fills the struct it is given; a zeroed `rusage`
    // is a valid value of it.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let of = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    of(usage.ru_utime) + of(usage.ru_stime)
}

#[cfg(not(unix))]
fn children_cpu() -> Duration {
    Duration::ZERO
}

/// The machine's load average over the last minute (others' work skews
/// wall times: it is printed beside them).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
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

/// Runs `args` with 1 and with 2 threads, alternately, `runs` times each
/// (so a change of the machine's load hits both alike), and prints the
/// median wall and CPU times.
fn compare(what: &str, args: &[&str], runs: usize) {
    let load_before = load_average();
    let (mut wall_one, mut cpu_one, mut wall_two, mut cpu_two) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut outputs = (String::new(), String::new());
    for _ in 0..runs {
        let (wall, cpu, out) = run_once(args, 1);
        wall_one.push(wall);
        cpu_one.push(cpu);
        outputs.0 = out;
        let (wall, cpu, out) = run_once(args, 2);
        wall_two.push(wall);
        cpu_two.push(cpu);
        outputs.1 = out;
        assert_eq!(
            outputs.0, outputs.1,
            "{what}: the output with 2 threads differs from 1 thread's"
        );
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (one, two) = (median(&mut wall_one), median(&mut wall_two));
    println!(
        "{what:<52} 1 thread {:>8.1} ms   2 threads {:>8.1} ms   speed-up {:.2}x   (medians of {runs}, alternating; outputs identical)",
        ms(one),
        ms(two),
        one.as_secs_f64() / two.as_secs_f64()
    );
    println!(
        "{:<52} 1 thread {:>8.1} ms   2 threads {:>8.1} ms   (user + sys CPU, medians)   load {load_before} -> {}",
        "",
        ms(median(&mut cpu_one)),
        ms(median(&mut cpu_two)),
        load_average()
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs benches as tests: nothing to do.
        return;
    }
    let runs = env_usize("RELAY_BENCH_RUNS", 5);
    let dir = std::env::temp_dir().join(format!("relay-parallel-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let module = dir.join("net64.relay");
    std::fs::write(&module, resnet_module(64, RESNET152_UNITS)).expect("write the module");
    let module_arg = module.to_str().expect("a UTF-8 path");
    // One large module: its functions lowered and type-checked in parallel.
    compare(
        "relay check (one module of 64 functions)",
        &["check", module_arg],
        runs,
    );
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
