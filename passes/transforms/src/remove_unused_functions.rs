//! `RemoveUnusedFunctions`: drops every global function that the entry
//! functions (`main` by default) do not reach, as TVM v0.13's
//! `removed_unused_funcs.cc` does. A function is reached when a reached
//! function mentions its global anywhere (a call or a reference), so
//! functions passed around as values stay. Type definitions are kept.

use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::post_order;
use relay_ir::{ExprKind, IRModule};
use relay_pass_manager::pipeline::PipelineValue;
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxSet as HashSet;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("RemoveUnusedFunctions", 1)
        .param(ParamSpec::list(
            "entry_functions",
            vec![PipelineValue::Str("main".into())],
            "the global functions to keep together with everything they reach",
        ))
        .doc("Remove global functions not reachable from the entry functions")
        .build(|args| {
            let entries = args.string_list("entry_functions")?;
            Ok(move |module: IRModule, _ctx: &PassContext| {
                remove_unused_functions(module, &entries)
            })
        })
}

/// Keeps the functions reachable from `entries`; an entry that does not
/// exist is an error (TVM fails looking it up).
pub fn remove_unused_functions(
    mut module: IRModule,
    entries: &[String],
) -> Result<IRModule, Diagnostic> {
    let mut reached: HashSet<String> = HashSet::default();
    let mut pending: Vec<String> = Vec::new();
    for entry in entries {
        if module.function(entry).is_none() {
            return Err(Diagnostic::pass_failed(format!(
                "RemoveUnusedFunctions: entry function @{entry} is not in the module"
            )));
        }
        if reached.insert(entry.clone()) {
            pending.push(entry.clone());
        }
    }
    while let Some(name) = pending.pop() {
        let Some(function) = module.function(&name) else {
            continue;
        };
        for node in post_order(function.expr()) {
            if let ExprKind::GlobalVar(global) = node.kind() {
                if reached.insert(global.name().to_string()) {
                    pending.push(global.name().to_string());
                }
            }
        }
    }
    let unused: Vec<String> = module
        .functions()
        .map(|(name, _)| name.to_string())
        .filter(|name| !reached.contains(name))
        .collect();
    for name in unused {
        module.remove_function(&name);
    }
    Ok(module)
}
