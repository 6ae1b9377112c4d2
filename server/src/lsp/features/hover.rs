//! Hover: what the thing under the cursor is. An operator shows its
//! documentation (and the type of this call), an attribute its type and
//! default, a name its type or signature and what kind of name it is, any
//! other expression its inferred type.

use super::cursor::{is_name, token_at};
use super::markdown::code_block;
use super::ops::{enclosing_op_call, op_documentation, path_op};
use super::types::{global_signature, graph_value, type_of, var_at, var_type};
use crate::lsp::analysis::Analysis;
use relay_passes::lower::{Definition, NameKind};
use relay_passes::metadata::ValueSummary;
use relay_passes::printer::print_type;
use relay_syntax::{SyntaxKind::*, TextRange, TextSize};

/// What hover shows: Markdown, about a range of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hover {
    pub markdown: String,
    pub range: TextRange,
}

pub fn hover(analysis: &Analysis, offset: TextSize) -> Option<Hover> {
    let root = analysis.root();
    let token = token_at(&root, offset)?;
    let range = token.text_range();
    let parent = token.parent()?;
    // Operators and attributes.
    if token.kind() == IDENT {
        if let Some(path) = parent.ancestors().find(|n| n.kind() == PATH_EXPR) {
            if let Some(op) = path_op(&path) {
                let mut text = op_documentation(op);
                if let Some(call) = path.parent().filter(|p| p.kind() == CALL_EXPR) {
                    if let Some(t) = analysis.index().exact(call.text_range()).and_then(type_of) {
                        text = format!("{}\n\n---\n\nthis call: {}", text, code_block(&t));
                    }
                }
                return Some(Hover {
                    markdown: text,
                    range: path.text_range(),
                });
            }
        }
        if parent.kind() == ATTR_KEY {
            if let Some((_, op)) = enclosing_op_call(&root, offset) {
                if let Some(field) = op.attrs().and_then(|s| s.field(token.text())) {
                    let text = format!(
                        "{}\n\nattribute of `{}`",
                        code_block(&format!("{}: {} = {}", field.name, field.ty, field.default)),
                        op.name
                    );
                    return Some(Hover {
                        markdown: text,
                        range,
                    });
                }
            }
        }
    }
    // Names.
    if is_name(token.kind()) {
        if let Some((_, def)) = analysis.names.definition_at(offset) {
            if let Some(text) = name_hover(analysis, &def) {
                return Some(Hover {
                    markdown: text,
                    range,
                });
            }
        }
    }
    // Any other expression: its type; a tensor constant (a metadata
    // reference, whose values the text does not show) also its values.
    let (expr_range, expr) = analysis.index().enclosing(&parent)?;
    let t = type_of(expr)?;
    let mut markdown = code_block(&t);
    if let Some(data) = expr.as_constant().filter(|data| data.ndim() > 0) {
        markdown.push_str(&format!("\n\nconstant: {}", ValueSummary::of(data)));
    }
    Some(Hover {
        markdown,
        range: expr_range,
    })
}

