//! `textDocument/codeAction`: quick fixes and the pipelines and passes
//! worth applying where the cursor is.

use crate::lsp::backend::Backend;
use crate::lsp::features::code_actions::code_actions;
use crate::lsp::project::project_for;
use crate::lsp::{from_proto, to_proto};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{CodeActionParams, CodeActionResponse};

pub async fn code_action(
    backend: &Backend,
    params: CodeActionParams,
) -> Result<Option<CodeActionResponse>> {
    let uri = params.text_document.uri.clone();
    let range = params.range;
    let wanted = from_proto::wanted_actions(params.context.only.as_ref());
    let path = from_proto::uri_path(&uri);
    let settings = backend.settings();
    let commands = settings.external_commands();
    let picker = settings.client_picks_pass;
    let uri2 = uri.clone();
    backend
        .with_shared_analysis(&uri, "codeAction", move |a| {
            let range = from_proto::text_range(&a.lines, range);
            let project = || project_for(path.as_deref(), &commands).ok().flatten();
            let actions = code_actions(a, range, wanted, picker, project);
            Some(
                actions
                    .into_iter()
                    .map(|action| to_proto::code_action(&a.lines, &uri2, action))
                    .collect(),
            )
        })
        .await
}
