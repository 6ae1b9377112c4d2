//! `ManifestLifetimes`: TVM v0.13's `backend/vm/manifest_lifetimes.cc`,
//! which inserts `memory.kill(%v)` once a variable is dead, for the VM. Its
//! input is A-normal form (after memory planning, in TVM's pipeline); it
//! works on any function of that shape.
//!
//! As TVM does, in three steps:
//! 1. Aliases are removed: `let %y = %x;` (or `on_device(%x)`, or a
//!    `device_copy(%x)` between equal devices) is dropped and `%y` replaced by
//!    `%x`; a `match` on a variable makes a clause that binds the whole value
//!    to a pattern variable an alias of it too.
//! 2. A control-flow graph of the body is built: a node per `let` binding and
//!    per final expression, a block per straight run of bindings, new blocks
//!    for the branches of a `let`-bound `if` or `match` and for what follows
//!    it. A liveness analysis (worklist, TVM's order) computes what is live
//!    before and after each node.
//! 3. After each `let` binding, `let %x = memory.kill(%v);` is added for every
//!    variable live before it and not after it.
//!
//! TVM's limits are kept: a dead parameter never used is never killed, a
//! variable returned by a branch is not killed, the binding variable of a
//! `let`-bound `if` counts as defined before its branches. Where TVM fails, so
//! does this pass, with TVM's message: an `if` or `match` that is not bound by
//! a `let`, a nested function in the body's control flow, and forms the
//! analysis has no case for (`ref` operations or a `let` inside a bound
//! value). A function literal in a bound value or a callee reads no
//! variable (TVM's `VarUseCollector` has a case for it), so fused code (calls
//! of `Primitive` function literals) is analysed like any other call.
//!
//! One difference: TVM emits the kills of one binding in the order of a hash
//! set of pointers (not reproducible from run to run); here they come in the
//! order the variables were created (parameters and bindings in text order).
//!
//! Registered like TVM: a function pass at opt_level 0, nothing required.

use relay_ir::build::op_call;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::fxhash::{FxMap, FxSet};
use relay_ir::metadata::NodeRef;
use relay_ir::rewrite::{children, with_children};
use relay_ir::{AttrValue, Clause, Expr, ExprKind, Function, Pattern, Var, VarId};
use relay_pass_manager::PassSpec;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("ManifestLifetimes", 0)
        .doc(
            "Insert memory.kill(%v) after the binding where each variable dies (liveness over \
             the control flow of A-normal-form code, for the VM); aliases are removed first",
        )
        .transform(|function, _module, _ctx| manifest_lifetimes(&function))
}

/// Runs the three steps on `function`.
pub fn manifest_lifetimes(function: &Function) -> Result<Function, Diagnostic> {
    let mut eliminator = AliasEliminator::default();
    let without_aliases = eliminator.visit(function.expr());
    let function = without_aliases
        .as_function()
        .expect("a function stays a function");
    let cfg = ControlFlowGraph::of(&function)?;
    let liveness = Liveness::analyze(&cfg)?;
    let mut inserter = KillInserter {
        cfg: &cfg,
        liveness: &liveness,
        memo: FxMap::default(),
    };
    let killed = inserter.visit(function.expr());
    Ok(killed.as_function().expect("a function stays a function"))
}

/// `e` without an `on_device(…)` around it (TVM's `IgnoreOnDevice`).
fn ignoring_on_device(expr: &Expr) -> &Expr {
    match expr.as_call() {
        Some(call)
            if call.callee.as_op().is_some_and(|op| op.name == "on_device")
                && call.args.len() == 1 =>
        {
            &call.args[0]
        }
        _ => expr,
    }
}

/// The device type and id of a `VirtualDevice` attribute value.
fn device_of(value: Option<&AttrValue>) -> Option<(i64, i64)> {
    let AttrValue::Meta(meta) = value? else {
        return None;
    };
    let node = NodeRef::new(&meta.graph, meta.index).ok()?;
    Some((
        node.int_field("device_type_int").ok()?,
        node.int_field("virtual_device_id").ok()?,
    ))
}

