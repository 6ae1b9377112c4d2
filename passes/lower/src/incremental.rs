//! Incremental lowering, for the editor: after an edit inside one `def`,
//! only that definition is lowered again; every other one keeps its IR
//! nodes (the very same `Function`, so incremental type inference reuses
//! its result by identity), its name index entries and its diagnostics.
//!
//! **Spans.** A definition's IR spans (and its diagnostics) point into a
//! file of its own, [`DefinitionSpans::file_of`], relative to the start of
//! the `def`: an edit above it moves the definition without changing a
//! node. [`DefinitionSpans::resolve`] gives the span in the document (the
//! language server resolves at its boundaries: diagnostics, the span index,
//! what passes report). The name index and the diagnostics
//! [`lower_incrementally`] returns are in document coordinates already
//! (moved entries are shifted, not recomputed) and equal those of
//! [`lower_module_with`](super::lower_module_with).
//!
//! **When a definition can be lowered alone.** Name resolution is global in
//! a few places: graph bindings `%N` belong to the whole parse, as do
//! `free_var`s and undeclared locals; opaque operators and constants are
//! warned about once per file; metadata references read one section;
//! constructors with undefined field types report at the type. Lowering
//! notes when a definition touches any of these ([`Piece::shared`]); then,
//! or when an edit changes a type definition, the names of the items, or
//! moves a type definition, or the file has a metadata section or
//! module-level diagnostics, the whole module is lowered again.
//!
//! **Sharing.** Every lowering of a document goes through one
//! [`Interner`]: equal call attributes and equal tensor types (most are
//! annotations) are one object, across definitions and across edits. TVM's
//! parser makes one object per occurrence, and only a printed metadata
//! section tells the difference (see `relay_ir::interner`), so the other
//! entry points of this crate do not share.

use super::names::{DefId, Definition, NamePart};
use super::scope::FastHashMap;
use super::{AdtEntry, CtorEntry, LowerOptions, Lowered, Lowerer, Piece};
use rayon::prelude::*;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::interner::Interner;
use relay_ir::source::{FileId, Span};
use relay_ir::{Function, IRModule, TypeData};
use relay_syntax::ast::{self, AstNode};
use relay_syntax::green_view::Node;
use relay_syntax::{GreenNode, Parse, TextRange, TextSize};
use std::sync::Arc;

/// The first id of the files definitions' spans point into.
pub const DEFINITION_FILES: u32 = 1 << 31;

/// Where the definitions of an incrementally lowered module are: resolves
/// their spans (relative to each `def`, in a file of its own) to spans in
/// the document.
#[derive(Debug, Clone)]
pub struct DefinitionSpans {
    file: FileId,
    /// The start of each `def` node in the document, by definition file.
    starts: Vec<TextSize>,
}

impl DefinitionSpans {
    /// Spans that are all in `file` already.
    pub fn document(file: FileId) -> DefinitionSpans {
        DefinitionSpans {
            file,
            starts: Vec::new(),
        }
    }

    /// The file the spans of the `index`-th `def` point into.
    pub fn file_of(index: usize) -> FileId {
        FileId(DEFINITION_FILES + index as u32)
    }

    /// `span` in the document.
    pub fn resolve(&self, span: Span) -> Span {
        match span.file.0.checked_sub(DEFINITION_FILES) {
            Some(index) => match self.starts.get(index as usize) {
                Some(&start) => Span::new(self.file, span.range + start),
                None => span,
            },
            None => span,
        }
    }

    /// The range of `span` in the document.
    pub fn range(&self, span: Span) -> TextRange {
        self.resolve(span).range
    }

    /// Resolves the spans of a diagnostic (and of its labels).
    pub fn resolve_diagnostic(&self, diagnostic: &mut Diagnostic) {
        if self.starts.is_empty() {
            return;
        }
        if let Some(span) = &mut diagnostic.span {
            *span = self.resolve(*span);
        }
        for label in &mut diagnostic.labels {
            label.span = self.resolve(label.span);
        }
    }
}

