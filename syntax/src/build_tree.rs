//! Builds the rowan green tree while the parser runs.
//!
//! The lexer hands its tokens to [`Lexed`], which numbers them (see
//! [`Interner`]) and keeps the non-trivia ones for the parser's lookahead.
//! The parser then drives a [`Builder`]: it opens nodes, consumes tokens and
//! closes nodes, and the builder assembles green nodes bottom-up on a stack
//! of children.
//!
//! Trivia (whitespace, comments) is not seen by the parser; here it is put
//! back between the tokens, always outside the nodes that start or end next
//! to it, so every node's range starts and ends at a real token. Every byte of
//! the input lands in exactly one token of the tree.
//!
//! Trivia placement: a node is opened only when its first token arrives (after
//! the trivia before that token has gone to the enclosing node), and nodes
//! that turn out empty (a missing piece the parser reported) are placed right
//! after the last token, before any trivia. So a node that ends with an empty
//! child still ends at its last token, not after the whitespace that follows.
//! Until its first token, a started node is only noted in [`Builder`]'s
//! `deferred` list; an abandoned node is dropped from there, or, when it was
//! already open, leaves its children to the enclosing node. A node that must
//! wrap a completed one (`a + b` once `+` is seen, `f(x)` once `(` is seen)
//! is opened where that one started: its children are the tail of the stack.
//!
//! The tree is built directly with [`GreenNode::new`] rather than through
//! rowan's `GreenNodeBuilder`, whose general-purpose cache (a hash map per
//! parse, hashing every token's text) cost more than the rest of the build.
//! Sharing is kept, more cheaply, through [`Interner`]: tokens with the same
//! kind and text, and small nodes with the same kind and children, are built
//! once per parse. Sharing matters because each green element is its own
//! allocation, and because dropping a tree visits every distinct element:
//! real models repeat the same punctuation, operators and types on every
//! line.
//!
//! Children of open nodes are held as ids (indices into the shared
//! elements) rather than as clones: every clone and every drop of a green
//! element is an atomic reference count update, so a shared element is
//! cloned once per place it ends up in, when its parent is built, and not at
//! all when the parent itself turns out to be shared. Elements built for one
//! place (long tokens, and the nodes that hold one or a variable's name)
//! are moved into their parent, never cloned. A node is handed to rowan as a plain
//! drain of its gathered children, which keeps rowan's copying loop tight.

use crate::lexer::TokenSink;
use crate::SyntaxKind;
use rowan::{GreenNode, GreenToken, NodeOrToken, TextRange, TextSize};

type GreenElement = NodeOrToken<GreenNode, GreenToken>;

/// The tokens of a text, as the parser and the builder need them.
pub(crate) struct Lexed {
    /// Per token, its id, with [`TRIVIA`] set for whitespace and comments.
    ids: Vec<u32>,
    /// The kinds of the non-trivia tokens.
    kinds: Vec<SyntaxKind>,
    /// The ranges of the non-trivia tokens.
    ranges: Vec<TextRange>,
    /// The tokens whose id is [`OWN`], in order.
    long_tokens: Vec<GreenToken>,
    interner: Interner,
}

impl Lexed {
    pub(crate) fn new(text_len: usize) -> Lexed {
        // Real models average 2 to 5 bytes a token (a quarter to a third of
        // them trivia): one allocation each, rarely regrown.
        let capacity = text_len / 2 + 16;
        Lexed {
            ids: Vec::with_capacity(capacity),
            kinds: Vec::with_capacity(capacity),
            ranges: Vec::with_capacity(capacity),
            long_tokens: Vec::new(),
            interner: Interner::new(),
        }
    }

    /// The kind and range of the last non-trivia token.
    pub(crate) fn last_token(&self) -> Option<(SyntaxKind, TextRange)> {
        Some((*self.kinds.last()?, *self.ranges.last()?))
    }

    /// The kinds and ranges of the non-trivia tokens, for the parser, and
    /// the builder of the tree over all the tokens.
    pub(crate) fn into_parts(self) -> (Vec<SyntaxKind>, Vec<TextRange>, Builder) {
        let Lexed {
            ids,
            kinds,
            ranges,
            long_tokens,
            interner,
        } = self;
        let builder = Builder {
            ids,
            token_pos: 0,
            long_tokens: long_tokens.into_iter(),
            children: Vec::with_capacity(256),
            own: Vec::with_capacity(64),
            open_nodes: Vec::with_capacity(64),
            deferred: Vec::with_capacity(16),
            deferred_unclosed: 0,
            interner,
        };
        (kinds, ranges, builder)
    }
}

