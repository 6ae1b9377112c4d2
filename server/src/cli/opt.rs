//! `relay opt FILE -p PIPELINE …`: reads a module, type-checks it as TVM's
//! parser does, runs the pipeline under a PassContext built from the flags,
//! and prints the result as `relay print` does.

use super::input::read_text;
use super::lenient::LenientArg;
use super::typed_input::typed_module;
use super::{EXIT_ERRORS, EXIT_USAGE};
use crate::project::{read_pipeline, ExternalCommands, Project};
use crate::render::render;
use relay_passes::diagnostic::Diagnostic;
use relay_passes::interp::check::{CheckMode, CheckOptions, SemanticCheck};
use relay_passes::interp::output_cache::OutputCache;
use relay_passes::ir::IRModule;
use relay_passes::pass_manager::config::{config_type, ConfigValue};
use relay_passes::pass_manager::instruments::{
    ModulePrinter, PassCounts, PassFilter, PassTiming, PrintAfterChange, PrintIr,
};
use relay_passes::pass_manager::target::{check_opt_level, check_target};
use relay_passes::pass_manager::PipelineError;
use relay_passes::pass_manager::{
    pipeline::build_pipeline, run_pass, LogSink, PassContext, PassInstrument,
};
use relay_passes::printer::{print_module, PrintOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct OptArgs {
    /// The module to optimise (`-` reads standard input).
    file: PathBuf,
    #[command(flatten)]
    lenient: LenientArg,
    /// The passes: `InferType, FoldConstant, FuseOps(fuse_opt_level=2)`; a
    /// comma list is a Sequential. Names of relay.toml's pipelines may stand
    /// anywhere a pass may.
    #[arg(short = 'p', long = "pipeline")]
    pipeline: String,
    /// The PassContext's opt_level, 0..=4 [default: relay.toml's
    /// `opt_level`, else 2].
    #[arg(long, allow_negative_numbers = true)]
    opt_level: Option<i64>,
    /// A pass forced on (repeatable).
    #[arg(long = "required-pass", value_name = "PASS")]
    required_pass: Vec<String>,
    /// A pass forced off (repeatable).
    #[arg(long = "disabled-pass", value_name = "PASS")]
    disabled_pass: Vec<String>,
    /// A config entry `KEY=VALUE` (repeatable).
    #[arg(long = "config", value_name = "KEY=VALUE")]
    config: Vec<String>,
    /// Run inside a target scope. Only `llvm` has rules: AlterOpLayout and
    /// Legalize then use TVM's x86 rules (without a target, the generic
    /// ones); no other pass reads the target.
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
    /// Print how long every pass took, nested, and which were skipped
    /// (`--time-passes=json`: as JSON).
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true,
          default_missing_value = "text")]
    time_passes: Option<ReportFormat>,
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
    /// Run the module before and after every pass on N seeded random inputs
    /// (default 3) and stop at the first pass that changes the result;
    /// `=end` (or `=end:N`) compares only before and after the whole
    /// pipeline. The reproducer goes to --reproducer's directory, else to
    /// ./relay-check-semantics.
    #[arg(long, value_name = "N|end|end:N", num_args = 0..=1, require_equals = true,
          default_missing_value = "3")]
    check_semantics: Option<String>,
    /// The first seed of --check-semantics' inputs (seeds SEED..SEED+N).
    #[arg(long, value_name = "SEED", default_value_t = 0)]
    check_seed: u64,
    /// With --check-semantics: keep the outputs of every module run in DIR
    /// and reuse them when the same module (printed text, entry, seeds,
    /// binary) is checked again, as a sweep of passes over one model does.
    /// An entry that does not match or is damaged is computed again; the
    /// report is the same with or without the cache.
    #[arg(long, value_name = "DIR", requires = "check_semantics")]
    semantics_cache: Option<PathBuf>,
    /// With --check-semantics: name the first function whose rewrite by
    /// the failing pass changes the result.
    #[arg(long, requires = "check_semantics")]
    bisect: bool,
    /// Re-run required passes even when what they establish still holds, as TVM does.
    #[arg(long)]
    tvm_exact: bool,
    /// Write the result here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Do not run the commands of relay.toml's external passes (they are
    /// skipped with a warning).
    #[arg(long)]
    no_external: bool,
    /// Write the metadata section (`--show-meta-data=false` leaves it out).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    show_meta_data: bool,
}

/// How a report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
}

/// What the CLI lets relay.toml's external passes do.
pub fn external_commands(no_external: bool) -> ExternalCommands {
    if no_external {
        ExternalCommands::Blocked("--no-external".to_string())
    } else {
        ExternalCommands::Allowed
    }
}

