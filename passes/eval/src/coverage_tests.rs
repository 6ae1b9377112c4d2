//! Kernel coverage: every operator of the table has a kernel, or is one TVM
//! never folds ([`NEVER_FOLDED`], with the reason), or is listed in
//! [`AWAITING`] — the kernels still to write. A new operator, or a kernel
//! added without updating the lists, fails here with the names.

use super::{kernel, never_folded, NEVER_FOLDED};
use relay_ir::op::all_ops;

/// Operators TVM can fold (they have a compute, or a QNN canonicalisation
/// FoldConstant uses with `fold_qnn=true`) that have no kernel yet.
const AWAITING: &[&str] = &[];

#[test]
fn every_operator_has_a_kernel_or_a_reason() {
    let missing: Vec<&str> = all_ops()
        .iter()
        .map(|op| op.name.as_str())
        .filter(|name| {
            kernel(name).is_none() && never_folded(name).is_none() && !AWAITING.contains(name)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "operators TVM can fold without an evaluator kernel (write one, or list it in \
         NEVER_FOLDED with TVM's reason): {missing:?}"
    );
}

#[test]
fn the_lists_name_operators_without_kernels() {
    for name in AWAITING.iter().chain(NEVER_FOLDED.iter().map(|(n, _)| n)) {
        assert!(
            relay_ir::op::lookup(name).is_some(),
            "{name} is not an operator"
        );
        assert!(
            kernel(name).is_none(),
            "{name} has a kernel now: take it off the list"
        );
    }
    for name in AWAITING {
        assert!(never_folded(name).is_none(), "{name} is in both lists");
    }
    for (name, reason) in NEVER_FOLDED {
        assert!(!reason.is_empty(), "{name} needs a reason");
    }
}

/// FoldConstant skips stateful operators and non-computational ones (QNN
/// operators aside, folded through their canonicalisation with
/// `fold_qnn=true`): the table's flags and the list agree.
#[test]
fn stateful_and_non_computational_operators_are_never_folded() {
    for op in all_ops() {
        let name = op.name.as_str();
        if op.stateful || (op.non_computational && !name.starts_with("qnn.")) {
            assert!(
                never_folded(name).is_some(),
                "{name} is stateful or non-computational: TVM never folds it"
            );
        }
    }
}
