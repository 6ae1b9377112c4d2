//! The standard Relay passes, each registered under TVM's constructor name
//! with TVM's `PassInfo` (name, opt_level, required list).

pub mod dead_code;
pub mod eliminate_common_subexpr;
pub mod fold_constant;
mod infer_type;
mod print_ir;

pub use infer_type::pass as infer_type;

use crate::transform::PassSpec;

/// Every built-in pass, for the registry.
pub(crate) fn builtin_passes() -> Vec<PassSpec> {
    let mut specs = Vec::new();
    specs.extend(infer_type::specs());
    specs.extend(print_ir::specs());
    specs.extend([dead_code::spec()]);
    specs.extend([eliminate_common_subexpr::spec()]);
    specs.push(fold_constant::spec());
    specs
}
