//! The fuzz targets on the stable toolchain, for a few seconds each: every
//! file of the target's seed corpus (`fuzz/seeds/<target>/`), then seeded
//! random inputs until the time budget is spent. CI runs these; long
//! campaigns run the same target functions under cargo-fuzz (see
//! `fuzz/README.md`).
//!
//! `RELAY_FUZZ_SECONDS` sets the budget of each target (default 6).

use relay_tests::fuzz::lsp::lsp_session;
use relay_tests::fuzz::seeded::{seed_dir, seed_files, text_input};
use relay_tests::fuzz::targets::{
    campaign_limits, infer_target, parse_target, passes_on_generated,
};
use relay_tests::fuzz::Entropy;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn budget() -> Duration {
    let seconds = std::env::var("RELAY_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6.0);
    Duration::from_secs_f64(seconds)
}

fn seeds(target: &str) -> Vec<PathBuf> {
    let files = seed_files(target);
    assert!(
        !files.is_empty(),
        "no seeds in {}",
        seed_dir(target).display()
    );
    files
}

/// Runs `f` and, if it panics, fails naming the input so it can be
/// replayed (`cargo +nightly fuzz run <target> <file>`, or the seed).
fn run_named<T>(what: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("fuzz input {what} failed: {message}");
        }
    }
}

/// The seeds, then mutated seeds and generated modules until the budget.
fn text_campaign(target: &str, run: impl Fn(&[u8])) -> (usize, usize) {
    let files = seeds(target);
    let corpus: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    for (file, bytes) in files.iter().zip(&corpus) {
        run_named(&file.display().to_string(), || run(bytes));
    }
    let start = Instant::now();
    let mut count = 0u64;
    while start.elapsed() < budget() {
        let mut e = Entropy::from_seed(count);
        let input = text_input(&mut e, &corpus);
        run_named(&format!("{target} seed {count}"), || run(&input));
        count += 1;
    }
    eprintln!(
        "{target}: {} seed files + {count} generated inputs in {:?}",
        files.len(),
        start.elapsed()
    );
    (files.len(), count as usize)
}

#[test]
fn parse_target_on_seeds_and_mutations() {
    let (_, generated) = text_campaign("parse", parse_target);
    assert!(generated > 0);
}

#[test]
fn infer_target_on_seeds_and_mutations() {
    let (_, generated) = text_campaign("infer", |data| {
        infer_target(data);
    });
    assert!(generated > 0);
}

#[test]
fn every_pass_on_generated_well_typed_modules() {
    for file in seeds("passes") {
        let bytes = std::fs::read(&file).unwrap();
        run_named(&file.display().to_string(), || {
            passes_on_generated(&mut Entropy::from_bytes(&bytes), campaign_limits())
        });
    }
    let start = Instant::now();
    let (mut modules, mut passes, mut kept, mut proposed) = (0u64, 0, 0, 0);
    while start.elapsed() < budget() {
        let outcome = run_named(&format!("passes seed {modules}"), || {
            passes_on_generated(&mut Entropy::from_seed(modules), campaign_limits())
        });
        passes += outcome.passes_ok + outcome.passes_failed;
        kept += outcome.calls_kept;
        proposed += outcome.calls_proposed;
        modules += 1;
    }
    eprintln!(
        "passes: {modules} modules, {passes} pass runs, {kept}/{proposed} proposed calls type-checked, in {:?}",
        start.elapsed()
    );
    assert!(modules > 0);
    // The generator is useful only if most proposals are well typed and
    // the rest exercise the diagnostics.
    assert!(
        kept * 10 >= proposed,
        "{kept} of {proposed} calls type-checked"
    );
}

#[test]
fn language_server_sessions_of_random_edits_and_requests() {
    for file in seeds("lsp") {
        let bytes = std::fs::read(&file).unwrap();
        run_named(&file.display().to_string(), || {
            lsp_session(&mut Entropy::from_bytes(&bytes))
        });
    }
    let start = Instant::now();
    let (mut sessions, mut requests) = (0u64, 0);
    while start.elapsed() < budget() {
        let outcome = run_named(&format!("lsp seed {sessions}"), || {
            lsp_session(&mut Entropy::from_seed(sessions))
        });
        requests += outcome.requests;
        sessions += 1;
    }
    eprintln!(
        "lsp: {sessions} sessions, {requests} requests, in {:?}",
        start.elapsed()
    );
    assert!(sessions > 0);
}
