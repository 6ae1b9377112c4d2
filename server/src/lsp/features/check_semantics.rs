//! "Check pass semantics" (`relay.checkSemantics`): runs a pipeline on the
//! document with the library's `SemanticCheck` instrument — what `relay opt
//! --check-semantics --bisect` runs — and reports whether every pass kept
//! the entry function's results on seeded random inputs, or the first pass
//! that changed them: the input seed, the first differing element with
//! both values, the reproducer directory, and a diagnostic at the function
//! whose rewrite changed the result (the entry function when bisection
//! cannot say).

use crate::lsp::analysis::Analysis;
use crate::lsp::features::document_symbols::{document_symbols, SymbolKind};
use crate::lsp::pipeline::run_pipeline_with;
use crate::project::Project;
use relay_passes::diagnostic::{Code, Diagnostic};
use relay_passes::interp::check::{CheckMode, CheckOptions, Finding, SemanticCheck};
use relay_passes::interp::compare::Difference;
use relay_passes::interp::print::scalar_text;
use relay_passes::interp::Limits;
use relay_passes::pass_manager::{LogSink, PassInstrument};
use relay_passes::source::{FileId, Span};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What to check.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub pipeline: String,
    /// How many random inputs (seeds `first_seed..first_seed + inputs`).
    pub inputs: u64,
    pub first_seed: u64,
    /// The global function run before and after each pass.
    pub entry: String,
    /// Where the reproducer of a difference is written.
    pub reproducer_dir: Option<PathBuf>,
    pub limits: Limits,
}

/// The first pass that changed the result.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PassDifference {
    /// The pass as pipeline text.
    pub pass: String,
    pub seed: u64,
    /// The whole report, as `relay opt --check-semantics` prints it.
    pub message: String,
    /// The first differing element: where in the result (`output.0[1, 2]`)
    /// and its value before and after the pass (none when the structure
    /// differs or the module no longer runs).
    pub element: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    pub reproducer: Option<String>,
    /// The first function whose rewrite changed the result (bisection).
    pub function: Option<String>,
}

/// The answer of a check.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CheckResult {
    pub pipeline: String,
    /// Every compared pass agreed (and the pipeline ran to its end).
    pub agree: bool,
    /// Passes compared, and how many of them agreed.
    pub checked: usize,
    pub agreed: usize,
    /// Passes that agreed only within range (the computation left its
    /// float type's range on a random input and the results agree on it
    /// scaled down): neither agreement nor a difference; `summary` says
    /// what was seen, and in which float type.
    pub within_range: usize,
    /// Passes that agreed only within sensitivity (they moved the result
    /// beyond the tolerance, but by at most twice what one rounding unit
    /// of the float inputs moves it): neither agreement nor a difference;
    /// `summary` says the sensitivity and the pass's change.
    pub within_sensitivity: usize,
    /// Passes that left the module unchanged (nothing to compare), and
    /// those that could not be checked (see `summary` for why).
    pub unchanged: usize,
    pub not_checked: usize,
    /// One line for a notification (see [`CheckResult::headline`]).
    pub headline: String,
    /// The check's summary lines (counts, tolerances, what was not checked).
    pub summary: String,
    pub difference: Option<PassDifference>,
    /// Why the pipeline did not run to its end otherwise (a pass failed,
    /// the time limit, cancellation).
    pub error: Option<String>,
    /// The check was stopped from outside (time limit, cancellation).
    pub stopped: bool,
    #[serde(skip)]
    pub diagnostics: Vec<Diagnostic>,
    #[serde(skip)]
    pub log: Vec<String>,
    #[serde(skip)]
    pub blocked: Vec<String>,
}

impl CheckResult {
    /// One line for a notification: the difference, the error, or the
    /// agreement with its counts.
    pub fn headline(&self) -> String {
        match (&self.difference, &self.error) {
            (Some(d), _) => d.message.clone(),
            (None, Some(e)) => format!("{}: {}", self.pipeline, e.lines().next().unwrap_or("")),
            (None, None) if self.within_range > 0 => {
                self.qualified_agreement("range", self.within_range)
            }
            (None, None) if self.within_sensitivity > 0 => {
                self.qualified_agreement("sensitivity", self.within_sensitivity)
            }
            (None, None) => {
                let mut text = format!(
                    "{}: the results agree ({} compared, {} agree; {} left the module unchanged",
                    self.pipeline,
                    passes(self.checked),
                    self.agreed,
                    self.unchanged
                );
                if self.not_checked > 0 {
                    text.push_str(&format!("; {} not checked", self.not_checked));
                }
                text.push(')');
                text
            }
        }
    }

