//! `textDocument/prepareRename` and `textDocument/rename`.

use crate::lsp::backend::Backend;
use crate::lsp::errors::invalid;
use crate::lsp::features::rename;
use crate::lsp::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    PrepareRenameResponse, RenameParams, TextDocumentPositionParams, WorkspaceEdit,
};

pub async fn prepare_rename(
    backend: &Backend,
    params: TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>> {
    let position = params.position;
    backend
        .with_analysis(&params.text_document.uri, "prepareRename", move |a| {
            let offset = from_proto::offset(&a.lines, position);
            rename::prepare_rename(a, offset).map(|(range, placeholder)| {
                PrepareRenameResponse::RangeWithPlaceholder {
                    range: to_proto::range(&a.lines, range),
                    placeholder,
                }
            })
        })
        .await
}

pub async fn rename(backend: &Backend, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
    let p = params.text_document_position;
    let uri = p.text_document.uri.clone();
    let new_name = params.new_name;
    let result = backend
        .with_analysis(&p.text_document.uri, "rename", move |a| {
            let offset = from_proto::offset(&a.lines, p.position);
            rename::rename(a, offset, &new_name)
                .map(|edits| to_proto::workspace_edit(&a.lines, &uri, &edits))
        })
        .await?;
    result.map(Some).map_err(invalid)
}
