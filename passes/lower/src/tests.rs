//! Unit tests of lowering; the corpus and the snapshot tests of diagnostics
//! are in `passes/tests/`.

use super::*;
use relay_ir::op;
use relay_ir::{AttrValue, ExprKind, Pattern, TypeKind};

fn module(text: &str) -> (IRModule, Vec<Diagnostic>) {
    let (m, d) = parse_and_lower("test.relay", text);
    (m, d.into_vec())
}

fn errors(text: &str) -> Vec<String> {
    module(text)
        .1
        .into_iter()
        .filter(|d| d.is_error())
        .map(|d| d.message)
        .collect()
}

fn main_body(m: &IRModule) -> Expr {
    m.function("main").expect("@main").body().clone()
}

#[test]
fn uses_are_the_binding_node() {
    let (m, d) = module("#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(%x, %x) }");
    assert!(d.is_empty(), "{d:?}");
    let f = m.function("main").unwrap();
    let param = f.params()[0].expr().clone();
    let call = f.body().as_call().unwrap();
    assert!(call.args[0].ptr_eq(&param));
    assert!(call.args[1].ptr_eq(&param));
    assert!(call.attrs.is_none());
}

#[test]
fn graph_bindings_share_nodes_and_first_wins() {
    let (m, d) = module(
        "#[version = \"0.0.5\"]\ndef @main(%x: float32) {\n  %0 = add(%x, %x);\n  %0 = negative(%x);\n  multiply(%0, %0)\n}",
    );
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].severity, relay_ir::diagnostic::Severity::Warning);
    let call = main_body(&m);
    let call = call.as_call().unwrap();
    assert!(call.args[0].ptr_eq(&call.args[1]));
    assert_eq!(
        call.args[0].as_call().unwrap().callee.as_op().unwrap().name,
        "add"
    );
}

#[test]
fn expr_statements_become_lets_of_unnamed_vars() {
    let (e, d) = parse_and_lower_expr("e", "(); ()");
    assert!(d.is_empty());
    let ExprKind::Let { var, .. } = e.kind() else {
        panic!()
    };
    assert_eq!(var.name(), "");
    assert!(var.type_annotation().unwrap().is_incomplete());
}

#[test]
fn let_binds_before_its_value_and_shadowing_quirk() {
    // The value of a `let` sees the variable itself.
    let (e, d) = parse_and_lower_expr("e", "let %f = fn (%n) { %f(%n) }; %f");
    assert!(d.is_empty(), "{d:?}");
    let ExprKind::Let { var, value, body } = e.kind() else {
        panic!()
    };
    assert!(body.ptr_eq(var.expr()));
    let f = value.as_function().unwrap();
    assert!(f.body().as_call().unwrap().callee.ptr_eq(var.expr()));
    // A `let` of a parameter's name in the function's scope keeps resolving
    // to the parameter (TVM's first-insert-wins scopes).
    let (m, d) = module("#[version = \"0.0.5\"]\ndef @main(%x: int32) { let %x = 1; %x }");
    assert_eq!(d.len(), 1, "{d:?}");
    let f = m.function("main").unwrap();
    let ExprKind::Let { body, .. } = f.body().kind() else {
        panic!()
    };
    assert!(body.ptr_eq(f.params()[0].expr()));
}

#[test]
fn attrs_have_every_field_in_order() {
    let (m, d) = module(
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 3, 8, 8), float32], %w) { nn.conv2d(%x, %w, channels=4, kernel_size=[3, 3], out_dtype=\"int8\") }",
    );
    assert!(d.is_empty(), "{d:?}");
    let body = main_body(&m);
    let attrs = body.as_call().unwrap().attrs.clone().unwrap();
    assert_eq!(attrs.type_key(), "relay.attrs.Conv2DAttrs");
    let schema = op::attrs_schema("relay.attrs.Conv2DAttrs").unwrap();
    let names: Vec<&str> = attrs.fields().iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, schema.field_names().collect::<Vec<_>>());
    assert!(matches!(
        attrs.get("channels"),
        Some(AttrValue::IntImm { value: 4, .. })
    ));
    assert_eq!(
        attrs.get("kernel_size").unwrap().as_int_array(),
        Some(vec![3, 3])
    );
    assert!(
        matches!(attrs.get("out_dtype"), Some(AttrValue::DataType(d)) if d.to_string() == "int8")
    );
    assert!(matches!(attrs.get("data_layout"), Some(AttrValue::Str(s)) if s == "NCHW"));
}

