//! Built-in instruments: pass timing (TVM's `PassTimingInstrument`), IR
//! printing before or after chosen passes (or all), and printing after a
//! change as a unified diff against the previous IR.

mod change;
mod print_ir;
mod timing;

pub use change::PrintAfterChange;
pub use print_ir::{PassFilter, PrintIr};
pub use timing::PassTiming;

use crate::ir::IRModule;
use std::sync::Arc;

/// Turns a module into text for IR-printing instruments (usually the
/// printer with the options the user chose).
pub type ModulePrinter = Arc<dyn Fn(&IRModule) -> String + Send + Sync>;
