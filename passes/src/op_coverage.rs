//! What this library implements for each operator of the table: its type
//! relation (relay-infer), its constant-evaluation kernel (relay-eval) and
//! its layout rules (relay-transforms). Every answer is a lookup in the
//! table the passes themselves use, so the report cannot drift from them.
//! `relay ops` prints it.

use crate::op::OpDef;

/// The coverage of one operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpCoverage {
    /// The name of the type relation TVM registers, `None` when it
    /// registers none.
    pub relation: Option<&'static str>,
    /// Whether relay-infer implements that relation.
    pub relation_implemented: bool,
    /// Whether relay-eval has a kernel for it (FoldConstant can fold it).
    pub evaluator: bool,
    /// Why TVM's FoldConstant never folds it (so it needs no kernel), or
    /// `None` when TVM may fold it.
    pub never_folded: Option<&'static str>,
    /// Whether it has a layout inference (`FInferCorrectLayout`), used by
    /// ConvertLayout and AlterOpLayout.
    pub layout_inference: bool,
    /// Whether ConvertLayout can convert it to desired layouts
    /// (`FTVMConvertOpLayout`).
    pub layout_conversion: bool,
    /// Whether AlterOpLayout has an x86 rule for it (`FTVMAlterOpLayout`).
    pub alter_layout: bool,
}

impl std::fmt::Display for OpCoverage {
    /// One line, as `relay ops` and the editor's hover show it:
    /// `relation Conv2D (implemented); kernel no; layout inference yes, …`
    /// (`kernel no (never folded by TVM: <reason>)` when TVM never folds it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        match self.relation {
            Some(name) if self.relation_implemented => write!(f, "relation {name} (implemented)")?,
            Some(name) => write!(f, "relation {name} (missing)")?,
            None => f.write_str("relation none registered")?,
        }
        let kernel = match self.never_folded {
            Some(reason) if !self.evaluator => format!("no (never folded by TVM: {reason})"),
            _ => yes_no(self.evaluator).to_string(),
        };
        write!(
            f,
            "; kernel {kernel}; layout inference {}, conversion {}, x86 alter {}",
            yes_no(self.layout_inference),
            yes_no(self.layout_conversion),
            yes_no(self.alter_layout),
        )
    }
}

/// The coverage of operator `op`.
pub fn coverage(op: &'static OpDef) -> OpCoverage {
    let relation = op.type_rel.as_deref();
    let name = op.name.as_str();
    OpCoverage {
        relation,
        // A declared operator's rule (relay.toml) is applied by inference
        // itself.
        relation_implemented: relation.is_some_and(|r| {
            r == crate::op::custom::DECLARED_RELATION
                || crate::infer::relations::by_name(r).is_some()
        }),
        evaluator: crate::eval::kernel(name).is_some(),
        never_folded: crate::eval::never_folded(name),
        layout_inference: crate::transforms::convert_layout::has_layout_inference(name),
        layout_conversion: crate::transforms::convert_layout::has_layout_conversion(name),
        alter_layout: crate::transforms::alter_op_layout::has_alter_rule(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(name: &str) -> OpCoverage {
        coverage(crate::op::lookup(name).expect("the operator is in the table"))
    }

    #[test]
    fn answers_come_from_the_layers_tables() {
        let conv = of("nn.conv2d");
        assert_eq!(conv.relation, Some("Conv2D"));
        assert!(conv.relation_implemented && conv.layout_inference);
        assert!(conv.layout_conversion && conv.alter_layout);
        let add = of("add");
        assert!(add.evaluator && add.layout_inference && !add.layout_conversion);
    }

    #[test]
    fn the_line_names_the_relation_and_each_part() {
        let conv = OpCoverage {
            relation: Some("Conv2D"),
            relation_implemented: true,
            evaluator: false,
            never_folded: None,
            layout_inference: true,
            layout_conversion: true,
            alter_layout: true,
        };
        assert_eq!(
            conv.to_string(),
            "relation Conv2D (implemented); kernel no; layout inference yes, conversion yes, x86 alter yes"
        );
        let none = OpCoverage {
            relation: None,
            relation_implemented: false,
            evaluator: false,
            never_folded: None,
            layout_inference: false,
            layout_conversion: false,
            alter_layout: false,
        };
        assert!(none
            .to_string()
            .starts_with("relation none registered; kernel no"));
        let missing = OpCoverage {
            relation: Some("X"),
            ..none
        };
        assert!(missing.to_string().starts_with("relation X (missing);"));
        let skipped = OpCoverage {
            never_folded: Some("stateful"),
            ..none
        };
        assert!(skipped
            .to_string()
            .contains("; kernel no (never folded by TVM: stateful);"));
    }

    #[test]
    fn never_folded_operators_carry_the_reason() {
        let dropout = of("nn.dropout");
        assert!(!dropout.evaluator);
        assert!(dropout.never_folded.is_some_and(|r| r.contains("stateful")));
        assert_eq!(of("nn.dense").never_folded, None);
        assert!(of("nn.dense").evaluator);
    }

    #[test]
    fn counts_agree_with_the_evaluators_own_list() {
        let with_kernel = crate::op::all_ops()
            .iter()
            .filter(|op| coverage(op).evaluator)
            .count();
        assert_eq!(with_kernel, crate::eval::operators_with_kernels().len());
    }
}
