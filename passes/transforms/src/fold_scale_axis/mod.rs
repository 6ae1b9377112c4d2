//! `FoldScaleAxis` and its two halves, as TVM v0.13 defines them.
//!
//! A per-channel scale (`x * s`, typically left by `SimplifyInference` from
//! a batch norm) next to a convolution or dense layer can be folded into the
//! layer's weight, where constant folding then absorbs it:
//!
//! * [`backward`] handles a scale applied to a layer's *output*
//!   (`conv(x, w) * s` becomes `conv(x, w * s')`),
//! * [`forward`] a scale applied to its *input*
//!   (`conv(x * s, w)` becomes `conv(x, w * s')`),
//!
//! each seeing through `relu`, `add`/`subtract` (and `bias_add` backward)
//! where that is sound. [`axes`] holds what both share. `FoldScaleAxis`
//! runs backward, forward, then `FoldConstant`, in one `Sequential` named
//! after it.

pub mod axes;
pub mod backward;
pub mod forward;

pub use backward::backward_fold_scale_axis;
pub use forward::forward_fold_scale_axis;

use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Function, IRModule};
use relay_pass_manager::registry::{self, PassKind, PassSpec};
use relay_pass_manager::{Pass, PassContext, PassInfo, Sequential};
use std::sync::Arc;

/// The registry entries: both halves and the combined pass.
pub(crate) fn specs() -> Vec<PassSpec> {
    vec![
        super::function_pass_spec(
            PassInfo::new("BackwardFoldScaleAxis", 3, &["InferType"]),
            "Fold a per-channel multiply of a conv2d/conv3d/dense output into the layer's weight",
            backward_pass,
        ),
        super::function_pass_spec(
            PassInfo::new("ForwardFoldScaleAxis", 3, &["InferType"]),
            "Fold a per-channel multiply of a conv2d/conv3d/dense input into the layer's weight",
            forward_pass,
        ),
        combined_spec(),
    ]
}

fn backward_pass(f: Function, _m: &IRModule, _ctx: &PassContext) -> Result<Function, Diagnostic> {
    Ok(backward_fold_scale_axis(&f))
}

fn forward_pass(f: Function, _m: &IRModule, _ctx: &PassContext) -> Result<Function, Diagnostic> {
    Ok(forward_fold_scale_axis(&f))
}

/// `Sequential([BackwardFoldScaleAxis, ForwardFoldScaleAxis, FoldConstant],
/// "FoldScaleAxis")`: TVM's constructor gives it opt_level 0 and no
/// requirements of its own.
fn combined_spec() -> PassSpec {
    let info = PassInfo::new("FoldScaleAxis", 0, &[]);
    let factory_info = info.clone();
    PassSpec {
        name: info.name.clone(),
        info,
        kind: PassKind::Sequential,
        params: Vec::new(),
        description: "Fold per-channel scales into neighbouring conv2d/conv3d/dense weights \
                      (backward, then forward), then fold the constants"
            .into(),
        factory: Arc::new(move |_args| {
            let passes = [
                "BackwardFoldScaleAxis",
                "ForwardFoldScaleAxis",
                "FoldConstant",
            ]
            .iter()
            .map(|name| registry::create_by_name(name))
            .collect::<Result<Vec<Arc<dyn Pass>>, String>>()?;
            Ok(Arc::new(Sequential::with_info(factory_info.clone(), passes)) as Arc<dyn Pass>)
        }),
    }
}