/// The variable `value` copies without moving it to another device, if any.
fn copied_variable(value: &Expr) -> Option<Var> {
    let call = ignoring_on_device(value).as_call()?;
    if call.callee.as_op().map(|op| op.name.as_str()) != Some("device_copy") {
        return None;
    }
    let attrs = call.attrs.as_ref()?;
    let source = device_of(attrs.get("src_virtual_device"))?;
    let destination = device_of(attrs.get("dst_virtual_device"))?;
    if source != destination {
        return None;
    }
    call.args.first()?.as_var()
}

/// TVM's `AliasEliminator`.
#[derive(Default)]
struct AliasEliminator {
    /// Variable → the variable it stands for (transitively resolved).
    alias: HashMap<VarId, Var>,
    /// Rewritten node by the address of the original (TVM's mutator memo):
    /// a node shared in graph form is rewritten once and stays shared.
    memo: FxMap<usize, Expr>,
}

impl AliasEliminator {
    fn resolve(&self, var: &Var) -> Var {
        self.alias
            .get(&var.id())
            .cloned()
            .unwrap_or_else(|| var.clone())
    }

    fn visit(&mut self, expr: &Expr) -> Expr {
        // Variables are resolved at each use: what they alias depends on
        // the scope.
        if matches!(expr.kind(), ExprKind::Var(_)) {
            return self.visit_inner(expr);
        }
        if let Some(done) = self.memo.get(&expr.addr()) {
            return done.clone();
        }
        let result = crate::partial_eval::with_stack(|| self.visit_inner(expr));
        self.memo.insert(expr.addr(), result.clone());
        result
    }

    fn visit_inner(&mut self, expr: &Expr) -> Expr {
        match expr.kind() {
            ExprKind::Var(_) => self
                .resolve(&expr.as_var().expect("a variable"))
                .into_expr(),
            ExprKind::Let { .. } => {
                let mut bindings: Vec<(Var, Expr)> = Vec::new();
                let mut aliased: Vec<VarId> = Vec::new();
                let mut current = expr.clone();
                while let ExprKind::Let { var, value, body } = current.kind() {
                    let alias_of = match ignoring_on_device(value).as_var() {
                        Some(of) => Some(of),
                        None => copied_variable(value),
                    };
                    match alias_of {
                        Some(of) => {
                            let target = self.resolve(&of);
                            self.alias.insert(var.id(), target);
                            aliased.push(var.id());
                        }
                        None => {
                            let value = self.visit(value);
                            bindings.push((var.clone(), value));
                        }
                    }
                    let next = body.clone();
                    current = next;
                }
                let mut result = self.visit(&current);
                for (var, value) in bindings.into_iter().rev() {
                    result = Expr::let_(var, value, result, None);
                }
                for id in aliased {
                    self.alias.remove(&id);
                }
                result
            }
            ExprKind::Function(data) => {
                let body = self.visit(&data.body);
                let mut new_children: Vec<Expr> =
                    data.params.iter().map(|p| p.expr().clone()).collect();
                new_children.push(body);
                with_children(expr, &new_children)
            }
            ExprKind::Match {
                data,
                clauses,
                complete,
            } if ignoring_on_device(data).as_var().is_some() => {
                let data_var = self.resolve(&ignoring_on_device(data).as_var().expect("checked"));
                let mut new_clauses = Vec::with_capacity(clauses.len());
                for clause in clauses {
                    let bound = match &clause.pattern {
                        Pattern::Var(var) => Some(var.id()),
                        _ => None,
                    };
                    if let Some(id) = bound {
                        self.alias.insert(id, data_var.clone());
                    }
                    let rhs = self.visit(&clause.rhs);
                    if let Some(id) = bound {
                        self.alias.remove(&id);
                    }
                    new_clauses.push(Clause {
                        pattern: clause.pattern.clone(),
                        rhs,
                    });
                }
                Expr::new(
                    ExprKind::Match {
                        data: data_var.into_expr(),
                        clauses: new_clauses,
                        complete: *complete,
                    },
                    expr.span(),
                )
            }
            _ => {
                let new_children: Vec<Expr> =
                    children(expr).into_iter().map(|c| self.visit(c)).collect();
                with_children(expr, &new_children)
            }
        }
    }
}

