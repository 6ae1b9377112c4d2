//! The machinery shared by `ToANormalForm` and `ToBasicBlockNormalForm`, as
//! TVM v0.13 computes them (`to_a_normal_form.cc`,
//! `analysis/dependency_graph.cc`).
//!
//! Three steps, none recursive on the depth of the expression:
//!
//! 1. **Dependency graph.** Every expression node (globals, operators and
//!    constructors counted once per name, as TVM shares those objects) gets
//!    a graph node; `if` branches, function bodies, `let` bodies and match
//!    clauses get extra *scope* nodes between the construct and its parts.
//!    Edges run from users to what they use, and each node remembers its
//!    users in the order the edges were made. That order and the post-order
//!    of nodes follow TVM's visitor exactly (dataflow nodes visit all their
//!    operands before linking to them; other nodes visit and link operand by
//!    operand), because the basic-block variant depends on which user comes
//!    first.
//! 2. **Scopes.** Walking the post-order backwards (users before what they
//!    use), a node's scope is the lowest common ancestor of its users'
//!    scopes; a scope node opens a child scope. The root is in the global
//!    scope. A node whose scope differs from its first user's is *lifted*.
//! 3. **Fill.** A walk in TVM's order rebuilds the expression, binding each
//!    compound value to a variable in the let list of its scope. In full
//!    A-normal form every compound value is bound to a fresh `x_N`; in
//!    basic-block form only lifted values and existing `let`s are. Each
//!    scope's bindings wrap the rebuilt part that opened the scope. A fresh
//!    name is drawn for every compound value even when it is not bound, as
//!    TVM does, so the numbering matches.
//!
//! Rebuilt calls, projections, `if`s, matches and references carry no
//! checked type (TVM constructs new nodes); tuples and functions keep theirs
//! (TVM copies them). Expressions annotated with devices (`on_device`,
//! virtual devices) are refused rather than rewritten without the device
//! bookkeeping TVM does for them.

use relay_ir::build::fresh_let_variable;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{post_order, with_children};
use relay_ir::{Call, Clause, Expr, ExprKind, Function, Var};
use std::collections::VecDeque;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// Which normal form to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormalForm {
    /// Every compound value let-bound.
    ANormal,
    /// Only values shared across scopes (and existing lets) let-bound.
    BasicBlock,
}

/// Rewrites `function` into the requested normal form.
pub fn to_normal_form(function: &Function, form: NormalForm) -> Result<Function, Diagnostic> {
    reject_device_annotations(function)?;
    let graph = DependencyGraph::build(function.expr());
    let scopes = ScopeAnalysis::compute(&graph);
    let include = match form {
        NormalForm::ANormal => None,
        NormalForm::BasicBlock => Some(&scopes.lifted),
    };
    let mut filler = Filler {
        graph: &graph,
        scopes: &scopes,
        include,
        let_lists: vec![VecDeque::new(); scopes.scope_parent.len()],
        memo: HashMap::default(),
        function_nesting: 0,
    };
    let body = filler.run(function.expr());
    let root_scope = filler.scope_of(function.expr());
    let wrapped = filler
        .close_scope(root_scope, Filled::Expr(body))
        .into_expr();
    wrapped
        .as_function()
        .ok_or_else(|| Diagnostic::pass_failed("normal form conversion did not produce a function"))
}

fn reject_device_annotations(function: &Function) -> Result<(), Diagnostic> {
    for node in post_order(function.expr()) {
        let annotated = match node.kind() {
            ExprKind::Call(call) => call
                .callee
                .as_op()
                .is_some_and(|op| op.name == "on_device" || op.name == "device_copy"),
            ExprKind::Function(f) => f.virtual_device.is_some(),
            ExprKind::Var(v) => v.virtual_device.is_some(),
            _ => false,
        };
        if annotated {
            return Err(Diagnostic::pass_failed(
                "normal form conversion of device-annotated expressions (on_device, \
                 device_copy, virtual_device) is not supported",
            ));
        }
    }
    Ok(())
}

