//! `PassContext`: the options a pipeline runs under (opt_level, required and
//! disabled passes, config, instruments), the diagnostics sink (TVM's
//! ErrorReporter / DiagnosticContext), and the thread-local *current* context
//! entered through a scope guard — the Rust form of Python's `with`.

use crate::config::{self, ConfigValue};
use crate::instrument::PassInstrument;
use crate::{target, PassError, PassInfo};
use relay_ir::diagnostic::{Diagnostic, Diagnostics};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Where passes write text meant for people (PrintIR, timing reports): the
/// CLI prints it to stderr, the language server sends `window/logMessage`.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The options to make a [`PassContext`] from.
#[derive(Clone)]
pub struct PassContextOptions {
    pub opt_level: u32,
    pub required_pass: Vec<String>,
    pub disabled_pass: Vec<String>,
    pub config: BTreeMap<String, ConfigValue>,
    pub instruments: Vec<Arc<dyn PassInstrument>>,
    /// The `--target` scope (`llvm`), for passes that consult a target.
    pub target: Option<String>,
    /// Follow TVM exactly where we would otherwise save work: re-run a
    /// required pass even when what it establishes already holds.
    pub tvm_exact: bool,
    pub log: Option<LogSink>,
    /// When a pass fails, write the module as it was before that pass and
    /// the one-pass pipeline that fails into this directory.
    pub reproducer_dir: Option<std::path::PathBuf>,
}

impl Default for PassContextOptions {
    fn default() -> Self {
        PassContextOptions {
            opt_level: 2,
            required_pass: Vec::new(),
            disabled_pass: Vec::new(),
            config: BTreeMap::new(),
            instruments: Vec::new(),
            target: None,
            tvm_exact: false,
            log: None,
            reproducer_dir: None,
        }
    }
}

/// Why a pass ran or was skipped, for `--explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    pub pass: String,
    pub depth: usize,
    pub ran: bool,
    pub reason: String,
}

/// The context passes run under.
pub struct PassContext {
    pub opt_level: u32,
    pub required_pass: Vec<String>,
    pub disabled_pass: Vec<String>,
    pub config: BTreeMap<String, ConfigValue>,
    pub target: Option<String>,
    pub tvm_exact: bool,
    pub reproducer_dir: Option<std::path::PathBuf>,
    instruments: Mutex<Vec<Arc<dyn PassInstrument>>>,
    /// A stack of diagnostic frames: each pass run opens one.
    diagnostics: Mutex<Vec<Diagnostics>>,
    explanations: Mutex<Vec<Explanation>>,
    depth: Mutex<usize>,
    log: Option<LogSink>,
    /// External commands that were not allowed to run, in order met.
    blocked_commands: Mutex<Vec<String>>,
}

impl std::fmt::Debug for PassContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassContext")
            .field("opt_level", &self.opt_level)
            .field("required_pass", &self.required_pass)
            .field("disabled_pass", &self.disabled_pass)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

thread_local! {
    static STACK: RefCell<Vec<Arc<PassContext>>> = const { RefCell::new(Vec::new()) };
    static DEFAULT: Arc<PassContext> = Arc::new(PassContext::from_valid(PassContextOptions::default()));
}

impl PassContext {
    /// Makes a context, validating the config against the registered keys
    /// (an unknown key or a wrong type is an error listing the valid keys),
    /// the opt_level and the target (see [`crate::target`]).
    pub fn new(options: PassContextOptions) -> Result<Arc<PassContext>, String> {
        config::validate(&options.config)?;
        target::check_opt_level(i64::from(options.opt_level))?;
        if let Some(name) = &options.target {
            target::check_target(name)?;
        }
        Ok(Arc::new(PassContext::from_valid(options)))
    }

