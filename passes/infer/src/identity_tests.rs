//! Tests of object identity in inferred types: which dimension and type
//! objects the constants' checked types share, as the `#[metadata]` section
//! shows them, and the symbolic sizes relations compute (`tir.Mul`,
//! `tir.Add`).
//!
//! The expected sharing follows TVM's inference: a constant's type is made
//! anew at each inference; a relation that assigns a type to an input builds
//! it from the objects it has at hand (`units` of `nn.dense`, a dimension of
//! the data for `nn.bias_add`), and unifying two equal tensor types keeps
//! the assigned one.

use super::infer_module;
use relay_ir::dtype::DataType;
use relay_ir::metadata::{constants_section, ConstantSpec, NodeRef, ObjectGraph, TensorData};
use relay_ir::printer::{print_module, PrintOptions};
use relay_ir::{Dim, Expr, ExprKind, IRModule};
use relay_lower::parse_and_lower;

/// `text` followed by a metadata section holding zero-filled float32
/// constants of the given shapes, parsed, lowered and type-checked.
fn typed_with_constants(text: &str, shapes: &[&[i64]]) -> IRModule {
    let constants: Vec<ConstantSpec> = shapes
        .iter()
        .map(|shape| ConstantSpec {
            data: TensorData::zeros(DataType::FLOAT32, shape.to_vec()).expect("a valid shape"),
            checked_type: None,
            span: None,
        })
        .collect();
    let section = constants_section(&constants).to_json();
    typed(&format!("{text}\n#[metadata]\n{section}"))
}

fn typed(source: &str) -> IRModule {
    let (module, diagnostics) = parse_and_lower("t.relay", source);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    let (typed, diagnostics) = infer_module(&module);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    typed
}

fn printed(m: &IRModule) -> String {
    print_module(
        m,
        &PrintOptions {
            show_meta_data: true,
            show_types: true,
            reparseable: true,
        },
    )
}

/// The metadata section of a printed module.
fn section(text: &str) -> ObjectGraph {
    let at = text.find("#[metadata]").expect("a metadata section");
    ObjectGraph::parse(&text[at + "#[metadata]".len()..]).expect("a valid section")
}

/// For each `meta[relay.Constant][i]`: the node of its checked type and the
/// nodes of its shape's dimensions.
fn constant_types(graph: &ObjectGraph) -> Vec<(usize, Vec<usize>)> {
    let table = graph.table().expect("a meta table");
    let constants: Vec<NodeRef<'_>> = table.entries("relay.Constant").expect("constants");
    constants
        .iter()
        .map(|c| {
            let ty = c.field("_checked_type_").expect("a checked type");
            let dims = ty.field("shape").and_then(|s| s.items()).expect("a shape");
            (ty.index(), dims.iter().map(NodeRef::index).collect())
        })
        .collect()
}

#[test]
fn dense_and_bias_add_share_dimension_objects() {
    // TVM: the weight of `dense(x, w, units=4)` is assigned `(units, x.1)`,
    // the bias of `bias_add` `(output.1)` = `(units)`; the second weight's
    // reduction dimension is the first dense's `units`.
    let m = typed_with_constants(
        "#[version = \"0.0.5\"]\n\
         def @main(%x: Tensor[(1, 3), float32]) {\n\
           %0 = nn.dense(%x, meta[relay.Constant][0], units=4);\n\
           %1 = nn.bias_add(%0, meta[relay.Constant][1]);\n\
           %2 = nn.dense(%1, meta[relay.Constant][2], units=2);\n\
           nn.bias_add(%2, meta[relay.Constant][3])\n\
         }",
        &[&[4, 3], &[4], &[2, 4], &[2]],
    );
    let graph = section(&printed(&m));
    let types = constant_types(&graph);
    let dims: Vec<&[usize]> = types.iter().map(|(_, d)| d.as_slice()).collect();
    let (units4, x1, units2) = (dims[0][0], dims[0][1], dims[2][0]);
    assert_eq!(dims[1], [units4]);
    assert_eq!(dims[2], [units2, units4]);
    assert_eq!(dims[3], [units2]);
    assert!(units4 != x1 && units4 != units2 && x1 != units2);
    // Four distinct type objects.
    let mut type_nodes: Vec<usize> = types.iter().map(|(t, _)| *t).collect();
    type_nodes.sort_unstable();
    type_nodes.dedup();
    assert_eq!(type_nodes.len(), 4);
}

