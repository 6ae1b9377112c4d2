//! TVM v0.13's utilities for `Compiler` functions
//! (`compiler_function_utils.cc`), module passes of opt_level 0 that a
//! codegen's custom lowering runs around partitioning:
//!
//! * `OutlineCompilerFunctionsWithExistingGlobalSymbols(compiler_filter)`
//!   (PassInfo `OutlineCompilerFunctions`): every call of a `Compiler`
//!   function literal (directly, or through a `let`, which is inlined)
//!   becomes a call of a global named by the function's `global_symbol`;
//!   the first function with a symbol becomes that global, later ones
//!   share it;
//! * `MarkCompilerFunctionsAsExtern(compiler_filter)`: global `Compiler`
//!   functions lose their attributes for a single `Extern=1` (the calls are
//!   left as they are, as in TVM's code, despite its documentation);
//! * `InlineCompilerFunctionsBoundTo(global_vars)`: calls of the listed
//!   globals are replaced by their bodies, with the `Composite` functions
//!   called inside inlined too, and the globals are removed.
//!
//! A `compiler_filter` other than `""` restricts the first two to functions
//! whose `Compiler` attribute is that name.

use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::fxhash::FxMap;
use relay_ir::rewrite::{rewrite_post_order, with_children};
use relay_ir::{AttrValue, DictAttrs, Expr, ExprKind, Function, FunctionData, IRModule, VarId};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;

fn filter_param() -> ParamSpec {
    ParamSpec::string(
        "compiler_filter",
        "",
        "only functions whose `Compiler` attribute is this name (empty: every one)",
    )
}

pub(crate) fn outline_spec() -> PassSpec {
    PassSpec::module("OutlineCompilerFunctionsWithExistingGlobalSymbols", 0)
        .info_name("OutlineCompilerFunctions")
        .param(filter_param())
        .doc("Outline called `Compiler` function literals to globals named by their global_symbol")
        .build(|args| {
            let filter = args.string("compiler_filter");
            Ok(move |module: IRModule, _ctx: &PassContext| {
                outline_compiler_functions(module, &filter)
            })
        })
}

pub(crate) fn mark_extern_spec() -> PassSpec {
    PassSpec::module("MarkCompilerFunctionsAsExtern", 0)
        .param(filter_param())
        .doc("Replace the attributes of global `Compiler` functions by `Extern=1`")
        .build(|args| {
            let filter = args.string("compiler_filter");
            Ok(move |module: IRModule, _ctx: &PassContext| {
                Ok(mark_compiler_functions_as_extern(module, &filter))
            })
        })
}

pub(crate) fn inline_bound_spec() -> PassSpec {
    PassSpec::module("InlineCompilerFunctionsBoundTo", 0)
        .param(ParamSpec::list(
            "global_vars",
            Vec::new(),
            "the global `Compiler` functions to inline (names, with or without `@`)",
        ))
        .doc("Inline the listed global `Compiler` functions (and their Composite calls), then drop them")
        .build(|args| {
            let names: Vec<String> = args
                .string_list("global_vars")?
                .into_iter()
                .map(|name| name.strip_prefix('@').map_or(name.clone(), str::to_string))
                .collect();
            Ok(move |module: IRModule, _ctx: &PassContext| {
                inline_compiler_functions_bound_to(module, &names)
            })
        })
}

/// `expr` as a `Compiler` function literal that
/// passes `filter`.
fn compiler_function(expr: &Expr, filter: &str) -> Option<Function> {
    let function = expr.as_function()?;
    let compiler = function.attr("Compiler")?.as_str()?;
    (filter.is_empty() || compiler == filter).then_some(function)
}

/// `expr` with the variables of `bindings` replaced (TVM's `Bind`).
fn bind(expr: &Expr, bindings: &FxMap<VarId, Expr>) -> Expr {
    rewrite_post_order(expr, |old, rebuilt| match old.as_var() {
        Some(var) => bindings.get(&var.id()).cloned().unwrap_or(rebuilt),
        None => rebuilt,
    })
}

/// `call` with another callee (arguments, attrs and span kept).
fn with_callee(call: &Expr, callee: Expr) -> Expr {
    let args = &call.as_call().expect("a call").args;
    let mut children = vec![callee];
    children.extend(args.iter().cloned());
    with_children(call, &children)
}

/// See the module documentation.
pub fn outline_compiler_functions(module: IRModule, filter: &str) -> Result<IRModule, Diagnostic> {
    let mut output = module.clone();
    for (name, function) in module.functions() {
        if !function.is_optimizable() {
            continue;
        }
        let body = inline_let_bound_compiler_functions(function.body(), filter);
        let mut failure = None;
        let body = rewrite_post_order(&body, |_old, rebuilt| {
            let Some(call) = rebuilt.as_call() else {
                return rebuilt;
            };
            let Some(callee) = compiler_function(&call.callee, filter) else {
                return rebuilt;
            };
            let Some(symbol) = callee.attr("global_symbol").and_then(AttrValue::as_str) else {
                failure.get_or_insert_with(|| {
                    Diagnostic::pass_failed(
                        "ExistingGlobalSymbolCache requires all functions to already have a \
                         'global_symbol' attribute",
                    )
                });
                return rebuilt;
            };
            let symbol = symbol.to_string();
            if output.function(&symbol).is_none() {
                output.add_function(&symbol, callee.clone());
            }
            with_callee(&rebuilt, Expr::global(&symbol, call.callee.span()))
        });
        if let Some(error) = failure {
            return Err(error);
        }
        output.add_function(name, function.with_body(body));
    }
    Ok(output)
}

