//! One analysis of one snapshot of a document: the syntax tree, the lowered
//! module, the typed module (InferType), every diagnostic, the names as
//! lowering resolved them, and an index from source ranges to IR nodes.
//! Built off the main loop, never changed after, shared by every request
//! that asks about that version. Parsing, lowering and type inference are
//! incremental: each document keeps its last parse, its
//! [`IncrementalLowering`] and an [`IncrementalChecker`] between edits
//! ([`Incremental`]), so an edit inside one definition re-parses and
//! lowers again only that definition (the others keep their IR nodes,
//! which type inference then reuses by identity) and re-infers only the
//! functions it can affect.
//!
//! IR spans are per definition (relative to its `def`, see
//! `relay_passes::lower::DefinitionSpans`): an edit above a definition
//! moves it without touching its nodes. Whatever turns an IR span into a
//! place in the document goes through [`Analysis::resolve`]; the
//! analysis's diagnostics and name index are in document coordinates.
//!
//! Everything here calls the library (`relay_syntax`, `relay_passes::lower`,
//! `relay_passes::infer`), exactly as the CLI does; each stage runs under
//! `catch_unwind`, so a panic in one stage leaves the others' results and
//! becomes an "internal error" diagnostic instead of taking the server down.

use super::applicable::ApplicabilityCache;
use super::text::{Encoding, LineIndex};
use relay_passes::checkable::CheckScope;
use relay_passes::diagnostic::{sort_by_position, Code, Diagnostic, Layer};
use relay_passes::infer::IncrementalChecker;
use relay_passes::ir::{Expr, ExprKind, IRModule, Pattern};
use relay_passes::lower::{DefinitionSpans, IncrementalLowering, LowerOptions, NameIndex};
use relay_passes::source::{FileId, SourceMap, Span};
use relay_syntax::{
    reparse_module_with, Entry, Parse, ParseOptions, SyntaxNode, TextEdit, TextRange,
};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// The analysis of one version of a document.
pub struct Analysis {
    /// The name diagnostics and printed modules use (the file path).
    pub name: String,
    pub version: i32,
    pub lines: LineIndex,
    pub parse: Parse,
    /// The module as lowered (no types): what passes and the formatter
    /// start from. Its spans are per definition: see [`Analysis::resolve`].
    pub lowered: IRModule,
    /// The module after InferType (with the types that could be found).
    pub typed: Option<IRModule>,
    /// Syntax, name and type diagnostics, sorted by position. Type errors
    /// are those of the definitions [`CheckScope`] says can be checked.
    pub diagnostics: Vec<Diagnostic>,
    /// Every definition and use of a name, as lowering resolved them: what
    /// navigation (definition, references, rename, highlights, completion
    /// of locals) reads.
    pub names: NameIndex,
    /// Where each definition's IR spans are in the document.
    pub spans: DefinitionSpans,
    /// IR nodes by source range (built on first use).
    index: OnceLock<SpanIndex>,
    /// Which passes change which function (computed on first use).
    pub applicable: ApplicabilityCache,
    /// How long each stage of this analysis took, in order (what the
    /// latency benchmark prints).
    pub timings: Vec<(&'static str, Duration)>,
}

impl std::fmt::Debug for Analysis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analysis")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("diagnostics", &self.diagnostics.len())
            .finish_non_exhaustive()
    }
}

impl Analysis {
    pub fn text(&self) -> &str {
        self.lines.text()
    }

    /// The root of the syntax tree (cheap: a new cursor over the green tree).
    pub fn root(&self) -> SyntaxNode {
        self.parse.syntax_node()
    }

    /// IR nodes by source range (built on first use: diagnostics do not
    /// need it).
    pub fn index(&self) -> &SpanIndex {
        self.index
            .get_or_init(|| SpanIndex::build_resolved(self.module(), &self.spans))
    }

    /// An IR span (or a diagnostic's) as a span of the document.
    pub fn resolve(&self, span: Span) -> Span {
        self.spans.resolve(span)
    }

    /// The diagnostics of something run on this analysis's IR (a pass, a
    /// pipeline) with their spans in the document.
    pub fn resolve_diagnostics(&self, diagnostics: &mut [Diagnostic]) {
        for diagnostic in diagnostics {
            self.spans.resolve_diagnostic(diagnostic);
        }
    }

