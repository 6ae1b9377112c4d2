//! Where a call's attribute value is written, for errors about it.
//!
//! The IR keeps one span per call (the whole call) and none per attribute:
//! attributes are values that passes copy and rewrite freely, and only an
//! error needs to know where one was written. So when a type relation says
//! an error concerns an attribute (`RelationError::attribute`), the call's
//! text is parsed again on its own and the attribute found in it: cheap (a
//! call is short, and this only runs for an error) and always in step with
//! what the user wrote, since the span points into the very text lowered.

use relay_ir::source::{SourceMap, Span};
use relay_syntax::ast::{self, AstNode};
use relay_syntax::{parse_expr, TextRange, TextSize};

/// The span of the value of attribute `key` in the call written at `call`
/// (the last one when the key is given twice: the last value counts), or
/// `None` when the call's text is not at hand or does not spell the
/// attribute (an attrs object from `meta[…]`, a default value, a call
/// built by a pass).
pub(crate) fn attribute_value_span(sources: &SourceMap, call: Span, key: &str) -> Option<Span> {
    let file = sources.get(call.file)?;
    let text = file.text.get(std::ops::Range::<usize>::from(call.range))?;
    let parse = parse_expr(text);
    let root = parse.syntax_node();
    // The call's own node is the outermost call spanning the whole text
    // (its arguments may be calls too, each with attributes of its own).
    let whole = TextRange::up_to(TextSize::of(text));
    let call_node = root
        .descendants()
        .filter_map(ast::CallExpr::cast)
        .find(|c| c.syntax().text_range() == whole)?;
    let value = call_node
        .attrs()
        .filter(|attr| attr.key().as_deref() == Some(key))
        .last()?
        .value()?;
    let range = value.syntax().text_range() + call.range.start();
    Some(Span::new(call.file, range))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_at(text: &str, call: &str, key: &str) -> Option<String> {
        let mut sources = SourceMap::new();
        let file = sources.add("t.relay", text.to_string());
        let start = text.find(call).unwrap();
        let range = TextRange::at(TextSize::try_from(start).unwrap(), TextSize::of(call));
        attribute_value_span(&sources, Span::new(file, range), key)
            .map(|s| text[std::ops::Range::<usize>::from(s.range)].to_string())
    }

    #[test]
    fn finds_the_value_of_the_calls_own_attribute() {
        let text = "def @f(%x) { nn.softmax(nn.relu(%x), axis=3) }";
        let call = "nn.softmax(nn.relu(%x), axis=3)";
        assert_eq!(value_at(text, call, "axis").as_deref(), Some("3"));
    }

    #[test]
    fn skips_attributes_of_nested_calls_and_takes_the_last_duplicate() {
        let text = "f(g(%x, axis=1), axes=[0, 5], axes=[1, 9])";
        assert_eq!(value_at(text, text, "axes").as_deref(), Some("[1, 9]"));
        assert_eq!(value_at(text, text, "axis"), None);
    }

    #[test]
    fn no_span_for_an_attribute_not_written() {
        let text = "nn.bias_add(%x, %b)";
        assert_eq!(value_at(text, text, "axis"), None);
    }
}
