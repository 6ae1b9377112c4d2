//! `workspace/executeCommand` (`relay.applyPipeline`, `relay.listPasses`,
//! the test-only `relay.debug.panic`) and the custom request
//! `relay/passOutput`: the requests that run pipelines and talk back to
//! the editor (edits to apply, messages, log lines, progress).

use crate::lsp::backend::Backend;
use crate::lsp::errors::{content_modified, internal, invalid};
use crate::lsp::ext::{
    ApplyPipelineArgs, FindPatternArgs, PassOutputParams, APPLY_PIPELINE, DEBUG_PANIC, FIND_PATTERN,
};
use crate::lsp::features::apply_pipeline::apply_pipeline as apply;
use crate::lsp::features::find_pattern::find_pattern as find;
use crate::lsp::features::pass_output::{pass_output as run_stages, PassOutput};
use crate::lsp::pipeline::list_passes as registered_passes;
use crate::lsp::project::project_for;
use crate::lsp::{from_proto, to_proto};
use relay_passes::patterns::text::render_error;
use serde_json::Value;
use std::str::FromStr;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{MessageType, Uri};

/// `relay.applyPipeline`: runs the pipeline and applies ONE workspace edit
/// replacing the definitions that changed.
pub async fn apply_pipeline(backend: &Backend, arguments: Vec<Value>) -> Result<Option<Value>> {
    let arg = arguments.into_iter().next().ok_or_else(|| {
        invalid(format!(
            "{APPLY_PIPELINE} takes {{uri, pipeline, function?}}"
        ))
    })?;
    let args: ApplyPipelineArgs =
        serde_json::from_value(arg).map_err(|e| invalid(format!("{APPLY_PIPELINE}: {e}")))?;
    let uri = Uri::from_str(&args.uri).map_err(|e| invalid(format!("bad uri: {e}")))?;
    let analysis = backend.analysis(&uri).await?;
    let path = from_proto::uri_path(&uri);
    let a = analysis.clone();
    let pipeline = args.pipeline.clone();
    let only = args.function.clone();
    let commands = backend.settings().external_commands();
    let (edits, result) = backend
        .with_progress(format!("Running {}", args.pipeline), move || {
            let project = match project_for(path.as_deref(), &commands) {
                Ok(p) => p,
                Err(e) => return (Err(e), None),
            };
            let (edits, result) = apply(&a, project.as_ref(), &pipeline, only.as_deref());
            (edits, Some(result))
        })
        .await?;
    if let Some(result) = &result {
        backend.send_log(&result.log).await;
        backend.tell_blocked(&result.blocked).await;
    }
    let edits = match edits {
        Ok(edits) => edits,
        Err(message) => {
            let mut full = message.clone();
            if let Some(result) = &result {
                for d in result.diagnostics.iter().filter(|d| d.is_error()) {
                    full.push_str(&format!("\n{d}"));
                }
            }
            backend
                .client
                .show_message(
                    MessageType::ERROR,
                    format!("relay: {}: {full}", args.pipeline),
                )
                .await;
            return Err(internal(full));
        }
    };
    if edits.is_empty() {
        backend
            .client
            .show_message(
                MessageType::INFO,
                format!("relay: {} left the module unchanged", args.pipeline),
            )
            .await;
        return Ok(None);
    }
    if backend.docs().get(&uri).map(|s| s.doc.version) != Some(analysis.version) {
        return Err(content_modified());
    }
    let edit = to_proto::workspace_edit(&analysis.lines, &uri, &edits);
    let response = backend.client.apply_edit(edit).await;
    match response {
        Ok(r) if !r.applied => Err(internal(format!(
            "the editor did not apply the edit{}",
            r.failure_reason
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ))),
        Ok(_) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `relay.findPattern`: every match of a pattern in the document. A
/// pattern that does not parse is an error whose message shows it with
/// carets under the problem.
pub async fn find_pattern(backend: &Backend, arguments: Vec<Value>) -> Result<Option<Value>> {
    let arg = arguments
        .into_iter()
        .next()
        .ok_or_else(|| invalid(format!("{FIND_PATTERN} takes {{uri, pattern}}")))?;
    let args: FindPatternArgs =
        serde_json::from_value(arg).map_err(|e| invalid(format!("{FIND_PATTERN}: {e}")))?;
    let uri = Uri::from_str(&args.uri).map_err(|e| invalid(format!("bad uri: {e}")))?;
    let path = from_proto::uri_path(&uri);
    let commands = backend.settings().external_commands();
    let pattern = args.pattern;
    backend
        .with_analysis(&uri, FIND_PATTERN, move |a| {
            // The project's named patterns (`@name`), when it has some.
            let named = match project_for(path.as_deref(), &commands) {
                Ok(Some(project)) => project
                    .pattern_config
                    .compile()
                    .map(|c| c.named)
                    .unwrap_or_default(),
                _ => Default::default(),
            };
            let lookup = |name: &str| named.get(name).cloned();
            match find(a, &pattern, &lookup) {
                Ok(matches) => Ok(to_proto::pattern_matches(&a.lines, &matches)),
                Err(e) => Err(invalid(render_error(&pattern, &e))),
            }
        })
        .await?
        .map(Some)
}

/// `relay.listPasses`: the registered passes.
pub async fn list_passes() -> Result<Option<Value>> {
    Ok(Some(registered_passes()))
}

/// `relay.debug.panic`: panics in a handler, to test that the server
/// survives it (only with `RELAY_LSP_DEBUG_PANIC` set; the router refuses
/// it otherwise).
pub async fn debug_panic(backend: &Backend, arguments: Vec<Value>) -> Result<Option<Value>> {
    let uri = arguments
        .first()
        .and_then(|a| a.get("uri"))
        .and_then(Value::as_str)
        .and_then(|u| Uri::from_str(u).ok())
        .ok_or_else(|| invalid(format!("{DEBUG_PANIC} takes {{uri}}")))?;
    backend
        .with_analysis(&uri, DEBUG_PANIC, |_| -> Option<Value> {
            panic!("a deliberate panic (RELAY_LSP_DEBUG_PANIC)")
        })
        .await
}

/// `relay/passOutput`: the module after each pass of a pipeline.
pub async fn pass_output(backend: &Backend, params: PassOutputParams) -> Result<PassOutput> {
    let uri =
        Uri::from_str(&params.text_document.uri).map_err(|e| invalid(format!("bad uri: {e}")))?;
    let analysis = backend.analysis(&uri).await?;
    let path = from_proto::uri_path(&uri);
    let pipeline = params.pipeline.clone();
    let commands = backend.settings().external_commands();
    let (output, log, blocked) = backend
        .with_progress(
            format!("Running {}", params.pipeline),
            move || match project_for(path.as_deref(), &commands) {
                Ok(project) => {
                    let (output, result) = run_stages(&analysis, project.as_ref(), &pipeline);
                    (output, result.log, result.blocked)
                }
                Err(e) => (
                    PassOutput {
                        stages: Vec::new(),
                        error: Some(e),
                    },
                    Vec::new(),
                    Vec::new(),
                ),
            },
        )
        .await?;
    backend.send_log(&log).await;
    backend.tell_blocked(&blocked).await;
    Ok(output)
}
