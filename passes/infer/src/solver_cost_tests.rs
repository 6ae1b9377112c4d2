//! The cost of resolution: resolving a type the solver has resolved before
//! must not walk it again, or the n projections of an n-field tuple (what
//! CombineParallelDense's `split` leaves) make type inference quadratic.
//! The cost of merges: merging a type node that n relations mention into
//! an equal type must not walk the n relations each time.

use super::{NewRelation, RelFunc, Site, Solver};
use relay_ir::dtype::DataType;
use relay_ir::{Dim, Expr, Type};

/// An unknown type solved to a tuple of `n` tensors, then resolved `n`
/// times (once per projection): the visits must grow linearly with `n`.
fn steps_to_resolve_projections(n: usize) -> u64 {
    let mut solver = Solver::new();
    let fields: Vec<Type> = (0..n)
        .map(|_| Type::tensor(vec![Dim::int32(4), Dim::int32(8)], DataType::FLOAT32))
        .collect();
    let tuple = Type::tuple(fields);
    let unknown = Type::incomplete();
    solver
        .unify(&unknown, &tuple, &Site::at(None), true, true)
        .expect("no occurs failure");
    for _ in 0..n {
        let resolved = solver.resolve(&unknown);
        assert!(resolved.ptr_eq(&tuple), "resolution keeps the solved tuple");
    }
    solver.resolve_steps
}

#[test]
fn resolving_a_solved_tuple_again_does_not_walk_its_fields() {
    let n = 1000;
    let steps = steps_to_resolve_projections(n);
    // Once over the fields, then a constant number of visits per
    // projection; walking the fields every time would be n * n.
    assert!(
        steps <= 4 * n as u64,
        "{steps} resolution steps for {n} projections of a {n}-field tuple"
    );
}

#[test]
fn a_tuple_holding_an_unknown_type_is_resolved_anew_once_it_is_solved() {
    let mut solver = Solver::new();
    let tensor = Type::tensor(vec![Dim::int32(2)], DataType::FLOAT32);
    let hole = Type::incomplete();
    let tuple = Type::tuple(vec![tensor.clone(), hole.clone()]);
    assert!(solver.resolve(&tuple).ptr_eq(&tuple), "nothing solved yet");
    solver
        .unify(&hole, &tensor, &Site::at(None), true, true)
        .expect("no occurs failure");
    let resolved = solver.resolve(&tuple);
    assert_eq!(
        resolved,
        Type::tuple(vec![tensor.clone(), tensor]),
        "the solved field shows"
    );
}

/// A tensor type (a shared weight) mentioned by `n` relations still
/// queued, then unified `n` times with an equal tensor type of its own (what
/// each convolution's relation concludes for its weight): the relation
/// links the merges visit.
fn link_steps_to_merge_a_shared_type(n: usize) -> u64 {
    let mut solver = Solver::new();
    let tensor = || Type::tensor(vec![Dim::int32(4), Dim::int32(8)], DataType::FLOAT32);
    let weight = tensor();
    for _ in 0..n {
        // `.0` of a tensor cannot conclude, so the relation is linked to
        // the weight's node rather than run ahead.
        solver.add_relation(NewRelation {
            func: RelFunc::TupleGetItem(0),
            args: vec![weight.clone(), Type::incomplete()],
            num_inputs: 1,
            attrs: None,
            span: None,
            site: Expr::tuple(Vec::new(), None),
        });
    }
    for _ in 0..n {
        let concluded = tensor();
        let unified = solver
            .unify(&weight, &concluded, &Site::at(None), true, true)
            .expect("no occurs failure");
        assert_eq!(unified, weight, "equal tensor types unify to themselves");
    }
    assert!(solver.diagnostics.is_empty(), "nothing to report");
    solver.link_steps
}

#[test]
fn merging_a_type_many_relations_mention_does_not_walk_them_each_time() {
    let n = 1000;
    let steps = link_steps_to_merge_a_shared_type(n);
    // Moving the node's relations along with it is constant work per
    // merge; walking them every time would be n * n.
    assert!(
        steps <= 4 * n as u64,
        "{steps} relation links visited for {n} merges of a type {n} relations mention"
    );
}
