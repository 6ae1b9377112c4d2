//! Unit tests of the partial evaluator's store (the whole pass is tested
//! through `passes/test_data/passes/PartialEvaluate`).

use super::*;
use relay_ir::FunctionData;

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

/// `main(%x) = negative(negative(… %x …))`, `depth` calls nested in one
/// another (graph form without sharing).
fn nested_negatives(depth: usize) -> IRModule {
    let x = Var::new("x", None, None);
    let negative = relay_ir::op::lookup("negative").expect("negative is an operator");
    let mut body = x.expr().clone();
    for _ in 0..depth {
        body = Expr::call(Expr::op(negative, None), vec![body], None, None);
    }
    let function = Function::new(
        FunctionData {
            params: vec![x],
            body,
            ret_type: None,
            type_params: Vec::new(),
            attrs: Default::default(),
            virtual_device: None,
        },
        None,
    );
    let mut module = IRModule::new();
    module.add_function("main", function);
    module
}

#[test]
fn deeply_nested_calls_are_evaluated_without_overflowing_the_stack() {
    let depth = 20_000;
    let module = partial_evaluate(nested_negatives(depth)).expect("evaluates");
    let main = module.function("main").expect("main is kept");
    let mut lets = 0;
    let mut current = main.body().clone();
    while let ExprKind::Let { body, .. } = current.kind() {
        lets += 1;
        current = body.clone();
    }
    assert_eq!(lets, depth);
}
