//! `relay check [--expr] FILE...`: reports every error in the files and exits
//! 1 if there is any.

use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::render;
use relay_passes::diagnostic::{Diagnostic, Diagnostics};
use relay_passes::source::SourceMap;
use relay_syntax::{parse, Entry};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Read each file as one expression (`tvm.relay.parse_expr`), not a module.
    #[arg(long)]
    expr: bool,
    /// The files to check.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn run(args: &CheckArgs) -> i32 {
    let entry = if args.expr { Entry::Expr } else { Entry::Module };
    let mut sources = SourceMap::new();
    let mut diagnostics = Diagnostics::new();
    let mut unreadable = false;
    for path in &args.files {
        let text = match std::fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(error) => {
                    let valid = error.utf8_error().valid_up_to();
                    eprintln!(
                        "error: {}: the file is not valid UTF-8 (first bad byte at offset {valid})",
                        path.display()
                    );
                    unreadable = true;
                    continue;
                }
            },
            Err(error) => {
                eprintln!("error: cannot read {}: {error}", path.display());
                unreadable = true;
                continue;
            }
        };
        let file = sources.add(path.display().to_string(), text.as_str());
        let parse = parse(&text, entry);
        diagnostics.extend(
            parse
                .errors()
                .iter()
                .map(|e| Diagnostic::from_syntax_error(file, e)),
        );
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
