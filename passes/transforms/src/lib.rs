//! The standard Relay passes, each registered under TVM's constructor name
//! with TVM's `PassInfo` (name, opt_level, required list).

pub mod alter_op_layout;
pub mod annotate_spans;
pub mod batching_ops;
mod bsr_weights;
pub mod byoc;
pub mod canonicalize_cast;
pub mod canonicalize_ops;
pub mod combine_parallel;
pub mod convert_layout;
pub mod dead_code;
pub mod defunctionalization;
pub mod defuse_ops;
pub mod dense_to_sparse;
pub mod div_to_mul;
pub mod dynamic_to_static;
pub mod eliminate_common_subexpr;
pub mod eta_expand;
pub mod fake_quantization_to_integer;
pub mod fast_math;
pub mod feature;
pub mod flatten_atrous_conv;
pub mod fold_constant;
pub mod fold_explicit_padding;
pub mod fold_scale_axis;
mod free_var_params;
pub mod fuse_ops;
pub mod gradient;
pub mod indexed_graph;
mod infer_type;
pub mod inline;
pub mod lambda_lift;
pub mod legalize;
pub mod manifest_lifetimes;
pub mod normal_form;
pub mod not_registered;
pub mod partial_eval;
pub mod pattern_rewrite;
pub mod plan_devices;
mod print_ir;
pub mod remove_standalone_reshapes;
pub mod remove_unused_functions;
pub mod simplify_expr;
pub mod simplify_fc_transpose;
pub mod simplify_inference;
pub mod sparse_conv2d;
pub mod split_args;
pub mod to_a_normal_form;
pub mod to_basic_block_normal_form;
pub mod to_cps;
pub mod to_graph_normal_form;
pub mod to_mixed_precision;

use relay_pass_manager::PassSpec;

/// Registers every built-in pass with the pass manager's registry, as MLIR's
/// `registerAllPasses()` does: binaries and embedders call it once at start
/// (calling it again does nothing). A pass registered earlier under the same
/// name — a user's own replacement — is kept.
pub fn register_builtin_passes() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| relay_pass_manager::registry::register_defaults(builtin_passes()));
}

/// Every built-in pass, for the registry: each declared in its own file
/// with `PassSpec::function(..)`/`PassSpec::module(..)` (see
/// [`relay_pass_manager::pass_builder`]). A new pass gets one line here.
pub fn builtin_passes() -> Vec<PassSpec> {
    vec![
        infer_type::spec(),
        print_ir::spec(),
        dead_code::spec(),
        eliminate_common_subexpr::spec(),
        fold_constant::spec(),
        fold_scale_axis::backward_spec(),
        fold_scale_axis::forward_spec(),
        fold_scale_axis::combined_spec(),
        fuse_ops::spec(),
        defuse_ops::spec(),
        simplify_inference::spec(),
        annotate_spans::spec(),
        simplify_expr::spec(),
        simplify_expr::post_alter_op_spec(),
        canonicalize_ops::spec(),
        canonicalize_cast::spec(),
        fast_math::spec(),
        div_to_mul::spec(),
        fake_quantization_to_integer::spec(),
        remove_unused_functions::spec(),
        to_graph_normal_form::spec(),
        to_a_normal_form::spec(),
        to_basic_block_normal_form::spec(),
        to_cps::spec(),
        to_cps::un_cps_spec(),
        eta_expand::spec(),
        inline::spec(),
        lambda_lift::spec(),
        legalize::spec(),
        manifest_lifetimes::spec(),
        flatten_atrous_conv::spec(),
        split_args::spec(),
        dynamic_to_static::spec(),
        fold_explicit_padding::spec(),
        combine_parallel::dense::spec(),
        combine_parallel::conv2d::spec(),
        combine_parallel::batch_matmul::spec(),
        batching_ops::spec(),
        to_mixed_precision::spec(),
        simplify_fc_transpose::spec(),
        remove_standalone_reshapes::spec(),
        plan_devices::spec(),
        dense_to_sparse::spec(),
        sparse_conv2d::spec(),
        sparse_conv2d::frozen_spec(),
        convert_layout::spec(),
        alter_op_layout::spec(),
        byoc::merge_composite::spec(),
        byoc::annotate_target::spec(),
        byoc::merge_compiler_regions::spec(),
        byoc::partition_graph::spec(),
        byoc::compiler_functions::outline_spec(),
        byoc::compiler_functions::mark_extern_spec(),
        byoc::compiler_functions::inline_bound_spec(),
        partial_eval::spec(),
        gradient::lazy_init::spec(),
        gradient::first_order::spec(),
        defunctionalization::spec(),
        gradient::spec(),
    ]
}

#[cfg(test)]
mod tests {
    use relay_pass_manager::registry::{self, PassKind};

    #[test]
    fn every_builtin_pass_is_made_from_its_defaults_and_describes_itself_by_name() {
        crate::register_builtin_passes();
        for spec in crate::builtin_passes() {
            let pass = registry::create(&spec.name, &[])
                .unwrap_or_else(|e| panic!("{}: {}", spec.name, e.message));
            assert_eq!(pass.info().name, spec.info.name, "{}", spec.name);
            if spec.kind != PassKind::Sequential {
                assert_eq!(pass.describe(), spec.name, "{}", spec.name);
            }
            for param in &spec.params {
                assert!(
                    param.ty.accepts(&param.default)
                        && param.out_of_range(&param.default).is_none(),
                    "{}: the default of `{}` is not a value it accepts",
                    spec.name,
                    param.name
                );
            }
        }
    }
}
