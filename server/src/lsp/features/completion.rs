//! Completion: after `%` the locals in scope, after `@` the global
//! functions; elsewhere the attributes of the operator being called (those
//! not given yet, first), then locals and globals, then operators,
//! constructors and keywords. Each item replaces the word (with its sigil)
//! before the cursor.
//!
//! In a large module the names in scope run to tens of thousands (graph
//! bindings `%N` stay visible to the end of the file, as TVM reads them), and
//! each item's detail is a printed type. So past [`MAX_NAME_ITEMS`] names are filtered by the word
//! typed so far and capped at [`MAX_NAME_ITEMS`] *before* any detail is
//! computed; a capped answer is marked incomplete, and the client asks again
//! as the user types.

use super::ops::enclosing_op_call;
use super::types::{global_signature, graph_value, type_of, var_at, var_type};
use crate::lsp::analysis::Analysis;
use relay_passes::lower::NameKind;
use relay_passes::op;
use relay_syntax::{SyntaxKind::*, TextRange, TextSize};

const KEYWORDS: &[&str] = &[
    "let",
    "fn",
    "def",
    "if",
    "else",
    "type",
    "match",
    "free_var",
    "ref",
    "ref_read",
    "ref_write",
];

/// At most this many locals, and as many globals, in one answer; up to
/// this many, every name in scope is offered, unfiltered.
pub const MAX_NAME_ITEMS: usize = 200;

/// One completion answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completions {
    pub items: Vec<CompletionItem>,
    /// Names were left out (over [`MAX_NAME_ITEMS`] matched): the client
    /// must ask again when the word grows.
    pub incomplete: bool,
}

