//! Printing the IR after each pass that changed it, as a unified diff
//! against the IR before that pass (unchanged runs print one line).

use super::ModulePrinter;
use crate::{HookResult, LogSink, PassInfo, PassInstrument};
use relay_ir::IRModule;
use std::sync::Mutex;

/// Prints a diff after every pass that changed the printed module.
pub struct PrintAfterChange {
    printer: ModulePrinter,
    sink: LogSink,
    /// The printed module before each running pass, innermost last.
    before: Mutex<Vec<String>>,
}

impl PrintAfterChange {
    pub fn new(printer: ModulePrinter, sink: LogSink) -> PrintAfterChange {
        PrintAfterChange {
            printer,
            sink,
            before: Mutex::new(Vec::new()),
        }
    }
}

/// A unified diff of two texts with three lines of context.
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}

impl PassInstrument for PrintAfterChange {
    fn name(&self) -> &str {
        "PrintAfterChange"
    }

    fn run_before_pass(&self, module: &IRModule, _info: &PassInfo) -> HookResult {
        let text = (self.printer)(module);
        self.before
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text);
        Ok(())
    }

    fn run_after_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        let old = self
            .before
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        let new = (self.printer)(module);
        if old == new {
            (self.sink)(&format!("// {} did not change the module\n", info.name));
        } else {
            let diff = unified_diff(
                &old,
                &new,
                &format!("before {}", info.name),
                &format!("after {}", info.name),
            );
            (self.sink)(&format!("// IR after {} changed it:\n{diff}", info.name));
        }
        Ok(())
    }
}
