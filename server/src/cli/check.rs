//! `relay check [--expr] FILE|DIR|-...`: reports every error in the files (a
//! directory stands for every `*.relay` below it, `-` for standard input) and
//! exits 1 if there is any.
//!
//! Each file is parsed and lowered; then every definition that can be
//! checked is type-checked, as TVM's parser runs `InferType`: a definition
//! with a syntax or name error is skipped, the others still are (see
//! [`CheckScope`]; `--expr` reads one expression, which `parse_expr` does
//! not type-check). Diagnostics are printed sorted by position, at most
//! `--max-errors` per file, as text (`--color`) or JSON Lines
//! (`--format json`). Several files are checked in parallel (on every core;
//! `RAYON_NUM_THREADS` limits it) and reported in the order given.

use super::files::expand;
use super::lenient::LenientArg;
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::json::render_json;
use crate::render::{more_errors_line, render_styled, ColorChoice};
use rayon::prelude::*;
use relay_passes::checkable::CheckScope;
use relay_passes::diagnostic::{sort_by_position, Code, Diagnostic};
use relay_passes::infer::infer_module;
use relay_passes::lower::{lower_expr_with, lower_parse, LowerOptions};
use relay_passes::source::SourceMap;
use relay_syntax::{parse_with, Entry};
use std::path::PathBuf;

/// How diagnostics are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Human-readable, with source snippets (on standard error).
    #[default]
    Text,
    /// One JSON object per diagnostic and line (on standard output).
    Json,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Read each file as one expression (`tvm.relay.parse_expr`), not a module.
    #[arg(long)]
    expr: bool,
    /// Also run this pipeline (a name from relay.toml, or pipeline text) on
    /// each module that checks clean; what it reports counts as errors.
    #[arg(long, value_name = "NAME")]
    pipeline: Option<String>,
    /// How to print diagnostics: `text` (standard error) or `json` (JSON
    /// Lines on standard output; see the README).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Colour the text output: `auto` (on a terminal, unless NO_COLOR is
    /// set), `always` or `never`.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Show at most this many diagnostics per file (then say how many more
    /// there are); 0 shows all.
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_errors: usize,
    /// Do not run the commands of relay.toml's external passes (they are
    /// skipped with a warning).
    #[arg(long)]
    no_external: bool,
    #[command(flatten)]
    lenient: LenientArg,
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
    let style = args.color.for_stderr();
    let mut has_errors = false;
    let mut unreadable = false;
    let inputs = match expand(&args.files) {
        Ok(inputs) => inputs,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    // Files are checked in parallel (each with its own source map), and
    // reported in the order they were named, so the output does not depend
    // on which finishes first.
    let pipeline = args.pipeline.as_deref().map(|p| (p, args.no_external));
    let check_input =
        |input: &super::files::Input| -> Result<(SourceMap, Vec<Diagnostic>), String> {
            let text = input.read()?;
            let mut sources = SourceMap::new();
            let file = sources.add(input.name(), text.as_str());
            let project_start = input.project_start();
            let mut found = check_text(
                &sources,
                file,
                &text,
                (entry, args.lenient.options(&project_start)),
                &project_start,
                pipeline,
            );
            sort_by_position(&mut found);
            Ok((sources, found))
        };
    let checked: Vec<_> = if inputs.len() > 1 {
        inputs.par_iter().map(check_input).collect()
    } else {
        inputs.iter().map(check_input).collect()
    };
    for (input, result) in inputs.iter().zip(checked) {
        let (sources, found) = match result {
            Ok(checked) => checked,
            Err(message) => {
                eprintln!("error: {message}");
                unreadable = true;
                continue;
            }
        };
        has_errors |= found.iter().any(Diagnostic::is_error);
        let (shown, left_out) = limit(found, args.max_errors);
        match args.format {
            Format::Text => eprint!("{}", render_styled(&shown, &sources, style)),
            Format::Json => print!("{}", render_json(&shown, &sources)),
        }
        if !left_out.is_empty() {
            let errors = left_out.iter().filter(|d| d.is_error()).count();
            eprint!(
                "{}: {}",
                input.name(),
                more_errors_line(errors, left_out.len() - errors)
            );
        }
    }
    if unreadable {
        EXIT_USAGE
    } else if has_errors {
        EXIT_ERRORS
    } else {
        EXIT_OK
    }
}

