//! The document model of TVM's printer (`src/relay/printer/doc.cc`): text
//! with line breaks, where a line break carries its indentation. Indenting
//! a document adds to every line break inside it, so a block printed once
//! can be nested anywhere.
//!
//! A document is stored as one string plus, in order, the positions of its
//! line breaks and of the shared documents embedded in it, so that
//! appending, copying and indenting are cheap and the final text is
//! assembled in one pass ([`Doc::render_into`]). A large document the
//! printer remembers (an arena entry, see `memo.rs`) is embedded by
//! reference rather than copied: a `let` whose value is a `let` whose value
//! is a `let` … would otherwise copy every deeper level's text into each
//! level (quadratic time, and memory, in the depth). Printing stays linear
//! in the size of the output.

use std::rc::Rc;

/// Something at a position of a document's text, in the order appended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mark {
    /// A line break with its indentation.
    Break(usize, u32),
    /// A shared document, its line breaks indented by this much more.
    Embed(usize, Rc<Doc>, u32),
}

impl Mark {
    fn shifted(&self, base: usize, indent: u32) -> Mark {
        match self {
            Mark::Break(at, n) => Mark::Break(at + base, n + indent),
            Mark::Embed(at, doc, n) => Mark::Embed(at + base, doc.clone(), n + indent),
        }
    }
}

/// A printable document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Doc {
    text: String,
    /// The line breaks and embedded documents, by position in `text`.
    marks: Vec<Mark>,
    /// The text of the embedded documents (their own `len`s).
    embedded_len: usize,
    /// Whether `marks` has an embedded document (most documents have
    /// none, and need no care when dropped).
    has_embeds: bool,
}

impl Doc {
    pub(crate) fn new() -> Doc {
        Doc::default()
    }

    /// An empty document with room for `n` bytes of text.
    pub(crate) fn with_capacity(n: usize) -> Doc {
        Doc {
            text: String::with_capacity(n),
            marks: Vec::new(),
            embedded_len: 0,
            has_embeds: false,
        }
    }

    /// The length of the text (line breaks and their indentation apart).
    pub(crate) fn len(&self) -> usize {
        self.text.len() + self.embedded_len
    }

    pub(crate) fn text(s: impl Into<String>) -> Doc {
        Doc {
            text: s.into(),
            marks: Vec::new(),
            embedded_len: 0,
            has_embeds: false,
        }
    }

    /// Appends text.
    pub(crate) fn push_str(&mut self, s: &str) -> &mut Doc {
        self.text.push_str(s);
        self
    }

    /// Appends a number in decimal.
    pub(crate) fn push_decimal(&mut self, n: u64) -> &mut Doc {
        super::scalar::push_decimal(&mut self.text, n);
        self
    }

    /// Appends a line break with no indentation (`Doc::NewLine()`).
    pub(crate) fn newline(&mut self) -> &mut Doc {
        self.marks.push(Mark::Break(self.text.len(), 0));
        self
    }

    /// Appends a shared document without copying it.
    pub(crate) fn embed(&mut self, other: Rc<Doc>) -> &mut Doc {
        self.embedded_len += other.len();
        self.has_embeds = true;
        self.marks.push(Mark::Embed(self.text.len(), other, 0));
        self
    }

    /// Appends another document.
    pub(crate) fn append(&mut self, other: Doc) -> &mut Doc {
        self.append_ref(&other)
    }

    /// Appends a copy of another document.
    pub(crate) fn append_ref(&mut self, other: &Doc) -> &mut Doc {
        self.append_indented(other, 0)
    }

    /// Appends a copy of another document indented by `n` (what
    /// `append(other.clone().indent(n))` gives).
    pub(crate) fn append_indented(&mut self, other: &Doc, n: u32) -> &mut Doc {
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.marks
            .extend(other.marks.iter().map(|mark| mark.shifted(base, n)));
        self.embedded_len += other.embedded_len;
        self.has_embeds |= other.has_embeds;
        self
    }

    /// Appends a line break indented by `n`.
    pub(crate) fn newline_indented(&mut self, n: u32) -> &mut Doc {
        self.marks.push(Mark::Break(self.text.len(), n));
        self
    }

    /// `Doc::Indent`: adds `n` to the indentation of every line break.
    pub(crate) fn indent(mut self, n: u32) -> Doc {
        for mark in &mut self.marks {
            match mark {
                Mark::Break(_, indent) | Mark::Embed(_, _, indent) => *indent += n,
            }
        }
        self
    }

    /// `Doc::Concat`: the documents separated by `sep`.
    pub(crate) fn concat(docs: Vec<Doc>, sep: &Doc) -> Doc {
        let mut out = Doc::new();
        for (i, d) in docs.into_iter().enumerate() {
            if i > 0 {
                out.append_ref(sep);
            }
            out.append(d);
        }
        out
    }

