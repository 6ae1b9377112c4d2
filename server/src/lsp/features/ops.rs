//! Operators as the features present them: documentation, the signature
//! `name(arg, …, attr=default)`, and the operator call around the cursor
//! (for attribute hover and completion, and signature help).

use super::markdown::code_block;
use relay_passes::op::{self, OpDef};
use relay_passes::op_coverage::coverage;
use relay_syntax::ast::token_at_offset;
use relay_syntax::{SyntaxKind::*, SyntaxNode, TextSize};

/// Markdown documentation of an operator: signature, description,
/// arguments, attributes with types and defaults.
pub fn op_documentation(op: &'static OpDef) -> String {
    let mut out = code_block(&op_signature(op).0);
    out.push_str("\n\n");
    if !op.description.is_empty() {
        out.push_str(&op.description);
        out.push_str("\n\n");
    }
    if !op.arguments.is_empty() {
        out.push_str("**Arguments**\n\n");
        for arg in &op.arguments {
            out.push_str(&format!("- `{}`: {}\n", arg.name, arg.kind));
        }
        out.push('\n');
    }
    if let Some(schema) = op.attrs() {
        out.push_str(&format!("**Attributes** (`{}`)\n\n", schema.type_key));
        for field in &schema.fields {
            out.push_str(&format!(
                "- `{}`: `{}` = `{}`\n",
                field.name, field.ty, field.default
            ));
        }
        out.push('\n');
    }
    let mut facts = vec![format!("pattern `{}`", op.fusion_pattern())];
    if let Some(level) = op.support_level {
        facts.push(format!("support level {level}"));
    }
    out.push_str(&facts.join(", "));
    // What this tool implements for it, the line `relay ops` prints.
    out.push_str(&format!("\n\nhere: {}", coverage(op)));
    out
}

/// `name(arg, …, attr=default, …)` and the byte ranges of each parameter
/// in it (arguments, then attributes).
pub fn op_signature(op: &OpDef) -> (String, Vec<(u32, u32)>) {
    let mut label = format!("{}(", op.name);
    let mut params = Vec::new();
    let mut parts: Vec<String> = op.arguments.iter().map(|a| a.name.clone()).collect();
    if op.is_variadic() && parts.is_empty() {
        parts.push("args...".to_string());
    }
    if let Some(schema) = op.attrs() {
        parts.extend(
            schema
                .fields
                .iter()
                .map(|f| format!("{}={}", f.name, f.default)),
        );
    }
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            label.push_str(", ");
        }
        let start = label.len() as u32;
        label.push_str(part);
        params.push((start, label.len() as u32));
    }
    label.push(')');
    (label, params)
}

/// The operator a `PATH_EXPR` names, if it is one.
pub fn path_op(path: &SyntaxNode) -> Option<&'static OpDef> {
    if path.kind() != PATH_EXPR {
        return None;
    }
    op::lookup(path.text().to_string().trim())
}

/// The operator called by the innermost call whose argument list holds
/// `offset`, with that call's argument list.
pub fn enclosing_op_call(
    root: &SyntaxNode,
    offset: TextSize,
) -> Option<(SyntaxNode, &'static OpDef)> {
    let token = token_at_offset(root, offset).left_biased()?;
    token.parent_ancestors().find_map(|n| {
        if n.kind() != ARG_LIST {
            return None;
        }
        let range = n.text_range();
        // Inside the parentheses.
        if offset <= range.start() || (offset >= range.end() && n.text().to_string().ends_with(')'))
        {
            return None;
        }
        let call = n.parent().filter(|p| p.kind() == CALL_EXPR)?;
        let callee = call.children().next()?;
        path_op(&callee).map(|op| (n, op))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// The call whose parentheses hold the cursor, innermost first; not
    /// before the `(` nor after the `)`.
    #[test]
    fn the_enclosing_call_is_the_innermost_whose_parentheses_hold_the_cursor() {
        let at = |marked: &str| {
            let fixture = fixture::parse(marked);
            let root = relay_syntax::parse_module(&fixture.text).syntax_node();
            enclosing_op_call(&root, fixture.cursor()).map(|(_, op)| op.name.clone())
        };
        let call = |body: &str| format!("def @f(%x) {{ {body} }}");
        assert_eq!(
            at(&call("add(%x, nn.relu($0%x))")).as_deref(),
            Some("nn.relu")
        );
        assert_eq!(at(&call("add(%x, nn.relu(%x)$0)")).as_deref(), Some("add"));
        assert_eq!(at(&call("add$0(%x, %x)")), None);
        assert_eq!(at(&call("add(%x, %x)$0")), None);
    }

    #[test]
    fn signatures_list_arguments_then_attributes_with_their_ranges() {
        let (label, params) = op_signature(op::lookup("nn.softmax").unwrap());
        assert_eq!(label, "nn.softmax(data, axis=-1)");
        let parts: Vec<&str> = params
            .iter()
            .map(|&(s, e)| &label[s as usize..e as usize])
            .collect();
        assert_eq!(parts, ["data", "axis=-1"]);
    }
}
