//! `CombineParallelDense`: combines parallel `nn.dense` calls on one input,
//! in one of two ways (TVM v0.13's `combine_parallel_dense.cc`).
//!
//! * `to_batch=true` (the default): denses whose weights have the same shape
//!   and whose `out_dtype` agree become one `nn.batch_matmul` of the stacked
//!   inputs and stacked weights (`transpose_b=True`). Following ops are
//!   merged by stacking their other arguments (a rank-1 argument first gets
//!   a leading unit axis so it broadcasts per batch); every branch then
//!   takes its batch back with `split` along axis 0 and `squeeze`.
//! * `to_batch=false`: denses with the same input width and `out_dtype`
//!   become one `nn.dense` of the weights concatenated along the output
//!   axis. Following ops are merged by concatenating their other arguments
//!   along the last axis (a scalar gets an axis; an argument that broadcasts
//!   a unit last axis over the branch's width is repeated to that width
//!   first); every branch then takes its columns back with a
//!   `strided_slice` on the last axis whose size equals the branch's dense
//!   width.

use super::{
    arg_type, build_family, concatenate, const_dim, expand_dims, family_pass, int32_imm,
    min_num_branches, rank, same_call_with_args, slice_by_size, tensor_type, Branch,
    FunctionTransform, ParallelOpCombiner,
};
use relay_ir::attr_equal::{values_equal, AttrEquality};
use relay_ir::build::{int_array, op_call_with};
use relay_ir::{AttrValue, Call, Expr, Function};
use relay_pass_manager::pipeline::PipelineValue;
use relay_pass_manager::registry::{ParamSpec, PassArgs, PassSpec};
use std::sync::Arc;

pub(crate) fn spec() -> PassSpec {
    let declaration = family_pass("CombineParallelDense")
        .param(ParamSpec::bool(
            "to_batch",
            true,
            "combine into one batch_matmul (true) or into one wider dense (false)",
        ))
        .doc("Combine parallel nn.dense calls on one input into one batch_matmul or dense");
    build_family(declaration, make_transform)
}

fn make_transform(args: &PassArgs) -> FunctionTransform {
    let min_branches = min_num_branches(args);
    let to_batch = !matches!(args.get("to_batch"), Some(PipelineValue::Bool(false)));
    Arc::new(move |function: &Function| combine_parallel_dense(function, min_branches, to_batch))
}

/// Combines the parallel denses of `function` (see the module doc).
pub fn combine_parallel_dense(function: &Function, min_branches: u64, to_batch: bool) -> Function {
    if to_batch {
        super::combine_parallel_ops(function, &mut DenseToBatchMatmul, min_branches)
    } else {
        super::combine_parallel_ops(function, &mut DenseToDense, min_branches)
    }
}

fn dense_out_dtype(call: &Call) -> Option<&AttrValue> {
    call.attrs.as_ref()?.get("out_dtype")
}

fn same_out_dtype(a: &Expr, b: &Expr) -> Option<bool> {
    let a = dense_out_dtype(a.as_call()?)?;
    let b = dense_out_dtype(b.as_call()?)?;
    Some(values_equal(a, b, AttrEquality::TVM_PASSES))
}

/// `stack((fields…), axis=0)`.
fn stack_leading(fields: Vec<Expr>) -> Expr {
    op_call_with(
        "stack",
        vec![Expr::tuple(fields, None)],
        &[("axis", int32_imm(0))],
    )
}

/// The arguments at `index` of every branch's call at `depth`.
fn args_at<'a>(
    group: &'a [Branch],
    depth: usize,
    index: usize,
) -> impl Iterator<Item = Option<&'a Expr>> + 'a {
    group
        .iter()
        .map(move |branch| super::call_at(branch, depth)?.args.get(index))
}

/// Denses into one `nn.batch_matmul` over stacked operands.
struct DenseToBatchMatmul;

