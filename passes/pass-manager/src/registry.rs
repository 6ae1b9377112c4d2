//! The pass registry: every pass by name, with its parameters and their
//! defaults, a one-line description, its `PassInfo` and a factory.
//!
//! Each pass declares its entry in its own file with the builder of
//! [`crate::pass_builder`] (`PassSpec::function("FoldConstant",
//! 2).param(…).build(…)`). Built-in passes register themselves when the
//! registry is first used; downstream crates add their own with [`register`]
//! (so their passes show up in `relay passes`, in pipelines and in the
//! editor). `required` names
//! are resolved here, as TVM's `GetPass` does: `transform.X` and
//! `relay._transform.X` are accepted as spellings of `X`.

use crate::pipeline::PipelineValue;
use crate::{Pass, PassContext, PassInfo};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Function, IRModule};
use std::sync::{Arc, OnceLock, RwLock};

/// The type of a pass parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    Int,
    Float,
    Bool,
    String,
    List,
    Map,
}

impl ParamType {
    pub fn accepts(self, value: &PipelineValue) -> bool {
        matches!(
            (self, value),
            (ParamType::Int, PipelineValue::Int(_))
                | (
                    ParamType::Float,
                    PipelineValue::Float(_) | PipelineValue::Int(_)
                )
                | (ParamType::Bool, PipelineValue::Bool(_))
                | (ParamType::String, PipelineValue::Str(_))
                | (ParamType::List, PipelineValue::List(_))
                | (ParamType::Map, PipelineValue::Map(_))
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            ParamType::Int => "an integer",
            ParamType::Float => "a float",
            ParamType::Bool => "a boolean",
            ParamType::String => "a string",
            ParamType::List => "a list",
            ParamType::Map => "a map",
        }
    }
}

/// One parameter of a pass.
#[derive(Debug, Clone)]
pub struct ParamSpec {
    pub name: String,
    pub ty: ParamType,
    pub default: PipelineValue,
    pub doc: String,
    /// The values an integer parameter accepts (both ends included), as
    /// TVM's attribute bounds; `None` accepts any 64-bit integer.
    pub range: Option<(i64, i64)>,
}

impl ParamSpec {
    pub fn new(name: &str, ty: ParamType, default: PipelineValue, doc: &str) -> ParamSpec {
        ParamSpec {
            name: name.into(),
            ty,
            default,
            doc: doc.into(),
            range: None,
        }
    }

    /// An integer parameter (bound it with [`ParamSpec::with_range`]).
    pub fn int(name: &str, default: i64, doc: &str) -> ParamSpec {
        ParamSpec::new(name, ParamType::Int, PipelineValue::Int(default), doc)
    }

    /// A boolean parameter.
    pub fn bool(name: &str, default: bool, doc: &str) -> ParamSpec {
        ParamSpec::new(name, ParamType::Bool, PipelineValue::Bool(default), doc)
    }

    /// A string parameter.
    pub fn string(name: &str, default: &str, doc: &str) -> ParamSpec {
        ParamSpec::new(
            name,
            ParamType::String,
            PipelineValue::Str(default.into()),
            doc,
        )
    }

    /// A list parameter with the given default items.
    pub fn list(name: &str, default: Vec<PipelineValue>, doc: &str) -> ParamSpec {
        ParamSpec::new(name, ParamType::List, PipelineValue::List(default), doc)
    }

    /// A map parameter whose default is the empty map.
    pub fn map(name: &str, doc: &str) -> ParamSpec {
        ParamSpec::new(name, ParamType::Map, PipelineValue::Map(Vec::new()), doc)
    }

    /// Bounds an integer parameter to `low..=high`.
    pub fn with_range(mut self, low: i64, high: i64) -> ParamSpec {
        self.range = Some((low, high));
        self
    }

    /// The accepted values in words (`-1..=4`, `0..`), if bounded.
    pub fn range_text(&self) -> Option<String> {
        let (low, high) = self.range?;
        Some(match (low, high) {
            (low, i64::MAX) => format!("{low}.."),
            (i64::MIN, high) => format!("..={high}"),
            (low, high) => format!("{low}..={high}"),
        })
    }

    /// Why `value` is outside the parameter's range, if it is.
    pub fn out_of_range(&self, value: &PipelineValue) -> Option<String> {
        let (PipelineValue::Int(v), Some((low, high))) = (value, self.range) else {
            return None;
        };
        (*v < low || *v > high).then(|| {
            format!(
                "must be in {}, not {v}",
                self.range_text().unwrap_or_default()
            )
        })
    }
}

/// The kind of a pass, as TVM classifies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassKind {
    Module,
    Function,
    Sequential,
}

