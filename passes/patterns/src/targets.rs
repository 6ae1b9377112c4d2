//! Which operators an external compiler (a BYOC target) supports: TVM's
//! operator attribute `target.<compiler>`, the predicate a codegen
//! registers per operator with `tvm.ir.register_op_attr(op,
//! "target.<compiler>")` and that `AnnotateTarget` consults for every
//! operator call.
//!
//! A target is registered by name with the operators it supports, each with
//! its [`OpSupport`]: always, when the call matches a check pattern (the
//! syntax of `docs/patterns.md`; `relay.toml`'s `[targets.<name>]`), or
//! when a predicate says so (a Python function of the Python frontend).
//! A target nobody registered supports no operator, as in TVM.

use crate::matcher::matches;
use crate::pattern::Pattern;
use crate::text::{parse_pattern, NamedPatterns, PatternError};
use relay_ir::Expr;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

/// A predicate of an operator call; `Err` is a message (the predicate
/// failed, which fails the pass that asked).
pub type OpPredicate = Arc<dyn Fn(&Expr) -> Result<bool, String> + Send + Sync>;

/// When a target supports an operator.
#[derive(Clone)]
pub enum OpSupport {
    /// Every call of the operator (TVM's `lambda expr: True`), or none.
    Constant(bool),
    /// The calls that match the pattern.
    Check(Pattern),
    /// The calls the predicate accepts.
    Predicate(OpPredicate),
}

impl fmt::Debug for OpSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpSupport::Constant(value) => write!(f, "Constant({value})"),
            OpSupport::Check(pattern) => write!(f, "Check({pattern})"),
            OpSupport::Predicate(_) => f.write_str("Predicate(..)"),
        }
    }
}

impl OpSupport {
    /// Reads a declaration: supported always (no check), or when the call
    /// matches the check pattern (which may use the project's `@names`).
    pub fn parse(check: Option<&str>, named: NamedPatterns<'_>) -> Result<OpSupport, PatternError> {
        match check {
            None => Ok(OpSupport::Constant(true)),
            Some(text) => Ok(OpSupport::Check(parse_pattern(text, named)?.pattern)),
        }
    }

    /// Whether `call` (a call of the operator, typed) is supported.
    pub fn accepts(&self, call: &Expr) -> Result<bool, String> {
        match self {
            OpSupport::Constant(value) => Ok(*value),
            OpSupport::Check(pattern) => Ok(matches(pattern, call)),
            OpSupport::Predicate(predicate) => predicate(call),
        }
    }
}

/// The operators of one target, by operator name.
pub type TargetOps = BTreeMap<String, OpSupport>;

fn registry() -> &'static RwLock<BTreeMap<String, TargetOps>> {
    static TARGETS: OnceLock<RwLock<BTreeMap<String, TargetOps>>> = OnceLock::new();
    TARGETS.get_or_init(Default::default)
}

/// Registers (or replaces) the whole operator table of `target`.
pub fn register_target(target: &str, ops: TargetOps) {
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(target.to_string(), ops);
}

/// Registers (or replaces) one operator of `target`, keeping the others
/// (TVM's `register_op_attr(op, "target.<target>")`).
pub fn register_op_support(target: &str, op: &str, support: OpSupport) {
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .entry(target.to_string())
        .or_default()
        .insert(op.to_string(), support);
}

/// Forgets `target` (a project reloaded without it, a test case done).
pub fn unregister_target(target: &str) {
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(target);
}

/// The names of the registered targets.
pub fn target_names() -> Vec<String> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .cloned()
        .collect()
}

/// The support `target` declares for operator `op`, if any.
pub fn op_support(target: &str, op: &str) -> Option<OpSupport> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(target)?
        .get(op)
        .cloned()
}

/// Whether `target` supports `call`, a call of the operator `op`: false when
/// the target or the operator is not registered. The registry is not
/// locked while a check or predicate runs (a Python predicate may register).
pub fn supports(target: &str, op: &str, call: &Expr) -> Result<bool, String> {
    match op_support(target, op) {
        Some(support) => support.accepts(call),
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::no_named_patterns;
    use relay_lower::parse_and_lower;

    fn body(text: &str) -> Expr {
        let (module, diagnostics) = parse_and_lower("t.relay", text);
        assert!(!diagnostics.has_errors());
        let (module, _) = relay_infer::infer_module(&module);
        let (_, main) = module.functions().next().expect("a function");
        main.body().clone()
    }

    #[test]
    fn a_check_pattern_decides_per_call() {
        let check = OpSupport::parse(
            Some("nn.max_pool2d(*) {ceil_mode=False}"),
            &no_named_patterns,
        );
        register_target("targets_test_a", TargetOps::new());
        register_op_support("targets_test_a", "nn.max_pool2d", check.unwrap());
        let floor = body(
            "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 1, 4, 4), float32]) { nn.max_pool2d(%x, pool_size=[2, 2]) }",
        );
        let ceil = body(
            "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 1, 4, 4), float32]) { nn.max_pool2d(%x, pool_size=[2, 2], ceil_mode=True) }",
        );
        assert_eq!(
            supports("targets_test_a", "nn.max_pool2d", &floor),
            Ok(true)
        );
        assert_eq!(
            supports("targets_test_a", "nn.max_pool2d", &ceil),
            Ok(false)
        );
        assert_eq!(supports("targets_test_a", "nn.relu", &floor), Ok(false));
        assert_eq!(
            supports("targets_test_unknown", "nn.max_pool2d", &floor),
            Ok(false)
        );
        unregister_target("targets_test_a");
        assert_eq!(
            supports("targets_test_a", "nn.max_pool2d", &floor),
            Ok(false)
        );
    }

    #[test]
    fn a_failing_predicate_is_an_error() {
        let predicate: OpPredicate = Arc::new(|_| Err("no".to_string()));
        register_op_support("targets_test_b", "add", OpSupport::Predicate(predicate));
        let call =
            body("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) { add(%x, %x) }");
        assert_eq!(
            supports("targets_test_b", "add", &call),
            Err("no".to_string())
        );
        unregister_target("targets_test_b");
    }
}
