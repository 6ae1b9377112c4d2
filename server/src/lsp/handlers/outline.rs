//! `textDocument/documentSymbol` and `textDocument/foldingRange`.

use crate::lsp::backend::Backend;
use crate::lsp::features::document_symbols::document_symbols;
use crate::lsp::features::folding_ranges::folding_ranges;
use crate::lsp::to_proto;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    DocumentSymbolParams, DocumentSymbolResponse, FoldingRange, FoldingRangeParams,
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
