//! Running passes from the editor: code actions, `relay.applyPipeline`,
//! `relay/passOutput`, on-save pipelines from `relay.toml`, and quick fixes.
//!
//! A pipeline runs as `relay opt` runs it (the same library calls): the
//! module is lowered, type-checked with InferType, and the pipeline runs
//! under a PassContext built from `relay.toml`. The result is turned into
//! edits that replace only the definitions the pipeline changed (by
//! structural equality: a definition the pass rebuilt into an equal one
//! keeps its bytes, comments and all), so one undo reverts it; an edit whose
//! result would not read back is refused.

use super::analysis::{guarded, Analysis};
use super::features::shows_types;
use crate::project::{read_pipeline, ExternalCommands, Project};
use relay_passes::diagnostic::{Diagnostic, Layer};
use relay_passes::ir::equal::{first_difference, module_first_difference};
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::instruments::PassTiming;
use relay_passes::pass_manager::pipeline::{build_pipeline, Pipeline};
use relay_passes::pass_manager::registry::{self, PassKind};
use relay_passes::pass_manager::{
    run_pass, LogSink, PassContext, PassContextOptions, PassInstrument,
};
use relay_passes::printer::{print_module, PrintOptions};
use relay_syntax::{SyntaxKind, TextRange, TextSize};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The command that applies a pipeline: `{uri, pipeline, function?}`.
pub const APPLY_PIPELINE: &str = "relay.applyPipeline";
/// The command that lists the registered passes.
pub const LIST_PASSES: &str = "relay.listPasses";

/// The arguments of `relay.applyPipeline`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApplyPipelineArgs {
    pub uri: String,
    pub pipeline: String,
    /// Apply the result to this global function only (without the `@`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// The params of `relay/passOutput`.
#[derive(Debug, Clone, Deserialize)]
pub struct PassOutputParams {
    #[serde(rename = "textDocument")]
    pub text_document: TextDocumentId,
    pub pipeline: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TextDocumentId {
    pub uri: String,
}

/// One stage of `relay/passOutput`: the module printed after a pass.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    pub pass: String,
    pub text: String,
    #[serde(rename = "timeMs")]
    pub time_ms: f64,
    pub changed: bool,
}

