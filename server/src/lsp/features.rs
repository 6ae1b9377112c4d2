//! The read-only editor features, each a function of one [`Analysis`]:
//! diagnostics conversion, hover, definition, references, highlights,
//! rename, document symbols, folding ranges, semantic tokens, inlay hints,
//! completion, signature help and formatting.

use super::analysis::Analysis;
use relay_passes::diagnostic::{Diagnostic, Severity};
use relay_passes::ir::{Expr, ExprKind, Type};
use relay_passes::lower::{DefId, Definition, NameKind};
use relay_passes::op::{self, OpDef};
use relay_passes::printer::print_type;
use relay_syntax::{SyntaxKind, SyntaxKind::*, SyntaxNode, SyntaxToken, TextRange, TextSize};
use std::collections::HashMap;
use tower_lsp_server::ls_types::{self as lsp, Uri};

// ---- diagnostics ----

/// A library diagnostic as an LSP diagnostic (labels become related
/// information; notes and help are appended to the message).
pub fn to_lsp_diagnostic(analysis: &Analysis, uri: &Uri, d: &Diagnostic) -> lsp::Diagnostic {
    let lines = &analysis.lines;
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
            location: lsp::Location::new(uri.clone(), lines.range(label.span.range)),
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

// ---- tokens under the cursor ----

fn is_trivia(kind: SyntaxKind) -> bool {
    matches!(kind, WHITESPACE | LINE_COMMENT | BLOCK_COMMENT)
}

fn is_name(kind: SyntaxKind) -> bool {
    matches!(kind, LOCAL | GRAPH | GLOBAL | IDENT)
}

/// The token under the cursor: a name if one touches the offset, else any
/// non-trivia token.
pub fn token_at(root: &SyntaxNode, offset: TextSize) -> Option<SyntaxToken> {
    if !root.text_range().contains_inclusive(offset) {
        return None;
    }
    let tokens: Vec<SyntaxToken> = root.token_at_offset(offset).collect();
    tokens
        .iter()
        .find(|t| is_name(t.kind()))
        .or_else(|| tokens.iter().find(|t| !is_trivia(t.kind())))
        .cloned()
}

fn code_block(text: &str) -> String {
    format!("```relay\n{text}\n```")
}

fn markdown(value: String, range: Option<lsp::Range>) -> lsp::Hover {
    lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value,
        }),
        range,
    }
}

/// The type to show for an expression: its checked type.
fn type_of(expr: &Expr) -> Option<String> {
    expr.checked_type().map(print_type)
}

/// The IR variable bound at `def` (a local's defining token).
fn var_at(analysis: &Analysis, def: TextRange) -> Option<&Expr> {
    analysis
        .index()
        .starting_at(def.start().into())
        .find(|(_, e)| matches!(e.kind(), ExprKind::Var(_)))
        .map(|(_, e)| e)
}

fn var_type(expr: &Expr) -> Option<String> {
    match expr.kind() {
        ExprKind::Var(data) => expr
            .checked_type()
            .or(data.type_annotation.as_ref())
            .map(print_type),
        _ => type_of(expr),
    }
}

/// What the graph binding `%N = e;` whose number token is at `def` stands
/// for: the IR node of `e`.
fn graph_value(analysis: &Analysis, def: TextRange) -> Option<&Expr> {
    let token = analysis
        .root()
        .token_at_offset(def.start())
        .find(|t| t.kind() == GRAPH)?;
    let binding = token.parent().filter(|n| n.kind() == GRAPH_BINDING)?;
    let value = binding.children().last()?;
    analysis.index().exact(value.text_range())
}

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

/// `def @f(%x: T, …) -> R` from the typed module.
pub fn global_signature(analysis: &Analysis, name: &str) -> Option<String> {
    let function = analysis.module().function(name)?;
    let params: Vec<String> = function
        .params()
        .iter()
        .map(|p| match var_type(p.expr()) {
            Some(t) => format!("%{}: {t}", p.name()),
            None => format!("%{}", p.name()),
        })
        .collect();
    let ret = function
        .expr()
        .checked_type()
        .and_then(|t| t.as_func().map(|f| f.ret.clone()))
        .or_else(|| function.data().ret_type.clone());
    let type_params = &function.data().type_params;
    let tp = if type_params.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = type_params.iter().map(|t| t.name()).collect();
        format!("[{}]", names.join(", "))
    };
    let mut out = format!("def @{name}{tp}({})", params.join(", "));
    if let Some(ret) = ret {
        out.push_str(" -> ");
        out.push_str(&print_type(&ret));
    }
    Some(out)
}

