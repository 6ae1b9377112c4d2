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
//!   disappears.
//!
//! Type-checking the result needs the `SparseDense` relation of
//! `nn.sparse_dense`.
//!
//! Registered like TVM: a function pass at opt_level 4 requiring
//! `DeadCodeElimination`.

use crate::free_var_params::free_vars_as_params;
use relay_ir::build::op_call_with;
use relay_ir::dtype::DataType;
use relay_ir::rewrite::rewrite_function;
use relay_ir::{Dim, Function, IRModule, Type, Var, VarId};
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

/// The `weight_name` and `weight_shape` parameters of the sparse
/// conversions (DenseToSparse, Conv2dToSparse), paired up: each name with
/// the sizes listed for it. TVM requires the two lists to have one entry
/// each per weight.
pub(crate) fn listed_bsr_sizes(
    names: Option<&PipelineValue>,
    shapes: Option<&PipelineValue>,
) -> Result<Vec<(String, Vec<i64>)>, String> {
    let list = |value: Option<&PipelineValue>| match value {
        Some(PipelineValue::List(items)) => items.clone(),
        _ => Vec::new(),
    };
    let (names, shapes) = (list(names), list(shapes));
    if names.len() != shapes.len() {
        return Err(format!(
            "weight_name has {} names but weight_shape {} shapes",
            names.len(),
            shapes.len()
        ));
    }
    let mut weights = Vec::with_capacity(names.len());
    for (name, shape) in names.iter().zip(&shapes) {
        let PipelineValue::Str(name) = name else {
            return Err(format!(
                "weight_name must be a list of strings, found {}",
                name.type_name()
            ));
        };
        let PipelineValue::List(items) = shape else {
            return Err(format!(
                "weight_shape must be a list of lists, found {}",
                shape.type_name()
            ));
        };
        let sizes = items
            .iter()
            .map(|item| match item {
                PipelineValue::Int(v) => Ok(*v),
                other => Err(format!(
                    "weight_shape must hold lists of integers, found {}",
                    other.type_name()
                )),
            })
            .collect::<Result<Vec<i64>, String>>()?;
        weights.push((name.clone(), sizes));
    }
    Ok(weights)
}

/// Rewrites every `nn.dense` of a listed weight and rebuilds the parameters.
pub fn dense_to_sparse(function: &Function, weights: &HashMap<String, [i64; 5]>) -> Function {
    let mut new_vars: Vec<VarId> = Vec::new();
    let rewritten = rewrite_function(function, |pre, post| {
        let Some(call) = pre.as_call() else {
            return post;
        };
        if call.callee.as_op().map(|op| op.name.as_str()) != Some("nn.dense") {
            return post;
        }
        let Some(weight) = call.args.get(1).and_then(|w| w.as_var()) else {
            return post;
        };
        let Some(sizes) = weights.get(weight.name()) else {
            return post;
        };
        let data = post.as_call().expect("a rewritten call stays a call").args[0].clone();
        let tensor = |dims: &[i64], dtype: DataType| {
            Type::tensor(dims.iter().map(|&d| Dim::int32(d)).collect(), dtype)
        };
        let prefix = weight.name();
        let bsr = [
            Var::new(
                format!("{prefix}.data"),
                Some(tensor(&sizes[..3], DataType::FLOAT32)),
                None,
            ),
            Var::new(
                format!("{prefix}.indices"),
                Some(tensor(&sizes[3..4], DataType::int(32))),
                None,
            ),
            Var::new(
                format!("{prefix}.indptr"),
                Some(tensor(&sizes[4..5], DataType::int(32))),
                None,
            ),
        ];
        new_vars.extend(bsr.iter().map(Var::id));
        let mut args = vec![data];
        args.extend(bsr.into_iter().map(Var::into_expr));
        op_call_with("nn.sparse_dense", args, &[])
    });
    free_vars_as_params(&rewritten, &new_vars)
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