impl TokenSink for Lexed {
    #[inline(always)]
    fn push_spaces(&mut self, text: &str, start: usize, len: usize, newline: bool) {
        let id = self
            .interner
            .spaces(text, start, len, newline, &mut self.long_tokens);
        self.ids.push(id | TRIVIA);
    }

    #[inline(always)]
    fn push(&mut self, text: &str, kind: SyntaxKind, start: usize, len: usize) {
        let id = self
            .interner
            .token(text, kind, start, len, &mut self.long_tokens);
        if kind.is_trivia() {
            self.ids.push(id | TRIVIA);
        } else {
            self.ids.push(id);
            self.kinds.push(kind);
            self.ranges.push(TextRange::at(
                TextSize::from(start as u32),
                TextSize::from(len as u32),
            ));
        }
    }
}

/// The id of a child that is not in [`Interner::elements`] but built for its
/// one place: it waits on [`Builder::own`] until its parent is built.
const OWN: u32 = u32::MAX >> 1;
/// Set in the entries of [`Builder::ids`] of trivia tokens.
const TRIVIA: u32 = 1 << 31;

/// A start or finish of a node held back until we know where the node
/// starts.
#[derive(Clone, Copy)]
enum Deferred {
    Start,
    Finish(SyntaxKind),
}

/// An open node: where its children start in [`Builder::children`] and
/// [`Builder::own`].
#[derive(Clone, Copy)]
struct Open {
    first_child: usize,
    first_own: usize,
}

/// Where a completed node starts, so that a parent can be opened around it;
/// `None` for a node that was empty when completed.
#[derive(Clone, Copy)]
pub(crate) struct Placed(Option<Open>);

pub(crate) struct Builder {
    /// Per token, its id (the index of its element in
    /// [`Interner::elements`], or [`OWN`]), with [`TRIVIA`] set for trivia.
    ids: Vec<u32>,
    token_pos: usize,
    /// The tokens whose id is [`OWN`], in order.
    long_tokens: std::vec::IntoIter<GreenToken>,
    /// Children of all open nodes, innermost last: ids.
    children: Vec<u32>,
    /// The [`OWN`] children of all open nodes, in the same order: the
    /// children of the node that closes are always the last ones.
    own: Vec<GreenElement>,
    open_nodes: Vec<Open>,
    /// Starts (and the finishes of nodes started here) not yet applied: the
    /// node starts at the next token, or is empty.
    deferred: Vec<Deferred>,
    /// How many starts in `deferred` have no finish there yet.
    deferred_unclosed: usize,
    interner: Interner,
}

impl Builder {
    /// Starts a node; it opens at its first token.
    #[inline]
    pub(crate) fn start_node(&mut self) {
        if self.open_nodes.is_empty() && self.deferred.is_empty() {
            // The root starts at offset 0 and takes the leading trivia.
            self.open();
            return;
        }
        self.deferred.push(Deferred::Start);
        self.deferred_unclosed += 1;
    }

    /// Finishes the innermost started node as a `kind` node.
    #[inline]
    pub(crate) fn finish_node(&mut self, kind: SyntaxKind) -> Placed {
        if self.deferred_unclosed > 0 {
            // An empty node (so far): it ends where it starts.
            self.deferred.push(Deferred::Finish(kind));
            self.deferred_unclosed -= 1;
            return Placed(None);
        }
        // Empty nodes at the end of this one go before the trivia.
        self.apply_deferred();
        if self.open_nodes.len() == 1 {
            // Trailing trivia (and anything left, which cannot happen for a
            // well-formed parse) belongs to the root.
            while self.token_pos < self.ids.len() {
                self.do_token();
            }
        }
        Placed(self.close(kind))
    }

    /// Drops the innermost started node: its children go to its parent.
    pub(crate) fn abandon_node(&mut self) {
        if self.deferred_unclosed == 0 {
            self.open_nodes.pop();
            return;
        }
        // Its start is the last one in `deferred` without a finish there;
        // what follows it are the empty nodes completed inside it.
        let mut finishes = 0usize;
        for i in (0..self.deferred.len()).rev() {
            match self.deferred[i] {
                Deferred::Finish(_) => finishes += 1,
                Deferred::Start if finishes > 0 => finishes -= 1,
                Deferred::Start => {
                    self.deferred.remove(i);
                    self.deferred_unclosed -= 1;
                    return;
                }
            }
        }
    }

    /// Starts a node around the completed node `child` (and whatever was
    /// added after it), as its parent.
    pub(crate) fn start_node_before(&mut self, child: Placed) {
        match child.0 {
            Some(open) if open.first_child <= self.children.len() => self.open_nodes.push(open),
            // A node that was empty when completed: the grammar never wraps
            // one (every wrapped node has a token), and it would have to
            // start among the deferred starts and finishes.
            _ => {
                debug_assert!(false, "wrapping an empty node");
                self.start_node();
            }
        }
    }

