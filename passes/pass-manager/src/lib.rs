//! The pass infrastructure of TVM's design: [`PassInfo`], [`PassContext`]
//! (opt_level, required/disabled passes, config, instruments, diagnostics,
//! a scoped current context), module, function and sequential passes, a
//! registry by name that resolves `required`, textual pipelines, and
//! instruments (timing, IR printing, printing after change).
//!
//! Behaviour follows TVM v0.13 (`src/ir/transform.cc`,
//! `src/relay/ir/transform.cc`, `src/ir/instrument.cc`), with one saving
//! TVM does not make unless asked: a pass that establishes a module property
//! that still holds (InferType on an untouched, already type-checked
//! module) is not run again; `PassContextOptions::tvm_exact` turns that off.

pub mod config;
pub mod context;
pub mod info;
pub mod instrument;
pub mod instruments;
pub mod pass;
pub mod pass_builder;
pub mod pipeline;
pub mod registry;
pub mod target;

pub use config::{ConfigType, ConfigValue};
pub use context::{ContextGuard, Explanation, LogSink, PassContext, PassContextOptions};
pub use info::PassInfo;
pub use instrument::{HookResult, PassInstrument};
pub use pass::{
    function_pass, module_pass, run_pass, FunctionPass, ModulePass, Pass, PassError, PassResult,
    Sequential,
};
pub use pass_builder::PassBuilder;
pub use pipeline::{parse_pipeline, pipeline_from_text, Pipeline, PipelineError, PipelineValue};
pub use registry::{ParamSpec, ParamType, PassArgs, PassKind, PassSpec};
pub use target::MAX_OPT_LEVEL;