/// What incremental lowering keeps of a document between its lowerings.
#[derive(Default)]
pub struct IncrementalLowering {
    kept: Option<Kept>,
    /// Shares equal call attributes between the calls of every lowering of
    /// the document (see `relay_ir::interner`): a module that repeats a
    /// model holds each configuration once, and so do the definitions an
    /// edit lowers again.
    interner: Arc<Interner>,
    /// How many definitions the last lowering lowered again (`None`: it
    /// lowered the whole module).
    last_relowered: Option<usize>,
}

impl IncrementalLowering {
    pub fn new() -> IncrementalLowering {
        IncrementalLowering::default()
    }

    /// Forgets what was kept: the next lowering is a whole one.
    pub fn clear(&mut self) {
        self.kept = None;
    }

    /// The interner the lowerings share equal objects through, for the
    /// document's type inference to share its types through too
    /// (`relay_infer::IncrementalChecker::sharing_types`).
    pub fn interner(&self) -> &Arc<Interner> {
        &self.interner
    }

    /// How many definitions the last lowering lowered again, or `None` if
    /// it lowered the whole module.
    pub fn last_relowered(&self) -> Option<usize> {
        self.last_relowered
    }
}

/// The last lowering, by item.
struct Kept {
    file: FileId,
    options: LowerOptions,
    /// Whether a definition can be lowered again alone (see the module docs).
    reusable: bool,
    /// Every item's green node: the same node means the same text.
    items: Vec<GreenNode>,
    /// Definitions and uses recorded for the items' names and the type
    /// definitions (which incremental lowering never moves).
    item_names: usize,
    module_definitions: Vec<Definition>,
    module_uses: Vec<(TextRange, DefId)>,
    module_diagnostics: Vec<Diagnostic>,
    adts: FastHashMap<String, AdtEntry>,
    ctors: FastHashMap<String, CtorEntry>,
    type_definitions: Vec<TypeData>,
    /// One per `def` item, in text order.
    defs: Vec<DefPiece>,
    /// The definition (index in `defs`) of each graph binding number.
    graph_owner: FastHashMap<u64, usize>,
}

/// One `def` as lowered.
struct DefPiece {
    /// Its index among the items.
    item: usize,
    name: Option<String>,
    function: Option<Function>,
    /// The range of the `def` node then (its spans are relative to it).
    lowered: TextRange,
    /// In the definition's file; labels may point elsewhere in the
    /// document (at type definitions, which do not move).
    diagnostics: Vec<Diagnostic>,
    /// Its names, ranges as they were then; uses of ids below the module's
    /// count are the module's, the others this definition's (numbered
    /// from it). Shared by every index the definition is in.
    names: Arc<NamePart>,
    graph_numbers: Vec<u64>,
    shared: bool,
}

/// Lowers `parse` (a module parse of the document `file`), reusing what
/// the last call with the same `kept` lowered where the tree did not
/// change. The diagnostics and the name index are in document
/// coordinates, the IR's spans per definition: resolve them with the
/// [`DefinitionSpans`] returned. Equal (after resolving spans) to
/// [`lower_parse`](super::lower_parse) of the same parse.
pub fn lower_incrementally(
    file: FileId,
    parse: &Parse,
    options: LowerOptions,
    kept: &mut IncrementalLowering,
) -> Option<(Lowered, DefinitionSpans)> {
    kept.last_relowered = None;
    let Some(root) = parse.source_file() else {
        kept.clear();
        return super::lower_parse(file, parse, options)
            .map(|lowered| (lowered, DefinitionSpans::document(file)));
    };
    if root.to_green().metadata().is_some() {
        // Metadata references are shared by every definition.
        kept.clear();
        let lowered = super::lower_module_with(file, &root, options);
        return Some((lowered, DefinitionSpans::document(file)));
    }
    if let Some(mut last) = kept.kept.take() {
        if last.file == file && last.options == options && last.reusable {
            if let Some((result, relowered)) = relower(&mut last, &root, &kept.interner) {
                kept.kept = Some(last);
                kept.last_relowered = Some(relowered);
                return Some(result);
            }
        }
    }
    let (last, result) = lower_whole(file, &root, options, &kept.interner);
    kept.kept = Some(last);
    Some(result)
}

