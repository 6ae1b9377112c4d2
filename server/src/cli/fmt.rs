//! `relay fmt [--check | --diff] [--width N] [--expr] FILE|DIR|-...`: lays
//! files out in TVM's printed style with the comment-keeping formatter
//! (`relay_syntax::format`), as rustfmt and ruff do:
//!
//! * `relay fmt FILE...` rewrites each file in place (a directory stands for
//!   every `*.relay` file below it) and says how many changed;
//! * `relay fmt -` reads standard input and writes the result to standard
//!   output (a filter, for conform.nvim and friends);
//! * `--check` writes nothing, lists the files that would change and exits 1
//!   if there is any; `--diff` prints what would change as a unified diff,
//!   with the same exit status.
//!
//! The width is `--width`, else `width` under `[format]` in the `relay.toml`
//! found upward from the file (from the current directory for `-`), else 100.
//! A file with syntax errors, or with a construct the formatter does not lay
//! out, is reported with its place and left unchanged (exit status 1); for
//! `-` nothing is written to standard output then.

use super::files::{expand, Input};
use super::lenient::LenientArg;
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::project::Project;
use crate::render::render;
use relay_passes::diagnostic::Diagnostic;
use relay_passes::source::SourceMap;
use relay_syntax::format::{format_with, FormatOptions, DEFAULT_WIDTH};
use relay_syntax::Entry;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  relay fmt model.relay models/     rewrite a file and every *.relay below models/
  relay fmt --check .               list the files that would change (exit 1 if any)
  relay fmt --diff model.relay      show the change as a unified diff (exit 1 if any)
  relay fmt - < in.relay > out.relay   format standard input to standard output

Comments are kept where they are written. The width is --width, else `width` under
[format] in relay.toml (looked for upward from the file), else 100.
--upgrade reads each file leniently and rewrites only what that reading accepted (header,
names, attributes, metadata) so that TVM v0.13 reads it; every comment stays where it is.
A file it cannot rewrite so is left unchanged (error E0114).")]
pub struct FmtArgs {
    /// Read each input as one expression (`tvm.relay.parse_expr`), not a module.
    #[arg(long)]
    expr: bool,
    /// Write nothing; list the files that would change and exit 1 if any would.
    #[arg(long)]
    check: bool,
    /// Write nothing; print a unified diff of what would change and exit 1 if
    /// anything would.
    #[arg(long)]
    diff: bool,
    /// The line width lists are broken at (default: relay.toml's
    /// `[format] width`, else 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    width: Option<u16>,
    #[command(flatten)]
    lenient: LenientArg,
    /// Rewrite each file as clean Relay 0.0.5 text: read it leniently
    /// (old or missing header, dotted names, old attributes, a bare `fn`)
    /// and rewrite what that reading accepted, keeping comments and layout.
    #[arg(long, conflicts_with = "expr")]
    upgrade: bool,
    /// Files, directories (every `*.relay` below them) or `-` for standard
    /// input (the result goes to standard output).
    #[arg(required = true, value_name = "FILE|DIR|-")]
    files: Vec<PathBuf>,
}

/// What happened to one input.
enum Outcome {
    Unchanged,
    Changed,
    Failed,
}

