//! The standard Relay passes, each registered under TVM's constructor name
//! with TVM's `PassInfo` (name, opt_level, required list).

pub mod alter_op_layout;
pub mod annotate_spans;
pub mod canonicalize_cast;
pub mod canonicalize_ops;
pub mod combine_parallel;
pub mod convert_layout;
pub mod dead_code;
pub mod defuse_ops;
pub mod dynamic_to_static;
pub mod eliminate_common_subexpr;
pub mod eta_expand;
pub mod fast_math;
pub mod flatten_atrous_conv;
pub mod fold_constant;
pub mod fold_explicit_padding;
pub mod fold_scale_axis;
pub mod fuse_ops;
mod infer_type;
pub mod inline;
pub mod lambda_lift;
pub mod legalize;
pub mod normal_form;
mod print_ir;
pub mod remove_unused_functions;
pub mod simplify_expr;
pub mod simplify_inference;
pub mod split_args;
pub mod to_a_normal_form;
pub mod to_basic_block_normal_form;
pub mod to_graph_normal_form;

pub use infer_type::pass as infer_type;

use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Function, IRModule};
use relay_pass_manager::{PassContext, PassInfo, PassSpec};

/// Registers every built-in pass with the pass manager's registry, as MLIR's
/// `registerAllPasses()` does: binaries and embedders call it once at start
/// (calling it again does nothing). A pass registered earlier under the same
/// name — a user's own replacement — is kept.
pub fn register_builtin_passes() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| relay_pass_manager::registry::register_defaults(builtin_passes()));
}

/// Every built-in pass, in the order `relay passes` lists them.
pub fn builtin_passes() -> Vec<PassSpec> {
    let mut specs = Vec::new();
    specs.extend(infer_type::specs());
    specs.extend(print_ir::specs());
    specs.extend([dead_code::spec()]);
    specs.extend([eliminate_common_subexpr::spec()]);
    specs.push(fold_constant::spec());
    specs.extend(fold_scale_axis::specs());
    specs.push(fuse_ops::spec());
    specs.push(defuse_ops::spec());
    specs.push(simplify_inference::spec());
    specs.push(annotate_spans::spec());
    specs.extend(simplify_expr::specs());
    specs.push(canonicalize_ops::spec());
    specs.push(canonicalize_cast::spec());
    specs.push(fast_math::spec());
    specs.push(remove_unused_functions::spec());
    specs.push(to_graph_normal_form::spec());
    specs.push(to_a_normal_form::spec());
    specs.push(to_basic_block_normal_form::spec());
    specs.push(eta_expand::spec());
    specs.push(inline::spec());
    specs.push(lambda_lift::spec());
    specs.push(legalize::spec());
    specs.push(flatten_atrous_conv::spec());
    specs.push(split_args::spec());
    specs.push(dynamic_to_static::spec());
    specs.push(fold_explicit_padding::spec());
    specs.extend(combine_parallel::specs());
    specs.push(convert_layout::spec());
    specs.push(alter_op_layout::spec());
    specs
}

/// The registry entry of a built-in function pass without parameters
/// ([`PassSpec::function`]).
fn function_pass_spec(
    info: PassInfo,
    description: &str,
    transform: fn(Function, &IRModule, &PassContext) -> Result<Function, Diagnostic>,
) -> PassSpec {
    PassSpec::function(info, description, transform)
}

/// The registry entry of a built-in module pass without parameters
/// ([`PassSpec::module`]).
fn module_pass_spec(
    info: PassInfo,
    description: &str,
    transform: fn(IRModule, &PassContext) -> Result<IRModule, Diagnostic>,
) -> PassSpec {
    PassSpec::module(info, description, transform)
}