    /// The headline of a check whose passes agreed, `count` of them only
    /// within `qualifier` ("range" or "sensitivity"): the counts, then the
    /// first such pass's line of the summary, which says why.
    fn qualified_agreement(&self, qualifier: &str, count: usize) -> String {
        let marker = format!("agree within {qualifier} ");
        let first = self
            .summary
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(marker.as_str()))
            .unwrap_or("");
        format!(
            "{}: the results agree only within {qualifier} ({} compared, {} agree, {count} only \
             within {qualifier}; {} left the module unchanged): {first}",
            self.pipeline,
            passes(self.checked),
            self.agreed,
            self.unchanged
        )
    }
}

/// "1 pass", "3 passes".
fn passes(n: usize) -> String {
    format!("{n} pass{}", if n == 1 { "" } else { "es" })
}

/// The element, before and after of a finding.
fn element_values(finding: &Finding) -> (Option<String>, Option<String>, Option<String>) {
    match finding {
        Finding::Differs(Difference::Element {
            path,
            index,
            before,
            after,
            dtype,
            ..
        }) => {
            let at: Vec<String> = index.iter().map(i64::to_string).collect();
            (
                Some(format!("output{path}[{}]", at.join(", "))),
                Some(scalar_text(*before, *dtype)),
                Some(scalar_text(*after, *dtype)),
            )
        }
        Finding::Differs(Difference::Structure { before, after }) => {
            (None, Some(before.clone()), Some(after.clone()))
        }
        Finding::FailsAfter(error) => (None, None, Some(format!("fails: {error}"))),
        Finding::GradientDiffers(what) => (Some("gradients".into()), None, Some(what.clone())),
    }
}

/// The range of `@name`'s name in the document.
fn function_name_range(analysis: &Analysis, name: &str) -> Option<relay_syntax::TextRange> {
    document_symbols(analysis)
        .into_iter()
        .find(|s| s.kind == SymbolKind::Function && s.name.trim_start_matches('@') == name)
        .map(|s| s.selection_range)
}

/// Runs the check.
pub fn check_semantics(
    analysis: &Analysis,
    project: Option<&Project>,
    request: &CheckRequest,
) -> CheckResult {
    let mut result = run_check(analysis, project, request);
    result.headline = result.headline();
    result
}