/// Markdown documentation of an operator: signature, description,
/// arguments, attributes with types and defaults.
pub fn op_documentation(op: &OpDef) -> String {
    let mut out = code_block(&op_signature(op).0);
    out.push_str("\n\n");
    if !op.description.is_empty() {
        out.push_str(&op.description);
        out.push_str("\n\n");
    }
    if !op.arguments.is_empty() {
        out.push_str("**Arguments**\n\n");
        for arg in &op.arguments {
            out.push_str(&format!("- `{}`: {}\n", arg.name, arg.kind));
        }
        out.push('\n');
    }
    if let Some(schema) = op.attrs() {
        out.push_str(&format!("**Attributes** (`{}`)\n\n", schema.type_key));
        for field in &schema.fields {
            out.push_str(&format!(
                "- `{}`: `{}` = `{}`\n",
                field.name, field.ty, field.default
            ));
        }
        out.push('\n');
    }
    let mut facts = Vec::new();
    if let Some(rel) = &op.type_rel {
        facts.push(format!("type relation `{rel}`"));
    }
    facts.push(format!("pattern `{}`", op.fusion_pattern()));
    if let Some(level) = op.support_level {
        facts.push(format!("support level {level}"));
    }
    out.push_str(&facts.join(", "));
    out
}

/// `name(arg, …, attr=default, …)` and the byte ranges of each parameter
/// in it (arguments, then attributes).
pub fn op_signature(op: &OpDef) -> (String, Vec<(u32, u32)>) {
    let mut label = format!("{}(", op.name);
    let mut params = Vec::new();
    let mut parts: Vec<String> = op.arguments.iter().map(|a| a.name.clone()).collect();
    if op.is_variadic() && parts.is_empty() {
        parts.push("args...".to_string());
    }
    if let Some(schema) = op.attrs() {
        parts.extend(
            schema
                .fields
                .iter()
                .map(|f| format!("{}={}", f.name, f.default)),
        );
    }
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            label.push_str(", ");
        }
        let start = label.len() as u32;
        label.push_str(part);
        params.push((start, label.len() as u32));
    }
    label.push(')');
    (label, params)
}

/// The operator a `PATH_EXPR` names, if it is one.
fn path_op(path: &SyntaxNode) -> Option<&'static OpDef> {
    if path.kind() != PATH_EXPR {
        return None;
    }
    op::lookup(path.text().to_string().trim())
}

/// The operator called by the innermost call whose argument list holds
/// `offset`, with that call.
fn enclosing_op_call(root: &SyntaxNode, offset: TextSize) -> Option<(SyntaxNode, &'static OpDef)> {
    let token = root.token_at_offset(offset).left_biased()?;
    token.parent_ancestors().find_map(|n| {
        if n.kind() != ARG_LIST {
            return None;
        }
        let range = n.text_range();
        // Inside the parentheses.
        if offset <= range.start() || (offset >= range.end() && n.text().to_string().ends_with(')'))
        {
            return None;
        }
        let call = n.parent().filter(|p| p.kind() == CALL_EXPR)?;
        let callee = call.children().next()?;
        path_op(&callee).map(|op| (n, op))
    })
}