/// One node of the control-flow graph: a `let` binding or a block's final
/// expression.
struct Node {
    block: usize,
    index: usize,
    expr: Expr,
}

#[derive(Default)]
struct Block {
    nodes: Vec<usize>,
    pred: Vec<usize>,
    succ: Vec<usize>,
}

/// TVM's `ControlFlowGraph`; nodes are numbered in the order TVM lists them
/// (its `reverse_post_order`).
#[derive(Default)]
struct ControlFlowGraph {
    nodes: Vec<Node>,
    blocks: Vec<Block>,
    /// `let` node address → its node.
    let_nodes: HashMap<usize, usize>,
}

impl ControlFlowGraph {
    fn of(function: &Function) -> Result<ControlFlowGraph, Diagnostic> {
        let mut cfg = ControlFlowGraph::default();
        let entry = cfg.new_block();
        let mut in_function = false;
        cfg.visit(function.expr(), entry, &mut in_function)?;
        Ok(cfg)
    }

    fn new_block(&mut self) -> usize {
        self.blocks.push(Block::default());
        self.blocks.len() - 1
    }

    fn new_node(&mut self, block: usize, expr: Expr) -> usize {
        let id = self.nodes.len();
        let index = self.blocks[block].nodes.len();
        self.nodes.push(Node { block, index, expr });
        self.blocks[block].nodes.push(id);
        id
    }

    fn link(&mut self, from: usize, to: usize) {
        self.blocks[from].succ.push(to);
        self.blocks[to].pred.push(from);
    }

    fn visit(
        &mut self,
        expr: &Expr,
        block: usize,
        in_function: &mut bool,
    ) -> Result<(), Diagnostic> {
        crate::partial_eval::with_stack(|| self.visit_inner(expr, block, in_function))
    }

    fn visit_inner(
        &mut self,
        expr: &Expr,
        mut block: usize,
        in_function: &mut bool,
    ) -> Result<(), Diagnostic> {
        match expr.kind() {
            ExprKind::Function(data) => {
                if *in_function {
                    return Err(Diagnostic::pass_failed_at(
                        expr,
                        "nested functions not supported by CFG analysis",
                    ));
                }
                *in_function = true;
                let closure = expr
                    .as_function()
                    .and_then(|f| f.attr("Closure").and_then(AttrValue::as_int))
                    .is_some_and(|v| v != 0);
                if closure {
                    let Some(inner) = data.body.as_function() else {
                        return Err(Diagnostic::pass_failed_at(
                            expr,
                            "a function with Closure=1 must return a function literal",
                        ));
                    };
                    return self.visit(inner.body(), block, in_function);
                }
                self.visit(&data.body, block, in_function)
            }
            ExprKind::Let { .. } => {
                let mut current = expr.clone();
                while let ExprKind::Let { value, body, .. } = current.kind() {
                    let node = self.new_node(block, current.clone());
                    self.let_nodes.insert(current.addr(), node);
                    match ignoring_on_device(value).kind() {
                        ExprKind::If {
                            then_branch,
                            else_branch,
                            ..
                        } => {
                            let then_block = self.new_block();
                            let else_block = self.new_block();
                            self.link(block, then_block);
                            self.link(block, else_block);
                            self.visit(then_branch, then_block, in_function)?;
                            self.visit(else_branch, else_block, in_function)?;
                            let next = self.new_block();
                            self.link(then_block, next);
                            self.link(else_block, next);
                            block = next;
                        }
                        ExprKind::Match { clauses, .. } => {
                            let next = self.new_block();
                            for clause in clauses {
                                let clause_block = self.new_block();
                                self.link(block, clause_block);
                                self.link(clause_block, next);
                                self.visit(&clause.rhs, clause_block, in_function)?;
                            }
                            block = next;
                        }
                        _ => {}
                    }
                    let next = body.clone();
                    current = next;
                }
                self.visit(&current, block, in_function)
            }
            ExprKind::If { .. } => Err(Diagnostic::pass_failed_at(
                expr,
                "If expressions should be bound to variables.",
            )),
            ExprKind::Match { .. } => Err(Diagnostic::pass_failed_at(
                expr,
                "Match expressions should be bound to variables.",
            )),
            ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::Call(_)
            | ExprKind::Op(_)
            | ExprKind::Tuple(_)
            | ExprKind::TupleGetItem { .. } => {
                self.new_node(block, expr.clone());
                Ok(())
            }
            _ => Err(no_default(expr)),
        }
    }

