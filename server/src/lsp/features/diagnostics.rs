//! Diagnostics: what the editor shows for a document — the analysis's
//! syntax, name and type errors (sorted, with their codes, as `relay check`
//! reports them) followed by what the project's on-save pipelines reported
//! for the same version.

use crate::lsp::analysis::Analysis;
use crate::lsp::pipeline::{run_pipeline_until, Obsolete};
use crate::project::Project;
use relay_passes::diagnostic::{Code, Diagnostic};
use relay_passes::source::{FileId, Span};
use relay_syntax::SyntaxKind;

/// The diagnostics to publish: the analysis's, then the on-save pipelines'.
pub fn published<'a>(
    analysis: &'a Analysis,
    on_save: &'a [Diagnostic],
) -> impl Iterator<Item = &'a Diagnostic> {
    analysis.diagnostics.iter().chain(on_save)
}

/// The diagnostics, log lines and blocked external commands of the
/// project's on-save pipelines.
#[derive(Debug, Default)]
pub struct OnSaveReport {
    pub diagnostics: Vec<Diagnostic>,
    pub log: Vec<String>,
    pub blocked: Vec<String>,
}

impl OnSaveReport {
    /// The pipelines could not run at all: one diagnostic says why.
    pub fn failed(diagnostic: Diagnostic) -> OnSaveReport {
        OnSaveReport {
            diagnostics: vec![diagnostic],
            ..OnSaveReport::default()
        }
    }
}

/// Runs the project's on-save pipelines: their diagnostics (tagged with the
/// pipeline's name; a failure placed at the first definition, where the
/// editor can show it), log lines and blocked external commands.
pub fn on_save(analysis: &Analysis, project: &Project) -> OnSaveReport {
    on_save_until(analysis, project, None)
}

/// [`on_save`], stopped before the next pass (and the next pipeline) once
/// `obsolete` says a newer edit made the result useless; what a stopped
/// run reports is not meant to be shown.
pub fn on_save_until(
    analysis: &Analysis,
    project: &Project,
    obsolete: Option<Obsolete>,
) -> OnSaveReport {
    let mut diagnostics = Vec::new();
    let mut log = Vec::new();
    let mut blocked = Vec::new();
    for name in &project.on_save {
        if obsolete.as_ref().is_some_and(|o| o()) {
            break;
        }
        let text = project.pipelines.get(name).cloned().unwrap_or_default();
        let result = run_pipeline_until(analysis, Some(project), name, false, obsolete.clone());
        log.push(format!("on-save pipeline `{name}` ({text}):"));
        log.extend(result.log);
        for command in result.blocked {
            if !blocked.contains(&command) {
                blocked.push(command);
            }
        }
        for mut d in result.diagnostics {
            d.message = format!("{} [on-save pipeline `{name}`]", d.message);
            diagnostics.push(d);
        }
        if let Some(error) = result.error {
            let first_line = error.lines().next().unwrap_or("").to_string();
            let mut d = Diagnostic::error(
                Code::PassFailed,
                format!("on-save pipeline `{name}` failed: {first_line}"),
            );
            // At the first definition, if any: something the editor can show.
            if let Some(def) = analysis
                .root()
                .children()
                .find(|n| n.kind() == SyntaxKind::DEF)
            {
                let name_token = def
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| t.kind() == SyntaxKind::GLOBAL);
                let range = name_token.map_or(def.text_range(), |t| t.text_range());
                d = d.with_span(Span::new(FileId(0), range));
            }
            if error.contains('\n') {
                d = d.with_note(error);
            }
            diagnostics.push(d);
        }
    }
    OnSaveReport {
        diagnostics,
        log,
        blocked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// Marks each published diagnostic with its code.
    fn check(marked: &str) {
        fixture::check(marked, |analysis, _| {
            published(analysis, &[])
                .filter_map(|d| Some((d.span?.range, d.code.id().to_string())))
                .collect()
        });
    }

    /// Issue 14, defect 4: a name error in one function does not hide the
    /// type errors of the others; diagnostics come sorted, with codes.
    #[test]
    fn a_name_error_does_not_hide_other_functions_type_errors() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @good(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) { <E0202>add(%a, %b)</E0202> }\n\
             def @bad(%x: float32) { add(%x, <E0101>%y</E0101>) }\n",
        );
    }

    #[test]
    fn syntax_errors_and_a_clean_file() {
        check("#[version = \"0.0.5\"]\ndef @f(%x: float32) { %x }\n");
    }

    #[test]
    fn a_failing_on_save_pipeline_is_reported_at_the_first_definition() {
        let fixture = fixture::parse(
            "#[version = \"0.0.5\"]\ntype T { A }\ndef <at>@f</at>(%x: float32) { %x }\n",
        );
        let analysis = fixture::analysis(&fixture.text);
        let project = Project {
            on_save: vec!["NoSuchPass".to_string()],
            ..Project::default()
        };
        let report = on_save(&analysis, &project);
        assert_eq!(report.diagnostics.len(), 1, "{:?}", report.diagnostics);
        let d = &report.diagnostics[0];
        assert!(d
            .message
            .starts_with("on-save pipeline `NoSuchPass` failed: "));
        assert_eq!(d.span.map(|s| s.range), Some(fixture.range("at")));
        assert_eq!(report.log[0], "on-save pipeline `NoSuchPass` ():");
    }
}
