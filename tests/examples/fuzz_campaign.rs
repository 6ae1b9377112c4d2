//! A seeded fuzzing campaign on the stable toolchain: runs one target on
//! seeded inputs for a time budget, catches panics, groups them by where
//! they happened and writes each group's first input to
//! `fuzz/artifacts/seeded-<target>/`.
//!
//! ```sh
//! cargo run --release -p relay-tests --example fuzz_campaign -- passes 600 [FIRST_SEED]
//! cargo run --release -p relay-tests --example fuzz_campaign -- write-seeds
//! ```
//!
//! Targets: `parse`, `infer`, `passes`, `lsp` (the functions the cargo-fuzz
//! targets call). `write-seeds` regenerates the seed corpora that the
//! generator produces (`fuzz/seeds/{infer,passes,lsp}`).

use relay_tests::fuzz::lsp::lsp_session;
use relay_tests::fuzz::seeded::{seed_dir, seed_files, text_input};
use relay_tests::fuzz::targets::{
    campaign_limits, infer_target, parse_target, passes_on_generated,
};
use relay_tests::fuzz::{generate, Entropy};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target = args.first().map(String::as_str).unwrap_or("passes");
    if target == "write-seeds" {
        write_seeds();
        return;
    }
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60.0);
    let first: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let corpus: Vec<Vec<u8>> = seed_files(target)
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();

    // Where each panic happened, for grouping.
    let location = Arc::new(Mutex::new(String::new()));
    let hook_location = location.clone();
    std::panic::set_hook(Box::new(move |info| {
        let place = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        // Group by place, and by the words of the message before any
        // detail (numbers, positions, the module text).
        let words: String = payload
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take_while(|c| !c.is_ascii_digit() && *c != '(' && *c != '[' && *c != '`')
            .take(90)
            .collect();
        *hook_location.lock().unwrap() = format!("{place}: {}", words.trim_end());
    }));

    let out_dir = seed_dir(target).join(format!("../../artifacts/seeded-{target}"));
    let mut crashes: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    let start = Instant::now();
    let mut count = 0u64;
    let mut seed = first;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        let mut e = Entropy::from_seed(seed);
        // Made inside the guarded call: the generator behind `text_input`
        // can fail too, and that is a finding like any other.
        let mut input = Vec::new();
        let result = catch_unwind(AssertUnwindSafe(|| match target {
            "parse" => {
                input = text_input(&mut e, &corpus);
                parse_target(&input)
            }
            "infer" => {
                input = text_input(&mut e, &corpus);
                infer_target(&input);
            }
            "passes" => {
                passes_on_generated(&mut Entropy::from_seed(seed), campaign_limits());
            }
            "lsp" => {
                lsp_session(&mut Entropy::from_seed(seed));
            }
            other => panic!("unknown target {other}"),
        }));
        if result.is_err() {
            let place = location.lock().unwrap().clone();
            let entry = crashes.entry(place.clone()).or_insert((0, seed));
            entry.0 += 1;
            if entry.0 == 1 {
                std::fs::create_dir_all(&out_dir).unwrap();
                let contents = match target {
                    "parse" | "infer" if !input.is_empty() => input.clone(),
                    "parse" | "infer" => {
                        format!("seed {seed}: the generator itself failed\n").into_bytes()
                    }
                    "passes" => catch_unwind(|| {
                        generate(&mut Entropy::from_seed(seed), campaign_limits()).text
                    })
                    .unwrap_or_else(|_| format!("seed {seed}: the generator itself failed\n"))
                    .into_bytes(),
                    _ => format!("lsp session seed {seed}\n").into_bytes(),
                };
                std::fs::write(out_dir.join(format!("seed-{seed}")), contents).unwrap();
            }
        }
        count += 1;
        seed += 1;
    }
    let failed: usize = crashes.values().map(|(n, _)| n).sum();
    println!(
        "{target}: {count} inputs (seeds {first}..{seed}) in {:.1?}, {failed} failing, {} distinct",
        start.elapsed(),
        crashes.len()
    );
    for (place, (n, seed)) in &crashes {
        println!("  {n:6} × {place}   (first: seed {seed})");
    }
}

/// Seeds the generator can make: modules (well typed and rejected) for the
/// text targets, byte strings for the generator-driven ones.
fn write_seeds() {
    let infer = seed_dir("infer");
    std::fs::create_dir_all(&infer).unwrap();
    for seed in 0..12u64 {
        let generated = generate(&mut Entropy::from_seed(seed), campaign_limits());
        std::fs::write(
            infer.join(format!("generated-{seed:02}.relay")),
            &generated.text,
        )
        .unwrap();
        if let Some(rejected) = generated.rejected.first() {
            std::fs::write(infer.join(format!("rejected-{seed:02}.relay")), rejected).unwrap();
        }
    }
    for (target, count, len) in [("passes", 16u64, 256usize), ("lsp", 12, 512)] {
        let dir = seed_dir(target);
        std::fs::create_dir_all(&dir).unwrap();
        for seed in 0..count {
            let mut e = Entropy::from_seed(seed ^ 0x5eed);
            let bytes: Vec<u8> = (0..len).map(|_| e.next_u64() as u8).collect();
            std::fs::write(dir.join(format!("random-{seed:02}")), bytes).unwrap();
        }
    }
}
