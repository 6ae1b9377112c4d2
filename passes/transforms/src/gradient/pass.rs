//! The pass `Gradient(entry, mode)`: [`super::gradient()`] applied to one
//! global function of a module, which it replaces. TVM has `gradient` as a
//! function of an expression, not as a pass; this registration lets a
//! pipeline (`relay opt`, `relay.toml`, the editor) differentiate a module's
//! entry the way TVM's tests do (`mod["main"] = gradient(mod["main"],
//! mod=mod)`).

use super::{gradient, GradientMode};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Expr, IRModule};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("Gradient", 0)
        .required(&["InferType"])
        .param(ParamSpec::string(
            "entry",
            "main",
            "the global function replaced by its gradient",
        ))
        .param(ParamSpec::string(
            "mode",
            "higher_order",
            "\"higher_order\" (references and closures; any program) or \"first_order\" \
             (first-order programs, the FirstOrderGradient transformation)",
        ))
        .doc(
            "Replace the entry function by one returning its result with the gradient with \
             respect to each parameter (TVM's relay.transform.gradient, a function in TVM, \
             not a pass); the higher-order mode adds @<name>_grad for each global function \
             called; the result is not type-checked again; the operator gradients are \
             FirstOrderGradient's (those it lists as not ported are refused by name)",
        )
        .build(|args| {
            let entry = args.string("entry");
            let mode: GradientMode = args.string("mode").parse()?;
            Ok(move |module: IRModule, _ctx: &PassContext| {
                differentiate_entry(module, &entry, mode)
            })
        })
}

/// `module` with its function `entry` replaced by its gradient.
fn differentiate_entry(
    mut module: IRModule,
    entry: &str,
    mode: GradientMode,
) -> Result<IRModule, Diagnostic> {
    let function = module.function(entry).cloned().ok_or_else(|| {
        Diagnostic::pass_failed(format!("Cannot find global var \"{entry}\" in the Module"))
    })?;
    let differentiated = match mode {
        GradientMode::HigherOrder => gradient(&Expr::global(entry, None), Some(&mut module), mode)?,
        GradientMode::FirstOrder => gradient(function.expr(), None, mode)?,
    };
    let differentiated = differentiated
        .as_function()
        .expect("gradient returns a function");
    module.add_function(entry, differentiated);
    Ok(module)
}