/// How graph nodes are identified: by node identity, except for globals,
/// operators and constructors, which TVM shares by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum NodeKey {
    Node(usize),
    Global(String),
    Operator(String),
    Constructor(String),
}

fn node_key(expr: &Expr) -> NodeKey {
    match expr.kind() {
        ExprKind::GlobalVar(global) => NodeKey::Global(global.name().to_string()),
        ExprKind::Op(op) => NodeKey::Operator(op.name.clone()),
        ExprKind::Constructor(ctor) => NodeKey::Constructor(ctor.name().to_string()),
        _ => NodeKey::Node(expr.addr()),
    }
}

type NodeId = usize;

#[derive(Debug, Default)]
struct GraphNode {
    users: Vec<NodeId>,
    uses: Vec<NodeId>,
    opens_scope: bool,
    /// The expression, for expression nodes (scope nodes have none).
    expr: Option<Expr>,
}

/// The dependency graph of step 1 (see the module doc).
struct DependencyGraph {
    nodes: Vec<GraphNode>,
    by_key: HashMap<NodeKey, NodeId>,
    post_order: Vec<NodeId>,
}

/// One step of the emulated recursive graph construction.
enum BuildStep {
    Visit(Expr),
    LinkExpr(NodeId, Expr),
    LinkNode(NodeId, NodeId),
    Finish(NodeId),
}

impl DependencyGraph {
    fn build(root: &Expr) -> DependencyGraph {
        let mut graph = DependencyGraph {
            nodes: Vec::new(),
            by_key: HashMap::default(),
            post_order: Vec::new(),
        };
        let mut visited: HashSet<NodeKey> = HashSet::default();
        // A stack of frames, each a reversed list of steps.
        let mut frames: Vec<Vec<BuildStep>> = vec![vec![BuildStep::Visit(root.clone())]];
        while let Some(frame) = frames.last_mut() {
            let Some(step) = frame.pop() else {
                frames.pop();
                continue;
            };
            match step {
                BuildStep::Visit(expr) => {
                    let key = node_key(&expr);
                    if !visited.insert(key.clone()) {
                        continue;
                    }
                    let id = graph.expr_node(&expr);
                    let mut steps = graph.steps_for(id, &expr);
                    steps.reverse();
                    frames.push(steps);
                }
                BuildStep::LinkExpr(user, used) => {
                    let used = graph.expr_node(&used);
                    graph.link(user, used);
                }
                BuildStep::LinkNode(user, used) => graph.link(user, used),
                BuildStep::Finish(id) => graph.post_order.push(id),
            }
        }
        graph
    }

    fn new_node(&mut self, opens_scope: bool, expr: Option<Expr>) -> NodeId {
        self.nodes.push(GraphNode {
            opens_scope,
            expr,
            ..GraphNode::default()
        });
        self.nodes.len() - 1
    }

    fn expr_node(&mut self, expr: &Expr) -> NodeId {
        let key = node_key(expr);
        if let Some(&id) = self.by_key.get(&key) {
            return id;
        }
        let id = self.new_node(false, Some(expr.clone()));
        self.by_key.insert(key, id);
        id
    }

    fn node_of(&self, expr: &Expr) -> Option<NodeId> {
        self.by_key.get(&node_key(expr)).copied()
    }

    fn link(&mut self, user: NodeId, used: NodeId) {
        self.nodes[used].users.push(user);
        self.nodes[user].uses.push(used);
    }

