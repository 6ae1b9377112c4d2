//! `LambdaLift`: TVM v0.13's module pass (opt_level 1, from the VM
//! backend, `src/relay/backend/vm/lambda_lift.cc`) that moves every nested
//! non-primitive function to a new global `@lifted_nameN`, where `N` is
//! TVM's structural hash of the function as it was written
//! ([`relay_ir::tvm_hash`]), so the names are TVM's.
//!
//! * A function without free variables becomes the global itself and its
//!   occurrence the global variable.
//! * A closure (free variables besides its own `let` name) becomes a global
//!   that takes the captured variables, annotated with their checked types,
//!   and returns the function (`Closure=1`); its occurrence becomes a call
//!   of that global with the captured variables.
//! * A function bound by `let` that calls itself calls the global instead.
//! * Equal functions share one global (TVM checks that a name it meets
//!   again is the same function, and fails with "lifted function hash
//!   collision" otherwise).
//!
//! Global functions with a `Compiler` attribute and primitive functions are
//! left alone. TVM hashes a closure's captured variables by their memory
//! addresses, so its names for closures change from run to run; ours hash
//! them by order of occurrence instead (deterministic, not TVM's number).

use relay_ir::diagnostic::Diagnostic;
use relay_ir::equal::structural_equal;
use relay_ir::rewrite::{for_each_child, rewrite_post_order};
use relay_ir::tvm_hash::structural_hash;
use relay_ir::{
    AttrValue, DictAttrs, Expr, ExprKind, FuncType, Function, FunctionData, IRModule, Pattern,
    Type, TypeKind, TypeVar, Var, VarId,
};
use relay_pass_manager::PassSpec;
use std::collections::{HashMap, HashSet};

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("LambdaLift", 1)
        .doc("Lift nested functions to globals named @lifted_name<TVM's structural hash>")
        .transform(|module, _ctx| lambda_lift(module))
}

/// Lifts the nested functions of every global function (but those with a
/// `Compiler` attribute) to new globals.
pub fn lambda_lift(mut module: IRModule) -> Result<IRModule, Diagnostic> {
    let globals: Vec<(String, Function)> = module
        .functions()
        .map(|(name, function)| (name.to_string(), function.clone()))
        .collect();
    for (name, function) in globals {
        if function.attr("Compiler").is_some() || function.is_primitive() {
            continue;
        }
        let lifted = Lifter::new(&function).lift(&mut module)?;
        if !lifted.expr().ptr_eq(function.expr()) {
            module.add_function(&name, lifted);
        }
    }
    Ok(module)
}

/// What a `let`-bound function's recursive calls become: the lifted global,
/// applied to the captured variables when it is a closure.
struct Recursion {
    global: String,
    captured: Vec<Var>,
}

struct Lifter<'a> {
    root: &'a Function,
    /// For each node reached outside primitive functions: the variable of
    /// the innermost `let` whose value (a non-primitive function) encloses
    /// it (TVM's `letrec_.back()`).
    letrec: HashMap<usize, Option<VarId>>,
    recursion: HashMap<VarId, Recursion>,
}

