//! Type inference speed: `cargo bench -p relay-passes --bench infer`.
//!
//! * `infer/model/*`: InferType on real models (lowered once, outside the
//!   timing), compared with TVM's own `infer_s` from
//!   `../shared/tvm/models/tvm_timings*.json`. When the corpus is absent
//!   the benchmark says so loudly and skips that part.
//! * `infer/generated/*`: a generated module of 100 functions, each a small
//!   conv2d/dense network calling one or two earlier ones. A full check is
//!   compared with an incremental re-check after editing one function's
//!   body, both when the edit keeps the function's type and when it changes
//!   it (its callers are then checked again, and get errors), and both with
//!   the rest of the module the same nodes (an IR edit) and lowered again
//!   from text (what the language server does on every keystroke).
//!
//! Before criterion's own report, each group prints a quick median and the
//! ratio it is about (TVM's time over ours; full over incremental).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use relay_passes::infer::{infer_module, IncrementalChecker};
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The `relay` binary allocates with mimalloc; measure with the same.
#[global_allocator]
static ALLOCATOR: relay_allocator::Mimalloc = relay_allocator::Mimalloc;

/// Models and the TVM timings file that has their `infer_s`.
const MODELS: &[(&str, &str)] = &[
    ("resnet152", "tvm_timings.json"),
    ("collage_gpt2", "tvm_timings_menagerie.json"),
];

/// How many functions the generated module has, and which one is edited.
const FUNCTIONS: usize = 100;
const EDITED: usize = 50;

fn models_dir() -> PathBuf {
    relay_test_support::tvm::expected_root().join("models")
}

/// Lowers on a thread with a large stack: real models are deep.
fn lower(name: &str, text: String) -> Option<IRModule> {
    let name = name.to_string();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let (module, diagnostics) = parse_and_lower(&name, &text);
            if let Some(error) = diagnostics.iter().find(|d| d.is_error()) {
                eprintln!("{name}: {}", error.message);
                return None;
            }
            Some(module)
        })
        .ok()?
        .join()
        .ok()
        .flatten()
}

/// TVM's InferType time for `model`, in seconds.
fn tvm_infer_seconds(timings: &str, model: &str) -> Option<f64> {
    let text = std::fs::read_to_string(models_dir().join(timings)).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get(model)?.get("infer_s")?.as_f64()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A quick median of `f` over `runs` runs, for the printed ratios.
fn quick_median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    median((0..runs).map(|_| f()).collect())
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn bench_models(c: &mut Criterion) {
    let mut group = c.benchmark_group("infer/model");
    for (model, timings) in MODELS {
        let path = models_dir().join(format!("{model}.relay"));
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!(
                    "\n!!!!!!!! SKIPPED InferType benchmark of {model}: cannot read {}: {e} !!!!!!!!\n",
                    path.display()
                );
                continue;
            }
        };
        let Some(module) = lower(model, text) else {
            eprintln!(
                "\n!!!!!!!! SKIPPED InferType benchmark of {model}: it does not lower !!!!!!!!\n"
            );
            continue;
        };
        // The numbers mean nothing if inference fails.
        let (_, diagnostics) = infer_module(&module);
        assert!(!diagnostics.has_errors(), "{model} has type errors");
        let ours = quick_median(21, || timed(|| drop(black_box(infer_module(&module)))));
        match tvm_infer_seconds(timings, model) {
            Some(tvm) => eprintln!(
                "infer/model/{model}: median {:.3} ms, TVM {:.3} ms: {:.1}x faster",
                ours.as_secs_f64() * 1e3,
                tvm * 1e3,
                tvm / ours.as_secs_f64()
            ),
            None => eprintln!("infer/model/{model}: median {ours:?} (no TVM time in {timings})"),
        }
        group.bench_function(*model, |b| b.iter(|| infer_module(black_box(&module))));
    }
    group.finish();
}