/// Lowers the whole module, recording each definition.
fn lower_whole(
    file: FileId,
    root: &ast::SourceFile,
    options: LowerOptions,
    interner: &Arc<Interner>,
) -> (Kept, (Lowered, DefinitionSpans)) {
    let mut lw = Lowerer::new(file, true);
    lw.set_options(options, root.syntax());
    lw.interner = Some(Arc::clone(interner));
    let text_end = root.syntax().text_range().end();
    lw.text_end = text_end;
    let root = root.to_green();
    let mut module = IRModule::new();
    let items: Vec<ast::Item<Node<'_>>> = root.items().collect();
    let duplicate_types = lw.declare_items(&items);
    let item_names = lw.names.counts().0;
    lw.lower_type_items(&items, &duplicate_types, &mut module);
    let module_counts = lw.names.counts();
    let (definitions, uses) = lw.names.since((item_names, 0));
    let module_definitions = definitions.to_vec();
    let module_uses = uses.to_vec();
    let module_diagnostics = std::mem::take(&mut lw.diagnostics);
    let setup = DefSetup {
        file,
        options,
        text_end,
        items: &items,
        module_definitions: &module_definitions,
        adts: &lw.adts,
        ctors: &lw.ctors,
        interner,
    };
    let in_parallel = if module_diagnostics.is_empty() && worth_parallel(&items) {
        setup.lower_defs_in_parallel()
    } else {
        None
    };
    let defs = match in_parallel {
        Some(defs) => defs,
        None => lower_defs_in_order(&mut lw, &items, text_end, module_counts.0 as u32),
    };
    let mut graph_owner = FastHashMap::default();
    let mut reusable = module_diagnostics.is_empty();
    for (index, piece) in defs.iter().enumerate() {
        reusable &= !piece.shared;
        for &number in &piece.graph_numbers {
            reusable &= graph_owner.insert(number, index).is_none();
        }
    }
    let (all_definitions, all_uses) = lw.names.since((0, 0));
    let names_of_items = all_definitions[..item_names].to_vec();
    // A definition that reads another's names (a shared piece) has uses the
    // pieces cannot renumber: the index is the recorder's as it is.
    let whole_names = (!reusable)
        .then(|| super::NameIndex::from_parts(all_definitions.to_vec(), all_uses.to_vec()));
    let kept = Kept {
        file,
        options,
        reusable,
        items: items
            .iter()
            .map(|i| i.syntax().green().to_owned())
            .collect(),
        item_names,
        module_definitions,
        module_uses,
        module_diagnostics,
        adts: std::mem::take(&mut lw.adts),
        ctors: std::mem::take(&mut lw.ctors),
        type_definitions: module.type_definitions().map(|(_, d)| d.clone()).collect(),
        defs,
        graph_owner,
    };
    let mut result = kept.assemble(names_of_items, &items, text_end);
    if let Some(names) = whole_names {
        result.0.names = names;
    }
    (kept, result)
}

/// Lowers the `def`s of `items` one after the other with `lw` (which has
/// lowered the module's items and type definitions, whose names are the
/// first `module_count`), as a whole lowering does.
fn lower_defs_in_order(
    lw: &mut Lowerer,
    items: &[ast::Item<Node<'_>>],
    text_end: TextSize,
    module_count: u32,
) -> Vec<DefPiece> {
    let mut defs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let ast::Item::Def(def) = item else { continue };
        let counts = lw.names.counts();
        let mut piece = lower_def(lw, *def, defs.len(), i, text_end, counts);
        // Ids of other definitions than the module's and its own: it reads
        // another definition's names.
        let first = counts.0 as u32;
        let uses = Arc::get_mut(&mut piece.names)
            .expect("a piece's names are its own until it is kept")
            .uses_mut();
        for (_, id) in uses {
            let id_index = id.index() as u32;
            if id_index >= first {
                *id = DefId::from_index(id_index - first + module_count);
            } else if id_index >= module_count {
                piece.shared = true;
            }
        }
        defs.push(piece);
    }
    defs
}

