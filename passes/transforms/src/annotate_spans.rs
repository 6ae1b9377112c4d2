//! `AnnotateSpans`: gives every node a span in the module's own printed
//! text, as TVM v0.13 does (`src/relay/parser/parser.cc`): the module is
//! printed with its metadata, the text is parsed back under the source name
//! `GeneratedSource` and type-checked, as TVM's parser does. Diagnostics
//! about the result then point into that text, which the module's source
//! map holds, so tools can show it.
//!
//! The text our printer writes always reads back; should it ever not, the
//! pass fails with the parser's diagnostics instead of returning a module
//! that lost code.

use relay_infer::infer_module;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::printer::{print_module, PrintOptions};
use relay_ir::IRModule;
use relay_lower::parse_and_lower;
use relay_pass_manager::registry::PassSpec;

pub use relay_ir::source::GENERATED_SOURCE;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("AnnotateSpans", 0)
        .doc("Print the module and parse it back, so every node has a span in that text")
        .transform(|module, _ctx| annotate_spans(&module))
}

/// Re-reads `module` from its own printed text.
pub fn annotate_spans(module: &IRModule) -> Result<IRModule, Diagnostic> {
    let options = PrintOptions {
        show_meta_data: true,
        show_types: true,
        reparseable: true,
    };
    let text = print_module(module, &options);
    let (reread, diagnostics) = parse_and_lower(GENERATED_SOURCE, &text);
    let (typed, type_diagnostics) = infer_module(&reread);
    if let Some(error) = diagnostics
        .iter()
        .chain(type_diagnostics.iter())
        .find(|d| d.is_error())
    {
        return Err(Diagnostic::pass_failed(format!(
            "AnnotateSpans: the printed module does not read back: {}",
            error.message
        ))
        .with_note("this is a bug in the printer; please report it with the module"));
    }
    Ok(typed)
}
