//! The `CombineParallel*` family: replaces several calls of one operator
//! that read the same input (parallel branches) by one bigger call whose
//! result is cut back into the branches' results, as TVM v0.13's
//! `combine_parallel_op.cc` does. The operator-specific parts live in
//! [`dense`], [`conv2d`] and [`batch_matmul`]; this module holds the shared
//! machinery.
//!
//! 1. **Finding branches.** The function is visited children first. A
//!    supported call of the operator is recorded as a user of its first
//!    argument only (that argument becomes a branch root); every other call
//!    is recorded as a user of each of its arguments. Only calls count as
//!    users. A branch starts at a call of the operator and extends through
//!    the single user of its last node, as long as that user is an
//!    element-wise or broadcast operator.
//! 2. **Grouping.** For each root (in the order roots were first seen),
//!    its users that call the operator are placed, in use order, into the
//!    first group of this root whose first branch they can be combined
//!    with, or into a new group.
//! 3. **Combining.** Every group with at least `min_num_branches` branches
//!    gets one combined call (`ParallelOpCombiner::make_combined_op`).
//!    Then, level by level, the ops that follow in every branch are merged
//!    too while they agree (same operator and attrs, fed by the previous
//!    level at the same argument position, compatible other arguments),
//!    up to the shortest branch. The last merged level of every branch is
//!    then replaced by its slice of the combined result.
//! 4. **Substitution.** The replacements are applied over the whole
//!    function; a replacement is itself substituted into, so groups that
//!    feed each other chain up.
//!
//! Whatever a combiner cannot build (a missing type, a symbolic size TVM
//! would have to read as a constant) leaves that group uncombined.

pub mod batch_matmul;
pub mod conv2d;
pub mod dense;

use relay_ir::attr_equal::{attrs_equal, AttrEquality};
use relay_ir::build::{int_array, op_call_with};
use relay_ir::dtype::DataType;
use relay_ir::op::OpPattern;
use relay_ir::rewrite::{children, post_order, with_children};
use relay_ir::{AttrValue, Call, Expr, Function, IRModule, TensorType};
use relay_pass_manager::pass_builder::{OnFunctions, PassBuilder};
use relay_pass_manager::pipeline::PipelineValue;
use relay_pass_manager::registry::{ParamSpec, PassArgs, PassSpec};
use relay_pass_manager::PassContext;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};
use std::sync::Arc;

/// One branch: a call of the combined operator, then the element-wise and
/// broadcast calls that follow it (each the single user of the previous).
pub type Branch = Vec<Expr>;

/// A pass's function-to-function transformation, made from its arguments.
pub(crate) type FunctionTransform = Arc<dyn Fn(&Function) -> Function + Send + Sync>;

/// What an operator-specific combiner decides and builds.
pub(crate) trait ParallelOpCombiner {
    /// The operator whose parallel calls are combined.
    fn op_name(&self) -> &'static str;

    /// Whether `call` may start a branch.
    fn is_supported_op(&self, call: &Call) -> bool;

    /// Whether the operator calls `a` and `b` can go into one group.
    fn can_ops_be_combined(&self, a: &Expr, b: &Expr) -> bool;

    /// The one call that computes every branch's operator call of `group`.
    fn make_combined_op(&mut self, group: &[Branch]) -> Option<Expr>;

    /// Whether argument `index` of the following ops `a` and `b` (of
    /// different branches, same level) can be merged.
    fn is_arg_compatible(&self, a: &Expr, b: &Expr, index: usize) -> bool;

    /// The merged call of level `depth` of every branch, applied to the
    /// merged result `data` at argument `parent_index`.
    fn make_combined_call_from_following_ops(
        &self,
        data: Expr,
        group: &[Branch],
        depth: usize,
        parent_index: usize,
    ) -> Option<Expr>;

    /// For every branch, its node at level `depth` and what replaces it:
    /// that branch's part of the merged result `data`.
    fn update_group_output(
        &self,
        data: &Expr,
        group: &[Branch],
        depth: usize,
    ) -> Option<Vec<(Expr, Expr)>>;
}

