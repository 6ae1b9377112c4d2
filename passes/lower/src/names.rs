//! The name resolution of one lowering run, kept: every definition a text
//! makes (parameters, `let` and pattern variables, `free_var`s, graph
//! bindings, globals, type parameters, ADT names, constructors) and every
//! use site with the definition it resolved to.
//!
//! Lowering records these as it resolves names, so tools that navigate a
//! text (go to definition, references, rename, highlights, completion of the
//! locals in scope) ask [`NameIndex`] instead of resolving names a second
//! time with rules of their own: what they show is what lowering decided.
//!
//! Ranges are the name tokens, sigil included (`%x`, `@f`, `%0`, `List`).

use relay_syntax::{TextRange, TextSize};
use std::sync::{Arc, OnceLock};

/// A definition of a [`NameIndex`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefId(u32);

impl DefId {
    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub(crate) fn from_index(index: u32) -> DefId {
        DefId(index)
    }
}

/// What a definition defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameKind {
    /// A parameter of a function.
    Param,
    /// A `let` variable.
    Let,
    /// A variable of a match pattern.
    PatternVar,
    /// A `free_var` declaration.
    FreeVar,
    /// A local used but declared nowhere: every use of the name is one
    /// (range-less) definition, so they can be renamed together.
    Undeclared,
    /// A graph binding `%N = e;`.
    Graph,
    /// A global function `def @f`.
    Global,
    /// A type parameter `[A]`.
    TypeParam,
    /// The name of a `type` or `extern type` definition.
    TypeName,
    /// A constructor of a `type` definition.
    Constructor,
}

impl NameKind {
    /// Whether the name is a local variable (written `%name`).
    pub fn is_local(self) -> bool {
        matches!(
            self,
            NameKind::Param
                | NameKind::Let
                | NameKind::PatternVar
                | NameKind::FreeVar
                | NameKind::Undeclared
        )
    }

    /// The sigil the name is written with.
    pub fn sigil(self) -> &'static str {
        match self {
            NameKind::Global => "@",
            NameKind::TypeParam | NameKind::TypeName | NameKind::Constructor => "",
            _ => "%",
        }
    }
}

/// One definition.
#[derive(Debug, Clone)]
pub struct Definition {
    pub kind: NameKind,
    /// The name without its sigil.
    pub name: String,
    /// The defining token, sigil included; `None` for undeclared locals and
    /// for the definitions of an initial module (which are not in the text).
    pub range: Option<TextRange>,
    /// Where the name can be used, for locals and graph bindings (from the
    /// definition to the end of its scope; to the end of the text for
    /// `free_var`s and graph bindings, which belong to the whole parse).
    pub visible: Option<TextRange>,
}

/// A name in the text: a definition or a use, and what it resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    pub def: DefId,
    /// The name token, sigil included.
    pub range: TextRange,
    /// Whether this is the defining token rather than a use.
    pub is_definition: bool,
}

/// Definitions and use sites of a lowered text, with lookups by offset.
///
/// The index is made of parts: one for a whole lowering, or, when the
/// editor lowers incrementally, one for the names of the items and type
/// definitions and one per `def` (a `NamePart`). A part is shared (`Arc`)
/// by every index a definition's unchanged text is in, at the offset the
/// definition has now: an edit makes one new part and moves the others
/// without touching them. The lookup tables are per part and built on
/// first use: lowering runs on every read of a file, while only an editor
/// asks where names are, and after an edit only the edited part's tables
/// are built again.
///
/// Ids are global: the definitions of the parts in order.
#[derive(Debug, Default, Clone)]
pub struct NameIndex {
    parts: Vec<PlacedPart>,
    /// Ids below this are the same in every part's numbering (the items'
    /// and type definitions' names, defined by the first part); a part
    /// numbers its own definitions from here.
    shared: u32,
}

/// A part where it is now.
#[derive(Debug, Clone)]
struct PlacedPart {
    part: Arc<NamePart>,
    /// The global id of the part's first definition.
    first: u32,
    /// Added to the part's recorded ranges to put them in the document.
    delta: i64,
    /// The end of the text now: a visible range that ended at the part's
    /// recorded end of text ends here.
    text_end: TextSize,
}

