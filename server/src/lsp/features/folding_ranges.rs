//! Folding: definitions, function bodies, blocks, match arms, argument
//! lists, the metadata section and block comments — each that spans more
//! than one line, one fold per first line (the outermost).

use crate::lsp::analysis::Analysis;
use relay_syntax::{SyntaxKind::*, TextRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    /// Code: a definition, a body, a block, arguments.
    Code,
    /// The metadata section.
    Region,
    Comment,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fold {
    pub range: TextRange,
    pub kind: FoldKind,
}

pub fn folding_ranges(analysis: &Analysis) -> Vec<Fold> {
    let lines = &analysis.lines;
    // (first line, last line, fold)
    let mut out: Vec<(u32, u32, Fold)> = Vec::new();
    let mut push = |range: TextRange, kind: FoldKind| {
        let start = lines.line(range.start().into());
        let end = lines.line(range.end().into());
        if end > start {
            out.push((start, end, Fold { range, kind }));
        }
    };
    for element in analysis.root().descendants_with_tokens() {
        match element.kind() {
            DEF | TYPE_DEF | FN_EXPR | BLOCK_EXPR | MATCH_ARM_LIST | ARG_LIST => {
                push(element.text_range(), FoldKind::Code)
            }
            METADATA_SECTION | METADATA => push(element.text_range(), FoldKind::Region),
            BLOCK_COMMENT => push(element.text_range(), FoldKind::Comment),
            _ => {}
        }
    }
    out.sort_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
    out.dedup_by_key(|(start, _, _)| *start);
    out.into_iter().map(|(_, _, fold)| fold).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    fn check(marked: &str) {
        fixture::check(marked, |analysis, _| {
            folding_ranges(analysis)
                .into_iter()
                .map(|fold| {
                    let tag = match fold.kind {
                        FoldKind::Code => "fold",
                        FoldKind::Region => "fold region",
                        FoldKind::Comment => "fold comment",
                    };
                    (fold.range, tag.to_string())
                })
                .collect()
        });
    }

    #[test]
    fn definitions_bodies_and_argument_lists_that_span_lines() {
        check(
            "#[version = \"0.0.5\"]\n\
             <fold>def @f(%x: float32) {\n  \
               add<fold>(\n    %x,\n    %x\n  )</fold>\n\
             }</fold>\n\
             def @one_line(%x: float32) { %x }\n",
        );
    }

    #[test]
    fn one_fold_per_first_line_the_outermost() {
        check(
            "#[version = \"0.0.5\"]\n\
             <fold>def @f(%x: float32) { let %g = fn (%y: float32) {\n  \
               %y\n\
             }; %g(%x)\n\
             }</fold>\n",
        );
    }

    #[test]
    fn block_comments_and_the_metadata_section() {
        check(
            "#[version = \"0.0.5\"]\n\
             <fold comment>/* two\n   lines */</fold>\n\
             /* one line */\n\
             def @f(%x: float32) { %x }\n\
             <fold region>#[metadata]\n\
             {\"root\": 1, \"nodes\": [{\"type_key\": \"\"}], \"b64ndarrays\": [], \"attrs\": {\"tvm_version\": \"0.13.0\"}}\n</fold>",
        );
    }
}
