//! Printing IR built by hand (the data-driven tests that go through the
//! parser live in `tests/print_corpus.rs` and `tests/print_snapshots.rs`).

use super::*;
use crate::dtype::DataType;
use crate::metadata::TensorData;
use crate::op;
use crate::{AttrValue, Attrs, DictAttrs, Dim, Function, FunctionData, Var};

fn scalar_i32(v: i64) -> Expr {
    Expr::constant(
        TensorData::from_i64s(DataType::INT32, vec![], &[v]).unwrap(),
        None,
    )
}

fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::call(Expr::op(op::lookup(name).unwrap(), None), args, None, None)
}

fn tensor(shape: &[i64]) -> Type {
    Type::tensor(
        shape.iter().map(|&d| Dim::int32(d)).collect(),
        DataType::FLOAT32,
    )
}

fn func(params: Vec<Var>, body: Expr, ret: Option<Type>) -> Function {
    Function::new(
        FunctionData {
            params,
            body,
            ret_type: ret,
            type_params: Vec::new(),
            attrs: DictAttrs::default(),
            virtual_device: None,
        },
        None,
    )
}

const NO_TYPES: PrintOptions = PrintOptions {
    show_meta_data: true,
    show_types: false,
    reparseable: true,
};

#[test]
fn graph_bindings_in_post_order() {
    // %0 = multiply(1, 1); %1 = add(1, %0); %2 = less(1, %1); equal(1, %2)
    let one = || scalar_i32(1);
    let m = call("multiply", vec![one(), one()]);
    let a = call("add", vec![one(), m]);
    let l = call("less", vec![one(), a]);
    let e = call("equal", vec![one(), l]);
    assert_eq!(
        print_expr(&e, &NO_TYPES),
        "#[version = \"0.0.5\"]\n%0 = multiply(1, 1);\n%1 = add(1, %0);\n%2 = less(1, %1);\nequal(1, %2)"
    );
}

#[test]
fn numbering_follows_the_first_user() {
    // add(h(x), g(k(y))): k(y) is numbered while g(k(y)) is printed, before
    // h(x) and g(…) get their numbers from add.
    let x = Var::new("x", None, None);
    let y = Var::new("y", None, None);
    let h = call("negative", vec![x.expr().clone()]);
    let k = call("exp", vec![y.expr().clone()]);
    let g = call("log", vec![k]);
    let e = call("add", vec![h, g]);
    assert_eq!(
        print_expr(&e, &NO_TYPES),
        "#[version = \"0.0.5\"]\nfree_var %x;\nfree_var %y;\n%0 = exp(%y);\n%1 = negative(%x);\n%2 = log(%0);\nadd(%1, %2)"
    );
}

#[test]
fn shared_nodes_and_lets() {
    // %0 = (0, 0); let %x = %0; %0
    let t = Expr::tuple(vec![scalar_i32(0), scalar_i32(0)], None);
    let x = Var::new("x", None, None);
    let e = Expr::let_(x, t.clone(), t, None);
    assert_eq!(
        print_expr(&e, &NO_TYPES),
        "#[version = \"0.0.5\"]\n%0 = (0, 0);\nlet %x = %0;\n%0"
    );
}

#[test]
fn names_are_unique_and_sanitised() {
    let a = Var::new("x", Some(Type::scalar(DataType::INT32)), None);
    let b = Var::new("x", None, None);
    let c = Var::new("a.b", None, None);
    let d = Var::new("", None, None);
    let body = Expr::tuple(
        vec![
            a.expr().clone(),
            b.expr().clone(),
            c.expr().clone(),
            d.expr().clone(),
        ],
        None,
    );
    let f = func(vec![a, b, c, d], body, None);
    assert_eq!(
        print_expr(f.expr(), &NO_TYPES),
        "#[version = \"0.0.5\"]\nfn (%x: int32, %x1, %a_b, %v) {\n  (%x, %x1, %a_b, %v)\n}"
    );
}

