//! `relay fmt --upgrade` and the editor's "Upgrade to Relay 0.0.5": a text
//! read leniently, written back as TVM v0.13 prints the module it means —
//! a version header, names TVM's parser reads, v0.13's attributes, a module
//! rather than a bare expression. One function, called by the CLI and the
//! language server.

use crate::{parse_and_lower_with, LowerOptions};
use relay_ir::diagnostic::Diagnostics;
use relay_ir::printer::{print_module, PrintOptions};

/// The upgraded text and the warnings of the lenient reading (what was
/// changed; constants whose value the text did not have stay references),
/// or the errors that stop the reading.
pub fn upgrade(name: &str, text: &str) -> Result<(String, Diagnostics), Diagnostics> {
    let (module, diagnostics) = parse_and_lower_with(name, text, LowerOptions::LENIENT);
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    // Reparseable: names are written so that TVM's parser reads them.
    let printed = print_module(&module, &PrintOptions::default());
    Ok((printed, diagnostics))
}
