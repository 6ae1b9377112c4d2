//! Unit tests of inference with a few simple relations of our own (identity
//! and broadcasting), so they do not depend on the real relation library.

use super::relation_contract::{RelationArgs, RelationError, RelationFn, RelationOutcome};
use super::*;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::printer::{print_module, print_type, PrintOptions};
use relay_ir::{Dim, ExprKind};
use relay_lower::parse_and_lower;

fn identity(args: &RelationArgs<'_>) -> Result<RelationOutcome, RelationError> {
    let input = &args.inputs()[0];
    if input.is_incomplete() {
        return Ok(RelationOutcome::NotReady);
    }
    Ok(RelationOutcome::output(args, input.clone()))
}

fn broadcast(args: &RelationArgs<'_>) -> Result<RelationOutcome, RelationError> {
    let (Some(a), Some(b)) = (args.inputs()[0].as_tensor(), args.inputs()[1].as_tensor()) else {
        return Ok(RelationOutcome::NotReady);
    };
    if a.dtype != b.dtype {
        return Err(RelationError::at_input(
            format!(
                "data types {} and {} do not match in BroadcastRel",
                a.dtype, b.dtype
            ),
            1,
        ));
    }
    let n = a.shape.len().max(b.shape.len());
    let mut shape = Vec::with_capacity(n);
    for i in 0..n {
        let da = (i + a.shape.len()).checked_sub(n).map(|k| &a.shape[k]);
        let db = (i + b.shape.len()).checked_sub(n).map(|k| &b.shape[k]);
        let d = match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) => {
                if x.as_int() == Some(1) {
                    y.clone()
                } else if y.as_int() == Some(1) || x == y {
                    x.clone()
                } else if matches!(x, Dim::Any) {
                    y.clone()
                } else if matches!(y, Dim::Any) {
                    x.clone()
                } else {
                    return Err(RelationError::new(format!(
                        "Incompatible broadcast type {} and {}",
                        print_type(&args.inputs()[0]),
                        print_type(&args.inputs()[1])
                    )));
                }
            }
            (None, None) => unreachable!(),
        };
        shape.push(d);
    }
    Ok(RelationOutcome::output(args, Type::tensor(shape, a.dtype)))
}

fn lookup(name: &str) -> Option<RelationFn> {
    match name {
        "Identity" => Some(identity),
        "Broadcast" => Some(broadcast),
        _ => None,
    }
}

fn header(body: &str) -> String {
    format!("#[version = \"0.0.5\"]\n{body}")
}

/// Lowers `text`, infers with the toy relations, and returns the printed
/// module and the rendered type errors.
fn infer(text: &str) -> (IRModule, String, Vec<String>) {
    let text = header(text);
    let (m, d) = parse_and_lower("t.relay", &text);
    assert!(!d.has_errors(), "lowering failed: {:?}", d);
    let (typed, diags) = infer_module_with(&m, &lookup);
    let printed = print_module(&typed, &PrintOptions::default());
    let rendered = diags.iter().map(|d| render(&typed, d)).collect();
    (typed, printed, rendered)
}

fn render(m: &IRModule, d: &Diagnostic) -> String {
    let at = |span: Option<relay_ir::source::Span>| match span {
        Some(s) => {
            let file = m.sources.get(s.file).unwrap();
            let (l, c) = file.line_col(s.range.start());
            format!("{}:{}", l + 1, c + 1)
        }
        None => "-".to_string(),
    };
    let mut out = format!("{} @ {}", d.message, at(d.span));
    for l in &d.labels {
        out.push_str(&format!("\n  label {}: {}", at(Some(l.span)), l.message));
    }
    for n in &d.notes {
        out.push_str(&format!("\n  note: {n}"));
    }
    out
}

#[test]
fn identity_chain_and_annotations_are_filled() {
    let (m, printed, errors) =
        infer("def @main(%x: Tensor[(2, 3), float32]) { nn.relu(nn.relu(%x)) }");
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        printed.contains("-> Tensor[(2, 3), float32] {"),
        "{printed}"
    );
    assert!(
        printed.contains("/* ty=Tensor[(2, 3), float32] */"),
        "{printed}"
    );
    let f = m.function("main").unwrap();
    assert_eq!(
        print_type(f.expr().checked_type().unwrap()),
        "fn (Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]"
    );
}

