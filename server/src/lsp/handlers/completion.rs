//! `textDocument/completion` and `textDocument/signatureHelp`.

use crate::lsp::backend::Backend;
use crate::lsp::features::{completion, signature_help};
use crate::lsp::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CompletionList, CompletionParams, CompletionResponse, SignatureHelp, SignatureHelpParams,
};

pub async fn completion(
    backend: &Backend,
    params: CompletionParams,
) -> Result<Option<CompletionResponse>> {
    let p = params.text_document_position;
    backend
        .with_analysis(&p.text_document.uri, "completion", move |a| {
            let offset = from_proto::offset(&a.lines, p.position);
            let answer = completion::completion(a, offset);
            let items = answer
                .items
                .into_iter()
                .map(|item| to_proto::completion_item(&a.lines, item))
                .collect();
            Some(CompletionResponse::List(CompletionList {
                is_incomplete: answer.incomplete,
                items,
            }))
        })
        .await
}

pub async fn signature_help(
    backend: &Backend,
    params: SignatureHelpParams,
) -> Result<Option<SignatureHelp>> {
    let p = params.text_document_position_params;
    backend
        .with_analysis(&p.text_document.uri, "signatureHelp", move |a| {
            let offset = from_proto::offset(&a.lines, p.position);
            signature_help::signature_help(a, offset).map(to_proto::signature_help)
        })
        .await
}