/// Combines the parallel branches of `function` that `combiner` handles,
/// in groups of at least `min_num_branches`.
pub(crate) fn combine_parallel_ops(
    function: &Function,
    combiner: &mut dyn ParallelOpCombiner,
    min_num_branches: u64,
) -> Function {
    let groups = find_branch_groups(function.expr(), &*combiner);
    let mut replacements: HashMap<usize, Expr> = HashMap::default();
    for group in &groups {
        if (group.len() as u64) < min_num_branches {
            continue;
        }
        let Some(pairs) = combine_branches(group, combiner) else {
            continue;
        };
        for (original, replacement) in pairs {
            // The first group to claim a node keeps it, as a map insert does.
            replacements.entry(original.addr()).or_insert(replacement);
        }
    }
    if replacements.is_empty() {
        return function.clone();
    }
    substitute(function.expr(), &replacements)
        .and_then(|expr| expr.as_function())
        .unwrap_or_else(|| function.clone())
}

/// The branch groups of `root` (steps 1 and 2 of the module doc).
fn find_branch_groups(root: &Expr, combiner: &dyn ParallelOpCombiner) -> Vec<Vec<Branch>> {
    let op_name = combiner.op_name();
    let mut users: HashMap<usize, Vec<Expr>> = HashMap::default();
    let mut branch_roots: Vec<Expr> = Vec::new();
    let mut seen_roots: HashSet<usize> = HashSet::default();
    for node in post_order(root) {
        let Some(call) = node.as_call() else {
            continue;
        };
        let starts_branch = calls_op(call, op_name) && combiner.is_supported_op(call);
        match call.args.first() {
            Some(first) if starts_branch => {
                if seen_roots.insert(first.addr()) {
                    branch_roots.push(first.clone());
                }
                users.entry(first.addr()).or_default().push(node.clone());
            }
            _ => {
                for arg in &call.args {
                    users.entry(arg.addr()).or_default().push(node.clone());
                }
            }
        }
    }

    let mut groups: Vec<Vec<Branch>> = Vec::new();
    for branch_root in &branch_roots {
        let Some(root_users) = users.get(&branch_root.addr()) else {
            continue;
        };
        let first_group_of_root = groups.len();
        for user in root_users {
            if !user.as_call().is_some_and(|call| calls_op(call, op_name)) {
                continue;
            }
            let branch = create_branch(user, &users);
            let compatible = groups[first_group_of_root..]
                .iter()
                .position(|group| combiner.can_ops_be_combined(user, &group[0][0]));
            match compatible {
                Some(offset) => groups[first_group_of_root + offset].push(branch),
                None => groups.push(vec![branch]),
            }
        }
    }
    groups
}

fn calls_op(call: &Call, op_name: &str) -> bool {
    call.callee.as_op().is_some_and(|op| op.name == op_name)
}

/// `start` and the chain of single element-wise or broadcast users after it.
fn create_branch(start: &Expr, users: &HashMap<usize, Vec<Expr>>) -> Branch {
    let mut branch = vec![start.clone()];
    while let Some(next) = branch
        .last()
        .and_then(|last| single_elementwise_user(last, users))
    {
        branch.push(next);
    }
    branch
}

/// The only call using `node`, when it is an element-wise or broadcast
/// operator.
fn single_elementwise_user(node: &Expr, users: &HashMap<usize, Vec<Expr>>) -> Option<Expr> {
    let [only_user] = users.get(&node.addr())?.as_slice() else {
        return None;
    };
    let pattern = only_user.as_call()?.callee.as_op()?.pattern?;
    (pattern <= OpPattern::Broadcast).then(|| only_user.clone())
}

