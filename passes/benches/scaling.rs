//! How every registered pass scales with the size of its input: each pass
//! runs on generated modules of size n, 2n and 4n in several shapes (a long
//! `let` chain, a deep dataflow chain of calls, a wide graph of parallel
//! branches, a chain of convolution blocks, many functions calling one
//! another), and the table gives t(2n)/t(n) and t(4n)/t(n) for each. A pass
//! linear in the size of the module has t(4n)/t(n) ≈ 4; the target is ≤ 5
//! (a quadratic pass shows 16). The last column is the worst ratio over the
//! shapes, and the run fails when any pass misses the target. A pass whose
//! result itself grows faster than its input (marked `*`: PartialEvaluate
//! inlines each global function into its callers, as TVM's does, so n
//! functions calling one another become n(n+1)/2 calls) is judged by its
//! time per node of the result.
//!
//! `cargo bench -p relay-passes --bench scaling` (`-- N` sets the base size,
//! default 1000; `-- N PassName` measures one pass). Each time is the CPU
//! time of the process (all threads; time spent waiting for a core on a
//! shared machine is not counted), the least of several runs that alternate
//! between the sizes, and the module is type-checked before the clock
//! starts, as `relay opt` does.
//!
//! `-- N PassName shape K` is the probe for profilers: it builds only the
//! module of size K·N of that shape and runs the pass on it five times (the
//! runs are the function `probe_runs`: `valgrind --tool=callgrind
//! --toggle-collect='*probe_runs*'` collects them alone), printing each
//! run's CPU time.

use relay_passes::ir::rewrite::post_order_each;
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::registry::{self, PassSpec};
use relay_passes::pass_manager::{
    run_pass, LogSink, Pass, PassContext, PassContextOptions, PipelineValue,
};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

/// The `relay` binary allocates with mimalloc; measure with the same.
#[global_allocator]
static ALLOCATOR: relay_allocator::Mimalloc = relay_allocator::Mimalloc;

/// t(4n)/t(n) above this is superlinear.
const TARGET_RATIO: f64 = 5.0;

/// A result with more than this many times the nodes at 4n than at n grew
/// faster than its input (a linear pass's result grows 4x).
const OUTPUT_BOUND_GROWTH: f64 = 5.0;

/// A generated input shape: a name and a generator of a module of size n.
struct Shape {
    name: &'static str,
    generate: fn(usize) -> String,
}

const HEADER: &str = "#[version = \"0.0.5\"]\n";

/// `let %vK = negative(%vK-1);` n times.
fn let_chain(n: usize) -> String {
    let mut s = String::from(HEADER);
    s.push_str("def @main(%x: Tensor[(2, 3), float32]) {\n  let %v0 = negative(%x);\n");
    for i in 1..n {
        let _ = writeln!(s, "  let %v{i} = negative(%v{});", i - 1);
    }
    let _ = write!(s, "  %v{}\n}}\n", n - 1);
    s
}

/// A chain of element-wise calls, each also using the parameter.
fn dataflow_chain(n: usize) -> String {
    let mut s = String::from(HEADER);
    s.push_str("def @main(%x: Tensor[(2, 3), float32]) {\n  %0 = negative(%x);\n");
    for i in 1..n {
        let op = match i % 3 {
            0 => format!("add(%{}, %x)", i - 1),
            1 => format!("exp(%{})", i - 1),
            _ => format!("multiply(%{}, 1f)", i - 1),
        };
        let _ = writeln!(s, "  %{i} = {op};");
    }
    let _ = write!(s, "  %{}\n}}\n", n - 1);
    s
}

/// n parallel branches (dense, then an element-wise op) of one input,
/// gathered in a tuple.
fn wide_graph(n: usize) -> String {
    let mut s = String::from(HEADER);
    s.push_str("def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32]) {\n");
    for i in 0..n {
        let _ = writeln!(s, "  %{} = nn.dense(%x, %w, units=8);", 2 * i);
        let _ = writeln!(s, "  %{} = nn.relu(%{});", 2 * i + 1, 2 * i);
    }
    let fields: Vec<String> = (0..n).map(|i| format!("%{}", 2 * i + 1)).collect();
    let _ = write!(s, "  ({})\n}}\n", fields.join(", "));
    s
}

