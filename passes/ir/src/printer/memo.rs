//! The printer's memo tables, kept cheap: everything the printer remembers
//! about a node (TVM's `memo_`, `result_memo_`, `var_memo_`,
//! `opt_info_memo_` and the dependency graph's use counts) lives in one
//! [`NodeState`] found with one hash lookup, and the texts it remembers are
//! [`Piece`]s: an index into an arena of documents, the number of a `%N`
//! temporary or a static operator name, so that handing a text around
//! copies a word rather than a string.

use super::doc::Doc;
use std::rc::Rc;

/// Texts of the arena at least this long are embedded where they are used
/// rather than copied: copying a short text is cheaper than sharing it, and
/// copies of at most this much per level keep deep nesting linear.
const SHARE_ABOVE: usize = 8 << 10;
use crate::rewrite::for_each_child_except_pattern_vars;
use crate::{Expr, ExprKind};

/// The identity of a node for the memo tables: its address, except that a
/// variable is identified by its id (every occurrence of a variable should
/// be the same node, but a rewrite that re-creates it keeps the id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Key {
    Node(usize),
    Var(u64),
}

pub(super) fn key(e: &Expr) -> Key {
    match e.kind() {
        ExprKind::Var(v) => Key::Var(v.id.0),
        _ => Key::Node(e.addr()),
    }
}

/// A printed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Piece {
    /// Nothing.
    Empty,
    /// A document of the arena ([`Nodes::doc`]).
    Doc(usize),
    /// `%N`.
    Temp(usize),
    /// A text that lives as long as the program (an operator's name).
    Static(&'static str),
}

/// What the printer knows of one node.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct NodeState {
    /// `memo_`: the node's text (for a bound node, its `%N`).
    pub(super) memo: Option<Piece>,
    /// `result_memo_`: the full binding text of a variable first met as a
    /// free variable.
    pub(super) result: Option<Piece>,
    /// `var_memo_`: the node has its `%N` line or `free_var` line.
    pub(super) bound: bool,
    /// `opt_info_memo_`: the node's `/* ty=… */` comment was produced.
    pub(super) info_done: bool,
    /// The uses of the node in the function being printed, valid when
    /// `users_round` is the current round.
    users: u32,
    users_round: u32,
    /// The node was reached by the current round's walk.
    seen_round: u32,
}

/// The states of the nodes met so far, and the arena of documents.
#[derive(Default)]
pub(super) struct Nodes {
    index: FxMap<Key, u32>,
    states: Vec<NodeState>,
    docs: Vec<Rc<Doc>>,
    /// Counts of users are per function: each count is a round.
    round: u32,
}

impl Nodes {
    /// The slot of a node's state, made on first use.
    pub(super) fn slot(&mut self, k: Key) -> usize {
        let next = self.states.len() as u32;
        let slot = *self.index.entry(k).or_insert(next);
        if slot == next {
            self.states.push(NodeState::default());
        }
        slot as usize
    }

    pub(super) fn get(&self, slot: usize) -> &NodeState {
        &self.states[slot]
    }

    pub(super) fn get_mut(&mut self, slot: usize) -> &mut NodeState {
        &mut self.states[slot]
    }

    /// Forgets a node's `%N` (its scope was closed): a later use prints
    /// and binds it again.
    pub(super) fn forget_binding(&mut self, slot: usize) {
        let state = &mut self.states[slot];
        state.memo = None;
        state.result = None;
        state.bound = false;
        state.info_done = false;
    }

    /// Keeps a document in the arena.
    pub(super) fn store(&mut self, doc: Doc) -> Piece {
        self.docs.push(Rc::new(doc));
        Piece::Doc(self.docs.len() - 1)
    }

    /// Appends a piece's text to `out`.
    pub(super) fn put(&self, out: &mut Doc, piece: Piece) {
        match piece {
            Piece::Empty => {}
            Piece::Doc(i) => {
                if let Some(doc) = self.docs.get(i) {
                    // A large text (a nested block) is shared, not copied:
                    // each level of a deep nesting would copy all deeper
                    // ones.
                    if doc.len() >= SHARE_ABOVE {
                        out.embed(doc.clone());
                    } else {
                        out.append_ref(doc);
                    }
                }
            }
            Piece::Temp(n) => {
                out.push_str("%");
                out.push_decimal(n as u64);
            }
            Piece::Static(text) => {
                out.push_str(text);
            }
        }
    }

    /// A piece's text as a document of its own, with room for `extra`
    /// more bytes.
    pub(super) fn to_doc(&self, piece: Piece, extra: usize) -> Doc {
        let len = match piece {
            Piece::Doc(i) => self.docs.get(i).map_or(0, |doc| doc.len()),
            Piece::Static(text) => text.len(),
            Piece::Empty | Piece::Temp(_) => 8,
        };
        let mut doc = Doc::with_capacity(len + extra);
        self.put(&mut doc, piece);
        doc
    }

    /// TVM's `DependencyGraph` reduced to what the printer asks of it: how
    /// many uses each node below `root` has (a node used twice by one
    /// parent counts twice). Match patterns are not uses. Replaces the
    /// counts of the previous function.
    pub(super) fn count_users(&mut self, root: &Expr) {
        let known = self.states.len();
        self.round += 1;
        let round = self.round;
        let root_slot = self.slot(key(root));
        self.states[root_slot].seen_round = round;
        let mut stack: Vec<&Expr> = vec![root];
        let mut children: Vec<&Expr> = Vec::new();
        while let Some(e) = stack.pop() {
            for_each_child_except_pattern_vars(e, |c| children.push(c));
            for c in children.drain(..) {
                // Only nodes the printer may write inline or not ask for
                // their users: a variable, a constant, … is always inline.
                if is_leaf(c) {
                    continue;
                }
                let slot = self.slot(key(c));
                let state = &mut self.states[slot];
                if state.users_round != round {
                    state.users_round = round;
                    state.users = 0;
                }
                state.users += 1;
                if state.seen_round != round {
                    state.seen_round = round;
                    stack.push(c);
                }
            }
        }
        // Printing meets about as many leaves and makes about one document
        // per node: grow the tables once.
        let found = self.states.len() - known;
        self.states.reserve(found);
        self.index.reserve(found);
        self.docs.reserve(found * 2);
    }

    /// Whether a node has at most one use in the function being printed
    /// (not counted for nodes that are always written inline).
    pub(super) fn is_unique(&self, slot: usize) -> bool {
        let state = &self.states[slot];
        state.users_round != self.round || state.users < 2
    }
}

fn is_leaf(e: &Expr) -> bool {
    matches!(
        e.kind(),
        ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::Op(_)
            | ExprKind::Constructor(_)
    )
}

pub(crate) use crate::fxhash::FxMap;
