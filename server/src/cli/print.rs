//! `relay print [--expr] [--show-meta-data=false] FILE`: reads a module (or
//! with `--expr` one expression), and prints it as TVM's `astext()` would.
//! No type inference runs, so only types written in the text appear.

use super::input::{display_name, read_text};
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::render;
use relay_passes::diagnostic::Diagnostic;
use relay_passes::lower::{parse_and_lower, parse_and_lower_expr_in};
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
    /// The file to print (`-` reads standard input).
    file: PathBuf,
}

/// Lowering's errors, with the sources they point into.
pub(super) struct Failed {
    pub diagnostics: Vec<Diagnostic>,
    pub sources: SourceMap,
}

/// Reads `text` and prints it in canonical form.
pub(super) fn reprint(
    name: &str,
    text: &str,
    expr: bool,
    options: &PrintOptions,
) -> Result<String, Failed> {
    if expr {
        let mut sources = SourceMap::new();
        let (e, diagnostics) = parse_and_lower_expr_in(&mut sources, name, text);
        if diagnostics.has_errors() {
            return Err(Failed {
                diagnostics: diagnostics.into_vec(),
                sources,
            });
        }
        Ok(print_expr(&e, options))
    } else {
        let (m, diagnostics) = parse_and_lower(name, text);
        if diagnostics.has_errors() {
            return Err(Failed {
                diagnostics: diagnostics.into_vec(),
                sources: m.sources.clone(),
            });
        }
        Ok(print_module(&m, options))
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
    match reprint(&display_name(&args.file), &text, args.expr, &options) {
        Ok(out) => {
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