    /// What visiting `expr` (graph node `id`) does, in TVM's order.
    fn steps_for(&mut self, id: NodeId, expr: &Expr) -> Vec<BuildStep> {
        use BuildStep::*;
        let mut steps = Vec::new();
        // Dataflow nodes visit every operand first, then link them all.
        let dataflow = |operands: Vec<Expr>, steps: &mut Vec<BuildStep>| {
            steps.extend(operands.iter().cloned().map(Visit));
            steps.extend(operands.into_iter().map(|o| LinkExpr(id, o)));
        };
        match expr.kind() {
            ExprKind::Call(call) => {
                let mut operands = vec![call.callee.clone()];
                operands.extend(call.args.iter().cloned());
                dataflow(operands, &mut steps);
            }
            ExprKind::Tuple(fields) => dataflow(fields.clone(), &mut steps),
            ExprKind::TupleGetItem { tuple, .. } => dataflow(vec![tuple.clone()], &mut steps),
            ExprKind::RefCreate(value) | ExprKind::RefRead(value) => {
                steps.extend([Visit(value.clone()), LinkExpr(id, value.clone())]);
            }
            ExprKind::RefWrite { reference, value } => steps.extend([
                Visit(reference.clone()),
                LinkExpr(id, reference.clone()),
                Visit(value.clone()),
                LinkExpr(id, value.clone()),
            ]),
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let then_scope = self.new_node(true, None);
                let else_scope = self.new_node(true, None);
                steps.extend([
                    Visit(cond.clone()),
                    LinkExpr(id, cond.clone()),
                    LinkNode(id, then_scope),
                    LinkNode(id, else_scope),
                    Visit(then_branch.clone()),
                    LinkExpr(then_scope, then_branch.clone()),
                    Visit(else_branch.clone()),
                    LinkExpr(else_scope, else_branch.clone()),
                    Finish(else_scope),
                    Finish(then_scope),
                ]);
            }
            ExprKind::Function(function) => {
                let body_scope = self.new_node(true, None);
                steps.push(LinkNode(id, body_scope));
                for param in &function.params {
                    steps.push(Visit(param.expr().clone()));
                    steps.push(LinkExpr(body_scope, param.expr().clone()));
                }
                steps.extend([
                    Visit(function.body.clone()),
                    LinkExpr(body_scope, function.body.clone()),
                    Finish(body_scope),
                ]);
            }
            ExprKind::Let { var, value, body } => {
                let body_scope = self.new_node(true, None);
                steps.extend([
                    LinkNode(id, body_scope),
                    Visit(var.expr().clone()),
                    LinkExpr(body_scope, var.expr().clone()),
                    Visit(value.clone()),
                    LinkExpr(body_scope, value.clone()),
                    Visit(body.clone()),
                    LinkExpr(body_scope, body.clone()),
                    Finish(body_scope),
                ]);
            }
            ExprKind::Match { data, clauses, .. } => {
                steps.extend([Visit(data.clone()), LinkExpr(id, data.clone())]);
                let mut clause_scopes = Vec::new();
                for clause in clauses {
                    let scope = self.new_node(true, None);
                    clause_scopes.push(scope);
                    steps.extend([
                        LinkNode(id, scope),
                        Visit(clause.rhs.clone()),
                        LinkExpr(scope, clause.rhs.clone()),
                    ]);
                }
                steps.extend(clause_scopes.into_iter().rev().map(Finish));
            }
            ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::Op(_)
            | ExprKind::Constructor(_) => {}
        }
        steps.push(Finish(id));
        steps
    }
}

type ScopeId = usize;

/// The scopes of step 2 (see the module doc).
struct ScopeAnalysis {
    /// Each scope's parent (`None` for the global scope, scope 0).
    scope_parent: Vec<Option<ScopeId>>,
    scope_level: Vec<usize>,
    /// Each scope's jump pointer: an ancestor (itself for the global scope)
    /// whose level depends only on the scope's own, spaced as skew-binary
    /// numbers are (Myers' jump pointers), so ancestors and common ancestors
    /// are found in O(log depth) steps. A walk parent by parent made the
    /// operator of a chain of n calls (one node, used at every depth) cost
    /// n².
    scope_jump: Vec<ScopeId>,
    node_scope: Vec<ScopeId>,
    /// Expressions whose scope is not their first user's.
    lifted: HashSet<NodeKey>,
}