/// The answer of `relay/passOutput`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct PassOutput {
    pub stages: Vec<Stage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The project of a file: `relay.toml` found upward from it (its external
/// passes are registered, allowed to run their commands or not), or why it
/// could not be read.
pub fn project_for(
    path: Option<&Path>,
    commands: &ExternalCommands,
) -> Result<Option<Project>, String> {
    let Some(path) = path else { return Ok(None) };
    let Some(file) = Project::find(path) else {
        return Ok(None);
    };
    let project = Project::load(&file)?;
    project.register_passes(commands);
    Ok(Some(project))
}

/// What running a pipeline gave.
pub struct RunResult {
    /// The module that entered the pipeline (lowered and type-checked).
    pub input: Option<IRModule>,
    /// The result, when the pipeline succeeded.
    pub output: Option<IRModule>,
    /// Per top-level pass, when asked for.
    pub stages: Vec<Stage>,
    pub error: Option<String>,
    /// Errors and warnings of the passes.
    pub diagnostics: Vec<Diagnostic>,
    /// Text the passes logged (PrintIR), and the timing report.
    pub log: Vec<String>,
    /// External commands that were not run (the workspace is not trusted).
    pub blocked: Vec<String>,
}

fn print(module: &IRModule, show_types: bool) -> String {
    print_module(
        module,
        &PrintOptions {
            show_meta_data: true,
            show_types,
        },
    )
}

/// Runs `pipeline_text` on the analysed module. With `stages`, each
/// top-level pass runs on its own (as a Sequential would run it: passes the
/// context disables are skipped) and the module is printed after each.
pub fn run_pipeline(
    analysis: &Analysis,
    project: Option<&Project>,
    pipeline_text: &str,
    with_stages: bool,
) -> RunResult {
    let mut result = RunResult {
        input: None,
        output: None,
        stages: Vec::new(),
        error: None,
        diagnostics: Vec::new(),
        log: Vec::new(),
        blocked: Vec::new(),
    };
    let pipeline = match read_pipeline(project, pipeline_text) {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(e.render(pipeline_text));
            return result;
        }
    };
    let pass = match build_pipeline(&pipeline) {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(e.render(pipeline_text));
            return result;
        }
    };
    if analysis
        .diagnostics
        .iter()
        .any(|d| d.is_error() && matches!(d.layer, Layer::Syntax | Layer::Name))
    {
        result.error = Some("the file has errors; fix them before running passes".to_string());
        return result;
    }
    // Type-check as TVM's parser does (and `relay opt`).
    let infer = match registry::create_by_name("InferType") {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    let parse_ctx = match PassContext::new(PassContextOptions::default()) {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    let input = match run_pass(&*infer, analysis.lowered.clone(), &parse_ctx) {
        Ok(m) => m,
        Err(e) => {
            result.diagnostics = e.diagnostics;
            result.error = Some(e.message);
            return result;
        }
    };
    result.input = Some(input.clone());

    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink_log = log.clone();
    let sink: LogSink = Arc::new(move |text: &str| {
        sink_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text.to_string())
    });
    let timing = Arc::new(PassTiming::new());
    let mut options = project.map(Project::context_options).unwrap_or_default();
    options.log = Some(sink);
    options.instruments = vec![timing.clone() as Arc<dyn PassInstrument>];
    let ctx = match PassContext::new(options) {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    let show_types = shows_types(analysis);
    let outcome = ctx.enter().and_then(|guard| {
        let run = if with_stages {
            run_stages(&pipeline, input, &ctx, show_types, &mut result.stages)
        } else {
            run_pass(&*pass, input, &ctx)
        };
        guard.exit().map(|()| run)
    });
    match outcome.and_then(|r| r) {
        Ok(module) => result.output = Some(module),
        Err(e) => {
            match &e.sources {
                // Spans into an external pass's output, not the document:
                // place them in words.
                Some(sources) => result
                    .diagnostics
                    .extend(e.diagnostics.iter().map(|d| d.detached(sources))),
                None => result.diagnostics.extend(e.diagnostics.iter().cloned()),
            }
            result.error = Some(e.message.clone());
        }
    }
    result.diagnostics.extend(ctx.take_diagnostics());
    result.blocked = ctx.blocked_commands();
    let mut lines = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    let report = timing.render();
    if !report.trim().is_empty() {
        lines.push(report);
    }
    result.log = lines;
    result
}

fn run_stages(
    pipeline: &Pipeline,
    mut module: IRModule,
    ctx: &PassContext,
    show_types: bool,
    stages: &mut Vec<Stage>,
) -> Result<IRModule, relay_passes::pass_manager::PassError> {
    let several = pipeline.items.len() > 1;
    let mut previous = print(&module, show_types);
    for item in &pipeline.items {
        let one = Pipeline {
            items: vec![item.clone()],
        };
        let pass = build_pipeline(&one)
            .map_err(|e| relay_passes::pass_manager::PassError::new(&item.name, e.message))?;
        if several && !ctx.pass_enabled(pass.info()) {
            stages.push(Stage {
                pass: item.name.clone(),
                text: previous.clone(),
                time_ms: 0.0,
                changed: false,
            });
            continue;
        }
        let start = Instant::now();
        module = run_pass(&*pass, module, ctx)?;
        let time_ms = start.elapsed().as_secs_f64() * 1000.0;
        let text = print(&module, show_types);
        stages.push(Stage {
            pass: item.name.clone(),
            changed: text != previous,
            text: text.clone(),
            time_ms,
        });
        previous = text;
    }
    Ok(module)
}

/// A replacement of a byte range of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub range: TextRange,
    pub text: String,
}

/// The `def`s of a printed module by name, with their text.
fn printed_defs(text: &str) -> (BTreeMap<String, String>, bool) {
    let parse = relay_syntax::parse_module(text);
    let root = parse.syntax_node();
    let mut defs = BTreeMap::new();
    let mut has_meta = false;
    for item in root.children() {
        match item.kind() {
            SyntaxKind::DEF => {
                if let Some(name) = def_name(&item) {
                    defs.insert(name, item.text().to_string());
                }
            }
            SyntaxKind::METADATA_SECTION => has_meta = true,
            _ => {}
        }
    }
    (defs, has_meta)
}

