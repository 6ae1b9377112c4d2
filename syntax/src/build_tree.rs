//! Turns parser events and the lexer's tokens into a rowan green tree.
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
//!
//! The tree is built directly with [`GreenNode::new`] rather than through
//! rowan's `GreenNodeBuilder`, whose general-purpose cache (a hash map per
//! parse, hashing every token's text) cost more than the rest of the build.
//! Sharing is kept, more cheaply: tokens with the same kind and text, and
//! small nodes with the same kind and children, are built once per parse
//! through direct-mapped tables (see [`TokenInterner`], [`NodeInterner`]).
//! Sharing matters because each green element is its own allocation; real
//! models repeat the same punctuation, names and types on every line.

use crate::lexer::Token;
use crate::parser::Event;
use crate::SyntaxKind;
use rowan::{GreenNode, GreenToken, NodeOrToken};

type GreenElement = NodeOrToken<GreenNode, GreenToken>;

pub(crate) fn build(text: &str, tokens: &[Token], mut events: Vec<Event>) -> GreenNode {
    let mut builder = Builder {
        text,
        tokens,
        token_pos: 0,
        text_pos: 0,
        children: Vec::with_capacity(64),
        open_nodes: Vec::with_capacity(64),
        deferred: Vec::new(),
        deferred_unclosed: 0,
        interner: TokenInterner::new(),
        node_interner: NodeInterner::new(),
    };
    let mut chain = Vec::new();
    for i in 0..events.len() {
        match events[i] {
            Event::Start {
                kind,
                forward_parent,
            } => {
                // Open the chain of nodes that `precede` asked to wrap this
                // one, outermost first; mark the parents as done so that they
                // are not opened again when the loop reaches them.
                chain.push(kind);
                let mut idx = i;
                let mut next = forward_parent;
                while let Some(distance) = next {
                    idx += distance as usize;
                    next = match events.get(idx) {
                        Some(&Event::Start {
                            kind,
                            forward_parent,
                        }) => {
                            chain.push(kind);
                            forward_parent
                        }
                        // Cannot happen for events from the parser.
                        _ => None,
                    };
                    if let Some(event) = events.get_mut(idx) {
                        *event = Event::Tombstone;
                    }
                }
                for kind in chain.drain(..).rev() {
                    builder.start_node(kind);
                }
            }
            Event::Finish => builder.finish_node(),
            Event::Token => builder.token(),
            Event::Tombstone => {}
        }
    }
    builder.finish()
}

/// A node event held back until we know where the node starts.
#[derive(Clone, Copy)]
enum Deferred {
    Start(SyntaxKind),
    Finish,
}

struct Builder<'a> {
    text: &'a str,
    tokens: &'a [Token],
    token_pos: usize,
    text_pos: usize,
    /// Children of all open nodes, innermost last.
    children: Vec<GreenElement>,
    /// Open nodes: kind and where their children start in `children`.
    open_nodes: Vec<(SyntaxKind, usize)>,
    /// Starts (and the finishes of nodes started here) not yet applied: the
    /// node starts at the next token, or is empty.
    deferred: Vec<Deferred>,
    /// How many starts in `deferred` have no finish there yet.
    deferred_unclosed: usize,
    interner: TokenInterner,
    node_interner: NodeInterner,
}

impl Builder<'_> {
    fn start_node(&mut self, kind: SyntaxKind) {
        if self.open_nodes.is_empty() && self.deferred.is_empty() {
            // The root starts at offset 0 and takes the leading trivia.
            self.open(kind);
            return;
        }
        self.deferred.push(Deferred::Start(kind));
        self.deferred_unclosed += 1;
    }

    fn finish_node(&mut self) {
        if self.deferred_unclosed > 0 {
            // An empty node (so far): it ends where it starts.
            self.deferred.push(Deferred::Finish);
            self.deferred_unclosed -= 1;
            return;
        }
        // Empty nodes at the end of this one go before the trivia.
        self.apply_deferred();
        if self.open_nodes.len() == 1 {
            // Trailing trivia (and anything left, which cannot happen for a
            // well-formed event list) belongs to the root.
            while self.token_pos < self.tokens.len() {
                self.do_token();
            }
        }
        self.close();
    }

    fn token(&mut self) {
        self.eat_trivia();
        self.apply_deferred();
        self.do_token();
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
                Deferred::Start(kind) => self.open(kind),
                Deferred::Finish => self.close(),
            }
        }
        self.deferred.clear();
        self.deferred_unclosed = 0;
    }

    fn open(&mut self, kind: SyntaxKind) {
        self.open_nodes.push((kind, self.children.len()));
    }

    fn close(&mut self) {
        let Some((kind, first_child)) = self.open_nodes.pop() else {
            return;
        };
        let node = self
            .node_interner
            .node(kind, &mut self.children, first_child);
        self.children.push(NodeOrToken::Node(node));
    }

    fn eat_trivia(&mut self) {
        while let Some(token) = self.tokens.get(self.token_pos) {
            if !token.kind.is_trivia() {
                break;
            }
            self.do_token();
        }
    }

    fn do_token(&mut self) {
        let Some(&token) = self.tokens.get(self.token_pos) else {
            return;
        };
        let end = self.text_pos + usize::from(token.len);
        let text = self.text.get(self.text_pos..end).unwrap_or_default();
        let green = self.interner.intern(token.kind, text);
        self.children.push(NodeOrToken::Token(green));
        self.token_pos += 1;
        self.text_pos = end;
    }

    fn finish(mut self) -> GreenNode {
        self.apply_deferred();
        while self.open_nodes.len() > 1 {
            self.close();
        }
        if self.open_nodes.len() == 1 {
            while self.token_pos < self.tokens.len() {
                self.do_token();
            }
            self.close();
        }
        match self.children.pop() {
            Some(NodeOrToken::Node(root)) if self.children.is_empty() => root,
            // Cannot happen for events from the parser, which always open
            // one root; keep every token all the same.
            other => {
                let mut children: Vec<GreenElement> = self.children;
                children.extend(other);
                GreenNode::new(SyntaxKind::ERROR.into(), children)
            }
        }
    }
}

