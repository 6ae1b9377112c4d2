//! Comparing printed Relay the way `shared/tools/conformance.py` does: the
//! ` /* ty=… */` comments stripped for the structural comparison, white
//! space at line ends ignored, the first differing line reported.

/// Removes every ` /* ty=… */` comment, as the conformance script's regex
/// ` ?/\* ty=(?:[^*]|\*(?!/))* \*/` does: the comment runs to the first
/// `*/` and must end with ` */`; one space before it goes too.
pub fn strip_types(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("/* ty=") {
        let Some(len) = rest[at..].find("*/") else {
            break;
        };
        let end = at + len + 2;
        if !rest[..end].ends_with(" */") {
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        let start = if rest[..at].ends_with(' ') {
            at - 1
        } else {
            at
        };
        out.push_str(&rest[..start]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// White space at line ends and at the end of the text does not count, nor
/// does `\r\n` versus `\n`.
pub fn normalize(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    lines.join("\n").trim_end().to_string()
}

/// The text up to the `#[metadata]` section.
pub fn before_metadata(text: &str) -> &str {
    text.find("#[metadata]").map_or(text, |i| &text[..i])
}

/// The first differing line of two texts (each line clipped to 300
/// characters), for failure reports; empty when the texts are equal line
/// by line.
pub fn first_difference(got: &str, want: &str) -> String {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let clip = |s: Option<&str>| s.map_or("<none>".to_string(), |s| s.chars().take(300).collect());
    for i in 0..g.len().max(w.len()) {
        let (a, b) = (g.get(i).copied(), w.get(i).copied());
        if a != b {
            return format!(
                "line {}:\n      ours: {}\n      tvm:  {}",
                i + 1,
                clip(a),
                clip(b)
            );
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_types_follows_the_regex() {
        assert_eq!(strip_types("%x /* ty=int32 */;"), "%x;");
        assert_eq!(strip_types("f(%x /* ty=fn (int32) -> int32 */)"), "f(%x)");
        assert_eq!(strip_types("/* ty=int32*/"), "/* ty=int32*/");
        assert_eq!(strip_types("a /* ty=A */ b /* ty=B */"), "a b");
        assert_eq!(strip_types("open /* ty=A"), "open /* ty=A");
        assert_eq!(strip_types("fn (%x /* ty=int32 */) {"), "fn (%x) {");
        assert_eq!(strip_types("/* ty=x*/ a"), "/* ty=x*/ a");
    }

    #[test]
    fn normalize_ignores_trailing_white_space_only() {
        assert_eq!(normalize("a  \r\nb\t\n\n"), "a\nb");
        assert_ne!(normalize(" a"), normalize("a"));
    }

    #[test]
    fn first_difference_names_the_line() {
        assert_eq!(first_difference("a\nb", "a\nb"), "");
        let d = first_difference("a\nb", "a\nc");
        assert!(d.starts_with("line 2:"), "{d}");
        assert!(first_difference("a", "a\nb").contains("<none>"));
    }

    #[test]
    fn before_metadata_cuts_at_the_section() {
        assert_eq!(before_metadata("f\n#[metadata]\n{}"), "f\n");
        assert_eq!(before_metadata("f"), "f");
    }
}