fn def_name(def: &relay_syntax::SyntaxNode) -> Option<String> {
    def.children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| t.kind() == SyntaxKind::GLOBAL)
        .map(|t| t.text().trim_start_matches('@').to_string())
}

/// The edits that turn the document into `output`: one replacement per
/// definition the pipeline changed structurally (only `only`'s, when
/// given), deletions of removed definitions, new definitions appended. A
/// structurally equal result (spans, checked types and the names of bound
/// variables aside) gives no edit at all. When the printed modules use a
/// metadata section (whose indices are shared by all definitions) the whole
/// document is replaced.
pub fn definition_edits(
    analysis: &Analysis,
    input: &IRModule,
    output: &IRModule,
    only: Option<&str>,
) -> Vec<Replacement> {
    if module_first_difference(input, output, false).is_none() {
        return Vec::new();
    }
    let changed = |name: &str| match (input.function(name), output.function(name)) {
        (Some(before), Some(after)) => {
            first_difference(before.expr(), after.expr(), false).is_some()
        }
        (None, None) => false,
        _ => true,
    };
    let show_types = shows_types(analysis);
    let before_text = print(input, show_types);
    let after_text = print(output, show_types);
    let (before, meta_before) = printed_defs(&before_text);
    let (after, meta_after) = printed_defs(&after_text);
    let root = analysis.root();
    let source_has_meta = root
        .children()
        .any(|n| n.kind() == SyntaxKind::METADATA_SECTION);
    if (meta_before || meta_after || source_has_meta) && only.is_none() {
        return vec![Replacement {
            range: root.text_range(),
            text: after_text,
        }];
    }
    // The source's definitions (TVM keeps the last of a name).
    let mut source: BTreeMap<String, TextRange> = BTreeMap::new();
    let mut last_item_end = None;
    for item in root.children() {
        if item.kind() == SyntaxKind::DEF {
            if let Some(name) = def_name(&item) {
                source.insert(name, item.text_range());
            }
        }
        if matches!(
            item.kind(),
            SyntaxKind::DEF
                | SyntaxKind::TYPE_DEF
                | SyntaxKind::EXTERN_TYPE_DEF
                | SyntaxKind::VERSION
        ) {
            last_item_end = Some(item.text_range().end());
        }
    }
    let wanted = |name: &str| only.is_none_or_eq(name);
    let mut edits = Vec::new();
    for (name, new_text) in &after {
        if !wanted(name) {
            continue;
        }
        match (before.get(name), source.get(name)) {
            (Some(_), Some(range)) if changed(name) => edits.push(Replacement {
                range: *range,
                text: new_text.clone(),
            }),
            (None, None) | (Some(_), None) => {
                let at = last_item_end.unwrap_or_else(|| root.text_range().end());
                edits.push(Replacement {
                    range: TextRange::empty(at),
                    text: format!("\n\n{new_text}"),
                });
            }
            _ => {}
        }
    }
    for (name, range) in &source {
        if wanted(name) && before.contains_key(name) && !after.contains_key(name) {
            // The definition and the blank lines after it.
            let text = analysis.text();
            let mut end = usize::from(range.end());
            while end < text.len() && text.as_bytes()[end].is_ascii_whitespace() {
                end += 1;
            }
            edits.push(Replacement {
                range: TextRange::new(range.start(), TextSize::from(end as u32)),
                text: String::new(),
            });
        }
    }
    edits.sort_by_key(|e| e.range.start());
    edits
}