/// The text of the generated module. `variant` changes function `EDITED`:
/// 0 as generated, 1 another body of the same type, 2 another type.
fn generated_text(variant: u8) -> String {
    let image = "Tensor[(1, 8, 16, 16), float32]";
    let pooled = "Tensor[(1, 8, 14, 14), float32]";
    let mut text = String::from("#[version = \"0.0.5\"]\n");
    let mut base = 0;
    for i in 0..FUNCTIONS {
        let edited = i == EDITED;
        let activation = if edited && variant == 1 {
            "sigmoid"
        } else {
            "nn.relu"
        };
        let mut lines = vec![
            "nn.conv2d(%x, %w, padding=[1, 1, 1, 1])".to_string(),
            format!("{activation}(%0)"),
            "nn.batch_flatten(%1)".to_string(),
            "reshape(%2, newshape=[1, 8, 16, 16])".to_string(),
        ];
        // Calls of one or two earlier functions.
        for callee in [i.checked_sub(1), i.checked_sub(7)].into_iter().flatten() {
            let last = lines.len() - 1;
            lines.push(format!("@f{callee:03}(%{last}, %w, %v)"));
        }
        // A dense layer and a residual connection.
        let input = lines.len() - 1;
        lines.push(format!("reshape(%{input}, newshape=[128, 16])"));
        lines.push(format!("nn.dense(%{}, %v, units=16)", input + 1));
        lines.push(format!("reshape(%{}, newshape=[1, 8, 16, 16])", input + 2));
        lines.push(format!("add(%{}, %{input})", input + 3));
        let ret = if edited && variant == 2 {
            lines.push(format!("nn.max_pool2d(%{}, pool_size=[3, 3])", input + 4));
            pooled
        } else {
            image
        };
        text += &format!(
            "def @f{i:03}(%x: {image}, %w: Tensor[(8, 8, 3, 3), float32], \
             %v: Tensor[(16, 16), float32]) -> {ret} {{\n"
        );
        // Graph bindings are numbered across the whole module.
        for (k, line) in lines.iter().enumerate() {
            text += &format!("  %{} = {};\n", base + k, renumbered(line, base));
        }
        text += &format!("  %{}\n}}\n", base + lines.len() - 1);
        base += lines.len();
    }
    text
}

/// `line` with every graph binding reference `%N` moved to `%(N + base)`.
fn renumbered(line: &str, base: usize) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' && chars.peek().is_some_and(char::is_ascii_digit) {
            let mut number = 0usize;
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                number = number * 10 + d as usize;
                chars.next();
            }
            out += &(number + base).to_string();
        }
    }
    out
}

fn bench_generated(c: &mut Criterion) {
    let lower_text = |variant| {
        let text = generated_text(variant);
        let module = lower("generated.relay", text)
            .unwrap_or_else(|| panic!("the generated module (variant {variant}) does not lower"));
        module
    };
    let original = lower_text(0);
    let (_, diagnostics) = infer_module(&original);
    assert!(
        !diagnostics.has_errors(),
        "the generated module has type errors: {:?}",
        diagnostics.iter().next()
    );
    let same_type_text = lower_text(1);
    let (_, diagnostics) = infer_module(&same_type_text);
    assert!(!diagnostics.has_errors(), "the same-type edit has errors");
    let other_type_text = lower_text(2);
    let edited_name = format!("f{EDITED:03}");
    // IR edits: only the edited function is a new node.
    let ir_edit = |from: &IRModule| {
        let mut m = original.clone();
        if let Some(f) = from.function(&edited_name) {
            m.add_function(&edited_name, f.clone());
        }
        m
    };
    let same_type_ir = ir_edit(&same_type_text);
    let other_type_ir = ir_edit(&other_type_text);
    let relowered = lower_text(0);

    let full = quick_median(11, || {
        timed(|| drop(black_box(infer_module(&same_type_ir))))
    });
    let mut group = c.benchmark_group("infer/generated");
    group.bench_function("full", |b| {
        b.iter(|| infer_module(black_box(&same_type_ir)))
    });

    // Each case alternates between two modules differing in one function,
    // so every check is a re-check after a one-function edit.
    let cases: [(&str, &IRModule, &IRModule); 4] = [
        ("incremental/ir-edit/same-type", &original, &same_type_ir),
        ("incremental/ir-edit/other-type", &original, &other_type_ir),
        (
            "incremental/relowered/same-type",
            &relowered,
            &same_type_text,
        ),
        (
            "incremental/relowered/other-type",
            &relowered,
            &other_type_text,
        ),
    ];
    for (name, a, b) in cases {
        let mut checker = IncrementalChecker::new();
        checker.check(a);
        let mut flip = false;
        let mut once = || {
            flip = !flip;
            let target = if flip { b } else { a };
            let start = Instant::now();
            let (_, _, stats) = black_box(checker.check(target));
            (start.elapsed(), stats)
        };
        let (_, stats) = once();
        let incremental = quick_median(21, || once().0);
        eprintln!(
            "infer/generated/{name}: median {:.3} ms ({} re-inferred, {} reused), full {:.3} ms: {:.1}x faster",
            incremental.as_secs_f64() * 1e3,
            stats.rechecked,
            stats.reused,
            full.as_secs_f64() * 1e3,
            full.as_secs_f64() / incremental.as_secs_f64()
        );
        group.bench_function(name, |bencher| {
            bencher.iter_custom(|iters| (0..iters).map(|_| once().0).sum())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_models, bench_generated);
criterion_main!(benches);
