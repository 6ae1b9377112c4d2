//! Printing the IR before or after chosen passes, or all of them.

use super::ModulePrinter;
use crate::ir::IRModule;
use crate::transform::{HookResult, LogSink, PassInfo, PassInstrument};

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
        }
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
                info.name,
                (self.printer)(module)
            ));
        }
        Ok(())
    }

    fn run_after_pass(&self, module: &IRModule, info: &PassInfo) -> HookResult {
        if self.after.matches(info) {
            (self.sink)(&format!(
                "// IR after {}\n{}",
                info.name,
                (self.printer)(module)
            ));
        }
        Ok(())
    }
}
