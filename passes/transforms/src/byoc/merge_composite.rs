//! `MergeComposite(pattern_table)`: TVM v0.13's merging of the expressions
//! that match each pattern of a table into functions with a `Composite`
//! attribute, so that a BYOC codegen sees one call per supported
//! operator group (`src/relay/transforms/merge_composite.cc`).
//!
//! The patterns are applied one after the other, in table order (earlier
//! patterns have priority), each as `partition(pattern, function,
//! {Composite: name}, check)` of the dataflow pattern language
//! (`relay-patterns`), and the function is re-typed after each.
//!
//! The table is a named table (`pattern_table="dnnl"`, declared in
//! `relay.toml` as `[[composite.dnnl]]` entries or registered with
//! `relay_patterns::table::register_table`) or written inline
//! (`patterns={"add_relu": "add(*, *) |> nn.relu(_)"}`). TVM's check is a
//! Python function of the matched root; here it is a pattern the root must
//! match as well (`checks={"add_relu": "…"}`), which covers checks on
//! attributes, dtypes and shapes but not arbitrary code.

use relay_infer::infer_expr;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::{AttrValue, Function, IRModule};
use relay_pass_manager::pipeline::PipelineValue;
use relay_pass_manager::{ParamSpec, PassContext, PassSpec};
use relay_patterns::rewrite::partition;
use relay_patterns::table::{table, table_names, CompositePattern, PatternTable};
use relay_patterns::text::{no_named_patterns, render_error};
use std::sync::Arc;

/// The registry entry: `MergeComposite(pattern_table="…")`.
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("MergeComposite", 0)
        .param(ParamSpec::string(
            "pattern_table",
            "",
            "the name of a pattern table ([[composite.<name>]] in relay.toml)",
        ))
        .param(ParamSpec::map(
            "patterns",
            "an inline pattern table, in priority order: {\"<Composite name>\": \"<pattern>\"}",
        ))
        .param(ParamSpec::map(
            "checks",
            "for entries of `patterns`: a pattern the matched root must also match",
        ))
        .doc(
            "Merge the expressions matching each pattern of a table into functions with a \
             Composite attribute (BYOC); checks are patterns, not Python functions",
        )
        .build(|args| {
            let table = resolve_table(
                &args.string("pattern_table"),
                args.get("patterns"),
                args.get("checks"),
            )?;
            Ok(
                move |function: Function, module: &IRModule, _ctx: &PassContext| {
                    merge_composite(&function, &table, module)
                },
            )
        })
}

/// The table the arguments name or spell out.
fn resolve_table(
    name: &str,
    patterns: Option<&PipelineValue>,
    checks: Option<&PipelineValue>,
) -> Result<Arc<PatternTable>, String> {
    let inline = string_map(patterns, "patterns")?;
    let checks = string_map(checks, "checks")?;
    if let Some((unknown, _)) = checks
        .iter()
        .find(|(k, _)| !inline.iter().any(|(n, _)| n == k))
    {
        return Err(format!("checks: `{unknown}` is not an entry of `patterns`"));
    }
    match (name.is_empty(), inline.is_empty()) {
        (false, false) => Err("give either `pattern_table` or `patterns`, not both".to_string()),
        // TVM's MergeComposite([]): an empty table, which changes nothing.
        (true, true) => Ok(Arc::new(Vec::new())),
        (false, true) => table(name).ok_or_else(|| {
            let known = table_names();
            format!(
                "no pattern table is named `{name}` (declare it in relay.toml as \
                 [[composite.{name}]] entries){}",
                if known.is_empty() {
                    String::new()
                } else {
                    format!("; known tables: {}", known.join(", "))
                }
            )
        }),
        (true, false) => {
            let mut entries = Vec::new();
            for (entry, pattern) in &inline {
                let check = checks
                    .iter()
                    .find(|(k, _)| k == entry)
                    .map(|(_, c)| c.as_str());
                let parsed = CompositePattern::parse(entry, pattern, check, &no_named_patterns)
                    .map_err(|(text, e)| {
                        format!("pattern `{entry}`:\n{}", render_error(&text, &e))
                    })?;
                entries.push(parsed);
            }
            Ok(Arc::new(entries))
        }
    }
}

fn string_map(value: Option<&PipelineValue>, what: &str) -> Result<Vec<(String, String)>, String> {
    match value {
        None => Ok(Vec::new()),
        Some(PipelineValue::Map(entries)) => entries
            .iter()
            .map(|(k, v)| match v {
                PipelineValue::Str(s) => Ok((k.clone(), s.clone())),
                other => Err(format!(
                    "{what}: the value of `{k}` must be a pattern in a string, not {}",
                    other.type_name()
                )),
            })
            .collect(),
        Some(other) => Err(format!("{what} must be a map, not {}", other.type_name())),
    }
}

/// Partitions `function` with each entry of `table` in turn.
pub fn merge_composite(
    function: &Function,
    table: &PatternTable,
    module: &IRModule,
) -> Result<Function, Diagnostic> {
    let mut merged = function.expr().clone();
    for entry in table {
        let attrs = [("Composite".to_string(), AttrValue::Str(entry.name.clone()))];
        merged = partition(&entry.pattern, &merged, &attrs, &|root| entry.check(root));
        // TVM re-types the function after each pattern, so the checks of
        // the next one see types.
        let (typed, diagnostics) = infer_expr(&merged, Some(module));
        if let Some(error) = diagnostics.into_iter().find(|d| d.is_error()) {
            return Err(error);
        }
        merged = typed;
    }
    merged.as_function().ok_or_else(|| {
        Diagnostic::pass_failed("MergeComposite: the function did not stay a function".to_string())
    })
}
