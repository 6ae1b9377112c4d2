//! A finished run holds none of its values: a closure made in an
//! activation is bound in (or remembered by) the frame it captures, and
//! that cycle must not keep the activation's values alive once nothing
//! can call the closure any more — the semantic check runs a fused model
//! many times in one process. A closure that does escape (returned, or put
//! into a reference) keeps what it captured.

use relay_interp::{run, Limits, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use std::sync::Arc;

fn module(text: &str) -> relay_ir::IRModule {
    let (module, diagnostics) = relay_lower::parse_and_lower("frames.relay", text);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    let (module, diagnostics) = relay_infer::infer_module(&module);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    module
}

/// An argument whose only owner, after the run, should be the test.
fn argument() -> (Arc<TensorData>, Value) {
    let data = Arc::new(TensorData::from_f64s(DataType::FLOAT32, vec![2], &[1.0, 2.0]).unwrap());
    (data.clone(), Value::Tensor(data))
}

fn owners_after_run(text: &str) -> usize {
    let module = module(text);
    let (data, arg) = argument();
    let result = run(&module, "main", vec![arg], Limits::default()).unwrap();
    drop(result);
    Arc::strong_count(&data)
}

#[test]
fn a_let_bound_function_does_not_keep_its_frame() {
    // `%f` is bound in the frame it captures.
    let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32]) {
  let %f = fn (%y: Tensor[(2), float32]) { add(%y, %x) };
  %f(%x)
}
"#;
    assert_eq!(owners_after_run(text), 1);
}

#[test]
fn a_function_node_remembered_by_its_frame_does_not_keep_it() {
    // Graph form, as fused modules print: the `fn` node's closure is
    // remembered by the frame it captures.
    let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%p: Tensor[(2), float32], Primitive=1) { multiply(%p, %p) };
  %1 = %0(%x);
  %0(%1)
}
"#;
    assert_eq!(owners_after_run(text), 1);
}

#[test]
fn a_returned_closure_keeps_what_it_captured() {
    let text = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32]) {
  fn (%y: Tensor[(2), float32]) { add(%y, %x) }
}
"#;
    let module = module(text);
    let (data, arg) = argument();
    let closure = run(&module, "main", vec![arg], Limits::default()).unwrap();
    assert!(Arc::strong_count(&data) > 1);
    drop(closure);
}
