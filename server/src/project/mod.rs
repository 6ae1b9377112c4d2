//! `relay.toml`: a project's pipelines and pass options, found upward from
//! the file being worked on. The CLI (`relay check --pipeline NAME`) and the
//! language server (on-save checks, code actions) read the same file.
//!
//! ```toml
//! opt_level = 3
//! required_pass = []
//! disabled_pass = ["AlterOpLayout"]
//! on_save = ["cleanup"]          # pipelines run when a file is saved
//!
//! [config]
//! "relay.FuseOps.max_depth" = 16
//!
//! [pipelines]
//! cleanup = "InferType, FoldConstant, DeadCodeElimination"
//!
//! lenient = true                 # read every command's input as `--lenient` does
//!
//! [ops."vendor.gemm"]            # a declared operator (see `ops`)
//! args = ["data", "weight"]
//! output = "shape(in0[0], in1[0])"
//!
//! [format]
//! width = 100                    # `relay fmt` and editor formatting
//!
//! [passes.CountCalls]            # an external pass: Relay text in, Relay text out
//! command = ["python3", "tools/count_calls.py"]
//! opt_level = 1
//! required = ["InferType"]
//! description = "Annotates call counts"
//!
//! [passes.ReplaceRelu]           # a pass written in Python with relay_tools,
//! python = "mypasses:ReplaceRelu"  # run by `$RELAY_PYTHON -m relay_tools.host`
//!
//! [patterns]                     # named patterns (docs/patterns.md), used as @name
//! conv_bias = "nn.conv2d(*, *) |> nn.bias_add(_, *)"
//!
//! [[composite.dnnl]]             # MergeComposite(pattern_table="dnnl")
//! name = "dnnl.conv2d_bias_relu"
//! pattern = "@conv_bias |> nn.relu(_)"
//!
//! [rewrite.FoldDoubleNegative]   # a pass made of rewrite rules
//! rules = ["negative(negative($x)) => $x"]
//!
//! [targets.dnnl]                 # the operators AnnotateTarget offloads to dnnl
//! ops = ["nn.relu", { op = "nn.max_pool2d", check = "nn.max_pool2d(*) {ceil_mode=False}" }]
//! ```

mod ops;
mod patterns;
mod pipelines;

pub use ops::OpConfig;
pub use patterns::{CompositeEntry, PatternConfig, RewritePassConfig, TargetConfig, TargetOpEntry};
pub use pipelines::read_pipeline;

use crate::external_pass::ExternalPass;
use relay_passes::pass_manager::registry::{register, PassKind, PassSpec};
use relay_passes::pass_manager::target::check_opt_level;
use relay_passes::pass_manager::{ConfigType, ConfigValue, PassContextOptions, PassInfo};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file name looked for.
pub const PROJECT_FILE: &str = "relay.toml";

/// An external pass declared in `relay.toml`: a command, or a Python pass.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExternalPassConfig {
    /// The program and its arguments; it reads Relay text on stdin and
    /// writes Relay text on stdout.
    #[serde(default)]
    pub command: Vec<String>,
    /// A pass written in Python with the `relay_tools` package,
    /// `module:attribute` (a pass object or a decorated pass class), run by
    /// the package's host (`python -m relay_tools.host`) through the same
    /// protocol, so the `relay` binary does not link Python.
    #[serde(default)]
    pub python: Option<String>,
    #[serde(default)]
    pub opt_level: u32,
    #[serde(default)]
    pub required: Vec<String>,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct RawProject {
    opt_level: Option<u32>,
    #[serde(default)]
    required_pass: Vec<String>,
    #[serde(default)]
    disabled_pass: Vec<String>,
    #[serde(default)]
    on_save: Vec<String>,
    #[serde(default)]
    config: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pipelines: BTreeMap<String, String>,
    #[serde(default)]
    passes: BTreeMap<String, ExternalPassConfig>,
    #[serde(default)]
    format: FormatConfig,
    lenient: Option<bool>,
    #[serde(default)]
    ops: BTreeMap<String, OpConfig>,
    #[serde(default)]
    patterns: BTreeMap<String, String>,
    #[serde(default)]
    composite: BTreeMap<String, Vec<CompositeEntry>>,
    #[serde(default)]
    rewrite: BTreeMap<String, RewritePassConfig>,
    #[serde(default)]
    targets: BTreeMap<String, TargetConfig>,
}

/// `[format]`: how `relay fmt` and editor formatting lay files out.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct FormatConfig {
    width: Option<usize>,
}