    fn from_valid(options: PassContextOptions) -> PassContext {
        PassContext {
            opt_level: options.opt_level,
            required_pass: options.required_pass,
            disabled_pass: options.disabled_pass,
            config: options.config,
            target: options.target,
            tvm_exact: options.tvm_exact,
            reproducer_dir: options.reproducer_dir,
            instruments: Mutex::new(options.instruments),
            diagnostics: Mutex::new(vec![Diagnostics::new()]),
            explanations: Mutex::new(Vec::new()),
            depth: Mutex::new(0),
            log: options.log,
            blocked_commands: Mutex::new(Vec::new()),
        }
    }

    /// The innermost entered context of this thread, or the default one
    /// (opt_level 2, no instruments).
    pub fn current() -> Arc<PassContext> {
        STACK.with(|stack| {
            stack
                .borrow()
                .last()
                .cloned()
                .unwrap_or_else(|| DEFAULT.with(Arc::clone))
        })
    }

    /// Enters the context: every instrument's `enter_pass_ctx` runs in
    /// order. If one fails, the ones already entered are exited, the
    /// instrument list is cleared and the error returned. Otherwise the
    /// context becomes current until the guard is dropped or exited.
    pub fn enter(self: &Arc<Self>) -> Result<ContextGuard, PassError> {
        let instruments = self.instruments();
        for (i, instrument) in instruments.iter().enumerate() {
            if let Err(message) = instrument.enter_pass_ctx() {
                self.clear_instruments();
                for entered in &instruments[..i] {
                    let _ = entered.exit_pass_ctx();
                }
                return Err(PassError::instrument(
                    instrument.name(),
                    "enter_pass_ctx",
                    message,
                ));
            }
        }
        STACK.with(|stack| stack.borrow_mut().push(Arc::clone(self)));
        Ok(ContextGuard {
            context: Some(Arc::clone(self)),
        })
    }

    /// TVM's `PassEnabled`, consulted only by `Sequential`: disabled list,
    /// then required list, then `opt_level`.
    pub fn pass_enabled(&self, info: &PassInfo) -> bool {
        if self.disabled_pass.contains(&info.name) {
            return false;
        }
        if self.required_pass.contains(&info.name) {
            return true;
        }
        self.opt_level >= info.opt_level
    }

    /// Why `pass_enabled` decided as it did, in words.
    pub fn enabled_reason(&self, info: &PassInfo) -> String {
        if self.disabled_pass.contains(&info.name) {
            "it is in the disabled_pass list".into()
        } else if self.required_pass.contains(&info.name) {
            "it is in the required_pass list".into()
        } else if self.opt_level >= info.opt_level {
            format!(
                "opt_level {} >= its opt_level {}",
                self.opt_level, info.opt_level
            )
        } else {
            format!(
                "opt_level {} < its opt_level {}",
                self.opt_level, info.opt_level
            )
        }
    }

    pub fn config(&self, key: &str) -> Option<&ConfigValue> {
        self.config.get(key)
    }

    pub fn config_bool(&self, key: &str, default: bool) -> bool {
        self.config(key)
            .and_then(ConfigValue::as_bool)
            .unwrap_or(default)
    }

    pub fn config_int(&self, key: &str, default: i64) -> i64 {
        self.config(key)
            .and_then(ConfigValue::as_int)
            .unwrap_or(default)
    }

