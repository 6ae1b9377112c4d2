//! `relay/graph` (the graph of a function, of a pipeline's stage, or the
//! diff of a stage) and `textDocument/codeLens`.

use crate::lsp::backend::Backend;
use crate::lsp::errors::invalid;
use crate::lsp::ext::GraphParams;
use crate::lsp::features::code_lenses::{code_lenses, LensContext};
use crate::lsp::features::graph_view::{graph_view, node_spans, GraphRequest, GraphView};
use crate::lsp::project::project_for;
use crate::lsp::{from_proto, to_proto};
use relay_syntax::{TextRange, TextSize};
use serde_json::Value;
use std::str::FromStr;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{CodeLens, CodeLensParams, Uri};

/// `relay/graph`: the answer of [`graph_view`] as JSON, each node with a
/// span also given its editor `range`.
pub async fn graph(backend: &Backend, params: GraphParams) -> Result<Value> {
    let uri =
        Uri::from_str(&params.text_document.uri).map_err(|e| invalid(format!("bad uri: {e}")))?;
    let analysis = backend.analysis(&uri).await?;
    let path = from_proto::uri_path(&uri);
    let commands = backend.settings().external_commands();
    let request = GraphRequest {
        function: params.function.clone(),
        pipeline: params.pipeline.clone(),
        stage: params.stage,
        diff: params.diff,
    };
    let what = match &params.pipeline {
        Some(p) => format!("Drawing the graph after {p}"),
        None => "Drawing the graph".to_string(),
    };
    let view = backend
        .with_progress(what, move || {
            let view = match project_for(path.as_deref(), &commands) {
                Ok(project) => graph_view(&analysis, project.as_ref(), &request),
                Err(e) => GraphView {
                    error: Some(e),
                    ..GraphView::default()
                },
            };
            let mut answer = serde_json::to_value(&view).unwrap_or(Value::Null);
            for (pointer, span) in node_spans(&analysis, &view) {
                let range = TextRange::new(TextSize::from(span.start), TextSize::from(span.end));
                let range = to_proto::range(&analysis.lines, range);
                if let Some(Value::Object(node)) = answer.pointer_mut(&format!("/graph{pointer}")) {
                    node.insert(
                        "range".to_string(),
                        serde_json::to_value(range).unwrap_or(Value::Null),
                    );
                }
            }
            answer
        })
        .await?;
    // The pipeline's code lens shows what the run did.
    let ran = params.pipeline.as_deref().map(str::trim);
    let summary = view.get("pipelineSummary").and_then(Value::as_str);
    let function = view
        .get("function")
        .and_then(Value::as_str)
        .filter(|f| !f.is_empty());
    if let (Some(pipeline), Some(summary), Some(function)) = (ran, summary, function) {
        backend
            .state
            .pipeline_runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                (uri.clone(), function.to_string()),
                (pipeline.to_string(), summary.to_string()),
            );
        if backend.settings().code_lens_refresh {
            let _ = backend.client.code_lens_refresh().await;
        }
    }
    Ok(view)
}

/// `textDocument/codeLens`: every provider's lenses.
pub async fn code_lens(backend: &Backend, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
    let uri = params.text_document.uri;
    let pipeline_runs = backend
        .state
        .pipeline_runs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|((u, _), _)| *u == uri)
        .map(|((_, f), run)| (f.clone(), run.clone()))
        .collect();
    let function_runs = backend
        .state
        .function_runs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|((u, _), _)| *u == uri)
        .map(|((_, f), run)| (f.clone(), run.clone()))
        .collect();
    let context = LensContext {
        uri: uri.as_str().to_string(),
        default_pipeline: backend.settings().default_pipeline,
        pipeline_runs,
        function_runs,
    };
    backend
        .with_analysis(&uri, "codeLens", move |a| {
            Some(
                code_lenses(a, &context)
                    .into_iter()
                    .map(|lens| to_proto::code_lens(&a.lines, lens))
                    .collect(),
            )
        })
        .await
}
