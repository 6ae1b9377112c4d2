//! The dataflow graph of an expression with its post-dominator tree: TVM's
//! `IndexedGraph<Expr>` (`src/relay/ir/indexed_graph.{h,cc}`), which the
//! matcher uses for dominator patterns and the grouper to refuse matches
//! whose interior is used outside.
//!
//! Nodes are numbered in post-DFS order (children first, each node once).
//! Data flows from a node to its *outputs*: a call's callee and arguments
//! into the call, a tuple's fields into the tuple, a function's body (not
//! its parameters) into the function, a `let`'s value into its variable and
//! its body into the `let`, an `if`'s three parts into the `if`, a match's
//! scrutinee into its pattern variables and each right-hand side into the
//! match. The root is used "externally"; a node's dominator parent is the
//! least common ancestor of its outputs in the tree.

use relay_ir::rewrite::post_order;
use relay_ir::{Expr, ExprKind, Pattern as MatchPattern};
use std::collections::HashMap;

/// One node of the graph.
#[derive(Debug, Clone)]
pub struct GraphNode {
    pub expr: Expr,
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
    /// Depth in the post-dominator tree (the root is 1).
    pub depth: usize,
    pub dominator_parent: Option<usize>,
    pub dominator_children: Vec<usize>,
}

/// An expression's dataflow graph.
#[derive(Debug, Clone)]
pub struct ExprGraph {
    pub nodes: Vec<GraphNode>,
    index: HashMap<usize, usize>,
}

impl ExprGraph {
    pub fn new(root: &Expr) -> ExprGraph {
        let order = post_order(root);
        let index: HashMap<usize, usize> = order
            .iter()
            .enumerate()
            .map(|(i, e)| (e.addr(), i))
            .collect();
        let mut nodes: Vec<GraphNode> = order
            .into_iter()
            .map(|expr| GraphNode {
                expr,
                inputs: Vec::new(),
                outputs: Vec::new(),
                depth: 0,
                dominator_parent: None,
                dominator_children: Vec::new(),
            })
            .collect();
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            let mut flow = |from: &Expr, to: usize| {
                if let Some(&f) = index.get(&from.addr()) {
                    edges.push((f, to));
                }
            };
            match node.expr.kind() {
                ExprKind::Tuple(fields) => fields.iter().for_each(|f| flow(f, i)),
                ExprKind::Function(f) => flow(&f.body, i),
                ExprKind::Call(call) => {
                    flow(&call.callee, i);
                    call.args.iter().for_each(|a| flow(a, i));
                }
                ExprKind::Let { var, value, body } => {
                    if let Some(&v) = index.get(&var.expr().addr()) {
                        flow(value, v);
                    }
                    flow(body, i);
                }
                ExprKind::If {
                    cond,
                    then_branch,
                    else_branch,
                } => {
                    flow(cond, i);
                    flow(then_branch, i);
                    flow(else_branch, i);
                }
                ExprKind::TupleGetItem { tuple, .. } => flow(tuple, i),
                ExprKind::RefCreate(value) | ExprKind::RefRead(value) => flow(value, i),
                ExprKind::RefWrite { reference, value } => {
                    flow(reference, i);
                    flow(value, i);
                }
                ExprKind::Match { data, clauses, .. } => {
                    for clause in clauses {
                        let mut vars = Vec::new();
                        pattern_vars(&clause.pattern, &mut vars);
                        for var in vars {
                            if let Some(&v) = index.get(&var.addr()) {
                                flow(data, v);
                            }
                        }
                        flow(&clause.rhs, i);
                    }
                }
                ExprKind::Var(_)
                | ExprKind::GlobalVar(_)
                | ExprKind::Constant(_)
                | ExprKind::Constructor(_)
                | ExprKind::Op(_) => {}
            }
        }
        for (from, to) in edges {
            nodes[from].outputs.push(to);
            nodes[to].inputs.push(from);
        }
        let mut graph = ExprGraph { nodes, index };
        graph.post_dominators();
        graph
    }

    /// The node of `expr`, if it is part of the graph.
    pub fn node_of(&self, expr: &Expr) -> Option<usize> {
        self.index.get(&expr.addr()).copied()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// TVM's `PostDom`: from the root (the last node) backwards, each
    /// node's parent is the least common ancestor of its outputs.
    fn post_dominators(&mut self) {
        let n = self.nodes.len();
        for i in (0..n).rev() {
            if i + 1 == n {
                self.nodes[i].depth = 1;
                self.nodes[i].dominator_parent = None;
                continue;
            }
            let outputs = self.nodes[i].outputs.clone();
            let parent = self.least_common_ancestor(&outputs);
            self.nodes[i].depth = parent.map_or(1, |p| self.nodes[p].depth + 1);
            self.nodes[i].dominator_parent = parent;
            if let Some(p) = parent {
                self.nodes[p].dominator_children.push(i);
            }
        }
    }

    fn least_common_ancestor(&self, outputs: &[usize]) -> Option<usize> {
        let (&first, rest) = outputs.split_first()?;
        let mut parent = Some(first);
        for &o in rest {
            parent = self.lca2(parent, Some(o));
        }
        parent
    }

    fn lca2(&self, lhs: Option<usize>, rhs: Option<usize>) -> Option<usize> {
        let (mut lhs, mut rhs) = (lhs?, rhs?);
        while lhs != rhs {
            let (dl, dr) = (self.nodes[lhs].depth, self.nodes[rhs].depth);
            if dl < dr {
                rhs = self.nodes[rhs].dominator_parent?;
            } else if dl > dr {
                lhs = self.nodes[lhs].dominator_parent?;
            } else {
                rhs = self.nodes[rhs].dominator_parent?;
                lhs = self.nodes[lhs].dominator_parent?;
            }
        }
        Some(lhs)
    }

    /// Whether `other` is below `node` in the post-dominator tree.
    pub fn dominates(&self, node: usize, other: usize) -> bool {
        let mut stack = vec![node];
        let mut visited = std::collections::HashSet::new();
        while let Some(current) = stack.pop() {
            for &child in &self.nodes[current].dominator_children {
                if visited.insert(child) {
                    if child == other {
                        return true;
                    }
                    stack.push(child);
                }
            }
        }
        false
    }
}

fn pattern_vars<'a>(pattern: &'a MatchPattern, out: &mut Vec<&'a Expr>) {
    match pattern {
        MatchPattern::Wildcard => {}
        MatchPattern::Var(var) => out.push(var.expr()),
        MatchPattern::Constructor(_, fields) | MatchPattern::Tuple(fields) => {
            fields.iter().for_each(|f| pattern_vars(f, out))
        }
    }
}
