//! `textDocument/semanticTokens/full` and `textDocument/semanticTokens/range`.

use crate::lsp::backend::Backend;
use crate::lsp::features::semantic_tokens::semantic_tokens;
use crate::lsp::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    SemanticTokens, SemanticTokensParams, SemanticTokensRangeParams, SemanticTokensRangeResult,
    SemanticTokensResult,
};

pub async fn full(
    backend: &Backend,
    params: SemanticTokensParams,
) -> Result<Option<SemanticTokensResult>> {
    backend
        .with_analysis(&params.text_document.uri, "semanticTokens", |a| {
            Some(SemanticTokensResult::Tokens(SemanticTokens {
                result_id: None,
                data: to_proto::semantic_tokens(&a.lines, &semantic_tokens(a, None)),
            }))
        })
        .await
}

pub async fn range(
    backend: &Backend,
    params: SemanticTokensRangeParams,
) -> Result<Option<SemanticTokensRangeResult>> {
    let range = params.range;
    backend
        .with_analysis(&params.text_document.uri, "semanticTokens", move |a| {
            let range = from_proto::text_range(&a.lines, range);
            Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
                result_id: None,
                data: to_proto::semantic_tokens(&a.lines, &semantic_tokens(a, Some(range))),
            }))
        })
        .await
}