/// The diagnostics of one file's text (registered in the source map as
/// `file`), read with `entry` and `options`: syntax, names, the types of
/// the definitions that can be checked, and `pipeline`'s when everything
/// else is clean.
fn check_text(
    sources: &SourceMap,
    file: relay_passes::source::FileId,
    text: &str,
    (entry, options): (Entry, LowerOptions),
    project_start: &std::path::Path,
    pipeline: Option<(&str, bool)>,
) -> Vec<Diagnostic> {
    let parse = parse_with(text, entry, options.parse_options());
    let mut found: Vec<Diagnostic> = Diagnostic::of_parse(file, &parse);
    if entry == Entry::Expr {
        if let Some(root) = parse.expr_file() {
            let (_, lowered) = lower_expr_with(file, &root, options);
            found.extend(lowered);
        }
        return found;
    }
    let Some(mut lowered) = lower_parse(file, &parse, options) else {
        return found;
    };
    found.extend(lowered.diagnostics);
    // A module file: the definitions that parse and lower cleanly. A file
    // read (leniently) as one expression: all of it, if it is clean.
    let scope = parse
        .source_file()
        .map(|root| CheckScope::new(file, &root, &found));
    match &scope {
        Some(scope) if !scope.checks_anything() => return found,
        None if found.iter().any(Diagnostic::is_error) => return found,
        _ => {}
    }
    // The module's spans point into `sources`; type errors about an
    // attribute look its value up there.
    lowered.module.sources = sources.clone();
    let (module, typed) = infer_module(&lowered.module);
    match &scope {
        Some(scope) => found.extend(scope.filter(typed)),
        None => found.extend(typed),
    }
    if let (Some((pipeline, no_external)), false) =
        (pipeline, found.iter().any(Diagnostic::is_error))
    {
        found.extend(run_pipeline(project_start, module, pipeline, no_external));
    }
    found
}

/// The first `max` diagnostics (all when `max` is 0), and the rest.
fn limit(mut found: Vec<Diagnostic>, max: usize) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    if max == 0 || found.len() <= max {
        return (found, Vec::new());
    }
    let rest = found.split_off(max);
    (found, rest)
}

/// Runs `--pipeline` on a checked module under the project's PassContext:
/// its diagnostics, and its failure as an error.
fn run_pipeline(
    path: &std::path::Path,
    module: relay_passes::ir::IRModule,
    pipeline: &str,
    no_external: bool,
) -> Vec<Diagnostic> {
    use crate::project::{read_pipeline, Project};
    use relay_passes::pass_manager::pipeline::build_pipeline;
    use relay_passes::pass_manager::{run_pass, PassContext};
    let project = match Project::find(path).map(|p| Project::load(&p)).transpose() {
        Ok(project) => project,
        Err(message) => return vec![Diagnostic::error(Code::ProjectConfig, message)],
    };
    if let Some(project) = &project {
        project.register_passes(&super::opt::external_commands(no_external));
    }
    let pass = match read_pipeline(project.as_ref(), pipeline).and_then(|p| build_pipeline(&p)) {
        Ok(pass) => pass,
        Err(error) => {
            return vec![Diagnostic::error(
                Code::InvalidPipeline,
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
        Err(message) => return vec![Diagnostic::error(Code::PassFailed, message)],
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
            Code::PassFailed,
            format!("pipeline `{pipeline}` failed: {}", error.message),
        ));
    }
    out
}
