//! The names of TVM v0.13's `relay.transform` module that are not
//! registered passes here, each with the reason: `relay passes` prints them
//! after the registered passes, so a pass developer looking for one finds
//! why it is missing. The list of TVM's names is the data file
//! `data/tvm_relay_transform_names.txt` (read from
//! `python/tvm/relay/transform/transform.py`); the test below keeps every
//! name either registered or listed here, and nothing listed here registered.

/// A name of TVM's `relay.transform` with no registered pass, and why.
#[derive(Debug, Clone, Copy)]
pub struct NotRegistered {
    pub name: &'static str,
    pub reason: &'static str,
}

/// Every name of TVM v0.13's `relay.transform` that is not a registered
/// pass, in the order of TVM's file.
pub const NOT_REGISTERED: &[NotRegistered] = &[
    NotRegistered {
        name: "build_config",
        reason: "not a pass: the deprecated constructor of a PassContext (here: `relay opt \
                 --opt-level/--required-pass/--disabled-pass`, `opt_level`/`required_pass` in relay.toml)",
    },
    NotRegistered {
        name: "FunctionPass",
        reason:
            "not a pass: the class of function passes (relay_tools.relay.transform.FunctionPass)",
    },
    NotRegistered {
        name: "InferTypeLocal",
        reason: "not a pass: types one expression, trusting the types its children already \
                 have (relay_infer::infer_type_local, TVM's SameTypedSubgraphExtractor)",
    },
    NotRegistered {
        name: "FoldConstantExpr",
        reason: "not a pass: FoldConstant on one expression (the FoldConstant pass does the same \
                 to every function)",
    },
    NotRegistered {
        name: "LayoutConfig",
        reason: "not a pass: a Python context object that makes ConvertLayout skip layers; \
                 not ported (ConvertLayout converts every layer)",
    },
    NotRegistered {
        name: "ToANormalFormExpr",
        reason: "not a pass: ToANormalForm on one expression (the ToANormalForm pass)",
    },
    NotRegistered {
        name: "gradient",
        reason: "not a pass: TVM's function differentiating one expression (higher-order \
                 reverse-mode AD, or first-order); the pass `Gradient(entry, mode)` applies it \
                 to a function of the module, and Python has relay.transform.gradient",
    },
    NotRegistered {
        name: "to_cps",
        reason: "not a pass: ToCPS of one function; the ToCPS pass applies it to every function",
    },
    NotRegistered {
        name: "un_cps",
        reason: "not a pass: UnCPS of one function; the UnCPS pass applies it to every function",
    },
    NotRegistered {
        name: "function_pass",
        reason: "not a pass: the decorator that makes a Python function a pass \
                 (relay_tools.relay.transform.function_pass; external passes in relay.toml)",
    },
    NotRegistered {
        name: "ChangeBatch",
        reason: "a Python pass keyed by relay.Var objects (the dimension to change per \
                 variable); not ported yet",
    },
    NotRegistered {
        name: "CapturePostDfsIndexInSpans",
        reason: "writes post-DFS and dominator indexes into TVM's named spans (`span=index:5:7`); \
                 spans here are source ranges for diagnostics and printed text shows none, so \
                 the pass would change nothing visible; the numbering itself is \
                 relay_transforms::indexed_graph::IndexedGraph (`span_text` gives TVM's text)",
    },
    NotRegistered {
        name: "CollagePartition",
        reason: "needs compiled candidate partitions measured on real targets by a cost \
                 estimator; out of scope",
    },
];

/// The entry for `name`, if TVM's `relay.transform` has it and it is not
/// registered here.
pub fn not_registered(name: &str) -> Option<&'static NotRegistered> {
    NOT_REGISTERED.iter().find(|entry| entry.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TVM_NAMES: &str = include_str!("../data/tvm_relay_transform_names.txt");

    fn tvm_names() -> Vec<&'static str> {
        TVM_NAMES
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    }

    #[test]
    fn registry_names_cover_tvm_relay_transform() {
        let registered: Vec<String> = crate::builtin_passes()
            .into_iter()
            .map(|spec| spec.name)
            .collect();
        let names = tvm_names();
        assert!(names.len() > 60, "the name list looks truncated");
        let unexplained: Vec<&str> = names
            .iter()
            .copied()
            .filter(|name| !registered.iter().any(|r| r == name) && not_registered(name).is_none())
            .collect();
        assert!(
            unexplained.is_empty(),
            "TVM's relay.transform names neither registered nor listed in NOT_REGISTERED: \
             {unexplained:?}"
        );
    }

    #[test]
    fn listed_names_are_tvm_names_and_not_registered() {
        let names = tvm_names();
        let registered: Vec<String> = crate::builtin_passes()
            .into_iter()
            .map(|spec| spec.name)
            .collect();
        for entry in NOT_REGISTERED {
            assert!(
                names.contains(&entry.name),
                "{} is not a name of TVM's relay.transform",
                entry.name
            );
            assert!(
                !registered.iter().any(|r| r == entry.name),
                "{} is registered: remove it from NOT_REGISTERED",
                entry.name
            );
        }
    }
}