/// Whether the document with `edits` applied still reads (parses, and its
/// names resolve): an edit must never leave text the tools cannot read
/// back. Says why not, with the first error, when it does not.
pub fn reads_back(analysis: &Analysis, edits: &[Replacement]) -> Result<(), String> {
    if edits.is_empty() {
        return Ok(());
    }
    let text = analysis.text();
    let mut result = String::with_capacity(text.len());
    let mut at = 0;
    for edit in edits {
        let (start, end) = (
            usize::from(edit.range.start()),
            usize::from(edit.range.end()),
        );
        result.push_str(&text[at..start]);
        result.push_str(&edit.text);
        at = end;
    }
    result.push_str(&text[at..]);
    let (_, diagnostics) = guarded(|| parse_and_lower("result", &result))
        .map_err(|m| format!("internal error: reading the result back panicked: {m}"))?;
    // As for running passes at all (see `run_pipeline`), the errors that
    // matter are those of reading: syntax and names.
    let unreadable = diagnostics
        .iter()
        .find(|d| d.is_error() && matches!(d.layer, Layer::Syntax | Layer::Name));
    match unreadable {
        None => Ok(()),
        Some(error) => Err(format!(
            "the result does not read back, so it was not applied: {}",
            error.message
        )),
    }
}

trait OnlyName {
    fn is_none_or_eq(&self, name: &str) -> bool;
}

impl OnlyName for Option<&str> {
    fn is_none_or_eq(&self, name: &str) -> bool {
        match self {
            None => true,
            Some(only) => *only == name,
        }
    }
}

/// Runs a pipeline and computes the edits, or says why not.
pub fn apply_pipeline(
    analysis: &Analysis,
    project: Option<&Project>,
    pipeline: &str,
    only: Option<&str>,
) -> (Result<Vec<Replacement>, String>, RunResult) {
    let result = run_pipeline(analysis, project, pipeline.trim(), false);
    let edits = match (&result.input, &result.output, &result.error) {
        (Some(input), Some(output), None) => {
            guarded(|| definition_edits(analysis, input, output, only))
                .map_err(|m| format!("internal error: computing the edit panicked: {m}"))
                .and_then(|edits| {
                    reads_back(analysis, &edits)?;
                    Ok(edits)
                })
        }
        (_, _, Some(error)) => Err(error.clone()),
        _ => Err("the pipeline gave no module".to_string()),
    };
    (edits, result)
}

/// Runs a pipeline stage by stage for `relay/passOutput`.
pub fn pass_output(
    analysis: &Analysis,
    project: Option<&Project>,
    pipeline: &str,
) -> (PassOutput, RunResult) {
    let mut result = run_pipeline(analysis, project, pipeline.trim(), true);
    let output = PassOutput {
        stages: std::mem::take(&mut result.stages),
        error: result.error.clone(),
    };
    (output, result)
}

/// The `relay.listPasses` answer: what `relay passes --json` prints.
pub fn list_passes() -> serde_json::Value {
    let specs = registry::all();
    serde_json::Value::Array(
        specs
            .iter()
            .map(|spec| {
                serde_json::json!({
                    "name": spec.name,
                    "kind": kind_name(spec.kind),
                    "opt_level": spec.info.opt_level,
                    "required": spec.info.required,
                    "description": spec.description,
                })
            })
            .collect(),
    )
}

pub fn kind_name(kind: PassKind) -> &'static str {
    match kind {
        PassKind::Module => "module",
        PassKind::Function => "function",
        PassKind::Sequential => "sequential",
    }
}

/// The name of the `def` enclosing all of `range`, if one does.
pub fn enclosing_def(analysis: &Analysis, range: TextRange) -> Option<String> {
    let root = analysis.root();
    root.children()
        .filter(|n| n.kind() == SyntaxKind::DEF)
        .find(|n| n.text_range().contains_range(range))
        .and_then(|n| def_name(&n))
}

/// A quick fix: a title and its replacements.
pub struct QuickFix {
    pub title: String,
    pub edits: Vec<Replacement>,
    pub diagnostic: Diagnostic,
}

