//! Attributes written as TVM v0.13 reads them: fields other versions did
//! not write take the value those versions meant (in the call, or in the
//! metadata object a call refers to), fields v0.13 does not have are
//! removed (any comment among them stays), and calls of operators that
//! register no attributes type name theirs (`attrs_type_key="…"`).

use super::edits::Edits;
use super::Refusal;
use relay_ir::metadata::json::{self, JsonValue};
use relay_ir::metadata::SectionLayout;
use relay_ir::op::{self, AttrsSchema};
use relay_ir::AttrValue;
use relay_syntax::ast::{self, AstNode, AstToken};
use relay_syntax::{SyntaxElement, SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize};
use std::collections::HashSet;

/// The calls and metadata objects already completed (a call lacking two
/// fields has two warnings, one edit).
#[derive(Default)]
pub(super) struct Fixed {
    places: HashSet<TextRange>,
}

/// `W0106` at `range`: the fields the call (or the metadata object it
/// refers to) lacks, written with the values other versions meant.
pub(super) fn write_old_defaults(
    root: &SyntaxNode,
    range: TextRange,
    fixed: &mut Fixed,
    edits: &mut Edits,
) -> Result<(), Refusal> {
    if let Some(meta_ref) = meta_ref_at(root, range) {
        return complete_metadata_object(root, &meta_ref, fixed, edits);
    }
    let call = call_of_callee(root, range)?;
    if !fixed.places.insert(call.syntax().text_range()) {
        return Ok(());
    }
    let schema = call_schema(&call, range)?;
    let given: HashSet<String> = call.attrs().filter_map(|a| a.key()).collect();
    let mut written = Vec::new();
    for field in &schema.fields {
        if !field.is_required() || given.contains(&field.name) {
            continue;
        }
        let Some((value, _)) = op::older_default(&schema.type_key, &field.name) else {
            continue;
        };
        written.push(format!("{}={}", field.name, attr_text(&value, range)?));
    }
    append_attrs(&call, &written.join(", "), edits);
    Ok(())
}

/// `W0107` at `range` (the key of an attribute): the attribute and its
/// comma removed. Comments among them stay where they are.
pub(super) fn drop_attribute(
    root: &SyntaxNode,
    range: TextRange,
    edits: &mut Edits,
) -> Result<(), Refusal> {
    let attr = node_at(root, range)
        .and_then(|n| n.ancestors().find(|a| a.kind() == SyntaxKind::ATTR))
        .ok_or_else(|| Refusal::new(range, "the attribute to drop is not found in the text"))?;
    // The comma before it, else the one after it (the first of a list).
    let before =
        significant_sibling(&attr, Direction::Back).filter(|t| t.kind() == SyntaxKind::COMMA);
    let after =
        significant_sibling(&attr, Direction::Forward).filter(|t| t.kind() == SyntaxKind::COMMA);
    let removed = match (before, after) {
        (Some(comma), _) => TextRange::new(comma.text_range().start(), attr.text_range().end()),
        (None, Some(comma)) => {
            // Up to the next item, so that `f(a=1, b=2)` becomes `f(b=2)`.
            let mut end = comma.text_range().end();
            let mut next = comma.next_token();
            while let Some(ws) = next.filter(|t| t.kind() == SyntaxKind::WHITESPACE) {
                end = ws.text_range().end();
                next = ws.next_token();
            }
            TextRange::new(attr.text_range().start(), end)
        }
        (None, None) => attr.text_range(),
    };
    let tokens: Vec<SyntaxToken> = root
        .descendants_with_tokens()
        .filter_map(SyntaxElement::into_token)
        .filter(|t| removed.contains_range(t.text_range()))
        .collect();
    if tokens.iter().any(|t| is_comment(t.kind())) {
        // Keep every comment: only the comma, the attribute's own tokens
        // and the space just before them go (not the line break that ends
        // a `//` comment).
        for (i, token) in tokens.iter().enumerate() {
            let removed = !token.kind().is_trivia()
                || token.kind() == SyntaxKind::WHITESPACE
                    && tokens.get(i + 1).is_some_and(|t| !t.kind().is_trivia())
                    && !(i > 0 && tokens[i - 1].kind() == SyntaxKind::LINE_COMMENT);
            if removed {
                edits.remove(token.text_range());
            }
        }
    } else {
        edits.remove(removed);
    }
    Ok(())
}

