//! `relay print [--expr] [--show-meta-data=false] FILE`: reads a module (or
//! with `--expr` one expression), and prints it as TVM's `astext()` would.
//! No type inference runs, so only types written in the text appear.

use super::input::{display_name, read_text};
use super::lenient::LenientArg;
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::render;
use relay_passes::diagnostic::Diagnostic;
use relay_passes::lower::{parse_and_lower_expr_in_with, parse_and_lower_with, LowerOptions};
use relay_passes::printer::{print_expr, print_module, PrintOptions};
use relay_passes::source::SourceMap;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct PrintArgs {
    /// Read the file as one expression (`tvm.relay.parse_expr`), not a module.
    #[arg(long)]
    expr: bool,
    /// Write the `#[metadata]` section (`--show-meta-data=false` writes
    /// TVM's comment saying it was left out instead).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    show_meta_data: bool,
    #[command(flatten)]
    lenient: LenientArg,
    /// The file to print (`-` reads standard input).
    file: PathBuf,
}

/// Lowering's errors (or, for a text that printed, its warnings), with the
/// sources they point into.
pub(super) struct Failed {
    pub diagnostics: Vec<Diagnostic>,
    pub sources: SourceMap,
}

/// Reads `text` (with `lower`) and prints it in canonical form; the
/// warnings of the reading come with the text.
pub(super) fn reprint(
    name: &str,
    text: &str,
    expr: bool,
    lower: LowerOptions,
    options: &PrintOptions,
) -> Result<(String, Failed), Failed> {
    if expr {
        let mut sources = SourceMap::new();
        let (e, diagnostics) = parse_and_lower_expr_in_with(&mut sources, name, text, lower);
        let failed = Failed {
            diagnostics: diagnostics.into_vec(),
            sources,
        };
        if failed.diagnostics.iter().any(Diagnostic::is_error) {
            return Err(failed);
        }
        Ok((print_expr(&e, options), failed))
    } else {
        let (m, diagnostics) = parse_and_lower_with(name, text, lower);
        let failed = Failed {
            diagnostics: diagnostics.into_vec(),
            sources: m.sources.clone(),
        };
        if failed.diagnostics.iter().any(Diagnostic::is_error) {
            return Err(failed);
        }
        Ok((print_module(&m, options), failed))
    }
}

pub fn run(args: &PrintArgs) -> i32 {
    let text = match read_text(&args.file) {
        Ok(text) => text,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    // TVM's `astext()`, as `relay opt` prints it.
    let options = PrintOptions {
        show_meta_data: args.show_meta_data,
        reparseable: false,
        ..PrintOptions::default()
    };
    let lower = args.lenient.options(&super::files::start_of(&args.file));
    match reprint(&display_name(&args.file), &text, args.expr, lower, &options) {
        Ok((out, warnings)) => {
            if !warnings.diagnostics.is_empty() {
                eprint!("{}", render(&warnings.diagnostics, &warnings.sources));
            }
            if out.ends_with('\n') {
                print!("{out}");
            } else {
                println!("{out}");
            }
            EXIT_OK
        }
        Err(failed) => {
            eprint!("{}", render(&failed.diagnostics, &failed.sources));
            EXIT_ERRORS
        }
    }
}
