//! Turns parser events and the lexer's tokens into a rowan green tree.
//!
//! Trivia (whitespace, comments) is not seen by the parser; here it is put
//! back between the tokens, always outside the nodes that start or end next
//! to it, so every node's range starts and ends at a real token. Every byte of
//! the input lands in exactly one token of the tree.

use crate::lexer::Token;
use crate::parser::Event;
use crate::SyntaxKind;
use rowan::{GreenNode, GreenNodeBuilder};

pub(crate) fn build(text: &str, tokens: &[Token], mut events: Vec<Event>) -> GreenNode {
    let mut builder = Builder {
        text,
        tokens,
        token_pos: 0,
        text_pos: 0,
        inner: GreenNodeBuilder::new(),
        depth: 0,
    };
    let mut forward_parents = Vec::new();
    for i in 0..events.len() {
        match std::mem::replace(&mut events[i], Event::Tombstone) {
            Event::Start {
                kind,
                forward_parent,
            } => {
                // Open the chain of nodes that `precede` asked to wrap this
                // one, outermost first.
                forward_parents.push(kind);
                let mut idx = i;
                let mut fp = forward_parent;
                while let Some(distance) = fp {
                    idx += distance as usize;
                    fp = match std::mem::replace(&mut events[idx], Event::Tombstone) {
                        Event::Start {
                            kind,
                            forward_parent,
                        } => {
                            forward_parents.push(kind);
                            forward_parent
                        }
                        _ => unreachable!("a forward parent is a Start event"),
                    };
                }
                for kind in forward_parents.drain(..).rev() {
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

struct Builder<'a> {
    text: &'a str,
    tokens: &'a [Token],
    token_pos: usize,
    text_pos: usize,
    inner: GreenNodeBuilder<'static>,
    depth: usize,
}

impl Builder<'_> {
    fn start_node(&mut self, kind: SyntaxKind) {
        // The root takes the leading trivia; inner nodes start at a token.
        if self.depth > 0 {
            self.eat_trivia();
        }
        self.depth += 1;
        self.inner.start_node(kind.into());
    }

    fn finish_node(&mut self) {
        self.depth -= 1;
        if self.depth == 0 {
            // Trailing trivia (and anything left, which cannot happen for a
            // well-formed event list) belongs to the root.
            while self.token_pos < self.tokens.len() {
                self.do_token();
            }
        }
        self.inner.finish_node();
    }

    fn token(&mut self) {
        self.eat_trivia();
        self.do_token();
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
        let token = self.tokens[self.token_pos];
        let len = usize::from(token.len);
        let text = &self.text[self.text_pos..self.text_pos + len];
        self.inner.token(token.kind.into(), text);
        self.token_pos += 1;
        self.text_pos += len;
    }

    fn finish(self) -> GreenNode {
        self.inner.finish()
    }
}
