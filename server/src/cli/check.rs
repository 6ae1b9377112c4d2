//! `relay check [--expr] FILE|DIR|-...`: reports every error in the files (a
//! directory stands for every `*.relay` below it, `-` for standard input) and
//! exits 1 if there is any.
//!
//! Each file is parsed and lowered; a module that lowers without errors is
//! then type-checked, as TVM's parser runs `InferType` (`--expr` reads one
//! expression, which `parse_expr` does not type-check).

use super::files::expand;
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::render;
use relay_passes::diagnostic::{Diagnostic, Diagnostics};
use relay_passes::infer::infer_module;
use relay_passes::lower::{lower_expr, lower_module};
use relay_passes::source::SourceMap;
use relay_syntax::{parse, Entry};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Read each file as one expression (`tvm.relay.parse_expr`), not a module.
    #[arg(long)]
    expr: bool,
    /// Also run this pipeline (a name from relay.toml, or pipeline text) on
    /// each module that checks clean; what it reports counts as errors.
    #[arg(long, value_name = "NAME")]
    pipeline: Option<String>,
    /// Do not run the commands of relay.toml's external passes (they are
    /// skipped with a warning).
    #[arg(long)]
    no_external: bool,
    /// Files, directories (every `*.relay` below them) or `-` for standard input.
    #[arg(required = true, value_name = "FILE|DIR|-")]
    files: Vec<PathBuf>,
}

pub fn run(args: &CheckArgs) -> i32 {
    let entry = if args.expr {
        Entry::Expr
    } else {
        Entry::Module
    };
    let mut sources = SourceMap::new();
    let mut diagnostics = Diagnostics::new();
    let mut unreadable = false;
    let inputs = match expand(&args.files) {
        Ok(inputs) => inputs,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    for input in &inputs {
        let text = match input.read() {
            Ok(text) => text,
            Err(message) => {
                eprintln!("error: {message}");
                unreadable = true;
                continue;
            }
        };
        let file = sources.add(input.name(), text.as_str());
        let parse = parse(&text, entry);
        let mut found: Diagnostics = parse
            .errors()
            .iter()
            .map(|e| Diagnostic::from_syntax_error(file, e))
            .collect();
        if args.expr {
            if let Some(root) = parse.expr_file() {
                let (_, lowered) = lower_expr(file, &root);
                found.extend(lowered);
            }
        } else if let Some(root) = parse.source_file() {
            let lowered = lower_module(file, &root);
            found.extend(lowered.diagnostics);
            if !found.has_errors() {
                let (module, typed) = infer_module(&lowered.module);
                found.extend(typed);
                if let (Some(pipeline), false) = (&args.pipeline, found.has_errors()) {
                    found.extend(run_pipeline(
                        &input.project_start(),
                        module,
                        pipeline,
                        args.no_external,
                    ));
                }
            }
        }
        diagnostics.extend(found);
    }
    let all: Vec<Diagnostic> = diagnostics.iter().cloned().collect();
    eprint!("{}", render(&all, &sources));
    if unreadable {
        EXIT_USAGE
    } else if diagnostics.has_errors() {
        EXIT_ERRORS
    } else {
        EXIT_OK
    }
}

/// Runs `--pipeline` on a checked module under the project's PassContext:
/// its diagnostics, and its failure as an error.
fn run_pipeline(
    path: &std::path::Path,
    module: relay_passes::ir::IRModule,
    pipeline: &str,
    no_external: bool,
) -> Vec<Diagnostic> {
    use relay_passes::diagnostic::Layer;
    use relay_passes::project::{read_pipeline, Project};
    use relay_passes::transform::pipeline::build_pipeline;
    use relay_passes::transform::{run_pass, PassContext};
    let project = match Project::find(path).map(|p| Project::load(&p)).transpose() {
        Ok(project) => project,
        Err(message) => return vec![Diagnostic::error(Layer::Pass, message)],
    };
    if let Some(project) = &project {
        project.register_passes(&super::opt::external_commands(no_external));
    }
    let pass = match read_pipeline(project.as_ref(), pipeline).and_then(|p| build_pipeline(&p)) {
        Ok(pass) => pass,
        Err(error) => {
            return vec![Diagnostic::error(
                Layer::Pass,
                error.render(pipeline).trim_end().to_string(),
            )]
        }
    };
    let options = project
        .as_ref()
        .map(Project::context_options)
        .unwrap_or_default();
    let ctx = match PassContext::new(options) {
        Ok(ctx) => ctx,
        Err(message) => return vec![Diagnostic::error(Layer::Pass, message)],
    };
    let result = ctx.enter().and_then(|guard| {
        let result = run_pass(&*pass, module, &ctx);
        guard.exit().map(|()| result)
    });
    let mut out: Vec<Diagnostic> = ctx.take_diagnostics().into_iter().collect();
    if let Err(error) = result.and_then(|r| r) {
        match &error.sources {
            // Spans into a text this report does not show (an external
            // pass's output): say where in words.
            Some(sources) => out.extend(error.diagnostics.iter().map(|d| d.detached(sources))),
            None => out.extend(error.diagnostics.iter().cloned()),
        }
        out.push(Diagnostic::error(
            Layer::Pass,
            format!("pipeline `{pipeline}` failed: {}", error.message),
        ));
    }
    out
}
