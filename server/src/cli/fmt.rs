//! `relay fmt [--expr] FILE [--check]`: rewrites the file in canonical form
//! (what `relay print` writes, ending with a newline). With `--check`
//! nothing is written and the exit status is 1 if the file would change.
//!
//! The canonical form is a print of the IR: comments and layout are not
//! kept, and no type inference runs, so `/* ty=… */` comments are dropped.

use super::input::read_text;
use super::print::reprint;
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::render;
use relay_passes::printer::PrintOptions;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct FmtArgs {
    /// Read the file as one expression (`tvm.relay.parse_expr`), not a module.
    #[arg(long)]
    expr: bool,
    /// Do not write; exit 1 if the file is not in canonical form.
    #[arg(long)]
    check: bool,
    /// The file to format.
    file: PathBuf,
}

pub fn run(args: &FmtArgs) -> i32 {
    let text = match read_text(&args.file) {
        Ok(text) => text,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let name = args.file.display().to_string();
    let mut formatted = match reprint(&name, &text, args.expr, &PrintOptions::default()) {
        Ok(out) => out,
        Err(failed) => {
            eprint!("{}", render(&failed.diagnostics, &failed.sources));
            return EXIT_ERRORS;
        }
    };
    if !formatted.ends_with('\n') {
        formatted.push('\n');
    }
    if formatted == text {
        return EXIT_OK;
    }
    if args.check {
        eprintln!("{name} is not in canonical form (run `relay fmt {name}`)");
        return EXIT_ERRORS;
    }
    match std::fs::write(&args.file, formatted) {
        Ok(()) => EXIT_OK,
        Err(error) => {
            eprintln!("error: cannot write {name}: {error}");
            EXIT_USAGE
        }
    }
}
