//! TVM v0.13's `IndexedGraph` of an expression (`src/relay/ir/indexed_graph.cc`):
//! every distinct sub-expression numbered in post-DFS order, and its
//! dominator — the least common ancestor, in the dominator tree, of the
//! nodes that use it (its "outputs"); the root has none. TVM's debugging pass
//! `CapturePostDfsIndexInSpans` writes both numbers into each node's span as
//! `index:<post-dfs index>:<dominator index>` (`-1` for none); [`span_text`]
//! gives that text.
//!
//! The numbering follows TVM's visitor: a call's callee before its
//! arguments (operators are numbered too), a function's parameters before
//! its body, a `let`'s value before its variable and body (the variable of a
//! `let` whose value calls it recursively is numbered when the `let` binds
//! it, and the recursive call does not use it), a match's scrutinee, then per
//! clause its pattern variables and right-hand side; a node reached twice
//! keeps its first number. Uses: a function is used by nothing but the node
//! around it, its body is used by it (parameters are used by their uses); a
//! `let`'s value is used by its variable, its body by the `let`; a match's
//! pattern variables use the scrutinee.
//!
//! [`span_text`]: IndexedGraph::span_text

use relay_ir::fxhash::FxMap as HashMap;
use relay_ir::{Expr, ExprKind, Pattern};

/// The post-DFS numbering of an expression's nodes and their dominators.
#[derive(Debug)]
pub struct IndexedGraph {
    /// The nodes in post-DFS order: a node's index is its position.
    nodes: Vec<Expr>,
    index_of: HashMap<usize, usize>,
    /// The dominator of each node (by index), `None` for the root and for
    /// nodes nothing uses.
    dominators: Vec<Option<usize>>,
}

