//! Code actions: the quick fixes of the diagnostics in the range, then the
//! rewrites — the project's pipelines, the passes that would rewrite the
//! function under the cursor keeping its signature (for a function pass in a
//! module of several functions, also "to @f only"), and "Apply pass…" for
//! clients that pick a pass themselves (every changing pass first). A file with syntax or name errors gets no rewrites.

use super::cursor::enclosing_def;
use super::quick_fixes::{quick_fixes, QuickFix};
use crate::lsp::analysis::Analysis;
use crate::lsp::applicable::{self, applicable_passes};
use crate::project::Project;
use relay_passes::diagnostic::Layer;
use relay_passes::pass_manager::registry;
use relay_syntax::TextRange;
use std::sync::Arc;

/// Which kinds of action the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    pub quick_fixes: bool,
    pub rewrites: bool,
}

/// One code action, in the order they are offered.
pub enum CodeAction {
    QuickFix(QuickFix),
    /// Runs a pipeline (a pass, or a pipeline of `relay.toml`) through
    /// `relay.applyPipeline`.
    ApplyPipeline {
        title: String,
        pipeline: String,
        /// Apply the result to this global function only.
        function: Option<String>,
    },
    /// "Apply pass…": the client shows the pass list (`relay.applyPass`),
    /// the passes that change the code first.
    PickPass {
        title: String,
        applicable: Vec<String>,
    },
}

/// The actions for `range`. `project` is asked for only when rewrites are
/// offered (loading it registers the project's external passes).
pub fn code_actions(
    analysis: &Arc<Analysis>,
    range: TextRange,
    wanted: Wanted,
    client_picks_pass: bool,
    project: impl FnOnce() -> Option<Project>,
) -> Vec<CodeAction> {
    let mut out = Vec::new();
    if wanted.quick_fixes {
        out.extend(
            quick_fixes(analysis, range)
                .into_iter()
                .map(CodeAction::QuickFix),
        );
    }
    let blocked = analysis
        .diagnostics
        .iter()
        .any(|d| d.is_error() && matches!(d.layer, Layer::Syntax | Layer::Name));
    if blocked || !wanted.rewrites {
        return out;
    }
    let apply =
        |title: String, pipeline: &str, function: Option<String>| CodeAction::ApplyPipeline {
            title,
            pipeline: pipeline.to_string(),
            function,
        };
    let function = enclosing_def(analysis, range);
    let project = project();
    if let Some(project) = &project {
        for name in project.pipelines.keys() {
            out.push(apply(
                format!("Run the relay.toml pipeline `{name}`"),
                name,
                None,
            ));
        }
    }
    // Only the passes that change this function (or the module); the
    // others are behind "Apply pass…".
    let applicable = applicable_passes(
        analysis,
        function.as_deref(),
        project.as_ref(),
        applicable::CHECK_BUDGET,
    );
    let several_functions = analysis.lowered.function_count() > 1;
    for name in &applicable.changing {
        out.push(apply(format!("Apply {name}"), name, None));
        let is_function_pass =
            registry::lookup(name).is_some_and(|spec| spec.kind == registry::PassKind::Function);
        if let (true, true, Some(f)) = (is_function_pass, several_functions, &function) {
            out.push(apply(
                format!("Apply {name} to @{f} only"),
                name,
                Some(f.clone()),
            ));
        }
    }
    if client_picks_pass {
        out.push(CodeAction::PickPass {
            title: "Apply pass…".to_string(),
            applicable: applicable.all_changing(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    fn titles(marked: &str, wanted: Wanted, picker: bool, project: Option<Project>) -> Vec<String> {
        let fixture = fixture::parse(marked);
        let analysis = Arc::new(fixture::analysis(&fixture.text));
        code_actions(&analysis, fixture.range("at"), wanted, picker, || project)
            .into_iter()
            .map(|action| match action {
                CodeAction::QuickFix(fix) => fix.title,
                CodeAction::ApplyPipeline { title, .. } | CodeAction::PickPass { title, .. } => {
                    title
                }
            })
            .collect()
    }

    const ALL: Wanted = Wanted {
        quick_fixes: true,
        rewrites: true,
    };

    const TWO_FUNCTIONS: &str = "#[version = \"0.0.5\"]\n\
         def @main(%x: float32) -> float32 {\n  %0 = add(1f, 2f);\n  <at>multiply(%x, %0)</at>\n}\n\
         def @other(%y: float32) -> float32 { %y }\n";

    #[test]
    fn passes_that_change_the_function_under_the_cursor() {
        let found = titles(TWO_FUNCTIONS, ALL, true, None);
        assert!(
            found.contains(&"Apply FoldConstant".to_string()),
            "{found:?}"
        );
        assert!(
            found.contains(&"Apply FoldConstant to @main only".to_string()),
            "{found:?}"
        );
        assert_eq!(found.last().map(String::as_str), Some("Apply pass…"));
        // A pass that leaves @main alone is not offered.
        assert!(
            !found.iter().any(|t| t == "Apply DeadCodeElimination"),
            "{found:?}"
        );
    }

    #[test]
    fn project_pipelines_come_first_and_the_picker_only_when_asked() {
        let mut project = Project::default();
        project
            .pipelines
            .insert("cleanup".to_string(), "FoldConstant".to_string());
        let found = titles(TWO_FUNCTIONS, ALL, false, Some(project));
        assert_eq!(found[0], "Run the relay.toml pipeline `cleanup`");
        assert!(!found.iter().any(|t| t == "Apply pass…"));
    }

    #[test]
    fn quick_fixes_only_and_no_rewrites_of_a_file_with_name_errors() {
        let marked = "#[version = \"0.0.5\"]\ndef @f(%x: float32) { <at>add(%x, %y)</at> }\n";
        let found = titles(marked, ALL, true, None);
        assert_eq!(found, ["Declare `%y` as a parameter of @f"]);
        let rewrites_only = Wanted {
            quick_fixes: false,
            rewrites: true,
        };
        assert!(titles(marked, rewrites_only, true, None).is_empty());
        let fixes_only = Wanted {
            quick_fixes: true,
            rewrites: false,
        };
        assert_eq!(
            titles(TWO_FUNCTIONS, fixes_only, true, None),
            Vec::<String>::new()
        );
    }
}
