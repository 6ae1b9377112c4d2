//! `relay-passes`: one import for the whole Relay library stack.
//!
//! The work is done by the layer crates under `passes/` (see
//! `docs/architecture.md`); this façade re-exports each under the module
//! name downstream code uses, so `relay_passes::ir::Expr` and
//! `relay_passes::pass_manager::PassContext` keep working. Bottom up:
//! [`source`], [`diagnostic`], [`dtype`], [`op`], [`metadata`], [`ir`] and
//! [`printer`] (`relay-ir`); [`lower`] (`relay-lower`: syntax tree to IR);
//! [`infer`] and [`checkable`] (`relay-infer`: InferType); [`eval`]
//! (`relay-eval`: constant evaluation); [`pass_manager`]
//! (`relay-pass-manager`: `PassInfo`, `PassContext`, instruments, pipelines,
//! the registry — no concrete pass); [`patterns`] (`relay-patterns`: the
//! dataflow pattern language, `rewrite`, `partition`, pattern tables);
//! [`transforms`] (`relay-transforms`: TVM's passes, registered by
//! [`register_builtin_passes`]); [`graph`] (`relay-graph`: dataflow graphs
//! of functions, their layout and writers).
//!
//! Binaries call [`register_builtin_passes`] once at start; the pass manager
//! itself knows no concrete pass.
//!
//! # Writing a pass
//!
//! A pass that replaces every `nn.relu(x)` by `clip(x, a_min=0f, a_max=inf)`,
//! registered in one line so that pipelines, `relay passes` and the editor
//! know it, then run in a pipeline after TVM's `InferType`:
//!
//! ```
//! use relay_passes::ir::build::op_call_with;
//! use relay_passes::ir::rewrite::rewrite_function;
//! use relay_passes::ir::AttrValue;
//! use relay_passes::printer::{print_module, PrintOptions};
//! use relay_passes::pass_manager::registry::register_function_pass;
//! use relay_passes::pass_manager::{pipeline_from_text, run_pass, PassContext, PassContextOptions};
//!
//! // TVM's passes, once per process (as MLIR's `registerAllPasses()`).
//! relay_passes::register_builtin_passes();
//!
//! // The pass: rewrite each call whose callee is the operator `nn.relu`.
//! register_function_pass("ReluToClip", 1, &["InferType"], "nn.relu → clip", |f, _m, _ctx| {
//!     Ok(rewrite_function(&f, |_before, after| {
//!         match after.as_call() {
//!             Some(call) if call.callee.as_op().is_some_and(|op| op.name == "nn.relu") => {
//!                 let bounds = [
//!                     ("a_min", AttrValue::Double(0.0)),
//!                     ("a_max", AttrValue::Double(f64::INFINITY)),
//!                 ];
//!                 op_call_with("clip", call.args.clone(), &bounds)
//!             }
//!             _ => after,
//!         }
//!     }))
//! });
//!
//! // A module, as `tvm.parser.parse` reads it (syntax and name errors come back
//! // as diagnostics with spans).
//! let text = r#"#[version = "0.0.5"]
//! def @main(%x: Tensor[(1, 4), float32]) {
//!   nn.relu(add(%x, %x))
//! }"#;
//! let (module, diagnostics) = relay_passes::lower::parse_and_lower("example.relay", text);
//! assert!(diagnostics.is_empty());
//!
//! // `with PassContext(opt_level=3): Sequential([...])(mod)`
//! let ctx = PassContext::new(PassContextOptions { opt_level: 3, ..Default::default() })?;
//! let _scope = ctx.enter()?;
//! let pipeline = pipeline_from_text("InferType, ReluToClip").map_err(|e| e.message)?;
//! let module = run_pass(&*pipeline, module, &ctx)?;
//!
//! let printed = print_module(&module, &PrintOptions::default());
//! assert!(printed.contains("clip(%0, a_min=0f, a_max=inff)"), "{printed}");
//! println!("{printed}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use relay_eval as eval;
pub use relay_graph as graph;
pub use relay_infer as infer;
pub use relay_infer::checkable;
pub use relay_interp as interp;
pub use relay_ir as ir;
pub use relay_ir::{diagnostic, dtype, limits, metadata, op, printer, source};
pub use relay_lower as lower;
pub use relay_pass_manager as pass_manager;
pub use relay_patterns as patterns;
pub use relay_transforms as transforms;
pub use relay_transforms::register_builtin_passes;

pub mod op_coverage;
