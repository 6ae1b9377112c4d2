//! Stopping a run from outside: a deadline in the past, or a cancel flag
//! set, ends a long run with a `stopped` error at an expression of the
//! program, and a run without them finishes.

use relay_interp::{run, Limits, Value};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A countdown from `n` by recursion: about ten evaluations per step.
const COUNTDOWN: &str = r#"#[version = "0.0.5"]
def @count(%n: int32) -> int32 {
  if (less(%n, 1)) {
    %n
  } else {
    @count(subtract(%n, 1))
  }
}
def @main() -> int32 {
  @count(5000)
}
"#;

fn module() -> relay_ir::IRModule {
    let (module, diagnostics) = relay_lower::parse_and_lower("count.relay", COUNTDOWN);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    let (module, diagnostics) = relay_infer::infer_module(&module);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    module
}

#[test]
fn runs_to_the_end_without_a_stop() {
    let limits = Limits {
        deadline: Some(Instant::now() + Duration::from_secs(600)),
        cancel: Some(Arc::new(AtomicBool::new(false))),
        ..Limits::default()
    };
    let value = run(&module(), "main", Vec::new(), limits).expect("runs");
    let Value::Tensor(t) = value else {
        panic!("a tensor")
    };
    assert_eq!(t.to_i64_vec().unwrap(), vec![0]);
}

#[test]
fn a_past_deadline_stops_the_run() {
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let error = run(&module(), "main", Vec::new(), limits).unwrap_err();
    assert!(error.stopped, "{error}");
    assert!(error.message.contains("time limit"), "{error}");
    assert!(error.span.is_some(), "at an expression of the program");
}

#[test]
fn a_set_cancel_flag_stops_the_run() {
    let limits = Limits {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..Limits::default()
    };
    let error = run(&module(), "main", Vec::new(), limits).unwrap_err();
    assert!(error.stopped, "{error}");
    assert!(error.message.contains("cancelled"), "{error}");
}
