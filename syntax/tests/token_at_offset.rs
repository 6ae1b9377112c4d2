//! `ast::token_at_offset` (binary search down the tree) answers what
//! rowan's `SyntaxNode::token_at_offset` (a walk over every child) answers,
//! at every offset of texts with trivia, errors and nesting, from the root
//! and from inner nodes.

use relay_syntax::ast::token_at_offset;
use relay_syntax::{SyntaxNode, TextSize};

fn same_at_every_offset(node: &SyntaxNode) {
    let range = node.text_range();
    let mut offset = range.start();
    loop {
        let ours: Vec<_> = token_at_offset(node, offset).collect();
        let rowans: Vec<_> = node.token_at_offset(offset).collect();
        assert_eq!(ours, rowans, "at {offset:?} in {node:?}");
        if offset == range.end() {
            break;
        }
        offset += TextSize::from(1);
    }
}

#[test]
fn equal_to_rowans_answer_everywhere() {
    let texts = [
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 3), float32]) {\n  %0 = add(%x, %x); // c\n  %1 = nn.relu(%0);\n  (%1, %0)\n}\n",
        "#[version = \"0.0.5\"]\ndef @f(%x) { let %y = %x; if (%y) { 1 } else { 2 } }\n/* block */ type T { A(int32), B }\n",
        "#[version = \"0.0.5\"]\ndef @broken(%x: { %x, ) }\ndef @g() { @broken( }",
        "",
        "  ",
    ];
    for text in texts {
        let root = relay_syntax::parse_module(text).syntax_node();
        for node in root.descendants() {
            same_at_every_offset(&node);
        }
    }
}

#[test]
fn outside_the_node_there_is_no_token() {
    let root = relay_syntax::parse_module("#[version = \"0.0.5\"]\ndef @f() { 1 }").syntax_node();
    let def = root.children().last().unwrap();
    assert_eq!(token_at_offset(&def, TextSize::from(0)).count(), 0);
    assert_eq!(token_at_offset(&root, TextSize::from(10_000)).count(), 0);
}