impl IndexedGraph {
    /// The graph of `root` (a function, usually).
    pub fn new(root: &Expr) -> IndexedGraph {
        let mut creator = Creator::default();
        creator.visit(root);
        let Creator {
            nodes,
            index_of,
            recursive_calls,
            ..
        } = creator;
        let mut outputs: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut add_output = |input: &Expr, user: usize| {
            if let Some(&i) = index_of.get(&input.addr()) {
                outputs[i].push(user);
            }
        };
        for (index, node) in nodes.iter().enumerate() {
            match node.kind() {
                ExprKind::Tuple(fields) => fields.iter().for_each(|f| add_output(f, index)),
                ExprKind::Function(data) => add_output(&data.body, index),
                ExprKind::Call(call) => {
                    if !recursive_calls.contains(&node.addr()) {
                        add_output(&call.callee, index);
                    }
                    call.args.iter().for_each(|a| add_output(a, index));
                }
                ExprKind::Let { var, value, body } => {
                    if let Some(&var_index) = index_of.get(&var.expr().addr()) {
                        add_output(value, var_index);
                    }
                    add_output(body, index);
                }
                ExprKind::If {
                    cond,
                    then_branch,
                    else_branch,
                } => {
                    add_output(cond, index);
                    add_output(then_branch, index);
                    add_output(else_branch, index);
                }
                ExprKind::TupleGetItem { tuple, .. } => add_output(tuple, index),
                ExprKind::RefCreate(value) | ExprKind::RefRead(value) => add_output(value, index),
                ExprKind::RefWrite { reference, value } => {
                    add_output(reference, index);
                    add_output(value, index);
                }
                ExprKind::Match { data, clauses, .. } => {
                    for clause in clauses {
                        for var in pattern_vars(&clause.pattern) {
                            if let Some(&var_index) = index_of.get(&var.addr()) {
                                add_output(data, var_index);
                            }
                        }
                        add_output(&clause.rhs, index);
                    }
                }
                ExprKind::Var(_)
                | ExprKind::GlobalVar(_)
                | ExprKind::Constant(_)
                | ExprKind::Constructor(_)
                | ExprKind::Op(_) => {}
            }
        }
        let root_index = index_of.get(&root.addr()).copied();
        let dominators = post_dominators(&outputs, root_index);
        IndexedGraph {
            nodes,
            index_of,
            dominators,
        }
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The nodes in post-DFS order.
    pub fn nodes(&self) -> &[Expr] {
        &self.nodes
    }

    /// The post-DFS index of `expr`, if it is a node of the graph.
    pub fn index(&self, expr: &Expr) -> Option<usize> {
        self.index_of.get(&expr.addr()).copied()
    }

    /// The index of the dominator of the node at `index`.
    pub fn dominator(&self, index: usize) -> Option<usize> {
        self.dominators.get(index).copied().flatten()
    }

    /// The source text of the span TVM's `CapturePostDfsIndexInSpans` gives
    /// `expr` (`index:5:7`; `-1` for no dominator), as its printer shows it
    /// after `span=`.
    pub fn span_text(&self, expr: &Expr) -> Option<String> {
        let index = self.index(expr)?;
        let dominator = self
            .dominator(index)
            .map_or_else(|| "-1".to_string(), |d| d.to_string());
        Some(format!("index:{index}:{dominator}"))
    }
}

/// TVM's `PostDom`: from the last node to the first, each node's
/// dominator is the least common ancestor of its outputs in the tree built
/// so far; the root is external (no dominator).
fn post_dominators(outputs: &[Vec<usize>], root: Option<usize>) -> Vec<Option<usize>> {
    let count = outputs.len();
    let mut parent: Vec<Option<usize>> = vec![None; count];
    let mut depth: Vec<usize> = vec![0; count];
    for index in (0..count).rev() {
        if Some(index) == root {
            depth[index] = 1;
            continue;
        }
        let mut users = outputs[index].iter().copied();
        let lca = users.next().and_then(|first| {
            users.try_fold(first, |a, b| least_common_ancestor(a, b, &parent, &depth))
        });
        depth[index] = lca.map_or(1, |p| depth[p] + 1);
        parent[index] = lca;
    }
    parent
}

fn least_common_ancestor(
    mut lhs: usize,
    mut rhs: usize,
    parent: &[Option<usize>],
    depth: &[usize],
) -> Option<usize> {
    while lhs != rhs {
        let (l, r) = (depth[lhs], depth[rhs]);
        if l < r {
            rhs = parent[rhs]?;
        } else if l > r {
            lhs = parent[lhs]?;
        } else {
            rhs = parent[rhs]?;
            lhs = parent[lhs]?;
        }
    }
    Some(lhs)
}

/// TVM's `Creator`: numbers nodes in post-DFS order.
#[derive(Default)]
struct Creator {
    nodes: Vec<Expr>,
    index_of: HashMap<usize, usize>,
    /// Nodes visited (numbered or, for a let-bound variable met inside its
    /// own value, deliberately left for later).
    visited: HashMap<usize, ()>,
    /// The variable the value being visited is let-bound to.
    let_bound: Option<usize>,
    /// Calls of `let_bound` inside its value (recursive calls).
    recursive_calls: relay_ir::fxhash::FxSet<usize>,
}

impl Creator {
    fn visit(&mut self, expr: &Expr) {
        if self.visited.contains_key(&expr.addr()) {
            return;
        }
        crate::partial_eval::with_stack(|| self.visit_here(expr));
    }