    /// The module features should look at: typed if inference ran.
    pub fn module(&self) -> &IRModule {
        self.typed.as_ref().unwrap_or(&self.lowered)
    }

    /// Whether the text has errors of any layer.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Runs `f`, turning a panic into `Err(message)`.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| panic_message(&*payload))
}

/// The message of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

fn internal_error(layer: Layer, stage: &str, message: &str) -> Diagnostic {
    eprintln!("relay lsp: internal error: {stage} panicked: {message}");
    let mut diagnostic = Diagnostic::error(
        Code::InternalError,
        format!("internal error: {stage} panicked: {message}"),
    )
    .with_note("this is a bug in relay; the other results are still shown");
    // Said to come from the stage that failed (what `source` shows).
    diagnostic.layer = layer;
    diagnostic
}

/// What a document keeps between its analyses so the next one redoes only
/// what an edit changed.
pub struct Incremental {
    /// Type inference results, per function.
    pub checker: Mutex<IncrementalChecker>,
    /// The lowered definitions.
    pub lowering: Mutex<IncrementalLowering>,
    /// The text and parse of the last analysis.
    parses: Mutex<Option<(Arc<str>, ParseOptions, Parse)>>,
    /// The line index of the last analysis.
    lines: Mutex<Option<LineIndex>>,
    /// The `relay.toml` reading (`project::project_generation`) the type
    /// results were inferred under.
    project: std::sync::atomic::AtomicU64,
}

impl Default for Incremental {
    /// The type checker shares equal result types through the interner
    /// the lowering shares annotations and attributes through (see
    /// `relay_passes::ir::interner`): one object for every call of a
    /// configuration, in every copy of a model.
    fn default() -> Incremental {
        let lowering = IncrementalLowering::default();
        let checker = IncrementalChecker::sharing_types(lowering.interner().clone());
        Incremental {
            checker: Mutex::new(checker),
            lowering: Mutex::new(lowering),
            parses: Mutex::default(),
            lines: Mutex::default(),
            project: Default::default(),
        }
    }
}

impl Incremental {
    /// The parse of `text`: the last parse with the edit since then
    /// re-parsed (only the definition it is in, when its boundaries cannot
    /// move; see `relay_syntax::reparse_module`), or a full parse. The edit
    /// is found by comparing the texts, so it does not matter which
    /// version was analysed last.
    /// Also says how the text differs from the last one parsed (`None`:
    /// unknown), for [`Incremental::lines`].
    pub fn parse(
        &self,
        text: &Arc<str>,
        options: ParseOptions,
    ) -> (Parse, Option<(Arc<str>, TextEdit)>) {
        let last = self
            .parses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let (parse, change) = match last {
            // A parse made with other options (the project's `lenient`
            // changed) is no base for this one.
            Some((old_text, old_options, old_parse)) if old_options == options => {
                match TextEdit::between(&old_text, text) {
                    None => {
                        let nothing = TextEdit {
                            delete: TextRange::empty(0.into()),
                            insert_len: 0.into(),
                        };
                        (old_parse, Some((old_text, nothing)))
                    }
                    Some(edit) => (
                        reparse_module_with(&old_parse, edit, text, options).0,
                        Some((old_text, edit)),
                    ),
                }
            }
            _ => (relay_syntax::parse_with(text, Entry::Module, options), None),
        };
        *self.parses.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((text.clone(), options, parse.clone()));
        (parse, change)
    }

    /// The line index of `text`: the last one with `change` applied (see
    /// [`LineIndex::edited`]) when it is that of the text changed, else a
    /// new one.
    pub fn lines(
        &self,
        text: Arc<str>,
        encoding: Encoding,
        change: Option<(Arc<str>, TextEdit)>,
    ) -> LineIndex {
        let mut last = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        let lines = match (last.as_ref(), change) {
            (Some(before), Some((old_text, edit)))
                if before.is_of(&old_text) && before.encoding == encoding =>
            {
                LineIndex::edited(before, text, edit)
            }
            _ => LineIndex::new(text, encoding),
        };
        *last = Some(lines.clone());
        lines
    }