impl ScopeAnalysis {
    fn compute(graph: &DependencyGraph) -> ScopeAnalysis {
        let mut analysis = ScopeAnalysis {
            scope_parent: vec![None],
            scope_level: vec![0],
            scope_jump: vec![0],
            node_scope: vec![0; graph.nodes.len()],
            lifted: HashSet::default(),
        };
        for &id in graph.post_order.iter().rev() {
            let node = &graph.nodes[id];
            let scope = match node.users.split_first() {
                None => 0,
                Some((&first, rest)) => {
                    let first_scope = analysis.node_scope[first];
                    let scope = rest.iter().fold(first_scope, |scope, &user| {
                        analysis.common_ancestor(scope, analysis.node_scope[user])
                    });
                    if scope != first_scope {
                        if let Some(expr) = &node.expr {
                            if expr.as_op().is_none() {
                                analysis.lifted.insert(node_key(expr));
                            }
                        }
                    }
                    scope
                }
            };
            analysis.node_scope[id] = if node.opens_scope {
                analysis.open_scope(scope)
            } else {
                scope
            };
        }
        analysis
    }

    /// A new scope inside `parent`.
    fn open_scope(&mut self, parent: ScopeId) -> ScopeId {
        let jump = self.scope_jump[parent];
        let level = |scope: ScopeId| self.scope_level[scope];
        // Two equal jumps in a row from the parent combine into one.
        let new_jump = if level(parent) - level(jump) == level(jump) - level(self.scope_jump[jump])
        {
            self.scope_jump[jump]
        } else {
            parent
        };
        self.scope_parent.push(Some(parent));
        self.scope_level.push(self.scope_level[parent] + 1);
        self.scope_jump.push(new_jump);
        self.scope_parent.len() - 1
    }

    fn parent(&self, scope: ScopeId) -> ScopeId {
        self.scope_parent[scope].unwrap_or(0)
    }

    /// The ancestor of `scope` at `level` (at most its own), and the number
    /// of steps taken to find it.
    fn ancestor_at(&self, mut scope: ScopeId, level: usize) -> (ScopeId, usize) {
        let mut steps = 0;
        while self.scope_level[scope] > level {
            let jump = self.scope_jump[scope];
            scope = if self.scope_level[jump] >= level {
                jump
            } else {
                self.parent(scope)
            };
            steps += 1;
        }
        (scope, steps)
    }

    fn common_ancestor(&self, a: ScopeId, b: ScopeId) -> ScopeId {
        self.common_ancestor_counting(a, b).0
    }

    /// The lowest common ancestor of `a` and `b`, and the number of steps
    /// taken to find it (O(log depth)).
    fn common_ancestor_counting(&self, a: ScopeId, b: ScopeId) -> (ScopeId, usize) {
        let level = self.scope_level[a].min(self.scope_level[b]);
        let ((mut a, steps_a), (mut b, steps_b)) =
            (self.ancestor_at(a, level), self.ancestor_at(b, level));
        let mut steps = steps_a + steps_b;
        // At equal levels the jumps land at equal levels: jump while that
        // stays below the common ancestor, else step up one.
        while a != b {
            let (jump_a, jump_b) = (self.scope_jump[a], self.scope_jump[b]);
            if jump_a != jump_b {
                a = jump_a;
                b = jump_b;
            } else {
                a = self.parent(a);
                b = self.parent(b);
            }
            steps += 1;
        }
        (a, steps)
    }
}

/// One step of the emulated recursive fill.
enum FillTask {
    Visit(Expr, Option<Var>),
    /// Combine the results of the operands of this node.
    Build(Expr, Option<Var>),
    /// Wrap the last result in the bindings of this scope (lazily: see
    /// [`Filled::Scope`]).
    CloseScope(ScopeId),
    /// Drop the last result (a let's value, bound to its own variable).
    Discard,
    EnterFunction,
}

