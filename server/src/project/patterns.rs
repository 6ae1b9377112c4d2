//! The pattern tables of `relay.toml`: named patterns, composite pattern
//! tables (MergeComposite's input) and passes made of rewrite rules, all in
//! the pattern syntax of `docs/patterns.md`.
//!
//! ```toml
//! [patterns]                     # named patterns, used as @name
//! conv_bias = "nn.conv2d(*, *) |> nn.bias_add(_, *)"
//!
//! [[composite.dnnl]]             # MergeComposite(pattern_table="dnnl")
//! name = "dnnl.conv2d_bias_relu"
//! pattern = "@conv_bias |> nn.relu(_)"
//! check = "nn.relu(nn.bias_add(nn.conv2d(*, *) {data_layout=\"NCHW\"}, *))"
//!
//! [rewrite.FoldDoubleNegative]   # a function pass
//! rules = ["negative(negative($x)) => $x"]
//! opt_level = 1
//!
//! [targets.dnnl]                 # what AnnotateTarget(targets=["dnnl"]) offloads
//! ops = [
//!   "nn.relu",                                                   # every call
//!   { op = "nn.max_pool2d", check = "nn.max_pool2d(*) {ceil_mode=False}" },  # matching calls
//! ]
//! ```

use relay_passes::pass_manager::registry::register;
use relay_passes::patterns::rule::{parse_rewrite_rule, RewriteRule};
use relay_passes::patterns::table::{register_table, CompositePattern, PatternTable};
use relay_passes::patterns::targets::{register_target, OpSupport, TargetOps};
use relay_passes::patterns::text::{parse_pattern, render_error, PatternError};
use relay_passes::patterns::Pattern;
use relay_passes::transforms::pattern_rewrite::{rule_pass_spec, RuleOptions};
use serde::Deserialize;
use std::collections::BTreeMap;

/// One `[[composite.<table>]]` entry.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CompositeEntry {
    /// The `Composite` attribute of the functions made.
    pub name: String,
    pub pattern: String,
    /// A pattern the matched root must match too (TVM's check function).
    #[serde(default)]
    pub check: Option<String>,
}

/// A `[targets.<name>]` table: the operators the BYOC target supports
/// (TVM's `target.<name>` operator attribute, AnnotateTarget's input).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TargetConfig {
    pub ops: Vec<TargetOpEntry>,
}

/// One supported operator: its name (every call), or the name with a
/// pattern the call must match.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum TargetOpEntry {
    Always(String),
    Checked { op: String, check: String },
}

impl TargetOpEntry {
    /// The operator's name.
    pub fn op(&self) -> &str {
        match self {
            TargetOpEntry::Always(op) | TargetOpEntry::Checked { op, .. } => op,
        }
    }

    fn check(&self) -> Option<&str> {
        match self {
            TargetOpEntry::Always(_) => None,
            TargetOpEntry::Checked { check, .. } => Some(check),
        }
    }
}

/// A `[rewrite.<Name>]` pass.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RewritePassConfig {
    /// `PATTERN => REPLACEMENT` rules, applied in order until none changes
    /// anything.
    pub rules: Vec<String>,
    #[serde(default)]
    pub opt_level: u32,
    #[serde(default)]
    pub required: Vec<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub require_type: bool,
    #[serde(default)]
    pub rewrite_once: bool,
}

/// The pattern sections of a project, as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatternConfig {
    pub patterns: BTreeMap<String, String>,
    pub composite: BTreeMap<String, Vec<CompositeEntry>>,
    pub rewrite: BTreeMap<String, RewritePassConfig>,
    pub targets: BTreeMap<String, TargetConfig>,
}

/// The pattern sections, read.
pub struct CompiledPatterns {
    pub named: BTreeMap<String, Pattern>,
    pub tables: BTreeMap<String, PatternTable>,
    pub rewrites: Vec<(String, RewritePassConfig, Vec<RewriteRule>)>,
    pub targets: BTreeMap<String, TargetOps>,
}

fn located(section: &str, text: &str, e: &PatternError) -> String {
    format!("{section}:\n{}", render_error(text, e))
}