/// n blocks of conv2d, bias_add, batch_norm, relu and a scale: what the
/// layout, inference and folding passes rewrite.
fn conv_blocks(n: usize) -> String {
    let mut s = String::from(HEADER);
    s.push_str(
        "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32], \
         %b: Tensor[(4), float32], %g: Tensor[(4), float32], %m: Tensor[(4), float32], \
         %v: Tensor[(4), float32]) {\n",
    );
    let mut prev = "%x".to_string();
    for i in 0..n {
        let k = 6 * i;
        let _ = writeln!(
            s,
            "  %{k} = nn.conv2d({prev}, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);"
        );
        let _ = writeln!(s, "  %{} = nn.bias_add(%{k}, %b);", k + 1);
        let _ = writeln!(
            s,
            "  %{} = nn.batch_norm(%{}, %g, %b, %m, %v);",
            k + 2,
            k + 1
        );
        let _ = writeln!(s, "  %{} = %{}.0;", k + 3, k + 2);
        let _ = writeln!(s, "  %{} = nn.relu(%{});", k + 4, k + 3);
        let _ = writeln!(s, "  %{} = multiply(%{}, 2f);", k + 5, k + 4);
        prev = format!("%{}", k + 5);
    }
    let _ = write!(s, "  {prev}\n}}\n");
    s
}

/// n global functions, each calling the previous one.
fn many_functions(n: usize) -> String {
    let mut s = String::from(HEADER);
    let ty = "Tensor[(2, 3), float32]";
    let _ = writeln!(s, "def @f0(%x: {ty}) -> {ty} {{\n  add(%x, %x)\n}}");
    for i in 1..n {
        let _ = writeln!(
            s,
            "def @f{i}(%x: {ty}) -> {ty} {{\n  @f{}(negative(%x))\n}}",
            i - 1
        );
    }
    let _ = writeln!(s, "def @main(%x: {ty}) -> {ty} {{\n  @f{}(%x)\n}}", n - 1);
    s
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "lets",
        generate: let_chain,
    },
    Shape {
        name: "dataflow",
        generate: dataflow_chain,
    },
    Shape {
        name: "wide",
        generate: wide_graph,
    },
    Shape {
        name: "conv",
        generate: conv_blocks,
    },
    Shape {
        name: "functions",
        generate: many_functions,
    },
];

/// The context `relay opt -O3 --target llvm` runs in, its log discarded
/// (PrintIR would print every module). With `tvm_exact`, InferType runs on
/// a module that is already typed (otherwise it is skipped, and measures
/// nothing).
fn context(tvm_exact: bool) -> Arc<PassContext> {
    let discard: LogSink = Arc::new(|_: &str| {});
    PassContext::new(PassContextOptions {
        opt_level: 3,
        target: Some("llvm".to_string()),
        log: Some(discard),
        tvm_exact,
        ..Default::default()
    })
    .expect("the benchmark's context is valid")
}

/// The pass with arguments that make it do something (EtaExpand does
/// nothing, and refuses to run, without one).
fn create(spec: &PassSpec) -> Arc<dyn Pass> {
    relay_passes::register_builtin_passes();
    let args: Vec<(String, PipelineValue)> = match spec.name.as_str() {
        "EtaExpand" => vec![
            ("expand_global_var".to_string(), PipelineValue::Bool(true)),
            ("expand_constructor".to_string(), PipelineValue::Bool(true)),
        ],
        _ => Vec::new(),
    };
    registry::create(&spec.name, &args).unwrap_or_else(|e| panic!("{}: {}", spec.name, e.message))
}

/// The type-checked module of `text`.
fn typed_module(text: &str, ctx: &PassContext) -> IRModule {
    relay_passes::register_builtin_passes();
    let (module, diagnostics) = parse_and_lower("generated", text);
    assert!(!diagnostics.has_errors(), "a generated input does not read");
    let infer = registry::create_by_name("InferType").expect("InferType exists");
    run_pass(&*infer, module, ctx).expect("a generated input type-checks")
}