/// A loaded `relay.toml`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Project {
    /// The directory holding `relay.toml` (commands run there).
    pub root: PathBuf,
    pub opt_level: Option<u32>,
    pub required_pass: Vec<String>,
    pub disabled_pass: Vec<String>,
    pub config: BTreeMap<String, ConfigValue>,
    /// Named pipelines, as pipeline text.
    pub pipelines: BTreeMap<String, String>,
    /// The pipelines to run on save.
    pub on_save: Vec<String>,
    pub passes: BTreeMap<String, ExternalPassConfig>,
    /// `[format] width`: the line width of `relay fmt` and editor formatting.
    pub format_width: Option<usize>,
    /// `lenient = true`: commands read the project's files as `--lenient`
    /// does (the language server reads leniently unless `lenient = false`).
    pub lenient: Option<bool>,
    /// `[ops.NAME]`: operators the project declares.
    pub ops: BTreeMap<String, OpConfig>,
    /// `[patterns]`, `[[composite.<table>]]` and `[rewrite.<Name>]`.
    pub pattern_config: PatternConfig,
}

impl Project {
    /// `relay.toml` in `start`'s directory (or `start`, a directory) or the
    /// nearest directory above it. A relative `start` is taken from the
    /// current directory first, so that `sub/model.relay` finds the
    /// project above `sub` and the result is always an absolute path.
    pub fn find(start: &Path) -> Option<PathBuf> {
        let start = std::path::absolute(start).ok()?;
        let mut dir = if start.is_dir() {
            start
        } else {
            start.parent()?.to_path_buf()
        };
        loop {
            let candidate = dir.join(PROJECT_FILE);
            if candidate.is_file() {
                return Some(candidate);
            }
            if !dir.pop() {
                return None;
            }
        }
    }