/// Shares green tokens that have the same kind and text.
///
/// Two direct-mapped tables: one slot per kind for the last token of that
/// kind (punctuation and keywords always hit it), and a table indexed by a
/// hash of kind and text for names, numbers and white space. A hit costs one
/// comparison of short strings; a miss allocates a new token and takes over
/// the slot.
struct TokenInterner {
    by_kind: Vec<Option<GreenToken>>,
    by_text: Vec<Option<GreenToken>>,
}

/// Kinds below this are the tokens a tree can hold.
const TOKEN_KINDS: usize = SyntaxKind::EOF as usize;
/// Slots of the table of names and numbers (a power of two).
const TEXT_SLOTS: usize = 2048;

impl TokenInterner {
    fn new() -> TokenInterner {
        TokenInterner {
            by_kind: vec![None; TOKEN_KINDS],
            by_text: vec![None; TEXT_SLOTS],
        }
    }

    fn intern(&mut self, kind: SyntaxKind, text: &str) -> GreenToken {
        let kind_index = kind as usize;
        let slot = if has_fixed_text(kind) {
            match self.by_kind.get_mut(kind_index) {
                // The text is implied by the kind.
                Some(Some(token)) => {
                    debug_assert_eq!(token.text(), text);
                    return token.clone();
                }
                Some(slot) => slot,
                None => return GreenToken::new(kind.into(), text),
            }
        } else {
            let index = text_hash(kind_index, text) & (TEXT_SLOTS - 1);
            match self.by_text.get_mut(index) {
                Some(Some(token))
                    if token.kind() == kind.into() && same_text(token.text(), text) =>
                {
                    return token.clone()
                }
                Some(slot) => slot,
                None => return GreenToken::new(kind.into(), text),
            }
        };
        let token = GreenToken::new(kind.into(), text);
        *slot = Some(token.clone());
        token
    }
}

/// String equality without a call to `memcmp`, for the short texts of tokens.
fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

/// Whether every token of `kind` has the same text.
fn has_fixed_text(kind: SyntaxKind) -> bool {
    kind.is_keyword() || (kind >= SyntaxKind::UNDERSCORE && kind < SyntaxKind::ERROR_TOKEN)
}

/// A cheap hash of a token's text (FxHash-style over its bytes: tokens are
/// short).
fn text_hash(kind_index: usize, text: &str) -> usize {
    let mut hash = kind_index as u64;
    for &byte in text.as_bytes() {
        hash = (hash.rotate_left(5) ^ u64::from(byte)).wrapping_mul(0x51_7C_C1_B7_27_22_0A_95);
    }
    (hash >> 40) as usize
}

/// Shares small green nodes that have the same kind and the same children
/// (by identity: children are shared already), as rowan's own cache does, so
/// that the types and attributes a model repeats on every line are built
/// once. A direct-mapped table again: a miss just builds the node.
struct NodeInterner {
    slots: Vec<Option<GreenNode>>,
}

/// Table size (a power of two).
const NODE_SLOTS: usize = 4096;
/// Nodes with more children are rarely repeated; they are always built.
const MAX_SHARED_CHILDREN: usize = 16;

impl NodeInterner {
    fn new() -> NodeInterner {
        NodeInterner { slots: Vec::new() }
    }

    fn node(
        &mut self,
        kind: SyntaxKind,
        children: &mut Vec<GreenElement>,
        first_child: usize,
    ) -> GreenNode {
        let new_children = children.get(first_child..).unwrap_or_default();
        if new_children.len() > MAX_SHARED_CHILDREN {
            return GreenNode::new(kind.into(), children.drain(first_child..));
        }
        let mut hash = (kind as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for child in new_children {
            hash = (hash.rotate_left(5) ^ owned_address(child) as u64)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        if self.slots.is_empty() {
            self.slots.resize(NODE_SLOTS, None);
        }
        let index = (hash >> 52) as usize & (NODE_SLOTS - 1);
        let Some(slot) = self.slots.get_mut(index) else {
            return GreenNode::new(kind.into(), children.drain(first_child..));
        };
        if let Some(node) = slot {
            let same = node.kind() == kind.into()
                && node.children().len() == new_children.len()
                && node
                    .children()
                    .zip(new_children)
                    .all(|(old, new)| element_address(old) == owned_address(new));
            if same {
                let node = node.clone();
                children.truncate(first_child);
                return node;
            }
        }
        let node = GreenNode::new(kind.into(), children.drain(first_child..));
        *slot = Some(node.clone());
        node
    }
}

/// The address of a child, which identifies it among shared children.
fn element_address(element: NodeOrToken<&rowan::GreenNodeData, &rowan::GreenTokenData>) -> usize {
    match element {
        NodeOrToken::Node(node) => node as *const rowan::GreenNodeData as usize,
        NodeOrToken::Token(token) => token as *const rowan::GreenTokenData as usize,
    }
}

fn owned_address(element: &GreenElement) -> usize {
    match element {
        NodeOrToken::Node(node) => element_address(NodeOrToken::Node(node)),
        NodeOrToken::Token(token) => element_address(NodeOrToken::Token(token)),
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
}