    /// Starts a node, consumes the next non-trivia token (and the trivia
    /// before it) and finishes the node as a `kind` node: the three steps
    /// in one, without deferring the start or pushing an open node.
    pub(crate) fn token_node(&mut self, kind: SyntaxKind) -> Placed {
        if self.open_nodes.is_empty() && self.deferred.is_empty() {
            // The root: the general way.
            self.start_node();
            self.token();
            return self.finish_node(kind);
        }
        self.eat_trivia();
        // The starts deferred before this one open first; this node opens
        // last, here, with the token as its only child.
        self.apply_deferred();
        let open = Open {
            first_child: self.children.len(),
            first_own: self.own.len(),
        };
        self.do_token();
        if self.open_nodes.is_empty() {
            // It is the root after all (every other node was closed): the
            // trailing trivia is its too.
            while self.token_pos < self.ids.len() {
                self.do_token();
            }
        }
        let id = self.interner.node(
            kind,
            &mut self.children,
            open.first_child,
            &mut self.own,
            open.first_own,
        );
        self.children.push(id);
        Placed(Some(open))
    }

    /// Consumes the next non-trivia token, and the trivia before it.
    #[inline]
    pub(crate) fn token(&mut self) {
        self.eat_trivia();
        self.apply_deferred();
        self.do_token();
    }

    /// Consumes the trivia before the next non-trivia token, into the
    /// enclosing node.
    #[inline]
    fn eat_trivia(&mut self) {
        while let Some(&id) = self.ids.get(self.token_pos) {
            if id & TRIVIA == 0 {
                break;
            }
            self.do_token();
        }
    }

    #[inline]
    fn apply_deferred(&mut self) {
        if !self.deferred.is_empty() {
            self.apply_deferred_now();
        }
    }

    fn apply_deferred_now(&mut self) {
        for i in 0..self.deferred.len() {
            match self.deferred[i] {
                Deferred::Start => self.open(),
                Deferred::Finish(kind) => {
                    self.close(kind);
                }
            }
        }
        self.deferred.clear();
        self.deferred_unclosed = 0;
    }

    #[inline]
    fn open(&mut self) {
        self.open_nodes.push(Open {
            first_child: self.children.len(),
            first_own: self.own.len(),
        });
    }

    /// Closes the innermost open node as a `kind` node; where it started.
    fn close(&mut self, kind: SyntaxKind) -> Option<Open> {
        let open = self.open_nodes.pop()?;
        let id = self.interner.node(
            kind,
            &mut self.children,
            open.first_child,
            &mut self.own,
            open.first_own,
        );
        self.children.push(id);
        Some(open)
    }

    #[inline]
    fn do_token(&mut self) {
        let Some(&id) = self.ids.get(self.token_pos) else {
            return;
        };
        self.token_pos += 1;
        let id = id & !TRIVIA;
        if id == OWN {
            self.own_token();
        }
        self.children.push(id);
    }

    fn own_token(&mut self) {
        // One long token per `OWN` id: the fallback cannot happen.
        let token = match self.long_tokens.next() {
            Some(token) => NodeOrToken::Token(token),
            None => missing(),
        };
        self.own.push(token);
    }

    /// The tree: the root node, with every token.
    pub(crate) fn finish(mut self) -> GreenNode {
        self.apply_deferred();
        // Nodes left open (cannot happen for a finished parse) and the root.
        while self.open_nodes.len() > 1 {
            self.close(SyntaxKind::ERROR);
        }
        if !self.open_nodes.is_empty() {
            while self.token_pos < self.ids.len() {
                self.do_token();
            }
            self.close(SyntaxKind::ERROR);
        }
        let mut own = self.own.drain(..);
        let mut children: Vec<GreenElement> = self
            .children
            .iter()
            .map(|&id| take(&self.interner.elements, id, &mut own))
            .collect();
        match children.pop() {
            Some(NodeOrToken::Node(root)) if children.is_empty() => root,
            // Cannot happen for a finished parse, which opens one root; keep
            // every token all the same.
            other => {
                children.extend(other);
                GreenNode::new(SyntaxKind::ERROR.into(), children)
            }
        }
    }
}