#[test]
fn attributes_skip_defaults() {
    let conv = op::lookup("nn.conv2d").unwrap();
    let schema = conv.attrs().unwrap();
    let ints = |v: &[i64]| {
        AttrValue::Array(
            v.iter()
                .map(|&v| AttrValue::int_imm(v, DataType::INT32))
                .collect(),
        )
    };
    let fields: Vec<(String, AttrValue)> = schema
        .fields
        .iter()
        .map(|f| {
            let v = match f.name.as_str() {
                "strides" => ints(&[1, 1]),
                "padding" => ints(&[1, 1, 1, 1]),
                "dilation" => ints(&[1, 1]),
                "groups" => AttrValue::Int(1),
                "channels" => AttrValue::int_imm(64, DataType::INT32),
                "kernel_size" => ints(&[3, 3]),
                "data_layout" => AttrValue::Str("NCHW".into()),
                "kernel_layout" => AttrValue::Str("OIHW".into()),
                "out_layout" => AttrValue::Str(String::new()),
                "out_dtype" => AttrValue::DataType(DataType::void()),
                other => panic!("unexpected field {other}"),
            };
            (f.name.clone(), v)
        })
        .collect();
    let attrs = Attrs::new("relay.attrs.Conv2DAttrs", fields);
    let x = Var::new("x", Some(tensor(&[1, 3, 8, 8])), None);
    let w = Var::new("w", Some(tensor(&[64, 3, 3, 3])), None);
    let body = Expr::call(
        Expr::op(conv, None),
        vec![x.expr().clone(), w.expr().clone()],
        Some(attrs),
        None,
    );
    let f = func(vec![x, w], body, None);
    let mut m = IRModule::new();
    m.add_function("main", f);
    assert_eq!(
        print_module(&m, &NO_TYPES),
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(64, 3, 3, 3), float32]) {\n  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3])\n}\n"
    );
}

#[test]
fn constants_go_to_the_metadata_section() {
    let c = Expr::constant(
        TensorData::from_f64s(DataType::FLOAT32, vec![2], &[1.0, 2.0]).unwrap(),
        None,
    );
    let e = call("add", vec![c.clone(), c]);
    let out = print_expr(&e, &NO_TYPES);
    assert!(
        out.starts_with("#[version = \"0.0.5\"]\nadd(meta[relay.Constant][0], meta[relay.Constant][0])\n#[metadata]\n{\n  \"root\": 1, "),
        "{out}"
    );
    let hidden = print_expr(
        &e,
        &PrintOptions {
            show_meta_data: false,
            show_types: false,
            reparseable: true,
        },
    );
    assert!(hidden.ends_with(
        "\n/* For debugging purposes the metadata section has been omitted.\n * If you would like to see the full metadata section you can set the \n * option to `True` when invoking `astext`. \n */"
    ));
}

#[test]
fn type_comments() {
    let t = tensor(&[2]);
    let x = Var::new("x", Some(t.clone()), None).with_checked_type(t.clone());
    let add = Expr::with_type(
        crate::ExprKind::Call(crate::Call {
            callee: Expr::op(op::lookup("add").unwrap(), None),
            args: vec![x.expr().clone(), x.expr().clone()],
            attrs: None,
            type_args: Box::default(),
        }),
        None,
        Some(t.clone()),
    );
    let relu = Expr::with_type(
        crate::ExprKind::Call(crate::Call {
            callee: Expr::op(op::lookup("nn.relu").unwrap(), None),
            args: vec![add],
            attrs: None,
            type_args: Box::default(),
        }),
        None,
        Some(t.clone()),
    );
    let f = func(vec![x], relu, Some(t));
    let mut m = IRModule::new();
    m.add_function("main", f);
    assert_eq!(
        print_module(&m, &PrintOptions::default()),
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32] /* ty=Tensor[(2), float32] */) -> Tensor[(2), float32] {\n  %0 = add(%x, %x) /* ty=Tensor[(2), float32] */;\n  nn.relu(%0) /* ty=Tensor[(2), float32] */\n}\n"
    );
}

#[test]
fn readable_types() {
    let f = Type::func(
        vec![Type::incomplete(), Type::tuple(vec![tensor(&[3])])],
        Type::new(crate::TypeKind::Ref(Type::scalar(DataType::bool()))),
        Vec::new(),
    );
    assert_eq!(
        print_type(&f),
        "fn (_, (Tensor[(3), float32],)) -> ref(bool)"
    );
    let t = Type::tensor(vec![Dim::int64(4), Dim::Any], DataType::float(16));
    assert_eq!(print_type(&t), "Tensor[(4i64, ?), float16]");
}

