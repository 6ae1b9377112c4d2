//! `textDocument/hover`.

use crate::lsp::backend::Backend;
use crate::lsp::features::hover::hover as hover_at;
use crate::lsp::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{Hover, HoverParams};

pub async fn hover(backend: &Backend, params: HoverParams) -> Result<Option<Hover>> {
    let p = params.text_document_position_params;
    backend
        .with_analysis(&p.text_document.uri, "hover", move |a| {
            let offset = from_proto::offset(&a.lines, p.position);
            hover_at(a, offset).map(|h| to_proto::hover(&a.lines, h))
        })
        .await
}
