//! Helpers shared by the crate's unit tests.

use relay_ir::IRModule;

/// `text` parsed and lowered; the test fails on any error.
pub fn module(text: &str) -> IRModule {
    let (module, errors) = relay_lower::parse_and_lower("t.relay", text);
    assert!(errors.is_empty(), "{errors:?}");
    module
}
