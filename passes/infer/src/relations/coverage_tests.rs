//! The coverage check of the operator table: every operator's type relation
//! (`rel:` in `ops.def`) is either implemented (declared in a family's
//! `relations!` block) or listed in [`AWAITING`], and both lists stay
//! honest (no stale marks, no relation registered under a name no operator
//! uses, no name registered twice).

use super::{implemented, FAMILIES};
use relay_ir::op;
use std::collections::{BTreeMap, BTreeSet};

/// The relations of TVM's operator table that we have not implemented yet
/// (issue 17), by registered name. An operator using one of them fails
/// InferType with "the type relation … is not implemented". Implementing
/// one means adding it to its family's `relations!` block and removing it
/// here (the test below fails until both are done).
const AWAITING: &[&str] = &[];

/// Every relation name used by the table, with the operators using it.
fn table_relations() -> BTreeMap<&'static str, Vec<&'static str>> {
    let mut used: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for op in op::all_ops() {
        if let Some(rel) = op.type_rel.as_deref() {
            used.entry(rel).or_default().push(op.name.as_str());
        }
    }
    used
}

#[test]
fn every_operator_has_a_relation_or_awaits_one() {
    let implemented: BTreeSet<&str> = implemented().collect();
    let awaiting: BTreeSet<&str> = AWAITING.iter().copied().collect();
    let missing: Vec<String> = table_relations()
        .into_iter()
        .filter(|(rel, _)| !implemented.contains(rel) && !awaiting.contains(rel))
        .map(|(rel, ops)| format!("{rel} (used by {})", ops.join(", ")))
        .collect();
    assert!(
        missing.is_empty(),
        "operators whose relation is neither implemented nor marked as awaiting \
         (declare it in its family's `relations!` block, or add it to AWAITING): {missing:?}"
    );
}

#[test]
fn awaiting_marks_are_not_stale() {
    let implemented: BTreeSet<&str> = implemented().collect();
    let used = table_relations();
    let implemented_yet_awaiting: Vec<&str> = AWAITING
        .iter()
        .copied()
        .filter(|rel| implemented.contains(rel))
        .collect();
    assert!(
        implemented_yet_awaiting.is_empty(),
        "implemented relations still marked as awaiting (remove them from AWAITING): \
         {implemented_yet_awaiting:?}"
    );
    let unused: Vec<&str> = AWAITING
        .iter()
        .copied()
        .filter(|rel| !used.contains_key(rel))
        .collect();
    assert!(
        unused.is_empty(),
        "AWAITING names relations no operator uses: {unused:?}"
    );
    let mut sorted = AWAITING.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), AWAITING.len(), "AWAITING repeats a name");
}

#[test]
fn every_registered_name_is_used_once() {
    let used = table_relations();
    let unknown: Vec<&str> = implemented()
        .filter(|rel| !used.contains_key(rel))
        .collect();
    assert!(
        unknown.is_empty(),
        "relations registered under a name no operator's `rel:` uses: {unknown:?}"
    );
    let mut seen = BTreeSet::new();
    let repeated: Vec<&str> = FAMILIES
        .iter()
        .flat_map(|family| family.iter())
        .map(|(rel, _)| *rel)
        .filter(|rel| !seen.insert(*rel))
        .collect();
    assert!(
        repeated.is_empty(),
        "relation names registered twice: {repeated:?}"
    );
}