    fn visit_here(&mut self, expr: &Expr) {
        match expr.kind() {
            ExprKind::Var(_) => {
                // A let-bound variable met in its own value: numbered when
                // the let binds it, after the value.
                if self.let_bound == Some(expr.addr()) {
                    return;
                }
            }
            ExprKind::Let { var, value, body } => {
                let outer = self.let_bound.replace(var.expr().addr());
                self.visit(value);
                self.let_bound = outer;
                self.visit(var.expr());
                self.visit(body);
            }
            ExprKind::Match { data, clauses, .. } => {
                self.visit(data);
                for clause in clauses {
                    for var in pattern_vars(&clause.pattern) {
                        self.visit(&var);
                    }
                    self.visit(&clause.rhs);
                }
            }
            _ => relay_ir::rewrite::for_each_child(expr, |child| self.visit(child)),
        }
        if self.visited.insert(expr.addr(), ()).is_some() {
            return;
        }
        if let ExprKind::Call(call) = expr.kind() {
            let calls_let_bound = self.let_bound == Some(call.callee.addr());
            if calls_let_bound && matches!(call.callee.kind(), ExprKind::Var(_)) {
                self.recursive_calls.insert(expr.addr());
            }
        }
        self.index_of.insert(expr.addr(), self.nodes.len());
        self.nodes.push(expr.clone());
    }
}

/// The variables a pattern binds, left to right, as expressions.
fn pattern_vars(pattern: &Pattern) -> Vec<Expr> {
    let mut out = Vec::new();
    let mut stack = vec![pattern];
    while let Some(p) = stack.pop() {
        match p {
            Pattern::Wildcard => {}
            Pattern::Var(v) => out.push(v.expr().clone()),
            Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
                stack.extend(fields.iter().rev())
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_lower::parse_and_lower;

    /// The nodes of `@main` TVM numbers, each as `<summary> index:i:d`.
    fn numbered(text: &str) -> Vec<String> {
        let (module, diagnostics) = parse_and_lower("test.relay", text);
        assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");
        let main = module.function("main").expect("@main").expr().clone();
        let graph = IndexedGraph::new(&main);
        graph
            .nodes()
            .iter()
            .filter(|n| !matches!(n.kind(), ExprKind::Op(_) | ExprKind::Constructor(_)))
            .map(|n| format!("{} {}", summary(n), graph.span_text(n).unwrap()))
            .collect()
    }

    fn summary(e: &Expr) -> String {
        match e.kind() {
            ExprKind::Var(v) => format!("%{}", v.name),
            ExprKind::GlobalVar(g) => format!("@{}", g.name()),
            ExprKind::Constant(_) => "const".into(),
            ExprKind::Tuple(f) => format!("tuple({})", f.len()),
            ExprKind::Function(_) => "fn".into(),
            ExprKind::Call(c) => match c.callee.kind() {
                ExprKind::Op(op) => format!("{}({})", op.name, c.args.len()),
                _ => format!("call({})", c.args.len()),
            },
            ExprKind::Let { .. } => "let".into(),
            ExprKind::If { .. } => "if".into(),
            ExprKind::Match { .. } => "match".into(),
            _ => "other".into(),
        }
    }

    #[test]
    fn tvm_test_capture_index_in_spans() {
        // The module of TVM's test_capture_postdfsindex_in_spans.py (its
        // float16 metadata constants as scalar constants: the numbering does
        // not look at values) and the indices TVM's expected output shows.
        let text = r#"#[version = "0.0.5"]
def @main(%x0 : Tensor[(1600, 768), float16], %x3 : Tensor[(600, 32, 64), float16]) {
  %0 = nn.dense(%x0, 1f16, units=2304);
  %1 = add(%0, 2f16);
  %2 = fn(%y_3_i0: Tensor[(600, 32, 64), float16], %y_3_i1: Tensor[(600, 32, 64), float16],
          Inline=1, Compiler="cublas", global_symbol="tvmgen_default_cublas_main_3", Primitive=1) {
    %6 = fn (%FunctionVar_0_01: Tensor[(600, 32, 64), float16], %FunctionVar_0_11: Tensor[(600, 32, 64), float16],
             PartitionedFromPattern="nn.batch_matmul_", Composite="cublas.batch_matmul") {
      nn.batch_matmul(%FunctionVar_0_01, %FunctionVar_0_11, out_dtype="float16", transpose_b=True)
    };
    %6(%y_3_i0, %y_3_i1)
  };
  %3 = %2(%x3, 3f16);
  (%1, %3)
}
"#;
        let expected = [
            "%x0 index:0:5",
            "%x3 index:1:18",
            "const index:4:5",
            "nn.dense(2) index:5:7",
            "const index:6:7",
            "add(2) index:7:19",
            "%y_3_i0 index:8:15",
            "%y_3_i1 index:9:15",
            "%FunctionVar_0_01 index:10:13",
            "%FunctionVar_0_11 index:11:13",
            "nn.batch_matmul(2) index:13:14",
            "fn index:14:15",
            "call(2) index:15:16",
            "fn index:16:18",
            "const index:17:18",
            "call(2) index:18:19",
            "tuple(2) index:19:20",
            "fn index:20:-1",
        ];
        assert_eq!(numbered(text), expected);
    }

    #[test]
    fn let_values_are_used_by_their_variables_and_recursive_calls_do_not_use_them() {
        let text = r#"#[version = "0.0.5"]
def @main(%n: int32) {
  let %f = fn (%i: int32) -> int32 { %f(%i) };
  %f(%n)
}
"#;
        // The let-bound %f is numbered after its value (the function), the
        // recursive call inside does not use it; the value is used by %f.
        let expected = [
            "%n index:0:5",
            "%i index:1:2",
            "call(1) index:2:3",
            "fn index:3:4",
            "%f index:4:5",
            "call(1) index:5:6",
            "let index:6:7",
            "fn index:7:-1",
        ];
        assert_eq!(numbered(text), expected);
    }
}
