//! `textDocument/definition`, `textDocument/references` and
//! `textDocument/documentHighlight`.

use crate::lsp::backend::Backend;
use crate::lsp::features::{goto_definition, highlights, references};
use crate::lsp::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    DocumentHighlight, DocumentHighlightParams, GotoDefinitionParams, GotoDefinitionResponse,
    Location, ReferenceParams,
};

pub async fn goto_definition(
    backend: &Backend,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let p = params.text_document_position_params;
    let uri = p.text_document.uri.clone();
    backend
        .with_analysis(&p.text_document.uri, "definition", move |a| {
            let offset = from_proto::offset(&a.lines, p.position);
            goto_definition::definition(a, offset).map(|range| {
                GotoDefinitionResponse::Scalar(to_proto::location(&a.lines, &uri, range))
            })
        })
        .await
}

pub async fn references(
    backend: &Backend,
    params: ReferenceParams,
) -> Result<Option<Vec<Location>>> {
    let p = params.text_document_position;
    let uri = p.text_document.uri.clone();
    let include = params.context.include_declaration;
    backend
        .with_analysis(&p.text_document.uri, "references", move |a| {
            let offset = from_proto::offset(&a.lines, p.position);
            let found = references::references(a, offset, include);
            Some(
                found
                    .into_iter()
                    .map(|range| to_proto::location(&a.lines, &uri, range))
                    .collect(),
            )
        })
        .await
}

pub async fn document_highlight(
    backend: &Backend,
    params: DocumentHighlightParams,
) -> Result<Option<Vec<DocumentHighlight>>> {
    let p = params.text_document_position_params;
    backend
        .with_analysis(&p.text_document.uri, "highlight", move |a| {
            let offset = from_proto::offset(&a.lines, p.position);
            let found = highlights::highlights(a, offset);
            Some(
                found
                    .into_iter()
                    .map(|h| to_proto::highlight(&a.lines, h))
                    .collect(),
            )
        })
        .await
}
