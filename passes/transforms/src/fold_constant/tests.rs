//! Tests of FoldConstant on small programs, folded directly (no type
//! inference: the printed results carry no types).

use super::*;
use relay_ir::printer::{print_expr, PrintOptions};
use relay_ir::{Var, VarId};
use relay_lower::parse_and_lower_expr;
use relay_pass_manager::{PassInfo, PassKind, PipelineValue};

fn parse(text: &str) -> Expr {
    let (expr, diagnostics) = parse_and_lower_expr("test.relay", text);
    assert!(!diagnostics.has_errors(), "{text}: {diagnostics:?}");
    expr
}

fn print(expr: &Expr) -> String {
    let text = print_expr(
        expr,
        &PrintOptions {
            show_meta_data: false,
            show_types: false,
            reparseable: true,
        },
    );
    let body = text
        .strip_prefix("#[version = \"0.0.5\"]\n")
        .unwrap_or(&text);
    body.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

fn fold_with(text: &str, options: FoldOptions) -> (String, FoldStats) {
    let (expr, stats) = fold_constant_expr(&parse(text), &options);
    (print(&expr), stats)
}

fn fold(text: &str) -> String {
    fold_with(text, FoldOptions::default()).0
}

#[test]
fn folds_nested_calls() {
    assert_eq!(
        fold("fn (%x: Tensor[(1), float32]) { add(add(1f, 1f), %x) }"),
        "fn (%x: Tensor[(1), float32]) {\n  add(2f, %x)\n}"
    );
    assert_eq!(
        fold("fn () { multiply(subtract(5, 2), negative(4)) }"),
        "fn () {\n  -12\n}"
    );
}

#[test]
fn substitutes_constant_lets() {
    let text = "fn (%x: Tensor[(1), float32]) {
      let %t1 = 1f;
      let %t2 = add(%t1, %t1);
      let %t3 = add(%t2, %x);
      %t3
    }";
    assert_eq!(
        fold(text),
        "fn (%x: Tensor[(1), float32]) {\n  let %t3 = add(2f, %x);\n  %t3\n}"
    );
}

#[test]
fn chooses_the_branch_of_a_constant_if() {
    let text = "fn (%x: float32) { if (True) { add(%x, 1f) } else { %x } }";
    assert_eq!(fold(text), "fn (%x: float32) {\n  add(%x, 1f)\n}");
    let text = "fn (%x: float32) { if (less(2, 1)) { %x } else { add(1f, 2f) } }";
    assert_eq!(fold(text), "fn (%x: float32) {\n  3f\n}");
}

#[test]
fn projects_fields_of_literal_tuples() {
    // Even when the field is not a constant.
    let text = "fn (%x: float32, %y: float32) { %0 = (%x, %y); %0.1 }";
    assert_eq!(fold(text), "fn (%x: float32, %y: float32) {\n  %y\n}");
}

#[test]
fn folds_tuple_results() {
    // split(constant)[1], built by hand (a tensor constant needs a
    // metadata section in the text).
    let data = TensorData::from_f64s(DataType::FLOAT32, vec![4], &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let split = relay_ir::op::lookup("split").unwrap();
    let attrs = Attrs::new(
        "relay.attrs.SplitAttrs",
        vec![
            (
                "indices_or_sections".into(),
                relay_ir::AttrValue::int_imm(2, DataType::INT32),
            ),
            ("axis".into(), relay_ir::AttrValue::Int(0)),
        ],
    );
    let call = Expr::call(
        Expr::op(split, None),
        vec![Expr::constant(data, None)],
        Some(attrs),
        None,
    );
    let item = Expr::tuple_get_item(call, 1, None);
    let (folded, stats) = fold_constant_expr(&item, &FoldOptions::default());
    let value = folded.as_constant().expect("a constant");
    assert_eq!(value.to_f64_vec().unwrap(), vec![3.0, 4.0]);
    assert_eq!(stats.folded, 1);
    assert_eq!(
        folded.checked_type(),
        Some(&Type::tensor(vec![Dim::int32(2)], DataType::FLOAT32))
    );
}

#[test]
fn never_folds_zero_argument_calls_or_non_ops() {
    let text = "fn () { zeros(shape=[2], dtype=\"float32\") }";
    assert_eq!(
        fold(text),
        "fn () {\n  zeros(shape=[2], dtype=\"float32\")\n}"
    );
    let text = "fn () { %0 = fn (%a: float32) { %a }; %0(1f) }";
    assert!(fold(text).contains("%0(1f)"));
}

#[test]
fn leaves_primitive_functions_alone() {
    let text = "fn (%x: float32) {
      %0 = fn (%p: float32, Primitive=1) { add(add(1f, 2f), %p) };
      %0(add(3f, 4f))
    }";
    let folded = fold(text);
    assert!(folded.contains("%0 = add(1f, 2f);"), "{folded}");
    assert!(folded.contains("(7f)"), "{folded}");
}