#[test]
fn batch_norm_parameters_have_their_own_types_with_one_dimension() {
    // TVM assigns each parameter a new `TensorType({axis_size})`: four type
    // objects, one dimension object (the data's).
    let m = typed_with_constants(
        "#[version = \"0.0.5\"]\n\
         def @main(%x: Tensor[(1, 2, 3, 3), float32]) {\n\
           %0 = nn.batch_norm(%x, meta[relay.Constant][0], meta[relay.Constant][1], \
                meta[relay.Constant][2], meta[relay.Constant][3]);\n\
           %0.0\n\
         }",
        &[&[2], &[2], &[2], &[2]],
    );
    let types = constant_types(&section(&printed(&m)));
    let mut type_nodes: Vec<usize> = types.iter().map(|(t, _)| *t).collect();
    type_nodes.sort_unstable();
    type_nodes.dedup();
    assert_eq!(type_nodes.len(), 4);
    assert!(types.iter().all(|(_, dims)| dims == &types[0].1));
}

#[test]
fn unassigned_constants_get_fresh_types_at_each_inference() {
    // Nothing assigns the constant a type: it keeps the fresh one its data
    // gives, a new object at every inference (also of an equal type).
    let m = typed_with_constants(
        "#[version = \"0.0.5\"]\n\
         def @main(%x: Tensor[(2, 3), float32]) {\n\
           add(%x, meta[relay.Constant][0])\n\
         }",
        &[&[3]],
    );
    let constant = |m: &IRModule| -> Expr {
        let main = m.function("main").expect("main");
        let ExprKind::Call(call) = main.body().kind() else {
            panic!("a call");
        };
        call.args[1].clone()
    };
    let first = constant(&m);
    let x_dim = main_param_dim(&m, 1);
    let dim = |e: &Expr| {
        e.checked_type()
            .and_then(|t| t.as_tensor())
            .expect("typed")
            .shape[0]
            .clone()
    };
    assert!(!dim(&first).same_as(&x_dim));
    let (again, diagnostics) = infer_module(&m);
    assert!(!diagnostics.has_errors());
    let second = constant(&again);
    let (t1, t2) = (
        first.checked_type().unwrap(),
        second.checked_type().unwrap(),
    );
    assert_eq!(t1, t2);
    assert!(!t1.ptr_eq(t2));
    assert!(!dim(&first).same_as(&dim(&second)));
}

fn main_param_dim(m: &IRModule, i: usize) -> Dim {
    let main = m.function("main").expect("main");
    let ty = main.params()[0].type_annotation().expect("annotated");
    ty.as_tensor().expect("a tensor").shape[i].clone()
}

/// A metadata section with one `tir.SizeVar` named `n`.
const SIZE_VAR_SECTION: &str = r#"#[metadata]
{
  "root": 1,
  "nodes": [
    {"type_key": ""},
    {"type_key": "Map", "keys": ["tir.SizeVar"], "data": [2]},
    {"type_key": "Array", "data": [3]},
    {"type_key": "tir.SizeVar", "attrs": {"dtype": "int32", "name": "4", "span": "0", "type_annotation": "5"}},
    {"type_key": "runtime.String", "repr_str": "n"},
    {"type_key": "PrimType", "attrs": {"dtype": "int32"}}
  ],
  "b64ndarrays": [],
  "attrs": {"tvm_version": "0.13.0"}
}"#;

/// The printed module and the type-key/`a`/`b` of the computed node it
/// prints as `meta[{key}][0]`.
fn symbolic(body: &str, key: &str) -> (String, NodeRefSummary) {
    let m = typed(&format!(
        "#[version = \"0.0.5\"]\n\
         def @main(%x: Tensor[(2, meta[tir.SizeVar][0], 3), float32]) {{ {body} }}\n\
         {SIZE_VAR_SECTION}"
    ));
    let text = printed(&m);
    let graph = section(&text);
    let table = graph.table().expect("a meta table");
    let node = table.entries(key).expect("the computed node")[0];
    let size_var = table.entries("tir.SizeVar").expect("the size variable")[0];
    let a = node.field("a").expect("a");
    let b = node.field("b").expect("b");
    let summary = NodeRefSummary {
        a_is_size_var: a.index() == size_var.index(),
        b_value: b.int_field("value").ok(),
        dtype: node.dtype_field("dtype").ok(),
    };
    (text, summary)
}

#[derive(Debug, PartialEq)]
struct NodeRefSummary {
    a_is_size_var: bool,
    b_value: Option<i64>,
    dtype: Option<DataType>,
}

