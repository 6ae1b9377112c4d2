//! `DenseToSparse(weight_name, weight_shape)`: rewrites `nn.dense(x, %w)`,
//! for each listed weight `%w`, into `nn.sparse_dense(x, %w.data,
//! %w.indices, %w.indptr)` over three new parameters holding the weight in
//! BSR form, as TVM v0.13's `convert_sparse_dense.cc` does (used by
//! `relay.data_dep_optimization.bsr_dense`, which also converts the bound
//! weight values; this pass only rewrites the function).
//!
//! TVM's behaviour, kept here:
//! - `weight_name[i]` goes with `weight_shape[i]` (the lists must have the
//!   same length), five sizes each: the BSR data is
//!   `Tensor[(s0, s1, s2), float32]`, the indices `Tensor[(s3), int32]`,
//!   the index pointers `Tensor[(s4), int32]` (float32 whatever the weight's
//!   dtype, as TVM writes it);
//! - only a dense whose weight, as written, is a listed variable is
//!   rewritten; the new call has the default `SparseDenseAttrs`
//!   (`sparse_lhs=False`) and new variables for every rewritten dense;
//! - the parameters are rebuilt as `SimplifyFCTranspose` rebuilds them (free
//!   variables in order of use, the new ones last), so the dense weight
//!   disappears (`bsr_weights.rs`, shared with `Conv2dToSparse`).
//!
//! Type-checking the result needs the `SparseDense` relation of
//! `nn.sparse_dense`.
//!
//! Registered like TVM: a function pass at opt_level 4 requiring
//! `DeadCodeElimination`.

use crate::bsr_weights::{listed_bsr_sizes, replace_listed_weights};
use relay_ir::build::op_call_with;
use relay_ir::{Function, IRModule};
use relay_pass_manager::pipeline::PipelineValue;
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("DenseToSparse", 4)
        .required(&["DeadCodeElimination"])
        .param(ParamSpec::list(
            "weight_name",
            Vec::new(),
            "the names of the dense weights to replace by BSR parameters",
        ))
        .param(ParamSpec::list(
            "weight_shape",
            Vec::new(),
            "for each weight, the five BSR sizes: data (3), indices, indptr",
        ))
        .doc(
            "Replace nn.dense of the listed weights by nn.sparse_dense over new BSR parameters \
             (name.data, name.indices, name.indptr); type-checking the result needs \
             nn.sparse_dense's SparseDense relation, not implemented yet",
        )
        .build(|args| {
            let weights = bsr_shapes(args.get("weight_name"), args.get("weight_shape"))?;
            Ok(
                move |function: Function, _module: &IRModule, _ctx: &PassContext| {
                    Ok(dense_to_sparse(&function, &weights))
                },
            )
        })
}

/// Each weight name with its five BSR sizes, checked as TVM checks them.
fn bsr_shapes(
    names: Option<&PipelineValue>,
    shapes: Option<&PipelineValue>,
) -> Result<HashMap<String, [i64; 5]>, String> {
    let mut weights = HashMap::default();
    for (name, sizes) in listed_bsr_sizes(names, shapes)? {
        let five: [i64; 5] = sizes
            .get(..5)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| {
                format!(
                    "the BSR shape of {name} needs 5 sizes (data 3, indices, indptr), found {}",
                    sizes.len()
                )
            })?;
        weights.insert(name, five);
    }
    Ok(weights)
}

/// Rewrites every `nn.dense` of a listed weight and rebuilds the parameters.
pub fn dense_to_sparse(function: &Function, weights: &HashMap<String, [i64; 5]>) -> Function {
    replace_listed_weights(
        function,
        "nn.dense",
        |name| weights.get(name).map(|sizes| &sizes[..]),
        |data, bsr| {
            let mut args = vec![data];
            args.extend(bsr);
            op_call_with("nn.sparse_dense", args, &[])
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::printer::{print_module, PrintOptions};
    use relay_lower::parse_and_lower;

    /// The rewritten module, printed without types: type-checking it needs
    /// the `SparseDense` relation (see the module documentation).
    fn rewrite(text: &str, weights: &[(&str, [i64; 5])]) -> String {
        let (mut module, diagnostics) = parse_and_lower("t.relay", text);
        assert!(!diagnostics.has_errors());
        let weights: HashMap<String, [i64; 5]> =
            weights.iter().map(|(n, s)| (n.to_string(), *s)).collect();
        let main = dense_to_sparse(module.function("main").unwrap(), &weights);
        module.add_function("main", main);
        let options = PrintOptions {
            show_meta_data: true,
            show_types: false,
            reparseable: true,
        };
        print_module(&module, &options)
    }

    #[test]
    fn a_listed_dense_weight_becomes_three_bsr_parameters_placed_last() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4), float32], %w1: Tensor[(8, 4), float32], %w2: Tensor[(3, 8), float32]) {
  %0 = nn.dense(%x, %w1, units=None);
  nn.dense(%0, %w2, units=None)
}
"#;
        insta::assert_snapshot!(rewrite(text, &[("w1", [4, 2, 2, 4, 5])]), @r#"
        #[version = "0.0.5"]
        def @main(%x: Tensor[(1, 4), float32], %w2: Tensor[(3, 8), float32], %w1_data: Tensor[(4, 2, 2), float32], %w1_indices: Tensor[(4), int32], %w1_indptr: Tensor[(5), int32]) {
          %0 = nn.sparse_dense(%x, %w1_data, %w1_indices, %w1_indptr);
          nn.dense(%0, %w2, units=None)
        }
        "#);
    }

    #[test]
    fn the_lists_must_pair_up_and_each_shape_have_five_sizes() {
        let names = PipelineValue::List(vec![PipelineValue::Str("w".into())]);
        let short = PipelineValue::List(vec![PipelineValue::List(vec![PipelineValue::Int(1)])]);
        assert!(bsr_shapes(Some(&names), Some(&short))
            .unwrap_err()
            .contains("needs 5 sizes"));
        assert!(bsr_shapes(Some(&names), None)
            .unwrap_err()
            .contains("1 names but weight_shape 0 shapes"));
    }
}
