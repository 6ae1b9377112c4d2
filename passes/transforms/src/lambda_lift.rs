//! `LambdaLift`: TVM v0.13's module pass (opt_level 1, from the VM
//! backend) that moves every nested non-primitive function to a new global
//! `@lifted_nameN`, where `N` is TVM's structural hash of the function.
//!
//! That hash is TVM's own algorithm, which we do not reproduce, so a
//! module that has a function to lift is refused with a diagnostic rather
//! than given different names. A module with nothing to lift (no function
//! literal inside a global function other than primitive ones) is what
//! TVM returns unchanged, and so do we. Functions with a `Compiler`
//! attribute are skipped, as in TVM.

use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::rewrite::post_order;
use relay_ir::{ExprKind, IRModule};
use relay_pass_manager::PassSpec;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("LambdaLift", 1)
        .doc("Lift nested functions to globals (refuses modules that have any)")
        .transform(|module, _ctx| lambda_lift(module))
}

/// Returns `module` unchanged when it has no function to lift; otherwise a
/// diagnostic naming the global that has one.
pub fn lambda_lift(module: IRModule) -> Result<IRModule, Diagnostic> {
    for (name, function) in module.functions() {
        if function.attr("Compiler").is_some() {
            continue;
        }
        let nested = post_order(function.body()).into_iter().any(|node| {
            matches!(node.kind(), ExprKind::Function(_))
                && !node.as_function().is_some_and(|f| f.is_primitive())
        });
        if nested {
            return Err(Diagnostic::error(
                Code::PassFailed,
                format!(
                    "LambdaLift: @{name} has a nested function; lifting it needs TVM's \
                     structural hash for the new global's name, which is not implemented"
                ),
            ));
        }
    }
    Ok(module)
}