/// Whether lowering the definitions of a module on several threads is
/// worth starting them: more than one thread, and enough definitions of
/// enough text that each thread has work.
fn worth_parallel(items: &[ast::Item<Node<'_>>]) -> bool {
    /// Below this much text of definitions, one thread is as fast.
    const MIN_TEXT: u32 = 64 * 1024;
    let mut defs = 0;
    let mut text = 0u32;
    for item in items {
        if let ast::Item::Def(def) = item {
            defs += 1;
            text = text.saturating_add(u32::from(def.syntax().range().len()));
        }
    }
    rayon::current_num_threads() > 1 && defs > 1 && text >= MIN_TEXT
}

/// What lowering one `def` on its own needs of the module: its items (for
/// the global names) and what its type definitions defined, as
/// [`relower`] sets a lowerer up.
struct DefSetup<'s, 'n> {
    file: FileId,
    options: LowerOptions,
    text_end: TextSize,
    items: &'s [ast::Item<Node<'n>>],
    module_definitions: &'s [Definition],
    adts: &'s FastHashMap<String, AdtEntry>,
    ctors: &'s FastHashMap<String, CtorEntry>,
    interner: &'s Arc<Interner>,
}

impl DefSetup<'_, '_> {
    /// A lowerer that knows the module's items and type definitions, its
    /// name recorder standing after the module's names.
    fn lowerer(&self) -> Lowerer {
        let mut lw = Lowerer::new(self.file, true);
        lw.lenient = self.options.lenient;
        lw.text_end = self.text_end;
        lw.interner = Some(Arc::clone(self.interner));
        let _ = lw.declare_items(self.items);
        lw.adts = self.adts.clone();
        lw.ctors = self.ctors.clone();
        for definition in self.module_definitions {
            lw.names.define(
                definition.kind,
                definition.name.clone(),
                definition.range,
                definition.visible,
            );
        }
        lw
    }

    /// Every `def` lowered on its own, on the threads of the pool, in text
    /// order; `None` when one of them reads or writes what definitions
    /// share, or two define the same graph binding (then only a lowering
    /// in order gives the whole lowering's result).
    fn lower_defs_in_parallel(&self) -> Option<Vec<DefPiece>> {
        let defs: Vec<(usize, ast::Def<Node<'_>>)> = self
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item {
                ast::Item::Def(def) => Some((i, *def)),
                _ => None,
            })
            .collect();
        let pieces: Vec<DefPiece> = defs
            .par_iter()
            .enumerate()
            .map_init(
                || self.lowerer(),
                |lw, (index, &(item, def))| {
                    lw.graph.clear();
                    let counts = lw.names.counts();
                    let piece = lower_def(lw, def, index, item, self.text_end, counts);
                    lw.names.truncate(counts);
                    piece
                },
            )
            .collect();
        let mut graph_numbers = std::collections::HashSet::new();
        for piece in &pieces {
            if piece.shared {
                return None;
            }
            for &number in &piece.graph_numbers {
                if !graph_numbers.insert(number) {
                    return None;
                }
            }
        }
        Some(pieces)
    }
}

/// Lowers one `def` with `lw`, whose names recorder stands at `counts`,
/// and takes what it recorded back out of `lw`.
fn lower_def(
    lw: &mut Lowerer,
    def: ast::Def<Node<'_>>,
    index: usize,
    item: usize,
    text_end: TextSize,
    counts: (usize, usize),
) -> DefPiece {
    let range = def.syntax().range();
    let diagnostics_before = lw.diagnostics.len();
    lw.piece = Some(Piece {
        file: DefinitionSpans::file_of(index),
        range,
        first_def: counts.0 as u32,
        shared: false,
        graph_numbers: Vec::new(),
    });
    let function = lw.def(def);
    let piece = lw.piece.take().expect("the piece set above");
    let (definitions, uses) = lw.names.since(counts);
    DefPiece {
        item,
        name: def.name().map(|n| n.name().to_string()),
        function,
        lowered: range,
        diagnostics: lw.diagnostics.split_off(diagnostics_before),
        names: Arc::new(NamePart::new(
            definitions.to_vec(),
            uses.to_vec(),
            Some(range),
            Some(text_end),
        )),
        graph_numbers: piece.graph_numbers,
        shared: piece.shared,
    }
}

