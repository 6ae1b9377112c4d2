//! `DefuseOps`: the inverse of `FuseOps`, as TVM v0.13's `defuse_ops.cc`
//! does it — every call of a function literal (the `%N = fn (%p0, ...,
//! Primitive=1) {...}; %N(args)` FuseOps makes) is replaced by the
//! function's body with each parameter replaced by its argument.
//!
//! The expression is rebuilt bottom-up, so calls nested inside a function
//! body are inlined before the function itself is. Parameters are matched
//! by name, as TVM does: every variable in the body is looked up by its
//! name among the parameters. Two parameters with the same name are TVM's
//! error. A body variable that is not a parameter (one a `let` or a nested
//! function inside the inlined function binds) is an error here with TVM's
//! outcome in the message: TVM's lookup finds nothing and puts a null
//! expression in its place, which the module check after the pass rejects
//! ("Found null pointer node while traversing AST"). FuseOps never makes
//! such functions; `ToGraphNormalForm` first removes the `let`s.

use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::rewrite_post_order;
use relay_ir::{Expr, ExprKind, Function, IRModule, Pattern};
use relay_pass_manager::registry::PassSpec;
use relay_pass_manager::PassContext;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

/// The registry entry.
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("DefuseOps", 3)
        .required(&["InferType"])
        .doc("Inline every call of a function literal (undo FuseOps)")
        .transform(defuse_function)
}

fn defuse_function(
    function: Function,
    _module: &IRModule,
    _ctx: &PassContext,
) -> Result<Function, Diagnostic> {
    defuse_ops(&function)
}

/// Inlines every call of a function literal in `function`.
pub fn defuse_ops(function: &Function) -> Result<Function, Diagnostic> {
    let mut failure: Option<Diagnostic> = None;
    let rewritten = rewrite_post_order(function.expr(), |_original, rebuilt| {
        if failure.is_some() {
            return rebuilt;
        }
        let ExprKind::Call(call) = rebuilt.kind() else {
            return rebuilt;
        };
        let ExprKind::Function(callee) = call.callee.kind() else {
            return rebuilt;
        };
        match inline_body(
            callee.params.iter().map(|p| p.name()),
            &callee.body,
            &call.args,
        ) {
            Ok(inlined) => inlined,
            Err(diagnostic) => {
                failure = Some(diagnostic);
                rebuilt
            }
        }
    });
    if let Some(diagnostic) = failure {
        return Err(diagnostic);
    }
    rewritten.as_function().ok_or_else(|| {
        Diagnostic::pass_failed("DefuseOps: the function was rewritten to a non-function")
    })
}

/// `body` with every variable replaced by the argument of the parameter
/// of the same name.
fn inline_body<'a>(
    param_names: impl Iterator<Item = &'a str>,
    body: &Expr,
    args: &[Expr],
) -> Result<Expr, Diagnostic> {
    let mut by_name: HashMap<&str, &Expr> = HashMap::default();
    for (name, arg) in param_names.zip(args) {
        if by_name.insert(name, arg).is_some() {
            return Err(Diagnostic::pass_failed_at(
                arg,
                format!(
                    "Found multiple parameters share the same variable name `{name}` which \
                     introduces uncertainty in DefuseOps pass"
                ),
            ));
        }
    }
    check_substitutable(body, &by_name)?;
    Ok(rewrite_post_order(
        body,
        |_original, rebuilt| match rebuilt.kind() {
            ExprKind::Var(var) => by_name
                .get(var.name.as_str())
                .map_or(rebuilt.clone(), |arg| (*arg).clone()),
            _ => rebuilt,
        },
    ))
}

/// Every variable of `body` must name a parameter, and a variable in a
/// binding position must be replaced by a variable.
fn check_substitutable(body: &Expr, by_name: &HashMap<&str, &Expr>) -> Result<(), Diagnostic> {
    for node in relay_ir::rewrite::post_order(body) {
        let binders: Vec<&Expr> = match node.kind() {
            ExprKind::Var(var) => {
                if !by_name.contains_key(var.name.as_str()) {
                    return Err(not_a_parameter(&node, &var.name));
                }
                continue;
            }
            ExprKind::Let { var, .. } => vec![var.expr()],
            ExprKind::Function(f) => f.params.iter().map(|p| p.expr()).collect(),
            ExprKind::Match { clauses, .. } => {
                let mut vars = Vec::new();
                for clause in clauses {
                    pattern_vars(&clause.pattern, &mut vars);
                }
                vars
            }
            _ => continue,
        };
        for binder in binders {
            let name = match binder.kind() {
                ExprKind::Var(var) => var.name.as_str(),
                _ => continue,
            };
            if !by_name
                .get(name)
                .is_some_and(|arg| matches!(arg.kind(), ExprKind::Var(_)))
            {
                return Err(Diagnostic::pass_failed_at(
                    binder,
                    format!(
                        "DefuseOps: bound variable `%{name}` of an inlined function would be \
                         replaced by a non-variable"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A variable of an inlined body that no parameter names: TVM v0.13 fails
/// on it too, later and less clearly.
fn not_a_parameter(var: &Expr, name: &str) -> Diagnostic {
    Diagnostic::pass_failed_at(
        var,
        format!(
            "DefuseOps: variable `%{name}` of an inlined function is not one of its parameters"
        ),
    )
    .with_note(
        "TVM v0.13 fails here too: its DefuseOps replaces every variable of the inlined body \
         by the argument of the parameter with the same name, puts a null expression where \
         there is none, and the module check after the pass stops with \"Found null pointer \
         node while traversing AST. The previous pass may have generated invalid data.\"",
    )
    .with_help(
        "DefuseOps undoes FuseOps, whose functions name only their parameters; for functions \
         that bind variables with `let`, run ToGraphNormalForm first \
         (`-p ToGraphNormalForm,DefuseOps --opt-level 3`)",
    )
}

fn pattern_vars<'a>(pattern: &'a Pattern, out: &mut Vec<&'a Expr>) {
    match pattern {
        Pattern::Wildcard => {}
        Pattern::Var(var) => out.push(var.expr()),
        Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
            for field in fields {
                pattern_vars(field, out);
            }
        }
    }
}