/// The CPU time this process (every thread) has used so far.
fn process_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to fill in.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// The number of expression nodes of a module (a node shared within a
/// function counted once).
fn node_count(module: &IRModule) -> usize {
    module
        .functions()
        .map(|(_, f)| {
            let mut nodes = 0;
            post_order_each(f.expr(), |_| nodes += 1);
            nodes
        })
        .sum()
}

/// The CPU time of one run of `pass` on `module` and the size of its
/// result, or `None` when the pass refuses the module. The result is
/// measured and dropped outside the measured time.
fn run_once(pass: &dyn Pass, module: &IRModule, ctx: &PassContext) -> Option<(Duration, usize)> {
    let input = module.clone();
    let start = process_cpu_time();
    let result = run_pass(pass, input, ctx);
    let elapsed = process_cpu_time().saturating_sub(start);
    Some((elapsed, node_count(&result.ok()?)))
}

/// What [`time_sizes`] measures for each size.
struct Measured {
    /// The least CPU time of the runs.
    best: Duration,
    /// The number of nodes of the pass's result.
    output_nodes: usize,
}

/// The fastest of several runs of `pass` on each of `modules` (the sizes
/// n, 2n, 4n), or `None` when the pass refuses one of them.
///
/// The sizes alternate, one run of each per round, rather than all runs
/// of one size and then the next: a burst of load on the shared machine
/// then slows every size alike, and no run starts with its input and the
/// allocator's blocks left in the core's cache by an identical run just
/// before (back to back, a small input stays entirely in the 2 MB L2 cache
/// from one run to the next and a large one cannot, which measured the
/// cache's size rather than the pass). Small inputs get more rounds.
fn time_sizes(pass: &dyn Pass, modules: &[IRModule], ctx: &PassContext) -> Option<Vec<Measured>> {
    let mut measured: Vec<Measured> = modules
        .iter()
        .map(|_| Measured {
            best: Duration::MAX,
            output_nodes: 0,
        })
        .collect();
    let mut spent = Duration::ZERO;
    let mut rounds = 0;
    while rounds < 3 || (spent < Duration::from_millis(600) && rounds < 30) {
        for (module, m) in modules.iter().zip(&mut measured) {
            let (elapsed, output_nodes) = run_once(pass, module, ctx)?;
            m.best = m.best.min(elapsed);
            m.output_nodes = output_nodes;
            spent += elapsed;
        }
        rounds += 1;
    }
    Some(measured)
}

/// The probe mode (see the crate docs): `pass` on the `shape` module of
/// size `n`, five times.
fn probe(pass_name: &str, shape_name: &str, n: usize, ctx: &PassContext) {
    let shape = SHAPES
        .iter()
        .find(|s| s.name == shape_name)
        .unwrap_or_else(|| panic!("no shape {shape_name}"));
    let spec = registry::all()
        .into_iter()
        .find(|spec| spec.name == pass_name)
        .unwrap_or_else(|| panic!("no pass {pass_name}"));
    let pass = create(&spec);
    let module = typed_module(&(shape.generate)(n), ctx);
    probe_runs(
        &*pass,
        &module,
        ctx,
        &format!("{pass_name} {shape_name} n={n}"),
    );
}

/// The measured part of [`probe`], a function of its own so that profilers
/// can collect it alone (`--toggle-collect='*probe_runs*'`).
#[inline(never)]
fn probe_runs(pass: &dyn Pass, module: &IRModule, ctx: &PassContext, label: &str) {
    for _ in 0..5 {
        let start = process_cpu_time();
        let result = run_pass(pass, module.clone(), ctx);
        let elapsed = process_cpu_time().saturating_sub(start);
        drop(result.ok());
        println!("{label}: {:.3} ms", elapsed.as_secs_f64() * 1000.0);
    }
}

