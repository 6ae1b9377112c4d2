//! `AlterOpLayout()`, as TVM v0.13 defines it
//! (`src/relay/transforms/alter_op_layout.cc`).
//!
//! The pass runs ConvertLayout's driver (TVM's `LayoutRewriter` over
//! `ForwardRewrite`) with a different rebuild step: each operator's
//! target-specific `FTVMAlterOpLayout` rule may replace the call (an
//! `nn.dense` by an `nn.contrib_dense_pack` on a packed weight, an NCHW
//! `nn.conv2d` by an `nn.contrib_conv2d_NCHWc`), and the driver then
//! inserts the `layout_transform`s the new call's layouts ask for.
//!
//! The rules dispatch on the `--target` scope. Only the `cpu` rules of a
//! plain `llvm` target are built in (`x86`); with no target TVM's generic
//! rules return None, so the rewrite runs but alters nothing. A function
//! pass at opt_level 3 that requires `InferType`.

mod x86;

use super::convert_layout::rewrite::{CallInfo, CallWithNewLayouts, LayoutRewriter, NewCall};
use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::Function;
use relay_pass_manager::registry::PassSpec;
use std::cell::RefCell;

/// Whether operator `op` has an x86 (`llvm`) alteration rule (TVM's
/// `FTVMAlterOpLayout` for the `cpu` strategy).
pub fn has_alter_rule(op: &str) -> bool {
    x86::rule(op).is_some()
}

/// The registry entry: `AlterOpLayout()`.
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("AlterOpLayout", 3)
        .required(&["InferType"])
        .doc(
            "Replace operators by the target's preferred implementations in \
             packed layouts (dense_pack, conv2d_NCHWc on llvm), inserting \
             layout_transform where needed",
        )
        .transform(|function, _module, ctx| {
            let rules = Rules::from_target(ctx.target.as_deref());
            let result = alter_op_layout(&function, &rules);
            for warning in rules.warnings.take() {
                ctx.report(Diagnostic::warning(Code::PassWarning, warning));
            }
            result.map_err(Diagnostic::pass_failed)
        })
}

/// The rules the target selects, and what they declined.
pub struct Rules {
    /// `Some(lanes)` for the x86 rules (`get_simd_32bit_lanes`); `None`
    /// for the generic ones, which alter nothing.
    x86_lanes: Option<i64>,
    /// Why calls TVM would alter were left as they are (or the whole
    /// run, for a target this port does not model).
    warnings: RefCell<Vec<String>>,
}

impl Rules {
    /// The rules of a `--target` string: `llvm` without `-mcpu` gets the
    /// x86 rules at 4 lanes; another llvm target is declined (its SIMD
    /// width and int8 support change the rules); anything else is generic.
    pub fn from_target(target: Option<&str>) -> Rules {
        let mut words = target.unwrap_or("").split_whitespace();
        let kind = words.next();
        let has_mcpu = words.any(|w| w.starts_with("-mcpu"));
        let (x86_lanes, declined_target) = match (kind, has_mcpu) {
            (Some("llvm"), false) => (Some(4), None),
            (Some("llvm"), true) => (
                None,
                Some(format!(
                    "AlterOpLayout: the x86 rules are only built in for a plain `llvm` \
                     target, not `{}`; no operator was altered",
                    target.unwrap_or("")
                )),
            ),
            _ => (None, None),
        };
        Rules {
            x86_lanes,
            warnings: RefCell::new(declined_target.into_iter().collect()),
        }
    }
}

impl CallWithNewLayouts for Rules {
    /// `AlterTransformMemorizerNode::CallWithNewLayouts`: the rule's call
    /// when it returns one, else the call as it is.
    fn call_with_new_layouts(&self, call: &CallInfo) -> Result<Option<NewCall>, String> {
        let Some(lanes) = self.x86_lanes else {
            return Ok(None);
        };
        match x86::alter(call, lanes) {
            Ok(altered) => Ok(altered),
            Err(why) => {
                self.warnings.borrow_mut().push(format!(
                    "AlterOpLayout: a `{}` call was left unaltered: {why}",
                    call.op
                ));
                Ok(None)
            }
        }
    }
}

/// Alters the operators of `function` with `rules`.
pub fn alter_op_layout(function: &Function, rules: &Rules) -> Result<Function, String> {
    let mut rewriter = LayoutRewriter::new(rules);
    let result = rewriter.run(function.expr())?;
    result
        .as_function()
        .ok_or_else(|| "AlterOpLayout: the function was rewritten to a non-function".to_string())
}

#[cfg(test)]
mod tests {
    use super::Rules;
    use relay_pass_manager::pipeline_from_text;

    #[test]
    fn registered_like_tvm() {
        crate::register_builtin_passes();
        let pass = pipeline_from_text("AlterOpLayout").expect("the pipeline builds");
        assert_eq!(pass.info().name, "AlterOpLayout");
        assert_eq!(pass.info().opt_level, 3);
        assert_eq!(pass.info().required, ["InferType"]);
    }

    #[test]
    fn targets_select_rules() {
        assert_eq!(Rules::from_target(Some("llvm")).x86_lanes, Some(4));
        assert_eq!(Rules::from_target(None).x86_lanes, None);
        let mcpu = Rules::from_target(Some("llvm -mcpu=skylake-avx512"));
        assert_eq!(mcpu.x86_lanes, None);
        assert_eq!(mcpu.warnings.take().len(), 1);
    }
}
