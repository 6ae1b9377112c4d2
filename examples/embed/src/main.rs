//! A downstream tool built on `relay-server`: it registers its own pass,
//! `CountCalls`, and then runs the `relay` command line (`relay-embed check`,
//! `opt`, `passes`, …) or the language server (`relay-embed lsp`), where the
//! pass shows up in `relay passes`, in pipelines and in `relay.listPasses`
//! (the editors' pass pickers); passes that change the code at the cursor
//! are also offered as code actions.

use relay_passes::ir::{Expr, ExprKind, IRModule};
use relay_passes::transform::registry::PassKind;
use relay_passes::transform::ModulePass;
use relay_passes::transform::{PassContext, PassInfo, PassSpec};
use std::collections::HashSet;
use std::sync::Arc;

/// The number of call nodes in a module (each shared node once).
fn count_calls(module: &IRModule) -> usize {
    let mut seen = HashSet::new();
    let mut stack: Vec<Expr> = module.functions().map(|(_, f)| f.expr().clone()).collect();
    let mut calls = 0;
    while let Some(expr) = stack.pop() {
        if !seen.insert(expr.addr()) {
            continue;
        }
        if matches!(expr.kind(), ExprKind::Call(_)) {
            calls += 1;
        }
        relay_server::lsp::analysis::push_children(&expr, &mut stack);
    }
    calls
}

/// `CountCalls`: logs how many calls the module has and leaves it unchanged.
fn count_calls_spec() -> PassSpec {
    PassSpec {
        name: "CountCalls".into(),
        info: PassInfo::new("CountCalls", 0, &[]),
        kind: PassKind::Module,
        params: Vec::new(),
        description: "Log the number of calls in the module (an example of a downstream pass)."
            .into(),
        factory: Arc::new(|_args| {
            let pass = ModulePass::new(
                PassInfo::new("CountCalls", 0, &[]),
                |module, ctx: &PassContext| {
                    ctx.log(&format!("CountCalls: {} calls", count_calls(&module)));
                    Ok(module)
                },
            );
            Ok(Arc::new(pass.with_description("CountCalls")))
        }),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let status = if args.get(1).map(String::as_str) == Some("lsp") {
        relay_server::lsp::Builder::new()
            .register_pass(count_calls_spec())
            .run_stdio()
    } else {
        relay_passes::transform::registry::register(count_calls_spec());
        relay_server::cli::run(args)
    };
    std::process::exit(status);
}
