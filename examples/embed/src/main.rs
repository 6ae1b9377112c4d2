//! A downstream tool built on `relay-server`: it registers its own pass,
//! `CountCalls`, and then runs the `relay` command line (`relay-embed check`,
//! `opt`, `passes`, …) or the language server (`relay-embed lsp`), where the
//! pass shows up in `relay passes`, in pipelines and in `relay.listPasses`
//! (the editors' pass pickers); passes that change the code at the cursor
//! are also offered as code actions.

use relay_passes::ir::rewrite::post_order_each;
use relay_passes::ir::{ExprKind, IRModule};
use relay_passes::pass_manager::registry::register_module_pass;

/// The number of call nodes in a module (each shared node once), counted
/// with the library's own traversal (iterative, each node visited once).
fn count_calls(module: &IRModule) -> usize {
    let mut calls = 0;
    for (_, function) in module.functions() {
        post_order_each(function.expr(), |expr| {
            if matches!(expr.kind(), ExprKind::Call(_)) {
                calls += 1;
            }
        });
    }
    calls
}

/// Registers `CountCalls`: it logs how many calls the module has and leaves
/// it unchanged. One line makes it a pass of the CLI, of pipelines and of
/// the language server.
fn register_count_calls() {
    register_module_pass(
        "CountCalls",
        0,
        &[],
        "Log the number of calls in the module (an example of a downstream pass).",
        |module, ctx| {
            ctx.log(&format!("CountCalls: {} calls", count_calls(&module)));
            Ok(module)
        },
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    register_count_calls();
    let status = if args.get(1).map(String::as_str) == Some("lsp") {
        relay_server::lsp::Builder::new().run_stdio()
    } else {
        relay_server::cli::run(args)
    };
    std::process::exit(status);
}