/// The definitions and uses recorded while one piece of a text was lowered
/// (a `def`, or the whole text), in the coordinates of that lowering.
#[derive(Debug, Default)]
pub(crate) struct NamePart {
    definitions: Vec<Definition>,
    /// (use range, definition) in the order lowering met them; ids below
    /// the index's `shared` are the shared names, the others this part's
    /// (numbered from `shared`).
    recorded_uses: Vec<(TextRange, DefId)>,
    /// Where the part's names are (everything for the first part).
    range: Option<TextRange>,
    /// The end of the text when the part was recorded (`None`: visible
    /// ranges are kept as they are).
    text_end: Option<TextSize>,
    lookup: OnceLock<Lookup>,
}

impl NamePart {
    /// A part of the names of the text in `range` (`None`: anywhere),
    /// recorded when the text ended at `text_end` (`None`: its visible
    /// ranges never move).
    pub(crate) fn new(
        definitions: Vec<Definition>,
        recorded_uses: Vec<(TextRange, DefId)>,
        range: Option<TextRange>,
        text_end: Option<TextSize>,
    ) -> NamePart {
        NamePart {
            definitions,
            recorded_uses,
            range,
            text_end,
            lookup: OnceLock::new(),
        }
    }

    /// The uses, to renumber them.
    pub(crate) fn uses_mut(&mut self) -> &mut Vec<(TextRange, DefId)> {
        &mut self.recorded_uses
    }

    fn lookup(&self, shared: u32) -> &Lookup {
        self.lookup
            .get_or_init(|| Lookup::build(&self.definitions, &self.recorded_uses, shared))
    }
}

/// A part's walk back from an offset over its scoped definitions (sorted
/// by start): how many of them are left.
type Walk<'a> = (&'a PlacedPart, &'a [(TextSize, DefId)], usize);

/// The tables a `NamePart` answers from, in the part's coordinates and
/// numbering.
#[derive(Debug, Default, Clone)]
struct Lookup {
    /// Every occurrence, sorted by start.
    occurrences: Vec<Occurrence>,
    /// The uses of the definition numbered `d` are
    /// `uses[use_starts[d]..use_starts[d + 1]]`, in text order (one
    /// allocation for all definitions).
    use_starts: Vec<u32>,
    uses: Vec<TextRange>,
    /// The locals and graph bindings defined in the part, by the start of
    /// their defining token: completion walks them back from the cursor
    /// and stops once it has enough, instead of testing every definition.
    scoped_by_start: Vec<(TextSize, DefId)>,
}

impl Lookup {
    fn build(
        definitions: &[Definition],
        recorded_uses: &[(TextRange, DefId)],
        shared: u32,
    ) -> Lookup {
        let own = |i: usize| DefId(shared + i as u32);
        let mut uses = recorded_uses.to_vec();
        // Lowering meets names almost in text order (a `let`'s annotation is
        // read before its name, …): the stable sort merges the runs in
        // about linear time.
        uses.sort_by_key(|(range, _)| (range.start(), range.end()));
        uses.dedup();
        let mut occurrences: Vec<Occurrence> = Vec::with_capacity(uses.len() + definitions.len());
        occurrences.extend(definitions.iter().enumerate().filter_map(|(i, d)| {
            Some(Occurrence {
                def: own(i),
                range: d.range?,
                is_definition: true,
            })
        }));
        occurrences.extend(uses.iter().map(|&(range, def)| Occurrence {
            def,
            range,
            is_definition: false,
        }));
        occurrences.sort_by_key(|o| (o.range.start(), o.range.end()));
        // Group the uses by definition, keeping text order in each group.
        let numbered = shared as usize + definitions.len();
        let mut use_starts = vec![0u32; numbered + 1];
        for (_, def) in &uses {
            use_starts[def.index() + 1] += 1;
        }
        let mut total = 0;
        for start in &mut use_starts {
            total += *start;
            *start = total;
        }
        let mut next = use_starts.clone();
        let mut grouped = vec![TextRange::default(); uses.len()];
        for (range, def) in &uses {
            let slot = &mut next[def.index()];
            grouped[*slot as usize] = *range;
            *slot += 1;
        }
        let mut scoped_by_start: Vec<(TextSize, DefId)> = definitions
            .iter()
            .enumerate()
            .filter(|(_, d)| d.visible.is_some())
            .filter_map(|(i, d)| Some((d.range?.start(), own(i))))
            .collect();
        scoped_by_start.sort_unstable();
        Lookup {
            occurrences,
            use_starts,
            uses: grouped,
            scoped_by_start,
        }
    }