/// Step 3 for one group: the replacements of its branches' last merged
/// level, or `None` when the combiner cannot build something.
fn combine_branches(
    group: &[Branch],
    combiner: &mut dyn ParallelOpCombiner,
) -> Option<Vec<(Expr, Expr)>> {
    let mut combined = combiner.make_combined_op(group)?;
    let depth = group.iter().map(Vec::len).min()?;
    let first = group.first()?;
    let mut level = 1;
    while level < depth {
        let previous = &first[level - 1];
        let parent_index = first[level]
            .as_call()?
            .args
            .iter()
            .position(|arg| arg.ptr_eq(previous))?;
        if !check_level(group, level, parent_index, &*combiner) {
            break;
        }
        combined =
            combiner.make_combined_call_from_following_ops(combined, group, level, parent_index)?;
        level += 1;
    }
    combiner.update_group_output(&combined, group, level - 1)
}

/// Whether the calls at `depth` of all branches can be merged: the same
/// operator and attrs, fed by their own branch at `parent_index`, and
/// compatible other arguments.
fn check_level(
    group: &[Branch],
    depth: usize,
    parent_index: usize,
    combiner: &dyn ParallelOpCombiner,
) -> bool {
    let Some(reference) = group.first().and_then(|branch| branch.get(depth)) else {
        return false;
    };
    let Some(reference_call) = reference.as_call() else {
        return false;
    };
    for branch in &group[1..] {
        let (Some(node), Some(previous)) = (branch.get(depth), branch.get(depth - 1)) else {
            return false;
        };
        let Some(call) = node.as_call() else {
            return false;
        };
        let same_op = match (call.callee.as_op(), reference_call.callee.as_op()) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            _ => false,
        };
        if !same_op
            || !attrs_equal(
                call.attrs.as_ref(),
                reference_call.attrs.as_ref(),
                AttrEquality::TVM_PASSES,
            )
            || call.args.len() != reference_call.args.len()
        {
            return false;
        }
        if !call
            .args
            .get(parent_index)
            .is_some_and(|arg| arg.ptr_eq(previous))
        {
            return false;
        }
        for index in 0..reference_call.args.len() {
            if index != parent_index && !combiner.is_arg_compatible(reference, node, index) {
                return false;
            }
        }
    }
    true
}

/// Step 4: `root` with every node of `replacements` replaced by its
/// replacement, itself substituted into. `None` if a replacement contains
/// the node it replaces (the substitution would never end).
fn substitute(root: &Expr, replacements: &HashMap<usize, Expr>) -> Option<Expr> {
    let mut done: HashMap<usize, Expr> = HashMap::default();
    let mut in_progress: HashSet<usize> = HashSet::default();
    // (node as it appears in the graph, children already scheduled?)
    let mut stack: Vec<(Expr, bool)> = vec![(root.clone(), false)];
    while let Some((node, expanded)) = stack.pop() {
        let target = replacements.get(&node.addr()).unwrap_or(&node).clone();
        if expanded {
            let new_children: Vec<Expr> = children(&target)
                .into_iter()
                .map(|child| done.get(&child.addr()).cloned())
                .collect::<Option<_>>()?;
            let result = with_children(&target, &new_children);
            in_progress.remove(&node.addr());
            done.insert(node.addr(), result.clone());
            done.insert(target.addr(), result);
            continue;
        }
        if done.contains_key(&node.addr()) {
            continue;
        }
        if !in_progress.insert(node.addr()) {
            return None;
        }
        stack.push((node.clone(), true));
        for child in children(&target).into_iter().rev() {
            if !done.contains_key(&child.addr()) {
                if in_progress.contains(&child.addr()) {
                    return None;
                }
                stack.push((child.clone(), false));
            }
        }
    }
    done.get(&root.addr()).cloned()
}

/// The checked tensor type of `expr`.
pub(crate) fn tensor_type(expr: &Expr) -> Option<&TensorType> {
    expr.checked_type()?.as_tensor()
}

/// The checked tensor type of argument `index` of the call `expr`.
pub(crate) fn arg_type(expr: &Expr, index: usize) -> Option<&TensorType> {
    tensor_type(expr.as_call()?.args.get(index)?)
}

