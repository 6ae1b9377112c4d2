//! `EtaExpand(expand_constructor, expand_global_var)`: TVM v0.13's module
//! pass (opt_level 1) that wraps references to global functions in
//! `fn (%eta_expand_param, …) { @g(%eta_expand_param, …) }`.
//!
//! Every function of the module is rebuilt: calls become new, untyped nodes
//! (TVM builds a fresh `Call` for each), other nodes keep their types. With
//! `expand_global_var`, each global that names a function becomes a copy of
//! that function (attributes, type parameters, return and checked type
//! kept) with fresh parameters annotated as the originals and a body that
//! calls the global; the copy is shared by every use of that global, as
//! TVM's memo shares it, callee positions included. A constructor applied
//! in a call is left alone; a bare constructor with `expand_constructor` is
//! refused with a diagnostic (not implemented). Asking for neither
//! expansion is an error, as in TVM.

use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{post_order, rewrite_post_order};
use relay_ir::{Call, Expr, ExprKind, Function, IRModule, Var};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("EtaExpand", 1)
        .param(ParamSpec::bool(
            "expand_constructor",
            false,
            "wrap bare constructors in functions",
        ))
        .param(ParamSpec::bool(
            "expand_global_var",
            false,
            "wrap references to global functions in functions",
        ))
        .doc("Eta-expand global function references and constructors")
        .build(|args| {
            let options = EtaOptions {
                expand_constructor: args.bool("expand_constructor"),
                expand_global_var: args.bool("expand_global_var"),
            };
            Ok(move |module: IRModule, _ctx: &PassContext| eta_expand(module, options))
        })
}

/// Which references to expand.
#[derive(Debug, Clone, Copy)]
pub struct EtaOptions {
    pub expand_constructor: bool,
    pub expand_global_var: bool,
}

/// Eta-expands every function of `module` (see the module doc).
pub fn eta_expand(mut module: IRModule, options: EtaOptions) -> Result<IRModule, Diagnostic> {
    if !options.expand_constructor && !options.expand_global_var {
        return Err(Diagnostic::pass_failed(
            "EtaExpand: must expand at least one language feature \
             (expand_constructor or expand_global_var)",
        ));
    }
    let names: Vec<String> = module
        .functions()
        .map(|(name, _)| name.to_string())
        .collect();
    // The expansion of each global, shared across uses and functions.
    let mut expansions: HashMap<String, Expr> = HashMap::default();
    for name in names {
        let Some(function) = module.function(&name).cloned() else {
            continue;
        };
        if options.expand_constructor {
            reject_bare_constructors(&function)?;
        }
        let rewritten = rewrite_post_order(function.expr(), |old, rebuilt| match old.kind() {
            ExprKind::GlobalVar(global) if options.expand_global_var => {
                expand_global(&module, global.name(), &mut expansions).unwrap_or(rebuilt)
            }
            ExprKind::Call(old_call) => {
                let Some(call) = rebuilt.as_call() else {
                    return rebuilt;
                };
                // A constructor being applied is not expanded.
                let callee = if matches!(old_call.callee.kind(), ExprKind::Constructor(_)) {
                    old_call.callee.clone()
                } else {
                    call.callee.clone()
                };
                Expr::new(
                    ExprKind::Call(Call {
                        callee,
                        args: call.args.clone(),
                        attrs: call.attrs.clone(),
                        type_args: call.type_args.clone(),
                    }),
                    rebuilt.span(),
                )
            }
            _ => rebuilt,
        });
        if let Some(rewritten) = rewritten.as_function() {
            module.add_function(&name, rewritten);
        }
    }
    Ok(module)
}

/// `fn (%eta_expand_param, …) { @name(%eta_expand_param, …) }` built from
/// the module's current function `name`; `None` when there is none.
fn expand_global(
    module: &IRModule,
    name: &str,
    expansions: &mut HashMap<String, Expr>,
) -> Option<Expr> {
    if let Some(done) = expansions.get(name) {
        return Some(done.clone());
    }
    let function: &Function = module.function(name)?;
    let params: Vec<Var> = function
        .params()
        .iter()
        .map(|param| Var::new("eta_expand_param", param.type_annotation().cloned(), None))
        .collect();
    let body = Expr::call(
        Expr::global(name, None),
        params.iter().map(|p| p.expr().clone()).collect(),
        None,
        None,
    );
    let mut children: Vec<Expr> = params.iter().map(|p| p.expr().clone()).collect();
    children.push(body);
    let expanded = relay_ir::rewrite::with_children(function.expr(), &children);
    expansions.insert(name.to_string(), expanded.clone());
    Some(expanded)
}

fn reject_bare_constructors(function: &Function) -> Result<(), Diagnostic> {
    let nodes = post_order(function.expr());
    let applied: std::collections::HashSet<usize> = nodes
        .iter()
        .filter_map(|node| node.as_call().map(|call| call.callee.addr()))
        .collect();
    let bare = nodes.iter().any(|node| {
        matches!(node.kind(), ExprKind::Constructor(_)) && !applied.contains(&node.addr())
    });
    if bare {
        return Err(Diagnostic::pass_failed(
            "EtaExpand: expanding a constructor used as a value is not supported",
        ));
    }
    Ok(())
}
