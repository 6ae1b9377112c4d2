//! Unit tests of the partial evaluator's store (the whole pass is tested
//! through `passes/test_data/passes/PartialEvaluate`).

use super::*;

#[test]
fn a_store_frame_rolls_back_writes_made_inside_it() {
    let mut pe = PartialEvaluator::new(IRModule::new());
    let one = pe.no_static(Expr::global("one", None));
    let two = pe.no_static(Expr::global("two", None));
    pe.store.insert(0, one.clone());
    pe.with_store_frame(|pe| {
        pe.store.insert(0, two.clone());
        assert!(Rc::ptr_eq(&pe.store.lookup(0).unwrap(), &two));
    });
    assert!(Rc::ptr_eq(&pe.store.lookup(0).unwrap(), &one));
}

#[test]
fn an_unknown_effect_hides_older_values() {
    let mut pe = PartialEvaluator::new(IRModule::new());
    let one = pe.no_static(Expr::global("one", None));
    pe.store.insert(0, one);
    pe.with_store_frame(|pe| {
        pe.store.invalidate();
        assert!(pe.store.lookup(0).is_none());
    });
    assert!(pe.store.lookup(0).is_some());
}
