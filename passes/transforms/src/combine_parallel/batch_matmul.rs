//! `CombineParallelBatchMatmul`: combines parallel `nn.batch_matmul` calls
//! on one left operand into one call whose right operands are concatenated
//! along their row axis (TVM v0.13's `combine_parallel_batch_matmul.cc`).
//!
//! Only calls with `transpose_a=False, transpose_b=True` combine (TVM's
//! limitation), and only when the right operands are rank 3 with the same
//! batch size and dtype and the results and `out_dtype` agree. Following ops
//! are merged by concatenating their other arguments along the last axis;
//! each branch then takes its features back with a `strided_slice` on the
//! last axis.

use super::{
    arg_type, build_family, concatenate, const_dim, family_pass, min_num_branches,
    same_call_with_args, slice_by_size, tensor_type, Branch, FunctionTransform, ParallelOpCombiner,
};
use relay_ir::attr_equal::{values_equal, AttrEquality};
use relay_ir::build::op_call_with;
use relay_ir::{AttrValue, Attrs, Call, Expr, Function};
use relay_pass_manager::registry::{PassArgs, PassSpec};
use std::sync::Arc;

pub(crate) fn spec() -> PassSpec {
    let declaration = family_pass("CombineParallelBatchMatmul")
        .doc("Combine parallel nn.batch_matmul calls on one input into one wider batch_matmul");
    build_family(declaration, make_transform)
}

fn make_transform(args: &PassArgs) -> FunctionTransform {
    let min_branches = min_num_branches(args);
    Arc::new(move |function: &Function| combine_parallel_batch_matmul(function, min_branches))
}

/// Combines the parallel batch matmuls of `function` (see the module doc).
pub fn combine_parallel_batch_matmul(function: &Function, min_branches: u64) -> Function {
    super::combine_parallel_ops(function, &mut BatchMatmulCombiner, min_branches)
}

struct BatchMatmulCombiner;

fn bool_attr(attrs: &Attrs, name: &str) -> Option<bool> {
    Some(attrs.get(name)?.as_int()? != 0)
}

/// Whether the call multiplies by the transposed right operand and not by
/// a transposed left one, the only layout the pass handles.
fn is_transposed_rhs_only(attrs: &Attrs) -> bool {
    bool_attr(attrs, "transpose_a") == Some(false) && bool_attr(attrs, "transpose_b") == Some(true)
}

impl ParallelOpCombiner for BatchMatmulCombiner {
    fn op_name(&self) -> &'static str {
        "nn.batch_matmul"
    }

    fn is_supported_op(&self, _call: &Call) -> bool {
        true
    }

    fn can_ops_be_combined(&self, a: &Expr, b: &Expr) -> bool {
        let (Some(call_a), Some(call_b)) = (a.as_call(), b.as_call()) else {
            return false;
        };
        let (Some(attrs_a), Some(attrs_b)) = (call_a.attrs.as_ref(), call_b.attrs.as_ref()) else {
            return false;
        };
        if !is_transposed_rhs_only(attrs_a) || !is_transposed_rhs_only(attrs_b) {
            return false;
        }
        let (Some(rhs_a), Some(rhs_b), Some(result_a), Some(result_b)) = (
            arg_type(a, 1),
            arg_type(b, 1),
            tensor_type(a),
            tensor_type(b),
        ) else {
            return false;
        };
        let same_out_dtype = match (attrs_a.get("out_dtype"), attrs_b.get("out_dtype")) {
            (Some(x), Some(y)) => values_equal(x, y, AttrEquality::TVM_PASSES),
            _ => false,
        };
        rhs_a.dtype == rhs_b.dtype
            && result_a.dtype == result_b.dtype
            && rhs_a.shape.len() == 3
            && rhs_b.shape.len() == 3
            && rhs_a.shape[0] == rhs_b.shape[0]
            && same_out_dtype
    }

    fn make_combined_op(&mut self, group: &[Branch]) -> Option<Expr> {
        let first = group.first()?.first()?.as_call()?;
        let data = first.args.first()?.clone();
        let weights = group
            .iter()
            .map(|branch| Some(branch.first()?.as_call()?.args.get(1)?.clone()))
            .collect::<Option<Vec<_>>>()?;
        let attrs = first.attrs.as_ref()?;
        let field = |name: &str| attrs.get(name).cloned();
        Some(op_call_with(
            "nn.batch_matmul",
            vec![data, concatenate(weights, 1)],
            &[
                ("out_dtype", field("out_dtype")?),
                (
                    "transpose_a",
                    AttrValue::Bool(bool_attr(attrs, "transpose_a")?),
                ),
                (
                    "transpose_b",
                    AttrValue::Bool(bool_attr(attrs, "transpose_b")?),
                ),
            ],
        ))
    }

    fn is_arg_compatible(&self, _a: &Expr, _b: &Expr, _index: usize) -> bool {
        true
    }

    fn make_combined_call_from_following_ops(
        &self,
        data: Expr,
        group: &[Branch],
        depth: usize,
        parent_index: usize,
    ) -> Option<Expr> {
        let call = super::call_at(group.first()?, depth)?;
        let mut new_args = Vec::with_capacity(call.args.len());
        for index in 0..call.args.len() {
            if index == parent_index {
                new_args.push(data.clone());
                continue;
            }
            let operands = group
                .iter()
                .map(|branch| Some(super::call_at(branch, depth)?.args.get(index)?.clone()))
                .collect::<Option<Vec<_>>>()?;
            new_args.push(concatenate(operands, -1));
        }
        Some(same_call_with_args(call, new_args))
    }

    fn update_group_output(
        &self,
        data: &Expr,
        group: &[Branch],
        depth: usize,
    ) -> Option<Vec<(Expr, Expr)>> {
        let mut offset = 0i64;
        let mut replacements = Vec::with_capacity(group.len());
        for branch in group {
            let batch_matmul = branch.first()?.as_call()?;
            let features = const_dim(batch_matmul.args.get(1)?, 1)?;
            let begin = [0, 0, offset];
            let end = [-1, -1, features];
            offset = offset.checked_add(features)?;
            replacements.push((
                branch.get(depth)?.clone(),
                slice_by_size(data.clone(), &begin, &end, &[1, 1, 1]),
            ));
        }
        Some(replacements)
    }
}