/// A bad flag value, shown as the flag with a caret under the value.
fn flag_error(flag: &str, value: &str, message: &str) -> String {
    let text = format!("{flag} {value}");
    let start = flag.len() + 1;
    PipelineError::new(message, start..text.len().max(start + 1)).render(&text)
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
            let keys: Vec<&str> = relay_passes::pass_manager::config::list_configs()
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

/// Reads `--check-semantics[=N|end|end:N]`.
fn check_options(value: &str, args: &OptArgs) -> Result<CheckOptions, String> {
    let (mode, count) = match value.split_once(':') {
        Some(("end", n)) => (CheckMode::End, n),
        None if value == "end" => (CheckMode::End, "3"),
        None => (CheckMode::EachPass, value),
        Some(_) => {
            return Err(format!(
                "--check-semantics expects N, end or end:N, found `{value}`"
            ))
        }
    };
    let inputs = count
        .parse::<u64>()
        .ok()
        .filter(|n| (1..=1000).contains(n))
        .ok_or_else(|| {
            format!("--check-semantics: `{count}` is not a number of inputs in 1..=1000")
        })?;
    Ok(CheckOptions {
        mode,
        inputs,
        first_seed: args.check_seed,
        reproducer_dir: Some(
            args.reproducer
                .clone()
                .unwrap_or_else(|| PathBuf::from("relay-check-semantics")),
        ),
        bisect: args.bisect,
        log: Some(stderr_sink()),
        output_cache: args
            .semantics_cache
            .as_ref()
            .map(|dir| OutputCache::new(dir, binary_identity())),
        ..CheckOptions::default()
    })
}

/// What identifies the running binary for the semantics cache: its version
/// and commit, and the size and modification time of its file (a rebuild
/// from an uncommitted change keeps the commit but not those).
fn binary_identity() -> String {
    let file = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|meta| {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} bytes, modified {modified}", meta.len())
        })
        .unwrap_or_else(|e| format!("file unknown: {e}"));
    format!("relay {} {file}", super::VERSION)
}

pub fn run(args: &OptArgs) -> i32 {
    let semantic_check = match args
        .check_semantics
        .as_deref()
        .map(|v| check_options(v, args))
    {
        None => None,
        Some(Ok(options)) => Some(Arc::new(SemanticCheck::new(options))),
        Some(Err(message)) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let opt_level = match args.opt_level.map(check_opt_level).transpose() {
        Ok(level) => level,
        Err(message) => {
            eprint!(
                "{}",
                flag_error(
                    "--opt-level",
                    &args.opt_level.unwrap_or_default().to_string(),
                    &message
                )
            );
            return EXIT_USAGE;
        }
    };
    if let Some(target) = &args.target {
        if let Err(message) = check_target(target) {
            eprint!("{}", flag_error("--target", target, &message));
            return EXIT_USAGE;
        }
    }
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
            project.register_passes(&external_commands(args.no_external));
            Some(project)
        }
        Some(Err(message)) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
        None => None,
    };
    let pipeline_text = &args.pipeline;
    let pipeline =
        match read_pipeline(project.as_ref(), pipeline_text).and_then(|p| build_pipeline(&p)) {
            Ok(pass) => pass,
            Err(error) => {
                eprint!("{}", error.render(pipeline_text));
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
    let module = match typed_module(&args.file, &text, args.lenient) {
        Ok(module) => module,
        Err(status) => return status,
    };
    let sources = module.sources.clone();

    let timing = Arc::new(PassTiming::new());
    let mut instruments: Vec<Arc<dyn PassInstrument>> = Vec::new();
    if args.time_passes.is_some() {
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
    if let Some(check) = &semantic_check {
        instruments.push(check.clone());
    }
    let mut options = project
        .as_ref()
        .map(Project::context_options)
        .unwrap_or_default();
    // The flag only when given: relay.toml's opt_level otherwise.
    if let Some(level) = opt_level {
        options.opt_level = level;
    }
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
    match args.time_passes {
        Some(ReportFormat::Text) => eprint!("{}", timing.render()),
        Some(ReportFormat::Json) => eprintln!("{}", timing.render_json()),
        None => {}
    }
    if args.count_passes {
        eprint!("{}", counts.render());
    }
    let warnings: Vec<Diagnostic> = ctx.take_diagnostics().into_iter().collect();
    if !warnings.is_empty() {
        eprint!("{}", render(&warnings, &sources));
    }
    if let Some(check) = &semantic_check {
        eprint!("{}", check.stats().render());
        if let Some(report) = check.report() {
            eprintln!("error: {report}");
            if let Some(dir) = &report.reproducer {
                let dir = dir.display();
                eprintln!(
                    "note: a reproducer was written to {dir} (inputs/ holds the input as .npy): \
                     eval \"relay opt {dir}/before.relay $(cat {dir}/pipeline.txt)\""
                );
            }
            return EXIT_ERRORS;
        }
    }
    let module = match result {
        Ok(module) => module,
        Err(error) => {
            if !error.diagnostics.is_empty() {
                // An external pass's output errors point into its output.
                let sources = error.sources.as_ref().unwrap_or(&sources);
                eprint!("{}", render(&error.diagnostics, sources));
            }
            eprintln!("error: {}", error.message);
            if let Some(dir) = &error.reproducer {
                let dir = dir.display();
                eprintln!(
                    "note: a reproducer was written to {dir}: \
                     eval \"relay opt {dir}/before.relay $(cat {dir}/pipeline.txt)\""
                );
            }
            return EXIT_ERRORS;
        }
    };
    // The result is TVM's `astext()` (the command-line contract), bare
    // `let %x = match …` included; the editor's edits are printed to re-parse.
    let options = PrintOptions {
        show_meta_data: args.show_meta_data,
        show_types: true,
        reparseable: false,
    };
    let out = print_module(&module, &options);
    super::input::write_result(args.output.as_deref(), &out)
}
