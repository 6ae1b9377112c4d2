//! `FuseOps(fuse_opt_level=-1)`: groups operator calls into primitive
//! functions, as TVM v0.13's `fuse_ops.cc` does.
//!
//! Four steps, one module each:
//!
//! 1. `graph`: number the function's dataflow nodes in post-order and
//!    record, for each, its consumers and the fusion pattern of each use;
//! 2. `dominator`: build the post-dominator tree of that graph;
//! 3. `partition`: merge nodes into groups, each node only into the group
//!    of its post-dominator and only when the patterns on the way allow it
//!    (nothing is merged at fuse level 0);
//! 4. `rewrite`: rebuild the function, turning every group of operator
//!    calls into a `Primitive=1` function called on the group's inputs.
//!
//! `fuse_opt_level=-1` means the PassContext's opt_level. The PassContext
//! keys `relay.FuseOps.max_depth` (largest group, default 256) and
//! `relay.FuseOps.link_params` (keep constant inputs inline) are honoured.
//! Anything TVM would reject (a projection of a non-tuple, an operator
//! applied to a function) is reported as an error instead of guessed at.

mod dominator;
mod graph;
mod partition;
mod rewrite;

use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Function, IRModule};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;

/// TVM's default largest number of nodes in one fused group.
const DEFAULT_MAX_DEPTH: i64 = 256;

/// The registry entry.
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("FuseOps", 0)
        .required(&["InferType"])
        .param(
            ParamSpec::int(
                "fuse_opt_level",
                -1,
                "fusion level (0: every operator alone, 1: no injective fusion into \
                 tuples, 2+: full); -1 uses the PassContext opt_level",
            )
            .with_range(-1, relay_pass_manager::MAX_OPT_LEVEL as i64),
        )
        .doc("Fuse operator calls into primitive functions along the post-dominator tree")
        .build(|args| {
            let fuse_opt_level = args.int("fuse_opt_level");
            Ok(
                move |function: Function, _module: &IRModule, ctx: &PassContext| {
                    let opt_level = if fuse_opt_level == -1 {
                        i64::from(ctx.opt_level)
                    } else {
                        fuse_opt_level
                    };
                    let max_depth = ctx.config_int("relay.FuseOps.max_depth", DEFAULT_MAX_DEPTH);
                    let link_params = ctx.config_bool("relay.FuseOps.link_params", false);
                    // TVM reads the depth into an unsigned size: a negative
                    // value means no limit.
                    let max_depth = u64::try_from(max_depth).unwrap_or(u64::MAX);
                    fuse_ops(&function, opt_level, max_depth, link_params)
                        .map_err(Diagnostic::pass_failed)
                },
            )
        })
}

/// Fuses the operator calls of `function` at `opt_level` with groups of at
/// most `max_depth` nodes.
pub fn fuse_ops(
    function: &Function,
    opt_level: i64,
    max_depth: u64,
    link_params: bool,
) -> Result<Function, String> {
    let root = function.expr();
    let graph = graph::build_graph(root)?;
    let tree = if opt_level == 0 {
        None
    } else {
        Some(dominator::post_dominator_tree(&graph)?)
    };
    let groups = partition::partition(&graph, tree.as_deref(), opt_level, max_depth)?;
    let rewritten = rewrite::FuseRewriter::new(&graph, &groups, link_params).run(root)?;
    rewritten
        .as_function()
        .ok_or_else(|| "FuseOps: the function was rewritten to a non-function".to_string())
}
