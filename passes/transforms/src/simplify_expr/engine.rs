//! The rewrite engine behind `SimplifyExpr`: a small dataflow-pattern
//! language, a matcher with TVM's matching rules, the grouping of matches
//! into non-overlapping regions, and the fixpoint loop that applies a list
//! of rewrites in order, re-inferring types before each one.
//!
//! It reproduces what TVM v0.13's `RewritePatterns` does, because the order
//! in which matches are found and applied decides the printed result:
//!
//! * Patterns are wildcards, constants, operators (by name, or any operator
//!   whose `TOpPattern` is broadcast), calls and alternatives. A pattern node
//!   used twice in one pattern must match the same expression node. Calls to
//!   `add` and `multiply` also match with their two arguments swapped, tried
//!   after the written order; alternatives are tried left to right and each
//!   call argument is committed to its first match (no backtracking into an
//!   earlier argument), exactly like TVM's matcher.
//! * For one rewrite, matches are searched from the last node of the
//!   post-order (the function) towards the first, so an outer expression is
//!   matched before the expressions inside it. A match claims its interior
//!   nodes (everything but the expressions bound to wildcards); a later match
//!   that would reuse a claimed node, or whose interior nodes feed
//!   expressions outside the match that do not flow back into its root, is
//!   dropped.
//! * The graph is then rebuilt bottom-up, and at each match root the
//!   rewrite's callback sees the original node, the node rebuilt over the
//!   rewritten children, and the rewritten version of every matched node.
//! * Each pass over the rewrite list starts every rewrite with type
//!   inference over the whole function (skipped when nothing changed since
//!   the last one: it would give the same nodes back); the list is repeated
//!   until a pass changes nothing structurally. Like TVM, more than 100 rewrite
//!   applications in total is an error.

use relay_infer::infer_expr;
use relay_ir::equal::structural_equal;
use relay_ir::op::OpPattern;
use relay_ir::rewrite::{children, post_order, rewrite_post_order, with_children};
use relay_ir::{Expr, ExprKind, IRModule, Pattern as MatchPattern};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// The index of a node in a [`Pattern`].
pub(crate) type PatternId = usize;

/// One node of a dataflow pattern.
#[derive(Debug, Clone)]
enum PatternNode {
    /// Matches any expression.
    Wildcard,
    /// Matches a constant.
    Constant,
    /// Matches the operator of that name.
    Op(&'static str),
    /// Matches any operator registered with the broadcast `TOpPattern`.
    BroadcastOp,
    /// A call whose callee and arguments match the sub-patterns.
    Call {
        callee: PatternId,
        args: Vec<PatternId>,
    },
    /// The left pattern, or else the right one.
    Alt(PatternId, PatternId),
}

/// A pattern: an arena of nodes and its root.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pattern {
    nodes: Vec<PatternNode>,
    root: PatternId,
}

impl Pattern {
    fn push(&mut self, node: PatternNode) -> PatternId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    pub(crate) fn wildcard(&mut self) -> PatternId {
        self.push(PatternNode::Wildcard)
    }

    pub(crate) fn constant(&mut self) -> PatternId {
        self.push(PatternNode::Constant)
    }

    pub(crate) fn broadcast_op(&mut self) -> PatternId {
        self.push(PatternNode::BroadcastOp)
    }

    /// A call of the operator `name` (a fresh operator pattern, as each
    /// `IsOp` in TVM is).
    pub(crate) fn op_call(&mut self, name: &'static str, args: &[PatternId]) -> PatternId {
        let callee = self.push(PatternNode::Op(name));
        self.call(callee, args)
    }

    /// A call whose callee matches `callee`.
    pub(crate) fn call(&mut self, callee: PatternId, args: &[PatternId]) -> PatternId {
        self.push(PatternNode::Call {
            callee,
            args: args.to_vec(),
        })
    }

    /// `first || second || …`, grouped to the left as TVM's `||` is.
    pub(crate) fn any_of(&mut self, alternatives: &[PatternId]) -> PatternId {
        let mut iter = alternatives.iter().copied();
        let first = iter.next().unwrap_or_else(|| self.wildcard());
        iter.fold(first, |left, right| {
            self.push(PatternNode::Alt(left, right))
        })
    }

    /// Makes `root` the node the whole pattern is matched from.
    pub(crate) fn finish(mut self, root: PatternId) -> Pattern {
        self.root = root;
        self
    }
}