/// `W0108` at `range` (the callee): `attrs_type_key="…"` added, the type
/// TVM builds the operator's attributes with.
pub(super) fn name_attrs_type(
    root: &SyntaxNode,
    range: TextRange,
    fixed: &mut Fixed,
    edits: &mut Edits,
) -> Result<(), Refusal> {
    let call = call_of_callee(root, range)?;
    if !fixed.places.insert(call.syntax().text_range()) {
        return Ok(());
    }
    let name = callee_name(&call);
    let key = op::untyped_op_attrs_type(&name)
        .ok_or_else(|| Refusal::new(range, format!("no attributes type is known for `{name}`")))?;
    append_attrs(&call, &format!("attrs_type_key=\"{key}\""), edits);
    Ok(())
}

/// The metadata object `meta_ref` refers to, completed in place with the
/// fields it lacks (the values other versions meant, else the defaults, as
/// the lenient reading took them).
fn complete_metadata_object(
    root: &SyntaxNode,
    meta_ref: &SyntaxToken,
    fixed: &mut Fixed,
    edits: &mut Edits,
) -> Result<(), Refusal> {
    let range = meta_ref.text_range();
    let not_found = || Refusal::new(range, "the metadata object it refers to is not found");
    let reference = ast::MetaRef::cast(meta_ref.clone()).ok_or_else(not_found)?;
    let (key, index) = (
        reference.key().ok_or_else(not_found)?,
        reference.index().ok_or_else(not_found)?,
    );
    let section = root
        .descendants_with_tokens()
        .filter_map(SyntaxElement::into_token)
        .find_map(ast::Metadata::cast)
        .ok_or_else(not_found)?;
    let body = section.body();
    let layout = SectionLayout::read(body).ok_or_else(not_found)?;
    let entry = layout
        .entry_range(key, usize::try_from(index).map_err(|_| not_found())?)
        .ok_or_else(not_found)?;
    let entry_start = usize::from(section.body_range().start()) + entry.start;
    if !fixed.places.insert(TextRange::empty(
        TextSize::try_from(entry_start).map_err(|_| not_found())?,
    )) {
        return Ok(());
    }
    let (object, _) = json::parse_value(&body[entry.clone()]).map_err(|_| not_found())?;
    let JsonValue::Object(members) = &object.value else {
        return Err(not_found());
    };
    let type_key = members.iter().find_map(|(_, k, v)| match (&**k, &v.value) {
        ("type_key", JsonValue::String(s)) => Some(s.as_str()),
        _ => None,
    });
    let attrs = members.iter().find_map(|(_, k, v)| match (&**k, &v.value) {
        ("attrs", JsonValue::Object(fields)) => Some((v.offset, fields)),
        _ => None,
    });
    let (Some(type_key), Some((attrs_offset, fields))) = (type_key, attrs) else {
        return Err(not_found());
    };
    let schema = op::attrs_schema(type_key).ok_or_else(not_found)?;
    let present: HashSet<&str> = fields.iter().map(|(_, k, _)| k.as_str()).collect();
    let mut written = Vec::new();
    for field in &schema.fields {
        if present.contains(field.name.as_str()) {
            continue;
        }
        let value = op::older_default(type_key, &field.name)
            .map(|(value, _)| value)
            .unwrap_or_else(|| op::default_value(&field.default, &field.ty));
        let encoded = metadata_attr_text(&value, body, range).ok_or_else(|| {
            Refusal::new(
                range,
                format!(
                    "`{type_key}` lacks `{}`, whose value cannot be written into the metadata \
                     section by the upgrade; add it by hand",
                    field.name
                ),
            )
        })?;
        written.push(format!("\"{}\": {encoded}", field.name));
    }
    if written.is_empty() {
        return Ok(());
    }
    let mut text = written.join(", ");
    if !fields.is_empty() {
        text.push_str(", ");
    }
    // Right after the `{` of the object's `attrs`.
    let at = entry_start + attrs_offset + 1;
    edits.insert(TextSize::try_from(at).map_err(|_| not_found())?, text);
    Ok(())
}

/// How `value` is written as an attribute in a call.
fn attr_text(value: &AttrValue, range: TextRange) -> Result<String, Refusal> {
    Ok(match value {
        AttrValue::Null => "None".to_string(),
        AttrValue::Bool(true) => "True".to_string(),
        AttrValue::Bool(false) => "False".to_string(),
        AttrValue::Int(i) => i.to_string(),
        other => {
            return Err(Refusal::new(
                range,
                format!("the value {other:?} cannot be written by the upgrade; add it by hand"),
            ))
        }
    })
}

