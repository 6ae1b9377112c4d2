//! `InferType`: TVM's type inference as a module pass (opt_level 0). It
//! establishes the module's `TypeChecked` property, so a required InferType
//! on an untouched, already checked module is skipped (unless the context
//! asks for TVM's exact behaviour).

use relay_infer::infer_module;
use relay_ir::ModuleProperty;
use relay_pass_manager::{ModulePass, PassInfo, PassKind, PassSpec};
use std::sync::Arc;

pub(super) fn specs() -> Vec<PassSpec> {
    vec![PassSpec {
        name: "InferType".into(),
        info: info(),
        kind: PassKind::Module,
        params: Vec::new(),
        description: "Infer and check the type of every expression of every function.".into(),
        factory: Arc::new(|_| Ok(Arc::new(pass()))),
    }]
}

fn info() -> PassInfo {
    PassInfo::new("InferType", 0, &[])
}

/// The InferType pass.
pub fn pass() -> ModulePass {
    ModulePass::new(info(), |module, ctx| {
        let (mut typed, diagnostics) = infer_module(&module);
        let ok = !diagnostics.has_errors();
        for diagnostic in diagnostics {
            ctx.report(diagnostic);
        }
        if ok {
            typed.set_property(ModuleProperty::TypeChecked);
        }
        Ok(typed)
    })
    .establishing(ModuleProperty::TypeChecked)
}