    /// The uses of the definition numbered `def` in the part.
    fn uses_of(&self, def: u32) -> &[TextRange] {
        let i = def as usize;
        match (self.use_starts.get(i), self.use_starts.get(i + 1)) {
            (Some(&start), Some(&end)) => &self.uses[start as usize..end as usize],
            _ => &[],
        }
    }
}

fn shift_size(size: TextSize, delta: i64) -> TextSize {
    TextSize::from((i64::from(u32::from(size)) + delta).clamp(0, i64::from(u32::MAX)) as u32)
}

fn shift(range: TextRange, delta: i64) -> TextRange {
    if delta == 0 {
        return range;
    }
    TextRange::new(
        shift_size(range.start(), delta),
        shift_size(range.end(), delta),
    )
}

impl PlacedPart {
    /// A global id from the part's numbering.
    fn global(&self, id: DefId, shared: u32) -> DefId {
        if id.0 < shared {
            id
        } else {
            DefId(id.0 - shared + self.first)
        }
    }

    /// The part's numbering of a global id, if it is the part's or shared.
    fn local(&self, id: DefId, shared: u32) -> Option<DefId> {
        if id.0 < shared {
            Some(id)
        } else if id.0 >= self.first && id.0 - self.first < self.part.definitions.len() as u32 {
            Some(DefId(id.0 - self.first + shared))
        } else {
            None
        }
    }

    /// An offset of the document in the part's coordinates.
    fn recorded(&self, offset: TextSize) -> Option<TextSize> {
        let at = i64::from(u32::from(offset)) - self.delta;
        u32::try_from(at).ok().map(TextSize::from)
    }

    /// A definition of the part, in the document.
    fn placed(&self, definition: &Definition) -> Definition {
        Definition {
            kind: definition.kind,
            name: definition.name.clone(),
            range: self.placed_range(definition),
            visible: self.placed_visible(definition),
        }
    }

    fn placed_range(&self, definition: &Definition) -> Option<TextRange> {
        definition.range.map(|r| shift(r, self.delta))
    }

    fn placed_visible(&self, definition: &Definition) -> Option<TextRange> {
        definition.visible.map(|v| {
            let start = shift_size(v.start(), self.delta);
            if Some(v.end()) == self.part.text_end {
                TextRange::new(start, self.text_end.max(start))
            } else {
                TextRange::new(start, shift_size(v.end(), self.delta))
            }
        })
    }

    /// Whether the part may have names at `offset` (end included).
    fn may_have(&self, offset: TextSize) -> bool {
        match self.part.range {
            None => true,
            Some(range) => shift(range, self.delta).contains_inclusive(offset),
        }
    }
}

impl NameIndex {
    /// The index of one part: the definitions and uses of a whole lowering.
    pub(crate) fn from_parts(
        definitions: Vec<Definition>,
        recorded_uses: Vec<(TextRange, DefId)>,
    ) -> NameIndex {
        let mut index = NameIndex::default();
        index.push(
            Arc::new(NamePart::new(definitions, recorded_uses, None, None)),
            0,
            TextSize::from(0),
        );
        index
    }