/// The matched expression of each pattern node that took part in a match.
pub(crate) type NodeMap = HashMap<PatternId, Expr>;

/// One rewrite: its pattern and what to do with a match.
pub(crate) trait Rewrite {
    /// The pattern searched for.
    fn pattern(&self) -> &Pattern;

    /// The replacement of `post` (the match root rebuilt over rewritten
    /// children; `pre` is the node as matched, with its checked type),
    /// or `None` to keep `post`. `nodes` maps the pattern's nodes to the
    /// rewritten versions of what they matched.
    fn callback(&self, pre: &Expr, post: &Expr, nodes: &NodeMap) -> Option<Expr>;
}

/// TVM's matcher state: what each pattern node matched so far, and the
/// order in which they were recorded (to undo a failed branch).
struct Matcher<'p> {
    pattern: &'p Pattern,
    memo: NodeMap,
    recorded: Vec<PatternId>,
}

impl<'p> Matcher<'p> {
    fn new(pattern: &'p Pattern) -> Self {
        Matcher {
            pattern,
            memo: HashMap::default(),
            recorded: Vec::new(),
        }
    }

    fn matches_root(&mut self, expr: &Expr) -> bool {
        self.memo.clear();
        self.recorded.clear();
        self.matches(self.pattern.root, expr)
    }

    fn forget_since(&mut self, watermark: usize) {
        for id in self.recorded.drain(watermark..) {
            self.memo.remove(&id);
        }
    }

    fn matches(&mut self, id: PatternId, expr: &Expr) -> bool {
        if let Some(previous) = self.memo.get(&id) {
            return same_node(previous, expr);
        }
        let watermark = self.recorded.len();
        let node = self.pattern.nodes.get(id).cloned();
        let ok = match node {
            None => false,
            Some(PatternNode::Wildcard) => true,
            Some(PatternNode::Constant) => expr.as_constant().is_some(),
            Some(PatternNode::Op(name)) => expr.as_op().is_some_and(|op| op.name == name),
            Some(PatternNode::BroadcastOp) => expr
                .as_op()
                .is_some_and(|op| op.pattern == Some(OpPattern::Broadcast)),
            Some(PatternNode::Alt(left, right)) => {
                self.matches(left, expr) || self.matches(right, expr)
            }
            Some(PatternNode::Call { callee, args }) => self.matches_call(callee, &args, expr),
        };
        if ok {
            self.memo.insert(id, expr.clone());
            self.recorded.push(id);
        } else {
            self.forget_since(watermark);
        }
        ok
    }

    fn matches_call(&mut self, callee: PatternId, args: &[PatternId], expr: &Expr) -> bool {
        let Some(call) = expr.as_call() else {
            return false;
        };
        if !self.matches(callee, &call.callee) {
            return false;
        }
        let watermark = self.recorded.len();
        if self.matches_args(args.iter().copied(), &call.args, watermark) {
            return true;
        }
        // `add` and `multiply` are commutative: try the arguments reversed.
        let commutative = matches!(
            self.pattern.nodes.get(callee),
            Some(PatternNode::Op("add" | "multiply"))
        );
        commutative && self.matches_args(args.iter().rev().copied(), &call.args, watermark)
    }

    fn matches_args(
        &mut self,
        patterns: impl ExactSizeIterator<Item = PatternId>,
        args: &[Expr],
        watermark: usize,
    ) -> bool {
        let ok = patterns.len() == args.len()
            && patterns
                .zip(args)
                .all(|(pattern, arg)| self.matches(pattern, arg));
        if !ok {
            self.forget_since(watermark);
        }
        ok
    }
}

/// Node identity as TVM sees it: operators are singletons there, so two
/// operator nodes of the same name are the same node.
fn same_node(a: &Expr, b: &Expr) -> bool {
    match (a.as_op(), b.as_op()) {
        (Some(x), Some(y)) => x.name == y.name,
        _ => a.ptr_eq(b),
    }
}

/// The expression graph of one rewrite pass: nodes in post-order, who uses
/// whom, and the post-dominator tree TVM's grouping consults.
struct ExprGraph {
    nodes: Vec<Expr>,
    index: HashMap<usize, usize>,
    outputs: Vec<Vec<usize>>,
    dominator: Vec<Option<usize>>,
}