pub fn run(args: &FmtArgs) -> i32 {
    let inputs = match expand(&args.files) {
        Ok(inputs) => inputs,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let mut usage_error = false;
    let (mut changed, mut unchanged, mut failed) = (0usize, 0usize, 0usize);
    for input in &inputs {
        match format_one(args, input) {
            Ok(Outcome::Unchanged) => unchanged += 1,
            Ok(Outcome::Changed) => changed += 1,
            Ok(Outcome::Failed) => failed += 1,
            Err(message) => {
                eprintln!("error: {message}");
                usage_error = true;
            }
        }
    }
    let files: Vec<&Input> = inputs.iter().filter(|i| **i != Input::Stdin).collect();
    if !files.is_empty() && !args.diff {
        let verb = if args.check {
            "would be reformatted"
        } else {
            "reformatted"
        };
        let mut summary = format!(
            "{changed} {} {verb}, {unchanged} {} already formatted",
            plural(changed),
            plural(unchanged)
        );
        if failed > 0 {
            summary.push_str(&format!(
                ", {failed} {} not formatted (errors)",
                plural(failed)
            ));
        }
        eprintln!("{summary}");
    }
    if usage_error {
        EXIT_USAGE
    } else if failed > 0 || (args.check || args.diff) && changed > 0 {
        EXIT_ERRORS
    } else {
        EXIT_OK
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 {
        "file"
    } else {
        "files"
    }
}

fn format_one(args: &FmtArgs, input: &Input) -> Result<Outcome, String> {
    let text = input.read()?;
    let name = input.name();
    let width = match args.width {
        Some(width) => usize::from(width),
        None => project_width(input)?,
    };
    let entry = if args.expr {
        Entry::Expr
    } else {
        Entry::Module
    };
    let formatted = if args.upgrade {
        match relay_passes::lower::upgrade(&name, &text) {
            Ok((upgraded, warnings)) => {
                let warnings: Vec<Diagnostic> = warnings.into_iter().collect();
                if !warnings.is_empty() {
                    let mut sources = SourceMap::new();
                    sources.add(name.clone(), text.as_str());
                    eprint!("{}", render(&warnings, &sources));
                }
                upgraded
            }
            Err(errors) => {
                let errors: Vec<Diagnostic> = errors.into_iter().collect();
                let mut sources = SourceMap::new();
                sources.add(name.clone(), text.as_str());
                eprint!("{}", render(&errors, &sources));
                eprintln!("{name}: not upgraded; the text was left unchanged");
                return Ok(Outcome::Failed);
            }
        }
    } else {
        let parse_options = args.lenient.options(&input.project_start()).parse_options();
        match format_with(&text, entry, &FormatOptions { width }, parse_options) {
            Ok(formatted) => formatted,
            Err(error) => {
                let mut sources = SourceMap::new();
                let file = sources.add(name.clone(), text.as_str());
                let diagnostics: Vec<Diagnostic> = error
                    .errors()
                    .iter()
                    .map(|e| Diagnostic::from_syntax_error(file, e))
                    .collect();
                eprint!("{}", render(&diagnostics, &sources));
                eprintln!("{name}: not formatted; the text was left unchanged");
                return Ok(Outcome::Failed);
            }
        }
    };
    let outcome = if formatted == text {
        Outcome::Unchanged
    } else {
        Outcome::Changed
    };
    let mut stdout = std::io::stdout().lock();
    let written = if args.diff {
        if formatted == text {
            Ok(())
        } else {
            let diff = similar::TextDiff::from_lines(&text, &formatted)
                .unified_diff()
                .context_radius(3)
                .header(&name, &name)
                .to_string();
            stdout.write_all(diff.as_bytes())
        }
    } else if args.check {
        if formatted == text {
            Ok(())
        } else {
            writeln!(stdout, "would reformat {name}")
        }
    } else {
        match input {
            Input::Stdin => stdout.write_all(formatted.as_bytes()),
            Input::File(path) if formatted != text => {
                return std::fs::write(path, &formatted)
                    .map(|()| outcome)
                    .map_err(|e| format!("cannot write {name}: {e}"));
            }
            Input::File(_) => Ok(()),
        }
    };
    written
        .and_then(|()| stdout.flush())
        .map(|()| outcome)
        .map_err(|e| format!("cannot write to standard output: {e}"))
}

/// `[format] width` of the project the input belongs to, or the default.
fn project_width(input: &Input) -> Result<usize, String> {
    let Some(file) = Project::find(&input.project_start()) else {
        return Ok(DEFAULT_WIDTH);
    };
    let project = Project::load(&file)?;
    Ok(project.format_width.unwrap_or(DEFAULT_WIDTH))
}