    fn successors(&self, node: usize) -> Vec<usize> {
        let Node { block, index, .. } = self.nodes[node];
        let nodes = &self.blocks[block].nodes;
        if index + 1 == nodes.len() {
            self.blocks[block]
                .succ
                .iter()
                .filter_map(|&b| self.blocks[b].nodes.first().copied())
                .collect()
        } else {
            vec![nodes[index + 1]]
        }
    }

    fn predecessors(&self, node: usize) -> Vec<usize> {
        let Node { block, index, .. } = self.nodes[node];
        if index == 0 {
            self.blocks[block]
                .pred
                .iter()
                .filter_map(|&b| self.blocks[b].nodes.last().copied())
                .collect()
        } else {
            vec![self.blocks[block].nodes[index - 1]]
        }
    }
}

/// TVM's functors fail on the forms they have no case for.
fn no_default(expr: &Expr) -> Diagnostic {
    let key = match expr.kind() {
        ExprKind::Function(_) => "relay.Function",
        ExprKind::Let { .. } => "relay.Let",
        ExprKind::RefCreate(_) => "relay.RefCreate",
        ExprKind::RefRead(_) => "relay.RefRead",
        ExprKind::RefWrite { .. } => "relay.RefWrite",
        ExprKind::Constructor(_) => "relay.Constructor",
        ExprKind::If { .. } => "relay.If",
        ExprKind::Match { .. } => "relay.Match",
        _ => "this expression",
    };
    Diagnostic::pass_failed_at(
        expr,
        format!("Do not have a default for {key} (ManifestLifetimes' analysis has no case for it)"),
    )
}

/// TVM's `VarUseCollector`: the variables an expression reads (for `if` and
/// `match`, only the condition or the scrutinee).
///
/// Each node is visited once. Code in graph form shares subexpressions (the
/// blocks of a residual network each read the previous block's output
/// twice), and TVM's collector, which has no memo, walks every path through
/// them: exponential in the number of blocks (resnet152's or gpt2's fused
/// pipeline outputs take hours). The set of variables is the same either
/// way, and the first node without a case, in TVM's depth-first order, is
/// the one reported.
fn uses(expr: &Expr, out: &mut VarSet) -> Result<(), Diagnostic> {
    let mut seen: FxSet<usize> = FxSet::default();
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        if !seen.insert(expr.addr()) {
            continue;
        }
        match expr.kind() {
            ExprKind::Var(_) => {
                let var = expr.as_var().expect("a variable");
                out.insert(var.id(), var);
            }
            ExprKind::Call(call) => {
                // Reversed, so the callee and then the arguments come off
                // the stack in TVM's order.
                stack.extend(call.args.iter().rev());
                stack.push(&call.callee);
            }
            ExprKind::Tuple(fields) => stack.extend(fields.iter().rev()),
            ExprKind::TupleGetItem { tuple, .. } => stack.push(tuple),
            ExprKind::If { cond, .. } => stack.push(cond),
            ExprKind::Match { data, .. } => stack.push(data),
            // A function literal reads nothing where it stands (TVM's
            // collector has a case for it): its body runs elsewhere, when
            // it is called — a fused `Primitive` function called in place
            // is analysed as one node whose uses are the call's arguments.
            ExprKind::Constructor(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::Op(_)
            | ExprKind::Function(_) => {}
            _ => return Err(no_default(expr)),
        }
    }
    Ok(())
}

