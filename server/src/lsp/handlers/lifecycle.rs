//! `initialize` (the position encoding and settings the client offers, the
//! capabilities the server announces), `initialized` (which asks the client
//! to watch `relay.toml` files), `shutdown`, and
//! `workspace/didChangeConfiguration` (workspace trust).

use crate::lsp::backend::Backend;
use crate::lsp::ext::{APPLY_PIPELINE, CHECK_SEMANTICS, FIND_PATTERN, LIST_PASSES, RUN_FUNCTION};
use crate::lsp::handlers::documents::PROJECT_FILE;
use crate::lsp::settings::trusted_flag;
use crate::lsp::text::Encoding;
use crate::lsp::to_proto::{TOKEN_MODIFIERS, TOKEN_TYPES};
use std::sync::atomic::Ordering;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

pub async fn initialize(backend: &Backend, params: InitializeParams) -> Result<InitializeResult> {
    let utf8 = params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref())
        .is_some_and(|encodings| encodings.contains(&PositionEncodingKind::UTF8));
    let encoding = if utf8 {
        Encoding::Utf8
    } else {
        Encoding::Utf16
    };
    *backend
        .state
        .encoding
        .write()
        .unwrap_or_else(|e| e.into_inner()) = encoding;
    backend
        .state
        .settings
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .initialize(&params);
    let position_encoding = Some(match encoding {
        Encoding::Utf8 => PositionEncodingKind::UTF8,
        Encoding::Utf16 => PositionEncodingKind::UTF16,
    });
    Ok(InitializeResult {
        offset_encoding: None,
        server_info: Some(ServerInfo {
            name: "relay".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
        capabilities: ServerCapabilities {
            position_encoding,
            ..capabilities()
        },
    })
}

/// What the server can do (the position encoding aside).
fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..Default::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        call_hierarchy_provider: Some(CallHierarchyServerCapability::Simple(true)),
        document_link_provider: Some(DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: Default::default(),
        }),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        selection_range_provider: Some(SelectionRangeProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: TOKEN_TYPES.to_vec(),
                    token_modifiers: TOKEN_MODIFIERS.to_vec(),
                },
                range: Some(true),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                ..Default::default()
            },
        )),
        document_formatting_provider: Some(OneOf::Left(true)),
        inlay_hint_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["%".into(), "@".into(), "(".into(), ",".into()]),
            ..Default::default()
        }),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec!["(".into(), ",".into()]),
            retrigger_characters: None,
            work_done_progress_options: Default::default(),
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::REFACTOR_REWRITE,
            ]),
            ..Default::default()
        })),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![
                APPLY_PIPELINE.to_string(),
                LIST_PASSES.to_string(),
                FIND_PATTERN.to_string(),
                RUN_FUNCTION.to_string(),
                CHECK_SEMANTICS.to_string(),
            ],
            work_done_progress_options: Default::default(),
        }),
        ..Default::default()
    }
}

pub async fn initialized(backend: &Backend, _: InitializedParams) {
    backend
        .client
        .log_message(MessageType::INFO, "relay language server started")
        .await;
    if backend.settings().watch_files {
        // A changed relay.toml (its `lenient`, its declared operators)
        // changes every open document's analysis.
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: vec![FileSystemWatcher {
                glob_pattern: GlobPattern::String(format!("**/{PROJECT_FILE}")),
                kind: None,
            }],
        };
        let registration = Registration {
            id: "relay-watch-relay-toml".to_string(),
            method: "workspace/didChangeWatchedFiles".to_string(),
            register_options: serde_json::to_value(options).ok(),
        };
        if let Err(e) = backend.client.register_capability(vec![registration]).await {
            backend
                .client
                .log_message(
                    MessageType::WARNING,
                    format!("relay: cannot watch {PROJECT_FILE} files: {e}"),
                )
                .await;
        }
    }
}

/// The editor's trust decision can change while the server runs (VS
/// Code's "Trust" button, Neovim's `:trust`): it comes as
/// `settings.trusted`.
pub async fn did_change_configuration(backend: &Backend, params: DidChangeConfigurationParams) {
    if let Some(trusted) = trusted_flag(&params.settings) {
        backend
            .state
            .settings
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .trusted = trusted;
        backend
            .client
            .log_message(
                MessageType::INFO,
                format!("relay: workspace trusted: {trusted}"),
            )
            .await;
    }
}

pub async fn shutdown(backend: &Backend) -> Result<()> {
    backend.state.shut_down.store(true, Ordering::Relaxed);
    Ok(())
}
