//! Drawing speed and size of dataflow graphs:
//! `cargo bench -p relay-passes --bench graph`.
//!
//! For each subject it prints the node count, the median time of building
//! the graph and writing its SVG (the work of `relay graph`, lowering and
//! InferType excluded, as they happen once per document in the editor), and
//! the SVG's size:
//!
//! * `resnet152` — TVM's test model (`../shared/tvm/models`), its `@main`;
//! * `resnet152 fused` — the same after `SimplifyInference, FoldConstant,
//!   FuseOps`, and the side-by-side diff of that pipeline;
//! * `generated 10 MB: largest function` — the largest function (by node
//!   count) of our own 64-function, 10 MB module
//!   (`relay_test_support::generate::resnet_module_of_size`), drawn with the
//!   whole module loaded: building the graph of one function must not
//!   depend on the size of the rest.
//!
//! The numbers are quoted in the README's benchmark section. When the TVM
//! corpus is absent the resnet152 rows are skipped with a note.

use relay_passes::graph::{diff_graphs, function_graph, render_diff_svg, render_svg, Graph};
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::{
    pipeline_from_text, registry, run_pass, PassContext, PassContextOptions,
};
use support::{median_ms, on_big_stack};

mod support;

/// The `relay` binary allocates with mimalloc; measure with the same.
#[global_allocator]
static ALLOCATOR: relay_allocator::Mimalloc = relay_allocator::Mimalloc;

/// Lowers and type-checks `text` on a thread with a large stack (real
/// models are deep), then runs `pipeline` when one is given.
fn typed_module(name: &str, text: String, pipeline: Option<&str>) -> IRModule {
    let name = name.to_string();
    let pipeline = pipeline.map(str::to_string);
    on_big_stack(move || {
        relay_passes::register_builtin_passes();
        let (module, diagnostics) = parse_and_lower(&name, &text);
        assert!(!diagnostics.has_errors(), "{name} does not parse");
        let ctx = PassContext::new(PassContextOptions::default()).expect("a context");
        let infer = registry::create_by_name("InferType").expect("InferType");
        let module = run_pass(&*infer, module, &ctx).expect("InferType");
        match pipeline {
            Some(p) => {
                let pass = pipeline_from_text(&p).expect("the pipeline parses");
                run_pass(&*pass, module, &ctx).expect("the pipeline runs")
            }
            None => module,
        }
    })
}

fn report(subject: &str, nodes: usize, ms: f64, svg: &str) {
    println!(
        "{subject:<40} {nodes:>6} nodes  {ms:>8.1} ms  SVG {:>8.1} KB",
        svg.len() as f64 / 1024.0
    );
}

/// Draws `name` of `module` (graph + SVG), reporting it as `subject`.
fn draw(subject: &str, module: &IRModule, name: Option<&str>) -> Graph {
    let (ms, (graph, svg)) = median_ms(|| {
        let graph = function_graph(module, name).expect("the function has a graph");
        let svg = render_svg(&graph);
        (graph, svg)
    });
    report(subject, graph.nodes.len(), ms, &svg);
    graph
}

fn resnet152() {
    let path = relay_test_support::tvm::expected_root().join("models/resnet152.relay");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("(resnet152 skipped: {} is absent)", path.display());
        return;
    };
    let pipeline = "SimplifyInference, FoldConstant, FuseOps";
    let module = typed_module("resnet152", text.clone(), None);
    let fused = typed_module("resnet152", text, Some(pipeline));
    let before = draw("resnet152", &module, None);
    let after = draw("resnet152 fused", &fused, None);
    let (ms, svg) = median_ms(|| {
        let diff = diff_graphs(pipeline, before.clone(), after.clone());
        render_diff_svg(&diff)
    });
    report(
        "resnet152 FuseOps diff (diff + SVG)",
        before.nodes.len() + after.nodes.len(),
        ms,
        &svg,
    );
}

fn generated_module() {
    let text = relay_test_support::generate::resnet_module_of_size(10 << 20);
    let megabytes = text.len() as f64 / (1 << 20) as f64;
    let module = typed_module("generated", text, None);
    let functions = module.functions().count();
    // The largest function by node count: each graph is built once to find
    // it, outside the timing.
    let names: Vec<String> = module.functions().map(|(n, _)| n.to_string()).collect();
    let largest = names
        .iter()
        .max_by_key(|n| function_graph(&module, Some(n)).map_or(0, |g| g.nodes.len()))
        .expect("the module has functions");
    draw(
        &format!("generated {megabytes:.1} MB, {functions} fns: @{largest}"),
        &module,
        Some(largest),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    println!("{:<40} {:>12}  {:>11}  {:>11}", "subject", "", "median", "");
    resnet152();
    generated_module();
}
