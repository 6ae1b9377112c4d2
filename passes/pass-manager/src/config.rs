//! PassContext configuration keys: each key is registered with the type of
//! its value (TVM's `TVM_REGISTER_PASS_CONFIG_OPTION`); a context is
//! validated against the registry when it is made.

use std::collections::BTreeMap;
use std::fmt;

/// The type a configuration key takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    Bool,
    Int,
    Float,
    String,
    /// A string-keyed map (TVM converts it to an object by reflection).
    Map,
}

impl fmt::Display for ConfigType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            // TVM's `Bool` and `Integer` are both `IntImm`.
            ConfigType::Bool | ConfigType::Int => "IntImm",
            ConfigType::Float => "FloatImm",
            ConfigType::String => "runtime.String",
            ConfigType::Map => "Map",
        })
    }
}

/// A configuration value.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Map(BTreeMap<String, ConfigValue>),
}

impl ConfigValue {
    pub fn type_name(&self) -> &'static str {
        match self {
            ConfigValue::Bool(_) | ConfigValue::Int(_) => "IntImm",
            ConfigValue::Float(_) => "FloatImm",
            ConfigValue::String(_) => "runtime.String",
            ConfigValue::Map(_) => "Map",
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ConfigValue::Bool(b) => Some(*b),
            ConfigValue::Int(i) => Some(*i != 0),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            ConfigValue::Int(i) => Some(*i),
            ConfigValue::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    /// Whether this value may be given for a key of type `ty` (TVM: `Bool`
    /// and `Integer` are both `IntImm`).
    fn fits(&self, ty: ConfigType) -> bool {
        matches!(
            (self, ty),
            (
                ConfigValue::Bool(_) | ConfigValue::Int(_),
                ConfigType::Bool | ConfigType::Int
            ) | (ConfigValue::Float(_), ConfigType::Float)
                | (ConfigValue::String(_), ConfigType::String)
                | (ConfigValue::Map(_), ConfigType::Map)
        )
    }

    /// Reads a command-line value (`true`, `3`, `0.5`, `"text"`, `text`) for
    /// a key of type `ty`.
    pub fn parse_for(text: &str, ty: ConfigType) -> Result<ConfigValue, String> {
        let text = text.trim();
        match ty {
            ConfigType::Bool => match text {
                "true" | "True" | "1" => Ok(ConfigValue::Bool(true)),
                "false" | "False" | "0" => Ok(ConfigValue::Bool(false)),
                _ => Err(format!("expected true or false, found `{text}`")),
            },
            ConfigType::Int => text
                .parse()
                .map(ConfigValue::Int)
                .map_err(|_| format!("expected an integer, found `{text}`")),
            ConfigType::Float => text
                .parse()
                .map(ConfigValue::Float)
                .map_err(|_| format!("expected a number, found `{text}`")),
            ConfigType::String => Ok(ConfigValue::String(
                serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_string()),
            )),
            ConfigType::Map => Err("map values cannot be given on the command line".into()),
        }
    }
}

impl fmt::Display for ConfigValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigValue::Bool(b) => write!(f, "{b}"),
            ConfigValue::Int(i) => write!(f, "{i}"),
            ConfigValue::Float(x) => write!(f, "{x}"),
            ConfigValue::String(s) => write!(f, "{s:?}"),
            ConfigValue::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k:?}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// The registered keys: TVM v0.13's Relay keys and the ones our passes read.
const KEYS: &[(&str, ConfigType)] = &[
    ("relay.FuseOps.max_depth", ConfigType::Int),
    ("relay.FuseOps.link_params", ConfigType::Bool),
    ("relay.fallback_device_type", ConfigType::Int),
    ("relay.backend.use_auto_scheduler", ConfigType::Bool),
    ("relay.backend.use_meta_schedule", ConfigType::Bool),
    ("relay.backend.use_meta_schedule_dispatch", ConfigType::Int),
    ("relay.backend.tir_converter", ConfigType::String),
    (
        "relay.ToMixedPrecision.keep_orig_output_dtype",
        ConfigType::Bool,
    ),
    ("relay.remove_standalone_reshapes.enable", ConfigType::Bool),
    ("relay.frontend.fill_span", ConfigType::Bool),
    ("ir.enable_si_builder", ConfigType::Bool),
    ("testing.immutable_module", ConfigType::Bool),
    ("tir.disable_vectorize", ConfigType::Bool),
    ("tir.disable_assert", ConfigType::Bool),
    ("tir.noalias", ConfigType::Bool),
    ("tir.detect_global_barrier", ConfigType::Bool),
    ("tir.instrument_bound_checkers", ConfigType::Bool),
    ("tir.disable_storage_rewrite", ConfigType::Bool),
    ("tir.is_entry_func", ConfigType::Bool),
    ("tir.add_lower_pass", ConfigType::Map),
    ("relay.fold_constant.max_elements", ConfigType::Int),
];

/// The type of a registered key.
pub fn config_type(key: &str) -> Option<ConfigType> {
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, t)| *t)
}

/// Every registered key with its type, sorted (TVM's `list_configs`).
pub fn list_configs() -> Vec<(&'static str, ConfigType)> {
    let mut keys = KEYS.to_vec();
    keys.sort_by_key(|(k, _)| *k);
    keys
}

/// Checks a configuration against the registry with TVM's messages.
pub fn validate(config: &BTreeMap<String, ConfigValue>) -> Result<(), String> {
    for (key, value) in config {
        let Some(ty) = config_type(key) else {
            let candidates: Vec<&str> = list_configs().into_iter().map(|(k, _)| k).collect();
            return Err(format!(
                "Invalid config option '{key}' candidates are: {}",
                candidates.join(", ")
            ));
        };
        if !value.fits(ty) {
            return Err(format!(
                "expect config {key} to have type {ty} but get {}",
                value.type_name()
            ));
        }
    }
    Ok(())
}
