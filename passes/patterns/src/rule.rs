//! Rewrite rules written as text: `PATTERN => REPLACEMENT`, where the
//! replacement is a Relay expression in which `$name` stands for what the
//! capture `$name` of the pattern matched (after the rewrite of the
//! expressions below it, as TVM hands `node_map` to a callback).
//!
//! ```text
//! negative(negative($x)) => $x
//! nn.conv2d($x, $w) |> add(_, $b) => nn.bias_add(nn.conv2d($x, $w), $b)
//! ```

use crate::rewrite::Callback;
use crate::text::{parse_rule, NamedPatterns, ParsedPattern, PatternError};
use relay_ir::rewrite::rewrite_post_order;
use relay_ir::{Expr, ExprKind, Function, VarId};
use relay_syntax::{TextRange, TextSize};
use std::collections::HashMap;
use std::sync::Arc;

/// A parsed rewrite rule.
#[derive(Debug, Clone)]
pub struct RewriteRule {
    pub pattern: ParsedPattern,
    /// The replacement as a function of the captures (one parameter per
    /// capture, in the pattern's order).
    template: Function,
}

/// Parses `PATTERN => REPLACEMENT`.
pub fn parse_rewrite_rule(
    text: &str,
    named: NamedPatterns<'_>,
) -> Result<RewriteRule, PatternError> {
    let (pattern, offset, template_text) = parse_rule(text, named)?;
    // `$x` → `%x`: the same length, so ranges in the Relay text are ranges
    // in the rule.
    let relay_text = template_text.replace('$', "%");
    let params: Vec<String> = pattern
        .captures
        .iter()
        .map(|(n, _)| format!("%{n}"))
        .collect();
    let prefix = format!("fn ({}) {{ ", params.join(", "));
    let wrapped = format!("{prefix}{relay_text} }}");
    let (expr, diagnostics) = relay_lower::parse_and_lower_expr("rule", &wrapped);
    if let Some(d) = diagnostics.iter().find(|d| d.is_error()) {
        let at = d.span.map_or_else(
            || {
                TextRange::new(
                    TextSize::from(offset as u32),
                    TextSize::from(text.len() as u32),
                )
            },
            |s| {
                let clamp = |x: TextSize| {
                    offset
                        + usize::from(x)
                            .saturating_sub(prefix.len())
                            .min(template_text.len())
                };
                let (a, b) = (clamp(s.range.start()), clamp(s.range.end()));
                TextRange::new(TextSize::from(a as u32), TextSize::from(b.max(a) as u32))
            },
        );
        return Err(PatternError {
            message: format!("in the replacement: {}", d.message),
            range: at,
        });
    }
    let template = expr.as_function().ok_or_else(|| PatternError {
        message: "the replacement must be one Relay expression".to_string(),
        range: TextRange::new(
            TextSize::from(offset as u32),
            TextSize::from(text.len() as u32),
        ),
    })?;
    Ok(RewriteRule { pattern, template })
}

impl RewriteRule {
    /// The replacement for one match: the template with each capture's
    /// parameter replaced by what the capture matched. `None` when a
    /// capture the replacement uses matched nothing (it was in an
    /// alternative that did not match).
    pub fn instantiate(&self, node_map: &crate::NodeMap) -> Option<Expr> {
        let mut by_var: HashMap<VarId, Expr> = HashMap::new();
        for (param, (_, capture)) in self.template.params().iter().zip(&self.pattern.captures) {
            if let Some(found) = node_map.get(capture).first() {
                by_var.insert(param.id(), found.clone());
            }
        }
        let mut missing = false;
        let out = rewrite_post_order(self.template.body(), |_, post| match post.kind() {
            ExprKind::Var(v) => match by_var.get(&v.id) {
                Some(e) => e.clone(),
                None if self.template.params().iter().any(|p| p.id() == v.id) => {
                    missing = true;
                    post
                }
                None => post,
            },
            _ => post,
        });
        (!missing).then_some(out)
    }

    /// The rule as a rewrite callback.
    pub fn into_callback(self) -> Callback {
        let pattern = self.pattern.pattern.clone();
        let rule = Arc::new(self);
        Callback::new(pattern, move |_pre, post, node_map| {
            rule.instantiate(node_map).unwrap_or_else(|| post.clone())
        })
    }
}
