//! The indexed forward dataflow graph FuseOps partitions (TVM's
//! `IndexedForwardGraph`).
//!
//! Every expression the walk reaches gets a graph node; the nodes that the
//! walk finishes (variables, constants, calls, tuples, projections, lets,
//! ifs, matches and reference operations, but not operators, globals,
//! constructors or functions) are numbered in the order they finish, which
//! is a post-order of the expression: operands before their users.
//!
//! Each node records who consumes it (`outputs`, one edge per use, with the
//! fusion pattern of that use) and whether something the partitioner cannot
//! see consumes it (`extern_ref`): the function body, function parameters,
//! the callee of a non-operator call, let/if/match/ref operands and
//! non-tensor tuple fields are "external", which keeps fusion from crossing
//! control flow.
//!
//! The pattern of a use is the consumer's operator pattern, except that a
//! broadcasting operator whose argument already has the result's shape uses
//! it element-wise. Scalar constants of the simple dtypes are element-wise
//! (so they are fused and printed inline); every other constant is opaque.
//!
//! The walk follows TVM's visiting order exactly (children in order, each
//! node once, let chains handled iteratively) but runs on an explicit stack,
//! because real models are far deeper than the native stack allows.

use relay_ir::dtype::DataType;
use relay_ir::op::OpPattern;
use relay_ir::{Expr, ExprKind, Type, VarId};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// The identity of an expression node: every use of a variable is the same
/// variable, other nodes are identified by address (TVM keys on pointers).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum NodeKey {
    Node(usize),
    Var(VarId),
}

pub(crate) fn node_key(expr: &Expr) -> NodeKey {
    match expr.kind() {
        ExprKind::Var(var) => NodeKey::Var(var.id),
        _ => NodeKey::Node(expr.addr()),
    }
}

/// One numbered node of the finished graph.
pub(crate) struct IndexedNode {
    /// Consumed by something outside the partitioner's view.
    pub extern_ref: bool,
    pub pattern: OpPattern,
    /// (index of the consumer, pattern of the use), one per use, in the
    /// order the uses were met.
    pub outputs: Vec<(usize, OpPattern)>,
}

/// The numbered graph: `nodes[i]` is the i-th node in post-order.
pub(crate) struct IndexedGraph {
    pub nodes: Vec<IndexedNode>,
    pub index_of: HashMap<NodeKey, usize>,
}

/// A node while the graph is being built (numbered or not).
struct BuildNode {
    expr: Option<Expr>,
    index: Option<usize>,
    extern_ref: bool,
    pattern: OpPattern,
    /// (builder id of the consumer, pattern of the use).
    outputs: Vec<(usize, OpPattern)>,
}

/// A step of the explicit-stack walk.
enum Task {
    Visit(Expr),
    /// Number the node and mark it visited (its children are done).
    Finish(Expr),
    /// Mark visited without numbering (functions).
    MarkVisited(Expr),
    /// After a let's variable and value: go on down the let chain.
    LetContinue(Expr),
    /// A let whose inner chain is done: visit its body, then number it.
    LetPost(Expr),
}

struct Builder {
    nodes: Vec<BuildNode>,
    node_map: HashMap<NodeKey, usize>,
    post_dfs_order: Vec<usize>,
    visited: HashSet<NodeKey>,
}

/// Operators whose shape function depends on input values (TVM's
/// `TShapeDataDependent`): with a dynamic result type they cannot be fused.
const DATA_DEPENDENT_SHAPE_OPS: &[&str] = &[
    "arange",
    "argwhere",
    "broadcast_to",
    "dyn.broadcast_to",
    "dyn.expand_dims",
    "dyn.full",
    "dyn.image.resize2d",
    "dyn.nn.pad",
    "dyn.nn.upsampling",
    "dyn.nn.upsampling3d",
    "dyn.one_hot",
    "dyn.ones",
    "dyn.reshape",
    "dyn.sparse_to_dense",
    "dyn.squeeze",
    "dyn.strided_slice",
    "dyn.tile",
    "dyn.topk",
    "dyn.zeros",
    "sparse_fill_empty_rows",
    "stft",
];

/// Builds the graph of `root` (the function being fused).
pub(crate) fn build_graph(root: &Expr) -> Result<IndexedGraph, String> {
    let mut builder = Builder {
        nodes: Vec::new(),
        node_map: HashMap::default(),
        post_dfs_order: Vec::new(),
        visited: HashSet::default(),
    };
    builder.update(root, None, OpPattern::Opaque);
    builder.walk(root)?;
    builder.finish()
}

impl Builder {
    fn node_id(&mut self, expr: &Expr) -> usize {
        let key = node_key(expr);
        if let Some(&id) = self.node_map.get(&key) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(BuildNode {
            expr: None,
            index: None,
            extern_ref: false,
            pattern: OpPattern::Opaque,
            outputs: Vec::new(),
        });
        self.node_map.insert(key, id);
        id
    }

