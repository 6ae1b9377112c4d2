//! Document highlights: the definition (a write) and the uses (reads) of
//! the name under the cursor.

use crate::lsp::analysis::Analysis;
use relay_syntax::{TextRange, TextSize};

/// Whether an occurrence binds the name or reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighlightKind {
    Write,
    Read,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Highlight {
    pub range: TextRange,
    pub kind: HighlightKind,
}

pub fn highlights(analysis: &Analysis, offset: TextSize) -> Vec<Highlight> {
    let Some((id, def)) = analysis.names.definition_at(offset) else {
        return Vec::new();
    };
    def.range
        .map(|range| Highlight {
            range,
            kind: HighlightKind::Write,
        })
        .into_iter()
        .chain(
            analysis
                .names
                .references(id)
                .into_iter()
                .map(|range| Highlight {
                    range,
                    kind: HighlightKind::Read,
                }),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    fn check(marked: &str) {
        fixture::check(marked, |analysis, cursor| {
            highlights(analysis, cursor.expect("a cursor"))
                .into_iter()
                .map(|h| {
                    let tag = match h.kind {
                        HighlightKind::Write => "write",
                        HighlightKind::Read => "read",
                    };
                    (h.range, tag.to_string())
                })
                .collect()
        });
    }

    #[test]
    fn the_binding_is_written_and_its_uses_read() {
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(<write>%$0x</write>: float32) { let %y = <read>%x</read>; add(%y, <read>%x</read>) }",
        );
        check(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: float32) { <write>%0</write> = add(%x, %x); add(<read>%0</read>, <read>%$00</read>) }",
        );
    }
}
