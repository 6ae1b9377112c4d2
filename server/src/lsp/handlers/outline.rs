//! `textDocument/documentSymbol`, `textDocument/foldingRange`,
//! `textDocument/selectionRange` and `workspace/symbol`.

use crate::lsp::backend::Backend;
use crate::lsp::features::document_symbols::document_symbols;
use crate::lsp::features::folding_ranges::folding_ranges;
use crate::lsp::features::selection_ranges::selection_ranges;
use crate::lsp::features::workspace_symbols::workspace_symbols;
use crate::lsp::from_proto;
use crate::lsp::to_proto;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    DocumentSymbolParams, DocumentSymbolResponse, FoldingRange, FoldingRangeParams, SelectionRange,
    SelectionRangeParams, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};

pub async fn document_symbol(
    backend: &Backend,
    params: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>> {
    backend
        .with_analysis(&params.text_document.uri, "documentSymbol", |a| {
            let symbols = document_symbols(a)
                .into_iter()
                .map(|s| to_proto::document_symbol(&a.lines, s))
                .collect();
            Some(DocumentSymbolResponse::Nested(symbols))
        })
        .await
}

pub async fn folding_range(
    backend: &Backend,
    params: FoldingRangeParams,
) -> Result<Option<Vec<FoldingRange>>> {
    backend
        .with_analysis(&params.text_document.uri, "foldingRange", |a| {
            Some(
                folding_ranges(a)
                    .into_iter()
                    .map(|f| to_proto::folding_range(&a.lines, f))
                    .collect(),
            )
        })
        .await
}

/// `textDocument/selectionRange`: one chain of steps per requested
/// position. A position past the end of the text gets an empty range there
/// (the protocol wants one answer per position).
pub async fn selection_range(
    backend: &Backend,
    params: SelectionRangeParams,
) -> Result<Option<Vec<SelectionRange>>> {
    let positions = params.positions;
    backend
        .with_analysis(&params.text_document.uri, "selectionRange", move |a| {
            Some(
                positions
                    .iter()
                    .map(|&position| {
                        let offset = from_proto::offset(&a.lines, position);
                        let steps = selection_ranges(a, offset);
                        to_proto::selection_range(&a.lines, &steps).unwrap_or(SelectionRange {
                            range: tower_lsp_server::ls_types::Range::new(position, position),
                            parent: None,
                        })
                    })
                    .collect(),
            )
        })
        .await
}

/// `workspace/symbol`: the matching symbols of every open document. A
/// document whose analysis fails (closed meanwhile, superseded) is left
/// out rather than failing the whole answer.
pub async fn workspace_symbol(
    backend: &Backend,
    params: WorkspaceSymbolParams,
) -> Result<Option<WorkspaceSymbolResponse>> {
    let mut uris: Vec<_> = backend.docs().keys().cloned().collect();
    uris.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let mut found = Vec::new();
    for uri in uris {
        let query = params.query.clone();
        let target = uri.clone();
        let symbols = backend
            .with_analysis(&uri, "workspaceSymbol", move |a| {
                workspace_symbols(a, &query)
                    .into_iter()
                    .map(|s| to_proto::workspace_symbol(&a.lines, &target, s))
                    .collect::<Vec<_>>()
            })
            .await;
        found.extend(symbols.unwrap_or_default());
    }
    Ok(Some(WorkspaceSymbolResponse::Nested(found)))
}