/// Lowers again only the definitions whose tree changed, when they can be
/// lowered alone (see the module docs); `None` when the whole module must
/// be (`last` may then have been changed). Also says how many were lowered.
fn relower(
    last: &mut Kept,
    root: &ast::SourceFile,
    interner: &Arc<Interner>,
) -> Option<((Lowered, DefinitionSpans), usize)> {
    let text_end = root.syntax().text_range().end();
    let green_root = root.to_green();
    let items: Vec<ast::Item<Node<'_>>> = green_root.items().collect();
    if items.len() != last.items.len() {
        return None;
    }
    let changed: Vec<usize> = items
        .iter()
        .zip(&last.items)
        .enumerate()
        .filter(|(_, (new, old))| !std::ptr::eq(new.syntax().green(), &***old))
        .map(|(i, _)| i)
        .collect();
    if let Some(&first) = changed.first() {
        // Type definitions never move (constructors keep their spans).
        let type_after = items[first..]
            .iter()
            .any(|item| !matches!(item, ast::Item::Def(_)));
        if type_after {
            return None;
        }
    }
    let mut lw = Lowerer::new(last.file, true);
    lw.lenient = last.options.lenient;
    lw.text_end = text_end;
    lw.interner = Some(Arc::clone(interner));
    let _ = lw.declare_items(&items);
    if !lw.diagnostics.is_empty() || lw.names.counts().0 != last.item_names {
        return None;
    }
    let (names_of_items, _) = lw.names.since((0, 0));
    let names_of_items = names_of_items.to_vec();
    // The module's names as the type definitions left them, so ids match.
    lw.adts = last.adts.clone();
    lw.ctors = last.ctors.clone();
    for definition in &last.module_definitions {
        let kind = definition.kind;
        lw.names.define(
            kind,
            definition.name.clone(),
            definition.range,
            definition.visible,
        );
    }
    let counts = lw.names.counts();
    for &i in &changed {
        let ast::Item::Def(def) = items[i] else {
            return None;
        };
        let index = last.defs.iter().position(|d| d.item == i)?;
        let old = &last.defs[index];
        if def.name().map(|n| n.name().to_string()) != old.name {
            return None;
        }
        lw.graph.clear();
        let piece = lower_def(&mut lw, def, index, i, text_end, counts);
        lw.names.truncate(counts);
        if piece.shared {
            return None;
        }
        for number in &last.defs[index].graph_numbers {
            last.graph_owner.remove(number);
        }
        for &number in &piece.graph_numbers {
            if last.graph_owner.insert(number, index).is_some() {
                return None;
            }
        }
        last.defs[index] = piece;
        last.items[i] = items[i].syntax().green().to_owned();
    }
    Some((
        last.assemble(names_of_items, &items, text_end),
        changed.len(),
    ))
}

impl Kept {
    /// The module, diagnostics and name index of the current items (at
    /// their current places).
    fn assemble(
        &self,
        names_of_items: Vec<Definition>,
        items: &[ast::Item<Node<'_>>],
        text_end: TextSize,
    ) -> (Lowered, DefinitionSpans) {
        let mut module = IRModule::new();
        for data in &self.type_definitions {
            module.add_type_definition(data.clone());
        }
        let starts: Vec<TextSize> = self
            .defs
            .iter()
            .map(|d| items[d.item].syntax().range().start())
            .collect();
        let spans = DefinitionSpans {
            file: self.file,
            starts,
        };
        let mut first = names_of_items;
        first.extend(self.module_definitions.iter().cloned());
        let first = Arc::new(NamePart::new(first, self.module_uses.clone(), None, None));
        let mut diagnostics = self.module_diagnostics.clone();
        let mut pieces = Vec::with_capacity(self.defs.len());
        for (piece, &start) in self.defs.iter().zip(&spans.starts) {
            if let (Some(name), Some(function)) = (&piece.name, &piece.function) {
                module.add_function(name, function.clone());
            }
            let delta = i64::from(u32::from(start)) - i64::from(u32::from(piece.lowered.start()));
            pieces.push((piece.names.clone(), delta));
            diagnostics.extend(piece.diagnostics.iter().map(|d| {
                let mut d = d.clone();
                spans.resolve_diagnostic(&mut d);
                d
            }));
        }
        // As a whole lowering orders them.
        diagnostics.sort_by_key(|d| d.span.map_or(u32::MAX, |s| u32::from(s.range.start())));
        let lowered = Lowered {
            module,
            diagnostics: diagnostics.into_iter().collect(),
            names: super::NameIndex::of_parts(first, pieces, text_end),
        };
        (lowered, spans)
    }
}
