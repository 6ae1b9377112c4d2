//! Grouping matches into non-overlapping regions: TVM's `PatternGrouper`
//! and `MatchExtractor`, shared by `rewrite` and `partition`.
//!
//! Matches are tried from the last node of the graph (the root) towards the
//! first, so an outer expression is claimed before the expressions inside
//! it; nodes already claimed by a group are not tried again, nor are the
//! functions made by an earlier partition (`PartitionedFromPattern`) and
//! everything inside them. Each match becomes a function:
//! * its parameters are the expressions matched by the pattern's leaves
//!   (and the arguments of `f(...)`/fields of `(...)` patterns), in the
//!   pattern's post-order, each once, except operators, functions, the
//!   expressions under dominator parents and paths and inside matched
//!   functions, and constants matched by `is_constant()` (or by an
//!   `is_expr` of a constant), which stay inside;
//! * its name lists the operators and forms of its body in post-order
//!   (`nn.conv2d_nn.relu_`), TVM's `PartitionedFromPattern`;
//! * parameters are called `FunctionVar_<match number>_<index>`, the match
//!   number counting every match tried, kept or not.
//!
//! A match is dropped when one of its interior nodes belongs to an earlier
//! group, or is used outside the match by an expression that the match's
//! root does not post-dominate (fusing it would create a cycle).

use crate::graph::ExprGraph;
use crate::matcher::{Matcher, NodeMap};
use crate::pattern::{post_order as pattern_post_order, Pattern, PatternKind};
use relay_ir::rewrite::{children, post_order, with_children};
use relay_ir::{Expr, ExprKind, Function, FunctionData, Var};
use std::collections::{HashMap, HashSet};

/// The function attribute naming the pattern a function was made from.
pub const PARTITIONED_FROM_PATTERN: &str = "PartitionedFromPattern";

/// One kept match.
#[derive(Debug, Clone)]
pub struct Group {
    /// The expression the pattern matched at.
    pub root: Expr,
    /// What each pattern node matched (in the original graph).
    pub matched: NodeMap,
    /// The expressions passed to the extracted function, in parameter order.
    pub args: Vec<Expr>,
    /// The match as a function of its inputs (parameters without types).
    pub function: Function,
    /// TVM's `PartitionedFromPattern` name.
    pub name: String,
}

/// The groups of one pattern in one expression.
pub struct Groups {
    pub graph: ExprGraph,
    pub groups: Vec<Group>,
    /// Node address → index in `groups`, for every node of a kept group.
    assignment: HashMap<usize, usize>,
}

impl Groups {
    /// The group whose root is `expr`.
    pub fn rooted_at(&self, expr: &Expr) -> Option<&Group> {
        let g = &self.groups[*self.assignment.get(&expr.addr())?];
        g.root.ptr_eq(expr).then_some(g)
    }
}

/// Finds the non-overlapping matches of `pattern` under `root`.
pub fn group_matches(pattern: &Pattern, root: &Expr) -> Groups {
    let graph = ExprGraph::new(root);
    let pattern_order = pattern_post_order(pattern);
    let mut grouper = Grouper {
        pattern_order: &pattern_order,
        groups: Vec::new(),
        assignment: HashMap::new(),
        graph_number: 0,
    };
    let mut matcher = Matcher::new(Some(&graph));
    let mut pre_partitioned: HashSet<usize> = HashSet::new();
    for node in graph.nodes.iter().rev() {
        let current = &node.expr;
        if grouper.assignment.contains_key(&current.addr()) {
            continue;
        }
        if let ExprKind::Function(f) = current.kind() {
            if f.attrs.get(PARTITIONED_FROM_PATTERN).is_some() {
                pre_partitioned.insert(current.addr());
                for e in post_order(&f.body) {
                    pre_partitioned.insert(e.addr());
                }
            }
        }
        if !pre_partitioned.contains(&current.addr()) && matcher.match_at(pattern, current) {
            let memo = matcher.memo().clone();
            grouper.create_group(&mut matcher, &graph, current, memo);
        }
    }
    let Grouper {
        groups, assignment, ..
    } = grouper;
    Groups {
        graph,
        groups,
        assignment,
    }
}

