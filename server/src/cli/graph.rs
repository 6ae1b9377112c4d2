//! `relay graph FILE [--function NAME] [-p PIPELINE [--diff]] [--format
//! svg|dot|json|html] [-o OUT]`: the dataflow graph of a function, drawn by
//! `relay_passes::graph` (the library the language server's `relay/graph`
//! calls too). With a pipeline, the graph after it; with `--diff`, before
//! and after side by side, changes marked, and a summary line on stderr.

use super::input::read_text;
use super::opt::external_commands;
use super::typed_input::typed_module;
use super::{EXIT_ERRORS, EXIT_USAGE};
use crate::project::{read_pipeline, Project};
use crate::render::render;
use relay_passes::diagnostic::Diagnostic;
use relay_passes::graph::{self, diff_graphs, function_graph, Format};
use relay_passes::ir::IRModule;
use relay_passes::pass_manager::pipeline::build_pipeline;
use relay_passes::pass_manager::{run_pass, LogSink, PassContext};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// The module (`-` reads standard input).
    file: PathBuf,
    #[command(flatten)]
    lenient: super::lenient::LenientArg,
    /// The global function to draw, with or without `@` [default: `main`,
    /// else the first].
    #[arg(long, value_name = "NAME")]
    function: Option<String>,
    /// Run this pipeline first (as `relay opt -p` does) and draw the result.
    #[arg(short = 'p', long = "pipeline")]
    pipeline: Option<String>,
    /// Draw the function before and after the pipeline side by side, with
    /// added, removed and rewritten nodes marked; print a summary on stderr.
    #[arg(long, requires = "pipeline")]
    diff: bool,
    /// svg, dot, json or html [default: from the extension of -o, else svg].
    #[arg(long, value_enum)]
    format: Option<GraphFormat>,
    /// Write here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Do not run the commands of relay.toml's external passes.
    #[arg(long)]
    no_external: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    Svg,
    Dot,
    Json,
    Html,
}

impl GraphFormat {
    fn library(self) -> Format {
        match self {
            GraphFormat::Svg => Format::Svg,
            GraphFormat::Dot => Format::Dot,
            GraphFormat::Json => Format::Json,
            GraphFormat::Html => Format::Html,
        }
    }

    /// The format an output file's extension names.
    fn of_path(path: &Path) -> Option<GraphFormat> {
        match path.extension()?.to_str()? {
            "svg" => Some(GraphFormat::Svg),
            "dot" | "gv" => Some(GraphFormat::Dot),
            "json" => Some(GraphFormat::Json),
            "html" | "htm" => Some(GraphFormat::Html),
            _ => None,
        }
    }
}

pub fn run(args: &GraphArgs) -> i32 {
    let text = match read_text(&args.file) {
        Ok(text) => text,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let format = args
        .format
        .or_else(|| args.output.as_deref().and_then(GraphFormat::of_path))
        .unwrap_or(GraphFormat::Svg)
        .library();
    let project = match Project::find(&args.file).map(|path| Project::load(&path)) {
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
    // Typed as TVM's parser types it, so edges carry types.
    let module = match typed_module(&args.file, &text, args.lenient) {
        Ok(module) => module,
        Err(status) => return status,
    };
    let function = args.function.as_deref();
    let before = match function_graph(&module, function) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let out = match &args.pipeline {
        None => graph::render(&before, format),
        Some(pipeline_text) => {
            let after_module = match run_pipeline(project.as_ref(), pipeline_text, module) {
                Ok(m) => m,
                Err(code) => return code,
            };
            // The same function after the pipeline (passes keep names).
            let name = before.function.clone();
            let after = match function_graph(&after_module, Some(&name)) {
                Ok(g) => g,
                Err(e) => {
                    eprintln!("error: after {pipeline_text}: {e}");
                    return EXIT_ERRORS;
                }
            };
            if args.diff {
                let diff = diff_graphs(pipeline_text.trim(), before, after);
                eprintln!("{}", diff.summary());
                eprintln!("{}", diff.stats_line());
                graph::render_diff(&diff, format)
            } else {
                graph::render(&after, format)
            }
        }
    };
    super::input::write_result(args.output.as_deref(), &out)
}

/// Runs the pipeline under relay.toml's context, as `relay opt` does;
/// errors are reported here and given back as the exit status.
fn run_pipeline(project: Option<&Project>, text: &str, module: IRModule) -> Result<IRModule, i32> {
    let sources = module.sources.clone();
    let pass = read_pipeline(project, text)
        .and_then(|p| build_pipeline(&p))
        .map_err(|error| {
            eprint!("{}", error.render(text));
            EXIT_USAGE
        })?;
    let mut options = project.map(Project::context_options).unwrap_or_default();
    let log: LogSink = Arc::new(|line: &str| eprintln!("{line}"));
    options.log = Some(log);
    let ctx = PassContext::new(options).map_err(|message| {
        eprintln!("error: {message}");
        EXIT_USAGE
    })?;
    let result = ctx
        .enter()
        .and_then(|guard| {
            let result = run_pass(&*pass, module, &ctx);
            guard.exit().map(|()| result)
        })
        .and_then(|r| r);
    let warnings: Vec<Diagnostic> = ctx.take_diagnostics().into_iter().collect();
    if !warnings.is_empty() {
        eprint!("{}", render(&warnings, &sources));
    }
    result.map_err(|error| {
        if !error.diagnostics.is_empty() {
            let sources = error.sources.as_ref().unwrap_or(&sources);
            eprint!("{}", render(&error.diagnostics, sources));
        }
        eprintln!("error: {}", error.message);
        EXIT_ERRORS
    })
}
