//! Turning each group into a primitive function (TVM's `FuseMutator`).
//!
//! The function is rebuilt bottom-up, operands before users, in TVM's
//! visiting order (callee, then arguments left to right). Every operator
//! call, tuple and projection is rebuilt against its group:
//!
//! * an operand from another group becomes a parameter of this group's
//!   function (`p0`, `p1`, ... in the order operands are first met; the
//!   same operand is one parameter), typed with the operand's type, unless
//!   `link_params` is set and the operand is a constant, which stays inline;
//! * an operand from the same group is used directly;
//! * the group's root node (its last node) is wrapped: its rebuilt body
//!   becomes `fn (%p0, ..., Primitive=1) { body }` called on the collected
//!   operands. `Primitive` is 0 when the body contains no call, and
//!   `relay.reshape_only=1` marks a body made only of reshape-like calls
//!   over tensor parameters.
//!
//! A tuple that is its own group's root stays a plain tuple, as does a
//! projection whose tuple lies in another group. Non-computational
//! operators (annotations, memory and VM operators) are rebuilt unfused,
//! `annotation.stop_fusion(x)` is replaced by `x`, primitive functions are
//! left as they are, and every other construct is rebuilt over its
//! rewritten children.

use super::graph::{node_key, IndexedGraph, NodeKey};
use relay_ir::dtype::DataType;
use relay_ir::rewrite::{children, with_children};
use relay_ir::{AttrValue, Call, DictAttrs, Expr, ExprKind, FunctionData, Type, Var};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// Operators that only reshape (TVM's `TReshapeOp`).
const RESHAPE_OPS: &[&str] = &[
    "contrib_reverse_reshape",
    "dyn.reshape",
    "dyn.squeeze",
    "expand_dims",
    "nn.batch_flatten",
    "reshape",
    "squeeze",
];

/// The parameters a group's function has collected so far.
#[derive(Default)]
struct GroupInputs {
    params: Vec<Var>,
    arguments: Vec<Expr>,
}

pub(crate) struct FuseRewriter<'a> {
    graph: &'a IndexedGraph,
    /// Root group (= index of its root node) of every graph node.
    root_group: &'a [usize],
    link_params: bool,
    memo: HashMap<NodeKey, Expr>,
    inputs: HashMap<usize, GroupInputs>,
}

impl<'a> FuseRewriter<'a> {
    pub(crate) fn new(graph: &'a IndexedGraph, root_group: &'a [usize], link_params: bool) -> Self {
        FuseRewriter {
            graph,
            root_group,
            link_params,
            memo: HashMap::default(),
            inputs: HashMap::default(),
        }
    }

    /// Rewrites `root` (the function being fused).
    pub(crate) fn run(&mut self, root: &Expr) -> Result<Expr, String> {
        let mut stack: Vec<(Expr, bool)> = vec![(root.clone(), false)];
        while let Some((expr, expanded)) = stack.pop() {
            let key = node_key(&expr);
            if self.memo.contains_key(&key) {
                continue;
            }
            if expanded {
                let rewritten = self.rewrite_node(&expr)?;
                self.memo.insert(key, rewritten);
                continue;
            }
            if is_primitive_function(&expr) {
                self.memo.insert(key, expr.clone());
                continue;
            }
            stack.push((expr.clone(), true));
            for child in children(&expr).into_iter().rev() {
                if !self.memo.contains_key(&node_key(child)) {
                    stack.push((child.clone(), false));
                }
            }
        }
        self.rewritten(root)
    }

    fn rewritten(&self, expr: &Expr) -> Result<Expr, String> {
        self.memo
            .get(&node_key(expr))
            .cloned()
            .ok_or_else(|| "FuseOps: an operand was not rewritten before its user".to_string())
    }

    fn group_of(&self, expr: &Expr) -> Result<(usize, usize), String> {
        let index = self
            .graph
            .index_of
            .get(&node_key(expr))
            .copied()
            .ok_or_else(|| {
                "FuseOps: an operator operand (a function, global or constructor) is not part \
                 of the dataflow graph"
                    .to_string()
            })?;
        Ok((index, self.root_group[index]))
    }

    /// `expr` with its children replaced by their rewritten forms.
    fn rebuilt(&self, expr: &Expr) -> Result<Expr, String> {
        let new_children = children(expr)
            .into_iter()
            .map(|c| self.rewritten(c))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(with_children(expr, &new_children))
    }