    /// Reads a project file.
    pub fn load(path: &Path) -> Result<Project, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        // Commands run in the project's directory: never in "" (which
        // `Command::current_dir` cannot enter), whatever form `path` has.
        let absolute = std::path::absolute(path)
            .map_err(|e| format!("cannot locate {}: {e}", path.display()))?;
        let root = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
        Project::parse(&text, root).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads project text; `root` is where commands run.
    pub fn parse(text: &str, root: PathBuf) -> Result<Project, String> {
        let raw: RawProject = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut config = BTreeMap::new();
        for (key, value) in raw.config {
            let ty = relay_passes::pass_manager::config::config_type(&key).ok_or_else(|| {
                format!(
                    "[config]: Invalid config option '{key}' candidates are: {}",
                    relay_passes::pass_manager::config::list_configs()
                        .iter()
                        .map(|(k, _)| *k)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            config.insert(key.clone(), toml_config_value(&key, &value, ty)?);
        }
        for name in &raw.on_save {
            if !raw.pipelines.contains_key(name) {
                return Err(format!(
                    "on_save names the pipeline `{name}`, which [pipelines] does not define"
                ));
            }
        }
        if raw.format.width == Some(0) {
            return Err("[format]: `width` must be at least 1".to_string());
        }
        for (name, pass) in &raw.passes {
            match (&pass.python, pass.command.is_empty()) {
                (Some(_), false) => {
                    return Err(format!(
                        "[passes.{name}]: give either `command` or `python`, not both"
                    ))
                }
                (Some(spec), true) => {
                    check_python_spec(spec).map_err(|e| format!("[passes.{name}]: {e}"))?
                }
                (None, true) => {
                    return Err(format!(
                        "[passes.{name}]: `command` must name a program (or `python` a pass, \
                         `module:attribute`)"
                    ))
                }
                (None, false) => {}
            }
            check_opt_level(i64::from(pass.opt_level))
                .map_err(|e| format!("[passes.{name}]: {e}"))?;
        }
        if let Some(level) = raw.opt_level {
            check_opt_level(i64::from(level))?;
        }
        for (name, config) in &raw.ops {
            ops::declaration(name, config)?;
        }
        let pattern_config = PatternConfig {
            patterns: raw.patterns,
            composite: raw.composite,
            rewrite: raw.rewrite,
            targets: raw.targets,
        };
        for (target, config) in &pattern_config.targets {
            // TVM registers `target.<name>` on operators that exist.
            if let Some(unknown) =
                config.ops.iter().map(TargetOpEntry::op).find(|op| {
                    relay_passes::ir::op::lookup(op).is_none() && !raw.ops.contains_key(*op)
                })
            {
                return Err(format!(
                    "[targets.{target}]: `{unknown}` is not an operator (nor declared in [ops])"
                ));
            }
        }
        for (name, pass) in &pattern_config.rewrite {
            if raw.passes.contains_key(name) {
                return Err(format!(
                    "[rewrite.{name}] and [passes.{name}] declare the same pass"
                ));
            }
            check_opt_level(i64::from(pass.opt_level))
                .map_err(|e| format!("[rewrite.{name}]: {e}"))?;
        }
        pattern_config.compile()?;
        Ok(Project {
            root,
            opt_level: raw.opt_level,
            required_pass: raw.required_pass,
            disabled_pass: raw.disabled_pass,
            config,
            pipelines: raw.pipelines,
            on_save: raw.on_save,
            passes: raw.passes,
            format_width: raw.format.width,
            lenient: raw.lenient,
            ops: raw.ops,
            pattern_config,
        })
    }

    /// Declares the project's operators (`[ops.NAME]`) to the library.
    pub fn declare_ops(&self) -> Result<(), String> {
        ops::declare_all(&self.ops)
    }

    /// The PassContext options the project asks for.
    pub fn context_options(&self) -> PassContextOptions {
        PassContextOptions {
            opt_level: self.opt_level.unwrap_or(2),
            required_pass: self.required_pass.clone(),
            disabled_pass: self.disabled_pass.clone(),
            config: self.config.clone(),
            ..Default::default()
        }
    }

    /// Adds the project's external passes to the registry. With
    /// `commands` [`ExternalCommands::Blocked`], they are registered so that
    /// running one leaves the module alone and warns with the command it
    /// would have run.
    pub fn register_passes(&self, commands: &ExternalCommands) {
        // Checked when the project was read; registering cannot fail here.
        if let Err(e) = self.pattern_config.register() {
            debug_assert!(false, "{e}");
        }
        for (name, pass) in &self.passes {
            let required: Vec<&str> = pass.required.iter().map(String::as_str).collect();
            let info = PassInfo::new(name.clone(), pass.opt_level, &required);
            let command = pass.program();
            let mut external = ExternalPass::new(info.clone(), command.clone(), self.root.clone());
            if let ExternalCommands::Blocked(why) = commands {
                external = external.blocked(why.clone());
            }
            let external = Arc::new(external);
            register(PassSpec {
                name: name.clone(),
                info,
                kind: PassKind::Module,
                params: Vec::new(),
                description: if !pass.description.is_empty() {
                    pass.description.clone()
                } else if let Some(spec) = &pass.python {
                    format!("Python pass: {spec}")
                } else {
                    format!("External pass: {}", command.join(" "))
                },
                factory: Arc::new(move |_| {
                    Ok(external.clone() as Arc<dyn relay_passes::pass_manager::Pass>)
                }),
            });
        }
    }
}

/// The interpreter that runs Python passes: `$RELAY_PYTHON`, else `python3`
/// (the one with `relay_tools` installed).
pub const PYTHON_ENV: &str = "RELAY_PYTHON";

impl ExternalPassConfig {
    /// The command that runs the pass: `command`, or for a Python pass the
    /// `relay_tools` host, `$RELAY_PYTHON -m relay_tools.host module:attribute`.
    pub fn program(&self) -> Vec<String> {
        match &self.python {
            Some(spec) => {
                let python = std::env::var(PYTHON_ENV)
                    .ok()
                    .filter(|p| !p.is_empty())
                    .unwrap_or_else(|| "python3".to_string());
                vec![python, "-m".into(), "relay_tools.host".into(), spec.clone()]
            }
            None => self.command.clone(),
        }
    }
}

/// `module.path:attribute`, each part a dotted Python identifier.
fn check_python_spec(spec: &str) -> Result<(), String> {
    let identifiers = |text: &str| {
        !text.is_empty()
            && text.split('.').all(|part| {
                let mut chars = part.chars();
                chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                    && chars.all(|c| c.is_alphanumeric() || c == '_')
            })
    };
    match spec.split_once(':') {
        Some((module, attribute)) if identifiers(module) && identifiers(attribute) => Ok(()),
        _ => Err(format!(
            "`python = \"{spec}\"` must be `module:attribute` (e.g. \"mypasses:ReplaceRelu\")"
        )),
    }
}

/// Whether the external passes of `relay.toml` may run their commands:
/// the CLI runs them (the user typed the command) unless `--no-external`
/// is given; the language server only once the editor says the workspace
/// is trusted, since opening a cloned folder must not run what its
/// `relay.toml` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExternalCommands {
    Allowed,
    /// Not allowed, with the reason shown to the user.
    Blocked(String),
}

fn toml_config_value(
    key: &str,
    value: &toml::Value,
    ty: ConfigType,
) -> Result<ConfigValue, String> {
    let got = match (value, ty) {
        (toml::Value::Boolean(b), ConfigType::Bool | ConfigType::Int) => {
            Some(ConfigValue::Bool(*b))
        }
        (toml::Value::Integer(i), ConfigType::Int | ConfigType::Bool) => Some(ConfigValue::Int(*i)),
        (toml::Value::Float(x), ConfigType::Float) => Some(ConfigValue::Float(*x)),
        (toml::Value::Integer(i), ConfigType::Float) => Some(ConfigValue::Float(*i as f64)),
        (toml::Value::String(s), ConfigType::String) => Some(ConfigValue::String(s.clone())),
        _ => None,
    };
    got.ok_or_else(|| {
        format!(
            "[config]: expect config {key} to have type {ty} but get {}",
            value.type_str()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_project() {
        let project = Project::parse(
            r#"
opt_level = 3
disabled_pass = ["AlterOpLayout"]
on_save = ["cleanup"]
[config]
"relay.FuseOps.max_depth" = 16
[pipelines]
cleanup = "InferType, FoldConstant"
[passes.Echo]
command = ["cat"]
required = ["InferType"]
"#,
            PathBuf::from("/tmp"),
        )
        .unwrap();
        assert_eq!(project.opt_level, Some(3));
        assert_eq!(project.pipelines["cleanup"], "InferType, FoldConstant");
        assert_eq!(
            project.config["relay.FuseOps.max_depth"],
            ConfigValue::Int(16)
        );
        assert_eq!(project.passes["Echo"].command, ["cat"]);
        assert_eq!(project.context_options().opt_level, 3);
    }

    #[test]
    fn rejects_what_it_cannot_use() {
        let unknown = Project::parse("[config]\n\"relay.nope\" = 1\n", PathBuf::new()).unwrap_err();
        assert!(
            unknown.contains("Invalid config option 'relay.nope'"),
            "{unknown}"
        );
        let typed = Project::parse(
            "[config]\n\"relay.FuseOps.max_depth\" = \"x\"\n",
            PathBuf::new(),
        )
        .unwrap_err();
        assert!(
            typed.contains("to have type IntImm but get string"),
            "{typed}"
        );
        let save = Project::parse("on_save = [\"x\"]\n", PathBuf::new()).unwrap_err();
        assert!(save.contains("does not define"), "{save}");
        let field = Project::parse("opt_levl = 3\n", PathBuf::new()).unwrap_err();
        assert!(field.contains("unknown field"), "{field}");
    }

    #[test]
    fn a_python_pass_runs_through_the_relay_tools_host() {
        let project = Project::parse(
            "[passes.ReplaceRelu]\npython = \"mypasses:ReplaceRelu\"\nopt_level = 1\n",
            PathBuf::from("/tmp"),
        )
        .unwrap();
        let program = project.passes["ReplaceRelu"].program();
        assert_eq!(
            program[1..],
            ["-m", "relay_tools.host", "mypasses:ReplaceRelu"]
        );
        assert!(!program[0].is_empty());
    }

    #[test]
    fn a_pass_is_a_command_or_a_python_pass() {
        let both = Project::parse(
            "[passes.P]\ncommand = [\"cat\"]\npython = \"m:P\"\n",
            PathBuf::new(),
        )
        .unwrap_err();
        assert!(both.contains("either `command` or `python`"), "{both}");
        let neither = Project::parse("[passes.P]\nopt_level = 1\n", PathBuf::new()).unwrap_err();
        assert!(
            neither.contains("`command` must name a program"),
            "{neither}"
        );
        for bad in ["mypasses", "my-passes:P", ":P", "m:", "m:1P"] {
            let error =
                Project::parse(&format!("[passes.P]\npython = \"{bad}\"\n"), PathBuf::new())
                    .unwrap_err();
            assert!(
                error.contains("must be `module:attribute`"),
                "{bad}: {error}"
            );
        }
        assert!(Project::parse(
            "[passes.P]\npython = \"pkg.mod:Cls.attr\"\n",
            PathBuf::new()
        )
        .is_ok());
    }
}
