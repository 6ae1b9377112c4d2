//! The graph lenses above each function: "Graph" (the client's
//! `relay.showGraph`), "Run pipeline ▸ P" (the client's pipeline explorer)
//! when a default pipeline is set — after a run, with what it did ("▸ FuseOps:
//! 3 calls grouped into 1 primitive function") — and the size of the
//! function ("12 calls · 3 fused").

use super::{Lens, LensContext};
use crate::lsp::analysis::Analysis;
use crate::lsp::features::document_symbols::{document_symbols, SymbolKind};
use crate::lsp::features::graph_view::function_counts;
use serde_json::json;

/// The client command that opens the graph of a function:
/// `{uri, function}`.
pub const SHOW_GRAPH: &str = "relay.showGraph";
/// The client command that opens the pipeline explorer: `{uri, function,
/// pipeline}`.
pub const PIPELINE_EXPLORER: &str = "relay.pipelineExplorer";

pub fn graph_lenses(analysis: &Analysis, context: &LensContext) -> Vec<Lens> {
    let mut out = Vec::new();
    for symbol in document_symbols(analysis) {
        if symbol.kind != SymbolKind::Function {
            continue;
        }
        let function = symbol.name.trim_start_matches('@').to_string();
        let range = symbol.selection_range;
        let args = json!({"uri": context.uri, "function": function});
        out.push(Lens {
            range,
            title: "Graph".to_string(),
            command: Some(SHOW_GRAPH.to_string()),
            arguments: vec![args],
        });
        let last_run = context.pipeline_runs.get(&function);
        if let Some(pipeline) = context
            .default_pipeline
            .as_ref()
            .or(last_run.map(|(p, _)| p))
        {
            let title = match last_run {
                Some((ran, summary)) if ran == pipeline => format!("Run pipeline ▸ {summary}"),
                _ => format!("Run pipeline ▸ {pipeline}"),
            };
            out.push(Lens {
                range,
                title,
                command: Some(PIPELINE_EXPLORER.to_string()),
                arguments: vec![
                    json!({"uri": context.uri, "function": function, "pipeline": pipeline}),
                ],
            });
        }
        if let Some(counts) = function_counts(analysis, &function) {
            let calls = match counts.op_calls {
                1 => "1 call".to_string(),
                n => format!("{n} calls"),
            };
            let title = if counts.primitive_functions > 0 {
                format!("{calls} · {} fused", counts.primitive_functions)
            } else {
                calls
            };
            out.push(Lens {
                range,
                title,
                command: None,
                arguments: Vec::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    #[test]
    fn each_function_gets_graph_pipeline_and_size_lenses() {
        let src = "#[version = \"0.0.5\"]\n\
                   def @f(%x: float32) -> float32 {\n  add(%x, %x)\n}\n\
                   def @main(%y: float32) -> float32 {\n  %0 = fn (%p: float32, Primitive=1) -> float32 { negative(%p) };\n  %1 = %0(%y);\n  @f(%1)\n}\n";
        let analysis = fixture::analysis(src);
        let lenses = graph_lenses(
            &analysis,
            &LensContext {
                uri: "file:///m.relay".to_string(),
                default_pipeline: Some("FuseOps".to_string()),
                pipeline_runs: [(
                    "main".to_string(),
                    ("FuseOps".to_string(), "FuseOps: 1 call grouped".to_string()),
                )]
                .into(),
                ..LensContext::default()
            },
        );
        let titles: Vec<(&str, &str)> = lenses
            .iter()
            .map(|l| (&src[l.range], l.title.as_str()))
            .collect();
        assert_eq!(
            titles,
            [
                ("@f", "Graph"),
                ("@f", "Run pipeline ▸ FuseOps"),
                ("@f", "1 call"),
                ("@main", "Graph"),
                ("@main", "Run pipeline ▸ FuseOps: 1 call grouped"),
                ("@main", "1 call · 1 fused"),
            ]
        );
        assert_eq!(lenses[0].arguments[0]["function"], "f");
    }
}
