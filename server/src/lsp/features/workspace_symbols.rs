//! Workspace symbols: the global functions, types and constructors of every
//! open document whose name matches the query — the outline's symbols,
//! flattened, filtered the way editors' "go to symbol" pickers expect: the
//! query's characters appear in the name in order, ignoring case (`cbr`
//! finds `@conv_bias_relu`); an empty query lists everything.

use super::document_symbols::{document_symbols, Symbol};
use crate::lsp::analysis::Analysis;

/// The symbols of one document matching `query`, in the document's order
/// (each type before its constructors), with their children taken out.
pub fn workspace_symbols(analysis: &Analysis, query: &str) -> Vec<Symbol> {
    let mut out = Vec::new();
    for mut symbol in document_symbols(analysis) {
        let children = symbol.children.take().unwrap_or_default();
        for s in std::iter::once(symbol).chain(children) {
            if matches(&s.name, query) {
                out.push(s);
            }
        }
    }
    out
}

/// Whether the characters of `query` appear in `name` in order, ignoring
/// case and the sigil of globals.
fn matches(name: &str, query: &str) -> bool {
    let query = query.trim_start_matches('@');
    let mut name = name
        .trim_start_matches('@')
        .chars()
        .flat_map(char::to_lowercase);
    query
        .chars()
        .flat_map(char::to_lowercase)
        .all(|q| name.any(|c| c == q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    fn names(text: &str, query: &str) -> Vec<String> {
        let analysis = fixture::analysis(text);
        workspace_symbols(&analysis, query)
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    const TEXT: &str = "#[version = \"0.0.5\"]\n\
        type Option[A] { Some(A), Nothing }\n\
        def @conv_bias_relu(%x: float32) { %x }\n\
        def @main(%x: float32) { @conv_bias_relu(%x) }\n";

    #[test]
    fn queries_match_in_order_ignoring_case_and_the_sigil() {
        assert_eq!(names(TEXT, "cbr"), ["@conv_bias_relu"]);
        assert_eq!(names(TEXT, "@MAIN"), ["@main"]);
        assert_eq!(names(TEXT, "some"), ["Some"]);
        assert_eq!(names(TEXT, "rbc"), Vec::<String>::new());
    }

    #[test]
    fn an_empty_query_lists_types_constructors_and_functions() {
        assert_eq!(
            names(TEXT, ""),
            ["Option", "Some", "Nothing", "@conv_bias_relu", "@main"]
        );
    }
}