    /// Records that `consumer` uses `expr` with `pattern`; without a
    /// consumer the use is external.
    fn update(&mut self, expr: &Expr, consumer: Option<usize>, pattern: OpPattern) {
        let id = self.node_id(expr);
        match consumer {
            Some(consumer) => self.nodes[id].outputs.push((consumer, pattern)),
            None => self.nodes[id].extern_ref = true,
        }
    }

    /// Numbers `expr` (all its operands are numbered already).
    fn add_node(&mut self, expr: &Expr) -> Result<usize, String> {
        let id = self.node_id(expr);
        let node = &mut self.nodes[id];
        if node.index.is_some() {
            return Err("FuseOps: an expression node is reached twice as a let chain".into());
        }
        node.expr = Some(expr.clone());
        node.index = Some(self.post_dfs_order.len());
        self.post_dfs_order.push(id);
        Ok(id)
    }

    fn walk(&mut self, root: &Expr) -> Result<(), String> {
        let mut stack = vec![Task::Visit(root.clone())];
        while let Some(task) = stack.pop() {
            match task {
                Task::Visit(expr) => {
                    if !self.visited.contains(&node_key(&expr)) {
                        self.visit(&expr, &mut stack)?;
                    }
                }
                Task::Finish(expr) => {
                    self.add_node(&expr)?;
                    self.visited.insert(node_key(&expr));
                }
                Task::MarkVisited(expr) => {
                    self.visited.insert(node_key(&expr));
                }
                Task::LetContinue(expr) => {
                    stack.push(Task::LetPost(expr.clone()));
                    if let ExprKind::Let { body, .. } = expr.kind() {
                        if matches!(body.kind(), ExprKind::Let { .. }) {
                            self.let_pre(body, &mut stack);
                        }
                    }
                }
                Task::LetPost(expr) => {
                    if let ExprKind::Let { body, .. } = expr.kind() {
                        stack.push(Task::Finish(expr.clone()));
                        stack.push(Task::Visit(body.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    /// The first half of a let in a chain: its operands are external, its
    /// variable and value are visited now, the body once the chain ends.
    fn let_pre(&mut self, expr: &Expr, stack: &mut Vec<Task>) {
        if let ExprKind::Let { var, value, body } = expr.kind() {
            self.update(var.expr(), None, OpPattern::Opaque);
            self.update(value, None, OpPattern::Opaque);
            self.update(body, None, OpPattern::Opaque);
            stack.push(Task::LetContinue(expr.clone()));
            stack.push(Task::Visit(value.clone()));
            stack.push(Task::Visit(var.expr().clone()));
        }
    }

    /// Schedules the visit of `expr`'s children (in TVM's order) and the
    /// numbering of `expr` after them.
    fn visit(&mut self, expr: &Expr, stack: &mut Vec<Task>) -> Result<(), String> {
        let push_children = |stack: &mut Vec<Task>, children: Vec<&Expr>| {
            for child in children.into_iter().rev() {
                stack.push(Task::Visit(child.clone()));
            }
        };
        match expr.kind() {
            ExprKind::Var(_) => {
                self.add_node(expr)?;
                self.visited.insert(node_key(expr));
            }
            ExprKind::Constant(data) => {
                let id = self.add_node(expr)?;
                let dtype = data.dtype;
                let simple = [
                    DataType::int(32),
                    DataType::int(64),
                    DataType::float(32),
                    DataType::float(64),
                    DataType::bool(),
                ]
                .contains(&dtype);
                self.nodes[id].pattern = if data.ndim() == 0 && simple {
                    OpPattern::ElemWise
                } else {
                    OpPattern::Opaque
                };
                self.visited.insert(node_key(expr));
            }
            ExprKind::GlobalVar(_) | ExprKind::Op(_) | ExprKind::Constructor(_) => {
                self.visited.insert(node_key(expr));
            }
            ExprKind::Function(function) => {
                // Functions for an external compiler are left alone.
                if function.attrs.get("Compiler").is_some() {
                    self.visited.insert(node_key(expr));
                    return Ok(());
                }
                for param in &function.params {
                    self.update(param.expr(), None, OpPattern::Opaque);
                }
                self.update(&function.body, None, OpPattern::Opaque);
                stack.push(Task::MarkVisited(expr.clone()));
                let mut children: Vec<&Expr> = function.params.iter().map(|p| p.expr()).collect();
                children.push(&function.body);
                push_children(stack, children);
            }
            ExprKind::Call(call) => {
                let node = self.node_id(expr);
                let op_pattern = match call.callee.kind() {
                    ExprKind::Op(op) => {
                        let dynamic = expr.checked_type().is_some_and(Type::is_dynamic);
                        if dynamic && DATA_DEPENDENT_SHAPE_OPS.contains(&op.name.as_str()) {
                            OpPattern::Opaque
                        } else {
                            op.fusion_pattern()
                        }
                    }
                    _ => {
                        self.update(&call.callee, Some(node), OpPattern::Opaque);
                        OpPattern::Opaque
                    }
                };
                self.nodes[node].pattern = op_pattern;
                self.update(&call.callee, None, OpPattern::Opaque);
                let result_shape = expr.checked_type().and_then(|t| t.as_tensor());
                for arg in &call.args {
                    let arg_shape = arg.checked_type().and_then(|t| t.as_tensor());
                    let mut edge_pattern = op_pattern;
                    if edge_pattern == OpPattern::Broadcast {
                        if let (Some(result), Some(arg)) = (result_shape, arg_shape) {
                            if result.shape == arg.shape {
                                edge_pattern = OpPattern::ElemWise;
                            }
                        }
                    }
                    self.update(arg, Some(node), edge_pattern);
                }
                stack.push(Task::Finish(expr.clone()));
                let mut children = vec![&call.callee];
                children.extend(&call.args);
                push_children(stack, children);
            }
            ExprKind::Tuple(fields) => {
                let node = self.node_id(expr);
                self.nodes[node].pattern = OpPattern::Tuple;
                for field in fields {
                    if field.checked_type().and_then(|t| t.as_tensor()).is_some() {
                        self.update(field, Some(node), OpPattern::Injective);
                    } else {
                        self.update(field, None, OpPattern::Opaque);
                    }
                }
                stack.push(Task::Finish(expr.clone()));
                push_children(stack, fields.iter().collect());
            }
            ExprKind::TupleGetItem { tuple, .. } => {
                let field_types =
                    tuple
                        .checked_type()
                        .and_then(|t| t.as_tuple())
                        .ok_or_else(|| {
                            "FuseOps: a tuple projection's operand has no tuple type".to_string()
                        })?;
                let has_non_tensor = field_types.iter().any(|t| t.as_tensor().is_none());
                if has_non_tensor {
                    self.update(tuple, None, OpPattern::Opaque);
                } else {
                    let node = self.node_id(expr);
                    self.nodes[node].pattern = OpPattern::Injective;
                    self.update(tuple, Some(node), OpPattern::Injective);
                }
                stack.push(Task::Finish(expr.clone()));
                stack.push(Task::Visit(tuple.clone()));
            }
            ExprKind::Let { .. } => self.let_pre(expr, stack),
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                for operand in [cond, then_branch, else_branch] {
                    self.update(operand, None, OpPattern::Opaque);
                }
                stack.push(Task::Finish(expr.clone()));
                push_children(stack, vec![cond, then_branch, else_branch]);
            }
            ExprKind::RefCreate(value) | ExprKind::RefRead(value) => {
                self.update(value, None, OpPattern::Opaque);
                stack.push(Task::Finish(expr.clone()));
                stack.push(Task::Visit(value.clone()));
            }
            ExprKind::RefWrite { reference, value } => {
                self.update(reference, None, OpPattern::Opaque);
                self.update(value, None, OpPattern::Opaque);
                stack.push(Task::Finish(expr.clone()));
                push_children(stack, vec![reference, value]);
            }
            ExprKind::Match { data, clauses, .. } => {
                self.update(data, None, OpPattern::Opaque);
                for clause in clauses {
                    self.update(&clause.rhs, None, OpPattern::Opaque);
                }
                stack.push(Task::Finish(expr.clone()));
                // Pattern variables are not visited at their binding.
                let mut children = vec![data];
                children.extend(clauses.iter().map(|c| &c.rhs));
                push_children(stack, children);
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<IndexedGraph, String> {
        let mut nodes = Vec::with_capacity(self.post_dfs_order.len());
        let mut index_of =
            HashMap::with_capacity_and_hasher(self.post_dfs_order.len(), Default::default());
        for (index, &id) in self.post_dfs_order.iter().enumerate() {
            let node = &self.nodes[id];
            let expr = node
                .expr
                .clone()
                .ok_or_else(|| "FuseOps: a numbered node lost its expression".to_string())?;
            let mut outputs = Vec::with_capacity(node.outputs.len());
            for &(consumer, pattern) in &node.outputs {
                let consumer_index = self.nodes[consumer].index.ok_or_else(|| {
                    "FuseOps: an expression is used by a node outside the dataflow graph"
                        .to_string()
                })?;
                outputs.push((consumer_index, pattern));
            }
            index_of.insert(node_key(&expr), index);
            nodes.push(IndexedNode {
                extern_ref: node.extern_ref,
                pattern: node.pattern,
                outputs,
            });
        }
        Ok(IndexedGraph { nodes, index_of })
    }
}
