//! The routing table: which handler answers which method. The standard
//! methods come through tower-lsp-server's `LanguageServer` trait (one line
//! each, below); the custom requests `relay/passOutput` and `relay/graph`
//! are registered on the service; the commands of `workspace/executeCommand` are dispatched by
//! name in [`execute_command`]. A method not listed here is answered by the
//! library's default (method not found, or ignored for notifications).

use super::backend::Backend;
use super::errors::invalid;
use super::ext::{
    GraphParams, PassOutputParams, APPLY_PIPELINE, CHECK_SEMANTICS, DEBUG_PANIC, FIND_PATTERN,
    GRAPH, LIST_PASSES, PASS_OUTPUT, RUN_FUNCTION,
};
use super::features::pass_output::PassOutput;
use super::handlers::{
    code_actions, commands, completion, documents, formatting, graph, hover, inlay_hints,
    lifecycle, navigation, outline, rename, run, semantic_tokens,
};
use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{ClientSocket, LanguageServer, LspService};

/// The language server as a service, without a transport: `run_stdio`
/// serves it on stdin/stdout; tests and fuzz targets call it in-process.
pub fn service() -> (LspService<Backend>, ClientSocket) {
    // Passes registered before this call (an embedder's) keep their names.
    relay_passes::register_builtin_passes();
    LspService::build(Backend::new)
        .custom_method(PASS_OUTPUT, Backend::pass_output)
        .custom_method(GRAPH, Backend::graph)
        .finish()
}

impl Backend {
    /// `relay/passOutput`: the module after each pass of a pipeline.
    pub async fn pass_output(&self, params: PassOutputParams) -> Result<PassOutput> {
        commands::pass_output(self, params).await
    }

    /// `relay/graph`: the graph of a function, of a stage, or a stage's diff.
    pub async fn graph(&self, params: GraphParams) -> Result<Value> {
        graph::graph(self, params).await
    }
}

/// `workspace/executeCommand`, by command name.
async fn execute_command(backend: &Backend, params: ExecuteCommandParams) -> Result<Option<Value>> {
    match params.command.as_str() {
        APPLY_PIPELINE => commands::apply_pipeline(backend, params.arguments).await,
        LIST_PASSES => commands::list_passes().await,
        FIND_PATTERN => commands::find_pattern(backend, params.arguments).await,
        RUN_FUNCTION => run::run_function(backend, params.arguments).await,
        CHECK_SEMANTICS => run::check_semantics(backend, params.arguments).await,
        DEBUG_PANIC if std::env::var_os("RELAY_LSP_DEBUG_PANIC").is_some() => {
            commands::debug_panic(backend, params.arguments).await
        }
        other => Err(invalid(format!("unknown command `{other}`"))),
    }
}

#[rustfmt::skip] // One line per method: the table reads as a table.
impl LanguageServer for Backend {
    async fn initialize(&self, p: InitializeParams) -> Result<InitializeResult> { lifecycle::initialize(self, p).await }
    async fn initialized(&self, p: InitializedParams) { lifecycle::initialized(self, p).await }
    async fn shutdown(&self) -> Result<()> { lifecycle::shutdown(self).await }
    async fn did_change_configuration(&self, p: DidChangeConfigurationParams) { lifecycle::did_change_configuration(self, p).await }

    async fn did_open(&self, p: DidOpenTextDocumentParams) { documents::did_open(self, p).await }
    async fn did_change(&self, p: DidChangeTextDocumentParams) { documents::did_change(self, p).await }
    async fn did_save(&self, p: DidSaveTextDocumentParams) { documents::did_save(self, p).await }
    async fn did_close(&self, p: DidCloseTextDocumentParams) { documents::did_close(self, p).await }
    async fn did_change_watched_files(&self, p: DidChangeWatchedFilesParams) { documents::did_change_watched_files(self, p).await }

    async fn hover(&self, p: HoverParams) -> Result<Option<Hover>> { hover::hover(self, p).await }
    async fn goto_definition(&self, p: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> { navigation::goto_definition(self, p).await }
    async fn references(&self, p: ReferenceParams) -> Result<Option<Vec<Location>>> { navigation::references(self, p).await }
    async fn prepare_call_hierarchy(&self, p: CallHierarchyPrepareParams) -> Result<Option<Vec<CallHierarchyItem>>> { navigation::prepare_call_hierarchy(self, p).await }
    async fn incoming_calls(&self, p: CallHierarchyIncomingCallsParams) -> Result<Option<Vec<CallHierarchyIncomingCall>>> { navigation::incoming_calls(self, p).await }
    async fn outgoing_calls(&self, p: CallHierarchyOutgoingCallsParams) -> Result<Option<Vec<CallHierarchyOutgoingCall>>> { navigation::outgoing_calls(self, p).await }
    async fn document_link(&self, p: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> { navigation::document_link(self, p).await }
    async fn document_highlight(&self, p: DocumentHighlightParams) -> Result<Option<Vec<DocumentHighlight>>> { navigation::document_highlight(self, p).await }
    async fn prepare_rename(&self, p: TextDocumentPositionParams) -> Result<Option<PrepareRenameResponse>> { rename::prepare_rename(self, p).await }
    async fn rename(&self, p: RenameParams) -> Result<Option<WorkspaceEdit>> { rename::rename(self, p).await }
    async fn document_symbol(&self, p: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> { outline::document_symbol(self, p).await }
    async fn folding_range(&self, p: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> { outline::folding_range(self, p).await }
    async fn symbol(&self, p: WorkspaceSymbolParams) -> Result<Option<WorkspaceSymbolResponse>> { outline::workspace_symbol(self, p).await }
    async fn selection_range(&self, p: SelectionRangeParams) -> Result<Option<Vec<SelectionRange>>> { outline::selection_range(self, p).await }
    async fn semantic_tokens_full(&self, p: SemanticTokensParams) -> Result<Option<SemanticTokensResult>> { semantic_tokens::full(self, p).await }
    async fn semantic_tokens_range(&self, p: SemanticTokensRangeParams) -> Result<Option<SemanticTokensRangeResult>> { semantic_tokens::range(self, p).await }
    async fn inlay_hint(&self, p: InlayHintParams) -> Result<Option<Vec<InlayHint>>> { inlay_hints::inlay_hint(self, p).await }
    async fn completion(&self, p: CompletionParams) -> Result<Option<CompletionResponse>> { completion::completion(self, p).await }
    async fn signature_help(&self, p: SignatureHelpParams) -> Result<Option<SignatureHelp>> { completion::signature_help(self, p).await }
    async fn formatting(&self, p: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> { formatting::formatting(self, p).await }
    async fn code_lens(&self, p: CodeLensParams) -> Result<Option<Vec<CodeLens>>> { graph::code_lens(self, p).await }
    async fn code_action(&self, p: CodeActionParams) -> Result<Option<CodeActionResponse>> { code_actions::code_action(self, p).await }
    async fn execute_command(&self, p: ExecuteCommandParams) -> Result<Option<Value>> { execute_command(self, p).await }
}