pub fn hover(analysis: &Analysis, offset: TextSize) -> Option<lsp::Hover> {
    let root = analysis.root();
    let token = token_at(&root, offset)?;
    let range = Some(analysis.lines.range(token.text_range()));
    let parent = token.parent()?;
    // Operators and attributes.
    if token.kind() == IDENT {
        if let Some(path) = parent.ancestors().find(|n| n.kind() == PATH_EXPR) {
            if let Some(op) = path_op(&path) {
                let mut text = op_documentation(op);
                if let Some(call) = path.parent().filter(|p| p.kind() == CALL_EXPR) {
                    if let Some(t) = analysis.index().exact(call.text_range()).and_then(type_of) {
                        text = format!("{}\n\n---\n\nthis call: {}", text, code_block(&t));
                    }
                }
                return Some(markdown(
                    text,
                    Some(analysis.lines.range(path.text_range())),
                ));
            }
        }
        if parent.kind() == ATTR_KEY {
            if let Some((_, op)) = enclosing_op_call(&root, offset) {
                if let Some(field) = op.attrs().and_then(|s| s.field(token.text())) {
                    let text = format!(
                        "{}\n\nattribute of `{}`",
                        code_block(&format!("{}: {} = {}", field.name, field.ty, field.default)),
                        op.name
                    );
                    return Some(markdown(text, range));
                }
            }
        }
    }
    // Names.
    if is_name(token.kind()) {
        if let Some((_, def)) = analysis.names.definition_at(offset) {
            if let Some(text) = name_hover(analysis, def) {
                return Some(markdown(text, range));
            }
        }
    }
    // Any other expression: its type.
    let (expr_range, expr) = analysis.index().enclosing(&parent)?;
    let t = type_of(expr)?;
    Some(markdown(
        code_block(&t),
        Some(analysis.lines.range(expr_range)),
    ))
}

/// What hover shows for a name: its type or signature and what it is.
fn name_hover(analysis: &Analysis, def: &Definition) -> Option<String> {
    let name = &def.name;
    let text = match def.kind {
        NameKind::Param | NameKind::Let | NameKind::PatternVar | NameKind::FreeVar => {
            let t = def
                .range
                .and_then(|range| var_at(analysis, range))
                .and_then(var_type);
            let what = match def.kind {
                NameKind::Param => "parameter",
                NameKind::PatternVar => "pattern variable",
                NameKind::FreeVar => "free variable",
                _ => "local variable",
            };
            match t {
                Some(t) => format!("{}\n\n{what}", code_block(&format!("%{name}: {t}"))),
                None => format!("{}\n\n{what}", code_block(&format!("%{name}"))),
            }
        }
        NameKind::Undeclared => format!(
            "{}\n\nnot declared: add it as a parameter or bind it with `let`",
            code_block(&format!("%{name}"))
        ),
        NameKind::Graph => {
            let t = def
                .range
                .and_then(|range| graph_value(analysis, range))
                .and_then(type_of);
            match t {
                Some(t) => format!("{}\n\ngraph binding", code_block(&format!("%{name}: {t}"))),
                None => format!("{}\n\ngraph binding", code_block(&format!("%{name}"))),
            }
        }
        NameKind::Global => {
            let sig = global_signature(analysis, name).unwrap_or_else(|| format!("def @{name}"));
            format!("{}\n\nglobal function", code_block(&sig))
        }
        NameKind::Constructor => match analysis.module().constructor(name) {
            Some(ctor) => {
                let data = ctor.data();
                let fields: Vec<String> = data.inputs.iter().map(print_type).collect();
                format!(
                    "{}\n\nconstructor {} of `{}`",
                    code_block(&format!("{name}({})", fields.join(", "))),
                    data.tag,
                    data.belong_to.name()
                )
            }
            None => code_block(name),
        },
        NameKind::TypeName => match analysis.module().type_definition(name) {
            Some(data) => {
                let params: Vec<&str> = data.type_vars.iter().map(|v| v.name()).collect();
                let ctors: Vec<&str> = data.constructors.iter().map(|c| c.name()).collect();
                let head = if params.is_empty() {
                    name.clone()
                } else {
                    format!("{name}[{}]", params.join(", "))
                };
                format!(
                    "{}\n\nconstructors: {}",
                    code_block(&format!("type {head}")),
                    ctors.join(", ")
                )
            }
            None => code_block(&format!("type {name}")),
        },
        NameKind::TypeParam => format!("{}\n\ntype parameter", code_block(name)),
    };
    Some(text)
}

// ---- definition, references, rename ----

