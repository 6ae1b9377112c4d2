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

/// The command that runs a global function on seeded random inputs (the
/// "Run with random inputs" code lens): `{uri, function, seed?,
/// timeLimitSeconds?}` → `{function, seed, outputs, summary, error?,
/// stopped, timeMs}`.
pub const RUN_FUNCTION: &str = "relay.runFunction";
/// The command that checks that a pipeline keeps what the module computes
/// ("Check pass semantics"): `{uri, pipeline?, inputs?, seed?, entry?,
/// timeLimitSeconds?}` → `{pipeline, agree, checked, agreed, summary,
/// difference?, error?, stopped}`.
pub const CHECK_SEMANTICS: &str = "relay.checkSemantics";

/// The arguments of `relay.runFunction`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFunctionArgs {
    pub uri: String,
    /// The global function, without the `@`.
    pub function: String,
    /// The seed of the random inputs (default 0, as `relay run --random 0`).
    #[serde(default)]
    pub seed: u64,
    /// How long the run may take (default [`RUN_TIME_LIMIT_SECONDS`]).
    #[serde(default)]
    pub time_limit_seconds: Option<f64>,
}

/// The arguments of `relay.checkSemantics`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckSemanticsArgs {
    pub uri: String,
    /// The pipeline (text, or the name of a `relay.toml` pipeline); without
    /// it, the editor's default pipeline, else `relay.toml`'s only one.
    #[serde(default)]
    pub pipeline: Option<String>,
    /// How many random inputs (default 3, as `--check-semantics`).
    #[serde(default)]
    pub inputs: Option<u64>,
    /// The first seed (default 0).
    #[serde(default)]
    pub seed: u64,
    /// The function run before and after each pass (default `main`).
    #[serde(default)]
    pub entry: Option<String>,
    /// How long the whole check may take (default
    /// [`CHECK_TIME_LIMIT_SECONDS`]).
    #[serde(default)]
    pub time_limit_seconds: Option<f64>,
}

/// The default time limit of a run from the editor: a big model on the
/// reference interpreter takes seconds; a minute means something is off.
pub const RUN_TIME_LIMIT_SECONDS: f64 = 60.0;
/// The default time limit of a semantic check (a pipeline runs the model
/// twice per pass and input).
pub const CHECK_TIME_LIMIT_SECONDS: f64 = 300.0;