/// All the names when there are at most [`MAX_NAME_ITEMS`] (the client
/// filters them as the user types); otherwise only those that contain
/// `typed`, at most [`MAX_NAME_ITEMS`] of them, in their order, and the
/// answer is incomplete (the client asks again when the word grows).
/// `names` is walked lazily (twice when capped), never further than the
/// answer needs: in a large module the names in scope are many.
fn matching_names<'a, T, I: Iterator<Item = T>>(
    names: impl Fn() -> I,
    name_of: impl Fn(&T) -> &'a str,
    typed: &str,
) -> (Vec<T>, bool) {
    let first: Vec<T> = names().take(MAX_NAME_ITEMS + 1).collect();
    if first.len() <= MAX_NAME_ITEMS {
        return (first, false);
    }
    let kept = names()
        .filter(|c| name_of(c).contains(typed))
        .take(MAX_NAME_ITEMS)
        .collect();
    (kept, true)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    Variable,
    Function,
    Property,
    Constructor,
    Keyword,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionItem {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    /// What replaces [`CompletionItem::replace`].
    pub insert: String,
    /// The word before the cursor, with its sigil.
    pub replace: TextRange,
    pub sort_text: Option<String>,
}

fn ident_char(c: u8) -> bool {
    c == b'_' || c == b'/' || c == b'.' || c.is_ascii_alphanumeric()
}

pub fn completion(analysis: &Analysis, offset: TextSize) -> Completions {
    let text = analysis.text().as_bytes();
    let end = usize::from(offset).min(text.len());
    let mut start = end;
    while start > 0 && ident_char(text[start - 1]) {
        start -= 1;
    }
    let sigil = start.checked_sub(1).map(|i| text[i]);
    let replace_start = if matches!(sigil, Some(b'%' | b'@')) {
        start - 1
    } else {
        start
    };
    let replace = TextRange::new((replace_start as u32).into(), (end as u32).into());
    let typed = std::str::from_utf8(&text[start..end]).unwrap_or("");
    let incomplete = std::cell::Cell::new(false);
    let item = |label: String, kind: CompletionKind, detail: Option<String>| CompletionItem {
        insert: label.clone(),
        label,
        kind,
        detail,
        replace,
        sort_text: None,
    };
    let names = &analysis.names;
    let mut out = Vec::new();
    let locals = |out: &mut Vec<CompletionItem>| {
        let (visible, capped) = matching_names(
            || names.visible_names_at(offset),
            |id| names.name(*id),
            typed,
        );
        incomplete.set(incomplete.get() | capped);
        for id in visible {
            let def = names.definition(id);
            let detail = match (def.kind, def.range) {
                (NameKind::Graph, Some(range)) => graph_value(analysis, range).and_then(type_of),
                (_, Some(range)) => var_at(analysis, range).and_then(var_type),
                (_, None) => None,
            };
            out.push(item(
                format!("%{}", def.name),
                CompletionKind::Variable,
                detail,
            ));
        }
    };
    let globals = |out: &mut Vec<CompletionItem>| {
        let (functions, capped) = matching_names(
            || analysis.module().functions(),
            |(name, _)| -> &str { name },
            typed,
        );
        incomplete.set(incomplete.get() | capped);
        for (name, _) in functions {
            out.push(item(
                format!("@{name}"),
                CompletionKind::Function,
                global_signature(analysis, name),
            ));
        }
    };
    match sigil {
        Some(b'%') => locals(&mut out),
        Some(b'@') => globals(&mut out),
        _ => {
            // Attributes of the operator being called.
            if let Some((args, op)) = enclosing_op_call(&analysis.root(), offset) {
                if let Some(schema) = op.attrs() {
                    let given: Vec<String> = args
                        .children()
                        .filter(|n| n.kind() == ATTR)
                        .filter_map(|a| a.children().find(|k| k.kind() == ATTR_KEY))
                        .map(|k| k.text().to_string())
                        .collect();
                    for field in &schema.fields {
                        if given.contains(&field.name) {
                            continue;
                        }
                        let mut attr = item(
                            field.name.clone(),
                            CompletionKind::Property,
                            Some(format!("{} = {}", field.ty, field.default)),
                        );
                        attr.insert = format!("{}=", field.name);
                        attr.sort_text = Some(format!("0{}", field.name));
                        out.push(attr);
                    }
                }
            }
            let declared = op::custom::declared_ops();
            for op in op::all_ops().iter().chain(declared) {
                let mut it = item(
                    op.name.clone(),
                    CompletionKind::Function,
                    Some(op.description.clone()),
                );
                it.sort_text = Some(format!("2{}", op.name));
                out.push(it);
            }
            for (_, data) in analysis.module().type_definitions() {
                for ctor in &data.constructors {
                    out.push(item(
                        ctor.name().to_string(),
                        CompletionKind::Constructor,
                        Some(format!("constructor of {}", data.header.name())),
                    ));
                }
            }
            for kw in KEYWORDS {
                out.push(item(kw.to_string(), CompletionKind::Keyword, None));
            }
            let before = out.len();
            locals(&mut out);
            globals(&mut out);
            for it in &mut out[before..] {
                it.sort_text = Some(format!("1{}", it.label));
            }
        }
    }
    Completions {
        items: out,
        incomplete: incomplete.get(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// The labels offered at `$0`, each item checked to replace the
    /// fixture's `<word>` (the word before the cursor).
    fn labels(marked: &str) -> Vec<String> {
        let fixture = fixture::parse(marked);
        let analysis = fixture::analysis(&fixture.text);
        let items = completion(&analysis, fixture.cursor()).items;
        for item in &items {
            assert_eq!(item.replace, fixture.range("word"), "{item:?}");
        }
        items.into_iter().map(|i| i.label).collect()
    }

    #[test]
    fn after_a_percent_the_locals_in_scope_with_their_types() {
        let fixture = fixture::parse(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) { let %y = %x; add(<word>%$0</word>, %y) }",
        );
        let analysis = fixture::analysis(&fixture.text);
        let items = completion(&analysis, fixture.cursor()).items;
        let found: Vec<(&str, Option<&str>)> = items
            .iter()
            .map(|i| (i.label.as_str(), i.detail.as_deref()))
            .collect();
        // Innermost first.
        assert_eq!(found, [("%y", Some("float32")), ("%x", Some("float32"))]);
        assert!(items.iter().all(|i| i.kind == CompletionKind::Variable
            && i.replace == fixture.range("word")
            && i.insert == i.label));
    }

    #[test]
    fn after_an_at_the_globals() {
        assert_eq!(
            labels("#[version = \"0.0.5\"]\ndef @helper() { 1 }\ndef @f() { <word>@he$0</word> }"),
            ["@f", "@helper"]
        );
    }

    #[test]
    fn in_an_operator_call_its_attributes_not_given_yet_come_first() {
        let fixture = fixture::parse(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: Tensor[(1, 3, 4, 4), float32]) { nn.conv2d(%x, %x, strides=[1, 1], <word>pa$0</word>) }",
        );
        let analysis = fixture::analysis(&fixture.text);
        let mut items = completion(&analysis, fixture.cursor()).items;
        // As clients order them: by sort text, else by label.
        items.sort_by(|a, b| {
            let key = |i: &CompletionItem| i.sort_text.clone().unwrap_or(i.label.clone());
            key(a).cmp(&key(b))
        });
        assert_eq!(items[0].kind, CompletionKind::Property);
        assert!(items.iter().all(|i| i.label != "strides"));
        let padding = items.iter().find(|i| i.label == "padding").unwrap();
        assert_eq!(padding.insert, "padding=");
        assert_eq!(padding.replace, fixture.range("word"));
        // Then locals and globals, then operators.
        let first_other = items
            .iter()
            .position(|i| i.kind != CompletionKind::Property)
            .unwrap();
        assert_eq!(items[first_other].label, "%x");
        assert!(items.iter().any(|i| i.label == "nn.conv2d"));
        assert!(items.iter().any(|i| i.label == "free_var"));
    }

    #[test]
    fn thousands_of_names_in_scope_are_filtered_by_the_word_and_capped() {
        let mut text = String::from("#[version = \"0.0.5\"]\ndef @f(%x: float32) {\n");
        for i in 0..1000 {
            let previous = if i == 0 {
                "%x".to_string()
            } else {
                format!("%{}", i - 1)
            };
            text.push_str(&format!("  %{i} = add({previous}, 1f);\n"));
        }
        text.push_str("  add(%999, %77");
        let cursor_at = text.len();
        text.push_str(")\n}\n");
        let analysis = fixture::analysis(&text);
        let offset = TextSize::from(cursor_at as u32);
        let answer = completion(&analysis, offset);
        // Over the cap, so only what contains the word: `%77`, `%770`…`%779`,
        // `%177`…`%977` — and incomplete, for the client to ask again.
        let labels: Vec<&str> = answer.items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels.len(), 19, "{labels:?}");
        assert!(labels.contains(&"%77") && labels.contains(&"%779") && labels.contains(&"%977"));
        assert!(answer.incomplete);
        assert!(answer
            .items
            .iter()
            .all(|i| i.detail.as_deref() == Some("float32")));

        // After a bare `%`, every one of the 1,001 names matches: capped.
        let bare = text.replacen("%77)", "%)", 1);
        let analysis = fixture::analysis(&bare);
        let answer = completion(
            &analysis,
            TextSize::from(bare.find("%)").unwrap() as u32 + 1),
        );
        assert_eq!(answer.items.len(), MAX_NAME_ITEMS);
        assert!(answer.incomplete);
        // Innermost first: the last binding before the cursor leads.
        assert_eq!(answer.items[0].label, "%999");
    }
}