#[test]
fn stateful_and_non_computational_ops_stay() {
    // on_device is non-computational; qnn ops need fold_qnn.
    let text =
        "fn () { qnn.requantize(cast(1, dtype=\"int8\"), 2f, 1, 1f, 1, out_dtype=\"int8\") }";
    let (out, stats) = fold_with(text, FoldOptions::default());
    assert!(out.contains("qnn.requantize"), "{out}");
    assert_eq!(stats.folded, 1);
    let with_qnn = FoldOptions {
        fold_qnn: true,
        ..FoldOptions::default()
    };
    let (folded, _) = fold_constant_expr(&parse(text), &with_qnn);
    let ExprKind::Function(f) = folded.kind() else {
        panic!("a function")
    };
    let data = f.body.as_constant().expect("folded");
    assert_eq!(
        (data.dtype, data.to_i64_vec().unwrap()),
        (DataType::int(8), vec![1])
    );
}

#[test]
fn ops_without_kernels_are_left_and_recorded() {
    // `nn.conv2d_backward_weight` has no kernel (TVM never folds it: only
    // cuDNN implements it; relay-eval's NEVER_FOLDED): the call stays, its
    // arguments folded.
    let text = "fn () { nn.conv2d_backward_weight(\
                reshape(stack((1f, 2f, 3f, 4f), axis=0), newshape=[1, 1, 2, 2]), \
                reshape(stack((1f, 2f, 3f, 4f, 5f, 6f, 7f, 8f, 9f), axis=0), newshape=[1, 1, 3, 3]), \
                channels=1, kernel_size=[2, 2]) }";
    let (out, stats) = fold_with(text, FoldOptions::default());
    assert!(
        out.contains("nn.conv2d_backward_weight(meta[relay.Constant][0]"),
        "{out}"
    );
    assert_eq!(
        stats.missing_kernels.get("nn.conv2d_backward_weight"),
        Some(&1)
    );
    // A kernel that refuses its inputs (softmax of a scalar) leaves the call.
    let (out, stats) = fold_with("fn () { nn.softmax(1f) }", FoldOptions::default());
    assert!(out.contains("nn.softmax(1f)"), "{out}");
    assert!(stats.failed.contains_key("nn.softmax"));
}

#[test]
fn max_elements_limits_results() {
    let text = "fn () { broadcast_to(1f, shape=[4, 4]) }";
    let limited = FoldOptions {
        fold_qnn: false,
        max_elements: 10,
    };
    let (out, stats) = fold_with(text, limited);
    assert!(out.contains("broadcast_to"), "{out}");
    assert_eq!(stats.too_large, 1);
    let (_, stats) = fold_with(text, FoldOptions::default());
    assert_eq!(stats.folded, 1);
}

#[test]
fn shape_of_uses_checked_types() {
    let ty = Type::tensor(vec![Dim::int32(8), Dim::int32(9)], DataType::FLOAT32);
    let x = Var::with_id(VarId::fresh(), "x", Some(ty.clone()), None, None);
    let x = x.with_checked_type(ty.clone());
    let relu = relay_ir::op::lookup("nn.relu").unwrap();
    let arg = Expr::with_type(
        ExprKind::Call(relay_ir::Call {
            callee: Expr::op(relu, None),
            args: vec![x.expr().clone()],
            attrs: None,
            type_args: Box::default(),
        }),
        None,
        Some(ty),
    );
    let shape_of = |name: &str, dtype: DataType| {
        let op = relay_ir::op::lookup(name).unwrap();
        let attrs = Attrs::new(
            "relay.attrs.ShapeOfAttrs",
            vec![("dtype".into(), relay_ir::AttrValue::DataType(dtype))],
        );
        Expr::call(Expr::op(op, None), vec![arg.clone()], Some(attrs), None)
    };
    let (folded, _) = fold_constant_expr(
        &shape_of("shape_of", DataType::INT64),
        &FoldOptions::default(),
    );
    let data = folded.as_constant().expect("folded");
    assert_eq!(
        (data.dtype, data.to_i64_vec().unwrap()),
        (DataType::INT64, vec![8, 9])
    );
    let (folded, _) = fold_constant_expr(
        &shape_of("ndarray_size", DataType::FLOAT32),
        &FoldOptions::default(),
    );
    let data = folded.as_constant().expect("folded");
    assert_eq!(
        (data.shape.clone(), data.to_f64_vec().unwrap()),
        (vec![], vec![72.0])
    );
    // Without a checked type nothing is known.
    let untyped = parse("fn (%x: Tensor[(2), float32]) { shape_of(%x, dtype=\"int32\") }");
    let (folded, _) = fold_constant_expr(&untyped, &FoldOptions::default());
    assert!(print(&folded).contains("shape_of"));
}

#[test]
fn on_device_constants_are_constants() {
    let text = "fn (%x: Tensor[(1), float32]) {
      let %t1 = on_device(1f, constrain_result=True);
      add(%t1, %t1)
    }";
    assert_eq!(fold(text), "fn (%x: Tensor[(1), float32]) {\n  2f\n}");
}

