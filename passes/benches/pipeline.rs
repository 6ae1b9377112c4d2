//! What `relay print` costs on real models: parse + lower + print, and the
//! two halves alone (parse + lower; print of a lowered module).
//!
//! `cargo bench -p relay-passes --bench pipeline`. The models are read from
//! `../shared/tvm/models`; when that is absent the benchmark says so loudly
//! and measures nothing. TVM's time for the same work is `parse_s +
//! astext_s` in `tvm_timings.json` / `tvm_timings_menagerie.json` there
//! (TVM's `parse_s` includes InferType, which `relay print` does not run;
//! the figure is still the one to beat, by at least 20x).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use relay_passes::lower::parse_and_lower;
use relay_passes::printer::{print_module, PrintOptions};

/// The `relay` binary allocates with mimalloc; measure with the same.
#[global_allocator]
static ALLOCATOR: relay_allocator::Mimalloc = relay_allocator::Mimalloc;

const MODELS: &[&str] = &["resnet152", "collage_gpt2"];

fn models() -> Vec<(&'static str, String)> {
    let dir = relay_test_support::tvm::expected_root().join("models");
    let mut out = Vec::new();
    for name in MODELS {
        let path = dir.join(format!("{name}.relay"));
        match std::fs::read_to_string(&path) {
            Ok(text) => out.push((*name, text)),
            Err(e) => eprintln!(
                "\n!!!!!!!! SKIPPED benchmark of {name}: cannot read {}: {e} !!!!!!!!\n",
                path.display()
            ),
        }
    }
    out
}

/// `relay print`'s options: metadata written, type comments where known.
const OPTIONS: PrintOptions = PrintOptions {
    show_meta_data: true,
    show_types: true,
    reparseable: true,
};

fn bench(c: &mut Criterion) {
    let models = models();
    for (name, text) in &models {
        // The numbers mean nothing if the input does not read.
        let (_, diagnostics) = parse_and_lower(name, text);
        assert!(!diagnostics.has_errors(), "{name} does not read");
    }

    let mut group = c.benchmark_group("parse+lower+print");
    for (name, text) in &models {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), text, |b, text| {
            b.iter(|| {
                let (module, _) = parse_and_lower(name, black_box(text));
                print_module(&module, &OPTIONS)
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("parse+lower");
    for (name, text) in &models {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), text, |b, text| {
            b.iter(|| parse_and_lower(name, black_box(text)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("print");
    for (name, text) in &models {
        let (module, _) = parse_and_lower(name, text);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &module, |b, module| {
            b.iter(|| print_module(black_box(module), &OPTIONS))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