type VarSet = BTreeMap<VarId, Var>;

/// TVM's `UseDefAnalysis` and `LivenessAnalysis`.
struct Liveness {
    live_in: Vec<VarSet>,
    live_out: Vec<VarSet>,
}

impl Liveness {
    fn analyze(cfg: &ControlFlowGraph) -> Result<Liveness, Diagnostic> {
        let mut used: Vec<VarSet> = Vec::with_capacity(cfg.nodes.len());
        let mut defined: Vec<Option<VarId>> = Vec::with_capacity(cfg.nodes.len());
        for node in &cfg.nodes {
            let mut set = VarSet::new();
            match node.expr.kind() {
                ExprKind::Let { var, value, .. } => {
                    uses(value, &mut set)?;
                    defined.push(Some(var.id()));
                }
                _ => {
                    uses(&node.expr, &mut set)?;
                    defined.push(None);
                }
            }
            used.push(set);
        }
        let count = cfg.nodes.len();
        let mut liveness = Liveness {
            live_in: vec![VarSet::new(); count],
            live_out: vec![VarSet::new(); count],
        };
        // Post order first (the reverse of TVM's list), for quick convergence.
        let mut worklist: VecDeque<usize> = (0..count).rev().collect();
        while let Some(n) = worklist.pop_front() {
            let mut live_in = used[n].clone();
            for (id, var) in &liveness.live_out[n] {
                if Some(*id) != defined[n] {
                    live_in.insert(*id, var.clone());
                }
            }
            let mut live_out = VarSet::new();
            for s in cfg.successors(n) {
                live_out.extend(liveness.live_in[s].iter().map(|(k, v)| (*k, v.clone())));
            }
            let same = keys(&live_in) == keys(&liveness.live_in[n])
                && keys(&live_out) == keys(&liveness.live_out[n]);
            liveness.live_in[n] = live_in;
            liveness.live_out[n] = live_out;
            if !same {
                worklist.extend(cfg.predecessors(n));
            }
        }
        Ok(liveness)
    }
}

fn keys(set: &VarSet) -> HashSet<VarId> {
    set.keys().copied().collect()
}

/// TVM's `KillInserter`.
struct KillInserter<'a> {
    cfg: &'a ControlFlowGraph,
    liveness: &'a Liveness,
    /// Rewritten node by the address of the original (TVM's mutator memo):
    /// a node shared in graph form is rewritten once and stays shared.
    memo: FxMap<usize, Expr>,
}

impl KillInserter<'_> {
    fn visit(&mut self, expr: &Expr) -> Expr {
        if let Some(done) = self.memo.get(&expr.addr()) {
            return done.clone();
        }
        let result = crate::partial_eval::with_stack(|| self.visit_inner(expr));
        self.memo.insert(expr.addr(), result.clone());
        result
    }

    fn visit_inner(&mut self, expr: &Expr) -> Expr {
        match expr.kind() {
            ExprKind::Let { .. } => {
                let mut bindings: Vec<(Var, Expr)> = Vec::new();
                let mut current = expr.clone();
                while let ExprKind::Let { var, value, body } = current.kind() {
                    bindings.push((var.clone(), self.visit(value)));
                    if let Some(&node) = self.cfg.let_nodes.get(&current.addr()) {
                        let live_out = &self.liveness.live_out[node];
                        for (id, dead) in &self.liveness.live_in[node] {
                            if !live_out.contains_key(id) {
                                let kill = op_call("memory.kill", vec![dead.expr().clone()]);
                                bindings.push((Var::new("x", None, None), kill));
                            }
                        }
                    }
                    let next = body.clone();
                    current = next;
                }
                let mut result = self.visit(&current);
                for (var, value) in bindings.into_iter().rev() {
                    result = Expr::let_(var, value, result, None);
                }
                result
            }
            ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::Op(_)
            | ExprKind::Constructor(_) => expr.clone(),
            _ => {
                let new_children: Vec<Expr> =
                    children(expr).into_iter().map(|c| self.visit(c)).collect();
                with_children(expr, &new_children)
            }
        }
    }
}