#[test]
fn deep_chains_print_without_recursion() {
    let relu = op::lookup("nn.relu").unwrap();
    let x = Var::new("x", None, None);
    let mut e = x.expr().clone();
    for _ in 0..100_000 {
        e = Expr::call(Expr::op(relu, None), vec![e], None, None);
    }
    let f = func(vec![x], e, None);
    let out = print_expr(f.expr(), &NO_TYPES);
    assert!(
        out.ends_with("  nn.relu(%99998)\n}"),
        "{}",
        &out[out.len() - 100..]
    );
}

/// Runs `f` on a thread with a small stack: deep nesting must still print
/// (the printer grows its stack when it runs short).
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("printing does not overflow the stack");
}

#[test]
fn deep_nesting_prints_on_a_grown_stack() {
    on_small_stack(|| {
        let c = Var::new("c", Some(Type::scalar(DataType::bool())), None);
        let mut e = scalar_i32(0);
        for i in 0..1000 {
            e = Expr::if_(c.expr().clone(), e, scalar_i32(i), None);
        }
        let f = func(vec![c], e, None);
        let out = print_expr(f.expr(), &NO_TYPES);
        assert!(
            out.ends_with("} else {\n    999\n  }\n}"),
            "{}",
            &out[out.len() - 200..]
        );
    });
}

#[test]
fn deep_types_print_on_a_grown_stack() {
    // Built and dropped here; only printed on the small stack.
    let mut t = Type::scalar(DataType::float(32));
    for _ in 0..5_000 {
        t = Type::tuple(vec![t]);
    }
    let shared = t.clone();
    on_small_stack(move || {
        let text = print_type(&shared);
        let depth = 5_000;
        let expected = "(".repeat(depth) + "float32" + &",)".repeat(depth);
        assert!(text == expected, "{}", &text[..40]);
    });
}

#[test]
fn meta_attrs_and_values() {
    // A call whose attrs type is not the operator's: a meta reference.
    let attrs = Attrs::new(
        "relay.attrs.DensePackAttrs",
        vec![
            ("units".to_string(), AttrValue::Null),
            (
                "out_dtype".to_string(),
                AttrValue::DataType(DataType::void()),
            ),
            (
                "weight_layout".to_string(),
                AttrValue::Str("NC8n".to_string()),
            ),
        ],
    );
    let x = Var::new("x", None, None);
    let e = Expr::call(
        Expr::op(op::lookup("nn.dense").unwrap(), None),
        vec![x.expr().clone(), x.expr().clone()],
        Some(attrs),
        None,
    );
    let out = print_expr(&e, &NO_TYPES);
    assert!(
        out.starts_with("#[version = \"0.0.5\"]\nfree_var %x;\nnn.dense(%x, %x, meta[relay.attrs.DensePackAttrs][0])\n#[metadata]\n"),
        "{out}"
    );
    assert!(out.contains("\"weight_layout\": \"4\""), "{out}");
    // Without the section, the fields are printed instead.
    let out = print_expr(
        &e,
        &PrintOptions {
            show_meta_data: false,
            show_types: false,
            reparseable: true,
        },
    );
    assert_eq!(
        out,
        "#[version = \"0.0.5\"]\nfree_var %x;\nnn.dense(%x, %x, units=None, weight_layout=\"NC8n\")"
    );
}

#[test]
fn function_attributes_and_type_params() {
    let a = crate::TypeVar::new("A", crate::TypeVarKind::Type);
    let x = Var::new("x", Some(Type::var(a.clone())), None);
    let f = Function::new(
        FunctionData {
            params: vec![x.clone()],
            body: x.expr().clone(),
            ret_type: Some(Type::var(a.clone())),
            type_params: vec![a],
            attrs: DictAttrs::new(vec![
                (
                    "Primitive".to_string(),
                    AttrValue::int_imm(1, DataType::INT32),
                ),
                (
                    "Compiler".to_string(),
                    AttrValue::Str("ccompiler".to_string()),
                ),
                (
                    "scale".to_string(),
                    AttrValue::FloatImm {
                        value: 0.5,
                        dtype: DataType::FLOAT32,
                    },
                ),
            ]),
            virtual_device: None,
        },
        None,
    );
    assert_eq!(
        print_expr(f.expr(), &NO_TYPES),
        "#[version = \"0.0.5\"]\nfn [A](%x: A, Primitive=1, Compiler=\"ccompiler\", scale=0.5f) -> A {\n  %x\n}"
    );
}
