//! The cost of resolution: resolving a type the solver has resolved before
//! must not walk it again, or the n projections of an n-field tuple (what
//! CombineParallelDense's `split` leaves) make type inference quadratic.

use super::{Site, Solver};
use relay_ir::dtype::DataType;
use relay_ir::{Dim, Type};

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