impl ExprGraph {
    fn new(root: &Expr) -> ExprGraph {
        let nodes = post_order(root);
        let index: HashMap<usize, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (node.addr(), i))
            .collect();
        let mut outputs = vec![Vec::new(); nodes.len()];
        for (user, node) in nodes.iter().enumerate() {
            for (input, consumer) in dataflow_inputs(node) {
                if let Some(&i) = index.get(&input.addr()) {
                    let consumer = consumer.and_then(|c| index.get(&c.addr()).copied());
                    outputs[i].push(consumer.unwrap_or(user));
                }
            }
        }
        let mut graph = ExprGraph {
            nodes,
            index,
            outputs,
            dominator: Vec::new(),
        };
        graph.compute_post_dominators();
        graph
    }

    /// Each node's dominator parent is the common ancestor of its users in
    /// the tree built so far (users come later in post-order); the last node
    /// is the graph's exit.
    fn compute_post_dominators(&mut self) {
        let n = self.nodes.len();
        let mut dominator: Vec<Option<usize>> = vec![None; n];
        let mut depth = vec![1usize; n];
        for i in (0..n.saturating_sub(1)).rev() {
            let mut users = self.outputs[i].iter().copied();
            let parent = users.next().and_then(|first| {
                users.try_fold(first, |acc, other| {
                    common_ancestor(acc, other, &dominator, &depth)
                })
            });
            dominator[i] = parent;
            depth[i] = parent.map_or(1, |p| depth[p] + 1);
        }
        self.dominator = dominator;
    }

    /// Whether `node` lies strictly below `root` in the dominator tree.
    fn dominated_by(&self, root: usize, node: usize) -> bool {
        let mut current = self.dominator[node];
        let mut steps = 0;
        while let Some(parent) = current {
            if parent == root {
                return true;
            }
            steps += 1;
            if steps > self.nodes.len() {
                return false;
            }
            current = self.dominator[parent];
        }
        false
    }
}

fn common_ancestor(
    mut a: usize,
    mut b: usize,
    dominator: &[Option<usize>],
    depth: &[usize],
) -> Option<usize> {
    while a != b {
        if depth[a] < depth[b] {
            b = dominator[b]?;
        } else if depth[a] > depth[b] {
            a = dominator[a]?;
        } else {
            a = dominator[a]?;
            b = dominator[b]?;
        }
    }
    Some(a)
}

/// The dataflow edges into `expr` as TVM's indexed graph records them:
/// each input with the node it flows into (`None`: `expr` itself). A let
/// value flows into its variable and a match scrutinee into the clause
/// variables; function parameters have no edge from their function.
fn dataflow_inputs(expr: &Expr) -> Vec<(&Expr, Option<&Expr>)> {
    let mut out = Vec::new();
    match expr.kind() {
        ExprKind::Tuple(fields) => out.extend(fields.iter().map(|f| (f, None))),
        ExprKind::TupleGetItem { tuple, .. } => out.push((tuple, None)),
        ExprKind::Call(call) => {
            out.push((&call.callee, None));
            out.extend(call.args.iter().map(|a| (a, None)));
        }
        ExprKind::Function(f) => out.push((&f.body, None)),
        ExprKind::Let { var, value, body } => {
            out.push((value, Some(var.expr())));
            out.push((body, None));
        }
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => out.extend([(cond, None), (then_branch, None), (else_branch, None)]),
        ExprKind::Match { data, clauses, .. } => {
            for clause in clauses {
                let mut vars = Vec::new();
                clause_vars(&clause.pattern, &mut vars);
                out.extend(vars.into_iter().map(|v| (data, Some(v))));
                out.push((&clause.rhs, None));
            }
        }
        ExprKind::RefCreate(value) | ExprKind::RefRead(value) => out.push((value, None)),
        ExprKind::RefWrite { reference, value } => {
            out.push((reference, None));
            out.push((value, None));
        }
        ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Constant(_)
        | ExprKind::Constructor(_)
        | ExprKind::Op(_) => {}
    }
    out
}

fn clause_vars<'a>(pattern: &'a MatchPattern, out: &mut Vec<&'a Expr>) {
    match pattern {
        MatchPattern::Wildcard => {}
        MatchPattern::Var(var) => out.push(var.expr()),
        MatchPattern::Constructor(_, fields) | MatchPattern::Tuple(fields) => {
            for field in fields {
                clause_vars(field, out);
            }
        }
    }
}

