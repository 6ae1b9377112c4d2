//! `Inline`: TVM v0.13's `InlineGlobals` module pass (opt_level 1), which
//! replaces uses of global functions marked `Inline=1` by their bodies and
//! then drops those globals.
//!
//! The call graph records, for each global function, the globals its body
//! mentions (each once, calls or plain references alike) and how many
//! functions mention each global. Functions are rewritten callees first.
//! A global can be inlined when it is a function with a non-zero `Inline`
//! attribute, mentions no global (not even itself) *at that moment* — its
//! own inlinable callees have already been removed from its entry — so
//! inlining works bottom-up. In a caller:
//! - a call `@g(args)` becomes `g`'s body with the parameters bound to the
//!   rewritten arguments (rebuilt nodes keep their types), or, for a
//!   `Compiler`/`Extern` function, a call of a copy of the function;
//! - a plain reference `@g` becomes an untyped copy of the function (its
//!   type is a function type, so the body cannot stand in for it).
//!
//! Each replacement removes one mention from the caller's entry; a second
//! call of the same global in one function finds none left, which TVM
//! reports as an error, and so do we. Finally every inline-marked global
//! that is neither recursive nor originally unreferenced is removed; one
//! still referenced is an error, as in TVM.

use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{post_order, rewrite_post_order};
use relay_ir::{Call, Expr, ExprKind, Function, IRModule, VarId};
use relay_pass_manager::PassSpec;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

pub(crate) fn spec() -> PassSpec {
    // Registered under the constructor's name, `Inline`.
    PassSpec::module("Inline", 1)
        .info_name("InlineGlobals")
        .doc("Inline global functions marked Inline=1")
        .transform(|module, _ctx| inline_globals(module))
}

fn pass_error(message: String) -> Diagnostic {
    Diagnostic::pass_failed(format!("Inline: {message}"))
}

/// The call graph: each function's mentioned globals, in order of first
/// mention, and how many functions mention each global.
struct CallGraph {
    callees: HashMap<String, Vec<String>>,
    references: HashMap<String, usize>,
}

impl CallGraph {
    fn build(module: &IRModule) -> CallGraph {
        let mut graph = CallGraph {
            callees: HashMap::default(),
            references: HashMap::default(),
        };
        for (name, function) in module.functions() {
            let mut mentioned: Vec<String> = Vec::new();
            for node in post_order(function.expr()) {
                if let ExprKind::GlobalVar(global) = node.kind() {
                    if !mentioned.iter().any(|m| m == global.name()) {
                        mentioned.push(global.name().to_string());
                    }
                }
            }
            for callee in &mentioned {
                *graph.references.entry(callee.clone()).or_default() += 1;
            }
            graph.callees.insert(name.to_string(), mentioned);
        }
        graph
    }

    fn callees_of(&self, name: &str) -> &[String] {
        self.callees.get(name).map_or(&[], Vec::as_slice)
    }

    fn is_recursive(&self, name: &str) -> bool {
        self.callees_of(name).iter().any(|c| c == name)
    }

    fn remove_call(&mut self, caller: &str, callee: &str) -> Result<(), Diagnostic> {
        let entry = self.callees.entry(caller.to_string()).or_default();
        let Some(position) = entry.iter().position(|c| c == callee) else {
            return Err(pass_error(format!(
                "cannot find global function {callee} to remove from {caller} \
                 (a global inlined twice in one function)"
            )));
        };
        entry.remove(position);
        if let Some(count) = self.references.get_mut(callee) {
            *count = count.saturating_sub(1);
        }
        Ok(())
    }

    /// Functions, callees before callers (mentions followed depth first).
    fn callees_first(&self, module: &IRModule) -> Vec<String> {
        let mut order = Vec::new();
        let mut seen = HashSet::default();
        for (root, _) in module.functions() {
            let mut stack: Vec<(String, usize)> = vec![(root.to_string(), 0)];
            if !seen.insert(root.to_string()) {
                continue;
            }
            while let Some((name, next)) = stack.pop() {
                let callees = self.callees_of(&name);
                if let Some(callee) = callees.get(next) {
                    let callee = callee.clone();
                    stack.push((name, next + 1));
                    if module.function(&callee).is_some() && seen.insert(callee.clone()) {
                        stack.push((callee, 0));
                    }
                } else {
                    order.push(name);
                }
            }
        }
        order
    }
}

fn has_nonzero(function: &Function, key: &str) -> bool {
    function.attr(key).is_some_and(|v| v.as_int() != Some(0))
}

