//! Rename: the name under the cursor at its definition and every use
//! lowering resolved to it, nothing else (a shadowed `%x` keeps its name).
//! The sigil (`%`, `@`) is not part of what is replaced.

use super::Replacement;
use crate::lsp::analysis::Analysis;
use relay_passes::lower::{DefId, Definition, NameKind};
use relay_syntax::{TextRange, TextSize};

/// The range of a name without its `%` or `@` (what a rename replaces).
fn name_range(text: &str, range: TextRange) -> TextRange {
    let start = usize::from(range.start());
    match text.as_bytes().get(start) {
        Some(b'%' | b'@') if !range.is_empty() => {
            TextRange::new(range.start() + TextSize::from(1), range.end())
        }
        _ => range,
    }
}

/// The range a rename replaces and the current name.
pub fn prepare_rename(analysis: &Analysis, offset: TextSize) -> Option<(TextRange, String)> {
    let occurrence = analysis.names.at(offset)?;
    let def = analysis.names.definition(occurrence.def);
    let range = name_range(analysis.text(), occurrence.range);
    Some((range, def.name.clone()))
}

fn valid_name(kind: NameKind, name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    match kind {
        NameKind::Graph => name.chars().all(|c| c.is_ascii_digit()),
        _ => {
            (first.is_ascii_alphabetic() || first == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/')
                && relay_syntax::SyntaxKind::from_keyword(name).is_none()
        }
    }
}

/// The edits renaming the name at `offset` (its definition and every use
/// lowering resolved to it, nothing else), in text order, or why it cannot
/// be renamed.
pub fn rename(
    analysis: &Analysis,
    offset: TextSize,
    new_name: &str,
) -> Result<Vec<Replacement>, String> {
    let (id, def): (DefId, Definition) = analysis
        .names
        .definition_at(offset)
        .ok_or("there is no name to rename here")?;
    let new_name = new_name.strip_prefix(['%', '@']).unwrap_or(new_name);
    if !valid_name(def.kind, new_name) {
        return Err(format!("`{new_name}` is not a valid name here"));
    }
    let mut edits: Vec<Replacement> = analysis
        .names
        .occurrences(id)
        .map(|r| Replacement {
            range: name_range(analysis.text(), r),
            text: new_name.to_string(),
        })
        .collect();
    edits.sort_by_key(|e| e.range.start());
    edits.dedup_by_key(|e| e.range);
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// Renames at `$0` to `new_name`; the fixture marks each replaced range
    /// with `<to NAME>`.
    fn check(marked: &str, new_name: &str) {
        fixture::check(marked, |analysis, cursor| {
            rename(analysis, cursor.expect("a cursor"), new_name)
                .expect("the rename is possible")
                .into_iter()
                .map(|r| (r.range, format!("to {}", r.text)))
                .collect()
        });
    }

    #[test]
    fn renames_the_binding_and_its_uses_without_the_sigil() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) { let %g = fn (%<to y>x</to>: float32) { multiply(%<to y>$0x</to>, %<to y>x</to>) }; %g(%x) }",
            "%y",
        );
        check(
            "#[version = \"0.0.5\"]\n\
             def @<to h>$0g</to>() { 1 }\ndef @f() { @<to h>g</to>() }",
            "h",
        );
    }

    #[test]
    fn prepare_names_the_range_without_its_sigil() {
        let fixture = fixture::parse(
            "#[version = \"0.0.5\"]\ndef @f(%<name>long_$0name</name>: float32) { %long_name }",
        );
        let analysis = fixture::analysis(&fixture.text);
        assert_eq!(
            prepare_rename(&analysis, fixture.cursor()),
            Some((fixture.range("name"), "long_name".to_string()))
        );
    }

    #[test]
    fn invalid_names_and_places_are_refused_with_the_reason() {
        let refused = |marked: &str, new_name: &str| {
            let fixture = fixture::parse(marked);
            let analysis = fixture::analysis(&fixture.text);
            rename(&analysis, fixture.cursor(), new_name).expect_err("refused")
        };
        let local = "#[version = \"0.0.5\"]\ndef @f(%$0x: float32) { %x }";
        assert_eq!(refused(local, "let"), "`let` is not a valid name here");
        assert_eq!(
            refused(local, "9lives"),
            "`9lives` is not a valid name here"
        );
        let graph = "#[version = \"0.0.5\"]\ndef @f(%x: float32) { %0 = add(%x, %x); %$00 }";
        assert_eq!(refused(graph, "y"), "`y` is not a valid name here");
        let nowhere = "#[version = \"0.0.5\"]\ndef @f() {$0 1 }";
        assert_eq!(refused(nowhere, "y"), "there is no name to rename here");
    }
}