/// Replaces each `let` bound to a `Compiler` function (of the filter) by
/// its body, the function standing at every use of the variable; repeated
/// for lets inside the functions so substituted.
fn inline_let_bound_compiler_functions(body: &Expr, filter: &str) -> Expr {
    let mut current = body.clone();
    loop {
        let mut bound: FxMap<VarId, Expr> = FxMap::default();
        relay_ir::rewrite::post_order_each(&current, |node| {
            if let ExprKind::Let { var, value, .. } = node.kind() {
                if compiler_function(value, filter).is_some() {
                    bound.insert(var.id(), value.clone());
                }
            }
        });
        if bound.is_empty() {
            return current;
        }
        current = rewrite_post_order(&current, |old, rebuilt| match old.kind() {
            ExprKind::Let { var, .. } if bound.contains_key(&var.id()) => match rebuilt.kind() {
                ExprKind::Let { body, .. } => body.clone(),
                _ => rebuilt,
            },
            ExprKind::Var(_) => old
                .as_var()
                .and_then(|var| bound.get(&var.id()).cloned())
                .unwrap_or(rebuilt),
            _ => rebuilt,
        });
    }
}

/// See the module documentation.
pub fn mark_compiler_functions_as_extern(module: IRModule, filter: &str) -> IRModule {
    let mut output = module.clone();
    for (name, function) in module.functions() {
        if compiler_function(function.expr(), filter).is_none() {
            continue;
        }
        let data = function.data();
        let marked = FunctionData {
            attrs: DictAttrs::new(vec![(
                "Extern".into(),
                AttrValue::int_imm(1, DataType::INT32),
            )]),
            ..data.clone()
        };
        output.add_function(name, Function::new(marked, function.expr().span()));
    }
    output
}

/// See the module documentation.
pub fn inline_compiler_functions_bound_to(
    module: IRModule,
    names: &[String],
) -> Result<IRModule, Diagnostic> {
    if names.is_empty() {
        return Ok(module);
    }
    let mut output = module.clone();
    for (name, function) in module.functions() {
        if names.iter().any(|n| n == name) {
            output.remove_function(name);
            continue;
        }
        if !function.is_optimizable() {
            continue;
        }
        let mut failure = None;
        let body = rewrite_post_order(function.body(), |_old, rebuilt| {
            let Some(call) = rebuilt.as_call() else {
                return rebuilt;
            };
            let ExprKind::GlobalVar(global) = call.callee.kind() else {
                return rebuilt;
            };
            if !names.iter().any(|n| n == global.name()) {
                return rebuilt;
            }
            match inline_call(&module, global.name(), &call.args) {
                Ok(inlined) => inlined,
                Err(error) => {
                    failure.get_or_insert(error);
                    rebuilt
                }
            }
        });
        if let Some(error) = failure {
            return Err(error);
        }
        output.add_function(name, function.with_body(body));
    }
    Ok(output)
}

/// The body of global `name` (a `Compiler` function) with its `Composite`
/// calls inlined and its parameters bound to `args`.
fn inline_call(module: &IRModule, name: &str, args: &[Expr]) -> Result<Expr, Diagnostic> {
    let function = module.function(name).ok_or_else(|| {
        Diagnostic::pass_failed(format!("InlineCompilerFunctionsBoundTo: no global @{name}"))
    })?;
    if function.attr("Compiler").is_none() {
        return Err(Diagnostic::pass_failed(format!(
            "InlineCompilerFunctionsBoundTo: @{name} has no `Compiler` attribute"
        )));
    }
    let mut failure = None;
    let body = rewrite_post_order(function.body(), |_old, rebuilt| {
        let Some(call) = rebuilt.as_call() else {
            return rebuilt;
        };
        let Some(inner) = call.callee.as_function() else {
            return rebuilt;
        };
        if inner.attr("Composite").is_none() {
            failure.get_or_insert_with(|| {
                Diagnostic::pass_failed(format!(
                    "InlineCompilerFunctionsBoundTo: @{name} calls a function literal without a \
                     `Composite` attribute"
                ))
            });
            return rebuilt;
        }
        bind_params(&inner, &call.args).unwrap_or_else(|message| {
            failure.get_or_insert(Diagnostic::pass_failed(message));
            rebuilt.clone()
        })
    });
    if let Some(error) = failure {
        return Err(error);
    }
    bind_params(&function.with_body(body), args).map_err(Diagnostic::pass_failed)
}

/// The body of `function` with its parameters replaced by `args`.
fn bind_params(function: &Function, args: &[Expr]) -> Result<Expr, String> {
    if function.params().len() != args.len() {
        return Err(format!(
            "InlineCompilerFunctionsBoundTo: a call passes {} arguments to a function of {} \
             parameters",
            args.len(),
            function.params().len()
        ));
    }
    let bindings: FxMap<VarId, Expr> = function
        .params()
        .iter()
        .zip(args)
        .map(|(param, arg)| (param.id(), arg.clone()))
        .collect();
    Ok(bind(function.body(), &bindings))
}