fn run_check(
    analysis: &Analysis,
    project: Option<&Project>,
    request: &CheckRequest,
) -> CheckResult {
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink_log = log.clone();
    let sink: LogSink = Arc::new(move |text: &str| {
        sink_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text.to_string())
    });
    let check = Arc::new(SemanticCheck::new(CheckOptions {
        mode: CheckMode::EachPass,
        inputs: request.inputs,
        first_seed: request.first_seed,
        entry: request.entry.clone(),
        reproducer_dir: request.reproducer_dir.clone(),
        bisect: true,
        limits: request.limits.clone(),
        log: Some(sink),
        output_cache: None,
    }));
    let run = run_pipeline_with(
        analysis,
        project,
        &request.pipeline,
        false,
        vec![check.clone() as Arc<dyn PassInstrument>],
        None,
    );
    let stats = check.stats();
    let mut result = CheckResult {
        pipeline: request.pipeline.clone(),
        checked: stats.checked,
        agreed: stats.agreed,
        within_range: stats.within_range.len(),
        within_sensitivity: stats.within_sensitivity.len(),
        unchanged: stats.unchanged,
        not_checked: stats.not_checked.len(),
        summary: stats.render(),
        log: run.log,
        blocked: run.blocked,
        ..CheckResult::default()
    };
    result.log.extend(std::mem::take(
        &mut *log.lock().unwrap_or_else(|e| e.into_inner()),
    ));
    if let Some(report) = check.report() {
        let (element, before, after) = element_values(&report.finding);
        let function = report
            .bisect
            .as_ref()
            .and_then(|b| b.as_ref().ok())
            .cloned();
        let mut message = report.to_string();
        if let Some(dir) = &report.reproducer {
            message.push_str(&format!("; reproducer in {}", dir.display()));
        }
        let at = function.as_deref().unwrap_or(&request.entry);
        if let Some(range) = function_name_range(analysis, at) {
            result.diagnostics.push(
                Diagnostic::error(Code::PassFailed, format!("semantic check: {message}"))
                    .with_span(Span::new(FileId(0), range)),
            );
        }
        result.difference = Some(PassDifference {
            pass: report.pass.clone(),
            seed: report.seed,
            message,
            element,
            before,
            after,
            reproducer: report.reproducer.map(|d| d.display().to_string()),
            function,
        });
        return result;
    }
    if let Some(why) = check.stopped() {
        result.stopped = true;
        result.error = Some(why);
        return result;
    }
    if let Some(error) = run.error {
        result.error = Some(error);
        result.diagnostics = run.diagnostics;
        return result;
    }
    result.agree = result.within_range == 0 && result.within_sensitivity == 0;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    fn request(pipeline: &str, dir: Option<PathBuf>) -> CheckRequest {
        CheckRequest {
            pipeline: pipeline.to_string(),
            inputs: 2,
            first_seed: 0,
            entry: "main".to_string(),
            reproducer_dir: dir,
            limits: Limits::default(),
        }
    }

    #[test]
    fn a_pipeline_that_keeps_the_results_agrees() {
        let analysis = fixture::analysis(
            "#[version = \"0.0.5\"]\n\
             def @main(%x: Tensor[(4,), float32]) {\n  \
             %0 = add(1f, 2f);\n  multiply(%x, %0)\n}\n",
        );
        let result = check_semantics(
            &analysis,
            None,
            &request("FoldConstant, DeadCodeElimination", None),
        );
        assert!(result.agree, "{result:?}");
        assert_eq!(result.difference, None);
        assert!(result.checked >= 1, "{result:?}");
        assert_eq!(result.checked, result.agreed);
        assert!(
            result
                .headline
                .starts_with("FoldConstant, DeadCodeElimination: the results agree ("),
            "{}",
            result.headline
        );
        assert!(result.diagnostics.is_empty());
    }

    #[test]
    fn a_float16_overflow_agrees_only_within_range() {
        // Beyond float16's range on the random input (up to ~5e5), within
        // it scaled down: ToMixedPrecision's float16 overflow is neither
        // agreement nor a difference.
        let analysis = fixture::analysis(
            "#[version = \"0.0.5\"]\n\
             def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) {\n  \
             %0 = nn.dense(%x, %w, units=4);\n  multiply(%0, 60000f)\n}\n",
        );
        let result = check_semantics(&analysis, None, &request("ToMixedPrecision", None));
        assert!(!result.agree, "{result:?}");
        assert_eq!(result.difference, None);
        assert_eq!(result.within_range, 1, "{result:?}");
        assert!(
            result
                .headline
                .starts_with("ToMixedPrecision: the results agree only within range (")
                && result.headline.contains(
                    "(ToMixedPrecision): on the input of seed 0 the float16 computation goes out of range"
                ),
            "{}",
            result.headline
        );
        assert!(result.diagnostics.is_empty());
    }

    #[test]
    fn a_rounding_change_in_an_ill_conditioned_module_agrees_only_within_sensitivity() {
        // SimplifyExpr's `x * rsqrt(y)` for `x / sqrt(y)` changes the
        // rounding; `sin` of it times 1e4 amplifies that beyond the
        // tolerance, no further than a rounding unit of the inputs does.
        let analysis = fixture::analysis(
            "#[version = \"0.0.5\"]\n\
             def @main(%x: Tensor[(64), float32], %y: Tensor[(64), float32]) {\n  \
             %0 = divide(%x, sqrt(%y));\n  sin(multiply(%0, 1e4f))\n}\n",
        );
        let result = check_semantics(&analysis, None, &request("SimplifyExpr", None));
        assert!(!result.agree, "{result:?}");
        assert_eq!(result.difference, None);
        assert_eq!(
            (result.within_range, result.within_sensitivity),
            (0, 1),
            "{result:?}"
        );
        assert!(
            result
                .headline
                .starts_with("SimplifyExpr: the results agree only within sensitivity (")
                && result
                    .headline
                    .contains("when the float inputs move by one rounding unit; the pass moved it"),
            "{}",
            result.headline
        );
        assert!(result.diagnostics.is_empty());
    }

    #[test]
    fn a_check_past_its_time_limit_is_stopped_not_a_difference() {
        let analysis = fixture::analysis(
            "#[version = \"0.0.5\"]\n\
             def @count(%n: int32) -> int32 {\n  \
             if (less(%n, 1)) { %n } else { @count(subtract(%n, 1)) }\n}\n\
             def @main() -> int32 { @count(5000) }\n",
        );
        let mut request = request("ToANormalForm", None);
        request.limits.deadline = Some(std::time::Instant::now());
        let result = check_semantics(&analysis, None, &request);
        assert!(result.stopped, "{result:?}");
        assert!(!result.agree);
        assert_eq!(result.difference, None);
        assert!(result.diagnostics.is_empty());
        assert!(
            result
                .headline
                .contains("semantic check stopped: the run took longer than its time limit"),
            "{}",
            result.headline
        );
    }

    #[test]
    fn a_pipeline_that_fails_is_an_error_not_a_difference() {
        let analysis = fixture::analysis("#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x }\n");
        let result = check_semantics(&analysis, None, &request("NoSuchPass", None));
        assert!(!result.agree);
        assert_eq!(result.difference, None);
        assert!(
            result.error.as_deref().unwrap_or("").contains("NoSuchPass"),
            "{result:?}"
        );
    }
}
