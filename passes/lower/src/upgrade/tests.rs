//! The upgrade keeps the text around what it rewrites; the CLI and the
//! editor's tests (`server/test_data/upgrade/`) cover each leniency with
//! comments everywhere.

use super::upgrade;

fn upgraded(text: &str) -> String {
    match upgrade("test.relay", text) {
        Ok((text, _)) => text,
        Err(errors) => panic!("{errors:?}"),
    }
}

#[test]
fn a_bare_fn_becomes_main_with_its_comments() {
    let text = "// a model\nfn (%x: float32 /* in */) {\n  %x // out\n}\n// end\n";
    assert_eq!(
        upgraded(text),
        "#[version = \"0.0.5\"]\n// a model\ndef @main(%x: float32 /* in */) {\n  %x // out\n}\n// end\n"
    );
}

#[test]
fn a_bare_expression_is_wrapped_in_main() {
    let text = "#[version = \"0.0.5\"]\nfn (%x: float32) { %x }(1f) // call\n";
    let out = upgraded(text);
    assert!(
        out.contains("def @main() {\nfn (%x: float32) { %x }(1f)"),
        "{out}"
    );
    assert!(out.contains("// call"), "{out}");
}

#[test]
fn frontend_names_are_renamed_everywhere() {
    let text =
        "def @f.g(%a.b: float32) { %a.b }\ndef @main(%a.b: float32) { @f.g(%a.b) /* c */ }\n";
    assert_eq!(
        upgraded(text),
        "#[version = \"0.0.5\"]\ndef @f_g(%a_b: float32) { %a_b }\ndef @main(%a_b: float32) { @f_g(%a_b) /* c */ }\n"
    );
}

#[test]
fn a_rename_onto_a_used_name_is_refused() {
    let text = "def @main(%a.b: float32, %a_b: float32) { add(%a.b, %a_b) }\n";
    let errors = upgrade("test.relay", text).expect_err("a clash");
    let message = &errors.iter().next().unwrap().message;
    assert!(message.contains("already uses `%a_b`"), "{message}");
}

#[test]
fn a_dropped_attribute_keeps_its_comments() {
    let text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 4), float32]) {\n  nn.softmax(%x, axis=1, /* old */ compute_dtype=\"float32\")\n}\n";
    assert_eq!(
        upgraded(text),
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 4), float32]) {\n  nn.softmax(%x, axis=1 /* old */)\n}\n"
    );
    let first = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 4), float32]) {\n  nn.softmax(%x, compute_dtype=\"float32\", axis=1)\n}\n";
    assert!(upgraded(first).contains("nn.softmax(%x, axis=1)"));
}

#[test]
fn a_dropped_attribute_after_a_line_comment_keeps_the_line_break() {
    let text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 4), float32]) {\n  nn.softmax(%x, axis=1, // old\n    compute_dtype=\"float32\")\n}\n";
    assert_eq!(
        upgraded(text),
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 4), float32]) {\n  nn.softmax(%x, axis=1 // old\n    )\n}\n"
    );
}
