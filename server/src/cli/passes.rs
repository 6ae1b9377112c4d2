//! `relay passes [--json]`: every registered pass with its kind, opt_level,
//! required passes, parameters (with defaults) and a one-line description,
//! the passes of the `relay.toml` found from the current directory
//! (external and Python passes) included.

use super::EXIT_OK;
use crate::project::{ExternalCommands, Project};
use relay_passes::pass_manager::registry;

#[derive(Debug, clap::Args)]
pub struct PassesArgs {
    /// Print JSON (for editors) instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &PassesArgs) -> i32 {
    register_project_passes();
    let specs = registry::all();
    if args.json {
        let list: Vec<serde_json::Value> = specs
            .iter()
            .map(|spec| {
                serde_json::json!({
                    "name": spec.name,
                    "info_name": spec.info.name,
                    "kind": spec.kind.name(),
                    "opt_level": spec.info.opt_level,
                    "required": spec.info.required,
                    "description": spec.description,
                    "params": spec.params.iter().map(|p| serde_json::json!({
                        "name": p.name,
                        "type": p.ty.name(),
                        "default": p.default.to_string(),
                        "range": p.range_text(),
                        "doc": p.doc,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        );
        return EXIT_OK;
    }
    for spec in specs {
        let mut line = format!(
            "{:<28} {:<8} opt_level {}",
            spec.name,
            spec.kind.name(),
            spec.info.opt_level
        );
        if spec.info.name != spec.name {
            line.push_str(&format!("  (PassInfo name `{}`)", spec.info.name));
        }
        if !spec.info.required.is_empty() {
            line.push_str(&format!("  requires {}", spec.info.required.join(", ")));
        }
        println!("{line}");
        println!("    {}", spec.description);
        for param in &spec.params {
            let range = param
                .range_text()
                .map(|r| format!(" in {r}"))
                .unwrap_or_default();
            println!(
                "    {}={}  ({}{range}) {}",
                param.name,
                param.default,
                param.ty.name(),
                param.doc
            );
        }
    }
    print_not_registered();
    EXIT_OK
}

/// Registers the passes of the project around the current directory; listing
/// them runs nothing, so their commands stay blocked.
fn register_project_passes() {
    let Some(path) = Project::find(std::path::Path::new(".")) else {
        return;
    };
    match Project::load(&path) {
        Ok(project) => project.register_passes(&ExternalCommands::Blocked(
            "`relay passes` only lists passes".to_string(),
        )),
        Err(error) => eprintln!("warning: {error}"),
    }
}

/// The names of TVM v0.13's `relay.transform` with no registered pass, each
/// with the reason, so the list of passes is complete.
fn print_not_registered() {
    use relay_passes::transforms::not_registered::NOT_REGISTERED;
    println!();
    println!("Not registered (names of TVM v0.13's relay.transform that are not passes here):");
    for entry in NOT_REGISTERED {
        println!("{:<28} {}", entry.name, entry.reason);
    }
}