/// The definition the name at `offset` resolves to (nothing for names
/// declared nowhere in the text).
pub fn definition(analysis: &Analysis, uri: &Uri, offset: TextSize) -> Option<lsp::Location> {
    let (_, def) = analysis.names.definition_at(offset)?;
    let range = def.range?;
    Some(lsp::Location::new(uri.clone(), analysis.lines.range(range)))
}

pub fn references(
    analysis: &Analysis,
    uri: &Uri,
    offset: TextSize,
    include_declaration: bool,
) -> Vec<lsp::Location> {
    let Some((id, def)) = analysis.names.definition_at(offset) else {
        return Vec::new();
    };
    let declaration = def.range.filter(|_| include_declaration);
    declaration
        .into_iter()
        .chain(analysis.names.references(id).iter().copied())
        .map(|r| lsp::Location::new(uri.clone(), analysis.lines.range(r)))
        .collect()
}

pub fn highlights(analysis: &Analysis, offset: TextSize) -> Vec<lsp::DocumentHighlight> {
    let Some((id, def)) = analysis.names.definition_at(offset) else {
        return Vec::new();
    };
    def.range
        .map(|d| (d, lsp::DocumentHighlightKind::WRITE))
        .into_iter()
        .chain(
            analysis
                .names
                .references(id)
                .iter()
                .map(|r| (*r, lsp::DocumentHighlightKind::READ)),
        )
        .map(|(r, kind)| lsp::DocumentHighlight {
            range: analysis.lines.range(r),
            kind: Some(kind),
        })
        .collect()
}

/// The range a rename replaces and the current name.
pub fn prepare_rename(analysis: &Analysis, offset: TextSize) -> Option<(lsp::Range, String)> {
    let occurrence = analysis.names.at(offset)?;
    let def = analysis.names.definition(occurrence.def);
    let range = name_range(analysis.text(), occurrence.range);
    Some((analysis.lines.range(range), def.name.clone()))
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
/// lowering resolved to it, nothing else), or why it cannot be renamed.
pub fn rename(
    analysis: &Analysis,
    offset: TextSize,
    new_name: &str,
) -> Result<Vec<lsp::TextEdit>, String> {
    let (id, def): (DefId, &Definition) = analysis
        .names
        .definition_at(offset)
        .ok_or("there is no name to rename here")?;
    let new_name = new_name.strip_prefix(['%', '@']).unwrap_or(new_name);
    if !valid_name(def.kind, new_name) {
        return Err(format!("`{new_name}` is not a valid name here"));
    }
    let mut edits: Vec<lsp::TextEdit> = analysis
        .names
        .occurrences(id)
        .map(|r| lsp::TextEdit {
            range: analysis.lines.range(name_range(analysis.text(), r)),
            new_text: new_name.to_string(),
        })
        .collect();
    edits.sort_by_key(|e| (e.range.start.line, e.range.start.character));
    edits.dedup_by_key(|e| e.range);
    Ok(edits)
}

// ---- outline ----

#[allow(deprecated)]
pub fn document_symbols(analysis: &Analysis) -> Vec<lsp::DocumentSymbol> {
    let root = analysis.root();
    let lines = &analysis.lines;
    let mut out = Vec::new();
    for item in root.children() {
        match item.kind() {
            DEF => {
                let Some(name) = item
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| t.kind() == GLOBAL)
                else {
                    continue;
                };
                let detail = global_signature(analysis, name.text().trim_start_matches('@'));
                out.push(lsp::DocumentSymbol {
                    name: name.text().to_string(),
                    detail,
                    kind: lsp::SymbolKind::FUNCTION,
                    tags: None,
                    deprecated: None,
                    range: lines.range(item.text_range()),
                    selection_range: lines.range(name.text_range()),
                    children: None,
                });
            }
            TYPE_DEF | EXTERN_TYPE_DEF => {
                let Some(name) = item
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| t.kind() == IDENT)
                else {
                    continue;
                };
                let children: Vec<lsp::DocumentSymbol> = item
                    .descendants()
                    .filter(|n| n.kind() == CTOR_DEF)
                    .filter_map(|ctor| {
                        let token = ctor
                            .children_with_tokens()
                            .filter_map(|e| e.into_token())
                            .find(|t| t.kind() == IDENT)?;
                        Some(lsp::DocumentSymbol {
                            name: token.text().to_string(),
                            detail: None,
                            kind: lsp::SymbolKind::ENUM_MEMBER,
                            tags: None,
                            deprecated: None,
                            range: lines.range(ctor.text_range()),
                            selection_range: lines.range(token.text_range()),
                            children: None,
                        })
                    })
                    .collect();
                out.push(lsp::DocumentSymbol {
                    name: name.text().to_string(),
                    detail: Some("type".to_string()),
                    kind: lsp::SymbolKind::ENUM,
                    tags: None,
                    deprecated: None,
                    range: lines.range(item.text_range()),
                    selection_range: lines.range(name.text_range()),
                    children: Some(children),
                });
            }
            _ => {}
        }
    }
    out
}