/// The bindings of one scope, in order.
type LetList = VecDeque<(Var, Expr)>;

/// A rebuilt part of the expression.
enum Filled {
    Expr(Expr),
    /// A closed scope whose bindings are not yet wrapped around its body.
    /// A rebuilt `let` moves these bindings into the enclosing scope (see
    /// [`Filler::compound`]); building the nested `let`s first and taking
    /// them apart again there made a chain of n `let`s cost n² (each scope
    /// closing over every binding of the scopes inside it).
    Scope {
        bindings: LetList,
        body: Expr,
    },
}

impl Filled {
    fn into_expr(self) -> Expr {
        match self {
            Filled::Expr(expr) => expr,
            Filled::Scope { bindings, body } => {
                bindings.into_iter().rev().fold(body, |body, (var, value)| {
                    Expr::let_(var, value, body, None)
                })
            }
        }
    }
}

/// Appends `tail` to `head`, moving the shorter of the two: a binding is
/// moved only when the list it is in at least doubles, so however the
/// scopes nest, each binding moves O(log n) times.
fn append_bindings(head: &mut LetList, mut tail: LetList) {
    if head.len() >= tail.len() {
        head.extend(tail);
    } else {
        while let Some(binding) = head.pop_back() {
            tail.push_front(binding);
        }
        *head = tail;
    }
}

struct Filler<'a> {
    graph: &'a DependencyGraph,
    scopes: &'a ScopeAnalysis,
    include: Option<&'a HashSet<NodeKey>>,
    let_lists: Vec<LetList>,
    memo: HashMap<NodeKey, Expr>,
    function_nesting: usize,
}

