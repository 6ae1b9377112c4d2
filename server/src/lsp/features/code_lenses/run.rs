//! The "Run with random inputs" lens above each function: runs it on seeded
//! random inputs (the server's `relay.runFunction`, `relay run --random`'s
//! library calls); once it ran on the document's current text, the title
//! shows the result's shape, dtype and min/max/mean.

use super::{Lens, LensContext};
use crate::lsp::analysis::Analysis;
use crate::lsp::features::document_symbols::{document_symbols, SymbolKind};
use serde_json::json;

/// The server command the lens runs: `{uri, function}` (see
/// `crate::lsp::ext::RunFunctionArgs`).
pub const RUN_FUNCTION: &str = crate::lsp::ext::RUN_FUNCTION;

pub fn run_lenses(analysis: &Analysis, context: &LensContext) -> Vec<Lens> {
    document_symbols(analysis)
        .into_iter()
        .filter(|symbol| symbol.kind == SymbolKind::Function)
        .map(|symbol| {
            let function = symbol.name.trim_start_matches('@').to_string();
            let title = match context.function_runs.get(&function) {
                Some((version, summary)) if *version == analysis.version => {
                    format!("▶ Random inputs: {summary}")
                }
                _ => "▶ Run with random inputs".to_string(),
            };
            Lens {
                range: symbol.selection_range,
                title,
                command: Some(RUN_FUNCTION.to_string()),
                arguments: vec![json!({"uri": context.uri, "function": function})],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    #[test]
    fn each_function_gets_a_run_lens_showing_its_last_run_on_this_version() {
        let src = "#[version = \"0.0.5\"]\n\
                   def @f(%x: float32) -> float32 { add(%x, %x) }\n\
                   def @main(%y: float32) -> float32 { @f(%y) }\n\
                   def @g(%y: float32) -> float32 { %y }\n";
        let analysis = fixture::analysis(src);
        let context = LensContext {
            uri: "file:///m.relay".to_string(),
            function_runs: [
                (
                    "main".to_string(),
                    (
                        analysis.version,
                        "() float32 min 1 max 1 mean 1".to_string(),
                    ),
                ),
                // A run of an older version of the text says nothing now.
                ("g".to_string(), (analysis.version - 1, "stale".to_string())),
            ]
            .into(),
            ..LensContext::default()
        };
        let lenses = run_lenses(&analysis, &context);
        let titles: Vec<(&str, &str)> = lenses
            .iter()
            .map(|l| (&src[l.range], l.title.as_str()))
            .collect();
        assert_eq!(
            titles,
            [
                ("@f", "▶ Run with random inputs"),
                ("@main", "▶ Random inputs: () float32 min 1 max 1 mean 1"),
                ("@g", "▶ Run with random inputs"),
            ]
        );
        assert_eq!(lenses[1].command.as_deref(), Some("relay.runFunction"));
        assert_eq!(
            lenses[1].arguments[0],
            json!({"uri": "file:///m.relay", "function": "main"})
        );
    }
}
