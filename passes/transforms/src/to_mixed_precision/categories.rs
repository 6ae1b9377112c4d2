//! TVM v0.13's default `FTVMMixedPrecisionConversionType` rules
//! (`python/tvm/relay/transform/mixed_precision.py`): three lists of
//! operators, each registered with one generic rule. Every rule answers
//! `[category, mixed_precision_type, mixed_precision_type]`: the
//! accumulation and output dtypes are always the target type (TVM's
//! `get_generic_out_dtypes` keeps float32 accumulation as a TODO), so a
//! converted call never needs a cast of its own output.

/// How an operator is treated (TVM's `MixedTypeConversionCategory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Always computed in the mixed precision type: worth the casts.
    Always,
    /// Computed in the mixed precision type when every floating-point
    /// argument already is (or is a variable or constant); otherwise in
    /// float32.
    Follow,
    /// Always computed in float32, for numerical reasons.
    Never,
}

/// `DEFAULT_ALWAYS_LIST`: the operators that gain from lower precision.
const ALWAYS: &[&str] = &[
    "nn.conv1d",
    "nn.conv2d",
    "nn.conv3d",
    "nn.conv1d_transpose",
    "nn.conv2d_transpose",
    "nn.conv3d_transpose",
    "nn.dense",
    "nn.batch_matmul",
];

/// `DEFAULT_FOLLOW_LIST`: data movement, comparisons, simple arithmetic and
/// activations, pooling other than averages.
const FOLLOW: &[&str] = &[
    "nn.pad",
    "nn.batch_flatten",
    "concatenate",
    "zeros",
    "split",
    "squeeze",
    "transpose",
    "expand_dims",
    "reshape",
    "dyn.reshape",
    "broadcast_to_like",
    "dyn.broadcast_to",
    "strided_slice",
    "dyn.strided_slice",
    "take",
    "argwhere",
    "where",
    "tile",
    "dyn.tile",
    // Not an operator of v0.13 (TVM's list still names it).
    "scatter",
    "scatter_elements",
    "scatter_nd",
    "full",
    "dyn.full",
    "nn.depth_to_space",
    "less",
    "greater",
    "less_equal",
    "greater_equal",
    "copy",
    "cast",
    "cast_like",
    "add",
    "subtract",
    "multiply",
    "divide",
    "nn.bias_add",
    "nn.batch_norm",
    "sqrt",
    "shape_of",
    "max",
    "min",
    "maximum",
    "minimum",
    "argmax",
    "argmin",
    "nn.relu",
    "nn.leaky_relu",
    "nn.prelu",
    "nn.dropout",
    "sigmoid",
    "tanh",
    "fast_tanh",
    "fast_exp",
    "fast_erf",
    "clip",
    "nn.max_pool1d",
    "nn.max_pool2d",
    "nn.max_pool3d",
    "nn.avg_pool1d",
    "nn.avg_pool2d",
    "nn.avg_pool3d",
    "nn.global_max_pool2d",
    "nn.adaptive_max_pool1d",
    "nn.adaptive_max_pool2d",
    "nn.adaptive_max_pool3d",
    "image.resize2d",
];

/// `DEFAULT_NEVER_LIST`: operators whose result can dwarf their input,
/// large summations, and `arange` (its bounds may not fit in float16).
const NEVER: &[&str] = &[
    "exp",
    "power",
    "nn.cross_entropy",
    "nn.cross_entropy_with_logits",
    "nn.softmax",
    "nn.l2_normalize",
    "erf",
    "arange",
    "nn.global_avg_pool2d",
    "nn.adaptive_avg_pool1d",
    "nn.adaptive_avg_pool2d",
    "nn.adaptive_avg_pool3d",
    "sum",
    "mean",
    "variance",
    "nn.layer_norm",
];

/// The category TVM's default rules give operator `op`, or `None` for an
/// operator without a rule (the pass then treats it as [`Category::Follow`]
/// and reports it according to `missing_op_mode`).
pub fn category_of(op: &str) -> Option<Category> {
    if ALWAYS.contains(&op) {
        Some(Category::Always)
    } else if FOLLOW.contains(&op) {
        Some(Category::Follow)
    } else if NEVER.contains(&op) {
        Some(Category::Never)
    } else {
        None
    }
}

/// The attrs types whose `out_dtype` is the accumulation dtype of a
/// converted call (TVM's `GetNewAttrs`).
pub const OUT_DTYPE_ATTRS: &[&str] = &[
    "relay.attrs.Conv1DAttrs",
    "relay.attrs.Conv1DTransposeAttrs",
    "relay.attrs.Conv2DAttrs",
    "relay.attrs.Conv2DTransposeAttrs",
    "relay.attrs.Conv2DWinogradAttrs",
    "relay.attrs.Conv2DWinogradNNPACKWeightTransformAttrs",
    "relay.attrs.DeformableConv2DAttrs",
    "relay.attrs.Conv3DAttrs",
    "relay.attrs.Conv3DTransposeAttrs",
    "relay.attrs.Conv3DWinogradAttrs",
    "relay.attrs.DenseAttrs",
    "relay.attrs.BatchMatmulAttrs",
];

/// The attrs type whose `dtype` is the dtype of a created tensor
/// (`zeros`, `ones`, `full`).
pub const DTYPE_ATTRS: &str = "relay.attrs.InitOpAttrs";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_disjoint_and_name_operators_of_the_table() {
        for list in [ALWAYS, FOLLOW, NEVER] {
            for op in list {
                let in_lists = [ALWAYS, FOLLOW, NEVER]
                    .iter()
                    .filter(|l| l.contains(op))
                    .count();
                assert_eq!(in_lists, 1, "{op} is in {in_lists} lists");
            }
        }
        // TVM registers rules by name, creating the registry entry of a
        // name no operator has: `scatter` (removed before v0.13, still
        // listed) is the only such name; every other is an operator.
        let missing: Vec<&str> = ALWAYS
            .iter()
            .chain(FOLLOW)
            .chain(NEVER)
            .copied()
            .filter(|op| relay_ir::op::lookup(op).is_none())
            .collect();
        assert_eq!(missing, ["scatter"], "not in the operator table");
    }

    #[test]
    fn unlisted_operators_have_no_rule() {
        assert_eq!(category_of("nn.conv2d"), Some(Category::Always));
        assert_eq!(category_of("nn.relu"), Some(Category::Follow));
        assert_eq!(category_of("nn.softmax"), Some(Category::Never));
        assert_eq!(category_of("ones"), None);
        assert_eq!(category_of("nn.matmul"), None);
    }
}
