//! Links from `meta[Key][i]` references to the entry of the metadata
//! section they name: document links over every reference, and go to
//! definition on one. The entry is found in the section's own text
//! (`SectionLayout`, read once per request however many references there
//! are), so the link lands on the object TVM wrote, whatever its layout.

use super::cursor::token_at;
use crate::lsp::analysis::Analysis;
use relay_passes::metadata::SectionLayout;
use relay_syntax::ast::{AstToken, MetaRef, Metadata};
use relay_syntax::{SyntaxKind::*, SyntaxNode, TextRange, TextSize};

/// A reference and the range of the entry it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataLink {
    pub reference: TextRange,
    pub entry: TextRange,
}

/// Every `meta[…][…]` reference whose entry the file's metadata section has.
pub fn metadata_links(analysis: &Analysis) -> Vec<MetadataLink> {
    let root = analysis.root();
    let Some(section) = section(&root) else {
        return Vec::new();
    };
    let Some(layout) = SectionLayout::read(section.body()) else {
        return Vec::new();
    };
    root.descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter_map(MetaRef::cast)
        .filter_map(|reference| link(&section, &layout, &reference))
        .collect()
}

/// The entry the reference at `offset` names.
pub fn metadata_definition(analysis: &Analysis, offset: TextSize) -> Option<TextRange> {
    let root = analysis.root();
    let reference = MetaRef::cast(token_at(&root, offset).filter(|t| t.kind() == META_REF)?)?;
    let section = section(&root)?;
    let layout = SectionLayout::read(section.body())?;
    link(&section, &layout, &reference).map(|l| l.entry)
}

fn section(root: &SyntaxNode) -> Option<Metadata> {
    root.descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .find_map(Metadata::cast)
}

fn link(section: &Metadata, layout: &SectionLayout, reference: &MetaRef) -> Option<MetadataLink> {
    let index = usize::try_from(reference.index()?).ok()?;
    let found = layout.entry_range(reference.key()?, index)?;
    let base = section.body_range().start();
    let entry = TextRange::new(
        base + TextSize::try_from(found.start).ok()?,
        base + TextSize::try_from(found.end).ok()?,
    );
    Some(MetadataLink {
        reference: reference.syntax().text_range(),
        entry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    const FILE: &str = include_str!("../../../tests/diff_inputs/constants_a.relay");

    #[test]
    fn a_reference_links_to_its_entry() {
        let analysis = fixture::analysis(FILE);
        let links = metadata_links(&analysis);
        assert_eq!(links.len(), 1);
        assert_eq!(&FILE[links[0].reference], "meta[relay.Constant][0]");
        let entry = &FILE[links[0].entry];
        assert!(
            entry.starts_with("{\n      \"type_key\": \"relay.Constant\""),
            "{entry}"
        );
        assert!(entry.ends_with('}'), "{entry}");
        let at = FILE.find("meta[").unwrap() + 7;
        assert_eq!(
            metadata_definition(&analysis, (at as u32).into()),
            Some(links[0].entry)
        );
    }

    #[test]
    fn references_without_an_entry_or_a_section_link_nowhere() {
        let missing = FILE.replace("meta[relay.Constant][0]", "meta[relay.Constant][5]");
        assert!(metadata_links(&fixture::analysis(&missing)).is_empty());
        let no_section = &FILE[..FILE.find("#[metadata]").unwrap()];
        assert!(metadata_links(&fixture::analysis(no_section)).is_empty());
    }
}
