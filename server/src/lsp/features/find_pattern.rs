//! "Find pattern": every place in the document where a dataflow pattern
//! (the syntax of `docs/patterns.md`) matches, as byte ranges: the matched
//! expression and the other expressions the pattern's non-wildcard nodes
//! matched. Named patterns of the project (`@name`) are available.

use crate::lsp::analysis::Analysis;
use relay_passes::patterns::find::find_all;
use relay_passes::patterns::text::{parse_pattern, NamedPatterns, PatternError};
use relay_syntax::TextRange;

/// One match in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternMatch {
    /// The global function it is in (without `@`).
    pub function: String,
    /// The matched expression.
    pub range: TextRange,
    /// The other matched expressions.
    pub parts: Vec<TextRange>,
}

/// The matches of `pattern` in the document (sorted by position), or the
/// pattern's syntax error. Type patterns see the types inference found.
pub fn find_pattern(
    analysis: &Analysis,
    pattern: &str,
    named: NamedPatterns<'_>,
) -> Result<Vec<PatternMatch>, PatternError> {
    let parsed = parse_pattern(pattern, named)?;
    let module = analysis.typed.as_ref().unwrap_or(&analysis.lowered);
    let mut out = Vec::new();
    for (name, function) in module.functions() {
        for found in find_all(&parsed.pattern, function.expr()) {
            let Some(range) = found.root.span().map(|s| analysis.resolve(s).range) else {
                continue;
            };
            let mut parts: Vec<TextRange> = found
                .parts
                .iter()
                .filter_map(|e| e.span().map(|s| analysis.resolve(s).range))
                .filter(|r| *r != range)
                .collect();
            parts.sort_by_key(|r| (r.start(), r.end()));
            parts.dedup();
            out.push(PatternMatch {
                function: name.to_string(),
                range,
                parts,
            });
        }
    }
    out.sort_by_key(|m| (m.range.start(), m.range.end()));
    out.dedup_by(|a, b| a.range == b.range);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;
    use relay_passes::patterns::text::no_named_patterns;

    /// The fixture marks each match `<m>…</m>` (nested matches nest).
    fn check(marked: &str, pattern: &str) {
        fixture::check(marked, |analysis, _| {
            find_pattern(analysis, pattern, &no_named_patterns)
                .unwrap()
                .into_iter()
                .map(|m| (m.range, "m".to_string()))
                .collect()
        });
    }

    #[test]
    fn finds_every_match_in_every_function() {
        check(
            r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4), float32]) {
  %0 = <m>nn.relu(<m>add(%x, %x)</m>)</m>;
  <m>add(%0, 1f)</m>
}
def @other(%y: Tensor[(1, 4), float32]) {
  <m>add(%y, %y)</m>
}
"#,
            "add(*, *) | nn.relu(add(*, *))",
        );
    }

    #[test]
    fn shared_captures_and_types() {
        check(
            r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4), float32], %y: Tensor[(1, 4), int32]) {
  %0 = <m>add(%x, %x)</m>;
  %1 = add(%y, %y);
  add(%0, %x)
}
"#,
            "add($a, $a).has_dtype(\"float32\")",
        );
    }

    #[test]
    fn a_syntax_error_has_its_range() {
        let analysis = fixture::analysis("#[version = \"0.0.5\"]\ndef @main() { 1f }\n");
        let err = find_pattern(&analysis, "nn.relu(_)", &no_named_patterns).unwrap_err();
        assert_eq!(err.range, TextRange::new(8.into(), 9.into()));
    }
}