/// The elements built once and shared by every place they occur in, and the
/// tables that find them again.
///
/// Tokens: those of a kind with a fixed text (punctuation, keywords) are found
/// by kind alone; runs of spaces (after a newline or not) by their length;
/// the others by kind and text, through an open-addressing hash table whose
/// slots hold the first eight bytes of the text, so that the common short
/// token is hashed and compared with a few word operations. Long tokens
/// (comments, strings, metadata) are rarely repeated: they are built for
/// their place alone. The names of variables are found by text too (a
/// binding and its uses share one token) but handed to each place as its
/// own, so the nodes holding them are built for their place.
///
/// Nodes: a node is looked up by its kind and the ids of its children, when
/// every child is shared and it has a few children only. A node with a child
/// built for one place cannot equal an earlier node, so it is built for its
/// place too, without hashing. The tables never evict: every element in them
/// is in the tree anyway.
struct Interner {
    elements: Vec<GreenElement>,
    /// Per token kind: the id of its token, or [`UNSEEN`] for a kind with a
    /// fixed text not met yet, or [`BY_TEXT`] for the other kinds.
    by_kind: [u32; TOKEN_KINDS],
    /// The ids of the white space made of `n` spaces (`spaces[n]`) and of a
    /// newline and `n - 1` spaces (`spaces[8 + n]`), or [`UNSEEN`].
    spaces: [u32; 17],
    token_slots: Vec<TokenSlot>,
    token_count: usize,
    node_slots: Vec<NodeSlot>,
    node_count: usize,
    /// The children of the nodes in `node_slots`, as ids.
    node_keys: Vec<u32>,
    /// The children of the node being built.
    scratch: Vec<GreenElement>,
}

/// Markers of [`Interner::by_kind`]. Ids of elements stay below them.
const UNSEEN: u32 = OWN - 1;
const BY_TEXT: u32 = OWN - 2;

/// Kinds below this are the tokens a tree can hold.
const TOKEN_KINDS: usize = SyntaxKind::EOF as usize;
/// Tokens longer than this are built for their place alone.
const MAX_SHARED_TEXT: usize = 64;
/// Nodes with more children are rarely repeated; they are always built.
const MAX_SHARED_CHILDREN: usize = 16;
/// Initial sizes of the hash tables (powers of two). They double when half
/// full, so that probe runs stay short.
const TOKEN_SLOTS: usize = 1024;
const NODE_SLOTS: usize = 1024;

/// A slot of the token table: `element` is `1 +` the id, or 0 for an empty
/// slot; `word` the first eight bytes of the text (zero padded); `meta` the
/// kind and the length (see [`token_meta`]).
#[derive(Clone, Copy, Default)]
struct TokenSlot {
    word: u64,
    meta: u32,
    element: u32,
}

/// A slot of the node table: `hash` the high half of the node's hash,
/// `meta` the kind and the number of children, `keys` where the children
/// start in `node_keys`, `element` as in [`TokenSlot`].
#[derive(Clone, Copy, Default)]
struct NodeSlot {
    hash: u32,
    meta: u32,
    keys: u32,
    element: u32,
}

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// Eight spaces; a newline and seven spaces (little endian).
const SPACES: u64 = 0x2020_2020_2020_2020;
const NEWLINE_SPACES: u64 = 0x2020_2020_2020_200A;

/// `MASKS[n]` keeps the first `n` bytes of a little-endian word.
const MASKS: [u64; 9] = {
    let mut masks = [u64::MAX; 9];
    let mut n = 0;
    while n < 8 {
        masks[n] = (1u64 << (8 * n)) - 1;
        n += 1;
    }
    masks
};

/// The kind and length of a shareable token, packed (kinds are below 128,
/// lengths at most [`MAX_SHARED_TEXT`]).
#[inline]
fn token_meta(kind: SyntaxKind, len: usize) -> u32 {
    u32::from(kind as u16) | (len as u32) << 16
}

/// The first (up to) eight bytes of `bytes`, little endian, zero padded.
fn first_word(bytes: &[u8]) -> u64 {
    match bytes.get(..8) {
        Some(&[a, b, c, d, e, f, g, h]) => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => {
            let mut word = [0u8; 8];
            for (to, from) in word.iter_mut().zip(bytes) {
                *to = *from;
            }
            u64::from_le_bytes(word)
        }
    }
}

/// The hash of a token (its kind and text), given the first word of its text.
#[inline]
fn token_hash(meta: u32, word: u64, bytes: &[u8]) -> u64 {
    let mut hash = (word ^ u64::from(meta).wrapping_mul(MUL)).wrapping_mul(MUL);
    if bytes.len() > 8 {
        for chunk in bytes.get(8..).unwrap_or_default().chunks(8) {
            hash = (hash.rotate_left(29) ^ first_word(chunk)).wrapping_mul(MUL);
        }
    }
    hash
}

/// Whether every token of `kind` has the same text.
#[inline]
fn has_fixed_text(kind: SyntaxKind) -> bool {
    kind.is_keyword() || (kind >= SyntaxKind::UNDERSCORE && kind < SyntaxKind::ERROR_TOKEN)
}