fn main() {
    relay_passes::register_builtin_passes();
    // `cargo bench` passes `--bench`; the rest are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let base: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let only = args.get(1).cloned();
    let ctx = context(false);
    let exact_ctx = context(true);
    let _scope = ctx.enter().expect("the context can be entered");
    if let (Some(pass), Some(shape), Some(k)) = (
        args.get(1),
        args.get(2),
        args.get(3).and_then(|k| k.parse::<usize>().ok()),
    ) {
        let ctx = if pass == "InferType" {
            &exact_ctx
        } else {
            &ctx
        };
        probe(pass, shape, k * base, ctx);
        return;
    }

    let sizes = [base, 2 * base, 4 * base];
    eprintln!("generating and type-checking the inputs (n = {base}) …");
    let inputs: Vec<(&str, Vec<IRModule>)> = SHAPES
        .iter()
        .map(|shape| {
            let modules = sizes
                .iter()
                .map(|&n| typed_module(&(shape.generate)(n), &ctx))
                .collect();
            (shape.name, modules)
        })
        .collect();

    let mut specs = registry::all();
    if let Some(only) = &only {
        specs.retain(|spec| &spec.name == only);
    }
    println!(
        "t(2n)/t(n) and t(4n)/t(n), n = {base}; t(n) in ms; `-` where the pass refuses the shape"
    );
    let mut header = format!("{:<28}", "pass");
    for (name, _) in &inputs {
        let _ = write!(header, " {:>22}", name);
    }
    let _ = write!(header, " {:>7}", "worst");
    println!("{header}");
    let mut misses = Vec::new();
    let mut output_bound = Vec::new();
    for spec in &specs {
        let pass = create(spec);
        let mut line = format!("{:<28}", spec.name);
        let mut worst: Option<f64> = None;
        for (shape, modules) in &inputs {
            let ctx = if spec.name == "InferType" {
                &exact_ctx
            } else {
                &ctx
            };
            match time_sizes(&*pass, modules, ctx) {
                Some(t) => {
                    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
                    let (r2, r4) = (ms(t[1].best) / ms(t[0].best), ms(t[2].best) / ms(t[0].best));
                    // A pass whose result grows faster than its input
                    // (PartialEvaluate inlines every call of a global
                    // function, as TVM's does) cannot be faster than its
                    // output: it is judged by time per node written.
                    let growth = t[2].output_nodes as f64 / t[0].output_nodes.max(1) as f64;
                    let judged = if growth > OUTPUT_BOUND_GROWTH {
                        let per_output = r4 / (growth / 4.0);
                        output_bound.push(format!(
                            "{} on {shape}: the result has {:.1}x the nodes at 4n ({} -> {}); \
                             t(4n)/t(n) per result node {per_output:.2}",
                            spec.name, growth, t[0].output_nodes, t[2].output_nodes
                        ));
                        per_output
                    } else {
                        r4
                    };
                    worst = Some(worst.map_or(judged, |w: f64| w.max(judged)));
                    let mark = if growth > OUTPUT_BOUND_GROWTH {
                        "*"
                    } else {
                        " "
                    };
                    let _ = write!(
                        line,
                        " {:>7.2} {:>5.2} {:>6.2}{mark}",
                        ms(t[0].best),
                        r2,
                        r4
                    );
                }
                None => {
                    let _ = write!(line, " {:>22}", "-");
                }
            }
        }
        match worst {
            Some(w) => {
                let _ = write!(line, " {w:>7.2}");
                if w > TARGET_RATIO {
                    misses.push(format!("{} ({w:.2})", spec.name));
                }
            }
            None => {
                let _ = write!(line, " {:>7}", "-");
            }
        }
        println!("{line}");
    }
    for note in &output_bound {
        println!("* {note}");
    }
    if misses.is_empty() {
        println!("every pass: t(4n)/t(n) <= {TARGET_RATIO}");
    } else {
        println!(
            "t(4n)/t(n) > {TARGET_RATIO}: {} (a loaded machine inflates small times: rerun with a larger n)",
            misses.join(", ")
        );
        std::process::exit(1);
    }
}