/// Dimension `index` of the checked tensor type of `expr`, when it is a
/// known integer (TVM's `as_const_int` on it).
pub(crate) fn const_dim(expr: &Expr, index: usize) -> Option<i64> {
    tensor_type(expr)?.shape.get(index)?.as_int()
}

/// An `int32` integer immediate (a TVM `Integer` made from a C++ int).
pub(crate) fn int32_imm(value: i64) -> AttrValue {
    AttrValue::int_imm(value, DataType::INT32)
}

/// `concatenate((fields…), axis=…)`.
pub(crate) fn concatenate(fields: Vec<Expr>, axis: i64) -> Expr {
    op_call_with(
        "concatenate",
        vec![Expr::tuple(fields, None)],
        &[("axis", AttrValue::Int(axis))],
    )
}

/// `expand_dims(data, axis=…, num_newaxis=…)`.
pub(crate) fn expand_dims(data: Expr, axis: i64, num_newaxis: i64) -> Expr {
    op_call_with(
        "expand_dims",
        vec![data],
        &[
            ("axis", AttrValue::Int(axis)),
            ("num_newaxis", AttrValue::Int(num_newaxis)),
        ],
    )
}

/// `strided_slice(data, begin, end, strides, slice_mode="size")`: the
/// slice of `end[i]` elements from `begin[i]` (-1: to the end).
pub(crate) fn slice_by_size(data: Expr, begin: &[i64], end: &[i64], strides: &[i64]) -> Expr {
    op_call_with(
        "strided_slice",
        vec![data],
        &[
            ("begin", int_array(begin)),
            ("end", int_array(end)),
            ("strides", int_array(strides)),
            ("slice_mode", AttrValue::Str("size".into())),
            ("axes", AttrValue::Null),
        ],
    )
}

/// The `min_num_branches` parameter, common to the family.
fn min_num_branches_param() -> ParamSpec {
    ParamSpec::int(
        "min_num_branches",
        3,
        "the least number of parallel branches worth combining",
    )
    // TVM takes it as an unsigned 64-bit integer.
    .with_range(0, i64::MAX)
}

/// The value of `min_num_branches` (never negative: the registry checks
/// the parameter's range).
fn min_num_branches(args: &PassArgs) -> u64 {
    match args.get("min_num_branches") {
        Some(PipelineValue::Int(value)) => u64::try_from(*value).unwrap_or(3),
        _ => 3,
    }
}

/// The start of a family member's declaration: TVM gives each opt_level 4,
/// requires InferType and takes `min_num_branches` first.
fn family_pass(ctor: &str) -> PassBuilder<OnFunctions> {
    PassSpec::function(ctor, 4)
        .required(&["InferType"])
        .param(min_num_branches_param())
}

/// Finishes a family member's declaration: `make` builds the
/// function-to-function transformation from the arguments.
fn build_family(
    declaration: PassBuilder<OnFunctions>,
    make: fn(&PassArgs) -> FunctionTransform,
) -> PassSpec {
    declaration.build(move |args| {
        let transform = make(args);
        Ok(
            move |function: Function, _module: &IRModule, _ctx: &PassContext| {
                Ok(transform(&function))
            },
        )
    })
}

/// `(expr.shape.len())`: the rank of the checked tensor type of `expr`.
pub(crate) fn rank(expr: &Expr) -> Option<usize> {
    Some(tensor_type(expr)?.shape.len())
}

/// A call of the same callee with new arguments and the same attrs (TVM's
/// `Call(call->op, new_args, call->attrs, {})`).
pub(crate) fn same_call_with_args(call: &Call, args: Vec<Expr>) -> Expr {
    Expr::call(call.callee.clone(), args, call.attrs.clone(), None)
}

/// The call at `depth` of `branch`.
pub(crate) fn call_at(branch: &Branch, depth: usize) -> Option<&Call> {
    branch.get(depth)?.as_call()
}
