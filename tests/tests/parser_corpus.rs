//! The syntax layer against every text TVM v0.13 parsed or rejected:
//! accepted texts parse with no syntax error and losslessly; texts TVM
//! rejected with a syntax error get one from us too.

use relay_syntax::{parse, Entry};
use relay_tests::{
    classify_tvm_error, files_with_suffix, parser_cases, read, root_or_skip, TvmErrorClass,
};

fn entry(is_expr: bool) -> Entry {
    if is_expr {
        Entry::Expr
    } else {
        Entry::Module
    }
}

#[test]
fn accepted_texts_parse_without_syntax_errors() {
    let Some(root) = root_or_skip("parser_corpus") else {
        return;
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut inputs: Vec<(String, String, Entry)> = Vec::new();
    for case in parser_cases(&root)
        .into_iter()
        .filter(|c| c.category == "ok")
    {
        inputs.push((case.name(), case.source(), entry(case.is_expr())));
        let expected = read(&case.with_ext("expected"));
        inputs.push((
            format!("{}.expected", case.name()),
            expected,
            entry(case.is_expr()),
        ));
    }
    for dir in ["models", "std"] {
        for path in files_with_suffix(&root.join(dir), "") {
            let name = path.to_string_lossy().to_string();
            if name.ends_with(".relay") || name.ends_with(".rly") {
                inputs.push((
                    format!("{dir}/{}", path.file_name().unwrap().to_string_lossy()),
                    read(&path),
                    Entry::Module,
                ));
            }
        }
    }
    for (name, text, entry) in &inputs {
        let parse = parse(text, *entry);
        assert_eq!(
            parse.syntax_node().to_string(),
            *text,
            "{name}: tree text differs from input"
        );
        checked += 1;
        if let Some(error) = parse.errors().first() {
            failures.push(format!("{name}: {:?} {}", error.range(), error.message()));
        }
    }
    eprintln!(
        "accepted texts: {} of {checked} parse without syntax errors",
        checked - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} texts have syntax errors:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn rejected_texts_get_a_syntax_error_when_tvm_gave_one() {
    let Some(root) = root_or_skip("parser_corpus") else {
        return;
    };
    let (mut syntax, mut other, mut other_with_syntax_error) = (0, 0, 0);
    let mut missed = Vec::new();
    for case in parser_cases(&root)
        .into_iter()
        .filter(|c| c.category == "err")
    {
        let text = case.source();
        let parse = parse(&text, entry(case.is_expr()));
        assert_eq!(
            parse.syntax_node().to_string(),
            text,
            "{}: not lossless",
            case.name()
        );
        let tvm = read(&case.with_ext("error"));
        match classify_tvm_error(&tvm) {
            TvmErrorClass::Syntax => {
                syntax += 1;
                if parse.errors().is_empty() {
                    missed.push(format!(
                        "{}: TVM said {}",
                        case.name(),
                        tvm.lines().next().unwrap_or("")
                    ));
                }
            }
            TvmErrorClass::NameOrType => {
                other += 1;
                if !parse.errors().is_empty() {
                    other_with_syntax_error += 1;
                }
            }
        }
    }
    eprintln!(
        "rejected texts: {syntax} syntax errors in TVM ({} caught), {other} name/type errors \
         (left to lowering and InferType; {other_with_syntax_error} also get a syntax error from us)",
        syntax - missed.len()
    );
    assert!(
        missed.is_empty(),
        "{} syntax errors missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
