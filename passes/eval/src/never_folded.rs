//! The operators TVM v0.13's FoldConstant never evaluates, each with the
//! reason, checked against TVM (`src/relay/transforms/fold_constant.cc`
//! skips stateful operators, `TNonComputational` ones unless `fold_qnn` and
//! a QNN canonicalisation apply, `device_copy`, `shape_of`, `vm.shape_of`
//! and `ndarray_size`; it evaluates any other call on constants by compiling
//! it, which needs the operator's `FTVMCompute`/`FTVMStrategy`, so an
//! operator TVM registers none for is never folded either). They need no
//! kernel; the coverage
//! test demands a kernel for every other operator, and `relay ops` reports
//! the reason.

/// Why TVM never folds `op`, or `None` when it may.
pub fn never_folded(op: &str) -> Option<&'static str> {
    NEVER_FOLDED
        .iter()
        .find(|(name, _)| *name == op)
        .map(|(_, reason)| *reason)
}

const STATEFUL: &str = "stateful (TOpIsStateful): FoldConstant skips stateful operators";
const NON_COMPUTATIONAL: &str =
    "non-computational (TNonComputational): FoldConstant skips it, fold_qnn or not";
/// `contrib.ethosu.*`: C++ registers only their relations
/// (`src/relay/op/contrib/ethosu/*.cc`); the compute and strategy are
/// Python (`python/tvm/relay/backend/contrib/ethosu/op/*.py`), registered
/// only when the Ethos-U codegen package is imported (it needs the external
/// `ethos-u-vela`), not by `import tvm`, and they describe the NPU's DMA
/// and block steps for its TIR scheduler, not its arithmetic.
const ETHOSU: &str =
    "no compute outside the Ethos-U codegen: TVM registers its FTVMCompute/FTVMStrategy \
     only when tvm.relay.backend.contrib.ethosu (which needs ethos-u-vela) is imported, and that \
     compute models the NPU's DMA steps for TIR scheduling, not its results; FoldConstant cannot \
     compile it otherwise";
const NO_CPU_STRATEGY: &str =
    "no implementation for the CPU: its generic strategy raises \"No generic implemenation\" \
     (python/tvm/relay/op/strategy/generic.py) and x86 registers none (only arm_cpu or GPU \
     targets implement it), while FoldConstant compiles for llvm on the host";
const FROM_TYPE: &str =
    "FoldConstant computes it from its argument's static type, never by evaluating the call";

/// Every operator of the table TVM never folds, with the reason.
pub const NEVER_FOLDED: &[(&str, &str)] = &[
    ("nn.dropout", STATEFUL),
    ("memory.kill", STATEFUL),
    ("vm.invoke_tvm_op", STATEFUL),
    ("memory.alloc_storage", NON_COMPUTATIONAL),
    ("memory.alloc_tensor", NON_COMPUTATIONAL),
    ("call_lowered", NON_COMPUTATIONAL),
    ("vm.reshape_tensor", NON_COMPUTATIONAL),
    (
        "on_device",
        "non-computational annotation: FoldConstant folds the call inside it and keeps the annotation",
    ),
    (
        "parser.MetaRef",
        "the parser's placeholder for a `meta[…]` reference; never part of a lowered program",
    ),
    (
        "qnn.conv2d_transpose",
        "non-computational without a QNN canonicalisation (FTVMQnnCanonicalize; python/tvm/relay/qnn/op/legalizations.py \
         registers only FTVMQnnLegalize for it): skipped even with fold_qnn=true",
    ),
    (
        "qnn.contrib_dense_pack",
        "non-computational, and its QNN canonicalisation (QnnDensePackCanonicalize) aborts with \
         \"not implemented\"; its only compute is Hexagon's (python/tvm/relay/qnn/strategy/\
         generic.py, qnn_dense_pack_strategy, raises for any other target)",
    ),
    (
        "nn.contrib_conv2d_gemm_without_weight_transform",
        NO_CPU_STRATEGY,
    ),
    (
        "nn.contrib_conv2d_winograd_without_weight_transform",
        NO_CPU_STRATEGY,
    ),
    (
        "nn.contrib_conv3d_winograd_without_weight_transform",
        NO_CPU_STRATEGY,
    ),
    (
        "nn.contrib_conv2d_winograd_nnpack_weight_transform",
        "its compute is an extern call into NNPACK (tvm.contrib.nnpack.\
         convolution_inference_weight_transform), which TVM's default build does not include",
    ),
    (
        "nn.internal.sparse_dense_padded",
        "its compute raises NotImplementedError (\"only available on cuda\"), and so does its \
         generic strategy; FoldConstant compiles for llvm",
    ),
    (
        "nn.conv2d_backward_weight",
        "only cuDNN implements it: its generic strategy raises \"conv2d_backward_weight is \
         currently only supported with cudnn. Please run Legalize pass to decompose this op into \
         supported ops.\" (python/tvm/relay/op/strategy/generic.py; only cuda.py registers one), \
         and FoldConstant compiles for llvm without running Legalize",
    ),
    (
        "device_copy",
        "FoldConstant never folds a device copy (it names the operator as not to be folded)",
    ),
    ("contrib.ethosu.binary_elementwise", ETHOSU),
    ("contrib.ethosu.conv2d", ETHOSU),
    ("contrib.ethosu.depthwise_conv2d", ETHOSU),
    ("contrib.ethosu.identity", ETHOSU),
    ("contrib.ethosu.pooling", ETHOSU),
    ("contrib.ethosu.unary_elementwise", ETHOSU),
    ("shape_of", FROM_TYPE),
    ("vm.shape_of", FROM_TYPE),
    ("ndarray_size", FROM_TYPE),
    (
        "annotation.with_funcid",
        "internal to PartialEvaluate: its argument is a function, never a constant, and it has no compute",
    ),
];
