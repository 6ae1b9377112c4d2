//! Lexing and parsing speed on real models from the TVM corpus.
//!
//! `cargo bench -p relay-syntax --bench parse`. The models are read from
//! `../shared/tvm/models`; when that is absent the benchmark says so loudly
//! and measures nothing. Compare with TVM's own parser through
//! `tvm_timings.json` / `tvm_timings_menagerie.json` there (`parse_s`
//! includes InferType; `parse_s - infer_s` is TVM's parser alone).
//!
//! Memory is allocated with mimalloc, as in the `relay` binary: parsing
//! allocates a block per syntax node that is not shared, so the allocator is
//! part of what is measured. Each `lex+parse` iteration also drops the tree
//! it built (criterion's `iter` drops the result inside the timed loop), as
//! every real use of a parse eventually does.
//!
//! `generated 10 MB` parses the generated 10 MB module (no shared data
//! needed) in parallel and sequentially.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

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

fn bench(c: &mut Criterion) {
    let models = models();
    for (name, text) in &models {
        // The numbers mean nothing if the input does not parse.
        let parse = relay_syntax::parse_module(text);
        assert!(
            parse.errors().is_empty(),
            "{name} does not parse: {:?}",
            &parse.errors()[..1]
        );
    }

    let mut group = c.benchmark_group("lex");
    for (name, text) in &models {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), text, |b, text| {
            b.iter(|| relay_syntax::tokenize(black_box(text)))
        });
    }
    group.finish();

    // Lexing, parsing and building the tree: what `parse_module` costs.
    let mut group = c.benchmark_group("lex+parse");
    for (name, text) in &models {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), text, |b, text| {
            b.iter(|| relay_syntax::parse_module(black_box(text)))
        });
    }
    group.finish();
}

/// `%0 = add(%x, 1); %1 = add(%0, 1); …` with `n` bindings, in a module.
fn binding_chain(n: usize) -> String {
    let mut text =
        String::from("#[version = \"0.0.5\"]\ndef @main(%x: float32) {\n  %0 = add(%x, 1f);\n");
    for i in 1..n {
        text.push_str(&format!("  %{i} = add(%{}, 1f);\n", i - 1));
    }
    text.push_str(&format!("  %{}\n}}\n", n - 1));
    text
}

/// Linear parsing: the same throughput (MB/s) for a chain of bindings ten
/// times longer (a quadratic step would make it ten times slower per byte).
fn linearity(c: &mut Criterion) {
    let mut group = c.benchmark_group("binding chain");
    group.sample_size(10);
    for n in [20_000, 200_000] {
        let text = binding_chain(n);
        assert!(relay_syntax::parse_module(&text).errors().is_empty());
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| relay_syntax::parse_module(black_box(text)))
        });
    }
    group.finish();
}

/// The generated 10 MB module (many definitions): parsed in parallel, as
/// `parse_module` does from 256 KiB on, and sequentially, for the ratio.
fn large_module(c: &mut Criterion) {
    let text = relay_test_support::generate::resnet_module_of_size(10 << 20);
    assert!(relay_syntax::parse_module(&text).errors().is_empty());
    let mut group = c.benchmark_group("generated 10 MB");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    for (name, threshold) in [("parallel", 0), ("sequential", usize::MAX)] {
        group.bench_with_input(BenchmarkId::from_parameter(name), &text, |b, text| {
            b.iter(|| {
                relay_syntax::parse_with_parallel_threshold(
                    black_box(text),
                    relay_syntax::Entry::Module,
                    relay_syntax::ParseOptions::STRICT,
                    threshold,
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, linearity, large_module);
criterion_main!(benches);
