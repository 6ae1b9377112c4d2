//! The server's extensions of the protocol, in one place: the commands it
//! executes or offers, the custom request `relay/passOutput`, and their
//! parameters as the editors send them.

use serde::{Deserialize, Serialize};

/// The command that applies a pipeline: `{uri, pipeline, function?}`.
pub const APPLY_PIPELINE: &str = "relay.applyPipeline";
/// The command that lists the registered passes.
pub const LIST_PASSES: &str = "relay.listPasses";
/// The command of the "Apply pass…" code action: the client shows the pass
/// list (a quick pick in VS Code, `vim.ui.select` in Neovim) and runs the
/// one picked. Offered only to clients that say they implement it
/// (`initializationOptions.clientCommands`).
pub const PICK_PASS: &str = "relay.applyPass";
/// A command that panics, for tests of panic isolation only: executed only
/// when `RELAY_LSP_DEBUG_PANIC` is set.
pub const DEBUG_PANIC: &str = "relay.debug.panic";
/// The command that finds a dataflow pattern in a document:
/// `{uri, pattern}` → `{matches: [{function, range, parts}]}`.
pub const FIND_PATTERN: &str = "relay.findPattern";
/// The custom request answering the module after each pass of a pipeline.
pub const PASS_OUTPUT: &str = "relay/passOutput";

/// The custom request answering the graph of a function (optionally after
/// a stage of a pipeline, or the diff of that stage).
pub const GRAPH: &str = "relay/graph";

/// The params of `relay/graph`.
#[derive(Debug, Clone, Deserialize)]
pub struct GraphParams {
    #[serde(rename = "textDocument")]
    pub text_document: TextDocumentId,
    #[serde(default)]
    pub function: Option<String>,
    #[serde(default)]
    pub pipeline: Option<String>,
    /// The 0-based stage of the pipeline (default: the last).
    #[serde(default)]
    pub stage: Option<usize>,
    /// The stage against the one before.
    #[serde(default)]
    pub diff: bool,
}

/// The arguments of `relay.applyPipeline`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApplyPipelineArgs {
    pub uri: String,
    pub pipeline: String,
    /// Apply the result to this global function only (without the `@`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// The params of `relay/passOutput`.
#[derive(Debug, Clone, Deserialize)]
pub struct PassOutputParams {
    #[serde(rename = "textDocument")]
    pub text_document: TextDocumentId,
    pub pipeline: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TextDocumentId {
    pub uri: String,
}

/// The arguments of `relay.findPattern`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindPatternArgs {
    pub uri: String,
    /// The pattern, in the syntax of `docs/patterns.md`.
    pub pattern: String,
}
