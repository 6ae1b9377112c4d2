//! Speed of the pattern language and of the BYOC flow on real networks:
//! `cargo bench -p relay-passes --bench byoc`.
//!
//! The networks (TVM's `relay.testing` ResNets, pre-activation) hold their
//! weights as parameters, so a conv2d's "bias" is the scale-and-shift that
//! `SimplifyInference` makes of the batch norm after it:
//! `nn.conv2d → multiply → add → nn.relu`. Each subject is prepared once,
//! outside the timing, with `InferType, SimplifyInference, InferType`:
//!
//! * `resnet152 rewrite` — `relay_patterns::rewrite` of a conv2d-bias-relu
//!   rule (the `add` becomes a `bias_add` of the reshaped shift) over
//!   `@main`, run to its fixpoint as TVM's `rewrite` does (a second round
//!   finds nothing), and `partition` of the same pattern into composite
//!   functions;
//! * `resnet50 BYOC flow` — InferType, then `MergeComposite` with a
//!   DNNL-like table (conv2d-bias-relu, conv2d-bias, dense-bias),
//!   `AnnotateTarget`, `MergeCompilerRegions`, `PartitionGraph`: the whole
//!   of TVM's `partition_for_<target>` after its preparation.
//!
//! Each figure is the median of `RUNS` runs, with the number of matches or
//! of partitioned functions so a change in behaviour shows beside a change
//! in speed. The models come from `../shared/tvm/models`; without them the
//! subjects are skipped with a note.

use relay_passes::ir::rewrite::post_order_each;
use relay_passes::ir::{Expr, IRModule};
use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::{
    pipeline_from_text, registry, run_pass, PassContext, PassContextOptions,
};
use relay_passes::patterns::rewrite::{partition, rewrite};
use relay_passes::patterns::rule::parse_rewrite_rule;
use relay_passes::patterns::text::parse_pattern;
use support::{median_ms, on_big_stack};

mod support;

/// The `relay` binary allocates with mimalloc; measure with the same.
#[global_allocator]
static ALLOCATOR: relay_allocator::Mimalloc = relay_allocator::Mimalloc;

/// What every subject goes through before the timing.
const PREPARE: &str = "InferType, SimplifyInference, InferType";

/// The conv2d-bias-relu chain as the prepared networks spell it.
const CONV_BIAS_RELU: &str = "nn.conv2d(*, *) |> multiply(_, *) |> add(_, *) |> nn.relu(_)";

/// The rewrite rule of the first subject: the matched convolution (with its
/// attributes) and its scale are kept, the broadcast `add` becomes a
/// `bias_add` (which the pattern does not match: one round rewrites all).
const RULE: &str = "$c = nn.conv2d(*, *); nn.relu(add(multiply($c, $s), $b)) \
                    => nn.relu(nn.bias_add(multiply($c, $s), reshape($b, newshape=[-1])))";

/// The BYOC flow of the second subject, as a pipeline.
const FLOW: &str = r#"MergeComposite(patterns={
    "dnnl.conv2d_bias_relu": "nn.conv2d(*, *) |> multiply(_, *) |> add(_, *) |> nn.relu(_)",
    "dnnl.conv2d_bias": "nn.conv2d(*, *) |> multiply(_, *) |> add(_, *)",
    "dnnl.dense_bias": "nn.dense(*, *) |> add(_, *)"}),
  AnnotateTarget(targets=["dnnl"]), MergeCompilerRegions, PartitionGraph"#;

/// The model `name` of the TVM corpus, prepared with [`PREPARE`]; `None`
/// (with a note) when the corpus is absent.
fn prepared(name: &str) -> Option<IRModule> {
    let path = relay_test_support::tvm::expected_root().join(format!("models/{name}.relay"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("({name} skipped: {} is absent)", path.display());
        return None;
    };
    let name = name.to_string();
    Some(on_big_stack(move || {
        relay_passes::register_builtin_passes();
        let (module, diagnostics) = parse_and_lower(&name, &text);
        assert!(!diagnostics.has_errors(), "{name} does not parse");
        let ctx = PassContext::new(PassContextOptions::default()).expect("a context");
        let pass = pipeline_from_text(PREPARE).expect("the preparation parses");
        run_pass(&*pass, module, &ctx).expect("the preparation runs")
    }))
}

/// How many calls of `op` the expression holds (each node once).
fn count_calls(expr: &Expr, op: &str) -> usize {
    let mut count = 0;
    post_order_each(expr, |e| {
        if e.as_call()
            .and_then(|c| c.callee.as_op())
            .is_some_and(|o| o.name == op)
        {
            count += 1;
        }
    });
    count
}

fn resnet152_rewrite() {
    let Some(module) = prepared("resnet152") else {
        return;
    };
    let body = module
        .function("main")
        .expect("resnet152 has @main")
        .body()
        .clone();
    let bias_adds_before = count_calls(&body, "nn.bias_add");
    let (rewrite_ms, rewritten, partition_ms, partitioned) = on_big_stack(move || {
        let rule = parse_rewrite_rule(RULE, &|_| None).expect("the rule parses");
        let callbacks = [rule.into_callback()];
        let (rewrite_ms, rewritten) =
            median_ms(|| rewrite(&callbacks, &body, None).expect("the rewrite ends"));
        let pattern = parse_pattern(CONV_BIAS_RELU, &|_| None)
            .expect("the pattern parses")
            .pattern;
        let (partition_ms, partitioned) = median_ms(|| partition(&pattern, &body, &[], &|_| true));
        (rewrite_ms, rewritten, partition_ms, partitioned)
    });
    println!(
        "{:<44} {rewrite_ms:>9.1} ms  {} conv2d-bias-relu rewritten",
        "resnet152 rewrite (to fixpoint)",
        count_calls(&rewritten, "nn.bias_add") - bias_adds_before
    );
    println!(
        "{:<44} {partition_ms:>9.1} ms  {} composite functions",
        "resnet152 partition",
        count_functions(&partitioned)
    );
}

/// How many function expressions `expr` holds.
fn count_functions(expr: &Expr) -> usize {
    let mut count = 0;
    post_order_each(expr, |e| {
        if e.as_function().is_some() {
            count += 1;
        }
    });
    count
}

fn resnet50_flow() {
    let Some(module) = prepared("resnet50") else {
        return;
    };
    let (ms, out) = on_big_stack(move || {
        relay_passes::register_builtin_passes();
        let ctx = PassContext::new(PassContextOptions::default()).expect("a context");
        let flow = pipeline_from_text(FLOW).expect("the flow parses");
        let infer = registry::create_by_name("InferType").expect("InferType");
        median_ms(|| {
            let typed = run_pass(&*infer, module.clone(), &ctx).expect("InferType");
            run_pass(&*flow, typed, &ctx).expect("the flow runs")
        })
    });
    let external = out
        .functions()
        .filter(|(_, f)| f.attr("Compiler").is_some())
        .count();
    println!(
        "{:<44} {ms:>9.1} ms  {external} external functions",
        "resnet50 BYOC flow (InferType + flow)"
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    println!("{:<44} {:>12}", "subject", "median");
    resnet152_rewrite();
    resnet50_flow();
}
