//! How every registered pass scales with the size of its input: each pass
//! runs on generated modules of size n, 2n and 4n in several shapes (a long
//! `let` chain, a deep dataflow chain of calls, a wide graph of parallel
//! branches, a chain of convolution blocks, many functions calling one
//! another), and the table gives t(2n)/t(n) and t(4n)/t(n) for each. A pass
//! linear in the size of the module has t(4n)/t(n) ≈ 4; the target is ≤ 5
//! (a quadratic pass shows 16). The last column is the worst ratio over the
//! shapes, and the run fails when any pass misses the target.
//!
//! `cargo bench -p relay-passes --bench scaling` (`-- N` sets the base size,
//! default 1000; `-- N PassName` measures one pass). Each time is the CPU
//! time of the process (all threads; time spent waiting for a core on a
//! shared machine is not counted), the least of several runs, and the
//! module is type-checked before the clock starts, as `relay opt` does.

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

/// The fastest of several runs of `pass` on `module`, or `None` when the
/// pass refuses the module. Small inputs get more runs.
fn time_pass(pass: &dyn Pass, module: &IRModule, ctx: &PassContext) -> Option<Duration> {
    let mut best = Duration::MAX;
    let mut spent = Duration::ZERO;
    let mut runs = 0;
    while runs < 3 || (spent < Duration::from_millis(300) && runs < 50) {
        let input = module.clone();
        let start = process_cpu_time();
        let result = run_pass(pass, input, ctx);
        let elapsed = process_cpu_time().saturating_sub(start);
        // The result is dropped outside the measured time.
        result.ok()?;
        best = best.min(elapsed);
        spent += elapsed;
        runs += 1;
    }
    Some(best)
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
        let _ = write!(header, " {:>21}", name);
    }
    let _ = write!(header, " {:>7}", "worst");
    println!("{header}");
    let mut misses = Vec::new();
    for spec in &specs {
        let pass = create(spec);
        let mut line = format!("{:<28}", spec.name);
        let mut worst: Option<f64> = None;
        for (_, modules) in &inputs {
            let times: Option<Vec<Duration>> = modules
                .iter()
                .map(|m| {
                    let ctx = if spec.name == "InferType" {
                        &exact_ctx
                    } else {
                        &ctx
                    };
                    time_pass(&*pass, m, ctx)
                })
                .collect();
            match times {
                Some(t) => {
                    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
                    let (r2, r4) = (ms(t[1]) / ms(t[0]), ms(t[2]) / ms(t[0]));
                    worst = Some(worst.map_or(r4, |w: f64| w.max(r4)));
                    let _ = write!(line, " {:>7.2} {:>5.2} {:>6.2}", ms(t[0]), r2, r4);
                }
                None => {
                    let _ = write!(line, " {:>21}", "-");
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