#[test]
fn attr_errors() {
    let e = errors("#[version = \"0.0.5\"]\ndef @main(%x, %w) { nn.dense(%x, %w) }");
    assert_eq!(e.len(), 1);
    assert!(e[0].contains("Cannot find required field `units`"), "{e:?}");
    let e = errors("#[version = \"0.0.5\"]\ndef @main(%x) { nn.relu(%x, alpha=1) }");
    assert!(e[0].contains("attrs_type_key"), "{e:?}");
    let e = errors("#[version = \"0.0.5\"]\ndef @main(%x) { nn.softmax(%x, axis=\"x\") }");
    assert!(e[0].contains("must be of type `int`"), "{e:?}");
}

#[test]
fn names_are_checked() {
    let e = errors("#[version = \"0.0.5\"]\ndef @main(%x) { nn.relux(@mian(%y)) }");
    assert_eq!(e.len(), 3, "{e:?}");
}

#[test]
fn adts_and_patterns() {
    let text = "#[version = \"0.0.5\"]
type List[A] { Cons(A, List[A]), Nil }
def @length[A](%xs: List[A]) -> int32 {
  match (%xs) {
    Cons(_, %rest) => add(1, @length(%rest)),
    Nil => 0,
  }
}
def @empty() { Nil }";
    let (m, d) = module(text);
    assert!(d.is_empty(), "{d:?}");
    let list = m.type_definition("List").unwrap();
    assert_eq!(list.constructors.len(), 2);
    assert_eq!(list.constructors[1].data().tag, 1);
    let f = m.function("length").unwrap();
    let ty = f.params()[0].type_annotation().unwrap();
    assert!(matches!(ty.kind(), TypeKind::Call { args, .. } if args.len() == 1));
    let ExprKind::Match {
        clauses, complete, ..
    } = f.body().kind()
    else {
        panic!()
    };
    assert!(complete);
    assert!(
        matches!(&clauses[0].pattern, Pattern::Constructor(c, fields) if c.name() == "Cons" && fields.len() == 2)
    );
    // A constructor without fields, not called, is a call.
    let empty = m.function("empty").unwrap().body().clone();
    assert!(matches!(
        empty.as_call().unwrap().callee.kind(),
        ExprKind::Constructor(_)
    ));
}

#[test]
fn literals_are_exact() {
    let (e, d) = parse_and_lower_expr("e", "(1, 2i64, -3i16, 0.5f16, 1.1f, 2.5f64, True)");
    assert!(d.is_empty());
    let ExprKind::Tuple(fields) = e.kind() else {
        panic!()
    };
    let dtypes: Vec<String> = fields
        .iter()
        .map(|f| f.as_constant().unwrap().dtype.to_string())
        .collect();
    assert_eq!(
        dtypes,
        ["int32", "int64", "int16", "float16", "float32", "float64", "bool"]
    );
    assert_eq!(fields[2].as_constant().unwrap().get_i64(0).unwrap(), -3);
    assert_eq!(fields[4].as_constant().unwrap().data, 1.1f32.to_le_bytes());
}

#[test]
fn first_let_of_a_chain_binds_in_the_enclosing_scope() {
    // TVM binds the first `let` of a chain in the scope that is current, so
    // `%y` is still visible after the parenthesised sequence.
    let (e, d) = parse_and_lower_expr("e", "(let %y = 1; %y, %y)");
    assert!(d.is_empty(), "{d:?}");
    let ExprKind::Tuple(fields) = e.kind() else {
        panic!()
    };
    let ExprKind::Let { var, .. } = fields[0].kind() else {
        panic!()
    };
    assert!(fields[1].ptr_eq(var.expr()));
    // Blocks and branches have scopes of their own.
    let (_, d) = parse_and_lower_expr("e", "({ let %y = 1; %y }, %y)");
    assert_eq!(d.error_count(), 1);
}

#[test]
fn free_vars_and_undeclared_locals() {
    let (e, d) = parse_and_lower_expr("e", "free_var %x: float32; add(%x, %x)");
    assert!(d.is_empty());
    let call = e.as_call().unwrap();
    assert!(call.args[0].ptr_eq(&call.args[1]));
    let x = call.args[0].as_var().unwrap();
    assert!(x.type_annotation().is_some());
    // An undeclared local is reported at each use and stands for one variable.
    let (e, d) = parse_and_lower_expr("e", "add(%q, %q)");
    assert_eq!(d.error_count(), 2);
    let call = e.as_call().unwrap();
    assert!(call.args[0].ptr_eq(&call.args[1]));
}

#[test]
fn globals_and_init_module() {
    let (m, d) = module(
        "#[version = \"0.0.5\"]\ndef @main(%x: int32) { @f(%x) }\ndef @f(%y: int32) { @main(%y) }",
    );
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(m.function_count(), 2);
    // A module seeded with another one knows its globals and constructors.
    let prelude = "#[version = \"0.0.5\"]\ntype List[A] { Cons(A, List[A]), Nil }\ndef @hd[A](%l: List[A]) -> A { match? (%l) { Cons(%x, _) => %x } }";
    let (base, d) = module(prelude);
    assert!(d.is_empty(), "{d:?}");
    let text = "#[version = \"0.0.5\"]\ndef @one() -> int32 { @hd(Cons(1, Nil)) }";
    let parse = relay_syntax::parse_module(text);
    let lowered = lower_module_into(FileId(1), &parse.source_file().unwrap(), base);
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    assert!(lowered.module.function("hd").is_some() && lowered.module.function("one").is_some());
}

