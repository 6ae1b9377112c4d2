//! The prologue of the commands that work on a typed module (`relay opt`,
//! `relay run`, `relay graph`): parse and lower the file's text (leniently
//! when asked or when `relay.toml` says so), print what the reading reported
//! — errors, or the warnings of a lenient reading — and type-check the
//! module as TVM's parser does before anything else sees it.

use super::input::display_name;
use super::lenient::LenientArg;
use super::EXIT_ERRORS;
use crate::render::render;
use relay_passes::diagnostic::Diagnostic;
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower_with;
use relay_passes::pass_manager::{registry, run_pass, PassContext, PassContextOptions};
use std::path::Path;

/// `text`, read from `file`, as a type-checked module; or the exit status
/// after its diagnostics were printed to stderr.
pub fn typed_module(file: &Path, text: &str, lenient: LenientArg) -> Result<IRModule, i32> {
    let lower = lenient.options(&super::files::start_of(file));
    let (module, diagnostics) = parse_and_lower_with(&display_name(file), text, lower);
    if !diagnostics.is_empty() {
        // Errors, or what a lenient reading accepted (warnings).
        let all: Vec<Diagnostic> = diagnostics.iter().cloned().collect();
        eprint!("{}", render(&all, &module.sources));
    }
    if diagnostics.has_errors() {
        return Err(EXIT_ERRORS);
    }
    let sources = module.sources.clone();
    let ctx =
        PassContext::new(PassContextOptions::default()).expect("the default context is valid");
    let infer = registry::create_by_name("InferType").expect("InferType is built in");
    run_pass(&*infer, module, &ctx).map_err(|error| {
        eprint!("{}", render(&error.diagnostics, &sources));
        EXIT_ERRORS
    })
}