impl PatternConfig {
    /// Reads every pattern; the first error names its section and entry
    /// and shows the pattern with carets.
    pub fn compile(&self) -> Result<CompiledPatterns, String> {
        let named = self.named_patterns()?;
        let lookup = |name: &str| named.get(name).cloned();
        let mut tables = BTreeMap::new();
        for (table, entries) in &self.composite {
            let mut parsed = Vec::new();
            for (i, entry) in entries.iter().enumerate() {
                let section = format!("[[composite.{table}]] #{} ({})", i + 1, entry.name);
                let composite = CompositePattern::parse(
                    &entry.name,
                    &entry.pattern,
                    entry.check.as_deref(),
                    &lookup,
                )
                .map_err(|(text, e)| located(&section, &text, &e))?;
                parsed.push(composite);
            }
            tables.insert(table.clone(), parsed);
        }
        let mut rewrites = Vec::new();
        for (name, pass) in &self.rewrite {
            if pass.rules.is_empty() {
                return Err(format!(
                    "[rewrite.{name}]: `rules` must hold at least one rule"
                ));
            }
            let mut rules = Vec::new();
            for (i, rule) in pass.rules.iter().enumerate() {
                let section = format!("[rewrite.{name}] rule {}", i + 1);
                rules.push(
                    parse_rewrite_rule(rule, &lookup).map_err(|e| located(&section, rule, &e))?,
                );
            }
            rewrites.push((name.clone(), pass.clone(), rules));
        }
        let mut targets = BTreeMap::new();
        for (target, config) in &self.targets {
            let mut ops = TargetOps::new();
            for entry in &config.ops {
                let section = format!("[targets.{target}] {}", entry.op());
                if ops.contains_key(entry.op()) {
                    return Err(format!("{section}: the operator is listed twice"));
                }
                let support = OpSupport::parse(entry.check(), &lookup)
                    .map_err(|e| located(&section, entry.check().unwrap_or_default(), &e))?;
                ops.insert(entry.op().to_string(), support);
            }
            targets.insert(target.clone(), ops);
        }
        Ok(CompiledPatterns {
            named,
            tables,
            rewrites,
            targets,
        })
    }

    /// `[patterns]`, each read once the patterns it names (`@other`) are:
    /// an unknown name or a cycle is an error at the first entry stuck.
    fn named_patterns(&self) -> Result<BTreeMap<String, Pattern>, String> {
        let mut named: BTreeMap<String, Pattern> = BTreeMap::new();
        let mut pending: Vec<(&String, &String)> = self.patterns.iter().collect();
        while !pending.is_empty() {
            let before = pending.len();
            let mut still = Vec::new();
            let mut first_error = None;
            for (name, text) in pending {
                match parse_pattern(text, &|n: &str| named.get(n).cloned()) {
                    Ok(p) => {
                        named.insert(name.clone(), p.pattern);
                    }
                    Err(e) => {
                        first_error.get_or_insert_with(|| {
                            located(&format!("[patterns] {name}"), text, &e)
                        });
                        still.push((name, text));
                    }
                }
            }
            if still.len() == before {
                return Err(first_error.unwrap_or_default());
            }
            pending = still;
        }
        Ok(named)
    }

    /// Registers the tables, the targets' operators and the rewrite passes.
    pub fn register(&self) -> Result<(), String> {
        let compiled = self.compile()?;
        for (name, table) in compiled.tables {
            register_table(&name, table);
        }
        for (name, ops) in compiled.targets {
            register_target(&name, ops);
        }
        for (name, pass, rules) in compiled.rewrites {
            let required: Vec<&str> = pass.required.iter().map(String::as_str).collect();
            let description = if pass.description.is_empty() {
                format!("Rewrite rules: {}", pass.rules.join("; "))
            } else {
                pass.description.clone()
            };
            register(rule_pass_spec(
                &name,
                pass.opt_level,
                &required,
                &description,
                rules,
                RuleOptions {
                    require_type: pass.require_type,
                    rewrite_once: pass.rewrite_once,
                },
            ));
        }
        Ok(())
    }
}