    /// Forgets the type results when the project's `relay.toml` was read
    /// again since they were inferred: its declared operators (their type
    /// rules, attributes) may have changed under unchanged text.
    pub fn for_project(&self, generation: u64) {
        let before = self
            .project
            .swap(generation, std::sync::atomic::Ordering::Relaxed);
        if before != generation {
            self.checker
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
    }

    /// Forgets everything kept (after a stage panicked).
    pub fn clear(&self) {
        self.checker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.lowering
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        *self.parses.lock().unwrap_or_else(PoisonError::into_inner) = None;
        *self.lines.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// Analyses `text` from scratch. `obsolete` is polled between stages: when
/// it says the snapshot has been superseded, the analysis stops and returns
/// `None`.
pub fn analyze(
    name: &str,
    text: Arc<str>,
    version: i32,
    encoding: Encoding,
    obsolete: &dyn Fn() -> bool,
) -> Option<Analysis> {
    analyze_incrementally(
        name,
        text,
        version,
        encoding,
        obsolete,
        &Incremental::default(),
    )
}

/// [`analyze`], reusing the parse and type inference results `kept` from the
/// document's previous analyses (and updating them).
pub fn analyze_incrementally(
    name: &str,
    text: Arc<str>,
    version: i32,
    encoding: Encoding,
    obsolete: &dyn Fn() -> bool,
    kept: &Incremental,
) -> Option<Analysis> {
    analyze_incrementally_with(
        name,
        text,
        (version, encoding),
        obsolete,
        kept,
        LowerOptions::LENIENT,
    )
}

/// [`analyze_incrementally`], reading the text with `options` (the editor
/// reads leniently unless the project says `lenient = false`: what the
/// reading accepted are warnings, with quick fixes).
pub fn analyze_incrementally_with(
    name: &str,
    text: Arc<str>,
    (version, encoding): (i32, Encoding),
    obsolete: &dyn Fn() -> bool,
    kept: &Incremental,
    options: LowerOptions,
) -> Option<Analysis> {
    let mut timings = Vec::new();
    let mut stage = Instant::now();
    let mut timed = |name: &'static str| {
        let now = Instant::now();
        timings.push((name, now - stage));
        stage = now;
    };
    let mut diagnostics = Vec::new();
    let mut sources = SourceMap::new();
    let file = sources.add(name, text.clone());
    timed("source map");
    let (parse, change) = match guarded(|| kept.parse(&text, options.parse_options())) {
        Ok(parsed) => parsed,
        Err(message) => {
            kept.clear();
            diagnostics.push(internal_error(Layer::Syntax, "the parser", &message));
            (relay_syntax::parse_module(""), None)
        }
    };
    diagnostics.extend(Diagnostic::of_parse(file, &parse));
    timed("parse");
    if obsolete() {
        return None;
    }
    let lowered = guarded(|| {
        let mut lowering = kept.lowering.lock().unwrap_or_else(PoisonError::into_inner);
        relay_passes::lower::lower_incrementally(file, &parse, options, &mut lowering)
    });
    let (mut lowered, names, spans) = match lowered {
        Ok(Some((lowered, spans))) => {
            diagnostics.extend(lowered.diagnostics);
            (lowered.module, lowered.names, spans)
        }
        Ok(None) => (
            IRModule::new(),
            NameIndex::default(),
            DefinitionSpans::document(file),
        ),
        Err(message) => {
            kept.clear();
            diagnostics.push(internal_error(Layer::Name, "lowering", &message));
            (
                IRModule::new(),
                NameIndex::default(),
                DefinitionSpans::document(file),
            )
        }
    };
    lowered.sources = sources;
    timed("lowering");
    if obsolete() {
        return None;
    }
    let scope = parse
        .source_file()
        .map(|root| CheckScope::new(file, &root, &diagnostics));
    let typed = match guarded(|| {
        kept.checker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .check(&lowered)
    }) {
        Ok((typed, type_diagnostics, _stats)) => {
            // As `relay check`: type errors of the definitions that parse
            // and lower cleanly; the types found elsewhere are kept for
            // hover only.
            if let Some(scope) = &scope {
                let resolved = type_diagnostics.into_iter().map(|mut d| {
                    spans.resolve_diagnostic(&mut d);
                    d
                });
                diagnostics.extend(scope.filter(resolved));
            }
            Some(typed)
        }
        Err(message) => {
            // The checker stays correct after a panic, but drop what it
            // kept so the next edit starts afresh.
            kept.clear();
            diagnostics.push(internal_error(Layer::Type, "type inference", &message));
            None
        }
    };
    timed("InferType");
    sort_by_position(&mut diagnostics);
    let lines = kept.lines(text, encoding, change);
    timed("line index");
    Some(Analysis {
        name: name.to_string(),
        version,
        lines,
        parse,
        lowered,
        typed,
        diagnostics,
        names,
        spans,
        index: OnceLock::new(),
        applicable: ApplicabilityCache::default(),
        timings,
    })
}

/// IR nodes by the range of their span, per function: the functions are
/// known at once (their ranges in the document), each one's nodes are
/// sorted by range the first time a lookup lands in it. A hover in one
/// definition of a large module thus walks that definition only, and an
/// analysis whose index is never asked for costs nothing. Lookups are
/// binary searches on exact ranges; the innermost node around an offset is
/// found by walking the syntax tree up from the token and asking for each
/// enclosing node's range.
#[derive(Default)]
pub struct SpanIndex {
    /// Sorted by start; the definitions of a module do not overlap.
    functions: Vec<FunctionNodes>,
    spans: Option<DefinitionSpans>,
}

/// The nodes of one function, found on first use.
struct FunctionNodes {
    /// The function's range in the document (everything if it has no
    /// span: then it is searched for every lookup).
    range: TextRange,
    function: Expr,
    entries: OnceLock<Vec<(u32, u32, Expr)>>,
}

impl SpanIndex {
    /// The index of a module whose spans are in the document.
    pub fn build(module: &IRModule) -> SpanIndex {
        SpanIndex::build_resolved(module, &DefinitionSpans::document(FileId(0)))
    }

    /// The index of a module whose spans `spans` resolves. Cheap: one
    /// entry per function; their nodes are walked when first asked for.
    pub fn build_resolved(module: &IRModule, spans: &DefinitionSpans) -> SpanIndex {
        let everything = TextRange::new(0.into(), u32::MAX.into());
        let mut functions: Vec<FunctionNodes> = module
            .functions()
            .map(|(_, f)| FunctionNodes {
                range: f.expr().span().map_or(everything, |s| spans.range(s)),
                function: f.expr().clone(),
                entries: OnceLock::new(),
            })
            .collect();
        functions.sort_by_key(|f| (f.range.start(), f.range.end()));
        SpanIndex {
            functions,
            spans: Some(spans.clone()),
        }
    }

    /// The nodes of the functions whose range contains `range`.
    fn around(&self, range: TextRange) -> impl Iterator<Item = &[(u32, u32, Expr)]> {
        // Every function starting at or before `range` (few: those without
        // a span, and the one that contains it).
        let after = self
            .functions
            .partition_point(|f| f.range.start() <= range.start());
        self.functions[..after]
            .iter()
            .rev()
            .filter(move |f| f.range.contains_range(range))
            .map(|f| self.nodes_of(f))
    }

    fn nodes_of<'a>(&self, function: &'a FunctionNodes) -> &'a [(u32, u32, Expr)] {
        function.entries.get_or_init(|| {
            let document = DefinitionSpans::document(FileId(0));
            let spans = self.spans.as_ref().unwrap_or(&document);
            let mut entries = Vec::new();
            let mut seen = HashSet::new();
            let mut stack = vec![function.function.clone()];
            while let Some(expr) = stack.pop() {
                if !seen.insert(expr.addr()) {
                    continue;
                }
                if let Some(span) = expr.span() {
                    let range = spans.range(span);
                    entries.push((range.start().into(), range.end().into(), expr.clone()));
                }
                push_children(&expr, &mut stack);
            }
            // Equal ranges: nodes with a checked type first.
            entries.sort_by_key(|(start, end, e)| (*start, *end, e.checked_type().is_none()));
            entries
        })
    }