impl ParallelOpCombiner for DenseToBatchMatmul {
    fn op_name(&self) -> &'static str {
        "nn.dense"
    }

    fn is_supported_op(&self, _call: &Call) -> bool {
        true
    }

    fn can_ops_be_combined(&self, a: &Expr, b: &Expr) -> bool {
        let weights = |e: &Expr| Some(tensor_type(e.as_call()?.args.get(1)?)?.shape.clone());
        let (Some(weight_a), Some(weight_b)) = (weights(a), weights(b)) else {
            return false;
        };
        same_out_dtype(a, b) == Some(true)
            && weight_a.len() >= 2
            && weight_b.len() >= 2
            && weight_a[0] == weight_b[0]
            && weight_a[1] == weight_b[1]
    }

    fn make_combined_op(&mut self, group: &[Branch]) -> Option<Expr> {
        let first = group.first()?.first()?.as_call()?;
        if first.args.len() != 2 {
            return None;
        }
        let mut stacked = Vec::with_capacity(2);
        for index in 0..first.args.len() {
            let operands = group
                .iter()
                .map(|branch| Some(branch.first()?.as_call()?.args.get(index)?.clone()))
                .collect::<Option<Vec<_>>>()?;
            stacked.push(stack_leading(operands));
        }
        let out_dtype = dense_out_dtype(first)?.clone();
        Some(op_call_with(
            "nn.batch_matmul",
            stacked,
            &[
                ("out_dtype", out_dtype),
                ("transpose_a", AttrValue::Bool(false)),
                ("transpose_b", AttrValue::Bool(true)),
            ],
        ))
    }

    fn is_arg_compatible(&self, a: &Expr, b: &Expr, index: usize) -> bool {
        match (arg_type(a, index), arg_type(b, index)) {
            (Some(ta), Some(tb)) => ta.dtype == tb.dtype && ta.shape == tb.shape,
            _ => false,
        }
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
            let operands = args_at(group, depth, index)
                .map(|arg| {
                    let arg = arg?;
                    // A vector gets a leading unit axis so that it
                    // broadcasts within its own batch.
                    Some(if rank(arg)? == 1 {
                        expand_dims(arg.clone(), 0, 1)
                    } else {
                        arg.clone()
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            new_args.push(stack_leading(operands));
        }
        Some(same_call_with_args(call, new_args))
    }

    fn update_group_output(
        &self,
        data: &Expr,
        group: &[Branch],
        depth: usize,
    ) -> Option<Vec<(Expr, Expr)>> {
        let split = op_call_with(
            "split",
            vec![data.clone()],
            &[
                ("indices_or_sections", int32_imm(group.len() as i64)),
                ("axis", AttrValue::Int(0)),
            ],
        );
        group
            .iter()
            .enumerate()
            .map(|(index, branch)| {
                let part = Expr::tuple_get_item(split.clone(), index, None);
                let squeezed = op_call_with("squeeze", vec![part], &[("axis", int_array(&[0]))]);
                Some((branch.get(depth)?.clone(), squeezed))
            })
            .collect()
    }
}

/// Denses into one wider `nn.dense` over concatenated weights.
struct DenseToDense;

impl ParallelOpCombiner for DenseToDense {
    fn op_name(&self) -> &'static str {
        "nn.dense"
    }

    fn is_supported_op(&self, _call: &Call) -> bool {
        true
    }

    fn can_ops_be_combined(&self, a: &Expr, b: &Expr) -> bool {
        // Output widths (weight dim 0) may differ.
        let input_width = |e: &Expr| {
            Some(
                tensor_type(e.as_call()?.args.get(1)?)?
                    .shape
                    .get(1)?
                    .clone(),
            )
        };
        match (input_width(a), input_width(b)) {
            (Some(wa), Some(wb)) => same_out_dtype(a, b) == Some(true) && wa == wb,
            _ => false,
        }
    }

    fn make_combined_op(&mut self, group: &[Branch]) -> Option<Expr> {
        let first = group.first()?.first()?.as_call()?;
        let input = first.args.first()?.clone();
        let mut weights = Vec::with_capacity(group.len());
        let mut total_units = 0i64;
        for branch in group {
            let weight = branch.first()?.as_call()?.args.get(1)?;
            total_units = total_units.checked_add(const_dim(weight, 0)?)?;
            weights.push(weight.clone());
        }
        let out_dtype = dense_out_dtype(first)?.clone();
        Some(op_call_with(
            "nn.dense",
            vec![input, concatenate(weights, 0)],
            &[("units", int32_imm(total_units)), ("out_dtype", out_dtype)],
        ))
    }

    fn is_arg_compatible(&self, a: &Expr, b: &Expr, index: usize) -> bool {
        let (Some(ta), Some(tb), Some(out_a), Some(out_b)) = (
            arg_type(a, index),
            arg_type(b, index),
            tensor_type(a),
            tensor_type(b),
        ) else {
            return false;
        };
        if ta.dtype != tb.dtype || ta.shape.len() != tb.shape.len() {
            return false;
        }
        // The argument must broadcast into the op's output, not widen it.
        if out_a.shape.len() < ta.shape.len() || out_b.shape.len() < tb.shape.len() {
            return false;
        }
        // Every dimension but the last (the concatenated one) must agree.
        let leading = ta.shape.len().saturating_sub(1);
        ta.shape[..leading] == tb.shape[..leading]
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
            let arg_rank = rank(call.args.get(index)?)?;
            let concat_axis = arg_rank.saturating_sub(1) as i64;
            let mut operands = Vec::with_capacity(group.len());
            for branch in group {
                let branch_call = super::call_at(branch, depth)?;
                let parent = branch_call.args.get(parent_index)?;
                let parent_rank = rank(parent)?;
                let out_width = const_dim(parent, parent_rank.checked_sub(1)?)?;
                let mut arg = branch_call.args.get(index)?.clone();
                let repeat_to_width = if arg_rank == 0 {
                    arg = expand_dims(arg, -1, 1);
                    true
                } else {
                    let arg_last = rank(&arg)?.checked_sub(1)?;
                    out_width > 1 && const_dim(&arg, arg_last)? == 1
                };
                if repeat_to_width {
                    // The unit axis would otherwise broadcast over every
                    // branch's columns once concatenated.
                    arg = op_call_with(
                        "repeat",
                        vec![arg],
                        &[
                            ("repeats", int32_imm(out_width)),
                            ("axis", int32_imm(concat_axis)),
                        ],
                    );
                }
                operands.push(arg);
            }
            new_args.push(concatenate(operands, concat_axis));
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
            let node = branch.get(depth)?;
            let out_shape = &tensor_type(node)?.shape;
            let width = const_dim(branch.first()?, 1)?;
            // Ops after the dense may move its output axis: take the last
            // axis of the branch's width (TVM's choice, right for the
            // element-wise and broadcast ops a branch can hold).
            let mut slice_axis = None;
            for axis in (0..out_shape.len()).rev() {
                if out_shape[axis].as_int()? == width {
                    slice_axis = Some(axis);
                    break;
                }
            }
            let slice_axis = slice_axis?;
            let mut begin = vec![0; out_shape.len()];
            let mut end = vec![-1; out_shape.len()];
            let strides = vec![1; out_shape.len()];
            begin[slice_axis] = offset;
            end[slice_axis] = width;
            offset = offset.checked_add(width)?;
            replacements.push((
                node.clone(),
                slice_by_size(data.clone(), &begin, &end, &strides),
            ));
        }
        Some(replacements)
    }
}