pub fn folding_ranges(analysis: &Analysis) -> Vec<lsp::FoldingRange> {
    let lines = &analysis.lines;
    let mut out = Vec::new();
    let mut push = |range: TextRange, kind: Option<lsp::FoldingRangeKind>| {
        let start = lines.position(range.start().into()).line;
        let end = lines.position(range.end().into()).line;
        if end > start {
            out.push(lsp::FoldingRange {
                start_line: start,
                end_line: end,
                kind,
                ..Default::default()
            });
        }
    };
    for element in analysis.root().descendants_with_tokens() {
        match element.kind() {
            DEF | TYPE_DEF | FN_EXPR | BLOCK_EXPR | MATCH_ARM_LIST | ARG_LIST => {
                push(element.text_range(), None)
            }
            METADATA_SECTION | METADATA => {
                push(element.text_range(), Some(lsp::FoldingRangeKind::Region))
            }
            BLOCK_COMMENT => push(element.text_range(), Some(lsp::FoldingRangeKind::Comment)),
            _ => {}
        }
    }
    out.sort_by_key(|f| (f.start_line, std::cmp::Reverse(f.end_line)));
    out.dedup_by_key(|f| f.start_line);
    out
}

// ---- semantic tokens ----

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

pub const TOKEN_MODIFIERS: &[lsp::SemanticTokenModifier] = &[
    lsp::SemanticTokenModifier::DECLARATION,
    lsp::SemanticTokenModifier::DEFAULT_LIBRARY,
];

const T_KEYWORD: u32 = 0;
const T_VARIABLE: u32 = 1;
const T_PARAMETER: u32 = 2;
const T_FUNCTION: u32 = 3;
const T_TYPE: u32 = 4;
const T_TYPE_PARAMETER: u32 = 5;
const T_NUMBER: u32 = 6;
const T_STRING: u32 = 7;
const T_COMMENT: u32 = 8;
const T_ENUM_MEMBER: u32 = 9;
const T_PROPERTY: u32 = 10;
const T_OPERATOR: u32 = 11;
const T_MACRO: u32 = 12;
const T_DECLARATION: u32 = 1;
const T_DEFAULT_LIBRARY: u32 = 2;