    /// The documents separated by `", "`.
    pub(crate) fn comma_list(docs: Vec<Doc>) -> Doc {
        Doc::concat(docs, &Doc::text(", "))
    }

    /// `Doc::Brace`: `open`, the body indented on new lines, `close`.
    pub(crate) fn brace(open: &str, body: Doc, close: &str, indent: u32) -> Doc {
        let mut out = Doc::text(open);
        let mut inner = Doc::new();
        inner.newline().append(body);
        out.append(inner.indent(indent));
        out.newline().push_str(close);
        out
    }

    /// Writes the document out. Embedded documents are written with an
    /// explicit stack: they nest as deep as the program does.
    pub(crate) fn render_into(&self, out: &mut String) {
        out.reserve(self.len() + self.marks.len() * 8);
        // (document, extra indentation, next mark, text written up to).
        let mut stack: Vec<(&Doc, u32, usize, usize)> = vec![(self, 0, 0, 0)];
        while let Some(top) = stack.last_mut() {
            let (doc, extra, next, from) = *top;
            let Some(mark) = doc.marks.get(next) else {
                out.push_str(&doc.text[from..]);
                stack.pop();
                continue;
            };
            match mark {
                Mark::Break(at, indent) => {
                    out.push_str(&doc.text[from..*at]);
                    out.push('\n');
                    push_spaces(out, (indent + extra) as usize);
                    *top = (doc, extra, next + 1, *at);
                }
                Mark::Embed(at, inner, indent) => {
                    out.push_str(&doc.text[from..*at]);
                    *top = (doc, extra, next + 1, *at);
                    stack.push((inner, extra + indent, 0, 0));
                }
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }
}

/// Dropping a document drops the documents embedded in it that nothing
/// else shares, with an explicit stack: they nest as deep as the program.
impl Drop for Doc {
    fn drop(&mut self) {
        if !self.has_embeds {
            return;
        }
        let mut owned: Vec<Doc> = Vec::new();
        let take = |marks: &mut Vec<Mark>, owned: &mut Vec<Doc>| {
            for mark in marks.drain(..) {
                if let Mark::Embed(_, inner, _) = mark {
                    if let Ok(doc) = Rc::try_unwrap(inner) {
                        owned.push(doc);
                    }
                }
            }
        };
        take(&mut self.marks, &mut owned);
        while let Some(mut doc) = owned.pop() {
            take(&mut doc.marks, &mut owned);
        }
    }
}

fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lines_and_indents() {
        let mut body = Doc::text("a");
        body.newline().push_str("b");
        let d = Doc::brace("{", body, "}", 2);
        assert_eq!(d.render(), "{\n  a\n  b\n}");
        let mut outer = Doc::text("x ");
        outer.append(d.clone().indent(2));
        assert_eq!(outer.render(), "x {\n    a\n    b\n  }");
        let mut f = Doc::new();
        f.append(Doc::text("z"));
        f.append(Doc::new());
        assert_eq!(f.render(), "z");
        let mut g = Doc::new();
        g.newline();
        g.append(Doc::text("q"));
        assert_eq!(g.render(), "\nq");
        assert_eq!(
            Doc::comma_list(vec![Doc::text("1"), Doc::text("2")]).render(),
            "1, 2"
        );
        assert_eq!(Doc::brace("{", Doc::new(), "}", 2).render(), "{\n  \n}");
    }

    #[test]
    fn an_embedded_document_renders_as_a_copy_would() {
        let mut inner = Doc::text("a");
        inner.newline().push_str("b");
        let shared = Rc::new(inner.clone());
        let build = |embed: bool| {
            let mut d = Doc::text("x ");
            if embed {
                d.embed(shared.clone());
            } else {
                d.append_ref(&inner);
            }
            d.push_str(" y").newline().push_str("z");
            let mut outer = Doc::text("[");
            outer.newline().append(d.indent(2));
            outer.newline_indented(1).push_str("]");
            let mut twice = Doc::new();
            twice.append_indented(&outer, 3).newline();
            twice.append_ref(&outer);
            twice
        };
        let (copied, embedded) = (build(false), build(true));
        assert_eq!(embedded.render(), copied.render());
        assert_eq!(embedded.len(), copied.len());
        // Deep nesting renders without recursion.
        let mut deep = Rc::new(Doc::text("0"));
        for _ in 0..100_000 {
            let mut d = Doc::text("(");
            d.embed(deep).newline().push_str(")");
            deep = Rc::new(d);
        }
        let text = deep.render();
        assert_eq!(text.len(), deep.len() + 100_000);
        assert_eq!(text.find('0'), Some(100_000));
        assert!(text.ends_with("\n)\n)"));
    }
}
