//! `BatchingOps`: TVM v0.13's Python-side bundle of the three
//! `CombineParallel*` passes (conv2d, then dense, then batch_matmul), each
//! with its default of at least three parallel branches.
//!
//! TVM builds it with `tvm.transform.Sequential([...])` and no name of its
//! own, so its `PassInfo` is the `Sequential` default: name `sequential`,
//! opt_level 0, nothing required. The inner passes keep their opt_level 4,
//! so under a context below level 4 the bundle runs but changes nothing.

use relay_pass_manager::registry::{self, PassSpec};

/// The registry entry.
pub(crate) fn spec() -> PassSpec {
    PassSpec::sequential("BatchingOps", 0)
        // TVM's Python constructor leaves the Sequential's default name.
        .info_name("sequential")
        .doc(
            "Combine parallel nn.conv2d, then nn.dense, then nn.batch_matmul calls on one input \
             (CombineParallelConv2D, CombineParallelDense, CombineParallelBatchMatmul, \
             at least 3 branches each)",
        )
        .build(|_args| {
            [
                "CombineParallelConv2D",
                "CombineParallelDense",
                "CombineParallelBatchMatmul",
            ]
            .iter()
            .map(|name| registry::create_by_name(name))
            .collect()
        })
}
