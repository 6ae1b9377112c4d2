//! Relay IR, the operator registry, the printer and the pass infrastructure.
//!
//! Everything that analyses or rewrites Relay lives here; the CLI and the
//! language server in `relay-server` only call into this crate. The layers,
//! bottom up: [`source`] and [`diagnostic`] (files, spans, the one diagnostics
//! type), [`op`] (the operator table of TVM v0.13 with attribute schemas),
//! [`ir`] (expressions, types, modules, structural equality, traversal and
//! rewriting), [`lower`] (syntax tree to IR), [`printer`] (TVM's `astext()`),
//! [`infer`] (InferType), [`eval`] (constant evaluation), [`transform`] (the
//! pass infrastructure: `PassInfo`, `PassContext`, passes, pipelines, the
//! registry) and [`transforms`] (TVM's standard passes).
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
//! use relay_passes::transform::registry::register_function_pass;
//! use relay_passes::transform::{pipeline_from_text, run_pass, PassContext, PassContextOptions};
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

pub mod checkable;
pub mod diagnostic;
pub mod dtype;
pub mod eval;
mod fxhash;
pub mod infer;
pub mod ir;
pub mod limits;
pub mod lower;
pub mod meta;
pub mod op;
pub mod printer;
pub mod project;
pub mod source;
pub mod transform;
pub mod transforms;
