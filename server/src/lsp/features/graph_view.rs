//! The graph of a function for the editors' panels (`relay/graph`): the
//! document's function as it is, or after a stage of a pipeline, or the
//! diff of a stage against the one before. Drawn by `relay_passes::graph`,
//! the library `relay graph` calls.

use crate::lsp::analysis::Analysis;
use crate::lsp::pipeline::run_pipeline;
use crate::project::Project;
use relay_passes::graph::{
    default_function, diff_graphs, diff_json, function_graph, graph_json, render_diff_svg,
    render_svg, Graph, GraphCounts, SourceSpan,
};
use relay_passes::ir::IRModule;
use relay_passes::source::Span;
use relay_syntax::{TextRange, TextSize};
use serde::Serialize;
use serde_json::Value;

/// What the editor asks for.
#[derive(Debug, Clone, Default)]
pub struct GraphRequest {
    /// The global function (default: `main`, else the first).
    pub function: Option<String>,
    /// Run this pipeline and draw a stage of it.
    pub pipeline: Option<String>,
    /// The stage (0-based top-level pass; default: the last).
    pub stage: Option<usize>,
    /// Draw the stage against the one before (or the input).
    pub diff: bool,
}

/// A stage of the pipeline as the panel lists it.
#[derive(Debug, Clone, Serialize)]
pub struct StageInfo {
    pub pass: String,
    #[serde(rename = "timeMs")]
    pub time_ms: f64,
    pub changed: bool,
}

/// The answer: the SVG, the graph as JSON (nodes with byte spans; for a
/// diff, `before` and `after`), and what the panel lists around it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GraphView {
    pub function: String,
    pub functions: Vec<String>,
    pub svg: String,
    pub graph: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub stages: Vec<StageInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<usize>,
    /// What the whole pipeline did to the function (input against the last
    /// stage), e.g. `FuseOps: 3 calls grouped into 1 primitive function`.
    #[serde(rename = "pipelineSummary", skip_serializing_if = "Option::is_none")]
    pub pipeline_summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn failed(message: String, functions: Vec<String>) -> GraphView {
    GraphView {
        functions,
        error: Some(message),
        ..GraphView::default()
    }
}

/// Draws what `request` asks for.
pub fn graph_view(
    analysis: &Analysis,
    project: Option<&Project>,
    request: &GraphRequest,
) -> GraphView {
    let module = analysis.module();
    let functions: Vec<String> = module.functions().map(|(n, _)| n.to_string()).collect();
    let Some(name) = request
        .function
        .clone()
        .map(|n| n.trim_start_matches('@').to_string())
        .or_else(|| default_function(module))
    else {
        return failed("the module has no function to draw".to_string(), functions);
    };
    let Some(pipeline) = request.pipeline.as_deref().filter(|p| !p.trim().is_empty()) else {
        return match function_graph(module, Some(&name)) {
            Ok(graph) => GraphView {
                function: name,
                svg: render_svg(&graph),
                graph: graph_json(&graph),
                functions,
                ..GraphView::default()
            },
            Err(e) => failed(e.to_string(), functions),
        };
    };
    let run = run_pipeline(analysis, project, pipeline.trim(), true);
    let stages: Vec<StageInfo> = run
        .stages
        .iter()
        .map(|s| StageInfo {
            pass: s.pass.clone(),
            time_ms: s.time_ms,
            changed: s.changed,
        })
        .collect();
    if let Some(error) = run.error {
        return GraphView {
            stages,
            ..failed(error, functions)
        };
    }
    let Some(last) = run.stages.len().checked_sub(1) else {
        return failed("the pipeline has no pass".to_string(), functions);
    };
    let stage = request.stage.unwrap_or(last).min(last);
    let module_at = |i: Option<usize>| -> Option<&IRModule> {
        match i {
            None => run.input.as_ref(),
            Some(i) => run.stages[i].module.as_ref(),
        }
    };
    let graph_at = |i: Option<usize>| -> Result<Graph, String> {
        let module = module_at(i).ok_or("the pipeline gave no module")?;
        function_graph(module, Some(&name)).map_err(|e| e.to_string())
    };
    let after = match graph_at(Some(stage)) {
        Ok(g) => g,
        Err(e) => {
            return GraphView {
                stages,
                ..failed(e, functions)
            }
        }
    };
    let mut view = GraphView {
        function: name.clone(),
        functions,
        stage: Some(stage),
        ..GraphView::default()
    };
    if request.diff {
        let before = match graph_at(stage.checked_sub(1)) {
            Ok(g) => g,
            Err(e) => {
                return GraphView {
                    stages,
                    ..failed(e, view.functions)
                }
            }
        };
        let diff = diff_graphs(&run.stages[stage].pass, before, after);
        view.summary = Some(diff.summary());
        view.svg = render_diff_svg(&diff);
        view.graph = diff_json(&diff);
    } else {
        view.svg = render_svg(&after);
        view.graph = graph_json(&after);
    }
    if let (Ok(input), Ok(output)) = (graph_at(None), graph_at(Some(last))) {
        view.pipeline_summary = Some(diff_graphs(pipeline.trim(), input, output).summary());
    }
    view.stages = stages;
    view
}