impl Filler<'_> {
    fn scope_of(&self, expr: &Expr) -> ScopeId {
        self.graph
            .node_of(expr)
            .map_or(0, |id| self.scopes.node_scope[id])
    }

    /// The scope opened by the `index`-th thing `expr` uses.
    fn sub_scope(&self, expr: &Expr, index: usize) -> ScopeId {
        self.graph
            .node_of(expr)
            .and_then(|id| self.graph.nodes[id].uses.get(index))
            .map_or(0, |&used| self.scopes.node_scope[used])
    }

    fn bind(&mut self, scope: ScopeId, var: Var, value: Expr) -> Expr {
        self.let_lists[scope].push_back((var.clone(), value));
        var.into_expr()
    }

    /// `body` under the bindings of `scope` (which are taken).
    fn close_scope(&mut self, scope: ScopeId, body: Filled) -> Filled {
        let mut bindings = std::mem::take(&mut self.let_lists[scope]);
        match body {
            Filled::Expr(body) if bindings.is_empty() => Filled::Expr(body),
            Filled::Expr(body) => Filled::Scope { bindings, body },
            Filled::Scope {
                bindings: inner,
                body,
            } => {
                append_bindings(&mut bindings, inner);
                Filled::Scope { bindings, body }
            }
        }
    }

    /// Binds the rebuilt compound value `now` of `original` (TVM's
    /// `Compound`): to `var` when given, to a fresh variable when every
    /// value is bound or `original` is lifted, otherwise not at all. A
    /// rebuilt `let` has its bindings moved into the scope and its body
    /// bound instead.
    fn compound(&mut self, original: &Expr, now: Filled, var: Option<Var>) -> Expr {
        let explicit = var.is_some();
        let var = var.unwrap_or_else(fresh_let_variable);
        let excluded = self
            .include
            .is_some_and(|include| !include.contains(&node_key(original)));
        if !explicit && excluded {
            return now.into_expr();
        }
        let scope = self.scope_of(original);
        let mut value = match now {
            Filled::Expr(value) => value,
            Filled::Scope { bindings, body } => {
                append_bindings(&mut self.let_lists[scope], bindings);
                body
            }
        };
        while let ExprKind::Let {
            var: inner,
            value: inner_value,
            body,
        } = value.kind()
        {
            self.let_lists[scope].push_back((inner.clone(), inner_value.clone()));
            let next = body.clone();
            value = next;
        }
        self.bind(scope, var, value)
    }

    fn run(&mut self, root: &Expr) -> Expr {
        let mut tasks = vec![FillTask::Visit(root.clone(), None)];
        let mut results: Vec<Filled> = Vec::new();
        while let Some(task) = tasks.pop() {
            match task {
                FillTask::Visit(expr, var) => self.visit(expr, var, &mut tasks, &mut results),
                FillTask::Build(expr, var) => {
                    let result = self.build(&expr, var, &mut results);
                    self.memo.insert(node_key(&expr), result.clone());
                    results.push(Filled::Expr(result));
                }
                FillTask::CloseScope(scope) => {
                    let body = results
                        .pop()
                        .unwrap_or_else(|| Filled::Expr(Expr::tuple(Vec::new(), None)));
                    let wrapped = self.close_scope(scope, body);
                    results.push(wrapped);
                }
                FillTask::Discard => {
                    results.pop();
                }
                FillTask::EnterFunction => self.function_nesting += 1,
            }
        }
        results
            .pop()
            .map_or_else(|| Expr::tuple(Vec::new(), None), Filled::into_expr)
    }

    fn visit(
        &mut self,
        expr: Expr,
        var: Option<Var>,
        tasks: &mut Vec<FillTask>,
        results: &mut Vec<Filled>,
    ) {
        use FillTask::*;
        let key = node_key(&expr);
        if let Some(done) = self.memo.get(&key).cloned() {
            if let Some(var) = var {
                let scope = self.scope_of(&expr);
                self.let_lists[scope].push_back((var, done.clone()));
            }
            results.push(Filled::Expr(done));
            return;
        }
        // Pushed in reverse: the last pushed runs first.
        match expr.kind() {
            ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Op(_)
            | ExprKind::Constructor(_) => {
                let result = match var {
                    Some(var) => {
                        let scope = self.scope_of(&expr);
                        self.bind(scope, var, expr.clone())
                    }
                    None => expr.clone(),
                };
                self.memo.insert(key, result.clone());
                results.push(Filled::Expr(result));
            }
            ExprKind::Constant(_) => {
                let result = self.compound(&expr, Filled::Expr(expr.clone()), var);
                self.memo.insert(key, result.clone());
                results.push(Filled::Expr(result));
            }
            ExprKind::Call(call) => {
                tasks.push(Build(expr.clone(), var));
                tasks.push(Visit(call.callee.clone(), None));
                for arg in call.args.iter().rev() {
                    tasks.push(Visit(arg.clone(), None));
                }
            }
            ExprKind::Tuple(fields) => {
                tasks.push(Build(expr.clone(), var));
                for field in fields.iter().rev() {
                    tasks.push(Visit(field.clone(), None));
                }
            }
            ExprKind::TupleGetItem { tuple: operand, .. }
            | ExprKind::RefCreate(operand)
            | ExprKind::RefRead(operand) => {
                tasks.push(Build(expr.clone(), var));
                tasks.push(Visit(operand.clone(), None));
            }
            ExprKind::RefWrite { reference, value } => {
                tasks.push(Build(expr.clone(), var));
                tasks.push(Visit(value.clone(), None));
                tasks.push(Visit(reference.clone(), None));
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                tasks.push(Build(expr.clone(), var));
                tasks.push(CloseScope(self.sub_scope(&expr, 2)));
                tasks.push(Visit(else_branch.clone(), None));
                tasks.push(CloseScope(self.sub_scope(&expr, 1)));
                tasks.push(Visit(then_branch.clone(), None));
                tasks.push(Visit(cond.clone(), None));
            }
            ExprKind::Function(function) => {
                let primitive = expr.as_function().is_some_and(|f| f.is_primitive());
                if primitive {
                    let result = if self.function_nesting == 0 {
                        expr.clone()
                    } else {
                        self.compound(&expr, Filled::Expr(expr.clone()), var)
                    };
                    self.memo.insert(key, result.clone());
                    results.push(Filled::Expr(result));
                } else {
                    tasks.push(Build(expr.clone(), var));
                    tasks.push(CloseScope(self.sub_scope(&expr, 0)));
                    tasks.push(Visit(function.body.clone(), None));
                    tasks.push(EnterFunction);
                }
            }
            ExprKind::Let {
                var: bound,
                value,
                body,
            } => {
                tasks.push(Build(expr.clone(), var));
                tasks.push(CloseScope(self.sub_scope(&expr, 0)));
                tasks.push(Visit(body.clone(), None));
                tasks.push(Discard);
                tasks.push(Visit(value.clone(), Some(bound.clone())));
            }
            ExprKind::Match { data, clauses, .. } => {
                tasks.push(Build(expr.clone(), var));
                for (index, clause) in clauses.iter().enumerate().rev() {
                    tasks.push(CloseScope(self.sub_scope(&expr, 1 + index)));
                    tasks.push(Visit(clause.rhs.clone(), None));
                }
                tasks.push(Visit(data.clone(), None));
            }
        }
    }

    /// Rebuilds `expr` from its operands' results (on top of `results`, in
    /// visiting order) and binds it.
    fn build(&mut self, expr: &Expr, var: Option<Var>, results: &mut Vec<Filled>) -> Expr {
        if let ExprKind::Let { .. } = expr.kind() {
            // The body's scope, still open for the enclosing one to take.
            let body = results.pop().unwrap_or_else(|| Filled::Expr(expr.clone()));
            return self.compound(expr, body, var);
        }
        let mut take = |count: usize| -> Vec<Expr> {
            let start = results.len().saturating_sub(count);
            results
                .split_off(start)
                .into_iter()
                .map(Filled::into_expr)
                .collect()
        };
        let now = match expr.kind() {
            ExprKind::Call(call) => {
                let mut operands = take(call.args.len() + 1);
                let callee = operands.pop().unwrap_or_else(|| call.callee.clone());
                Expr::new(
                    ExprKind::Call(Call {
                        callee,
                        args: operands,
                        attrs: call.attrs.clone(),
                        type_args: call.type_args.clone(),
                    }),
                    expr.span(),
                )
            }
            ExprKind::Tuple(fields) => with_children(expr, &take(fields.len())),
            ExprKind::TupleGetItem { index, .. } => {
                let tuple = take(1).pop().unwrap_or_else(|| expr.clone());
                Expr::tuple_get_item(tuple, *index, expr.span())
            }
            ExprKind::RefCreate(_) => {
                let value = take(1).pop().unwrap_or_else(|| expr.clone());
                Expr::new(ExprKind::RefCreate(value), expr.span())
            }
            ExprKind::RefRead(_) => {
                let value = take(1).pop().unwrap_or_else(|| expr.clone());
                Expr::new(ExprKind::RefRead(value), expr.span())
            }
            ExprKind::RefWrite { .. } => {
                let mut operands = take(2);
                let value = operands.pop().unwrap_or_else(|| expr.clone());
                let reference = operands.pop().unwrap_or_else(|| expr.clone());
                Expr::new(ExprKind::RefWrite { reference, value }, expr.span())
            }
            ExprKind::If { .. } => {
                let mut operands = take(3);
                let else_branch = operands.pop().unwrap_or_else(|| expr.clone());
                let then_branch = operands.pop().unwrap_or_else(|| expr.clone());
                let cond = operands.pop().unwrap_or_else(|| expr.clone());
                Expr::if_(cond, then_branch, else_branch, expr.span())
            }
            ExprKind::Function(function) => {
                self.function_nesting = self.function_nesting.saturating_sub(1);
                let body = take(1).pop().unwrap_or_else(|| function.body.clone());
                let mut children: Vec<Expr> =
                    function.params.iter().map(|p| p.expr().clone()).collect();
                children.push(body);
                let rebuilt = with_children(expr, &children);
                // A function outside any other is a global: not bound.
                if self.function_nesting == 0 {
                    return rebuilt;
                }
                rebuilt
            }
            ExprKind::Match {
                clauses, complete, ..
            } => {
                let mut operands = take(clauses.len() + 1);
                let rhs = operands.split_off(1.min(operands.len()));
                let data = operands.pop().unwrap_or_else(|| expr.clone());
                let clauses = clauses
                    .iter()
                    .zip(rhs)
                    .map(|(clause, rhs)| Clause {
                        pattern: clause.pattern.clone(),
                        rhs,
                    })
                    .collect();
                Expr::new(
                    ExprKind::Match {
                        data,
                        clauses,
                        complete: *complete,
                    },
                    expr.span(),
                )
            }
            // Leaves never get a Build task.
            _ => return expr.clone(),
        };
        self.compound(expr, Filled::Expr(now), var)
    }
}