#[test]
fn unannotated_variables_get_the_inferred_type() {
    let (m, printed, errors) = infer(
        "def @main(%x: Tensor[(2, 3), float32]) {\n  let %y = nn.relu(%x);\n  add(%y, %y)\n}",
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        printed.contains("let %y: Tensor[(2, 3), float32]"),
        "{printed}"
    );
    // The binding and the uses are the same node.
    let f = m.function("main").unwrap();
    let ExprKind::Let { var, body, .. } = f.body().kind() else {
        panic!()
    };
    let ExprKind::Call(call) = body.kind() else {
        panic!()
    };
    assert!(call.args[0].ptr_eq(var.expr()));
    assert!(call.args[1].ptr_eq(var.expr()));
}

#[test]
fn second_run_shares_every_node() {
    let (m, _, errors) = infer("def @main(%x: Tensor[(2, 3), float32]) { add(nn.relu(%x), %x) }");
    assert!(errors.is_empty());
    let (again, d) = infer_module_with(&m, &lookup);
    assert!(d.is_empty());
    assert!(again
        .function("main")
        .unwrap()
        .expr()
        .ptr_eq(m.function("main").unwrap().expr()));
}

#[test]
fn broadcast_and_tuples() {
    let (_, printed, errors) = infer(
        "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3), float32]) {\n  %0 = add(%x, %y);\n  (%0, %y).0\n}",
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(printed.contains("-> Tensor[(2, 3), float32]"), "{printed}");
}

#[test]
fn dimension_mismatch_is_reported_at_the_call() {
    let (_, _, errors) = infer(
        "def @f(%a: Tensor[(3), float32]) { %a }\ndef @main(%x: Tensor[(4), float32]) { @f(%x) }",
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("dimension 0 conflicts: 4 does not match 3."),
        "{}",
        errors[0]
    );
}

#[test]
fn unknown_relation_is_an_error() {
    let (_, _, errors) = infer("def @main(%x: Tensor[(2, 3), float32]) { nn.softmax(%x) }");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("is not implemented"), "{}", errors[0]);
}

#[test]
fn deep_chain_does_not_overflow() {
    let mut body = String::from("def @main(%x: Tensor[(2), float32]) {\n");
    body.push_str("  %0 = nn.relu(%x);\n");
    for i in 1..20_000 {
        body.push_str(&format!("  %{i} = nn.relu(%{});\n", i - 1));
    }
    body.push_str("  %19999\n}\n");
    let (m, d) = parse_and_lower("t.relay", &header(&body));
    assert!(!d.has_errors());
    // Inference itself runs on a small stack.
    let typed = std::thread::Builder::new()
        .stack_size(128 << 10)
        .spawn(move || {
            let (typed, diags) = infer_module_with(&m, &lookup);
            assert!(diags.is_empty());
            let f = typed.function("main").unwrap().clone();
            f.expr().checked_type().cloned()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(
        print_type(&typed.unwrap()),
        "fn (Tensor[(2), float32]) -> Tensor[(2), float32]"
    );
}

/// Convolution layout conversions are built once per thread and reused:
/// a call with other layouts, or with an invalid one, still gets its own
/// type or error, before and after the valid ones are cached.
#[test]
fn cached_convolution_layouts_are_per_combination() {
    let valid = header(
        r#"def @main(%x: Tensor[(1, 4, 8, 8), float32], %y: Tensor[(1, 8, 8, 4), float32], %w: Tensor[(4, 4, 3, 3), float32], %k: Tensor[(3, 3, 4, 4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.conv2d(%y, %k, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="HWIO");
  %2 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], out_layout="NHWC");
  (%0, %1, %2)
}"#,
    );
    let invalid = header(
        r#"def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], data_layout="NCHWc")
}"#,
    );
    let body_type = |text: &str| {
        let (m, d) = parse_and_lower("t.relay", text);
        assert!(!d.has_errors(), "lowering failed: {d:?}");
        let (typed, diags) = crate::infer_module(&m);
        let ty = typed
            .function("main")
            .and_then(|f| f.body().checked_type().cloned())
            .map(|t| relay_ir::printer::print_type(&t));
        let errors: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
        (ty, errors)
    };
    let expected = Some(
        "(Tensor[(1, 4, 8, 8), float32], Tensor[(1, 8, 8, 4), float32], \
         Tensor[(1, 8, 8, 4), float32])"
            .to_string(),
    );
    let (cold_invalid_type, cold_invalid_errors) = body_type(&invalid);
    assert_eq!(cold_invalid_errors.len(), 1, "{cold_invalid_errors:?}");
    assert!(
        cold_invalid_errors[0].contains("Invalid layout NCHWc"),
        "{cold_invalid_errors:?}"
    );
    for _ in 0..2 {
        assert_eq!(body_type(&valid), (expected.clone(), Vec::new()));
    }
    assert_eq!(
        body_type(&invalid),
        (cold_invalid_type, cold_invalid_errors),
        "an invalid layout is reported the same once valid ones are cached"
    );
}
