//! `relay ops [--json] [NAME…]`: the operator table — per operator its
//! arguments, attributes type and fields with defaults, support level,
//! `TOpPattern`, and what this library implements for it (type relation,
//! constant-evaluation kernel, layout rules), from
//! `relay_passes::op_coverage`. Ends with a summary line of counts.

use super::{EXIT_OK, EXIT_USAGE};
use relay_passes::op::{self, OpDef};
use relay_passes::op_coverage::{coverage, OpCoverage};
use serde_json::{json, Value};

#[derive(Debug, clap::Args)]
pub struct OpsArgs {
    /// Print JSON: a list of objects, one per operator (see the README).
    #[arg(long)]
    json: bool,
    /// Only these operators (all when none is given).
    names: Vec<String>,
}

pub fn run(args: &OpsArgs) -> i32 {
    // The operators the project (found from here) declares are listed too.
    if let Ok(here) = std::env::current_dir() {
        super::lenient::declare_project_ops(&here);
    }
    let ops = match selected(&args.names) {
        Ok(ops) => ops,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    if args.json {
        let list: Vec<Value> = ops.iter().map(|op| op_json(op)).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        );
    } else {
        for op in &ops {
            print!("{}", op_text(op));
        }
        println!("{}", summary(&ops));
    }
    EXIT_OK
}

/// The operators named (in the order given), or the whole table sorted by
/// name; an unknown name is an error with a suggestion.
fn selected(names: &[String]) -> Result<Vec<&'static OpDef>, String> {
    if names.is_empty() {
        let mut all: Vec<&'static OpDef> = op::all_ops().iter().collect();
        // The operators the project's relay.toml declares.
        all.extend(op::custom::declared_ops());
        all.sort_by(|a, b| a.name.cmp(&b.name));
        return Ok(all);
    }
    names
        .iter()
        .map(|name| {
            op::lookup(name).ok_or_else(|| {
                let hint = op::suggest_op(name)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                format!("unknown operator `{name}`{hint}")
            })
        })
        .collect()
}

/// The arguments as `data: Tensor, weight: Tensor`, `…` for a variadic op.
fn arguments_text(op: &OpDef) -> String {
    let mut parts: Vec<String> = op
        .arguments
        .iter()
        .map(|a| format!("{}: {}", a.name, a.kind))
        .collect();
    if op.is_variadic() {
        parts.push("…".into());
    }
    parts.join(", ")
}

fn op_text(op: &'static OpDef) -> String {
    let c = coverage(op);
    let pattern = op.pattern.map_or("none", |p| p.name());
    let level = op
        .support_level
        .map_or_else(|| "-".to_string(), |l| l.to_string());
    let mut text = format!("{}({})\n", op.name, arguments_text(op));
    text.push_str(&format!("    pattern {pattern}, level {level}"));
    if op.stateful {
        text.push_str(", stateful");
    }
    if op.non_computational {
        text.push_str(", non-computational");
    }
    text.push('\n');
    text.push_str(&format!("    {c}\n"));
    match (op.attrs_type.as_deref(), op.attrs()) {
        (Some(key), Some(schema)) => {
            text.push_str(&format!("    attrs {key}\n"));
            for field in &schema.fields {
                text.push_str(&format!(
                    "      {}: {} = {}\n",
                    field.name, field.ty, field.default
                ));
            }
        }
        (Some(key), None) => text.push_str(&format!("    attrs {key} (open dictionary)\n")),
        (None, _) => {
            if let Some(key) = op.call_attrs_type.as_deref() {
                text.push_str(&format!(
                    "    attrs {key} (not registered with the operator: printed as meta[{key}][…])\n"
                ));
                for field in op::attrs_schema(key).map_or(&[][..], |s| &s.fields[..]) {
                    text.push_str(&format!(
                        "      {}: {} = {}\n",
                        field.name, field.ty, field.default
                    ));
                }
            }
        }
    }
    if !op.description.is_empty() {
        text.push_str(&format!("    {}\n", op.description));
    }
    text
}

fn op_json(op: &'static OpDef) -> Value {
    let c = coverage(op);
    let attrs = op.call_attrs().and_then(op::attrs_schema).map(|schema| {
        schema
            .fields
            .iter()
            .map(|f| {
                json!({
                    "name": f.name,
                    "type": f.ty.to_string(),
                    "default": if f.is_required() { Value::Null } else { json!(f.default.to_string()) },
                    "required": f.is_required(),
                })
            })
            .collect::<Vec<_>>()
    });
    json!({
        "name": op.name,
        "arguments": op.arguments.iter().map(|a| json!({"name": a.name, "kind": a.kind})).collect::<Vec<_>>(),
        "num_inputs": op.num_inputs,
        "attrs_type": op.attrs_type,
        "call_attrs_type": op.call_attrs_type,
        "attrs": attrs,
        "pattern": op.pattern.map(|p| p.name()),
        "support_level": op.support_level,
        "stateful": op.stateful,
        "non_computational": op.non_computational,
        "relation": c.relation,
        "relation_implemented": c.relation_implemented,
        "evaluator": c.evaluator,
        "never_folded": c.never_folded,
        "layout_inference": c.layout_inference,
        "layout_conversion": c.layout_conversion,
        "alter_layout": c.alter_layout,
        "description": op.description,
    })
}

/// `N operators: R with a type relation (of D declaring one), K with an
/// evaluation kernel (F never folded by TVM), L with layout inference`.
fn summary(ops: &[&'static OpDef]) -> String {
    let all: Vec<OpCoverage> = ops.iter().map(|op| coverage(op)).collect();
    let count = |f: fn(&OpCoverage) -> bool| all.iter().filter(|c| f(c)).count();
    format!(
        "{} operators: {} with a type relation (of {} that declare one), {} with an evaluation kernel ({} never folded by TVM), {} with layout inference",
        ops.len(),
        count(|c| c.relation_implemented),
        count(|c| c.relation.is_some()),
        count(|c| c.evaluator),
        count(|c| c.never_folded.is_some()),
        count(|c| c.layout_inference),
    )
}
