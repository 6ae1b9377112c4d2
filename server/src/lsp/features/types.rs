//! The types inference found, as the features show them: of an expression,
//! of a variable (its checked type, else its annotation), of a graph
//! binding's value, and the signature of a global function.

use crate::lsp::analysis::Analysis;
use relay_passes::ir::{Expr, ExprKind, Type};
use relay_passes::printer::print_type;
use relay_syntax::ast::token_at_offset;
use relay_syntax::{SyntaxKind::*, TextRange};

/// The type to show for an expression: its checked type.
pub fn type_of(expr: &Expr) -> Option<String> {
    expr.checked_type().map(print_type)
}

/// The IR variable bound at `def` (a local's defining token).
pub fn var_at(analysis: &Analysis, def: TextRange) -> Option<&Expr> {
    analysis
        .index()
        .starting_at(def.start().into())
        .find(|(_, e)| matches!(e.kind(), ExprKind::Var(_)))
        .map(|(_, e)| e)
}

/// A variable's checked type, else its annotation (other expressions: their
/// checked type).
pub fn var_type(expr: &Expr) -> Option<String> {
    match expr.kind() {
        ExprKind::Var(data) => expr
            .checked_type()
            .or(data.type_annotation.as_ref())
            .map(print_type),
        _ => type_of(expr),
    }
}

/// What the graph binding `%N = e;` whose number token is at `def` stands
/// for: the IR node of `e`.
pub fn graph_value(analysis: &Analysis, def: TextRange) -> Option<&Expr> {
    let token = token_at_offset(&analysis.root(), def.start()).find(|t| t.kind() == GRAPH)?;
    let binding = token.parent().filter(|n| n.kind() == GRAPH_BINDING)?;
    let value = binding.children().last()?;
    analysis.index().exact(value.text_range())
}

/// Whether inference left part of the type open (printed as `_`): such a
/// type is not worth showing as a hint or writing into the text.
pub fn contains_incomplete(t: &Type) -> bool {
    print_type(t).contains('_')
}

/// `def @f(%x: T, …) -> R` from the typed module.
pub fn global_signature(analysis: &Analysis, name: &str) -> Option<String> {
    let function = analysis.module().function(name)?;
    let params: Vec<String> = function
        .params()
        .iter()
        .map(|p| match var_type(p.expr()) {
            Some(t) => format!("%{}: {t}", p.name()),
            None => format!("%{}", p.name()),
        })
        .collect();
    let ret = function
        .expr()
        .checked_type()
        .and_then(|t| t.as_func().map(|f| f.ret.clone()))
        .or_else(|| function.data().ret_type.clone());
    let type_params = &function.data().type_params;
    let tp = if type_params.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = type_params.iter().map(|t| t.name()).collect();
        format!("[{}]", names.join(", "))
    };
    let mut out = format!("def @{name}{tp}({})", params.join(", "));
    if let Some(ret) = ret {
        out.push_str(" -> ");
        out.push_str(&print_type(&ret));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    #[test]
    fn signatures_show_inferred_parameter_and_return_types() {
        let analysis = fixture::analysis(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: Tensor[(2), float32], %y) { add(%x, %x) }\n",
        );
        assert_eq!(
            global_signature(&analysis, "f").as_deref(),
            Some("def @f(%x: Tensor[(2), float32], %y: _) -> Tensor[(2), float32]")
        );
        assert_eq!(global_signature(&analysis, "g"), None);
    }
}
