//! `relay opt FILE -p PIPELINE …`: reads a module, type-checks it as TVM's
//! parser does, runs the pipeline under a PassContext built from the flags,
//! and prints the result as `relay print` does.

use super::input::read_text;
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::render;
use relay_passes::diagnostic::Diagnostic;
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::printer::{print_module, PrintOptions};
use relay_passes::project::Project;
use relay_passes::transform::config::{config_type, ConfigValue};
use relay_passes::transform::instruments::{
    ModulePrinter, PassCounts, PassFilter, PassTiming, PrintAfterChange, PrintIr,
};
use relay_passes::transform::{
    parse_pipeline, pipeline::build_pipeline, registry, run_pass, LogSink, PassContext,
    PassContextOptions, PassInstrument,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct OptArgs {
    /// The module to optimise.
    file: PathBuf,
    /// The passes: `InferType, FoldConstant, FuseOps(fuse_opt_level=2)`; a
    /// comma list is a Sequential. The name of a pipeline in relay.toml works too.
    #[arg(short = 'p', long = "pipeline")]
    pipeline: String,
    /// The PassContext's opt_level.
    #[arg(long, default_value_t = 2)]
    opt_level: u32,
    /// A pass forced on (repeatable).
    #[arg(long = "required-pass", value_name = "PASS")]
    required_pass: Vec<String>,
    /// A pass forced off (repeatable).
    #[arg(long = "disabled-pass", value_name = "PASS")]
    disabled_pass: Vec<String>,
    /// A config entry `KEY=VALUE` (repeatable).
    #[arg(long = "config", value_name = "KEY=VALUE")]
    config: Vec<String>,
    /// Run inside a target scope (`llvm`).
    #[arg(long)]
    target: Option<String>,
    /// Print the IR before this pass (repeatable).
    #[arg(long = "print-ir-before", value_name = "PASS")]
    print_ir_before: Vec<String>,
    /// Print the IR after this pass (repeatable).
    #[arg(long = "print-ir-after", value_name = "PASS")]
    print_ir_after: Vec<String>,
    /// Print the IR after every pass.
    #[arg(long)]
    print_ir_after_all: bool,
    /// After every pass that changes the module, print a unified diff.
    #[arg(long)]
    print_ir_after_change: bool,
    /// Print how long every pass took, nested.
    #[arg(long)]
    time_passes: bool,
    /// Say for every pass why it ran or was skipped.
    #[arg(long)]
    explain: bool,
    /// Print how many times each pass ran and was skipped (InferType runs
    /// fewer times than with --tvm-exact when the module stays typed).
    #[arg(long)]
    count_passes: bool,
    /// When a pass fails, write the module before it and the failing
    /// one-pass pipeline into this directory.
    #[arg(long, value_name = "DIR")]
    reproducer: Option<PathBuf>,
    /// Re-run required passes even when what they establish still holds, as TVM does.
    #[arg(long)]
    tvm_exact: bool,
    /// Write the result here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write the metadata section (`--show-meta-data=false` leaves it out).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    show_meta_data: bool,
}

fn stderr_sink() -> LogSink {
    Arc::new(|text: &str| eprintln!("{text}"))
}

fn printer() -> ModulePrinter {
    Arc::new(|m: &IRModule| print_module(m, &PrintOptions::default()))
}

/// Reads `KEY=VALUE` flags with the types the keys are registered with.
fn read_config(entries: &[String]) -> Result<BTreeMap<String, ConfigValue>, String> {
    let mut config = BTreeMap::new();
    for entry in entries {
        let (key, value) = entry
            .split_once('=')
            .ok_or_else(|| format!("--config expects KEY=VALUE, found `{entry}`"))?;
        let ty = config_type(key).ok_or_else(|| {
            let keys: Vec<&str> = relay_passes::transform::config::list_configs()
                .into_iter()
                .map(|(k, _)| k)
                .collect();
            format!(
                "Invalid config option '{key}' candidates are: {}",
                keys.join(", ")
            )
        })?;
        let value =
            ConfigValue::parse_for(value, ty).map_err(|e| format!("--config {key}: {e}"))?;
        config.insert(key.to_string(), value);
    }
    Ok(config)
}

pub fn run(args: &OptArgs) -> i32 {
    let text = match read_text(&args.file) {
        Ok(text) => text,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let project = Project::find(&args.file).map(|path| Project::load(&path));
    let project = match project {
        Some(Ok(project)) => {
            project.register_passes();
            Some(project)
        }
        Some(Err(message)) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
        None => None,
    };
    let pipeline_text = project
        .as_ref()
        .and_then(|p| p.pipelines.get(&args.pipeline))
        .filter(|_| registry::lookup(&args.pipeline).is_none())
        .cloned()
        .unwrap_or_else(|| args.pipeline.clone());
    let pipeline = match parse_pipeline(&pipeline_text).and_then(|p| build_pipeline(&p)) {
        Ok(pass) => pass,
        Err(error) => {
            eprint!("{}", error.render(&pipeline_text));
            return EXIT_USAGE;
        }
    };
    let config = match read_config(&args.config) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };

    // Parse, lower and type-check, as TVM's parser does.
    let name = args.file.display().to_string();
    let (module, diagnostics) = parse_and_lower(&name, &text);
    if diagnostics.has_errors() {
        let all: Vec<Diagnostic> = diagnostics.into_iter().collect();
        eprint!("{}", render(&all, &module.sources));
        return EXIT_ERRORS;
    }
    let sources = module.sources.clone();
    let parse_ctx =
        PassContext::new(PassContextOptions::default()).expect("the default context is valid");
    let infer = registry::create_by_name("InferType").expect("InferType is built in");
    let module = match run_pass(&*infer, module, &parse_ctx) {
        Ok(module) => module,
        Err(error) => {
            eprint!("{}", render(&error.diagnostics, &sources));
            return EXIT_ERRORS;
        }
    };

    let timing = Arc::new(PassTiming::new());
    let mut instruments: Vec<Arc<dyn PassInstrument>> = Vec::new();
    if args.time_passes {
        instruments.push(timing.clone());
    }
    let counts = Arc::new(PassCounts::new());
    if args.count_passes {
        instruments.push(counts.clone());
    }
    if args.print_ir_after_all
        || !args.print_ir_after.is_empty()
        || !args.print_ir_before.is_empty()
    {
        let after = if args.print_ir_after_all {
            PassFilter::All
        } else {
            PassFilter::Named(args.print_ir_after.clone())
        };
        instruments.push(Arc::new(PrintIr::new(
            PassFilter::Named(args.print_ir_before.clone()),
            after,
            printer(),
            stderr_sink(),
        )));
    }
    if args.print_ir_after_change {
        instruments.push(Arc::new(PrintAfterChange::new(printer(), stderr_sink())));
    }
    let mut options = project
        .as_ref()
        .map(Project::context_options)
        .unwrap_or_default();
    options.opt_level = args.opt_level;
    options
        .required_pass
        .extend(args.required_pass.iter().cloned());
    options
        .disabled_pass
        .extend(args.disabled_pass.iter().cloned());
    options.config.extend(config);
    options.instruments = instruments;
    options.target = args.target.clone();
    options.tvm_exact = args.tvm_exact;
    options.reproducer_dir = args.reproducer.clone();
    options.log = Some(stderr_sink());
    let ctx = match PassContext::new(options) {
        Ok(ctx) => ctx,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let result = ctx
        .enter()
        .and_then(|guard| {
            let result = run_pass(&*pipeline, module, &ctx);
            guard.exit().map(|()| result)
        })
        .and_then(|r| r);
    if args.explain {
        for e in ctx.explanations() {
            eprintln!("{}{}: {}", "  ".repeat(e.depth), e.pass, e.reason);
        }
    }
    if args.time_passes {
        eprint!("{}", timing.render());
    }
    if args.count_passes {
        eprint!("{}", counts.render());
    }
    let warnings: Vec<Diagnostic> = ctx.take_diagnostics().into_iter().collect();
    if !warnings.is_empty() {
        eprint!("{}", render(&warnings, &sources));
    }
    let module = match result {
        Ok(module) => module,
        Err(error) => {
            if !error.diagnostics.is_empty() {
                eprint!("{}", render(&error.diagnostics, &sources));
            }
            eprintln!("error: {}", error.message);
            if let Some(dir) = &error.reproducer {
                eprintln!(
                    "note: a reproducer was written to {}: relay opt {}/before.relay -p \"$(cat {}/pipeline.txt)\"",
                    dir.display(),
                    dir.display(),
                    dir.display()
                );
            }
            return EXIT_ERRORS;
        }
    };
    let options = PrintOptions {
        show_meta_data: args.show_meta_data,
        show_types: true,
    };
    let out = print_module(&module, &options);
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, out) {
                eprintln!("error: cannot write {}: {e}", path.display());
                return EXIT_USAGE;
            }
        }
        None => print!("{out}"),
    }
    EXIT_OK
}