/// Whether tokens of `kind` name a variable (`%x`, `%0`). Each is bound once
/// and used once or twice: the nodes that hold them are never repeated, so
/// they are not looked up, but the token itself is one for the binding and
/// every use (see [`Interner::name_token`]).
#[inline]
fn is_name(kind: SyntaxKind) -> bool {
    matches!(kind, SyntaxKind::LOCAL | SyntaxKind::GRAPH)
}

/// The element `id` stands for, owned: a clone of a shared one (in
/// `elements`), or the next of `own`.
#[inline]
fn take(
    elements: &[GreenElement],
    id: u32,
    own: &mut impl Iterator<Item = GreenElement>,
) -> GreenElement {
    let element = if id == OWN {
        own.next()
    } else {
        elements.get(id as usize).cloned()
    };
    // Ids and own elements come from `Builder`: the fallback cannot happen.
    element.unwrap_or_else(missing)
}

/// A stand-in for an element that cannot be missing, out of line so that the
/// loop that builds a node stays small.
#[cold]
#[inline(never)]
fn missing() -> GreenElement {
    NodeOrToken::Token(GreenToken::new(SyntaxKind::ERROR_TOKEN.into(), ""))
}

impl Interner {
    fn new() -> Interner {
        let mut by_kind = [BY_TEXT; TOKEN_KINDS];
        for (raw, slot) in by_kind.iter_mut().enumerate() {
            let kind = <crate::RelayLanguage as rowan::Language>::kind_from_raw(rowan::SyntaxKind(
                raw as u16,
            ));
            if has_fixed_text(kind) {
                *slot = UNSEEN;
            }
        }
        Interner {
            elements: Vec::new(),
            by_kind,
            spaces: [UNSEEN; 17],
            token_slots: vec![TokenSlot::default(); TOKEN_SLOTS],
            token_count: 0,
            node_slots: vec![NodeSlot::default(); NODE_SLOTS],
            node_count: 0,
            node_keys: Vec::new(),
            scratch: Vec::with_capacity(64),
        }
    }

    /// Adds an element to share and returns its id, or gives the element
    /// back when there are too many to number (a text of gigabytes).
    fn push(&mut self, element: GreenElement) -> Result<u32, GreenElement> {
        match u32::try_from(self.elements.len()) {
            Ok(id) if id < BY_TEXT => {
                self.elements.push(element);
                Ok(id)
            }
            _ => Err(element),
        }
    }

    /// The id of the token of `kind` at `text[start..start + len]`; a token
    /// built for its place alone goes on `long_tokens`.
    ///
    /// Inlined into each place the lexer makes a token, where the kind is
    /// mostly known: the lookup by kind, or by the first word of the text,
    /// is then a few instructions and a branch that always goes the same way.
    #[inline(always)]
    fn token(
        &mut self,
        text: &str,
        kind: SyntaxKind,
        start: usize,
        len: usize,
        long_tokens: &mut Vec<GreenToken>,
    ) -> u32 {
        if has_fixed_text(kind) {
            if let Some(&id) = self.by_kind.get(kind as usize) {
                if id < BY_TEXT {
                    return id;
                }
            }
        } else if is_name(kind) {
            return self.name_token(text, kind, start, len, long_tokens);
        } else if len <= 8 {
            if let Some(&[a, b, c, d, e, f, g, h]) = text.as_bytes().get(start..start + 8) {
                let word = u64::from_le_bytes([a, b, c, d, e, f, g, h]) & MASKS[len];
                if kind == SyntaxKind::WHITESPACE {
                    // Indentation and the space after a comma: found by
                    // their length, without hashing.
                    let index = if word == SPACES & MASKS[len] {
                        len
                    } else if word == NEWLINE_SPACES & MASKS[len] {
                        8 + len
                    } else {
                        0
                    };
                    if let Some(&id) = self.spaces.get(index).filter(|_| index > 0) {
                        if id < BY_TEXT {
                            return id;
                        }
                        let id = self.new_token(text, kind, start, start + len, long_tokens);
                        self.spaces[index] = id;
                        return id;
                    }
                }
                let meta = token_meta(kind, len);
                let hash = (word ^ u64::from(meta).wrapping_mul(MUL)).wrapping_mul(MUL);
                let id = self.find_token(hash, word, meta);
                if id != OWN {
                    return id;
                }
            }
        }
        self.new_token(text, kind, start, start + len, long_tokens)
    }

