//! Code lenses: lines of actions above the definitions. Each provider is
//! a function in its own file listed in `PROVIDERS`; adding a lens is a
//! new file and one line there.

mod graph;
mod run;

pub use run::RUN_FUNCTION;

use crate::lsp::analysis::Analysis;
use relay_syntax::TextRange;
use serde_json::Value;

/// What providers may use besides the analysis.
#[derive(Debug, Clone, Default)]
pub struct LensContext {
    /// The document's URI, for lens commands' arguments.
    pub uri: String,
    /// The pipeline the editor offers by default.
    pub default_pipeline: Option<String>,
    /// What the last pipeline run on each function did: function name →
    /// `(pipeline, summary)`.
    pub pipeline_runs: std::collections::HashMap<String, (String, String)>,
    /// What the last run on random inputs of each function gave: function
    /// name → `(document version, summary)`.
    pub function_runs: std::collections::HashMap<String, (i32, String)>,
}

/// One lens: a title over `range`, running `command` with `arguments`
/// when clicked (no command: the title is information only).
#[derive(Debug, Clone, PartialEq)]
pub struct Lens {
    pub range: TextRange,
    pub title: String,
    pub command: Option<String>,
    pub arguments: Vec<Value>,
}

type Provider = fn(&Analysis, &LensContext) -> Vec<Lens>;

/// Every lens provider, in the order their lenses show.
const PROVIDERS: &[Provider] = &[graph::graph_lenses, run::run_lenses];

/// The lenses of the document, grouped by provider.
pub fn code_lenses(analysis: &Analysis, context: &LensContext) -> Vec<Lens> {
    PROVIDERS
        .iter()
        .flat_map(|provider| provider(analysis, context))
        .collect()
}