    /// The node whose span is exactly `range` (one with a type if several).
    pub fn exact(&self, range: TextRange) -> Option<&Expr> {
        let key = (u32::from(range.start()), u32::from(range.end()));
        self.around(range).find_map(|entries| {
            let i = entries.partition_point(|(s, e, _)| (*s, *e) < key);
            entries
                .get(i)
                .filter(|(s, e, _)| (*s, *e) == key)
                .map(|(_, _, expr)| expr)
        })
    }

    /// Every node whose span starts at `start`.
    pub fn starting_at(&self, start: u32) -> impl Iterator<Item = (TextRange, &Expr)> {
        let at = TextRange::empty(start.into());
        self.around(at).flat_map(move |entries| {
            let i = entries.partition_point(|(s, _, _)| *s < start);
            entries[i..]
                .iter()
                .take_while(move |(s, _, _)| *s == start)
                .map(|(s, e, expr)| (TextRange::new((*s).into(), (*e).into()), expr))
        })
    }

    /// The innermost node enclosing `node` (or `node` itself) that has an IR
    /// node with exactly its range.
    pub fn enclosing(&self, node: &SyntaxNode) -> Option<(TextRange, &Expr)> {
        node.ancestors().find_map(|n| {
            let range = n.text_range();
            self.exact(range).map(|e| (range, e))
        })
    }

