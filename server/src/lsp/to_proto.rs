//! The features' plain answers as LSP types: byte ranges become positions
//! in the client's encoding (through the analysis's [`LineIndex`], the one
//! place that counts UTF-16), and each answer its protocol structure. No
//! decision about *what* to answer is made here.

use super::ext::{ApplyPipelineArgs, APPLY_PIPELINE, PICK_PASS};
use super::features::call_hierarchy::{Call, CallItem};
use super::features::code_actions::CodeAction;
use super::features::code_lenses::Lens;
use super::features::completion::{CompletionItem, CompletionKind};
use super::features::document_symbols::{Symbol, SymbolKind};
use super::features::folding_ranges::{Fold, FoldKind};
use super::features::highlights::{Highlight, HighlightKind};
use super::features::hover::Hover;
use super::features::inlay_hints::TypeHint;
use super::features::metadata_links::MetadataLink;
use super::features::run_function::FunctionRun;
use super::features::semantic_tokens::{SemanticToken, TokenKind};
use super::features::signature_help::SignatureHelp;
use super::features::Replacement;
use super::text::LineIndex;
use relay_passes::diagnostic::{Diagnostic, Severity};
use relay_syntax::format::FormatError;
use relay_syntax::TextRange;
use std::collections::HashMap;
use tower_lsp_server::ls_types::{self as lsp, Uri};

pub fn range(lines: &LineIndex, range: TextRange) -> lsp::Range {
    lines.range(range)
}

/// A code lens; one without a command shows its title only.
pub fn code_lens(lines: &LineIndex, lens: Lens) -> lsp::CodeLens {
    lsp::CodeLens {
        range: range(lines, lens.range),
        command: Some(lsp::Command {
            title: lens.title,
            command: lens.command.unwrap_or_default(),
            arguments: (!lens.arguments.is_empty()).then_some(lens.arguments),
        }),
        data: None,
    }
}

/// The answer of `relay.runFunction`: per tensor its shape, dtype and
/// statistics, the one-line summary, and an error with its editor range.
pub fn function_run(lines: &LineIndex, run: &FunctionRun) -> serde_json::Value {
    let outputs: Vec<serde_json::Value> = run
        .outputs
        .iter()
        .map(|o| {
            serde_json::json!({
                "path": o.path,
                "shape": o.shape,
                "dtype": o.dtype,
                "min": o.min,
                "max": o.max,
                "mean": o.mean,
                "nonFinite": o.non_finite,
            })
        })
        .collect();
    let error = run.error.as_ref().map(|(message, at)| {
        serde_json::json!({
            "message": message,
            "range": at.map(|r| range(lines, r)),
        })
    });
    serde_json::json!({
        "function": run.function,
        "seed": run.seed,
        "outputs": outputs,
        "summary": run.summary(),
        "error": error,
        "stopped": run.stopped,
        "timeMs": run.elapsed_ms,
    })
}

/// Selection steps (innermost first) as LSP's linked list, outermost at
/// the end of the `parent` chain.
pub fn selection_range(lines: &LineIndex, steps: &[TextRange]) -> Option<lsp::SelectionRange> {
    steps.iter().rev().fold(None, |parent, &step| {
        Some(lsp::SelectionRange {
            range: lines.range(step),
            parent: parent.map(Box::new),
        })
    })
}

/// A global function of the call hierarchy; `data` carries its name back
/// in the follow-up requests.
pub fn call_hierarchy_item(lines: &LineIndex, uri: &Uri, item: CallItem) -> lsp::CallHierarchyItem {
    lsp::CallHierarchyItem {
        name: format!("@{}", item.name),
        kind: lsp::SymbolKind::FUNCTION,
        tags: None,
        detail: item.detail,
        uri: uri.clone(),
        range: lines.range(item.range),
        selection_range: lines.range(item.selection_range),
        data: Some(serde_json::Value::String(item.name)),
    }
}

