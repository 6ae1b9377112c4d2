//! Printing the IR before or after chosen passes, or all of them. Each
//! header names the pass with the passes it runs inside
//! (`// IR after SimplifyInference > InferType`: the InferType a function
//! pass runs after itself, not a top-level one); unnamed `Sequential`s are
//! left out of the path. A pass that was skipped gets a header saying so
//! and why, instead of a module.

use super::ModulePrinter;
use crate::{HookResult, LogSink, PassInfo, PassInstrument};
use relay_ir::IRModule;
use std::sync::Mutex;

/// Which passes an instrument applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassFilter {
    All,
    Named(Vec<String>),
}

impl PassFilter {
    pub fn matches(&self, info: &PassInfo) -> bool {
        match self {
            PassFilter::All => true,
            PassFilter::Named(names) => names.contains(&info.name),
        }
    }
}

/// Prints the module before and/or after the passes it is told about.
pub struct PrintIr {
    before: PassFilter,
    after: PassFilter,
    printer: ModulePrinter,
    sink: LogSink,
    /// The passes running now, outermost first.
    running: Mutex<Vec<String>>,
}

impl PrintIr {
    pub fn new(
        before: PassFilter,
        after: PassFilter,
        printer: ModulePrinter,
        sink: LogSink,
    ) -> PrintIr {
        PrintIr {
            before,
            after,
            printer,
            sink,
            running: Mutex::new(Vec::new()),
        }
    }

    /// `Outer > Inner > name`: the named passes running around `name`.
    fn path(&self, name: &str) -> String {
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let mut parts: Vec<&str> = running
            .iter()
            .map(String::as_str)
            .filter(|n| *n != "sequential")
            .collect();
        parts.push(name);
        parts.join(" > ")
    }
}

impl PassInstrument for PrintIr {
    fn name(&self) -> &str {
        "PrintIR"
    }

    fn run_before_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        if self.before.matches(info) {
            (self.sink)(&format!(
                "// IR before {}\n{}",
                self.path(&info.name),
                (self.printer)(module)
            ));
        }
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(info.name.clone());
        Ok(())
    }

    fn run_after_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        self.running.lock().unwrap_or_else(|e| e.into_inner()).pop();
        if self.after.matches(info) {
            (self.sink)(&format!(
                "// IR after {}\n{}",
                self.path(&info.name),
                (self.printer)(module)
            ));
        }
        Ok(())
    }

    fn pass_skipped(&self, _module: &IRModule, info: &PassInfo, reason: &str) {
        if self.after.matches(info) || self.before.matches(info) {
            let reason = reason.strip_prefix("skipped: ").unwrap_or(reason);
            (self.sink)(&format!(
                "// {} was skipped ({reason}); the IR is unchanged\n",
                self.path(&info.name)
            ));
        }
    }
}
