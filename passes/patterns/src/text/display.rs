//! Writes a pattern back in the text syntax. A pattern node used more than
//! once is written once as a binding (`$1 = nn.relu(*); add($1, $1)`; a
//! shared wildcard is just `$1`), so the text reads back to a pattern with
//! the same sharing, and with it the same matches.

use crate::pattern::{post_order, Pattern, PatternKind, ShapeDim};
use relay_ir::printer::{print_expr, print_type, PrintOptions};
use relay_ir::AttrValue;
use std::collections::HashMap;
use std::fmt::Write;

/// The pattern in the text syntax.
pub fn pattern_to_text(pattern: &Pattern) -> String {
    let order = post_order(pattern);
    let mut uses: HashMap<usize, usize> = HashMap::new();
    for p in &order {
        for c in p.children() {
            *uses.entry(c.addr()).or_default() += 1;
        }
    }
    let mut names: HashMap<usize, String> = HashMap::new();
    let mut out = String::new();
    for p in &order {
        if uses.get(&p.addr()).copied().unwrap_or(0) > 1 && !is_op(p) {
            let name = format!("${}", names.len() + 1);
            if !matches!(p.kind(), PatternKind::Wildcard) {
                let text = write_node(p, &names);
                let _ = write!(out, "{name} = {text}; ");
            }
            names.insert(p.addr(), name);
        }
    }
    out.push_str(&write_node(pattern, &names));
    out
}

fn is_op(p: &Pattern) -> bool {
    matches!(p.kind(), PatternKind::Expr(e) if e.as_op().is_some())
}

fn write(p: &Pattern, names: &HashMap<usize, String>) -> String {
    match names.get(&p.addr()) {
        Some(name) => name.clone(),
        None => write_node(p, names),
    }
}

/// A sub-pattern in a position that binds tighter than `|`.
fn write_atom(p: &Pattern, names: &HashMap<usize, String>) -> String {
    let text = write(p, names);
    if !names.contains_key(&p.addr()) && matches!(p.kind(), PatternKind::Alt(..)) {
        format!("({text})")
    } else {
        text
    }
}

fn list(items: &[Pattern], names: &HashMap<usize, String>) -> String {
    items
        .iter()
        .map(|p| write(p, names))
        .collect::<Vec<_>>()
        .join(", ")
}

fn write_node(p: &Pattern, names: &HashMap<usize, String>) -> String {
    match p.kind() {
        PatternKind::Wildcard => "*".to_string(),
        PatternKind::Var { name } if name.is_empty() => "is_var()".to_string(),
        PatternKind::Var { name } => format!("%{name}"),
        PatternKind::Constant => "is_constant()".to_string(),
        PatternKind::Expr(e) => match e.as_op() {
            Some(op) => op.name.clone(),
            None => {
                let printed = print_expr(e, &PrintOptions::default());
                let body = printed
                    .strip_prefix("#[version = \"0.0.5\"]")
                    .unwrap_or(&printed);
                format!("is_expr({})", body.trim())
            }
        },
        PatternKind::Call { callee, args } => {
            let callee_text = match callee.kind() {
                PatternKind::Expr(e) if e.as_op().is_some() => write(callee, names),
                PatternKind::Wildcard | PatternKind::Var { .. } => write(callee, names),
                _ if names.contains_key(&callee.addr()) => write(callee, names),
                _ => format!("({})", write(callee, names)),
            };
            match args {
                None => format!("{callee_text}(...)"),
                Some(args) => format!("{callee_text}({})", list(args, names)),
            }
        }
        PatternKind::Function { params, body } => match params {
            None => format!("fn(...) {{ {} }}", write(body, names)),
            Some(ps) => format!("fn({}) {{ {} }}", list(ps, names), write(body, names)),
        },
        PatternKind::Tuple(None) => "(...)".to_string(),
        PatternKind::Tuple(Some(fields)) if fields.len() == 1 => {
            format!("({},)", write(&fields[0], names))
        }
        PatternKind::Tuple(Some(fields)) => format!("({})", list(fields, names)),
        PatternKind::TupleGetItem { tuple, index } => {
            let index = index.map_or("*".to_string(), |i| i.to_string());
            format!("{}.{index}", write_postfix_base(tuple, names))
        }
        PatternKind::If {
            cond,
            then_branch,
            else_branch,
        } => format!(
            "is_if({}, {}, {})",
            write(cond, names),
            write(then_branch, names),
            write(else_branch, names)
        ),
        PatternKind::Let { var, value, body } => format!(
            "is_let({}, {}, {})",
            write(var, names),
            write(value, names),
            write(body, names)
        ),
        PatternKind::Alt(left, right) => {
            format!("{} | {}", write(left, names), write_atom(right, names))
        }
        PatternKind::Attr { pattern, attrs } => {
            let entries: Vec<String> = attrs
                .iter()
                .map(|(k, v)| format!("{k}={}", attr_text(v)))
                .collect();
            format!(
                "{} {{{}}}",
                write_postfix_base(pattern, names),
                entries.join(", ")
            )
        }
        PatternKind::Type { pattern, ty } => format!(
            "{}.has_type({})",
            write_postfix_base(pattern, names),
            print_type(ty)
        ),
        PatternKind::DataType { pattern, dtype } => format!(
            "{}.has_dtype(\"{dtype}\")",
            write_postfix_base(pattern, names)
        ),
        PatternKind::Shape { pattern, shape } => {
            let dims: Vec<String> = shape
                .iter()
                .map(|d| match d {
                    ShapeDim::Known(v) => v.to_string(),
                    ShapeDim::Any => "?".to_string(),
                })
                .collect();
            format!(
                "{}.has_shape([{}])",
                write_postfix_base(pattern, names),
                dims.join(", ")
            )
        }
        PatternKind::Dominator {
            parent,
            path,
            child,
        } => format!(
            "dominates({}, {}, {})",
            write(parent, names),
            write(path, names),
            write(child, names)
        ),
    }
}

/// The base of a postfix form (`.0`, `{…}`, `.has_…`): an alternative
/// needs parentheses there.
fn write_postfix_base(p: &Pattern, names: &HashMap<usize, String>) -> String {
    write_atom(p, names)
}

fn attr_text(v: &AttrValue) -> String {
    match v {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::IntImm { value, .. } => value.to_string(),
        AttrValue::Double(x) | AttrValue::FloatImm { value: x, .. } => format!("{x:?}"),
        AttrValue::Bool(b) => b.to_string(),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::DataType(d) => format!("\"{d}\""),
        AttrValue::Null => "None".to_string(),
        AttrValue::Array(items) => format!(
            "[{}]",
            items.iter().map(attr_text).collect::<Vec<_>>().join(", ")
        ),
        other => format!("{other:?}"),
    }
}