    /// Every node with its range, sorted by range (walks every function).
    pub fn entries(&self) -> impl Iterator<Item = (TextRange, &Expr)> {
        let mut all: Vec<(u32, u32, &Expr)> = self
            .functions
            .iter()
            .flat_map(|f| self.nodes_of(f).iter().map(|(s, e, x)| (*s, *e, x)))
            .collect();
        all.sort_by_key(|(start, end, e)| (*start, *end, e.checked_type().is_none()));
        all.into_iter()
            .map(|(s, e, expr)| (TextRange::new(s.into(), e.into()), expr))
    }

    /// The number of nodes (walks every function).
    pub fn len(&self) -> usize {
        self.functions.iter().map(|f| self.nodes_of(f).len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The direct sub-expressions of `expr` (pattern variables included).
pub fn push_children(expr: &Expr, out: &mut Vec<Expr>) {
    match expr.kind() {
        ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Constant(_)
        | ExprKind::Constructor(_)
        | ExprKind::Op(_) => {}
        ExprKind::Tuple(fields) => out.extend(fields.iter().cloned()),
        ExprKind::TupleGetItem { tuple, .. } => out.push(tuple.clone()),
        ExprKind::Call(call) => {
            out.push(call.callee.clone());
            out.extend(call.args.iter().cloned());
        }
        ExprKind::Let { var, value, body } => {
            out.push(var.expr().clone());
            out.push(value.clone());
            out.push(body.clone());
        }
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => out.extend([cond.clone(), then_branch.clone(), else_branch.clone()]),
        ExprKind::Function(f) => {
            out.extend(f.params.iter().map(|p| p.expr().clone()));
            out.push(f.body.clone());
        }
        ExprKind::Match { data, clauses, .. } => {
            out.push(data.clone());
            for clause in clauses {
                push_pattern_vars(&clause.pattern, out);
                out.push(clause.rhs.clone());
            }
        }
        ExprKind::RefCreate(value) | ExprKind::RefRead(value) => out.push(value.clone()),
        ExprKind::RefWrite { reference, value } => {
            out.push(reference.clone());
            out.push(value.clone());
        }
    }
}

fn push_pattern_vars(pattern: &Pattern, out: &mut Vec<Expr>) {
    match pattern {
        Pattern::Wildcard => {}
        Pattern::Var(var) => out.push(var.expr().clone()),
        Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
            for field in fields {
                push_pattern_vars(field, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 14, defect 4, in the editor: a name error in one function does
    /// not hide the type errors of the others; diagnostics come sorted and
    /// carry their codes.
    #[test]
    fn a_name_error_does_not_hide_other_functions_type_errors() {
        let text = "#[version = \"0.0.5\"]\n\
                    def @good(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) { add(%a, %b) }\n\
                    def @bad(%x: float32) { add(%x, %y) }\n\
                    def @also_good(%a: Tensor[(2), float32]) -> Tensor[(3), float32] { %a }\n";
        let analysis = analyze("m.relay", text.into(), 1, Encoding::Utf16, &|| false).unwrap();
        let codes: Vec<&str> = analysis.diagnostics.iter().map(|d| d.code.id()).collect();
        assert_eq!(codes, ["E0202", "E0101", "E0201"]);
        // The typed module is still there for hover.
        assert!(analysis.typed.is_some());
    }
}