fn classify(
    analysis: &Analysis,
    token: &SyntaxToken,
    ctors: &HashMap<&str, ()>,
) -> Option<(u32, u32)> {
    let parent = token.parent().map(|p| p.kind());
    Some(match token.kind() {
        LET_KW | FN_KW | DEF_KW | IF_KW | ELSE_KW | TYPE_KW | MATCH_KW | MATCH_Q_KW | EXTERN_KW
        | FREE_VAR_KW | REF_KW | REF_READ_KW | REF_WRITE_KW => (T_KEYWORD, 0),
        LOCAL => match parent {
            Some(PARAM) => (T_PARAMETER, T_DECLARATION),
            Some(LET_STMT | VAR_PAT | FREE_VAR_STMT) => (T_VARIABLE, T_DECLARATION),
            _ => (T_VARIABLE, 0),
        },
        GRAPH => match parent {
            Some(GRAPH_BINDING) => (T_VARIABLE, T_DECLARATION),
            _ => (T_VARIABLE, 0),
        },
        GLOBAL => match parent {
            Some(DEF) => (T_FUNCTION, T_DECLARATION),
            _ => (T_FUNCTION, 0),
        },
        IDENT => match parent {
            Some(PATH_EXPR) | Some(CTOR_PAT) => {
                if ctors.contains_key(token.text()) {
                    (T_ENUM_MEMBER, 0)
                } else {
                    (T_FUNCTION, T_DEFAULT_LIBRARY)
                }
            }
            Some(ATTR_KEY) | Some(ATTR) => (T_PROPERTY, 0),
            Some(CTOR_DEF) => (T_ENUM_MEMBER, T_DECLARATION),
            Some(TYPE_PARAM) => (T_TYPE_PARAMETER, T_DECLARATION),
            Some(TYPE_DEF | EXTERN_TYPE_DEF) => (T_TYPE, T_DECLARATION),
            Some(NAMED_TYPE) => {
                let offset = token.text_range().start();
                let kind = analysis.names.definition_at(offset).map(|(_, d)| d.kind);
                if kind == Some(NameKind::TypeParam) {
                    (T_TYPE_PARAMETER, 0)
                } else {
                    (T_TYPE, 0)
                }
            }
            Some(TENSOR_TYPE | SCALAR_TYPE | DIM) => (T_TYPE, T_DEFAULT_LIBRARY),
            _ => return None,
        },
        INT | FLOAT => (T_NUMBER, 0),
        BOOL => (T_KEYWORD, 0),
        STRING => (T_STRING, 0),
        LINE_COMMENT | BLOCK_COMMENT => (T_COMMENT, 0),
        META_REF | VERSION_ATTR => (T_MACRO, 0),
        PLUS | MINUS | STAR | SLASH | L_ANGLE | R_ANGLE | BANG if parent == Some(BIN_EXPR) => {
            (T_OPERATOR, 0)
        }
        _ => return None,
    })
}

/// Semantic tokens of the lines in `range` (all when `None`).
pub fn semantic_tokens(analysis: &Analysis, range: Option<TextRange>) -> Vec<lsp::SemanticToken> {
    let ctor_names: Vec<String> = analysis
        .module()
        .type_definitions()
        .flat_map(|(_, d)| d.constructors.iter().map(|c| c.name().to_string()))
        .collect();
    let ctors: HashMap<&str, ()> = ctor_names.iter().map(|c| (c.as_str(), ())).collect();
    let root = analysis.root();
    let lines = &analysis.lines;
    let text = analysis.text();
    let mut out = Vec::new();
    let (mut prev_line, mut prev_start) = (0u32, 0u32);
    let tokens: Box<dyn Iterator<Item = SyntaxToken>> = match range {
        Some(range) => match root.covering_element(range) {
            relay_syntax::SyntaxElement::Node(node) => Box::new(
                node.descendants_with_tokens()
                    .filter_map(|e| e.into_token())
                    .filter(move |t| t.text_range().intersect(range).is_some()),
            ),
            relay_syntax::SyntaxElement::Token(token) => Box::new(std::iter::once(token)),
        },
        None => Box::new(
            root.descendants_with_tokens()
                .filter_map(|e| e.into_token()),
        ),
    };
    for token in tokens {
        let Some((kind, modifiers)) = classify(analysis, &token, &ctors) else {
            continue;
        };
        // Tokens spanning lines (block comments) are sent one line at a time.
        let range = token.text_range();
        let mut start = u32::from(range.start());
        let end = u32::from(range.end());
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
                    token_type: kind,
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

// ---- inlay hints ----

/// `: T` after every `let` variable without an annotation and every graph
/// binding, in `range`.
pub fn inlay_hints(analysis: &Analysis, range: TextRange) -> Vec<lsp::InlayHint> {
    let root = analysis.root();
    let node = match root.covering_element(range) {
        relay_syntax::SyntaxElement::Node(node) => node,
        relay_syntax::SyntaxElement::Token(token) => match token.parent() {
            Some(parent) => parent,
            None => return Vec::new(),
        },
    };
    let mut out = Vec::new();
    for n in node.descendants() {
        if !n
            .text_range()
            .intersect(range)
            .is_some_and(|r| !r.is_empty() || range.is_empty())
        {
            continue;
        }
        let (name, t) = match n.kind() {
            LET_STMT => {
                if n.children_with_tokens().any(|e| e.kind() == COLON) {
                    continue;
                }
                let Some(local) = n
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| t.kind() == LOCAL)
                else {
                    continue;
                };
                let t =
                    var_at(analysis, local.text_range()).and_then(|e| e.checked_type().cloned());
                (local, t)
            }
            GRAPH_BINDING => {
                let Some(graph) = n
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| t.kind() == GRAPH)
                else {
                    continue;
                };
                let t = n
                    .children()
                    .last()
                    .and_then(|v| analysis.index().exact(v.text_range()))
                    .and_then(|e| e.checked_type().cloned());
                (graph, t)
            }
            _ => continue,
        };
        let Some(t) = t.filter(|t| !contains_incomplete(t)) else {
            continue;
        };
        out.push(lsp::InlayHint {
            position: analysis.lines.position(name.text_range().end().into()),
            label: lsp::InlayHintLabel::String(format!(": {}", print_type(&t))),
            kind: Some(lsp::InlayHintKind::TYPE),
            text_edits: None,
            tooltip: None,
            padding_left: None,
            padding_right: None,
            data: None,
        });
    }
    out
}

