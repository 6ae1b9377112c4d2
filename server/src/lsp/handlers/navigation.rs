//! `textDocument/definition`, `textDocument/references`,
//! `textDocument/documentHighlight`, `textDocument/documentLink` (metadata
//! references to their entries) and the call hierarchy
//! (`textDocument/prepareCallHierarchy`, `callHierarchy/incomingCalls`,
//! `callHierarchy/outgoingCalls`).

use crate::lsp::backend::Backend;
use crate::lsp::features::{
    call_hierarchy, goto_definition, highlights, metadata_links, references,
};
use crate::lsp::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CallHierarchyIncomingCall, CallHierarchyIncomingCallsParams, CallHierarchyItem,
    CallHierarchyOutgoingCall, CallHierarchyOutgoingCallsParams, CallHierarchyPrepareParams,
    DocumentHighlight, DocumentHighlightParams, DocumentLink, DocumentLinkParams,
    GotoDefinitionParams, GotoDefinitionResponse, Location, ReferenceParams,
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

/// `textDocument/prepareCallHierarchy`: the global function at the cursor.
pub async fn prepare_call_hierarchy(
    backend: &Backend,
    params: CallHierarchyPrepareParams,
) -> Result<Option<Vec<CallHierarchyItem>>> {
    let p = params.text_document_position_params;
    let uri = p.text_document.uri.clone();
    backend
        .with_analysis(&p.text_document.uri, "prepareCallHierarchy", move |a| {
            let offset = from_proto::offset(&a.lines, p.position);
            call_hierarchy::prepare(a, offset)
                .map(|item| vec![to_proto::call_hierarchy_item(&a.lines, &uri, item)])
        })
        .await
}

/// `callHierarchy/incomingCalls`: the functions that refer to the item.
pub async fn incoming_calls(
    backend: &Backend,
    params: CallHierarchyIncomingCallsParams,
) -> Result<Option<Vec<CallHierarchyIncomingCall>>> {
    let uri = params.item.uri.clone();
    let name = params.item.name.trim_start_matches('@').to_string();
    backend
        .with_analysis(&params.item.uri, "incomingCalls", move |a| {
            let calls = call_hierarchy::incoming(a, &name);
            Some(
                calls
                    .into_iter()
                    .map(|c| to_proto::incoming_call(&a.lines, &uri, c))
                    .collect(),
            )
        })
        .await
}

/// `callHierarchy/outgoingCalls`: the functions the item refers to.
pub async fn outgoing_calls(
    backend: &Backend,
    params: CallHierarchyOutgoingCallsParams,
) -> Result<Option<Vec<CallHierarchyOutgoingCall>>> {
    let uri = params.item.uri.clone();
    let name = params.item.name.trim_start_matches('@').to_string();
    backend
        .with_analysis(&params.item.uri, "outgoingCalls", move |a| {
            let calls = call_hierarchy::outgoing(a, &name);
            Some(
                calls
                    .into_iter()
                    .map(|c| to_proto::outgoing_call(&a.lines, &uri, c))
                    .collect(),
            )
        })
        .await
}

/// `textDocument/documentLink`: each `meta[…][…]` to its metadata entry.
pub async fn document_link(
    backend: &Backend,
    params: DocumentLinkParams,
) -> Result<Option<Vec<DocumentLink>>> {
    let uri = params.text_document.uri.clone();
    backend
        .with_analysis(&params.text_document.uri, "documentLink", move |a| {
            let links = metadata_links::metadata_links(a);
            Some(
                links
                    .into_iter()
                    .map(|l| to_proto::metadata_link(&a.lines, &uri, l))
                    .collect(),
            )
        })
        .await
}