    /// An index of parts: `first` defines the shared names (every id it
    /// makes), the others are placed at their offsets `delta` from where
    /// they were recorded, in a text ending at `text_end`.
    pub(crate) fn of_parts(
        first: Arc<NamePart>,
        others: impl IntoIterator<Item = (Arc<NamePart>, i64)>,
        text_end: TextSize,
    ) -> NameIndex {
        let mut index = NameIndex {
            parts: Vec::new(),
            shared: first.definitions.len() as u32,
        };
        index.parts.push(PlacedPart {
            part: first,
            first: 0,
            delta: 0,
            text_end,
        });
        for (part, delta) in others {
            index.push(part, delta, text_end);
        }
        index
    }

    fn push(&mut self, part: Arc<NamePart>, delta: i64, text_end: TextSize) {
        let first = self.len() as u32;
        self.parts.push(PlacedPart {
            part,
            first,
            delta,
            text_end,
        });
    }

    /// The part a global id is defined in, and its index there.
    fn part_of(&self, id: DefId) -> (&PlacedPart, usize) {
        let i = self.parts.partition_point(|p| p.first <= id.0) - 1;
        let part = &self.parts[i];
        (part, (id.0 - part.first) as usize)
    }

    /// The definition `id`, where it is in the document.
    pub fn definition(&self, id: DefId) -> Definition {
        let (part, i) = self.part_of(id);
        part.placed(&part.part.definitions[i])
    }

    /// What `id` defines.
    pub fn kind(&self, id: DefId) -> NameKind {
        let (part, i) = self.part_of(id);
        part.part.definitions[i].kind
    }

    /// The name `id` defines (without its sigil).
    pub fn name(&self, id: DefId) -> &str {
        let (part, i) = self.part_of(id);
        &part.part.definitions[i].name
    }

