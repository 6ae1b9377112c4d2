//! Find references: every use of the name under the cursor (and its
//! definition, when asked), as lowering resolved them.

use crate::lsp::analysis::Analysis;
use relay_syntax::{TextRange, TextSize};

/// The uses of the name at `offset`, after its definition when
/// `include_declaration`.
pub fn references(
    analysis: &Analysis,
    offset: TextSize,
    include_declaration: bool,
) -> Vec<TextRange> {
    let Some((id, def)) = analysis.names.definition_at(offset) else {
        return Vec::new();
    };
    let declaration = def.range.filter(|_| include_declaration);
    declaration
        .into_iter()
        .chain(analysis.names.references(id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    fn check(marked: &str, include_declaration: bool) {
        fixture::check(marked, |analysis, cursor| {
            references(analysis, cursor.expect("a cursor"), include_declaration)
                .into_iter()
                .map(|range| (range, "ref".to_string()))
                .collect()
        });
    }

    #[test]
    fn uses_of_the_shadowing_binding_only() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) { let %g = fn (<ref>%x</ref>: float32) { multiply(<ref>%$0x</ref>, <ref>%x</ref>) }; %g(%x) }",
            true,
        );
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) { let %g = fn (%x: float32) { multiply(<ref>%$0x</ref>, <ref>%x</ref>) }; %g(%x) }",
            false,
        );
    }

    #[test]
    fn globals_across_functions() {
        check(
            "#[version = \"0.0.5\"]\n\
             def <ref>@$0g</ref>() { 1 }\ndef @f() { (<ref>@g</ref>(), <ref>@g</ref>()) }",
            true,
        );
    }

    #[test]
    fn nothing_outside_names() {
        check("#[version = \"0.0.5\"]\ndef @f() { $0 1 }", true);
    }
}
