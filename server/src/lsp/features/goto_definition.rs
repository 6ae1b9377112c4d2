//! Go to definition: where the name under the cursor is defined, as
//! lowering resolved it (shadowing and scopes included); on a
//! `meta[Key][i]` reference, its entry in the metadata section.

use super::metadata_links::metadata_definition;
use crate::lsp::analysis::Analysis;
use relay_syntax::{TextRange, TextSize};

/// The definition the name at `offset` resolves to (nothing for names
/// declared nowhere in the text).
pub fn definition(analysis: &Analysis, offset: TextSize) -> Option<TextRange> {
    match analysis.names.definition_at(offset) {
        Some((_, def)) => def.range,
        None => metadata_definition(analysis, offset),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    fn check(marked: &str) {
        fixture::check(marked, |analysis, cursor| {
            definition(analysis, cursor.expect("a cursor"))
                .map(|range| (range, "def".to_string()))
                .into_iter()
                .collect()
        });
    }

    #[test]
    fn locals_resolve_through_shadowing_in_inner_scopes() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) { let %g = fn (<def>%x</def>: float32) { %$0x }; %g(%x) }",
        );
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(<def>%x</def>: float32) { let %g = fn (%x: float32) { %x }; %g(%$0x) }",
        );
    }

    /// As TVM's parser: a `let` in the parameters' own scope does not
    /// shadow them (lowering warns, W0101).
    #[test]
    fn a_let_in_the_same_scope_does_not_shadow() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(<def>%x</def>: float32) { let %x = add(%x, %x); %$0x }",
        );
    }

    #[test]
    fn globals_graph_bindings_and_constructors() {
        check(
            "#[version = \"0.0.5\"]\n\
             def <def>@g</def>() { 1 }\ndef @f() { @$0g() }",
        );
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) { <def>%0</def> = add(%x, %x); multiply(%$00, %0) }",
        );
        check(
            "#[version = \"0.0.5\"]\n\
             type T { <def>A</def>, B }\ndef @f() { A$0 }",
        );
    }

    #[test]
    fn undeclared_names_have_no_definition() {
        check("#[version = \"0.0.5\"]\ndef @f() { %$0z }");
    }
}