pub fn incoming_call(lines: &LineIndex, uri: &Uri, call: Call) -> lsp::CallHierarchyIncomingCall {
    lsp::CallHierarchyIncomingCall {
        from_ranges: call.sites.iter().map(|&r| lines.range(r)).collect(),
        from: call_hierarchy_item(lines, uri, call.item),
    }
}

pub fn outgoing_call(lines: &LineIndex, uri: &Uri, call: Call) -> lsp::CallHierarchyOutgoingCall {
    lsp::CallHierarchyOutgoingCall {
        from_ranges: call.sites.iter().map(|&r| lines.range(r)).collect(),
        to: call_hierarchy_item(lines, uri, call.item),
    }
}

/// A link from a metadata reference to its entry, in the same document:
/// the document's URI with a `#L<line>,<column>` fragment (1-based), which
/// VS Code opens at that place.
pub fn metadata_link(lines: &LineIndex, uri: &Uri, link: MetadataLink) -> lsp::DocumentLink {
    let at = lines.position(link.entry.start().into());
    let document = uri.as_str().split('#').next().unwrap_or_default();
    let target = format!("{document}#L{},{}", at.line + 1, at.character + 1);
    lsp::DocumentLink {
        range: lines.range(link.reference),
        target: std::str::FromStr::from_str(&target).ok(),
        tooltip: Some("metadata entry".to_string()),
        data: None,
    }
}

pub fn location(lines: &LineIndex, uri: &Uri, range: TextRange) -> lsp::Location {
    lsp::Location::new(uri.clone(), lines.range(range))
}

/// A library diagnostic as an LSP diagnostic (labels become related
/// information; notes and help are appended to the message).
pub fn diagnostic(lines: &LineIndex, uri: &Uri, d: &Diagnostic) -> lsp::Diagnostic {
    let range = d
        .span
        .map_or(lsp::Range::default(), |s| lines.range(s.range));
    let severity = match d.severity {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
        Severity::Help => lsp::DiagnosticSeverity::HINT,
    };
    let mut message = d.message.clone();
    for note in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .map(|label| lsp::DiagnosticRelatedInformation {
            location: location(lines, uri, label.span.range),
            message: label.message.clone(),
        })
        .collect();
    lsp::Diagnostic {
        range,
        severity: Some(severity),
        source: Some(d.layer.as_str().to_string()),
        code: Some(lsp::NumberOrString::String(d.code.id().to_string())),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

pub fn text_edit(lines: &LineIndex, replacement: &Replacement) -> lsp::TextEdit {
    lsp::TextEdit {
        range: lines.range(replacement.range),
        new_text: replacement.text.clone(),
    }
}

pub fn text_edits(lines: &LineIndex, replacements: &[Replacement]) -> Vec<lsp::TextEdit> {
    replacements.iter().map(|r| text_edit(lines, r)).collect()
}

/// Replacements of one document as one workspace edit (one undo).
pub fn workspace_edit(
    lines: &LineIndex,
    uri: &Uri,
    replacements: &[Replacement],
) -> lsp::WorkspaceEdit {
    lsp::WorkspaceEdit {
        changes: Some(HashMap::from([(
            uri.clone(),
            text_edits(lines, replacements),
        )])),
        ..Default::default()
    }
}

pub fn hover(lines: &LineIndex, hover: Hover) -> lsp::Hover {
    lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: hover.markdown,
        }),
        range: Some(lines.range(hover.range)),
    }
}

pub fn highlight(lines: &LineIndex, highlight: Highlight) -> lsp::DocumentHighlight {
    let kind = match highlight.kind {
        HighlightKind::Write => lsp::DocumentHighlightKind::WRITE,
        HighlightKind::Read => lsp::DocumentHighlightKind::READ,
    };
    lsp::DocumentHighlight {
        range: lines.range(highlight.range),
        kind: Some(kind),
    }
}

