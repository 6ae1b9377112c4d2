//! Pass instruments: TVM's five hooks around pass contexts and pass runs.
//!
//! An instrument may leave any hook out (a missing `should_run` counts as
//! true). Besides TVM's five there is `pass_skipped`, so that instruments
//! can count what did not run. Hooks may fail; the failure ordering is TVM's (see
//! `PassContext::enter` and `pass::run`).

use crate::PassInfo;
use relay_ir::IRModule;

/// A failure inside an instrument hook.
pub type HookResult<T = ()> = Result<T, String>;

/// An observer of pass runs (TVM's `PassInstrument`).
pub trait PassInstrument: Send + Sync {
    /// The instrument's name (TVM uses the class name).
    fn name(&self) -> &str;

    /// Called once when a context with this instrument is entered.
    fn enter_pass_ctx(&self) -> HookResult {
        Ok(())
    }

    /// Called once when the context is left.
    fn exit_pass_ctx(&self) -> HookResult {
        Ok(())
    }

    /// Whether the pass should run; every instrument is asked (no short
    /// circuit) and the answers are ANDed. Not asked for required passes.
    fn should_run(&self, _module: &IRModule, _info: &PassInfo) -> HookResult<bool> {
        Ok(true)
    }

    /// Called before a pass that will run.
    fn run_before_pass(&self, _module: &IRModule, _info: &PassInfo) -> HookResult {
        Ok(())
    }

    /// Called after a pass ran, with its result.
    fn run_after_pass(&self, _module: &IRModule, _info: &PassInfo) -> HookResult {
        Ok(())
    }

    /// Called when a pass was not run: a `Sequential` found it not enabled,
    /// an instrument's `should_run` said no, or what it establishes still
    /// held. Not one of TVM's hooks (TVM has no way to watch skips); it
    /// cannot fail, since a skip changes nothing to undo.
    fn pass_skipped(&self, _module: &IRModule, _info: &PassInfo, _reason: &str) {}
}