/// How `value` is written as a field of an attributes object in a
/// metadata section (TVM's JSON: every value a string; an object field the
/// index of its node, the null node for `None`).
fn metadata_attr_text(value: &AttrValue, body: &str, _range: TextRange) -> Option<String> {
    let text = match value {
        AttrValue::Bool(b) => u8::from(*b).to_string(),
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Str(s) => s.clone(),
        AttrValue::DataType(d) => d.to_tvm_string(),
        AttrValue::Null => null_node(body)?.to_string(),
        _ => return None,
    };
    let mut writer = json::JsonWriter::new();
    writer.string(&text);
    Some(writer.finish())
}

/// The index of a null node (`{"type_key": ""}`) of the section.
fn null_node(body: &str) -> Option<usize> {
    let graph = relay_ir::metadata::ObjectGraph::parse_with(body, true).ok()?;
    (0..).map_while(|i| graph.node(i)).position(|n| n.is_null())
}

/// `, items` at the end of `call`'s argument list: after its last argument
/// or attribute and the block comments that trail it on its line (which
/// stay with it), before anything else.
fn append_attrs(call: &ast::CallExpr, items: &str, edits: &mut Edits) {
    if items.is_empty() {
        return;
    }
    let Some(list) = call.arg_list() else { return };
    let last = list
        .syntax()
        .children()
        .filter(|n| n.kind() != SyntaxKind::ERROR)
        .last();
    match last {
        Some(last) => {
            let mut at = last.text_range().end();
            let mut next = last.last_token().and_then(|t| t.next_token());
            while let Some(token) = next {
                match token.kind() {
                    SyntaxKind::BLOCK_COMMENT => at = token.text_range().end(),
                    SyntaxKind::WHITESPACE if !token.text().contains('\n') => {}
                    _ => break,
                }
                next = token.next_token();
            }
            edits.insert(at, format!(", {items}"));
        }
        None => {
            let open = list
                .syntax()
                .children_with_tokens()
                .filter_map(SyntaxElement::into_token)
                .find(|t| t.kind() == SyntaxKind::L_PAREN);
            if let Some(open) = open {
                edits.insert(open.text_range().end(), items.to_string());
            }
        }
    }
}

/// The call whose callee is at `range`.
fn call_of_callee(root: &SyntaxNode, range: TextRange) -> Result<ast::CallExpr, Refusal> {
    node_at(root, range)
        .and_then(|n| n.ancestors().find_map(ast::CallExpr::cast))
        .ok_or_else(|| Refusal::new(range, "the call is not found in the text"))
}

/// The attributes schema of the operator `call` calls.
fn call_schema(call: &ast::CallExpr, range: TextRange) -> Result<&'static AttrsSchema, Refusal> {
    let name = callee_name(call);
    op::lookup(&name)
        .and_then(|op| op.attrs_type.as_deref())
        .and_then(op::attrs_schema)
        .ok_or_else(|| Refusal::new(range, format!("no attributes type is known for `{name}`")))
}

/// The operator name a callee spells (`nn.dense`), without trivia.
fn callee_name(call: &ast::CallExpr) -> String {
    let Some(callee) = call.callee() else {
        return String::new();
    };
    callee
        .syntax()
        .descendants_with_tokens()
        .filter_map(SyntaxElement::into_token)
        .filter(|t| !t.kind().is_trivia())
        .map(|t| t.text().to_string())
        .collect()
}

/// The `meta[…][…]` token at `range`, if that is what is there.
fn meta_ref_at(root: &SyntaxNode, range: TextRange) -> Option<SyntaxToken> {
    root.descendants_with_tokens()
        .filter_map(SyntaxElement::into_token)
        .find(|t| t.kind() == SyntaxKind::META_REF && t.text_range().contains_range(range))
}

/// The innermost node covering `range`.
fn node_at(root: &SyntaxNode, range: TextRange) -> Option<SyntaxNode> {
    if !root.text_range().contains_range(range) {
        return None;
    }
    match root.covering_element(range) {
        SyntaxElement::Node(n) => Some(n),
        SyntaxElement::Token(t) => t.parent(),
    }
}

enum Direction {
    Back,
    Forward,
}

/// The nearest token beside `node`, skipping whitespace and comments.
fn significant_sibling(node: &SyntaxNode, direction: Direction) -> Option<SyntaxToken> {
    let mut token = match direction {
        Direction::Back => node.first_token()?.prev_token(),
        Direction::Forward => node.last_token()?.next_token(),
    };
    while let Some(t) = token {
        if !t.kind().is_trivia() {
            return Some(t);
        }
        token = match direction {
            Direction::Back => t.prev_token(),
            Direction::Forward => t.next_token(),
        };
    }
    None
}

fn is_comment(kind: SyntaxKind) -> bool {
    matches!(kind, SyntaxKind::LINE_COMMENT | SyntaxKind::BLOCK_COMMENT)
}
