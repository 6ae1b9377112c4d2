//! `relay diff A B [--expr] [--free-vars-by-name]`: reads two files as
//! `relay print` does (parse + lower, no type inference) and compares them
//! with structural equality up to renaming of bound variables
//! (`relay_passes::ir::equal`). Prints `equal` (exit 0) or the first
//! difference with its place in A and in B (exit 1); inputs with errors get
//! their diagnostics (exit 2).
//!
//! Modules correspond by global names (type definitions, then functions);
//! free variables (only `--expr` inputs can have them) match only when they
//! are the same variable, or with `--free-vars-by-name` when their names are
//! equal, as TVM's `StructuralEqual(map_free_vars=…)` decides.

use super::input::{display_name, is_stdin, read_text};
use super::{EXIT_ERRORS, EXIT_OK, EXIT_USAGE};
use crate::render::render;
use relay_passes::diagnostic::{Code, Diagnostic, Severity};
use relay_passes::ir::equal::{first_difference, module_first_difference, Difference};
use relay_passes::lower::{parse_and_lower_expr_in_with, parse_and_lower_with};
use relay_passes::source::{SourceMap, Span};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// Read both files as one expression each (`tvm.relay.parse_expr`).
    #[arg(long)]
    expr: bool,
    /// Match free variables by name (TVM's `map_free_vars=True`); without
    /// it a free variable equals only itself, so two reads never match.
    #[arg(long)]
    free_vars_by_name: bool,
    #[command(flatten)]
    lenient: super::lenient::LenientArg,
    /// The first file (A; `-` reads standard input).
    a: PathBuf,
    /// The second file (B; `-` reads standard input).
    b: PathBuf,
}

/// Why the comparison could not be made.
enum InputError {
    /// A file cannot be read; the message says why.
    Unreadable(String),
    /// A file has errors: the rendered diagnostics.
    Invalid(String),
}

/// Both inputs read, and the difference between them (with spans into
/// `sources`, which holds both texts).
struct Compared {
    difference: Option<Difference>,
    sources: SourceMap,
}

pub fn run(args: &DiffArgs) -> i32 {
    match compare(args) {
        Ok(Compared {
            difference: None, ..
        }) => {
            println!("equal");
            EXIT_OK
        }
        Ok(Compared {
            difference: Some(difference),
            sources,
        }) => {
            let report = report(&difference, args);
            print!("{}", render(&report, &sources));
            EXIT_ERRORS
        }
        Err(InputError::Unreadable(message)) => {
            eprintln!("error: {message}");
            EXIT_USAGE
        }
        Err(InputError::Invalid(rendered)) => {
            eprint!("{rendered}");
            EXIT_USAGE
        }
    }
}

fn compare(args: &DiffArgs) -> Result<Compared, InputError> {
    if is_stdin(&args.a) && is_stdin(&args.b) {
        return Err(InputError::Unreadable(
            "only one of the two inputs can be `-` (standard input)".to_string(),
        ));
    }
    let text_a = read_text(&args.a).map_err(InputError::Unreadable)?;
    let text_b = read_text(&args.b).map_err(InputError::Unreadable)?;
    let (name_a, name_b) = (display_name(&args.a), display_name(&args.b));
    let lower_a = args.lenient.options(&super::files::start_of(&args.a));
    let lower_b = args.lenient.options(&super::files::start_of(&args.b));
    if args.expr {
        // One source map for both: the spans of each read point into it.
        let mut sources = SourceMap::new();
        let (a, diagnostics_a) =
            parse_and_lower_expr_in_with(&mut sources, &name_a, &text_a, lower_a);
        let (b, diagnostics_b) =
            parse_and_lower_expr_in_with(&mut sources, &name_b, &text_b, lower_b);
        let mut errors: Vec<Diagnostic> = diagnostics_a.iter().cloned().collect();
        errors.extend(diagnostics_b.iter().cloned());
        // What a lenient reading accepted: warnings, never silent.
        let warnings: Vec<Diagnostic> = errors.iter().filter(|d| !d.is_error()).cloned().collect();
        eprint!("{}", render(&warnings, &sources));
        errors.retain(Diagnostic::is_error);
        if !errors.is_empty() {
            return Err(InputError::Invalid(render(&errors, &sources)));
        }
        return Ok(Compared {
            difference: first_difference(&a, &b, args.free_vars_by_name),
            sources,
        });
    }
    let (a, diagnostics_a) = parse_and_lower_with(&name_a, &text_a, lower_a);
    let (b, diagnostics_b) = parse_and_lower_with(&name_b, &text_b, lower_b);
    // What a lenient reading accepted: warnings, never silent.
    for (diagnostics, module) in [(&diagnostics_a, &a), (&diagnostics_b, &b)] {
        let warnings: Vec<Diagnostic> = diagnostics
            .iter()
            .filter(|d| !d.is_error())
            .cloned()
            .collect();
        eprint!("{}", render(&warnings, &module.sources));
    }
    let errors_a: Vec<Diagnostic> = diagnostics_a
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    let errors_b: Vec<Diagnostic> = diagnostics_b
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    if !errors_a.is_empty() || !errors_b.is_empty() {
        // Each module's spans point into its own source map.
        let mut rendered = render(&errors_a, &a.sources);
        rendered.push_str(&render(&errors_b, &b.sources));
        return Err(InputError::Invalid(rendered));
    }
    let difference = module_first_difference(&a, &b, args.free_vars_by_name);
    // Each module read its text as file 0 of a map of its own; render both
    // from one map, with B's spans moved to B's file there.
    let mut sources = SourceMap::new();
    let file_a = sources.add(name_a, text_a);
    let file_b = sources.add(name_b, text_b);
    let difference = difference.map(|d| Difference {
        lhs: d.lhs.map(|span| Span::new(file_a, span.range)),
        rhs: d.rhs.map(|span| Span::new(file_b, span.range)),
        ..d
    });
    Ok(Compared {
        difference,
        sources,
    })
}

/// The difference as diagnostics: what differs, at its place in A, then the
/// same place in B.
fn report(difference: &Difference, args: &DiffArgs) -> Vec<Diagnostic> {
    let mut headline = Diagnostic::new(
        Severity::Error,
        Code::ModulesDiffer,
        difference.reason.clone(),
    );
    if let Some(span) = difference.lhs {
        headline = headline.with_span(span);
    }
    if let Some(global) = &difference.global {
        headline = headline.with_note(format!("in @{global}"));
    }
    if !args.free_vars_by_name && difference.reason.starts_with("free variable") {
        headline = headline.with_help("--free-vars-by-name matches free variables by name");
    }
    let mut out = vec![headline];
    if let Some(span) = difference.rhs {
        out.push(
            Diagnostic::new(
                Severity::Note,
                Code::ModulesDiffer,
                format!("the corresponding place in {}", display_name(&args.b)),
            )
            .with_span(span),
        );
    }
    out
}