/// Rewrites every function of `module` that has no `Compiler` attribute
/// (TVM leaves external functions alone), in module order.
pub fn module_to_normal_form(
    mut module: relay_ir::IRModule,
    form: NormalForm,
) -> Result<relay_ir::IRModule, Diagnostic> {
    let targets: Vec<(String, Function)> = module
        .functions()
        .filter(|(_, function)| function.attr("Compiler").is_none())
        .map(|(name, function)| (name.to_string(), function.clone()))
        .collect();
    for (name, function) in targets {
        let rewritten = to_normal_form(&function, form)?;
        module.add_function(&name, rewritten);
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global_scope() -> ScopeAnalysis {
        ScopeAnalysis {
            scope_parent: vec![None],
            scope_level: vec![0],
            scope_jump: vec![0],
            node_scope: Vec::new(),
            lifted: HashSet::default(),
        }
    }

    fn naive_common_ancestor(scopes: &ScopeAnalysis, mut a: ScopeId, mut b: ScopeId) -> ScopeId {
        while scopes.scope_level[a] > scopes.scope_level[b] {
            a = scopes.parent(a);
        }
        while scopes.scope_level[b] > scopes.scope_level[a] {
            b = scopes.parent(b);
        }
        while a != b {
            a = scopes.parent(a);
            b = scopes.parent(b);
        }
        a
    }

    /// Scopes as a chain of n `let`s nests them, with a branch off every
    /// level: common ancestors agree with a walk parent by parent, and are
    /// found in O(log depth) steps (a walk would take up to the depth: the
    /// operator of a chain of n calls made ToANormalForm quadratic).
    #[test]
    fn common_ancestors_of_deep_scopes_take_logarithmic_steps() {
        let depth = 100_000;
        let mut scopes = global_scope();
        let mut chain = vec![0];
        let mut branches = Vec::new();
        for _ in 0..depth {
            let parent = *chain.last().unwrap();
            chain.push(scopes.open_scope(parent));
            branches.push(scopes.open_scope(parent));
        }
        let deepest = *chain.last().unwrap();
        let mut most_steps = 0;
        for (k, &branch) in branches.iter().enumerate().step_by(97) {
            for other in [deepest, chain[k / 2], branches[k / 3], 0] {
                let (found, steps) = scopes.common_ancestor_counting(branch, other);
                assert_eq!(found, naive_common_ancestor(&scopes, branch, other));
                most_steps = most_steps.max(steps);
            }
        }
        // log2(100,000) ≈ 17; a walk would take up to 100,000.
        assert!(
            most_steps <= 120,
            "{most_steps} steps for one common ancestor"
        );
    }
}