    /// The current instruments.
    pub fn instruments(&self) -> Vec<Arc<dyn PassInstrument>> {
        self.instruments
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn clear_instruments(&self) {
        self.instruments
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Exits the old instruments, installs `new` and enters them (TVM's
    /// `override_instruments`).
    pub fn override_instruments(&self, new: Vec<Arc<dyn PassInstrument>>) -> Result<(), PassError> {
        for instrument in self.instruments() {
            instrument
                .exit_pass_ctx()
                .map_err(|m| PassError::instrument(instrument.name(), "exit_pass_ctx", m))?;
        }
        *self.instruments.lock().unwrap_or_else(|e| e.into_inner()) = new.clone();
        for instrument in new {
            instrument
                .enter_pass_ctx()
                .map_err(|m| PassError::instrument(instrument.name(), "enter_pass_ctx", m))?;
        }
        Ok(())
    }

    // ---- diagnostics (the ErrorReporter) ----

    /// Reports a diagnostic in the frame of the running pass.
    pub fn report(&self, diagnostic: Diagnostic) {
        let mut frames = self.diagnostics.lock().unwrap_or_else(|e| e.into_inner());
        frames
            .last_mut()
            .expect("the base frame is never popped")
            .push(diagnostic);
    }

    pub(crate) fn push_diagnostic_frame(&self) {
        self.diagnostics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Diagnostics::new());
    }

    /// Closes the running pass's frame: errors are returned; warnings move
    /// to the enclosing frame.
    pub(crate) fn pop_diagnostic_frame(&self) -> Diagnostics {
        let mut frames = self.diagnostics.lock().unwrap_or_else(|e| e.into_inner());
        let frame = if frames.len() > 1 {
            frames.pop().unwrap_or_default()
        } else {
            std::mem::take(&mut frames[0])
        };
        if frame.has_errors() {
            return frame;
        }
        frames
            .last_mut()
            .expect("the base frame is never popped")
            .extend(frame);
        Diagnostics::new()
    }

    /// The warnings and notes collected so far outside any failed pass.
    pub fn take_diagnostics(&self) -> Diagnostics {
        let mut frames = self.diagnostics.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut frames[0])
    }

    /// Notes that an external pass did not run `command` because commands
    /// are not allowed (an untrusted workspace, `--no-external`).
    pub fn record_blocked_command(&self, command: String) {
        let mut blocked = self
            .blocked_commands
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !blocked.contains(&command) {
            blocked.push(command);
        }
    }

    /// The external commands that were not allowed to run.
    pub fn blocked_commands(&self) -> Vec<String> {
        self.blocked_commands
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    // ---- logging and explanations ----

    /// Writes text meant for people (PrintIR, reports).
    pub fn log(&self, text: &str) {
        match &self.log {
            Some(sink) => sink(text),
            None => eprintln!("{text}"),
        }
    }

    /// Records that `info`'s pass did not run, for `--explain` and for the
    /// instruments' `pass_skipped` hook.
    pub(crate) fn skipped(&self, module: &relay_ir::IRModule, info: &PassInfo, reason: String) {
        for instrument in self.instruments() {
            instrument.pass_skipped(module, info, &reason);
        }
        self.explain(&info.name, false, reason);
    }

    pub(crate) fn explain(&self, pass: &str, ran: bool, reason: impl Into<String>) {
        let depth = *self.depth.lock().unwrap_or_else(|e| e.into_inner());
        self.explanations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Explanation {
                pass: pass.to_string(),
                depth,
                ran,
                reason: reason.into(),
            });
    }

    /// Every decision taken so far, in order.
    pub fn explanations(&self) -> Vec<Explanation> {
        self.explanations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn nest(&self, delta: isize) {
        let mut depth = self.depth.lock().unwrap_or_else(|e| e.into_inner());
        *depth = depth.saturating_add_signed(delta);
    }
}

/// Keeps a context current; leaving it (drop or [`ContextGuard::exit`])
/// pops it and calls every instrument's `exit_pass_ctx`.
pub struct ContextGuard {
    context: Option<Arc<PassContext>>,
}

impl ContextGuard {
    /// Leaves the context, reporting an instrument's failure (after which
    /// the instrument list is cleared, as in TVM).
    pub fn exit(mut self) -> Result<(), PassError> {
        self.leave()
    }

    fn leave(&mut self) -> Result<(), PassError> {
        let Some(context) = self.context.take() else {
            return Ok(());
        };
        STACK.with(|stack| {
            let mut stack = stack.borrow_mut();
            if let Some(position) = stack.iter().rposition(|c| Arc::ptr_eq(c, &context)) {
                stack.remove(position);
            }
        });
        for instrument in context.instruments() {
            if let Err(message) = instrument.exit_pass_ctx() {
                context.clear_instruments();
                return Err(PassError::instrument(
                    instrument.name(),
                    "exit_pass_ctx",
                    message,
                ));
            }
        }
        Ok(())
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        let _ = self.leave();
    }
}