/// The operator calls and fused functions of `@name` in the document.
pub fn function_counts(analysis: &Analysis, name: &str) -> Option<GraphCounts> {
    function_graph(analysis.module(), Some(name))
        .ok()
        .map(|g| g.counts())
}

/// The spans of the graph's nodes (both sides of a diff) in the document,
/// for the handler to turn into editor ranges: `(pointer to the node
/// object, span)`.
pub fn node_spans(analysis: &Analysis, view: &GraphView) -> Vec<(String, SourceSpan)> {
    let graph = &view.graph;
    // The graph's spans are in the function's file (its own, when lowering
    // was incremental).
    let file = analysis
        .module()
        .function(&view.function)
        .and_then(|f| f.expr().span())
        .map(|s| s.file);
    let resolve = |start: u64, end: u64| {
        let range = TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32));
        let range = match file {
            Some(file) => analysis.resolve(Span::new(file, range)).range,
            None => range,
        };
        SourceSpan {
            start: range.start().into(),
            end: range.end().into(),
        }
    };
    let mut out = Vec::new();
    let mut collect = |prefix: &str, nodes: Option<&Value>| {
        for (i, node) in nodes
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let span = node.get("span");
            let start = span.and_then(|s| s.get("start")).and_then(Value::as_u64);
            let end = span.and_then(|s| s.get("end")).and_then(Value::as_u64);
            if let (Some(start), Some(end)) = (start, end) {
                out.push((format!("{prefix}/nodes/{i}"), resolve(start, end)));
            }
        }
    };
    if graph.get("after").is_some() {
        collect("/before", graph.get("before").and_then(|g| g.get("nodes")));
        collect("/after", graph.get("after").and_then(|g| g.get("nodes")));
    } else {
        collect("", graph.get("nodes"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    const SRC: &str = "#[version = \"0.0.5\"]\n\
                       def @main(%x: Tensor[(1, 8), float32]) -> Tensor[(1, 8), float32] {\n  \
                       %0 = add(%x, 1f);\n  nn.relu(%0)\n}\n";

    #[test]
    fn the_document_function_is_drawn_with_spans_into_the_text() {
        let analysis = fixture::analysis(SRC);
        let view = graph_view(&analysis, None, &GraphRequest::default());
        assert_eq!(view.error, None);
        assert_eq!(view.function, "main");
        assert!(view.svg.starts_with("<svg"));
        let spans = node_spans(&analysis, &view);
        let texts: Vec<&str> = spans
            .iter()
            .map(|(_, s)| &SRC[s.start as usize..s.end as usize])
            .collect();
        assert!(texts.contains(&"nn.relu(%0)"), "{texts:?}");
        assert!(texts.contains(&"add(%x, 1f)"), "{texts:?}");
    }

    #[test]
    fn a_stage_diff_marks_the_fused_calls_and_sums_up() {
        let analysis = fixture::analysis(SRC);
        let view = graph_view(
            &analysis,
            None,
            &GraphRequest {
                pipeline: Some("FoldConstant, FuseOps".to_string()),
                stage: Some(1),
                diff: true,
                ..GraphRequest::default()
            },
        );
        assert_eq!(view.error, None);
        assert_eq!(view.stages.len(), 2);
        assert_eq!(
            view.summary.as_deref(),
            Some("FuseOps: 2 calls grouped into 1 primitive function")
        );
        assert!(view.graph.get("before").is_some() && view.graph.get("after").is_some());
        assert_eq!(
            view.pipeline_summary.as_deref(),
            Some("FoldConstant, FuseOps: 2 calls grouped into 1 primitive function")
        );
    }

    #[test]
    fn an_unknown_function_is_an_error_naming_the_functions() {
        let analysis = fixture::analysis(SRC);
        let view = graph_view(
            &analysis,
            None,
            &GraphRequest {
                function: Some("nope".to_string()),
                ..GraphRequest::default()
            },
        );
        assert!(view.error.is_some_and(|e| e.contains("@main")));
    }
}
