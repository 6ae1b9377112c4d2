//! Pass output (`relay/passOutput`): the module printed after each
//! top-level pass of a pipeline, with its time and whether it changed, for
//! an editor to show side by side.

use crate::lsp::analysis::Analysis;
use crate::lsp::pipeline::{run_pipeline, RunResult, Stage};
use crate::project::Project;
use serde::Serialize;

/// The answer of `relay/passOutput`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct PassOutput {
    pub stages: Vec<Stage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs a pipeline stage by stage; also returns the run (its log and the
/// external commands it did not run).
pub fn pass_output(
    analysis: &Analysis,
    project: Option<&Project>,
    pipeline: &str,
) -> (PassOutput, RunResult) {
    let mut result = run_pipeline(analysis, project, pipeline.trim(), true);
    let output = PassOutput {
        stages: std::mem::take(&mut result.stages),
        error: result.error.clone(),
    };
    (output, result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    const SRC: &str = "#[version = \"0.0.5\"]\n\
                       def @main(%x: float32) -> float32 {\n  %0 = add(1f, 2f);\n  multiply(%x, %0)\n}\n";

    #[test]
    fn one_stage_per_top_level_pass_saying_whether_it_changed() {
        let (output, _) = pass_output(
            &fixture::analysis(SRC),
            None,
            " FoldConstant, DeadCodeElimination ",
        );
        assert_eq!(output.error, None);
        let stages: Vec<(&str, bool)> = output
            .stages
            .iter()
            .map(|s| (s.pass.as_str(), s.changed))
            .collect();
        assert_eq!(
            stages,
            [("FoldConstant", true), ("DeadCodeElimination", false)]
        );
        assert!(output.stages[0].text.contains("multiply(%x, 3f)"));
    }

    #[test]
    fn errors_are_reported_in_the_answer() {
        let (output, _) = pass_output(&fixture::analysis(SRC), None, "NoSuchPass");
        assert!(output.stages.is_empty());
        assert!(output.error.is_some_and(|e| e.contains("NoSuchPass")));
    }
}
