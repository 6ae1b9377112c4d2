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

use relay_pass_manager::registry::{self, PassSpec};

/// The registry entry of the backward half.
pub(crate) fn backward_spec() -> PassSpec {
    PassSpec::function("BackwardFoldScaleAxis", 3)
        .required(&["InferType"])
        .doc("Fold a per-channel multiply of a conv2d/conv3d/dense output into the layer's weight")
        .transform(|f, _m, _ctx| Ok(backward_fold_scale_axis(&f)))
}

/// The registry entry of the forward half.
pub(crate) fn forward_spec() -> PassSpec {
    PassSpec::function("ForwardFoldScaleAxis", 3)
        .required(&["InferType"])
        .doc("Fold a per-channel multiply of a conv2d/conv3d/dense input into the layer's weight")
        .transform(|f, _m, _ctx| Ok(forward_fold_scale_axis(&f)))
}

/// `Sequential([BackwardFoldScaleAxis, ForwardFoldScaleAxis, FoldConstant],
/// "FoldScaleAxis")`: TVM's constructor gives it opt_level 0 and no
/// requirements of its own.
pub(crate) fn combined_spec() -> PassSpec {
    PassSpec::sequential("FoldScaleAxis", 0)
        .doc(
            "Fold per-channel scales into neighbouring conv2d/conv3d/dense weights \
             (backward, then forward), then fold the constants",
        )
        .build(|_args| {
            [
                "BackwardFoldScaleAxis",
                "ForwardFoldScaleAxis",
                "FoldConstant",
            ]
            .iter()
            .map(|name| registry::create_by_name(name))
            .collect()
        })
}