    /// [`OWN`], with the token of the name of `kind` at
    /// `text[start..start + len]` on `long_tokens`: the one token of that
    /// name (a variable's binding and its uses hold one token, one
    /// allocation), handed to each place as its own, so that the nodes
    /// holding it, which are never repeated, are not looked up.
    #[inline(never)]
    fn name_token(
        &mut self,
        text: &str,
        kind: SyntaxKind,
        start: usize,
        len: usize,
        long_tokens: &mut Vec<GreenToken>,
    ) -> u32 {
        let id = self.new_token(text, kind, start, start + len, long_tokens);
        if id != OWN {
            // Shared: `new_token` put a long or unnumbered one on
            // `long_tokens` itself.
            let token = match self.elements.get(id as usize) {
                Some(NodeOrToken::Token(token)) => token.clone(),
                // Not reached: `new_token` hands out only ids it stored a
                // token under (ids are plain indices into `elements`, which
                // holds nodes too, so the type cannot say so). Kept rather
                // than a panic: it is the same token, only not shared, so
                // even a broken invariant leaves the tree's text and kinds
                // right.
                _ => GreenToken::new(
                    kind.into(),
                    text.get(start..start + len).unwrap_or_default(),
                ),
            };
            long_tokens.push(token);
        }
        OWN
    }

    /// The id of the whitespace token of `len` spaces, the first of which is
    /// a newline if `newline`, at `text[start..start + len]`.
    #[inline(always)]
    fn spaces(
        &mut self,
        text: &str,
        start: usize,
        len: usize,
        newline: bool,
        long_tokens: &mut Vec<GreenToken>,
    ) -> u32 {
        let index = if newline { 8 + len } else { len };
        match self.spaces.get(index) {
            Some(&id) if len <= 8 && id < BY_TEXT => id,
            Some(_) if len <= 8 => {
                let end = start + len;
                let id = self.new_token(text, SyntaxKind::WHITESPACE, start, end, long_tokens);
                self.spaces[index] = id;
                id
            }
            _ => self.token(text, SyntaxKind::WHITESPACE, start, len, long_tokens),
        }
    }

    /// The id of a short token (at most eight bytes) in the table, or [`OWN`].
    #[inline(always)]
    fn find_token(&self, hash: u64, word: u64, meta: u32) -> u32 {
        let mask = self.token_slots.len() - 1;
        let mut pos = (hash >> 32) as usize & mask;
        while let Some(slot) = self.token_slots.get(pos) {
            if slot.word == word && slot.meta == meta && slot.element != 0 {
                return slot.element - 1;
            }
            if slot.element == 0 {
                break;
            }
            pos = (pos + 1) & mask;
        }
        OWN
    }

    /// The id of the token of `kind` at `text[start..end]`, in general: for
    /// a token not seen yet, a long one, or one at the very end of the text.
    #[inline(never)]
    fn new_token(
        &mut self,
        text: &str,
        kind: SyntaxKind,
        start: usize,
        end: usize,
        long_tokens: &mut Vec<GreenToken>,
    ) -> u32 {
        let token_text = text.get(start..end).unwrap_or_default();
        let new_token = || GreenToken::new(kind.into(), token_text);
        let mut own = |token: GreenToken| {
            long_tokens.push(token);
            OWN
        };
        let by_kind = self.by_kind.get(kind as usize).copied().unwrap_or(BY_TEXT);
        if by_kind < BY_TEXT {
            return by_kind;
        }
        if by_kind == UNSEEN {
            return match self.push(NodeOrToken::Token(new_token())) {
                Ok(id) => {
                    self.by_kind[kind as usize] = id;
                    id
                }
                Err(NodeOrToken::Token(token)) => own(token),
                Err(NodeOrToken::Node(_)) => own(new_token()),
            };
        }
        let bytes = token_text.as_bytes();
        if bytes.len() > MAX_SHARED_TEXT {
            return own(new_token());
        }
        let word = first_word(bytes);
        let meta = token_meta(kind, bytes.len());
        let hash = token_hash(meta, word, bytes);
        let mask = self.token_slots.len() - 1;
        let mut pos = (hash >> 32) as usize & mask;
        while let Some(slot) = self.token_slots.get(pos) {
            if slot.element == 0 {
                break;
            }
            if slot.word == word && slot.meta == meta && self.token_text(slot.element) == token_text
            {
                return slot.element - 1;
            }
            pos = (pos + 1) & mask;
        }
        let id = match self.push(NodeOrToken::Token(new_token())) {
            Ok(id) => id,
            Err(_) => return own(new_token()),
        };
        if let Some(slot) = self.token_slots.get_mut(pos) {
            *slot = TokenSlot {
                word,
                meta,
                element: id + 1,
            };
            self.token_count += 1;
            if self.token_count * 2 > self.token_slots.len() {
                self.grow_tokens();
            }
        }
        id
    }

    /// The text of the token in a slot (`element` is `1 +` its id).
    fn token_text(&self, element: u32) -> &str {
        match self.elements.get(element as usize - 1) {
            Some(NodeOrToken::Token(token)) => token.text(),
            _ => "",
        }
    }

