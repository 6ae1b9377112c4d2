//! Built-in instruments: pass timing (TVM's `PassTimingInstrument`), IR
//! printing before or after chosen passes (or all), printing after a
//! change as a unified diff against the previous IR, and counting how often
//! each pass ran or was skipped.

mod change;
mod count;
mod print_ir;
mod timing;

pub use change::PrintAfterChange;
pub use count::{PassCount, PassCounts};
pub use print_ir::{PassFilter, PrintIr};
pub use timing::PassTiming;

use relay_ir::IRModule;
use std::sync::Arc;

/// Turns a module into text for IR-printing instruments (usually the
/// printer with the options the user chose).
pub type ModulePrinter = Arc<dyn Fn(&IRModule) -> String + Send + Sync>;