/// Inlines every inlinable global (see the module doc).
pub fn inline_globals(mut module: IRModule) -> Result<IRModule, Diagnostic> {
    let mut graph = CallGraph::build(&module);
    let order = graph.callees_first(&module);
    let original_entries: HashSet<String> = order
        .iter()
        .filter(|name| graph.references.get(*name).copied().unwrap_or(0) == 0)
        .cloned()
        .collect();
    for name in &order {
        let callees = graph.callees_of(name);
        if callees.is_empty() || (graph.is_recursive(name) && callees.len() == 1) {
            continue;
        }
        let Some(function) = module.function(name).cloned() else {
            continue;
        };
        let rewritten = inline_into(&function, name, &module, &mut graph)?;
        module.add_function(name, rewritten);
    }
    for name in &order {
        if graph.is_recursive(name) || original_entries.contains(name) {
            continue;
        }
        let Some(function) = module.function(name) else {
            continue;
        };
        if has_nonzero(function, "Inline") {
            if graph.references.get(name).copied().unwrap_or(0) != 0 {
                return Err(pass_error(format!(
                    "{name} is marked as inline but not inlined"
                )));
            }
            module.remove_function(name);
        }
    }
    Ok(module)
}

fn can_inline(name: &str, module: &IRModule, graph: &CallGraph) -> bool {
    graph.callees_of(name).is_empty()
        && module
            .function(name)
            .is_some_and(|f| has_nonzero(f, "Inline"))
}

/// A fresh, untyped copy of `function` (TVM rebuilds the function node).
fn copy_function(function: &Function) -> Expr {
    let data = function.data();
    Expr::new(ExprKind::Function(Box::new(data.clone())), None)
}

fn inline_into(
    function: &Function,
    caller: &str,
    module: &IRModule,
    graph: &mut CallGraph,
) -> Result<Function, Diagnostic> {
    // Globals in callee position of a call that will be inlined are handled
    // with their call, not as plain references.
    let mut handled_with_call: HashSet<usize> = HashSet::default();
    for node in post_order(function.body()) {
        if let ExprKind::Call(call) = node.kind() {
            if let ExprKind::GlobalVar(global) = call.callee.kind() {
                if can_inline(global.name(), module, graph) {
                    handled_with_call.insert(call.callee.addr());
                }
            }
        }
    }
    let mut failure: Option<Diagnostic> = None;
    // A plain reference is replaced once per function, like TVM's memo on
    // the shared global node.
    let mut references: HashMap<String, Expr> = HashMap::default();
    let body = rewrite_post_order(function.body(), |old, rebuilt| {
        if failure.is_some() {
            return rebuilt;
        }
        match old.kind() {
            ExprKind::GlobalVar(global) if !handled_with_call.contains(&old.addr()) => {
                let name = global.name();
                if let Some(done) = references.get(name) {
                    return done.clone();
                }
                if !can_inline(name, module, graph) {
                    return rebuilt;
                }
                let Some(callee) = module.function(name) else {
                    return rebuilt;
                };
                if let Err(error) = graph.remove_call(caller, name) {
                    failure = Some(error);
                    return rebuilt;
                }
                let replacement = copy_function(callee);
                references.insert(name.to_string(), replacement.clone());
                replacement
            }
            ExprKind::Call(old_call) if handled_with_call.contains(&old_call.callee.addr()) => {
                let ExprKind::GlobalVar(global) = old_call.callee.kind() else {
                    return rebuilt;
                };
                let Some(callee) = module.function(global.name()) else {
                    return rebuilt;
                };
                let Some(call) = rebuilt.as_call() else {
                    return rebuilt;
                };
                if let Err(error) = graph.remove_call(caller, global.name()) {
                    failure = Some(error);
                    return rebuilt;
                }
                if callee.attr("Compiler").is_some() || has_nonzero(callee, "Extern") {
                    return Expr::new(
                        ExprKind::Call(Call {
                            callee: copy_function(callee),
                            args: call.args.clone(),
                            attrs: call.attrs.clone(),
                            type_args: call.type_args.clone(),
                        }),
                        None,
                    );
                }
                if callee.params().len() != call.args.len() {
                    failure = Some(pass_error(format!(
                        "mismatch in the number of parameters and call args of {}",
                        global.name()
                    )));
                    return rebuilt;
                }
                let bindings: HashMap<VarId, Expr> = callee
                    .params()
                    .iter()
                    .map(|p| p.id())
                    .zip(call.args.iter().cloned())
                    .collect();
                bind(callee.body(), &bindings)
            }
            _ => rebuilt,
        }
    });
    if let Some(error) = failure {
        return Err(error);
    }
    let mut children: Vec<Expr> = function.params().iter().map(|p| p.expr().clone()).collect();
    children.push(body);
    relay_ir::rewrite::with_children(function.expr(), &children)
        .as_function()
        .ok_or_else(|| pass_error("rewriting a function did not give a function".into()))
}

/// `expr` with the variables of `bindings` replaced (rebuilt nodes keep
/// their types, as TVM's `Bind` keeps them).
fn bind(expr: &Expr, bindings: &HashMap<VarId, Expr>) -> Expr {
    rewrite_post_order(expr, |old, rebuilt| match old.as_var() {
        Some(var) => bindings.get(&var.id()).cloned().unwrap_or(rebuilt),
        None => rebuilt,
    })
}