/// What hover shows for a name: its type or signature and what it is.
fn name_hover(analysis: &Analysis, def: &Definition) -> Option<String> {
    let name = &def.name;
    let text = match def.kind {
        NameKind::Param | NameKind::Let | NameKind::PatternVar | NameKind::FreeVar => {
            let t = def
                .range
                .and_then(|range| var_at(analysis, range))
                .and_then(var_type);
            let what = match def.kind {
                NameKind::Param => "parameter",
                NameKind::PatternVar => "pattern variable",
                NameKind::FreeVar => "free variable",
                _ => "local variable",
            };
            match t {
                Some(t) => format!("{}\n\n{what}", code_block(&format!("%{name}: {t}"))),
                None => format!("{}\n\n{what}", code_block(&format!("%{name}"))),
            }
        }
        NameKind::Undeclared => format!(
            "{}\n\nnot declared: add it as a parameter or bind it with `let`",
            code_block(&format!("%{name}"))
        ),
        NameKind::Graph => {
            let t = def
                .range
                .and_then(|range| graph_value(analysis, range))
                .and_then(type_of);
            match t {
                Some(t) => format!("{}\n\ngraph binding", code_block(&format!("%{name}: {t}"))),
                None => format!("{}\n\ngraph binding", code_block(&format!("%{name}"))),
            }
        }
        NameKind::Global => {
            let sig = global_signature(analysis, name).unwrap_or_else(|| format!("def @{name}"));
            format!("{}\n\nglobal function", code_block(&sig))
        }
        NameKind::Constructor => match analysis.module().constructor(name) {
            Some(ctor) => {
                let data = ctor.data();
                let fields: Vec<String> = data.inputs.iter().map(print_type).collect();
                format!(
                    "{}\n\nconstructor {} of `{}`",
                    code_block(&format!("{name}({})", fields.join(", "))),
                    data.tag,
                    data.belong_to.name()
                )
            }
            None => code_block(name),
        },
        NameKind::TypeName => match analysis.module().type_definition(name) {
            Some(data) => {
                let params: Vec<&str> = data.type_vars.iter().map(|v| v.name()).collect();
                let ctors: Vec<&str> = data.constructors.iter().map(|c| c.name()).collect();
                let head = if params.is_empty() {
                    name.clone()
                } else {
                    format!("{name}[{}]", params.join(", "))
                };
                format!(
                    "{}\n\nconstructors: {}",
                    code_block(&format!("type {head}")),
                    ctors.join(", ")
                )
            }
            None => code_block(&format!("type {name}")),
        },
        NameKind::TypeParam => format!("{}\n\ntype parameter", code_block(name)),
    };
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::features::fixture;

    /// Hovers at the fixture's `$0` and checks the range it is about
    /// (`<hover>…</hover>`) and the text shown.
    fn check(marked: &str, markdown: &str) {
        fixture::check(marked, |analysis, cursor| {
            let found = hover(analysis, cursor.expect("a cursor")).expect("a hover");
            assert_eq!(found.markdown, markdown, "for {marked}");
            vec![(found.range, "hover".to_string())]
        });
    }

    fn nothing(marked: &str) {
        let fixture = fixture::parse(marked);
        let analysis = fixture::analysis(&fixture.text);
        assert_eq!(hover(&analysis, fixture.cursor()), None, "for {marked}");
    }

    const V: &str = "#[version = \"0.0.5\"]\n";

    #[test]
    fn names_show_their_type_and_what_they_are() {
        check(
            &format!("{V}def @f(%x: float32) {{ let %y = add(%x, %x); <hover>%$0y</hover> }}"),
            "```relay\n%y: float32\n```\n\nlocal variable",
        );
        check(
            &format!("{V}def @f(<hover>%$0x</hover>: float32) {{ %x }}"),
            "```relay\n%x: float32\n```\n\nparameter",
        );
        check(
            &format!("{V}def @f(%x: float32) {{ %0 = add(%x, %x); <hover>%$00</hover> }}"),
            "```relay\n%0: float32\n```\n\ngraph binding",
        );
        check(
            &format!("{V}def @g(%x: float32) -> float32 {{ %x }}\ndef @f() {{ <hover>@$0g</hover>(1f) }}"),
            "```relay\ndef @g(%x: float32) -> float32\n```\n\nglobal function",
        );
    }

    #[test]
    fn an_undeclared_local_says_how_to_declare_it() {
        check(
            &format!("{V}def @f() {{ <hover>%z</hover>$0 }}"),
            "```relay\n%z\n```\n\nnot declared: add it as a parameter or bind it with `let`",
        );
    }

    #[test]
    fn operators_show_their_documentation_and_this_calls_type() {
        let fixture = fixture::parse(&format!(
            "{V}def @f(%x: Tensor[(2), float32]) {{ <hover>nn.re$0lu</hover>(%x) }}"
        ));
        let analysis = fixture::analysis(&fixture.text);
        let found = hover(&analysis, fixture.cursor()).unwrap();
        assert_eq!(found.range, fixture.range("hover"));
        assert!(found.markdown.starts_with("```relay\nnn.relu(data)\n```"));
        // What this tool implements for the operator, as `relay ops` says it.
        let here =
            relay_passes::op_coverage::coverage(relay_passes::op::lookup("nn.relu").unwrap());
        assert!(
            found.markdown.contains(&format!("\n\nhere: {here}\n\n")),
            "{}",
            found.markdown
        );
        assert!(found
            .markdown
            .contains("here: relation Identity (implemented); kernel yes"));
        assert!(found
            .markdown
            .ends_with("this call: ```relay\nTensor[(2), float32]\n```"));
    }

    #[test]
    fn attributes_show_their_type_and_default() {
        check(
            &format!(
                "{V}def @f(%x: Tensor[(2), float32]) {{ nn.softmax(%x, <hover>ax$0is</hover>=0) }}"
            ),
            "```relay\naxis: int = -1\n```\n\nattribute of `nn.softmax`",
        );
    }

    #[test]
    fn a_metadata_constant_shows_its_values() {
        let text = include_str!("../../../tests/diff_inputs/constants_a.relay");
        let at = text.find("meta[relay.Constant]").unwrap() + 3;
        let analysis = fixture::analysis(text);
        let found = hover(&analysis, (at as u32).into()).expect("a hover");
        assert_eq!(&text[found.range], "meta[relay.Constant][0]");
        assert_eq!(
            found.markdown,
            "```relay\nTensor[(4, 6), float32]\n```\n\nconstant: 24 elements: min 0, max 11.5, \
             mean 5.75; [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, …]"
        );
        // A scalar literal shows its value in the text already.
        check(
            &format!("{V}def @f() {{ <hover>1.5$0f</hover> }}"),
            "```relay\nfloat32\n```",
        );
    }

    #[test]
    fn other_expressions_show_their_type() {
        check(
            &format!("{V}def @f(%x: float32) {{ <hover>(%x,$0 1)</hover> }}"),
            "```relay\n(float32, int32)\n```",
        );
        nothing(&format!("{V}def @f() {{ 1 }}\n$0  "));
    }
}
