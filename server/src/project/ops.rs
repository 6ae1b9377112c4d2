//! `[ops.NAME]` in `relay.toml`: operators a project declares (a vendor's,
//! an in-house one), so that files calling them are checked properly.
//!
//! ```toml
//! [ops."vendor.gemm"]
//! args = ["data", "weight"]
//! attrs = { units = "int = 0", relu = "bool = false" }   # as in ops.def: type = default
//! output = "shape(in0[0], units)"   # "input N" | "broadcast" | a type | shape(…)
//! output_dtype = 0                  # shape(…): the dtype of this input (default 0)
//! pattern = "OutEWiseFusable"       # fusion pattern (default Opaque)
//! doc = "GEMM on the vendor's accelerator"
//! ```
//!
//! `shape(…)` lists the output's dimensions: numbers, `inN[axis]` (a
//! dimension of input N; a negative axis counts from the end) and names of
//! integer attributes. The declaration goes to the library's operator
//! registry (`relay_passes::op::custom`), read by lowering, type inference,
//! hover, completion and `relay ops` alike.

use relay_passes::op::custom::{self, Declaration, DimRule, OutputRule};
use serde::Deserialize;
use std::collections::BTreeMap;

/// One `[ops.NAME]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpConfig {
    #[serde(default)]
    pub args: Vec<String>,
    /// Field name → `type = default` (or `type required`), in name order.
    #[serde(default)]
    pub attrs: BTreeMap<String, String>,
    pub output: String,
    #[serde(default)]
    pub output_dtype: usize,
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub doc: String,
}

/// The rule written `output`.
fn output_rule(config: &OpConfig) -> Result<OutputRule, String> {
    let output = config.output.trim();
    if output == "broadcast" {
        return Ok(OutputRule::Broadcast);
    }
    if let Some(n) = output.strip_prefix("input ") {
        let i: usize = n
            .trim()
            .parse()
            .map_err(|_| format!("`output = \"{output}\"`: expected `input N`"))?;
        if i >= config.args.len() {
            return Err(format!(
                "`output = \"{output}\"`: there are {} arguments",
                config.args.len()
            ));
        }
        return Ok(OutputRule::SameAs(i));
    }
    if let Some(inner) = output
        .strip_prefix("shape(")
        .and_then(|s| s.strip_suffix(')'))
    {
        let mut dims = Vec::new();
        for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            dims.push(dim_rule(part, config)?);
        }
        if config.output_dtype >= config.args.len() {
            return Err(format!(
                "`output_dtype = {}`: there are {} arguments",
                config.output_dtype,
                config.args.len()
            ));
        }
        return Ok(OutputRule::Shape {
            dims,
            dtype_of: config.output_dtype,
        });
    }
    let (module, diagnostics) = relay_passes::lower::parse_and_lower(
        "relay.toml",
        &format!("#[version = \"0.0.5\"]\ndef @f(%x: {output}) {{ %x }}\n"),
    );
    let ty = module
        .function("f")
        .filter(|_| !diagnostics.has_errors())
        .and_then(|f| {
            f.params()
                .first()
                .and_then(|p| p.type_annotation().cloned())
        })
        .ok_or_else(|| {
            format!(
                "`output = \"{output}\"`: expected `input N`, `broadcast`, `shape(…)` or a type"
            )
        })?;
    Ok(OutputRule::Fixed(ty))
}

fn dim_rule(part: &str, config: &OpConfig) -> Result<DimRule, String> {
    if let Ok(n) = part.parse::<i64>() {
        return Ok(DimRule::Const(n));
    }
    if let Some(rest) = part.strip_prefix("in") {
        if let Some((input, axis)) = rest.strip_suffix(']').and_then(|r| r.split_once('[')) {
            let input: usize = input
                .parse()
                .map_err(|_| format!("`{part}`: expected `inN[axis]`"))?;
            let axis: i64 = axis
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: expected `inN[axis]`"))?;
            if input >= config.args.len() {
                return Err(format!(
                    "`{part}`: there are {} arguments",
                    config.args.len()
                ));
            }
            return Ok(DimRule::Input { input, axis });
        }
    }
    if config.attrs.contains_key(part) {
        return Ok(DimRule::Attr(part.to_string()));
    }
    Err(format!(
        "`{part}` in `output`: expected a number, `inN[axis]` or an attribute name"
    ))
}

/// The declaration of the operator `name`, in the operator table's format.
pub fn declaration(name: &str, config: &OpConfig) -> Result<Declaration, String> {
    let context = |e: String| format!("[ops.\"{name}\"]: {e}");
    let rule = output_rule(config).map_err(context)?;
    let valid = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    };
    if !valid(name)
        || config.args.iter().any(|a| !valid(a))
        || config.attrs.keys().any(|a| !valid(a))
    {
        return Err(context(
            "names are letters, digits, `_` and `.`".to_string(),
        ));
    }
    let mut text = String::new();
    let attrs_key = format!("relay.attrs.declared.{name}");
    if !config.attrs.is_empty() {
        text.push_str(&format!("attrs {attrs_key}\n"));
        for (field, spec) in &config.attrs {
            if spec.contains('\n') {
                return Err(context(format!("attribute `{field}`: one line")));
            }
            text.push_str(&format!("  {field}: {}\n", spec.trim()));
        }
        text.push('\n');
    }
    text.push_str(&format!("op {name}\n"));
    if config.args.is_empty() {
        text.push_str("  args: none\n");
    } else {
        let args: Vec<String> = config
            .args
            .iter()
            .map(|a| format!("{a} (Tensor)"))
            .collect();
        text.push_str(&format!("  args: {}\n", args.join(", ")));
    }
    if !config.attrs.is_empty() {
        text.push_str(&format!("  attrs: {attrs_key}\n"));
    }
    text.push_str(&format!(
        "  pattern: {}\n",
        config.pattern.as_deref().unwrap_or("Opaque")
    ));
    let relation = match rule {
        OutputRule::Broadcast => "Broadcast",
        _ => custom::DECLARED_RELATION,
    };
    text.push_str(&format!("  rel: {relation}\n"));
    let doc = if config.doc.trim().is_empty() {
        "Declared in relay.toml."
    } else {
        config.doc.trim()
    };
    if doc.contains('\n') {
        return Err(context("`doc` is one line".to_string()));
    }
    text.push_str(&format!("  doc: {doc}\n"));
    Ok(Declaration {
        table_text: text,
        rule,
    })
}

/// Declares every operator of `ops` (see [`custom::declare`]).
pub fn declare_all(ops: &BTreeMap<String, OpConfig>) -> Result<(), String> {
    for (name, config) in ops {
        let declaration = declaration(name, config)?;
        custom::declare(declaration).map_err(|e| format!("[ops.\"{name}\"]: {e}"))?;
    }
    Ok(())
}