/// The accepted matches of one pattern over one graph, by root address.
fn find_groups(pattern: &Pattern, graph: &ExprGraph) -> HashMap<usize, NodeMap> {
    let mut groups = HashMap::default();
    let mut claimed: HashSet<usize> = HashSet::default();
    let mut matcher = Matcher::new(pattern);
    for root in (0..graph.nodes.len()).rev() {
        if claimed.contains(&root) {
            continue;
        }
        let expr = &graph.nodes[root];
        if !matcher.matches_root(expr) {
            continue;
        }
        let Some(interior) = accept_group(pattern, graph, root, &matcher.memo, &claimed) else {
            continue;
        };
        claimed.extend(interior);
        groups.insert(expr.addr(), matcher.memo.clone());
    }
    groups
}

/// The interior of a match rooted at `root` (every node reachable from it
/// without passing through an expression bound to a wildcard), or `None`
/// when TVM would refuse the match: an interior computation already claimed
/// by an earlier match, or used outside the match on a path that does not
/// come back to its root.
fn accept_group(
    pattern: &Pattern,
    graph: &ExprGraph,
    root: usize,
    memo: &NodeMap,
    claimed: &HashSet<usize>,
) -> Option<HashSet<usize>> {
    let inputs: HashSet<usize> = memo
        .iter()
        .filter(|(id, _)| matches!(pattern.nodes.get(**id), Some(PatternNode::Wildcard)))
        .map(|(_, expr)| expr)
        .filter(|expr| !matches!(expr.kind(), ExprKind::Op(_) | ExprKind::Function(_)))
        .filter_map(|expr| graph.index.get(&expr.addr()).copied())
        .collect();
    let mut interior = HashSet::default();
    let mut stack = vec![root];
    while let Some(i) = stack.pop() {
        if inputs.contains(&i) || !interior.insert(i) {
            continue;
        }
        for child in children(&graph.nodes[i]) {
            if let Some(&c) = graph.index.get(&child.addr()) {
                stack.push(c);
            }
        }
    }
    for &i in &interior {
        if matches!(
            graph.nodes[i].kind(),
            ExprKind::Op(_) | ExprKind::Function(_) | ExprKind::Constant(_)
        ) {
            continue;
        }
        if claimed.contains(&i) {
            return None;
        }
        if i != root {
            let escapes = graph.outputs[i]
                .iter()
                .any(|&user| !interior.contains(&user) && !graph.dominated_by(root, user));
            if escapes {
                return None;
            }
        }
    }
    Some(interior)
}

/// Applies `rewrite` once over `expr` (typed), whose graph is `graph`:
/// finds its matches, then rebuilds the graph bottom-up calling the
/// callback at each match root.
fn apply_once(rewrite: &dyn Rewrite, expr: &Expr, graph: &ExprGraph) -> Expr {
    let groups = find_groups(rewrite.pattern(), graph);
    if groups.is_empty() {
        return expr.clone();
    }
    let mut memo: HashMap<usize, Expr> = HashMap::default();
    for node in &graph.nodes {
        let new_children: Vec<Expr> = children(node)
            .into_iter()
            .map(|c| memo.get(&c.addr()).cloned().unwrap_or_else(|| c.clone()))
            .collect();
        let rebuilt = with_children(node, &new_children);
        let replacement = match groups.get(&node.addr()) {
            Some(matched) => {
                let nodes: NodeMap = matched
                    .iter()
                    .map(|(id, e)| {
                        let post = memo.get(&e.addr()).cloned().unwrap_or_else(|| e.clone());
                        (*id, post)
                    })
                    .collect();
                rewrite.callback(node, &rebuilt, &nodes).unwrap_or(rebuilt)
            }
            None => rebuilt,
        };
        memo.insert(node.addr(), replacement);
    }
    memo.remove(&expr.addr()).unwrap_or_else(|| expr.clone())
}

/// `expr` with the type arguments of operator calls dropped: TVM's
/// structural equality ignores them (they only repeat the argument types),
/// and type inference fills them in for calls a rewrite built without, so
/// comparing them would see a change where TVM sees none.
fn without_operator_type_args(expr: &Expr) -> Expr {
    rewrite_post_order(expr, |_, post| match post.kind() {
        ExprKind::Call(call) if call.callee.as_op().is_some() && !call.type_args.is_empty() => {
            Expr::call(
                call.callee.clone(),
                call.args.clone(),
                call.attrs.clone(),
                post.span(),
            )
        }
        _ => post,
    })
}

