//! The standard Relay passes, each registered under TVM's constructor name
//! with TVM's `PassInfo` (name, opt_level, required list).

use crate::transform::PassSpec;

/// Every built-in pass, for the registry.
pub(crate) fn builtin_passes() -> Vec<PassSpec> {
    Vec::new()
}