#[test]
fn metadata_constants_are_exact_and_shared() {
    use relay_ir::metadata::{constants_section, ConstantSpec, TensorData};
    let data =
        TensorData::from_f64s(relay_ir::dtype::DataType::FLOAT32, vec![2], &[1.5, -2.0]).unwrap();
    let section = constants_section(&[ConstantSpec {
        data: data.clone(),
        checked_type: None,
        span: None,
    }]);
    let text = format!(
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) {{ add(meta[relay.Constant][0], meta[relay.Constant][0]) }}\n#[metadata]\n{}",
        section.to_json()
    );
    let (m, d) = module(&text);
    assert!(d.is_empty(), "{d:?}");
    let body = main_body(&m);
    let call = body.as_call().unwrap();
    assert_eq!(**call.args[0].as_constant().unwrap(), data);
    assert!(call.args[0].ptr_eq(&call.args[1]));
}

#[test]
fn long_chains_do_not_recurse() {
    // 20000 graph bindings, 5000 `let`s interleaved with dropped values, a
    // long infix chain: lowered on a test thread's default stack.
    let mut text =
        String::from("#[version = \"0.0.5\"]\ndef @main(%x: float32) {\n  %0 = add(%x, %x);\n");
    for i in 1..20000 {
        text.push_str(&format!("  %{i} = add(%{}, %x);\n", i - 1));
    }
    for i in 0..5000 {
        text.push_str(&format!("  let %v{i} = %19999;\n  %v{i};\n"));
    }
    text.push_str("  %x");
    for _ in 0..1500 {
        text.push_str(" + %x");
    }
    text.push_str("\n}\n");
    let (m, d) = module(&text);
    assert!(d.is_empty(), "{:?}", d.first());
    let mut depth = 0;
    let mut e = main_body(&m);
    while let ExprKind::Let { body, .. } = e.kind() {
        depth += 1;
        let next = body.clone();
        e = next;
    }
    assert_eq!(depth, 10000);
}

/// A lenient lowering reads the `/* ty=… */` comment after a `meta[…]`
/// reference without a section from the text, which it writes out of the
/// tree only when it meets such a reference; the whole lowering and the
/// editor's (which lowers the definitions of a large module on other
/// threads first) find the same types.
#[test]
fn lenient_meta_without_a_section_reads_its_type_comment() {
    let text = "#[version = \"0.0.5\"]\n\
                def @main(%x: Tensor[(2), float32]) {\n  \
                add(%x, meta[relay.Constant][0] /* ty=Tensor[(2), float32] */)\n}\n\
                def @other() {\n  meta[relay.Constant][1] /* ty=Tensor[(3), int8] */\n}\n";
    // The annotation's dimensions and dtype.
    let types = |module: &IRModule, name: &str| -> Option<(Vec<String>, String)> {
        let body = module.function(name).expect("the function").body().clone();
        let constant = match body.as_call() {
            Some(call) => call.args[1].clone(),
            None => body,
        };
        let var = constant.as_var().expect("an opaque constant");
        match var.type_annotation()?.kind() {
            TypeKind::Tensor(t) => Some((
                t.shape.iter().map(|d| format!("{d:?}")).collect(),
                format!("{:?}", t.dtype),
            )),
            _ => None,
        }
    };
    let (whole, diagnostics) = parse_and_lower_with("m.relay", text, LowerOptions::LENIENT);
    assert!(
        diagnostics
            .iter()
            .all(|d| d.code == Code::MetaWithoutSection),
        "{diagnostics:?}"
    );
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    let parse = relay_syntax::parse_with(
        text,
        relay_syntax::Entry::Module,
        LowerOptions::LENIENT.parse_options(),
    );
    let mut kept = IncrementalLowering::new();
    let (editor, _) =
        lower_incrementally(FileId(0), &parse, LowerOptions::LENIENT, &mut kept).expect("a module");
    for name in ["main", "other"] {
        let found = types(&whole, name);
        assert!(
            found.is_some(),
            "@{name} has no annotation from its comment"
        );
        assert_eq!(found, types(&editor.module, name));
    }
    let (main, other) = (types(&whole, "main"), types(&whole, "other"));
    assert_eq!(main.as_ref().map(|t| t.0.len()), Some(1));
    assert_ne!(main.map(|t| t.1), other.map(|t| t.1));
}