    /// Every definition, in the order lowering met them.
    pub fn definitions(&self) -> impl Iterator<Item = (DefId, Definition)> + '_ {
        self.parts.iter().flat_map(|part| {
            part.part
                .definitions
                .iter()
                .enumerate()
                .map(move |(i, d)| (DefId(part.first + i as u32), part.placed(d)))
        })
    }

    pub fn len(&self) -> usize {
        self.parts
            .last()
            .map_or(0, |p| p.first as usize + p.part.definitions.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Builds the lookup tables of every part (what the first request
    /// would).
    pub fn warm(&self) {
        for part in &self.parts {
            part.part.lookup(self.shared_of(part));
        }
    }

    /// The numbering base of a part: the first part numbers from zero.
    fn shared_of(&self, part: &PlacedPart) -> u32 {
        if part.first == 0 {
            0
        } else {
            self.shared
        }
    }

    /// The name at `offset`: the occurrence whose range contains it, end
    /// included (a cursor just after a name still finds it); of two names
    /// touching the offset, the one starting there.
    pub fn at(&self, offset: TextSize) -> Option<Occurrence> {
        // The last two occurrences starting at or before the offset, over
        // every part that can have names there.
        let mut candidates: Vec<Occurrence> = Vec::new();
        for part in self.parts.iter().filter(|p| p.may_have(offset)) {
            let shared = self.shared_of(part);
            let Some(local) = part.recorded(offset) else {
                continue;
            };
            let occurrences = &part.part.lookup(shared).occurrences;
            let after = occurrences.partition_point(|o| o.range.start() <= local);
            candidates.extend(
                occurrences[..after]
                    .iter()
                    .rev()
                    .take(2)
                    .map(|o| Occurrence {
                        def: part.global(o.def, shared),
                        range: shift(o.range, part.delta),
                        is_definition: o.is_definition,
                    }),
            );
        }
        candidates.sort_by_key(|o| (o.range.start(), o.range.end()));
        candidates
            .iter()
            .rev()
            .take(2)
            .find(|o| o.range.contains_inclusive(offset))
            .copied()
    }

    /// The definition the name at `offset` resolves to (or defines).
    pub fn definition_at(&self, offset: TextSize) -> Option<(DefId, Definition)> {
        let occurrence = self.at(offset)?;
        Some((occurrence.def, self.definition(occurrence.def)))
    }

    /// The uses of a definition, in text order (the definition excluded).
    pub fn references(&self, id: DefId) -> Vec<TextRange> {
        // A shared name is used anywhere; a part's own names in that part.
        let mut out = Vec::new();
        let parts: &[PlacedPart] = if id.0 < self.shared {
            &self.parts
        } else {
            std::slice::from_ref(self.part_of(id).0)
        };
        for part in parts {
            let shared = self.shared_of(part);
            if let Some(local) = part.local(id, shared) {
                let uses = part.part.lookup(shared).uses_of(local.0);
                out.extend(uses.iter().map(|&r| shift(r, part.delta)));
            }
        }
        if parts.len() > 1 {
            out.sort_by_key(|r| (r.start(), r.end()));
        }
        out
    }

    /// The definition's token (when it is in the text) and every use.
    pub fn occurrences(&self, id: DefId) -> impl Iterator<Item = TextRange> + '_ {
        let (part, i) = self.part_of(id);
        part.placed_range(&part.part.definitions[i])
            .into_iter()
            .chain(self.references(id))
    }

    /// The locals and graph bindings that can be used at `offset`, innermost
    /// (latest defined) first; a name shadowed by a later definition is
    /// left out.
    pub fn visible_at(&self, offset: TextSize) -> Vec<DefId> {
        self.visible_names_at(offset).collect()
    }

    /// [`NameIndex::visible_at`], lazily: the definitions are walked back
    /// from `offset` only as far as the caller takes (completion stops at
    /// a few hundred names in a module that defines a hundred thousand).
    /// The parts' walks are merged by start, latest first.
    pub fn visible_names_at(&self, offset: TextSize) -> impl Iterator<Item = DefId> + '_ {
        // Per part: its scoped definitions starting before the offset, and
        // how many of them are left to walk back over.
        let mut walks: Vec<Walk<'_>> = Vec::new();
        for part in &self.parts {
            if part
                .part
                .range
                .is_some_and(|r| shift_size(r.start(), part.delta) >= offset)
            {
                continue;
            }
            let scoped = &part.part.lookup(self.shared_of(part)).scoped_by_start;
            let before = match part.recorded(offset) {
                Some(local) => scoped.partition_point(|(start, _)| *start < local),
                None => 0,
            };
            walks.push((part, scoped, before));
        }
        let mut seen = std::collections::HashSet::new();
        std::iter::from_fn(move || {
            // The latest start among the walks' next definitions.
            let (w, _) = walks
                .iter()
                .enumerate()
                .filter(|(_, (_, _, left))| *left > 0)
                .max_by_key(|(_, (part, scoped, left))| {
                    shift_size(scoped[left - 1].0, part.delta)
                })?;
            let (part, scoped, left) = &mut walks[w];
            *left -= 1;
            Some((*part, scoped[*left].1))
        })
        .filter_map(move |(part, local)| {
            let shared = self.shared_of(part);
            let id = part.global(local, shared);
            let d = &part.part.definitions[(id.0 - part.first) as usize];
            let visible = part
                .placed_visible(d)
                .is_some_and(|v| v.contains_inclusive(offset))
                && part.placed_range(d).is_some_and(|r| r.end() <= offset);
            (visible && seen.insert((d.kind == NameKind::Graph, d.name.as_str()))).then_some(id)
        })
    }
}

/// Collects definitions and uses while lowering runs.
#[derive(Debug, Default)]
pub(super) struct NameRecorder {
    definitions: Vec<Definition>,
    /// (use range, definition), in the order lowering met them.
    uses: Vec<(TextRange, DefId)>,
}

impl NameRecorder {
    pub(super) fn define(
        &mut self,
        kind: NameKind,
        name: impl Into<String>,
        range: Option<TextRange>,
        visible: Option<TextRange>,
    ) -> DefId {
        let id = DefId(self.definitions.len() as u32);
        self.definitions.push(Definition {
            kind,
            name: name.into(),
            range,
            visible,
        });
        id
    }

    /// A use of `def` at `range`.
    pub(super) fn use_at(&mut self, def: DefId, range: TextRange) {
        self.uses.push((range, def));
    }

