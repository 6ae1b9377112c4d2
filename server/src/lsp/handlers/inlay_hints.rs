//! `textDocument/inlayHint`.

use crate::lsp::backend::Backend;
use crate::lsp::features::inlay_hints::inlay_hints;
use crate::lsp::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{InlayHint, InlayHintParams};

pub async fn inlay_hint(
    backend: &Backend,
    params: InlayHintParams,
) -> Result<Option<Vec<InlayHint>>> {
    let range = params.range;
    backend
        .with_analysis(&params.text_document.uri, "inlayHint", move |a| {
            let range = from_proto::text_range(&a.lines, range);
            Some(
                inlay_hints(a, range)
                    .into_iter()
                    .map(|h| to_proto::inlay_hint(&a.lines, h))
                    .collect(),
            )
        })
        .await
}