struct Grouper<'p> {
    pattern_order: &'p [Pattern],
    groups: Vec<Group>,
    assignment: HashMap<usize, usize>,
    graph_number: usize,
}

impl Grouper<'_> {
    fn create_group(
        &mut self,
        matcher: &mut Matcher,
        graph: &ExprGraph,
        root: &Expr,
        memo: NodeMap,
    ) {
        // Expressions that are part of the match but never parameters.
        let mut fuzzy: HashSet<usize> = HashSet::new();
        for p in self.pattern_order {
            match p.kind() {
                PatternKind::Dominator { parent, path, .. } => {
                    for fuzzy_pattern in [parent, path] {
                        fuzzy.extend(memo.get(fuzzy_pattern).iter().map(Expr::addr));
                    }
                }
                PatternKind::Function { .. } => {
                    for m in memo.get(p) {
                        if let ExprKind::Function(f) = m.kind() {
                            fuzzy.extend(post_order(&f.body).iter().map(Expr::addr));
                        }
                    }
                }
                _ => {}
            }
        }

        let mut inputs: HashMap<usize, Var> = HashMap::new();
        let mut args: Vec<Expr> = Vec::new();
        let mut params: Vec<Var> = Vec::new();
        let graph_number = self.graph_number;
        for p in self.pattern_order {
            let mut make_input = |input: &Expr, matcher: &mut Matcher| {
                if fuzzy.contains(&input.addr())
                    || matches!(input.kind(), ExprKind::Op(_) | ExprKind::Function(_))
                    || embed_const(matcher, input, p)
                    || inputs.contains_key(&input.addr())
                {
                    return;
                }
                let var = Var::new(
                    format!("FunctionVar_{graph_number}_{}", params.len()),
                    None,
                    None,
                );
                inputs.insert(input.addr(), var.clone());
                args.push(input.clone());
                params.push(var);
            };
            match p.kind() {
                PatternKind::Tuple(None) => {
                    for m in memo.get(p) {
                        if let ExprKind::Tuple(fields) = m.kind() {
                            fields.iter().for_each(|f| make_input(f, matcher));
                        }
                    }
                }
                PatternKind::Call { args: None, .. } => {
                    for m in memo.get(p) {
                        if let Some(call) = m.as_call() {
                            call.args.iter().for_each(|a| make_input(a, matcher));
                        }
                    }
                }
                _ if p.children().is_empty() => {
                    for m in memo.get(p) {
                        make_input(m, matcher);
                    }
                }
                _ => {}
            }
        }
        self.graph_number += 1;

        let extracted = extract(root, &inputs);
        let function = Function::new(
            FunctionData {
                params,
                body: extracted.body.clone(),
                ret_type: None,
                type_params: Vec::new(),
                attrs: Default::default(),
                virtual_device: None,
            },
            None,
        );

        let root_node = graph.node_of(root);
        for (pre, post) in &extracted.memo {
            let interior = !inputs.contains_key(&pre.addr())
                && !matches!(
                    pre.kind(),
                    ExprKind::Op(_) | ExprKind::Function(_) | ExprKind::Constant(_)
                );
            if !interior {
                continue;
            }
            if self.assignment.contains_key(&pre.addr()) {
                return;
            }
            if post.ptr_eq(&extracted.body) {
                continue;
            }
            let Some(node) = graph.node_of(pre) else {
                continue;
            };
            for &output in &graph.nodes[node].outputs {
                let out_expr = &graph.nodes[output].expr;
                let inside = extracted.memo_index.contains(&out_expr.addr());
                if !inside && !root_node.is_some_and(|r| graph.dominates(r, output)) {
                    return;
                }
            }
        }
        let gid = self.groups.len();
        for (pre, _) in &extracted.memo {
            self.assignment.insert(pre.addr(), gid);
        }
        self.groups.push(Group {
            root: root.clone(),
            matched: memo,
            args,
            function,
            name: extracted.name,
        });
    }
}