impl PassKind {
    /// The kind's name in `relay passes` and the editor's pass list.
    pub fn name(self) -> &'static str {
        match self {
            PassKind::Module => "module",
            PassKind::Function => "function",
            PassKind::Sequential => "sequential",
        }
    }
}

/// The arguments a factory receives: every parameter, defaults filled in.
#[derive(Debug, Clone, Default)]
pub struct PassArgs {
    values: Vec<(String, PipelineValue)>,
}

impl PassArgs {
    /// Arguments as given (the registry's [`create`] fills in defaults).
    pub fn from_values(values: Vec<(String, PipelineValue)>) -> PassArgs {
        PassArgs { values }
    }

    pub fn get(&self, name: &str) -> Option<&PipelineValue> {
        self.values.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Some(PipelineValue::Int(i)) => *i,
            _ => 0,
        }
    }

    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(PipelineValue::Float(x)) => *x,
            Some(PipelineValue::Int(i)) => *i as f64,
            _ => 0.0,
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        matches!(self.get(name), Some(PipelineValue::Bool(true)))
    }

    pub fn string(&self, name: &str) -> String {
        match self.get(name) {
            Some(PipelineValue::Str(s)) => s.clone(),
            _ => String::new(),
        }
    }

    /// A list-of-strings parameter (`targets=["dnnl", "cmsis-nn"]`; the
    /// pipeline reader already refuses a non-list value); an absent one is
    /// empty. An element that is not a string is an error naming the
    /// parameter.
    pub fn string_list(&self, name: &str) -> Result<Vec<String>, String> {
        match self.get(name) {
            Some(PipelineValue::List(items)) => items
                .iter()
                .map(|item| match item {
                    PipelineValue::Str(s) => Ok(s.clone()),
                    other => Err(format!(
                        "{name} must be a list of strings, found {}",
                        other.type_name()
                    )),
                })
                .collect(),
            _ => Ok(Vec::new()),
        }
    }

    /// The arguments that differ from their defaults, as pipeline text
    /// (`fuse_opt_level=2`), for printing a pass back.
    pub fn non_default(&self, params: &[ParamSpec]) -> Vec<String> {
        params
            .iter()
            .filter_map(|param| {
                let value = self.get(&param.name)?;
                (*value != param.default).then(|| format!("{}={value}", param.name))
            })
            .collect()
    }
}

/// Makes a pass from its arguments.
pub type Factory = Arc<dyn Fn(&PassArgs) -> Result<Arc<dyn Pass>, String> + Send + Sync>;

/// A registered pass.
#[derive(Clone)]
pub struct PassSpec {
    /// The constructor name used in pipelines (`CombineParallelConv2D`).
    pub name: String,
    /// The pass's own info (its name may differ from the constructor's).
    pub info: PassInfo,
    pub kind: PassKind,
    pub params: Vec<ParamSpec>,
    pub description: String,
    pub factory: Factory,
}

impl std::fmt::Debug for PassSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassSpec")
            .field("name", &self.name)
            .field("info", &self.info)
            .field("kind", &self.kind)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl PassSpec {
    /// The pipeline text for a pass made with `args`.
    pub fn describe(&self, args: &PassArgs) -> String {
        describe_args(&self.name, &self.params, args)
    }
}

/// Registers a function pass without parameters in one line, so that it can
/// be named in pipelines (`-p "MyPass, FoldConstant"`), is listed by
/// `relay passes` and is offered by the editor:
/// `register_function_pass("ReluToClip", 1, &["InferType"], "…", |f, _m, _ctx| Ok(f))`.
pub fn register_function_pass(
    name: &str,
    opt_level: u32,
    required: &[&str],
    description: &str,
    transform: impl Fn(Function, &IRModule, &PassContext) -> Result<Function, Diagnostic>
        + Send
        + Sync
        + 'static,
) {
    register(
        PassSpec::function(name, opt_level)
            .required(required)
            .doc(description)
            .transform(transform),
    );
}

/// Registers a module pass without parameters in one line (see
/// [`register_function_pass`]).
pub fn register_module_pass(
    name: &str,
    opt_level: u32,
    required: &[&str],
    description: &str,
    transform: impl Fn(IRModule, &PassContext) -> Result<IRModule, Diagnostic> + Send + Sync + 'static,
) {
    register(
        PassSpec::module(name, opt_level)
            .required(required)
            .doc(description)
            .transform(transform),
    );
}

/// The pipeline text for pass `name` made with `args`: the name, and the
/// arguments that differ from their defaults (`FuseOps(fuse_opt_level=2)`).
pub fn describe_args(name: &str, params: &[ParamSpec], args: &PassArgs) -> String {
    let shown = args.non_default(params);
    if shown.is_empty() {
        name.to_string()
    } else {
        format!("{name}({})", shown.join(", "))
    }
}