#[test]
fn untouched_functions_are_the_same_node() {
    let f = parse("fn (%x: float32) { add(%x, 1f) }");
    let (folded, stats) = fold_constant_expr(&f, &FoldOptions::default());
    assert!(folded.ptr_eq(&f));
    assert_eq!(stats, FoldStats::default());
}

#[test]
fn deep_chains_do_not_overflow() {
    // add(add(…add(1f, 1f)…, 1f), 1f) nested 30 000 deep folds to one
    // constant, and a let chain of the same length is substituted away.
    let add = relay_ir::op::lookup("add").unwrap();
    let one = || {
        Expr::constant(
            TensorData::from_f64s(DataType::FLOAT32, vec![], &[1.0]).unwrap(),
            None,
        )
    };
    let mut e = one();
    for _ in 0..30_000 {
        e = Expr::call(Expr::op(add, None), vec![e, one()], None, None);
    }
    let handle = std::thread::spawn(move || {
        let (folded, stats) = fold_constant_expr(&e, &FoldOptions::default());
        (
            folded.as_constant().map(|d| d.to_f64_vec().unwrap()),
            stats.folded,
        )
    });
    assert_eq!(handle.join().unwrap(), (Some(vec![30_001.0]), 30_000));

    let x = Var::new("x", None, None);
    let mut vars = vec![Var::new("v0", None, None)];
    for i in 1..20_000 {
        vars.push(Var::new(format!("v{i}"), None, None));
    }
    let mut body = Expr::call(
        Expr::op(add, None),
        vec![vars.last().unwrap().expr().clone(), x.expr().clone()],
        None,
        None,
    );
    for i in (0..vars.len()).rev() {
        let value = if i == 0 {
            one()
        } else {
            Expr::call(
                Expr::op(add, None),
                vec![vars[i - 1].expr().clone(), one()],
                None,
                None,
            )
        };
        body = Expr::let_(vars[i].clone(), value, body, None);
    }
    let handle = std::thread::spawn(move || {
        let (folded, _) = fold_constant_expr(&body, &FoldOptions::default());
        let call = folded
            .as_call()
            .map(|c| c.args[0].as_constant().map(|d| d.to_f64_vec().unwrap()));
        call
    });
    assert_eq!(handle.join().unwrap(), Some(Some(vec![20_000.0])));
}

#[test]
fn pass_is_registered() {
    crate::register_builtin_passes();
    let spec = relay_pass_manager::registry::lookup("FoldConstant").expect("registered");
    assert_eq!(spec.info, PassInfo::new("FoldConstant", 2, &[]));
    assert_eq!(spec.kind, PassKind::Function);
    assert_eq!(spec.params.len(), 1);
    let pass = relay_pass_manager::registry::create(
        "FoldConstant",
        &[("fold_qnn".into(), PipelineValue::Bool(true))],
    )
    .unwrap();
    assert_eq!(pass.describe(), "FoldConstant(fold_qnn=true)");
    assert_eq!(
        relay_pass_manager::registry::create("FoldConstant", &[])
            .unwrap()
            .describe(),
        "FoldConstant"
    );
}

/// Found by the `passes` fuzz target: a constant `let` used only inside a
/// closure that is called without arguments was dropped while the closure
/// kept the variable (TVM v0.13 does the same, see the module docs).
#[test]
fn substitutes_constant_lets_inside_closures_called_without_arguments() {
    let text = "fn (%x: int64) {
      let %s = add(1i64, 2i64);
      fn () { add(%s, %x) }()
    }";
    assert_eq!(
        fold(text),
        "fn (%x: int64) {\n  %0 = fn () {\n    add(3i64, %x)\n  };\n  %0()\n}"
    );
}

/// Calls whose result would be huge are refused from the shape their
/// kernel computes (these programs have no types), before any allocation.
#[test]
fn huge_results_are_refused_before_allocation() {
    let cases = [
        ("full", "full(1f, shape=[70000000000])"),
        (
            "full",
            "full(1f, shape=[70000000000, 70000000000, 70000000000])",
        ),
        ("broadcast_to", "broadcast_to(1f, shape=[70000000000])"),
        ("tile", "tile(expand_dims(1f, axis=0), reps=[70000000000])"),
        (
            "repeat",
            "repeat(expand_dims(1f, axis=0), repeats=70000000000, axis=0)",
        ),
        (
            "nn.pad",
            "nn.pad(expand_dims(1f, axis=0), 0f, pad_width=[[0, 70000000000]])",
        ),
    ];
    for (op, call) in cases {
        let text = format!("fn () {{ {call} }}");
        let (out, stats) = fold_with(&text, FoldOptions::default());
        assert!(out.contains(&format!("{op}(")), "{call}: {out}");
        assert_eq!(stats.too_large, 1, "{call}: {stats:?}");
    }
}