fn contains_incomplete(t: &Type) -> bool {
    print_type(t).contains('_')
}

// ---- completion and signature help ----

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

fn ident_char(c: u8) -> bool {
    c == b'_' || c == b'/' || c == b'.' || c.is_ascii_alphanumeric()
}

pub fn completion(analysis: &Analysis, offset: TextSize) -> Vec<lsp::CompletionItem> {
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
    let edit_range = analysis.lines.range(TextRange::new(
        (replace_start as u32).into(),
        (end as u32).into(),
    ));
    let item = |label: String, kind: lsp::CompletionItemKind, detail: Option<String>| {
        lsp::CompletionItem {
            label: label.clone(),
            kind: Some(kind),
            detail,
            text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
                range: edit_range,
                new_text: label,
            })),
            ..Default::default()
        }
    };
    let names = &analysis.names;
    let mut out = Vec::new();
    let locals = |out: &mut Vec<lsp::CompletionItem>| {
        for id in names.visible_at(offset) {
            let def = names.definition(id);
            let detail = match (def.kind, def.range) {
                (NameKind::Graph, Some(range)) => graph_value(analysis, range).and_then(type_of),
                (_, Some(range)) => var_at(analysis, range).and_then(var_type),
                (_, None) => None,
            };
            out.push(item(
                format!("%{}", def.name),
                lsp::CompletionItemKind::VARIABLE,
                detail,
            ));
        }
    };
    let globals = |out: &mut Vec<lsp::CompletionItem>| {
        for (name, _) in analysis.module().functions() {
            out.push(item(
                format!("@{name}"),
                lsp::CompletionItemKind::FUNCTION,
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
                            lsp::CompletionItemKind::PROPERTY,
                            Some(format!("{} = {}", field.ty, field.default)),
                        );
                        if let Some(lsp::CompletionTextEdit::Edit(edit)) = &mut attr.text_edit {
                            edit.new_text = format!("{}=", field.name);
                        }
                        attr.sort_text = Some(format!("0{}", field.name));
                        out.push(attr);
                    }
                }
            }
            for op in op::all_ops() {
                let mut it = item(
                    op.name.clone(),
                    lsp::CompletionItemKind::FUNCTION,
                    Some(op.description.clone()),
                );
                it.sort_text = Some(format!("2{}", op.name));
                out.push(it);
            }
            for (_, data) in analysis.module().type_definitions() {
                for ctor in &data.constructors {
                    out.push(item(
                        ctor.name().to_string(),
                        lsp::CompletionItemKind::CONSTRUCTOR,
                        Some(format!("constructor of {}", data.header.name())),
                    ));
                }
            }
            for kw in KEYWORDS {
                out.push(item(kw.to_string(), lsp::CompletionItemKind::KEYWORD, None));
            }
            let before = out.len();
            locals(&mut out);
            globals(&mut out);
            for it in &mut out[before..] {
                it.sort_text = Some(format!("1{}", it.label));
            }
        }
    }
    out
}

