//! Signature help: inside an operator call, its signature
//! `name(arg, …, attr=default)` with the parameter being written (by the
//! commas before the cursor, or the attribute under it).

use super::ops::{enclosing_op_call, op_signature};
use crate::lsp::analysis::Analysis;
use relay_syntax::{SyntaxKind::*, TextSize};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHelp {
    /// `name(arg, …, attr=default, …)`.
    pub label: String,
    /// The byte range in `label` of each parameter: arguments, then
    /// attributes.
    pub parameters: Vec<(u32, u32)>,
    /// The operator's description (Markdown).
    pub documentation: String,
    /// The index in `parameters` of the one being written.
    pub active_parameter: Option<u32>,
}

pub fn signature_help(analysis: &Analysis, offset: TextSize) -> Option<SignatureHelp> {
    let (args, op) = enclosing_op_call(&analysis.root(), offset)?;
    let (label, parameters) = op_signature(op);
    let nargs = op
        .arguments
        .len()
        .max(usize::from(op.is_variadic() && op.arguments.is_empty()));
    // Which argument: commas before the cursor, or the attribute being written.
    let commas = args
        .children_with_tokens()
        .filter(|e| e.kind() == COMMA && e.text_range().end() <= offset)
        .count();
    let current_attr = args
        .children()
        .filter(|n| n.kind() == ATTR)
        .find(|n| n.text_range().contains_inclusive(offset))
        .and_then(|a| a.children().find(|k| k.kind() == ATTR_KEY))
        .map(|k| k.text().to_string());
    let active = match (current_attr, op.attrs()) {
        (Some(key), Some(schema)) => schema.field_index(&key).map(|i| nargs + i),
        _ if commas < nargs => Some(commas),
        _ => None,
    };
    Some(SignatureHelp {
        label,
        parameters,
        documentation: op.description.clone(),
        active_parameter: active.map(|a| a as u32),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// The active parameter's text in the label, at the fixture's `$0`.
    fn active(marked: &str) -> Option<String> {
        let fixture = fixture::parse(marked);
        let analysis = fixture::analysis(&fixture.text);
        let help = signature_help(&analysis, fixture.cursor())?;
        let (s, e) = help.parameters[help.active_parameter? as usize];
        Some(help.label[s as usize..e as usize].to_string())
    }

    fn call(args: &str) -> String {
        format!(
            "#[version = \"0.0.5\"]\ndef @f(%x: Tensor[(2, 3), float32]) {{ nn.softmax({args}) }}"
        )
    }

    #[test]
    fn the_argument_by_commas_or_the_attribute_under_the_cursor() {
        assert_eq!(active(&call("%x$0")).as_deref(), Some("data"));
        assert_eq!(active(&call("%x, ax$0is=0")).as_deref(), Some("axis=-1"));
        // Past the arguments and not in an attribute: none is active.
        assert_eq!(active(&call("%x, $0")), None);
    }

    #[test]
    fn nothing_outside_an_operator_call() {
        let fixture = fixture::parse("#[version = \"0.0.5\"]\ndef @f(%x: float32) { (%x,$0 %x) }");
        let analysis = fixture::analysis(&fixture.text);
        assert_eq!(signature_help(&analysis, fixture.cursor()), None);
    }
}