    fn grow_tokens(&mut self) {
        let size = self.token_slots.len() * 2;
        let old = std::mem::replace(&mut self.token_slots, vec![TokenSlot::default(); size]);
        let mask = size - 1;
        for slot in old.into_iter().filter(|slot| slot.element != 0) {
            let bytes = self.token_text(slot.element).as_bytes();
            let mut pos = (token_hash(slot.meta, slot.word, bytes) >> 32) as usize & mask;
            while self.token_slots[pos].element != 0 {
                pos = (pos + 1) & mask;
            }
            self.token_slots[pos] = slot;
        }
    }

    /// The id of the node of `kind` whose children are
    /// `children[first_child..]` (and `own[first_own..]` for those built for
    /// their place), which it takes. A node built for its place goes on
    /// `own`.
    fn node(
        &mut self,
        kind: SyntaxKind,
        children: &mut Vec<u32>,
        first_child: usize,
        own: &mut Vec<GreenElement>,
        first_own: usize,
    ) -> u32 {
        let new_children = children.get(first_child..).unwrap_or_default();
        if new_children.len() > MAX_SHARED_CHILDREN || own.len() > first_own {
            let node = self.build(kind, children, first_child, own, first_own);
            own.push(NodeOrToken::Node(node));
            return OWN;
        }
        let meta = u32::from(kind as u16) | (new_children.len() as u32) << 16;
        let mut hash = u64::from(meta).wrapping_mul(MUL);
        for &id in new_children {
            hash = (hash.rotate_left(29) ^ u64::from(id)).wrapping_mul(MUL);
        }
        let hash = (hash >> 32) as u32;
        let mask = self.node_slots.len() - 1;
        let mut pos = hash as usize & mask;
        while let Some(slot) = self.node_slots.get(pos) {
            if slot.element == 0 {
                break;
            }
            if slot.hash == hash && slot.meta == meta && self.same_keys(slot.keys, new_children) {
                let id = slot.element - 1;
                children.truncate(first_child);
                return id;
            }
            pos = (pos + 1) & mask;
        }
        let keys = self.node_keys.len() as u32;
        self.node_keys.extend_from_slice(new_children);
        let node = self.build(kind, children, first_child, own, first_own);
        let id = match self.push(NodeOrToken::Node(node)) {
            Ok(id) => id,
            Err(node) => {
                own.push(node);
                return OWN;
            }
        };
        if let Some(slot) = self.node_slots.get_mut(pos) {
            *slot = NodeSlot {
                hash,
                meta,
                keys,
                element: id + 1,
            };
            self.node_count += 1;
            if self.node_count * 2 > self.node_slots.len() {
                self.grow_nodes();
            }
        }
        id
    }

    /// Whether the children recorded at `keys` are `children` (as many).
    #[inline]
    fn same_keys(&self, keys: u32, children: &[u32]) -> bool {
        let keys = self.node_keys.get(keys as usize..).unwrap_or_default();
        keys.len() >= children.len() && keys.iter().zip(children).all(|(a, b)| a == b)
    }

    fn grow_nodes(&mut self) {
        let size = self.node_slots.len() * 2;
        let old = std::mem::replace(&mut self.node_slots, vec![NodeSlot::default(); size]);
        let mask = size - 1;
        for slot in old.into_iter().filter(|slot| slot.element != 0) {
            let mut pos = slot.hash as usize & mask;
            while self.node_slots[pos].element != 0 {
                pos = (pos + 1) & mask;
            }
            self.node_slots[pos] = slot;
        }
    }

