//! `textDocument/formatting`, with the formatter of `relay fmt`, at the
//! width of the project's `relay.toml` (`[format] width`, default 100; the
//! client's tab size is not used: Relay is indented by two spaces, as TVM
//! prints). A document with syntax errors is left alone (its diagnostics
//! say why); a construct the formatter refuses is reported as an error.

use crate::lsp::backend::Backend;
use crate::lsp::errors::request_failed;
use crate::lsp::features::formatting::format_edits;
use crate::lsp::project::format_width;
use crate::lsp::{from_proto, to_proto};
use relay_syntax::format::FormatError;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{DocumentFormattingParams, TextEdit};

pub async fn formatting(
    backend: &Backend,
    params: DocumentFormattingParams,
) -> Result<Option<Vec<TextEdit>>> {
    let path = from_proto::uri_path(&params.text_document.uri);
    let width = format_width(path.as_deref()).map_err(request_failed)?;
    let result = backend
        .with_analysis(
            &params.text_document.uri,
            "formatting",
            move |a| match format_edits(a, width) {
                Ok(edits) => Ok(Some(to_proto::text_edits(&a.lines, &edits))),
                Err(FormatError::Syntax(_)) => Ok(None),
                Err(error) => Err(to_proto::format_error(&a.lines, &error)),
            },
        )
        .await?;
    result.map_err(request_failed)
}
