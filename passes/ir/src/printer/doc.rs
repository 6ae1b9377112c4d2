//! The document model of TVM's printer (`src/relay/printer/doc.cc`): text
//! with line breaks, where a line break carries its indentation. Indenting
//! a document adds to every line break inside it, so a block printed once
//! can be nested anywhere.
//!
//! A document is stored as one string plus the positions of its line
//! breaks, so that appending, copying and indenting are cheap and the final
//! text is assembled in one pass ([`Doc::render_into`]); printing stays
//! linear in the size of the output.

/// A printable document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Doc {
    text: String,
    /// (byte offset in `text`, indentation) of each line break, in order.
    breaks: Vec<(usize, u32)>,
}

impl Doc {
    pub(crate) fn new() -> Doc {
        Doc::default()
    }

    /// An empty document with room for `n` bytes of text.
    pub(crate) fn with_capacity(n: usize) -> Doc {
        Doc {
            text: String::with_capacity(n),
            breaks: Vec::new(),
        }
    }

    /// The length of the text (line breaks and their indentation apart).
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    pub(crate) fn text(s: impl Into<String>) -> Doc {
        Doc {
            text: s.into(),
            breaks: Vec::new(),
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
        self.breaks.push((self.text.len(), 0));
        self
    }

    /// Appends another document.
    pub(crate) fn append(&mut self, other: Doc) -> &mut Doc {
        self.append_ref(&other)
    }

    /// Appends a copy of another document.
    pub(crate) fn append_ref(&mut self, other: &Doc) -> &mut Doc {
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.breaks
            .extend(other.breaks.iter().map(|&(at, indent)| (at + base, indent)));
        self
    }

    /// Appends a copy of another document indented by `n` (what
    /// `append(other.clone().indent(n))` gives).
    pub(crate) fn append_indented(&mut self, other: &Doc, n: u32) -> &mut Doc {
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.breaks.extend(
            other
                .breaks
                .iter()
                .map(|&(at, indent)| (at + base, indent + n)),
        );
        self
    }

    /// Appends a line break indented by `n`.
    pub(crate) fn newline_indented(&mut self, n: u32) -> &mut Doc {
        self.breaks.push((self.text.len(), n));
        self
    }

    /// `Doc::Indent`: adds `n` to the indentation of every line break.
    pub(crate) fn indent(mut self, n: u32) -> Doc {
        for b in &mut self.breaks {
            b.1 += n;
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

    /// Writes the document out.
    pub(crate) fn render_into(&self, out: &mut String) {
        const SPACES: &str = "                                ";
        out.reserve(self.text.len() + self.breaks.len() * 8);
        let mut from = 0;
        for &(at, indent) in &self.breaks {
            out.push_str(&self.text[from..at]);
            out.push('\n');
            let mut indent = indent as usize;
            while indent > 0 {
                let n = indent.min(SPACES.len());
                out.push_str(&SPACES[..n]);
                indent -= n;
            }
            from = at;
        }
        out.push_str(&self.text[from..]);
    }

    #[cfg(test)]
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
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
}
