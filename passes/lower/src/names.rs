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
use std::sync::OnceLock;

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
/// The lookup tables are built on first use: lowering runs on every read
/// of a file, while only an editor asks where names are.
#[derive(Debug, Default, Clone)]
pub struct NameIndex {
    definitions: Vec<Definition>,
    /// (use range, definition), in the order lowering met them.
    recorded_uses: Vec<(TextRange, DefId)>,
    lookup: OnceLock<Lookup>,
}

/// The tables [`NameIndex`] answers from.
#[derive(Debug, Default, Clone)]
struct Lookup {
    /// Every occurrence, sorted by start.
    occurrences: Vec<Occurrence>,
    /// The uses of definition `d` are `uses[use_starts[d]..use_starts[d + 1]]`,
    /// in text order (one allocation for all definitions).
    use_starts: Vec<u32>,
    uses: Vec<TextRange>,
    /// The locals and graph bindings defined in the text, by the start of
    /// their defining token: completion walks them back from the cursor
    /// and stops once it has enough, instead of testing every definition.
    scoped_by_start: Vec<(TextSize, DefId)>,
}

impl Lookup {
    fn build(definitions: &[Definition], recorded_uses: &[(TextRange, DefId)]) -> Lookup {
        let mut uses = recorded_uses.to_vec();
        // Lowering meets names almost in text order (a `let`'s annotation is
        // read before its name, …): the stable sort merges the runs in
        // about linear time.
        uses.sort_by_key(|(range, _)| (range.start(), range.end()));
        uses.dedup();
        let mut occurrences: Vec<Occurrence> = Vec::with_capacity(uses.len() + definitions.len());
        occurrences.extend(definitions.iter().enumerate().filter_map(|(i, d)| {
            Some(Occurrence {
                def: DefId(i as u32),
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
        let mut use_starts = vec![0u32; definitions.len() + 1];
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
            .filter_map(|(i, d)| Some((d.range?.start(), DefId(i as u32))))
            .collect();
        scoped_by_start.sort_unstable();
        Lookup {
            occurrences,
            use_starts,
            uses: grouped,
            scoped_by_start,
        }
    }
}

impl NameIndex {
    /// The index of these definitions and uses (incremental lowering
    /// assembles them from the definitions' parts).
    pub(crate) fn from_parts(
        definitions: Vec<Definition>,
        recorded_uses: Vec<(TextRange, DefId)>,
    ) -> NameIndex {
        NameIndex {
            definitions,
            recorded_uses,
            lookup: OnceLock::new(),
        }
    }

    fn lookup(&self) -> &Lookup {
        self.lookup
            .get_or_init(|| Lookup::build(&self.definitions, &self.recorded_uses))
    }

    pub fn definition(&self, id: DefId) -> &Definition {
        &self.definitions[id.index()]
    }

    /// Every definition, in the order lowering met them.
    pub fn definitions(&self) -> impl Iterator<Item = (DefId, &Definition)> {
        self.definitions
            .iter()
            .enumerate()
            .map(|(i, d)| (DefId(i as u32), d))
    }

    pub fn len(&self) -> usize {
        self.definitions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.definitions.is_empty()
    }

    /// The name at `offset`: the occurrence whose range contains it, end
    /// included (a cursor just after a name still finds it); of two names
    /// touching the offset, the one starting there.
    pub fn at(&self, offset: TextSize) -> Option<Occurrence> {
        let occurrences = &self.lookup().occurrences;
        let after = occurrences.partition_point(|o| o.range.start() <= offset);
        occurrences[..after]
            .iter()
            .rev()
            .take(2)
            .find(|o| o.range.contains_inclusive(offset))
            .copied()
    }

    /// The definition the name at `offset` resolves to (or defines).
    pub fn definition_at(&self, offset: TextSize) -> Option<(DefId, &Definition)> {
        let occurrence = self.at(offset)?;
        Some((occurrence.def, self.definition(occurrence.def)))
    }

    /// The uses of a definition, in text order (the definition excluded).
    pub fn references(&self, id: DefId) -> &[TextRange] {
        let i = id.index();
        let lookup = self.lookup();
        match (lookup.use_starts.get(i), lookup.use_starts.get(i + 1)) {
            (Some(&start), Some(&end)) => &lookup.uses[start as usize..end as usize],
            _ => &[],
        }
    }

    /// The definition's token (when it is in the text) and every use.
    pub fn occurrences(&self, id: DefId) -> impl Iterator<Item = TextRange> + '_ {
        self.definition(id)
            .range
            .into_iter()
            .chain(self.references(id).iter().copied())
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
    pub fn visible_names_at(&self, offset: TextSize) -> impl Iterator<Item = DefId> + '_ {
        let scoped = &self.lookup().scoped_by_start;
        let before = scoped.partition_point(|(start, _)| *start < offset);
        let mut seen = std::collections::HashSet::new();
        scoped[..before]
            .iter()
            .rev()
            .filter(move |(_, id)| {
                let d = self.definition(*id);
                d.visible.is_some_and(|v| v.contains_inclusive(offset))
                    && d.range.is_some_and(|r| r.end() <= offset)
            })
            .filter(move |(_, id)| {
                let d = self.definition(*id);
                seen.insert((d.kind == NameKind::Graph, d.name.as_str()))
            })
            .map(|(_, id)| *id)
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
        NameIndex {
            definitions: self.definitions,
            recorded_uses: self.uses,
            lookup: OnceLock::new(),
        }
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
            .map(|id| index.definition(id).name.as_str())
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