#[cfg(test)]
thread_local! {
    /// How many times [`rewrite_to_fixpoint`] has inferred types, for tests
    /// of its cost.
    static INFERENCES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// TVM's limit on rewrite applications before it gives up.
const MAX_APPLICATIONS: usize = 100;

/// Applies `rewrites` in order, re-inferring types before each, until a
/// whole round changes nothing. `Err` when TVM would abort because the
/// rewrites keep changing the expression.
///
/// Inference is skipped where it would give back its input: when the
/// expression is still the very node the last inference returned (no
/// rewrite since then changed anything; rebuilding keeps unchanged nodes),
/// inferring it again writes the same types into the same nodes. The graph
/// of the expression is kept the same way. Without this, every round would
/// infer the whole function and build its graph once per rewrite (24 times
/// for `SimplifyExpr`) even when nothing matches.
pub(crate) fn rewrite_to_fixpoint(
    rewrites: &[Box<dyn Rewrite>],
    expr: &Expr,
    module: &IRModule,
) -> Result<Expr, String> {
    let mut post = expr.clone();
    let mut inferred: Option<Expr> = None;
    // The graph of the expression the rewrites are looking at, kept while
    // they change nothing (building it is most of a rewrite that finds no
    // match).
    let mut graph: Option<(Expr, ExprGraph)> = None;
    let mut applications = 0;
    loop {
        let last = post.clone();
        for rewrite in rewrites {
            if !inferred.as_ref().is_some_and(|typed| typed.ptr_eq(&post)) {
                post = infer_expr(&post, Some(module)).0;
                inferred = Some(post.clone());
                #[cfg(test)]
                INFERENCES.with(|count| count.set(count.get() + 1));
            }
            if !graph.as_ref().is_some_and(|(root, _)| root.ptr_eq(&post)) {
                graph = Some((post.clone(), ExprGraph::new(&post)));
            }
            let (_, current) = graph.as_ref().expect("built above");
            post = apply_once(rewrite.as_ref(), &post, current);
            applications += 1;
        }
        let unchanged = post.ptr_eq(&last)
            || structural_equal(
                &without_operator_type_args(&last),
                &without_operator_type_args(&post),
                true,
            );
        if unchanged || applications >= MAX_APPLICATIONS {
            break;
        }
    }
    if applications >= MAX_APPLICATIONS {
        return Err(format!(
            "Observed {MAX_APPLICATIONS} rewrite passes, possible conflicting passes?"
        ));
    }
    Ok(post)
}

#[cfg(test)]
mod tests {
    use super::super::simplify_expr_rewrites;
    use super::*;
    use relay_lower::parse_and_lower;

    /// The inferences the fixpoint loop makes on `main` of `text`, and
    /// the simplified body.
    fn inferences_to_simplify(text: &str) -> (usize, Expr) {
        let (module, diagnostics) = parse_and_lower("t.relay", text);
        assert!(!diagnostics.has_errors(), "the input reads");
        let main = module.function("main").expect("a main function");
        let (typed, diagnostics) = infer_expr(main.expr(), Some(&module));
        assert!(!diagnostics.has_errors(), "the input type-checks");
        INFERENCES.with(|count| count.set(0));
        let result = rewrite_to_fixpoint(&simplify_expr_rewrites(), &typed, &module)
            .expect("the rewrites reach a fixpoint");
        (INFERENCES.with(|count| count.get()), result)
    }

    #[test]
    fn a_function_no_rewrite_changes_is_inferred_once() {
        let text = "#[version = \"0.0.5\"]\n\
                    def @main(%x: Tensor[(2, 3), float32]) {\n  %0 = negative(%x);\n  exp(%0)\n}\n";
        let (inferences, _) = inferences_to_simplify(text);
        // Once per rewrite (24) before: the whole function each time.
        assert_eq!(inferences, 1, "inferences of a function nothing matches");
    }

    #[test]
    fn a_rewrite_costs_one_inference_after_it() {
        let text = "#[version = \"0.0.5\"]\n\
                    def @main(%x: Tensor[(2, 3), float32]) {\n  %0 = add(%x, %x);\n  exp(%0)\n}\n";
        let (inferences, result) = inferences_to_simplify(text);
        let printed = format!("{result:?}");
        assert!(
            printed.contains("multiply"),
            "`x + x` became `x * 2`: {printed}"
        );
        // The first round's start and after the rewrite; the round that
        // finds nothing to change starts from that inference's result (48
        // inferences before: one per rewrite in each round).
        assert_eq!(
            inferences, 2,
            "inferences of a function one rewrite changes"
        );
    }
}