impl<'a> Lifter<'a> {
    fn new(root: &'a Function) -> Lifter<'a> {
        Lifter {
            root,
            letrec: letrec_contexts(root.expr()),
            recursion: HashMap::new(),
        }
    }

    fn lift(mut self, module: &mut IRModule) -> Result<Function, Diagnostic> {
        // A recursive call is rewritten before its function is reached
        // bottom-up, so the globals of let-bound functions come first.
        self.plan_recursive_functions()?;
        let mut failure: Option<Diagnostic> = None;
        let root_addr = self.root.expr().addr();
        let new = rewrite_post_order(self.root.expr(), |old, new| {
            if failure.is_some() || old.addr() == root_addr {
                return new;
            }
            let Some(context) = self.letrec.get(&old.addr()).copied() else {
                return new;
            };
            match old.kind() {
                ExprKind::Call(call) => self.rewrite_recursive_call(call, context, new),
                ExprKind::Function(_) => match self.lift_function(old, context, new, module) {
                    Ok(replacement) => replacement,
                    Err(error) => {
                        failure = Some(error);
                        old.clone()
                    }
                },
                _ => new,
            }
        });
        if let Some(error) = failure {
            return Err(error);
        }
        Ok(new
            .as_function()
            .expect("a function rewrites to a function"))
    }

    /// Names the global of every `let`-bound function that uses its own
    /// variable, as TVM does before visiting the function's body.
    fn plan_recursive_functions(&mut self) -> Result<(), Diagnostic> {
        let mut plans = Vec::new();
        let mut stack = vec![self.root.expr().clone()];
        let mut seen = HashSet::new();
        while let Some(expr) = stack.pop() {
            if !seen.insert(expr.addr()) || !self.letrec.contains_key(&expr.addr()) {
                continue;
            }
            if let ExprKind::Let { var, value, .. } = expr.kind() {
                if let Some(function) = value.as_function() {
                    if !function.is_primitive() {
                        let free = free_vars(value);
                        if free.iter().any(|v| v.id() == var.id()) {
                            let captured: Vec<Var> =
                                free.into_iter().filter(|v| v.id() != var.id()).collect();
                            plans.push((var.id(), lifted_name(value)?, captured));
                        }
                    }
                }
            }
            for_each_child(&expr, |child| stack.push(child.clone()));
        }
        for (var, global, captured) in plans {
            self.recursion.insert(var, Recursion { global, captured });
        }
        Ok(())
    }

    /// `%f(args)` inside the function `let %f` binds calls its global.
    fn rewrite_recursive_call(
        &self,
        call: &relay_ir::Call,
        context: Option<VarId>,
        new: Expr,
    ) -> Expr {
        let (Some(callee), Some(current)) = (call.callee.as_var(), context) else {
            return new;
        };
        if callee.id() != current {
            return new;
        }
        let Some(recursion) = self.recursion.get(&current) else {
            return new;
        };
        let ExprKind::Call(rebuilt) = new.kind() else {
            return new;
        };
        // TVM builds a new call: no checked type.
        Expr::new(
            ExprKind::Call(relay_ir::Call {
                callee: recursion.callee(),
                args: rebuilt.args.clone(),
                attrs: rebuilt.attrs.clone(),
                type_args: rebuilt.type_args.clone(),
            }),
            new.span(),
        )
    }

    fn lift_function(
        &self,
        old: &Expr,
        context: Option<VarId>,
        new: Expr,
        module: &mut IRModule,
    ) -> Result<Expr, Diagnostic> {
        let original = old.as_function().expect("a function node");
        if original.is_primitive() {
            return Ok(new);
        }
        let name = lifted_name(old)?;
        let captured: Vec<Var> = free_vars(old)
            .into_iter()
            .filter(|var| Some(var.id()) != context)
            .collect();
        let free_type_vars = free_type_vars(old);
        let visited = new
            .as_function()
            .expect("a function rewrites to a function");
        let lifted = if captured.is_empty() && free_type_vars.is_empty() {
            let data = visited.data();
            Function::new(data.clone(), old.span())
        } else {
            closure(original, &visited, &captured, free_type_vars)?
        };
        match module.function(&name) {
            Some(existing) => {
                if !structural_equal(lifted.expr(), existing.expr(), false) {
                    return Err(Diagnostic::pass_failed(format!(
                        "LambdaLift: lifted function hash collision for @{name}"
                    )));
                }
            }
            None => module.add_function(&name, lifted),
        }
        let global = Expr::global(&name, None);
        Ok(if captured.is_empty() {
            global
        } else {
            Expr::call(
                global,
                captured.iter().map(|v| v.expr().clone()).collect(),
                None,
                None,
            )
        })
    }
}

impl Recursion {
    fn callee(&self) -> Expr {
        let global = Expr::global(&self.global, None);
        if self.captured.is_empty() {
            global
        } else {
            Expr::call(
                global,
                self.captured.iter().map(|v| v.expr().clone()).collect(),
                None,
                None,
            )
        }
    }
}

/// `@lifted_name<hash>` for a function as written.
fn lifted_name(function: &Expr) -> Result<String, Diagnostic> {
    structural_hash(function, false)
        .map(|hash| format!("lifted_name{hash}"))
        .map_err(|error| {
            Diagnostic::pass_failed_at(
                function,
                format!("LambdaLift: cannot name a lifted function: {error}"),
            )
        })
}

/// The global for a closure: it takes the captured variables (fresh ones,
/// annotated with the captured variables' checked types) and returns the
/// function with its body rebound to them; TVM marks it `Closure=1`.
fn closure(
    original: Function,
    visited: &Function,
    captured: &[Var],
    free_type_vars: Vec<TypeVar>,
) -> Result<Function, Diagnostic> {
    let mut rebinding: HashMap<VarId, Expr> = HashMap::new();
    let mut params = Vec::with_capacity(captured.len());
    for var in captured {
        let ty = var.expr().checked_type().cloned().ok_or_else(|| {
            Diagnostic::pass_failed_at(
                var.expr(),
                format!(
                    "LambdaLift: the captured variable %{} has no checked type; run InferType first",
                    var.name()
                ),
            )
        })?;
        let fresh = Var::with_id(
            VarId::fresh(),
            var.name(),
            Some(ty),
            var.data().virtual_device.as_deref().cloned(),
            None,
        );
        rebinding.insert(var.id(), fresh.expr().clone());
        params.push(fresh);
    }
    let body = rewrite_post_order(visited.body(), |old, new| match old.kind() {
        ExprKind::Var(data) => rebinding.get(&data.id).cloned().unwrap_or(new),
        _ => new,
    });
    // TVM rebuilds the original function (its checked type kept) over the
    // visited, rebound body.
    let inner = original.with_body(body).into_expr();
    let mut attrs = DictAttrs::default();
    attrs.set(
        "Closure",
        AttrValue::int_imm(1, relay_ir::dtype::DataType::INT32),
    );
    Ok(Function::new(
        FunctionData {
            params,
            body: inner,
            ret_type: Some(func_type_annotation(&original)),
            type_params: free_type_vars,
            attrs,
            virtual_device: None,
        },
        original.expr().span(),
    ))
}

/// TVM's `Function::func_type_annotation`: the parameters' annotations and
/// the return type, `_` where missing.
fn func_type_annotation(function: &Function) -> Type {
    let data = function.data();
    Type::new(TypeKind::Func(Box::new(FuncType {
        params: data
            .params
            .iter()
            .map(|p| {
                p.type_annotation()
                    .cloned()
                    .unwrap_or_else(Type::incomplete)
            })
            .collect(),
        ret: data.ret_type.clone().unwrap_or_else(Type::incomplete),
        type_params: data.type_params.clone(),
    })))
}

/// For every node outside primitive functions, the innermost `let`
/// variable bound to a non-primitive function whose value encloses it.
fn letrec_contexts(root: &Expr) -> HashMap<usize, Option<VarId>> {
    let mut contexts = HashMap::new();
    let mut stack: Vec<(Expr, Option<VarId>)> = vec![(root.clone(), None)];
    while let Some((expr, context)) = stack.pop() {
        if contexts.contains_key(&expr.addr()) {
            continue;
        }
        contexts.insert(expr.addr(), context);
        if expr
            .as_function()
            .is_some_and(|f| f.is_primitive() && !expr.ptr_eq(root))
        {
            continue;
        }
        let mut children: Vec<(Expr, Option<VarId>)> = Vec::new();
        match expr.kind() {
            ExprKind::Let { var, value, body } => {
                let lambda = value.as_function().is_some_and(|f| !f.is_primitive());
                children.push((var.expr().clone(), context));
                children.push((value.clone(), if lambda { Some(var.id()) } else { context }));
                children.push((body.clone(), context));
            }
            _ => for_each_child(&expr, |child| children.push((child.clone(), context))),
        }
        // Pre-order, first child first: the first context a shared node is
        // met in is the one TVM's memoising mutator uses.
        stack.extend(children.into_iter().rev());
    }
    contexts
}

/// TVM's `FreeVars`: the variables `expr` uses and does not bind, in order
/// of first occurrence.
fn free_vars(expr: &Expr) -> Vec<Var> {
    let mut bound: HashSet<VarId> = HashSet::new();
    let mut seen: HashSet<VarId> = HashSet::new();
    let mut order: Vec<Var> = Vec::new();
    let mut visited: HashSet<usize> = HashSet::new();
    let mut stack = vec![expr.clone()];
    while let Some(node) = stack.pop() {
        if !visited.insert(node.addr()) {
            continue;
        }
        match node.kind() {
            ExprKind::Var(_) => {
                let var = node.as_var().expect("a variable");
                if seen.insert(var.id()) {
                    order.push(var);
                }
                continue;
            }
            ExprKind::Function(data) => bound.extend(data.params.iter().map(Var::id)),
            ExprKind::Let { var, .. } => {
                bound.insert(var.id());
            }
            ExprKind::Match { clauses, .. } => {
                for clause in clauses {
                    bind_pattern(&clause.pattern, &mut bound);
                }
            }
            _ => {}
        }
        let mut children = Vec::new();
        for_each_child(&node, |child| children.push(child.clone()));
        stack.extend(children.into_iter().rev());
    }
    order.retain(|var| !bound.contains(&var.id()));
    order
}

fn bind_pattern(pattern: &Pattern, bound: &mut HashSet<VarId>) {
    match pattern {
        Pattern::Var(var) => {
            bound.insert(var.id());
        }
        Pattern::Constructor(_, items) | Pattern::Tuple(items) => {
            items.iter().for_each(|p| bind_pattern(p, bound))
        }
        Pattern::Wildcard => {}
    }
}

/// The type variables the annotations in `expr` use that no function in
/// it binds, in order of occurrence.
fn free_type_vars(expr: &Expr) -> Vec<TypeVar> {
    let mut bound: HashSet<u64> = HashSet::new();
    let mut used: Vec<TypeVar> = Vec::new();
    let mut visited: HashSet<usize> = HashSet::new();
    let mut stack = vec![expr.clone()];
    while let Some(node) = stack.pop() {
        if !visited.insert(node.addr()) {
            continue;
        }
        match node.kind() {
            ExprKind::Var(data) => {
                if let Some(ty) = &data.type_annotation {
                    collect_type_vars(ty, &mut used);
                }
            }
            ExprKind::Function(data) => {
                bound.extend(data.type_params.iter().map(TypeVar::id));
                if let Some(ty) = &data.ret_type {
                    collect_type_vars(ty, &mut used);
                }
            }
            ExprKind::Call(call) => call
                .type_args
                .iter()
                .for_each(|ty| collect_type_vars(ty, &mut used)),
            _ => {}
        }
        for_each_child(&node, |child| stack.push(child.clone()));
    }
    let mut seen = HashSet::new();
    used.retain(|var| !bound.contains(&var.id()) && seen.insert(var.id()));
    used
}

fn collect_type_vars(ty: &Type, out: &mut Vec<TypeVar>) {
    let mut stack = vec![ty.clone()];
    while let Some(ty) = stack.pop() {
        match ty.kind() {
            TypeKind::Var(var) => out.push(var.clone()),
            TypeKind::Tuple(fields) => stack.extend(fields.iter().rev().cloned()),
            TypeKind::Func(func) => {
                stack.push(func.ret.clone());
                stack.extend(func.params.iter().rev().cloned());
            }
            TypeKind::Call { func, args } => {
                stack.extend(args.iter().rev().cloned());
                stack.push(func.clone());
            }
            TypeKind::Ref(value) => stack.push(value.clone()),
            TypeKind::Tensor(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_lower::parse_and_lower;

    /// An LSTM cell as TVM's `lstm` model builds it (the computation and its
    /// annotations; names are not hashed). TVM's LambdaLift named the cell
    /// `@lifted_name3829032412016061648`: call attributes (a C++ `int`
    /// axis of -1, `IntImm` units, `split`'s object-valued sections),
    /// annotated lets, tuples and projections all enter that number.
    #[test]
    fn an_lstm_cell_gets_the_name_tvm_gave_it() {
        let t = "Tensor[(1, 64), float32]";
        let w = "Tensor[(256, 64), float32]";
        let b = "Tensor[(256), float32]";
        let g = "Tensor[(1, 256), float32]";
        let text = format!(
            r#"#[version = "0.0.5"]
def @main(%x: {t}, %c: ({t}, {t}), %wi: {w}, %bi: {b}, %wh: {w}, %bh: {b}) {{
  %0 = fn (%in: {t}, %st: ({t}, {t}), %w1: {w}, %b1: {b}, %w2: {w}, %b2: {b}) -> ({t}, ({t}, {t})) {{
    let %p: {g} = nn.bias_add(nn.dense(%in, %w1, units=256), %b1, axis=-1);
    let %q: {g} = nn.bias_add(nn.dense(%st.0, %w2, units=256), %b2, axis=-1);
    let %sum: {g} = add(%p, %q);
    let %parts: ({t}, {t}, {t}, {t}) = split(%sum, indices_or_sections=4, axis=1);
    let %i: {t} = sigmoid(%parts.0);
    let %f: {t} = sigmoid(%parts.1);
    let %z: {t} = tanh(%parts.2);
    let %o: {t} = sigmoid(%parts.3);
    let %nc: {t} = add(multiply(%f, %st.1), multiply(%i, %z));
    let %nh: {t} = multiply(%o, tanh(%nc));
    let %out: ({t}, ({t}, {t})) = (%nh, (%nh, %nc));
    %out
  }};
  %0(%x, %c, %wi, %bi, %wh, %bh)
}}
"#
        );
        let (module, diagnostics) = parse_and_lower("cell.relay", &text);
        assert!(!diagnostics.has_errors());
        let lifted = lambda_lift(module).unwrap();
        let names: Vec<&str> = lifted.functions().map(|(name, _)| name).collect();
        assert!(
            names.contains(&"lifted_name3829032412016061648"),
            "{names:?}"
        );
    }

    #[test]
    fn a_captured_variable_without_a_checked_type_is_an_error() {
        let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%y: Tensor[(2), float32]) { add(%x, %y) };
  %0(%x)
}
"#;
        let (module, diagnostics) = parse_and_lower("closure.relay", text);
        assert!(!diagnostics.has_errors());
        let error = lambda_lift(module).unwrap_err();
        assert!(
            error
                .message
                .contains("%x has no checked type; run InferType first"),
            "{}",
            error.message
        );
    }
}
