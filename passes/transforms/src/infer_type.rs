//! `InferType`: TVM's type inference as a module pass (opt_level 0). It
//! establishes the module's `TypeChecked` property, so a required InferType
//! on an untouched, already checked module is skipped (unless the context
//! asks for TVM's exact behaviour).

use relay_infer::infer_module;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::{IRModule, ModuleProperty};
use relay_pass_manager::{PassContext, PassSpec};

pub(super) fn spec() -> PassSpec {
    PassSpec::module("InferType", 0)
        .establishes(ModuleProperty::TypeChecked)
        .doc(
            "Infer and check the type of every expression of every function. (TVM's \
             InferTypeLocal is not a pass but a function on one expression: \
             relay_infer::infer_type_local.)",
        )
        .transform(infer_types)
}

/// Types every function of `module`, reporting the diagnostics to `ctx`;
/// the result is marked `TypeChecked` when there was no error.
pub(crate) fn infer_types(module: IRModule, ctx: &PassContext) -> Result<IRModule, Diagnostic> {
    infer_types_explaining(module, ctx, |error| error)
}

/// [`infer_types`] after a pass whose output it may reject: `explain` adds
/// to each error what the pass knows of its cause (it sees errors only).
pub(crate) fn infer_types_explaining(
    module: IRModule,
    ctx: &PassContext,
    explain: impl Fn(Diagnostic) -> Diagnostic,
) -> Result<IRModule, Diagnostic> {
    let (mut typed, diagnostics) = infer_module(&module);
    let ok = !diagnostics.has_errors();
    for diagnostic in diagnostics {
        let diagnostic = if diagnostic.is_error() {
            explain(diagnostic)
        } else {
            diagnostic
        };
        ctx.report(diagnostic);
    }
    if ok {
        typed.set_property(ModuleProperty::TypeChecked);
    }
    Ok(typed)
}
