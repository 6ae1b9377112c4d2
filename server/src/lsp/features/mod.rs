//! The editor features, one file each. A feature is a function of one
//! [`Analysis`](super::analysis::Analysis) (and the request's byte offsets
//! or ranges) that answers in the project's own plain types: byte ranges
//! into the analysed text, strings, small structs and enums. None of them
//! knows about LSP: [`super::to_proto`] turns their answers into
//! `lsp_types`, the handlers (`lsp/handlers/`) parse the request and call
//! them.
//!
//! Each file tests its feature in process with annotated fixtures (the
//! test-only `fixture` module): the input text carries a `$0` cursor and
//! the expected answer as tags around the ranges it covers.
//!
//! Helpers several features share: [`cursor`] (the token and the `def`
//! under the cursor), [`types`] (the types inference found for names and
//! expressions), [`ops`] (operator documentation and the call around the
//! cursor) and [`markdown`].

use relay_syntax::TextRange;

pub mod apply_pipeline;
pub mod call_hierarchy;
pub mod check_semantics;
pub mod code_actions;
pub mod code_lenses;
pub mod completion;
pub mod cursor;
pub mod diagnostics;
pub mod document_symbols;
pub mod find_pattern;
pub mod folding_ranges;
pub mod formatting;
pub mod goto_definition;
pub mod graph_view;
pub mod highlights;
pub mod hover;
pub mod inlay_hints;
pub mod markdown;
pub mod metadata_links;
pub mod ops;
pub mod pass_output;
pub mod quick_fixes;
pub mod references;
pub mod rename;
pub mod run_function;
pub mod selection_ranges;
pub mod semantic_tokens;
pub mod signature_help;
pub mod types;
pub mod workspace_symbols;

#[cfg(test)]
pub mod fixture;

/// A replacement of a byte range of the document: what rename,
/// formatting, quick fixes and applied pipelines answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub range: TextRange,
    pub text: String,
}