    /// How many definitions and uses were recorded.
    pub(super) fn counts(&self) -> (usize, usize) {
        (self.definitions.len(), self.uses.len())
    }

    /// The definitions and uses recorded since `counts` said `(d, u)`.
    pub(super) fn since(&self, (d, u): (usize, usize)) -> (&[Definition], &[(TextRange, DefId)]) {
        (&self.definitions[d..], &self.uses[u..])
    }

    /// Forgets what was recorded since `counts` said `(d, u)`.
    pub(super) fn truncate(&mut self, (d, u): (usize, usize)) {
        self.definitions.truncate(d);
        self.uses.truncate(u);
    }

    pub(super) fn finish(self) -> NameIndex {
        NameIndex::from_parts(self.definitions, self.uses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: u32, end: u32) -> TextRange {
        TextRange::new(start.into(), end.into())
    }

    #[test]
    fn uses_are_grouped_and_found_by_offset() {
        let mut recorder = NameRecorder::default();
        let x = recorder.define(NameKind::Param, "x", Some(range(0, 2)), None);
        let y = recorder.define(NameKind::Let, "y", Some(range(10, 12)), None);
        recorder.use_at(y, range(20, 22));
        recorder.use_at(x, range(14, 16));
        recorder.use_at(x, range(5, 7));
        recorder.use_at(x, range(5, 7));
        let index = recorder.finish();
        assert_eq!(index.references(x), &[range(5, 7), range(14, 16)]);
        assert_eq!(index.references(y), &[range(20, 22)]);
        assert_eq!(index.occurrences(x).count(), 3);
        let at = index.at(21.into()).unwrap();
        assert_eq!((at.def, at.is_definition), (y, false));
        assert_eq!(index.at(2.into()).map(|o| o.def), Some(x));
        assert!(index.at(3.into()).is_none());
        assert_eq!(index.definition_at(11.into()).map(|(id, _)| id), Some(y));
    }

    fn names(text: &str) -> NameIndex {
        let parse = relay_syntax::parse_module(text);
        let root = parse.source_file().expect("a source file");
        crate::lower_module(relay_ir::source::FileId(0), &root).names
    }

    /// The text of every occurrence of the name at the `nth` match of
    /// `needle`, and the kind of its definition.
    fn occurrences_of(text: &str, needle: &str, nth: usize) -> (NameKind, Vec<u32>) {
        let index = names(text);
        let offset = text.match_indices(needle).nth(nth).expect("the needle").0 as u32;
        let (id, def) = index.definition_at(offset.into()).expect("a name");
        let starts = index.occurrences(id).map(|r| r.start().into()).collect();
        (def.kind, starts)
    }

    fn starts_of(text: &str, needle: &str, which: &[usize]) -> Vec<u32> {
        let all: Vec<u32> = text.match_indices(needle).map(|(i, _)| i as u32).collect();
        which.iter().map(|&i| all[i]).collect()
    }

    #[test]
    fn locals_follow_lowering_scopes() {
        let text = "#[version = \"0.0.5\"]\ndef @f(%x, %y) {\n  let %x = add(%x, %y);\n  %x\n}\ndef @g(%x) { @f(%x, %x) }\n";
        // As in TVM, the first `let` of the body binds into the function's
        // scope, which binds `%x` already: the parameter keeps the name (and
        // lowering warns), the `let` variable is never used.
        assert_eq!(
            occurrences_of(text, "%x", 0),
            (NameKind::Param, starts_of(text, "%x", &[0, 2, 3]))
        );
        assert_eq!(
            occurrences_of(text, "%x", 1),
            (NameKind::Let, starts_of(text, "%x", &[1]))
        );
        assert_eq!(
            occurrences_of(text, "%x", 5),
            (NameKind::Param, starts_of(text, "%x", &[4, 5, 6]))
        );
        assert_eq!(
            occurrences_of(text, "@f", 1),
            (NameKind::Global, starts_of(text, "@f", &[0, 1]))
        );
    }

    #[test]
    fn graph_bindings_type_parameters_and_constructors() {
        let text = "#[version = \"0.0.5\"]\ntype L[A] { C(A, L[A]), N }\ndef @f[B](%a: B) -> L[B] {\n  %0 = C(%a, N);\n  match (%0) { C(%h, _) => C(%h, N), N => %0 }\n}\n";
        assert_eq!(
            occurrences_of(text, "%0", 1).1,
            starts_of(text, "%0", &[0, 1, 2])
        );
        assert_eq!(occurrences_of(text, "%0", 0).0, NameKind::Graph);
        assert_eq!(
            occurrences_of(text, "B", 1),
            (NameKind::TypeParam, starts_of(text, "B", &[0, 1, 2]))
        );
        // `A` of the type definition is another type parameter.
        assert_eq!(
            occurrences_of(text, "A", 0).1,
            starts_of(text, "A", &[0, 1, 2])
        );
        assert_eq!(
            occurrences_of(text, "L[B]", 0).1,
            starts_of(text, "L", &[0, 1, 2])
        );
        assert_eq!(
            occurrences_of(text, "N", 2),
            (NameKind::Constructor, starts_of(text, "N", &[0, 1, 2, 3]))
        );
        assert_eq!(
            occurrences_of(text, "%h", 1),
            (NameKind::PatternVar, starts_of(text, "%h", &[0, 1]))
        );
    }

    #[test]
    fn undeclared_locals_share_a_definition_outside_the_text() {
        let text = "#[version = \"0.0.5\"]\ndef @f() { add(%z, %z) }\n";
        let index = names(text);
        let at = text.find("%z").unwrap() as u32;
        let (id, def) = index.definition_at(at.into()).unwrap();
        assert_eq!((def.kind, def.range), (NameKind::Undeclared, None));
        assert_eq!(index.references(id).len(), 2);
    }

    #[test]
    fn visible_locals_for_completion() {
        let text =
            "#[version = \"0.0.5\"]\ndef @f(%a) {\n  let %b = %a;\n  %b\n}\ndef @g(%c) { %c }\n";
        let index = names(text);
        let at = text.find("  %b\n").unwrap() as u32 + 2;
        let visible: Vec<&str> = index
            .visible_at(at.into())
            .into_iter()
            .map(|id| index.name(id))
            .collect();
        assert_eq!(visible, ["b", "a"]);
    }

    /// The walk back from the offset over the definitions sorted by start
    /// gives, at every offset, what testing every definition gives.
    #[test]
    fn visible_names_are_those_of_a_walk_over_every_definition() {
        let text = "#[version = \"0.0.5\"]\nfree_var %v: float32;\ndef @f(%a, %b) {\n  %0 = add(%a, %b);\n  let %a = %0;\n  let %c = (fn (%d) { add(%d, %a) })(%a);\n  match (%c) { %e => %e }\n}\ndef @g(%a) {\n  %1 = add(%a, %0);\n  %1\n}\n";
        let index = names(text);
        for offset in 0..=text.len() as u32 {
            let offset = TextSize::from(offset);
            let mut expected: Vec<(TextSize, DefId)> = index
                .definitions()
                .filter(|(_, d)| {
                    d.visible.is_some_and(|v| v.contains_inclusive(offset))
                        && d.range.is_some_and(|r| r.end() <= offset)
                })
                .filter_map(|(id, d)| Some((d.range?.start(), id)))
                .collect();
            expected.sort_by_key(|(start, _)| std::cmp::Reverse(*start));
            let mut seen = std::collections::HashSet::new();
            let expected: Vec<DefId> = expected
                .into_iter()
                .filter(|(_, id)| {
                    let d = index.definition(*id);
                    seen.insert((d.kind == NameKind::Graph, d.name.clone()))
                })
                .map(|(_, id)| id)
                .collect();
            assert_eq!(index.visible_at(offset), expected, "at {offset:?}");
        }
        // Somewhere the walk has names to give.
        let at = text.find("  %1\n").unwrap() as u32 + 2;
        assert!(index.visible_at(at.into()).len() >= 3);
    }
}