fn symbol_kind(kind: SymbolKind) -> lsp::SymbolKind {
    match kind {
        SymbolKind::Function => lsp::SymbolKind::FUNCTION,
        SymbolKind::Type => lsp::SymbolKind::ENUM,
        SymbolKind::Constructor => lsp::SymbolKind::ENUM_MEMBER,
    }
}

/// A symbol of an open document for the workspace-wide picker (the
/// detail, a signature, is shown as the container).
pub fn workspace_symbol(lines: &LineIndex, uri: &Uri, symbol: Symbol) -> lsp::WorkspaceSymbol {
    lsp::WorkspaceSymbol {
        name: symbol.name,
        kind: symbol_kind(symbol.kind),
        tags: None,
        container_name: symbol.detail,
        location: lsp::OneOf::Left(location(lines, uri, symbol.selection_range)),
        data: None,
    }
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be written.
pub fn document_symbol(lines: &LineIndex, symbol: Symbol) -> lsp::DocumentSymbol {
    let kind = symbol_kind(symbol.kind);
    lsp::DocumentSymbol {
        name: symbol.name,
        detail: symbol.detail,
        kind,
        tags: None,
        deprecated: None,
        range: lines.range(symbol.range),
        selection_range: lines.range(symbol.selection_range),
        children: symbol.children.map(|children| {
            children
                .into_iter()
                .map(|c| document_symbol(lines, c))
                .collect()
        }),
    }
}

pub fn folding_range(lines: &LineIndex, fold: Fold) -> lsp::FoldingRange {
    let kind = match fold.kind {
        FoldKind::Code => None,
        FoldKind::Region => Some(lsp::FoldingRangeKind::Region),
        FoldKind::Comment => Some(lsp::FoldingRangeKind::Comment),
    };
    lsp::FoldingRange {
        start_line: lines.line(fold.range.start().into()),
        end_line: lines.line(fold.range.end().into()),
        kind,
        ..Default::default()
    }
}

/// The semantic token legend: [`TokenKind`]s in order.
pub const TOKEN_TYPES: &[lsp::SemanticTokenType] = &[
    lsp::SemanticTokenType::KEYWORD,
    lsp::SemanticTokenType::VARIABLE,
    lsp::SemanticTokenType::PARAMETER,
    lsp::SemanticTokenType::FUNCTION,
    lsp::SemanticTokenType::TYPE,
    lsp::SemanticTokenType::TYPE_PARAMETER,
    lsp::SemanticTokenType::NUMBER,
    lsp::SemanticTokenType::STRING,
    lsp::SemanticTokenType::COMMENT,
    lsp::SemanticTokenType::ENUM_MEMBER,
    lsp::SemanticTokenType::PROPERTY,
    lsp::SemanticTokenType::OPERATOR,
    lsp::SemanticTokenType::MACRO,
];

/// The semantic token modifier legend: bit 0 `declaration`, bit 1
/// `defaultLibrary`.
pub const TOKEN_MODIFIERS: &[lsp::SemanticTokenModifier] = &[
    lsp::SemanticTokenModifier::DECLARATION,
    lsp::SemanticTokenModifier::DEFAULT_LIBRARY,
];

fn token_type(kind: TokenKind) -> u32 {
    // The legend lists the kinds in declaration order.
    kind as u32
}

/// Semantic tokens in the protocol's relative encoding. A token spanning
/// lines (a block comment) is sent one line at a time.
pub fn semantic_tokens(lines: &LineIndex, tokens: &[SemanticToken]) -> Vec<lsp::SemanticToken> {
    let text = lines.text();
    let mut out = Vec::new();
    let (mut prev_line, mut prev_start) = (0u32, 0u32);
    for token in tokens {
        let modifiers = u32::from(token.modifiers.declaration)
            | (u32::from(token.modifiers.default_library) << 1);
        let mut start = u32::from(token.range.start());
        let end = u32::from(token.range.end());
        while start < end {
            let line_end = text[start as usize..end as usize]
                .find('\n')
                .map_or(end, |i| start + i as u32);
            if line_end > start {
                let from = lines.position(start);
                let to = lines.position(line_end);
                let delta_line = from.line - prev_line;
                let delta_start = if delta_line == 0 {
                    from.character - prev_start
                } else {
                    from.character
                };
                out.push(lsp::SemanticToken {
                    delta_line,
                    delta_start,
                    length: to.character - from.character,
                    token_type: token_type(token.kind),
                    token_modifiers_bitset: modifiers,
                });
                prev_line = from.line;
                prev_start = from.character;
            }
            start = line_end + 1;
        }
    }
    out
}

pub fn inlay_hint(lines: &LineIndex, hint: TypeHint) -> lsp::InlayHint {
    lsp::InlayHint {
        position: lines.position(hint.offset.into()),
        label: lsp::InlayHintLabel::String(hint.label),
        kind: Some(lsp::InlayHintKind::TYPE),
        text_edits: None,
        tooltip: None,
        padding_left: None,
        padding_right: None,
        data: None,
    }
}

pub fn completion_item(lines: &LineIndex, item: CompletionItem) -> lsp::CompletionItem {
    let kind = match item.kind {
        CompletionKind::Variable => lsp::CompletionItemKind::VARIABLE,
        CompletionKind::Function => lsp::CompletionItemKind::FUNCTION,
        CompletionKind::Property => lsp::CompletionItemKind::PROPERTY,
        CompletionKind::Constructor => lsp::CompletionItemKind::CONSTRUCTOR,
        CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
    };
    lsp::CompletionItem {
        label: item.label,
        kind: Some(kind),
        detail: item.detail,
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
            range: lines.range(item.replace),
            new_text: item.insert,
        })),
        sort_text: item.sort_text,
        ..Default::default()
    }
}

