//! Passes made of rewrite rules (`PATTERN => REPLACEMENT`, see
//! `relay_patterns::rule`): what a project declares in `relay.toml`'s
//! `[rewrite.<Name>]` tables, registered like any other function pass.
//! Each function is rewritten with TVM's `rewrite` (all rules in order,
//! repeated until nothing changes).

use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Function, IRModule};
use relay_pass_manager::{PassContext, PassSpec};
use relay_patterns::rewrite::{rewrite, Callback};
use relay_patterns::rule::RewriteRule;
use std::sync::Arc;

/// How a rule pass runs its rules.
#[derive(Debug, Clone, Default)]
pub struct RuleOptions {
    /// Infer types before each rule (type patterns then see checked types).
    pub require_type: bool,
    /// Apply each rule until it has changed the function once.
    pub rewrite_once: bool,
}

/// A registry entry for a function pass that applies `rules`.
pub fn rule_pass_spec(
    name: &str,
    opt_level: u32,
    required: &[&str],
    description: &str,
    rules: Vec<RewriteRule>,
    options: RuleOptions,
) -> PassSpec {
    let rules = Arc::new(rules);
    let pass_name = name.to_string();
    PassSpec::function(name, opt_level)
        .required(required)
        .doc(description)
        .transform(move |f: Function, m: &IRModule, _ctx: &PassContext| {
            let callbacks: Vec<Callback> = rules
                .iter()
                .map(|r| {
                    r.clone()
                        .into_callback()
                        .require_type(options.require_type)
                        .rewrite_once(options.rewrite_once)
                })
                .collect();
            let out = rewrite(&callbacks, f.expr(), Some(m))
                .map_err(|e| Diagnostic::pass_failed(format!("{pass_name}: {e}")))?;
            out.as_function().ok_or_else(|| {
                Diagnostic::pass_failed(format!(
                    "{pass_name}: a rule replaced the function by something else"
                ))
            })
        })
}