    /// Builds a node from `children[first_child..]` and `own[first_own..]`,
    /// which it takes.
    fn build(
        &mut self,
        kind: SyntaxKind,
        children: &mut Vec<u32>,
        first_child: usize,
        own: &mut Vec<GreenElement>,
        first_own: usize,
    ) -> GreenNode {
        // The children are gathered first, so that the iterator rowan
        // consumes is a plain drain: its loop then stays tight.
        let mut own_children = own.drain(first_own.min(own.len())..);
        let elements = &self.elements;
        self.scratch.extend(
            children
                .get(first_child..)
                .unwrap_or_default()
                .iter()
                .map(|&id| take(elements, id, &mut own_children)),
        );
        drop(own_children);
        children.truncate(first_child);
        GreenNode::new(kind.into(), self.scratch.drain(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::tokenize;

    /// The interner returns the token it has for a kind without looking at
    /// the text, so every such kind must have exactly one spelling: the one
    /// in its description, which must lex back to that kind.
    #[test]
    fn fixed_text_kinds_have_one_spelling() {
        for raw in 0..TOKEN_KINDS as u16 {
            let kind =
                <crate::RelayLanguage as rowan::Language>::kind_from_raw(rowan::SyntaxKind(raw));
            if !has_fixed_text(kind) {
                continue;
            }
            let spelling = kind
                .describe()
                .strip_prefix('`')
                .and_then(|s| s.strip_suffix('`'))
                .unwrap_or_else(|| panic!("{kind:?} has no fixed spelling"));
            let (tokens, errors) = tokenize(spelling);
            assert!(errors.is_empty(), "{kind:?}");
            assert_eq!(tokens.len(), 1, "{kind:?} `{spelling}`");
            assert_eq!(tokens[0].kind, kind, "`{spelling}`");
        }
    }

    #[test]
    fn shared_tokens_and_nodes_keep_their_text() {
        let text = "#[version = \"0.0.5\"]\ndef @f(%x: Tensor[(1, 2), float32], %y: Tensor[(1, 2), float32]) { add(%x, %y) }\n";
        let parse = crate::parse_module(text);
        assert!(parse.errors().is_empty());
        assert_eq!(parse.syntax_node().to_string(), text);
    }

    /// A variable's binding and its uses hold one token; another name, or
    /// the same text of another kind, is another token. The nodes holding
    /// them are still one per place.
    #[test]
    fn a_name_is_one_token_for_every_place() {
        let long = "a_name_longer_than_eight_bytes";
        let text = format!(
            "#[version = \"0.0.5\"]\ndef @f(%{long}: float32, %y: float32) {{\n  %0 = add(%{long}, %y);\n  multiply(%0, %{long})\n}}\n"
        );
        let parse = crate::parse_module(&text);
        assert!(parse.errors().is_empty());
        assert_eq!(parse.syntax_node().to_string(), text);
        let tokens: Vec<crate::SyntaxToken> = parse
            .syntax_node()
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| matches!(t.kind(), SyntaxKind::LOCAL | SyntaxKind::GRAPH))
            .collect();
        let green = |text: &str| -> Vec<*const rowan::GreenTokenData> {
            tokens
                .iter()
                .filter(|t| t.text() == text)
                .map(|t| t.green() as *const _)
                .collect()
        };
        let long_name = green(&format!("%{long}"));
        assert_eq!(long_name.len(), 3);
        assert!(long_name.iter().all(|&p| p == long_name[0]));
        let zero = green("%0");
        assert_eq!(zero.len(), 2);
        assert_eq!(zero[0], zero[1]);
        let y = green("%y");
        assert_eq!(y.len(), 2);
        assert_eq!(y[0], y[1]);
        assert_ne!(y[0], long_name[0]);
        assert_ne!(y[0], zero[0]);
        // The uses' nodes are one per place.
        let uses: Vec<_> = parse
            .syntax_node()
            .descendants()
            .filter(|n| {
                n.kind() == SyntaxKind::LOCAL_EXPR && n.text() == format!("%{long}").as_str()
            })
            .map(|n| n.green() as *const rowan::GreenNodeData)
            .collect();
        assert_eq!(uses.len(), 2);
        assert_ne!(uses[0], uses[1]);
    }

    /// Many distinct names and numbers, short and long, and repeated ones:
    /// the tables grow several times, and long texts (compared in full)
    /// share their first eight bytes.
    #[test]
    fn tables_grow_and_keep_every_text() {
        let mut text = String::from("#[version = \"0.0.5\"]\ndef @main() {\n");
        for i in 0..5000 {
            // White space of every shape, comments long and short, names and
            // numbers new and repeated.
            let space = ["  ", "\t", "\r\n  ", "\n\n    ", " /* c */ ", "         "][i % 6];
            text.push_str(&format!(
                "  %{i} ={space}some_long_operator_name_{i}(%{j}, {i}i64, attribute_{k}=[{i}, {k}]);\n",
                j = i / 2,
                k = i % 7,
            ));
            if i % 100 == 0 {
                text.push_str(&format!("  // {}\n", "a long comment ".repeat(i % 9)));
            }
        }
        text.push_str("  %0\n}\n");
        let parse = crate::parse_module(&text);
        assert!(parse.errors().is_empty(), "{:?}", &parse.errors()[..1]);
        assert_eq!(parse.syntax_node().to_string(), text);
        let tokens: Vec<String> = parse
            .syntax_node()
            .descendants_with_tokens()
            .filter_map(|element| element.into_token())
            .map(|token| format!("{:?} {}", token.kind(), token.text()))
            .collect();
        let (expected, _) = tokenize(&text);
        let mut offset = 0;
        let expected: Vec<String> = expected
            .iter()
            .map(|token| {
                let end = offset + usize::from(token.len);
                let item = format!("{:?} {}", token.kind, &text[offset..end]);
                offset = end;
                item
            })
            .collect();
        assert_eq!(tokens, expected);
    }
}