pub fn signature_help(help: SignatureHelp) -> lsp::SignatureHelp {
    let parameters = help
        .parameters
        .iter()
        .map(|&(s, e)| lsp::ParameterInformation {
            label: lsp::ParameterLabel::LabelOffsets([s, e]),
            documentation: None,
        })
        .collect();
    lsp::SignatureHelp {
        signatures: vec![lsp::SignatureInformation {
            label: help.label,
            documentation: Some(lsp::Documentation::MarkupContent(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: help.documentation,
            })),
            parameters: Some(parameters),
            active_parameter: help.active_parameter,
        }],
        active_signature: Some(0),
        active_parameter: help.active_parameter,
    }
}

/// Why the formatter refused the text, each error at its `line:column`
/// (1-based, in the client's encoding).
pub fn format_error(lines: &LineIndex, error: &FormatError) -> String {
    error
        .errors()
        .iter()
        .map(|e| {
            let at = lines.range(e.range()).start;
            format!("{}:{}: {}", at.line + 1, at.character + 1, e.message())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn code_action(lines: &LineIndex, uri: &Uri, action: CodeAction) -> lsp::CodeActionOrCommand {
    let command = |title: String, command: &str, argument: serde_json::Value| lsp::CodeAction {
        title: title.clone(),
        kind: Some(lsp::CodeActionKind::REFACTOR_REWRITE),
        command: Some(lsp::Command {
            title,
            command: command.to_string(),
            arguments: Some(vec![argument]),
        }),
        ..Default::default()
    };
    let action = match action {
        CodeAction::QuickFix(fix) => lsp::CodeAction {
            title: fix.title,
            kind: Some(lsp::CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diagnostic(lines, uri, &fix.diagnostic)]),
            edit: Some(workspace_edit(lines, uri, &fix.edits)),
            is_preferred: Some(true),
            ..Default::default()
        },
        CodeAction::ApplyPipeline {
            title,
            pipeline,
            function,
        } => {
            let args = ApplyPipelineArgs {
                uri: uri.as_str().to_string(),
                pipeline,
                function,
            };
            command(
                title,
                APPLY_PIPELINE,
                serde_json::to_value(args).unwrap_or_default(),
            )
        }
        CodeAction::PickPass { title, applicable } => command(
            title,
            PICK_PASS,
            serde_json::json!({
                "uri": uri.as_str(),
                "applicable": applicable,
            }),
        ),
    };
    lsp::CodeActionOrCommand::CodeAction(action)
}

/// The answer of `relay.findPattern`.
pub fn pattern_matches(
    lines: &LineIndex,
    matches: &[crate::lsp::features::find_pattern::PatternMatch],
) -> serde_json::Value {
    let items: Vec<serde_json::Value> = matches
        .iter()
        .map(|m| {
            serde_json::json!({
                "function": m.function,
                "range": range(lines, m.range),
                "parts": m.parts.iter().map(|r| range(lines, *r)).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "matches": items })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::semantic_tokens::Modifiers;
    use crate::lsp::text::Encoding;
    use std::sync::Arc;

    /// Positions count UTF-16 code units; a block comment over two lines is
    /// sent as two tokens; deltas are relative to the previous token.
    #[test]
    fn semantic_tokens_are_split_by_line_and_relative() {
        let text: Arc<str> = Arc::from("é /* a\nbc */ x");
        let lines = LineIndex::new(text.clone(), Encoding::Utf16);
        let token = |start: usize, end: usize, kind| SemanticToken {
            range: TextRange::new((start as u32).into(), (end as u32).into()),
            kind,
            modifiers: Modifiers {
                declaration: true,
                default_library: false,
            },
        };
        let comment_start = text.find("/*").unwrap();
        let comment_end = text.find("*/").unwrap() + 2;
        let x = text.find('x').unwrap();
        let sent = semantic_tokens(
            &lines,
            &[
                token(comment_start, comment_end, TokenKind::Comment),
                token(x, x + 1, TokenKind::Variable),
            ],
        );
        let plain: Vec<[u32; 5]> = sent
            .iter()
            .map(|t| {
                [
                    t.delta_line,
                    t.delta_start,
                    t.length,
                    t.token_type,
                    t.token_modifiers_bitset,
                ]
            })
            .collect();
        assert_eq!(plain, [[0, 2, 4, 8, 1], [1, 0, 5, 8, 1], [0, 6, 1, 1, 1]]);
        assert_eq!(
            TOKEN_TYPES[token_type(TokenKind::Macro) as usize],
            lsp::SemanticTokenType::MACRO
        );
    }

    /// The editor gets the code as `Diagnostic.code`, the layer as
    /// `source`, notes and help in the message, labels as related
    /// information.
    #[test]
    fn diagnostics_carry_code_layer_notes_and_labels() {
        let text = "#[version = \"0.0.5\"]\ndef @f(%x: float32) { add(%x, %y) }\n";
        let analysis = crate::lsp::features::fixture::analysis(text);
        let uri: Uri = "file:///m.relay".parse().unwrap();
        let d = &analysis.diagnostics[0];
        let sent = diagnostic(&analysis.lines, &uri, d);
        assert_eq!(sent.code, Some(lsp::NumberOrString::String("E0101".into())));
        assert_eq!(sent.source.as_deref(), Some(d.layer.as_str()));
        assert_eq!(sent.range, analysis.lines.range(d.span.unwrap().range));
        let mut with_extras = d.clone().with_note("a note");
        with_extras.help = Some("some help".to_string());
        let sent = diagnostic(&analysis.lines, &uri, &with_extras);
        assert!(
            sent.message.ends_with("\nnote: a note\nhelp: some help"),
            "{}",
            sent.message
        );
    }

    #[test]
    fn folds_are_whole_lines() {
        let lines = LineIndex::new(Arc::from("a {\n b\n}\n"), Encoding::Utf16);
        let fold = folding_range(
            &lines,
            Fold {
                range: TextRange::new(2.into(), 8.into()),
                kind: FoldKind::Comment,
            },
        );
        assert_eq!((fold.start_line, fold.end_line), (0, 2));
        assert_eq!(fold.kind, Some(lsp::FoldingRangeKind::Comment));
    }
}