/// TVM's `EmbedConst`: a constant matched by a constant pattern stays in
/// the function rather than becoming a parameter.
fn embed_const(matcher: &mut Matcher, expr: &Expr, pattern: &Pattern) -> bool {
    if !matches!(expr.kind(), ExprKind::Constant(_)) {
        return false;
    }
    match pattern.kind() {
        PatternKind::Constant => true,
        PatternKind::Expr(e) => matches!(e.kind(), ExprKind::Constant(_)),
        PatternKind::Alt(left, right) => {
            if matcher.match_at(left, expr) {
                embed_const(matcher, expr, left)
            } else {
                embed_const(matcher, expr, right)
            }
        }
        _ => false,
    }
}

/// The match rebuilt over its parameters.
struct Extracted {
    body: Expr,
    /// Every node visited (inputs excepted), original → rebuilt, in
    /// visiting order.
    memo: Vec<(Expr, Expr)>,
    memo_index: HashSet<usize>,
    name: String,
}

/// TVM's `MatchExtractor`: copies the graph under `root`, replacing the
/// `inputs` by their variables, and names it after the forms it visits.
fn extract(root: &Expr, inputs: &HashMap<usize, Var>) -> Extracted {
    let mut rebuilt: HashMap<usize, Expr> = HashMap::new();
    let mut memo: Vec<(Expr, Expr)> = Vec::new();
    let mut name = String::new();
    if let Some(var) = inputs.get(&root.addr()) {
        return Extracted {
            body: var.expr().clone(),
            memo,
            memo_index: HashSet::new(),
            name,
        };
    }
    // Post-order without descending into inputs.
    let mut stack: Vec<(Expr, bool)> = vec![(root.clone(), false)];
    let mut seen: HashSet<usize> = HashSet::new();
    while let Some((expr, expanded)) = stack.pop() {
        if expanded {
            let new_children: Vec<Expr> = children(&expr)
                .into_iter()
                .map(|c| match inputs.get(&c.addr()) {
                    Some(v) => v.expr().clone(),
                    None => rebuilt.get(&c.addr()).cloned().unwrap_or_else(|| c.clone()),
                })
                .collect();
            let new = with_children(&expr, &new_children);
            name.push_str(&name_part(&expr));
            rebuilt.insert(expr.addr(), new.clone());
            memo.push((expr, new));
            continue;
        }
        if !seen.insert(expr.addr()) {
            continue;
        }
        stack.push((expr.clone(), true));
        for child in children(&expr).into_iter().rev() {
            if !inputs.contains_key(&child.addr()) && !seen.contains(&child.addr()) {
                stack.push((child.clone(), false));
            }
        }
    }
    let body = rebuilt
        .get(&root.addr())
        .cloned()
        .unwrap_or_else(|| root.clone());
    let memo_index = memo.iter().map(|(pre, _)| pre.addr()).collect();
    Extracted {
        body,
        memo,
        memo_index,
        name,
    }
}

/// What `MatchExtractor` appends to the name for one visited node.
fn name_part(expr: &Expr) -> String {
    match expr.kind() {
        ExprKind::Tuple(_) => "Tuple_".to_string(),
        ExprKind::Function(_) => "Function".to_string(),
        ExprKind::Call(call) => match call.callee.as_op() {
            Some(op) => format!("{}_", op.name),
            None => "Call_".to_string(),
        },
        ExprKind::Let { .. } => "Let_".to_string(),
        ExprKind::If { .. } => "If_".to_string(),
        ExprKind::TupleGetItem { index, .. } => format!("TupleGetItem{index}_"),
        ExprKind::Match { .. } => "Match_".to_string(),
        _ => String::new(),
    }
}
