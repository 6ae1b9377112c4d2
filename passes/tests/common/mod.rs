//! The IR-dependent helpers of the corpus tests (`dce_cse_corpus`,
//! `fold_constant_corpus`, `infer_corpus`, `print_corpus`, `pass_infra`):
//! running a record's pipeline under its PassContext. Everything that is
//! only text and files (locating `../shared/tvm`, reading pass records,
//! stripping types, comparing like `shared/tools/conformance.py`) lives in
//! `relay-test-support` and is re-exported here for these tests.
//!
//! Each test crate uses only part of this module, hence the `dead_code`
//! allowance.

#![allow(dead_code, unused_imports)]

pub use relay_test_support::compare::{compare, Comparison, Tally};
pub use relay_test_support::files::{read_or_empty as read, sorted_files};
pub use relay_test_support::text::{before_metadata, first_difference, normalize, strip_types};
pub use relay_test_support::tvm::{pass_records, root_or_skip as corpus, PassRecord};

use relay_passes::diagnostic::Diagnostics;
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::{
    pipeline_from_text, registry, run_pass, ConfigValue, PassContext, PassContextOptions,
    PassInstrument,
};
use relay_passes::printer::{print_module, PrintOptions};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Whether a record is one this project does not cover yet, and which
/// issue covers it (`relay_test_support::tvm::awaiting_coverage`, asking
/// the operator table which operators have a relation now).
pub fn awaiting_coverage(path: &std::path::Path) -> Option<&'static str> {
    relay_test_support::tvm::awaiting_coverage(path, &|op| {
        relay_passes::op::lookup(op)
            .is_some_and(|def| relay_passes::op_coverage::coverage(def).relation_implemented)
    })
}

/// The first error of a diagnostics list.
pub fn first_error(diagnostics: &Diagnostics) -> String {
    diagnostics
        .iter()
        .find(|d| d.is_error())
        .map_or(String::new(), |d| d.to_string())
}

fn config_value(key: &str, value: &Value) -> Option<ConfigValue> {
    let ty = relay_passes::pass_manager::config::config_type(key)?;
    let text = match value {
        Value::String(s) => serde_json::to_string(s).ok()?,
        other => other.to_string(),
    };
    ConfigValue::parse_for(&text, ty).ok()
}

/// The PassContext options a record's json gives (`ctx` and `target`).
pub fn context_options(json: &Value) -> Result<PassContextOptions, String> {
    let ctx = &json["ctx"];
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut config = BTreeMap::new();
    if let Some(map) = ctx["config"].as_object() {
        for (key, value) in map {
            let value = config_value(key, value).ok_or_else(|| format!("config {key}"))?;
            config.insert(key.clone(), value);
        }
    }
    Ok(PassContextOptions {
        opt_level: ctx["opt_level"].as_u64().unwrap_or(2) as u32,
        required_pass: strings(&ctx["required_pass"]),
        disabled_pass: strings(&ctx["disabled_pass"]),
        config,
        target: json["target"].as_str().map(String::from),
        ..Default::default()
    })
}

/// Parses, lowers and type-checks a text, as TVM's parser does (`relay opt`
/// does the same before the pipeline).
pub fn parse_typed(name: &str, text: &str) -> Result<IRModule, String> {
    relay_passes::register_builtin_passes();
    let (module, diagnostics) = parse_and_lower(name, text);
    if diagnostics.has_errors() {
        return Err(format!("parse: {}", first_error(&diagnostics)));
    }
    let parse_ctx = PassContext::new(PassContextOptions::default()).map_err(|e| e.to_string())?;
    let infer = registry::create_by_name("InferType")?;
    run_pass(&*infer, module, &parse_ctx).map_err(|e| {
        let details: Vec<String> = e.diagnostics.iter().map(|d| d.to_string()).collect();
        format!("infer: {e} {}", details.join("; "))
    })
}

/// Runs `pipeline` on `module` inside a context made from `options` (with
/// `instruments` added); the resulting module.
pub fn run_pipeline(
    module: IRModule,
    pipeline: &str,
    mut options: PassContextOptions,
    instruments: Vec<Arc<dyn PassInstrument>>,
) -> Result<IRModule, String> {
    relay_passes::register_builtin_passes();
    let pipeline = pipeline_from_text(pipeline).map_err(|e| format!("pipeline: {e}"))?;
    options.instruments.extend(instruments);
    let ctx = PassContext::new(options)?;
    let guard = ctx.enter().map_err(|e| e.to_string())?;
    let result = run_pass(&*pipeline, module, &ctx);
    guard.exit().map_err(|e| e.to_string())?;
    result.map_err(|e| {
        let details: Vec<String> = e.diagnostics.iter().map(|d| d.to_string()).collect();
        format!("pass: {} {}", e.message, details.join("; "))
    })
}

/// `relay opt` on a record: parse and type-check its input, run its
/// pipeline under its context, print with types.
pub fn run_record(record: &PassRecord) -> Result<String, String> {
    let module = parse_typed("before.relay", &record.before)?;
    let options = context_options(&record.json)?;
    let module = run_pipeline(module, record.pipeline(), options, Vec::new())?;
    Ok(print_module(&module, &PrintOptions::default()))
}
