//! "Run with random inputs" (`relay.runFunction`): runs one global function
//! of the document on seeded random inputs with the reference interpreter —
//! the same library calls as `relay run --entry F --random SEED`
//! (InferType, `interp::bind_arguments`, `interp::run`) — and summarises
//! the result per tensor (shape, dtype, min/max/mean), or says where the
//! run failed.

use crate::lsp::analysis::Analysis;
use crate::lsp::pipeline::typed_input;
use relay_passes::diagnostic::{Code, Diagnostic};
use relay_passes::interp::summary::{summarize, TensorSummary};
use relay_passes::interp::{self, Limits};
use relay_passes::source::{FileId, Span};
use relay_syntax::{TextRange, TextSize};
use std::time::Instant;

/// What a run gave.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionRun {
    pub function: String,
    pub seed: u64,
    /// One summary per tensor of the result (empty on failure).
    pub outputs: Vec<TensorSummary>,
    /// Why the run failed, with the range of the failing expression in the
    /// document when it has one.
    pub error: Option<(String, Option<TextRange>)>,
    /// The run stopped at its time limit or was cancelled: no statement
    /// about the program.
    pub stopped: bool,
    pub elapsed_ms: f64,
}

impl FunctionRun {
    fn failed(function: &str, seed: u64, message: String) -> FunctionRun {
        FunctionRun {
            function: function.to_string(),
            seed,
            outputs: Vec::new(),
            error: Some((message, None)),
            stopped: false,
            elapsed_ms: 0.0,
        }
    }

    /// One line for a code lens or a message: the outputs' summaries, or
    /// the error's first line.
    pub fn summary(&self) -> String {
        match &self.error {
            Some((message, _)) => {
                format!("✗ {}", message.lines().next().unwrap_or_default())
            }
            None if self.outputs.is_empty() => "() (no tensor in the result)".to_string(),
            None => self
                .outputs
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" · "),
        }
    }

    /// The diagnostics to show for the run: its error at the failing
    /// expression (a failure without a place shows nothing: the message
    /// says it), none when it ran or was stopped.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match &self.error {
            Some((message, Some(range))) if !self.stopped => vec![Diagnostic::error(
                Code::RuntimeError,
                format!("running @{} on random inputs: {message}", self.function),
            )
            .with_span(Span::new(FileId(0), *range))],
            _ => Vec::new(),
        }
    }
}

/// Runs `@function` of the document on the random inputs of `seed`.
pub fn run_function(analysis: &Analysis, function: &str, seed: u64, limits: Limits) -> FunctionRun {
    let module = match typed_input(analysis) {
        Ok(module) => module,
        Err((message, diagnostics)) => {
            let first = diagnostics.first().map(|d| format!(": {}", d.message));
            return FunctionRun::failed(
                function,
                seed,
                format!("{message}{}", first.unwrap_or_default()),
            );
        }
    };
    let Some(f) = module.function(function) else {
        return FunctionRun::failed(function, seed, format!("the module has no @{function}"));
    };
    let start = Instant::now();
    let arguments = match interp::bind_arguments(f, &[], Some(seed), limits.clone()) {
        Ok(arguments) => arguments,
        Err(message) => return FunctionRun::failed(function, seed, message),
    };
    let result = interp::run(&module, function, arguments, limits);
    let elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
    match result {
        Ok(value) => FunctionRun {
            function: function.to_string(),
            seed,
            outputs: summarize(&value),
            error: None,
            stopped: false,
            elapsed_ms,
        },
        Err(error) => {
            let text_len = TextSize::of(analysis.text());
            // Spans of the document only (a module a pass built has none).
            // IR spans are relative to their definition: resolved first.
            let range = error
                .span
                .map(|s| analysis.resolve(s))
                .filter(|s| s.file == FileId(0) && s.range.end() <= text_len)
                .map(|s| s.range);
            FunctionRun {
                function: function.to_string(),
                seed,
                outputs: Vec::new(),
                stopped: error.stopped,
                error: Some((error.to_string(), range)),
                elapsed_ms,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    #[test]
    fn a_function_runs_and_its_result_is_summarised() {
        let analysis = fixture::analysis(
            "#[version = \"0.0.5\"]\n\
             def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n  \
             nn.relu(%x)\n}\n",
        );
        let run = run_function(&analysis, "main", 0, Limits::default());
        assert_eq!(run.error, None);
        assert_eq!(run.outputs.len(), 1);
        let out = &run.outputs[0];
        assert_eq!(
            (out.shape.as_slice(), out.dtype.as_str()),
            (&[2, 3][..], "float32")
        );
        // relu of inputs in [-1, 1): nothing below 0 or from 1 up.
        assert!(out.min.unwrap() >= 0.0 && out.max.unwrap() < 1.0, "{out}");
        assert!(
            run.summary().starts_with("(2, 3) float32 min "),
            "{}",
            run.summary()
        );
        assert!(run.diagnostics().is_empty());
    }

    #[test]
    fn the_same_seed_gives_the_same_summary_and_another_seed_another() {
        let analysis = fixture::analysis(
            "#[version = \"0.0.5\"]\ndef @f(%x: Tensor[(16,), float32]) { add(%x, 1f) }\n",
        );
        let a = run_function(&analysis, "f", 7, Limits::default());
        let b = run_function(&analysis, "f", 7, Limits::default());
        let c = run_function(&analysis, "f", 8, Limits::default());
        assert_eq!(a.outputs, b.outputs);
        assert_ne!(a.outputs, c.outputs);
    }

    #[test]
    fn a_run_time_error_is_placed_at_the_failing_expression() {
        fixture::check(
            "#[version = \"0.0.5\"]\n\
             type List[A] { Cons(A, List[A]), Nil }\n\
             def @main() -> float32 { <E0305>match? (Nil) { Cons(%x, _) => %x }</E0305> }\n",
            |analysis, _| {
                let run = run_function(analysis, "main", 0, Limits::default());
                assert!(run.summary().starts_with("✗ "), "{}", run.summary());
                run.diagnostics()
                    .iter()
                    .map(|d| (d.span.unwrap().range, d.code.id().to_string()))
                    .collect()
            },
        );
    }

    #[test]
    fn a_missing_function_is_an_error_without_a_place() {
        let analysis = fixture::analysis("#[version = \"0.0.5\"]\ndef @main(%x: float32) { %x }\n");
        let run = run_function(&analysis, "nope", 0, Limits::default());
        assert_eq!(
            run.error,
            Some(("the module has no @nope".to_string(), None))
        );
        assert!(run.diagnostics().is_empty());
    }

    #[test]
    fn a_cancelled_run_is_stopped_and_shows_no_diagnostic() {
        let analysis = fixture::analysis(
            "#[version = \"0.0.5\"]\n\
             def @count(%n: int32) -> int32 {\n  \
             if (less(%n, 1)) { %n } else { @count(subtract(%n, 1)) }\n}\n\
             def @main() -> int32 { @count(5000) }\n",
        );
        let limits = Limits {
            cancel: Some(std::sync::Arc::new(true.into())),
            ..Limits::default()
        };
        let run = run_function(&analysis, "main", 0, limits);
        assert!(run.stopped, "{run:?}");
        assert!(run.summary().contains("cancelled"), "{}", run.summary());
        assert!(run.diagnostics().is_empty());
    }
}