#[test]
fn batch_flatten_multiplies_a_symbolic_size() {
    // `1 * 2` folds to 2, `2 * n` is a `tir.Mul` of the immediate 2 and `n`,
    // `(2 * n) * 3` another `tir.Mul`: here the flattened size is
    // `Mul(Mul(2, n), 3)`, printed as the first `tir.Mul` met.
    let m = typed(&format!(
        "#[version = \"0.0.5\"]\n\
         def @main(%x: Tensor[(1, 2, meta[tir.SizeVar][0], 3), float32]) {{ nn.batch_flatten(%x) }}\n\
         {SIZE_VAR_SECTION}"
    ));
    let text = printed(&m);
    assert!(
        text.contains("-> Tensor[(1, meta[tir.Mul][0]), float32]"),
        "{text}"
    );
    assert!(text.contains("/* ty=Tensor[(1, meta[tir.Mul][0]), float32] */"));
    let graph = section(&text);
    let table = graph.table().expect("a meta table");
    let outer = table.entries("tir.Mul").expect("a tir.Mul")[0];
    let inner = outer.field("a").expect("a");
    assert_eq!(inner.type_key(), "tir.Mul");
    assert_eq!(
        inner.field("a").and_then(|a| a.int_field("value")).ok(),
        Some(2)
    );
    let size_var = table.entries("tir.SizeVar").expect("the size variable")[0];
    assert_eq!(
        inner.field("b").map(|b| b.index()).ok(),
        Some(size_var.index())
    );
    assert_eq!(
        outer.field("b").and_then(|b| b.int_field("value")).ok(),
        Some(3)
    );
}

#[test]
fn multiplying_by_one_keeps_the_size_variable() {
    // `1 * n` is `n` itself and `n * 3` one `tir.Mul` of `n` and 3.
    let (text, mul) = symbolic("nn.batch_flatten(%x)", "tir.Mul");
    assert!(
        text.contains("Tensor[(2, meta[tir.Mul][0]), float32]"),
        "{text}"
    );
    assert_eq!(
        mul,
        NodeRefSummary {
            a_is_size_var: true,
            b_value: Some(3),
            dtype: Some(DataType::INT32),
        }
    );
}

#[test]
fn padding_adds_to_a_symbolic_size() {
    // `n + (1 + 2)`: the widths fold into one immediate of `n`'s dtype.
    let (text, add) = symbolic(
        "nn.pad(%x, 0f, pad_width=[[0, 0], [1, 2], [0, 0]])",
        "tir.Add",
    );
    assert!(
        text.contains("Tensor[(2, meta[tir.Add][0], 3), float32]"),
        "{text}"
    );
    assert_eq!(
        add,
        NodeRefSummary {
            a_is_size_var: true,
            b_value: Some(3),
            dtype: Some(DataType::INT32),
        }
    );
}

/// The type of each annotated parameter, as the typed function's node and
/// its function type hold them, and whether both are the annotation object.
fn parameter_types_are_annotations(typed: &IRModule, name: &str) -> Vec<bool> {
    let function = typed.function(name).expect("the function");
    let Some(relay_ir::TypeKind::Func(ft)) = function.expr().checked_type().map(|t| t.kind())
    else {
        panic!("a function type");
    };
    function
        .params()
        .iter()
        .zip(&ft.params)
        .map(|(param, in_function_type)| {
            let annotation = param.type_annotation().expect("annotated");
            let checked = param.expr().checked_type().expect("typed");
            annotation.ptr_eq(checked) && in_function_type.ptr_eq(checked)
        })
        .collect()
}

/// Issue 19: an annotated parameter is typed by its annotation object (as
/// TVM's inferencer starts from it), and the function type shares it; a
/// second, equal copy per parameter was 51,590 extra types (about 6 MB) in
/// the typed 10 MB benchmark module. The incremental checker carries a
/// result over to a new lowering of the same text the same way (the new
/// annotations, not the last lowering's).
#[test]
fn annotated_parameters_share_their_annotation() {
    let text = |body: &str| {
        format!(
            "#[version = \"0.0.5\"]\n\
             def @f(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) {{ {body} }}"
        )
    };
    let (module, _) = parse_and_lower("t.relay", &text("nn.dense(%x, %w)"));
    let (typed, diagnostics) = infer_module(&module);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    assert_eq!(parameter_types_are_annotations(&typed, "f"), [true, true]);

    let mut checker = super::IncrementalChecker::new();
    let _ = checker.check(&module);
    // The same text lowered again (new nodes, new annotation objects), one
    // space further: the cached result is carried over.
    let (again, _) = parse_and_lower("t.relay", &text(" nn.dense(%x, %w)"));
    let (typed, _, stats) = checker.check(&again);
    assert_eq!(stats.remapped, 1);
    assert_eq!(parameter_types_are_annotations(&typed, "f"), [true, true]);
}