    fn rewrite_node(&mut self, expr: &Expr) -> Result<Expr, String> {
        match expr.kind() {
            ExprKind::Call(call) => {
                let Some(op) = call.callee.as_op() else {
                    return self.rebuilt(expr);
                };
                // Operators that compute nothing are not fused (quantized
                // operators are, since they are canonicalized later).
                if op.non_computational && !op.name.starts_with("qnn.") {
                    return self.rebuilt(expr);
                }
                let (index, group) = self.group_of(expr)?;
                if op.name == "annotation.stop_fusion" {
                    if let Some(arg) = call.args.first() {
                        return self.rewritten(arg);
                    }
                }
                let new_args = self.new_arguments(&call.args, group)?;
                let new_call = Expr::new(
                    ExprKind::Call(Call {
                        callee: call.callee.clone(),
                        args: new_args,
                        attrs: call.attrs.clone(),
                        type_args: call.type_args.clone(),
                    }),
                    expr.span(),
                );
                if group == index {
                    Ok(self.make_function(group, expr.checked_type().cloned(), new_call))
                } else {
                    Ok(new_call)
                }
            }
            ExprKind::Tuple(fields) => {
                let (index, group) = self.group_of(expr)?;
                if group == index {
                    return self.rebuilt(expr);
                }
                let new_fields = self.new_arguments(fields, group)?;
                if new_fields.iter().zip(fields).all(|(a, b)| a.ptr_eq(b)) {
                    return Ok(expr.clone());
                }
                Ok(Expr::tuple(new_fields, expr.span()))
            }
            ExprKind::TupleGetItem {
                tuple,
                index: field,
            } => {
                let (index, group) = self.group_of(expr)?;
                let new_tuple = self
                    .new_arguments(std::slice::from_ref(tuple), group)?
                    .pop()
                    .ok_or_else(|| "FuseOps: a projection lost its tuple".to_string())?;
                let projection = Expr::tuple_get_item(new_tuple, *field, None);
                if group != index {
                    return Ok(projection);
                }
                let (_, tuple_group) = self.group_of(tuple)?;
                if tuple_group != group {
                    // The tuple comes from an opaque producer: nothing to fuse.
                    return self.rebuilt(expr);
                }
                Ok(self.make_function(group, expr.checked_type().cloned(), projection))
            }
            _ => self.rebuilt(expr),
        }
    }

    /// The operands of a node of `group`, rewritten: operands from other
    /// groups are replaced by the group's parameters.
    fn new_arguments(&mut self, args: &[Expr], group: usize) -> Result<Vec<Expr>, String> {
        let mut new_args = Vec::with_capacity(args.len());
        for arg in args {
            let (_, arg_group) = self.group_of(arg)?;
            let new_arg = self.rewritten(arg)?;
            if arg_group == group || (self.link_params && new_arg.as_constant().is_some()) {
                new_args.push(new_arg);
                continue;
            }
            let ty = arg
                .checked_type()
                .cloned()
                .ok_or_else(|| "FuseOps: an operand has no checked type".to_string())?;
            let inputs = self.inputs.entry(group).or_default();
            let key = node_key(&new_arg);
            let existing = inputs.arguments.iter().position(|a| node_key(a) == key);
            let param = match existing {
                Some(position) => inputs.params[position].clone(),
                None => {
                    let param = Var::new(format!("p{}", inputs.params.len()), Some(ty), None);
                    inputs.params.push(param.clone());
                    inputs.arguments.push(new_arg);
                    param
                }
            };
            new_args.push(param.into_expr());
        }
        Ok(new_args)
    }

    /// `fn (params…, Primitive=…) -> ret_type { body }(arguments…)`.
    fn make_function(&mut self, group: usize, ret_type: Option<Type>, body: Expr) -> Expr {
        let (has_call, reshape_only) = reshape_only_check(&body);
        let inputs = self.inputs.remove(&group).unwrap_or_default();
        let int = |value: i64| AttrValue::int_imm(value, DataType::int(32));
        let mut attrs = vec![("Primitive".to_string(), int(i64::from(has_call)))];
        if has_call && reshape_only {
            attrs.push(("relay.reshape_only".to_string(), int(1)));
        }
        let function = Expr::new(
            ExprKind::Function(Box::new(FunctionData {
                params: inputs.params,
                body,
                ret_type,
                type_params: Vec::new(),
                attrs: DictAttrs::new(attrs),
                virtual_device: None,
            })),
            None,
        );
        Expr::call(function, inputs.arguments, None, None)
    }
}

fn is_primitive_function(expr: &Expr) -> bool {
    match expr.kind() {
        ExprKind::Function(f) => f
            .attrs
            .get("Primitive")
            .is_some_and(|v| v.as_int().is_some_and(|i| i != 0)),
        _ => false,
    }
}

/// (whether the body has a call, whether it only reshapes tensors): the
/// walk descends into a call's operands only while the call is a reshape,
/// and every variable it meets must be annotated with a tensor type.
fn reshape_only_check(body: &Expr) -> (bool, bool) {
    let mut has_call = false;
    let mut reshape_only = true;
    let mut seen = HashSet::default();
    let mut pending = vec![body];
    while let Some(expr) = pending.pop() {
        if !seen.insert(node_key(expr)) {
            continue;
        }
        match expr.kind() {
            ExprKind::Call(call) => {
                has_call = true;
                let is_reshape = call
                    .callee
                    .as_op()
                    .is_some_and(|op| RESHAPE_OPS.contains(&op.name.as_str()));
                if !is_reshape {
                    reshape_only = false;
                    continue;
                }
                pending.extend(children(expr));
            }
            ExprKind::Var(var) => {
                if var
                    .type_annotation
                    .as_ref()
                    .is_none_or(|t| t.as_tensor().is_none())
                {
                    reshape_only = false;
                }
            }
            _ => pending.extend(children(expr)),
        }
    }
    (has_call, reshape_only)
}
