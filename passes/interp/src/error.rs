//! Run-time errors: what failed, and the span of the expression that
//! failed (the innermost one with a span).

use relay_ir::source::Span;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeError {
    pub message: String,
    /// The failing expression; `None` when it (and every expression around
    /// it) has no span, e.g. in a module a pass built.
    pub span: Option<Span>,
    /// The global function that was running, innermost first.
    pub trace: Vec<String>,
    /// The operator without an evaluator kernel, when that is the failure
    /// (a limit of the evaluator, not of the program).
    pub missing_kernel: Option<String>,
    /// The run was stopped from outside (time limit, cancellation): says
    /// nothing about the program.
    pub stopped: bool,
}

impl RuntimeError {
    pub fn new(message: impl Into<String>, span: Option<Span>) -> RuntimeError {
        RuntimeError {
            message: message.into(),
            span,
            trace: Vec::new(),
            missing_kernel: None,
            stopped: false,
        }
    }

    /// Gives the error a span if it has none yet (an enclosing expression's).
    pub(crate) fn or_span(mut self, span: Option<Span>) -> RuntimeError {
        if self.span.is_none() {
            self.span = span;
        }
        self
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if !self.trace.is_empty() {
            // Runs of one function (recursion) are written once with a count.
            let mut parts: Vec<String> = Vec::new();
            let mut i = 0;
            while i < self.trace.len() {
                let name = &self.trace[i];
                let run = self.trace[i..].iter().take_while(|n| *n == name).count();
                parts.push(if run > 1 {
                    format!("{name} ×{run}")
                } else {
                    name.clone()
                });
                i += run;
            }
            write!(f, " (in {})", parts.join(" ← "))?;
        }
        Ok(())
    }
}

impl std::error::Error for RuntimeError {}

pub type RunResult<T> = Result<T, RuntimeError>;