/// Why a pass could not be made; `argument` indexes the offending keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateError {
    pub message: String,
    pub argument: Option<usize>,
}

fn registry() -> &'static RwLock<Vec<PassSpec>> {
    static REGISTRY: OnceLock<RwLock<Vec<PassSpec>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(Vec::new()))
}

/// Adds a set of passes ahead of those registered so far, skipping any name
/// already taken (a registration made earlier wins). This is how
/// `relay_transforms::register_builtin_passes` fills the registry: the pass
/// manager itself knows no concrete pass.
pub fn register_defaults(defaults: Vec<PassSpec>) {
    let mut specs = registry().write().unwrap_or_else(|e| e.into_inner());
    let mut merged: Vec<PassSpec> = defaults
        .into_iter()
        .filter(|d| !specs.iter().any(|s| s.name == d.name))
        .collect();
    merged.append(&mut specs);
    *specs = merged;
}

/// Whether no pass at all is registered (a binary that forgot to call
/// `relay_transforms::register_builtin_passes()`), for error messages.
pub fn is_empty() -> bool {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .is_empty()
}

/// Adds a pass, replacing any pass registered under the same name.
pub fn register(spec: PassSpec) {
    let mut specs = registry().write().unwrap_or_else(|e| e.into_inner());
    specs.retain(|s| s.name != spec.name);
    specs.push(spec);
}

/// The pass registered under a constructor name (or its `PassInfo` name).
pub fn lookup(name: &str) -> Option<PassSpec> {
    let name = name
        .strip_prefix("relay._transform.")
        .or_else(|| name.strip_prefix("transform."))
        .unwrap_or(name);
    let specs = registry().read().unwrap_or_else(|e| e.into_inner());
    specs
        .iter()
        .find(|s| s.name == name)
        .or_else(|| specs.iter().find(|s| s.info.name == name))
        .cloned()
}

/// Every registered pass, sorted by name.
pub fn all() -> Vec<PassSpec> {
    let mut specs = registry().read().unwrap_or_else(|e| e.into_inner()).clone();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    specs
}

/// Makes a pass from keyword arguments, checking them against the
/// parameters (unknown names get a did-you-mean, wrong types say what is
/// expected) and filling in defaults.
pub fn create(name: &str, args: &[(String, PipelineValue)]) -> Result<Arc<dyn Pass>, CreateError> {
    let Some(spec) = lookup(name) else {
        if is_empty() {
            return Err(CreateError {
                message: format!(
                    "unknown pass `{name}`: no pass is registered (call \
                     `relay_transforms::register_builtin_passes()` at start)"
                ),
                argument: None,
            });
        }
        let names: Vec<String> = all().into_iter().map(|s| s.name).collect();
        let hint = relay_ir::op::did_you_mean(name, names.iter().map(String::as_str))
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        return Err(CreateError {
            message: format!("unknown pass `{name}`{hint} (`relay passes` lists them)"),
            argument: None,
        });
    };
    let mut values = Vec::new();
    for (index, (key, value)) in args.iter().enumerate() {
        let Some(param) = spec.params.iter().find(|p| p.name == *key) else {
            let hint = relay_ir::op::did_you_mean(key, spec.params.iter().map(|p| p.name.as_str()))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            let accepted = if spec.params.is_empty() {
                "it takes no parameters".to_string()
            } else {
                let names: Vec<&str> = spec.params.iter().map(|p| p.name.as_str()).collect();
                format!("it takes {}", names.join(", "))
            };
            return Err(CreateError {
                message: format!("{name} has no parameter `{key}`{hint} ({accepted})"),
                argument: Some(index),
            });
        };
        if !param.ty.accepts(value) {
            return Err(CreateError {
                message: format!(
                    "`{key}` of {name} takes {}, not {}",
                    param.ty.name(),
                    value.type_name()
                ),
                argument: Some(index),
            });
        }
        if let Some(why) = param.out_of_range(value) {
            return Err(CreateError {
                message: format!("`{key}` of {name} {why}"),
                argument: Some(index),
            });
        }
        values.push((key.clone(), value.clone()));
    }
    for param in &spec.params {
        if !values.iter().any(|(k, _)| *k == param.name) {
            values.push((param.name.clone(), param.default.clone()));
        }
    }
    (spec.factory)(&PassArgs { values }).map_err(|message| CreateError {
        message,
        argument: None,
    })
}

/// Makes a pass by name with default arguments: how `required` names are
/// resolved (TVM's `GetPass`).
pub fn create_by_name(name: &str) -> Result<Arc<dyn Pass>, String> {
    create(name, &[]).map_err(|e| match lookup(name) {
        None => format!("Cannot use {name} to create the pass"),
        Some(_) => e.message,
    })
}