/// Quick fixes for the diagnostics of `analysis` that touch `range`.
pub fn quick_fixes(analysis: &Analysis, range: TextRange) -> Vec<QuickFix> {
    let mut out = Vec::new();
    let text = analysis.text();
    for d in &analysis.diagnostics {
        let Some(span) = d.span else { continue };
        if span.range.intersect(range).is_none() {
            continue;
        }
        // The missing version header.
        if d.layer == Layer::Syntax && d.message.contains("#[version = \"0.0.5\"]") {
            out.push(QuickFix {
                title: "Add the `#[version = \"0.0.5\"]` header".to_string(),
                edits: vec![Replacement {
                    range: TextRange::empty(0.into()),
                    text: "#[version = \"0.0.5\"]\n".to_string(),
                }],
                diagnostic: d.clone(),
            });
        }
        // Did you mean …?
        if let Some(suggestion) = d
            .help
            .as_deref()
            .and_then(|h| h.strip_prefix("did you mean `"))
            .and_then(|h| h.strip_suffix("`?"))
        {
            out.push(QuickFix {
                title: format!("Replace with `{suggestion}`"),
                edits: vec![Replacement {
                    range: span.range,
                    text: suggestion.to_string(),
                }],
                diagnostic: d.clone(),
            });
        }
        // An undeclared local: declare it as a parameter.
        if d.message == "this local variable has not been previously declared" {
            let name = &text[span.range];
            if let Some(fix) = declare_parameter(analysis, span.range, name) {
                out.push(QuickFix {
                    title: fix.0,
                    edits: vec![fix.1],
                    diagnostic: d.clone(),
                });
            }
        }
    }
    out
}

fn declare_parameter(
    analysis: &Analysis,
    at: TextRange,
    name: &str,
) -> Option<(String, Replacement)> {
    let root = analysis.root();
    let element = root.covering_element(at);
    let start = match &element {
        relay_syntax::SyntaxElement::Node(n) => n.clone(),
        relay_syntax::SyntaxElement::Token(t) => t.parent()?,
    };
    let function = start
        .ancestors()
        .find(|n| matches!(n.kind(), SyntaxKind::DEF | SyntaxKind::FN_EXPR))?;
    let params = function
        .children()
        .find(|n| n.kind() == SyntaxKind::PARAM_LIST)?;
    let close = params
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| t.kind() == SyntaxKind::R_PAREN)
        .last()?;
    let has_params = params.children().any(|n| n.kind() == SyntaxKind::PARAM);
    // The type inference found for it, if a complete one.
    let ty = analysis
        .index()
        .exact(at)
        .and_then(|e| e.checked_type())
        .map(relay_passes::printer::print_type)
        .filter(|t| !t.contains('_'));
    let decl = match &ty {
        Some(t) => format!("{name}: {t}"),
        None => name.to_string(),
    };
    let text = if has_params {
        format!(", {decl}")
    } else {
        decl.clone()
    };
    let owner = def_name(&function).map_or("the function".to_string(), |n| format!("@{n}"));
    Some((
        format!("Declare `{name}` as a parameter of {owner}"),
        Replacement {
            range: TextRange::empty(close.text_range().start()),
            text,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::analysis::analyze;
    use crate::lsp::text::Encoding;

    const SRC: &str = "#[version = \"0.0.5\"]\ndef @main(%x: int32) {\n  %x\n}\n";

    fn analysis() -> Analysis {
        analyze("doc.relay", SRC.into(), 1, Encoding::Utf8, &|| false).expect("not obsolete")
    }

    /// An edit that would leave text that does not parse is refused, with
    /// the reason; one that reads is accepted.
    #[test]
    fn edits_whose_result_does_not_read_back_are_refused() {
        let analysis = analysis();
        let body = SRC.find("%x\n}").unwrap() as u32;
        let replace_body = |text: &str| Replacement {
            range: TextRange::new(body.into(), (body + 2).into()),
            text: text.to_string(),
        };
        assert_eq!(
            reads_back(&analysis, &[replace_body("add(%x, %x)")]),
            Ok(())
        );
        let refused = reads_back(
            &analysis,
            &[replace_body("let %y = match (%x) { _ => 1 }; %y")],
        )
        .expect_err("a bare match as a let value does not parse");
        assert!(refused.contains("does not read back"), "{refused}");
        let refused = reads_back(&analysis, &[replace_body("%undeclared")])
            .expect_err("an undeclared variable does not resolve");
        assert!(refused.contains("does not read back"), "{refused}");
    }
}