pub fn signature_help(analysis: &Analysis, offset: TextSize) -> Option<lsp::SignatureHelp> {
    let (args, op) = enclosing_op_call(&analysis.root(), offset)?;
    let (label, params) = op_signature(op);
    let nargs = op
        .arguments
        .len()
        .max(usize::from(op.is_variadic() && op.arguments.is_empty()));
    // Which argument: commas before the cursor, or the attribute being written.
    let commas = args
        .children_with_tokens()
        .filter(|e| e.kind() == COMMA && e.text_range().end() <= offset)
        .count();
    let current_attr = args
        .children()
        .filter(|n| n.kind() == ATTR)
        .find(|n| n.text_range().contains_inclusive(offset))
        .and_then(|a| a.children().find(|k| k.kind() == ATTR_KEY))
        .map(|k| k.text().to_string());
    let active = match (current_attr, op.attrs()) {
        (Some(key), Some(schema)) => schema.field_index(&key).map(|i| nargs + i),
        _ if commas < nargs => Some(commas),
        _ => None,
    };
    let parameters = params
        .iter()
        .map(|&(s, e)| lsp::ParameterInformation {
            label: lsp::ParameterLabel::LabelOffsets([s, e]),
            documentation: None,
        })
        .collect();
    Some(lsp::SignatureHelp {
        signatures: vec![lsp::SignatureInformation {
            label,
            documentation: Some(lsp::Documentation::MarkupContent(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: op.description.clone(),
            })),
            parameters: Some(parameters),
            active_parameter: active.map(|a| a as u32),
        }],
        active_signature: Some(0),
        active_parameter: active.map(|a| a as u32),
    })
}

// ---- formatting ----

/// Whether the file writes `/* ty=… */` comments (then printed text keeps them).
pub fn shows_types(analysis: &Analysis) -> bool {
    analysis.text().contains("/* ty=")
}

/// Formatting: the file laid out by the formatter `relay fmt` uses
/// (comments kept), as one edit that replaces only the stretch between the
/// first and the last character that change (none when nothing changes).
pub fn format_edits(
    analysis: &Analysis,
    width: usize,
) -> Result<Vec<lsp::TextEdit>, relay_syntax::format::FormatError> {
    use relay_syntax::format::{format, FormatOptions};
    let text = analysis.text();
    let formatted = format(text, relay_syntax::Entry::Module, &FormatOptions { width })?;
    let Some((range, new_text)) = changed_stretch(text, &formatted) else {
        return Ok(Vec::new());
    };
    Ok(vec![lsp::TextEdit {
        range: analysis.lines.range(range),
        new_text: new_text.to_string(),
    }])
}

/// The range of `old` that differs from `new` and its replacement, trimmed
/// of the common start and end (on character boundaries).
fn changed_stretch<'n>(old: &str, new: &'n str) -> Option<(TextRange, &'n str)> {
    if old == new {
        return None;
    }
    let mut prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    let range = TextRange::new(
        TextSize::from(prefix as u32),
        TextSize::from((old.len() - suffix) as u32),
    );
    Some((range, &new[prefix..new.len() - suffix]))
}

#[cfg(test)]
mod format_tests {
    use super::changed_stretch;

    #[test]
    fn the_edit_covers_only_what_changes() {
        let (range, text) = changed_stretch("add(%x,%x)\n", "add(%x, %x)\n").unwrap();
        assert_eq!((u32::from(range.start()), u32::from(range.end())), (7, 7));
        assert_eq!(text, " ");
        let (range, text) = changed_stretch("é1é", "é22é").unwrap();
        assert_eq!((u32::from(range.start()), u32::from(range.end())), (2, 3));
        assert_eq!(text, "22");
        assert!(changed_stretch("same", "same").is_none());
    }
}
