//! Tests of the operator registry against facts of TVM v0.13.0 and against the
//! operators used by the conformance corpus.

use super::*;

/// Every operator used as a callee anywhere in the conformance corpus
/// (`models`, `parser/ok`, `passes`, `std`; names occurring only in texts TVM
/// rejected are left out), collected by scanning the corpus once.
#[rustfmt::skip]
const CORPUS_OPS: &[&str] = &[
    "abs", "add", "all", "annotation.stop_fusion", "any", "arange", "argmax", "argmin",
    "argsort", "broadcast_to", "cast", "cast_like", "ceil", "clip", "collapse_sum_like",
    "collapse_sum_to", "concatenate", "divide", "dyn.broadcast_to", "dyn.full",
    "dyn.image.resize2d", "dyn.nn.pad", "dyn.nn.upsampling", "dyn.nn.upsampling3d", "dyn.ones",
    "dyn.reshape", "dyn.sparse_to_dense", "dyn.strided_slice", "dyn.tile", "dyn.topk",
    "dyn.zeros", "equal", "erf", "exp", "expand_dims", "fast_erf", "fast_exp", "fast_tanh",
    "floor_mod", "full", "full_like", "greater", "greater_equal", "image.resize2d",
    "layout_transform", "left_shift", "less", "log", "matrix_set_diag", "max", "maximum",
    "mean", "memory.alloc_storage", "memory.kill", "min", "multiply", "ndarray_size",
    "negative", "nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool3d", "nn.adaptive_max_pool1d",
    "nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d", "nn.batch_flatten", "nn.batch_matmul",
    "nn.batch_norm", "nn.batch_to_space_nd", "nn.bias_add", "nn.bitserial_dense",
    "nn.contrib_conv2d_NCHWc", "nn.contrib_dense_pack", "nn.contrib_depthwise_conv2d_NCHWc",
    "nn.conv1d", "nn.conv2d", "nn.conv2d_transpose", "nn.conv3d", "nn.conv3d_transpose",
    "nn.deformable_conv2d", "nn.dense", "nn.dropout", "nn.fast_softmax",
    "nn.global_avg_pool2d", "nn.global_max_pool2d", "nn.instance_norm", "nn.l2_normalize",
    "nn.layer_norm", "nn.lrn", "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d",
    "nn.nll_loss", "nn.pad", "nn.relu", "nn.softmax", "nn.space_to_batch_nd", "nn.upsampling",
    "nn.upsampling3d", "on_device", "one_hot", "ones", "ones_like", "power", "prod", "qnn.add",
    "qnn.concatenate", "qnn.conv2d", "qnn.conv2d_transpose", "qnn.dense", "qnn.quantize",
    "qnn.requantize", "repeat", "reshape", "reshape_like", "rsqrt", "shape_of", "sigmoid",
    "slice_like", "sparse_to_dense", "split", "sqrt", "squeeze", "stack", "strided_slice",
    "subtract", "sum", "take", "tanh", "tile", "topk", "transpose", "trunc", "variance",
    "vision.roi_align", "vision.roi_pool", "where", "zeros", "zeros_like",
];

/// Operators produced by the infix syntax (`a + b`, `a < b`, ...).
#[rustfmt::skip]
const INFIX_OPS: &[&str] = &[
    "add", "subtract", "multiply", "divide", "less", "greater", "less_equal", "greater_equal",
    "equal", "not_equal",
];

fn op(name: &str) -> &'static OpDef {
    lookup(name).unwrap_or_else(|| panic!("operator `{name}` missing"))
}

fn schema_of(name: &str) -> &'static AttrsSchema {
    op(name)
        .attrs()
        .unwrap_or_else(|| panic!("operator `{name}` has no attrs schema"))
}

fn ints(values: &[i64]) -> AttrDefault {
    AttrDefault::Array(values.iter().map(|&v| AttrDefault::Int(v)).collect())
}

#[test]
fn registry_loads_with_every_tvm_operator() {
    assert_eq!(all_ops().len(), 302);
    // 147 operator attrs types and `attrs.TestAttrs`, which belongs to no operator.
    assert_eq!(all_attrs_schemas().len(), 148);
    assert!(
        all_ops().windows(2).all(|w| w[0].name < w[1].name),
        "ops sorted and unique"
    );
    assert!(all_attrs_schemas()
        .windows(2)
        .all(|w| w[0].type_key < w[1].type_key));
}

#[test]
fn every_corpus_and_infix_operator_resolves() {
    let missing: Vec<_> = CORPUS_OPS
        .iter()
        .chain(INFIX_OPS)
        .filter(|name| lookup(name).is_none())
        .collect();
    assert!(missing.is_empty(), "missing operators: {missing:?}");
}

#[test]
fn constructors_and_keywords_are_not_operators() {
    for name in [
        "Cons",
        "Nil",
        "Some",
        "None",
        "fn",
        "if",
        "ref",
        "ref_read",
        "ref_write",
        "match",
    ] {
        assert!(lookup(name).is_none(), "{name}");
    }
}

#[test]
fn every_declared_attrs_type_has_a_schema() {
    for op in all_ops() {
        if let Some(key) = &op.attrs_type {
            assert!(
                op.attrs().is_some() || is_dict_attrs(key),
                "{}: {key}",
                op.name
            );
        }
    }
    assert_eq!(
        op("vm.invoke_tvm_op").attrs_type.as_deref(),
        Some("DictAttrs")
    );
}

/// `call_attrs` names the type of an operator that registers none: TVM
/// registers `cumsum`, `cumprod` and `unique` without `set_attrs_type`, so
/// its printer writes their attributes as metadata.
#[test]
fn call_attrs_types_belong_to_operators_without_a_registered_type() {
    for op in all_ops() {
        if let Some(key) = &op.call_attrs_type {
            assert!(
                op.attrs_type.is_none(),
                "{}: both attrs and call_attrs",
                op.name
            );
            assert!(
                attrs_schema(key).is_some(),
                "{}: {key} has no schema",
                op.name
            );
            assert_eq!(op.call_attrs(), Some(key.as_str()));
        }
    }
    for name in ["cumsum", "cumprod"] {
        assert_eq!(op(name).attrs_type, None);
        assert_eq!(op(name).call_attrs(), Some("relay.attrs.ScanopAttrs"));
    }
    assert_eq!(op("unique").call_attrs(), Some("relay.attrs.UniqueAttrs"));
    assert_eq!(
        crate::op::untyped_op_attrs_type("cumsum"),
        Some("relay.attrs.ScanopAttrs")
    );
    assert_eq!(crate::op::untyped_op_attrs_type("nn.conv2d"), None);
}

#[test]
fn conv2d_fields_in_declaration_order_with_defaults() {
    let conv = op("nn.conv2d");
    assert_eq!(conv.num_inputs, 2);
    assert_eq!(
        conv.argument_names().collect::<Vec<_>>(),
        ["data", "weight"]
    );
    assert_eq!(conv.pattern, Some(OpPattern::OutEWiseFusable));
    assert_eq!(conv.support_level, Some(2));
    assert_eq!(conv.type_rel.as_deref(), Some("Conv2D"));

    let attrs = conv.attrs().unwrap();
    assert_eq!(attrs.type_key, "relay.attrs.Conv2DAttrs");
    let names: Vec<_> = attrs.field_names().collect();
    assert_eq!(
        names,
        [
            "strides",
            "padding",
            "dilation",
            "groups",
            "channels",
            "kernel_size",
            "data_layout",
            "kernel_layout",
            "out_layout",
            "out_dtype"
        ]
    );
    let default = |name: &str| &attrs.field(name).unwrap().default;
    assert_eq!(default("strides"), &ints(&[1, 1]));
    assert_eq!(default("padding"), &ints(&[0, 0]));
    assert_eq!(default("dilation"), &ints(&[1, 1]));
    assert_eq!(default("groups"), &AttrDefault::Int(1));
    assert_eq!(default("channels"), &AttrDefault::Null);
    assert_eq!(default("kernel_size"), &AttrDefault::Null);
    assert_eq!(default("data_layout"), &AttrDefault::Str("NCHW".into()));
    assert_eq!(default("kernel_layout"), &AttrDefault::Str("OIHW".into()));
    assert_eq!(default("out_layout"), &AttrDefault::Str(String::new()));
    assert!(default("out_dtype").is_void_dtype());
    assert_eq!(attrs.field("channels").unwrap().ty, AttrType::PrimExpr);
    assert_eq!(
        attrs.field("padding").unwrap().ty,
        AttrType::Array(Box::new(AttrType::PrimExpr))
    );
    assert_eq!(attrs.field("groups").unwrap().ty, AttrType::Int);
    assert_eq!(attrs.field("out_dtype").unwrap().ty, AttrType::DataType);
    assert_eq!(attrs.field_index("kernel_size"), Some(5));

    // Shared with the other Conv2DAttrs users.
    for name in [
        "nn.contrib_conv2d_NCHWc",
        "nn.contrib_depthwise_conv2d_NCHWc",
        "qnn.conv2d",
    ] {
        assert!(std::ptr::eq(schema_of(name), attrs), "{name}");
    }
}

#[test]
fn required_fields() {
    let dense = schema_of("nn.dense");
    assert_eq!(dense.type_key, "relay.attrs.DenseAttrs");
    assert!(dense.field("units").unwrap().is_required());
    assert!(dense.field("out_dtype").unwrap().default.is_void_dtype());
    assert_eq!(dense.required_fields().count(), 1);

    let reshape = schema_of("reshape");
    let newshape = reshape.field("newshape").unwrap();
    assert!(newshape.is_required());
    assert_eq!(newshape.ty, AttrType::Array(Box::new(AttrType::Integer)));
    assert_eq!(
        reshape.field("allowzero").unwrap().default,
        AttrDefault::Bool(false)
    );

    let pool = schema_of("nn.max_pool2d");
    assert!(pool.field("pool_size").unwrap().is_required());
    assert_eq!(pool.field("padding").unwrap().default, ints(&[0, 0]));

    let init = schema_of("zeros");
    assert_eq!(init.field("shape").unwrap().default, AttrDefault::Required);
    assert_eq!(
        init.field("shape").unwrap().ty.element_type(),
        Some(&AttrType::Integer),
        "Optional<Array<Integer>>"
    );
    assert!(schema_of("cast").field("dtype").unwrap().is_required());
    assert!(schema_of("split")
        .field("indices_or_sections")
        .unwrap()
        .is_required());
}

#[test]
fn scalar_and_special_defaults() {
    let bn = schema_of("nn.batch_norm");
    assert_eq!(
        bn.field_names().collect::<Vec<_>>(),
        ["axis", "epsilon", "center", "scale"]
    );
    assert_eq!(
        bn.field("epsilon").unwrap().default,
        AttrDefault::Double(1e-5)
    );
    assert_eq!(bn.field("scale").unwrap().default, AttrDefault::Bool(true));

    assert_eq!(
        schema_of("nn.softmax").field("axis").unwrap().default,
        AttrDefault::Int(-1)
    );
    assert_eq!(
        schema_of("nn.dropout").field("rate").unwrap().default,
        AttrDefault::Double(0.5)
    );
    assert_eq!(schema_of("nn.avg_pool2d").fields.len(), 8);

    let on_device = schema_of("on_device");
    assert_eq!(
        on_device.field("virtual_device").unwrap().default,
        AttrDefault::FullyUnconstrained
    );
    assert_eq!(
        on_device.field("constrain_body").unwrap().default,
        AttrDefault::Bool(true)
    );

    let leaky = schema_of("nn.leaky_relu").field("alpha").unwrap();
    assert_eq!(
        (leaky.default.clone(), leaky.lower_bound),
        (AttrDefault::Double(0.25), Some(0.0))
    );

    let prior = schema_of("vision.multibox_prior");
    assert_eq!(
        prior.field("steps").unwrap().default,
        AttrDefault::Array(vec![AttrDefault::Double(-1.0), AttrDefault::Double(-1.0)])
    );
    let call = attrs_schema("relay.attrs.CallLoweredAttrs").unwrap();
    assert_eq!(
        call.field("metadata").unwrap().default,
        AttrDefault::EmptyMap
    );
    let resize = schema_of("image.resize2d");
    assert_eq!(resize.field("roi").unwrap().default, AttrDefault::Null);
    assert_eq!(
        resize.field("roi").unwrap().ty,
        AttrType::Array(Box::new(AttrType::FloatImm))
    );
}

#[test]
fn patterns_and_flags() {
    let pattern = |name: &str| op(name).pattern;
    assert_eq!(pattern("add"), Some(OpPattern::Broadcast));
    assert_eq!(pattern("nn.relu"), Some(OpPattern::ElemWise));
    assert_eq!(pattern("concatenate"), Some(OpPattern::Injective));
    assert_eq!(pattern("sum"), Some(OpPattern::CommReduce));
    assert_eq!(pattern("nn.dense"), Some(OpPattern::OutEWiseFusable));
    assert_eq!(pattern("nn.dropout"), Some(OpPattern::Opaque));
    // Registered from TVM's Python package rather than C++.
    assert_eq!(pattern("zeros"), Some(OpPattern::ElemWise));
    assert_eq!(pattern("layout_transform"), Some(OpPattern::Injective));
    assert_eq!(pattern("argsort"), Some(OpPattern::Opaque));
    assert_eq!(
        pattern("vision.roi_align"),
        Some(OpPattern::OutEWiseFusable)
    );
    assert_eq!(pattern("qnn.requantize"), Some(OpPattern::ElemWise));
    // Not registered at all.
    assert_eq!(pattern("nn.layer_norm"), None);
    assert_eq!(op("nn.layer_norm").fusion_pattern(), OpPattern::Opaque);

    assert!(op("nn.dropout").stateful);
    assert!(op("memory.kill").stateful && op("memory.kill").non_computational);
    assert!(!op("add").stateful && !op("add").non_computational);
    assert!(op("on_device").non_computational);
    assert!(op("qnn.requantize").non_computational);

    assert_eq!(OpPattern::OutEWiseFusable.code(), 4);
    assert_eq!(OpPattern::from_code(7), Some(OpPattern::Tuple));
    assert_eq!(
        OpPattern::from_name("CommReduce"),
        Some(OpPattern::CommReduce)
    );
}

#[test]
fn argument_lists() {
    assert_eq!(op("nn.batch_norm").num_inputs, 5);
    assert_eq!(op("zeros").num_inputs, 0);
    assert_eq!(op("concatenate").arguments[0].name, "data");
    assert_eq!(
        op("where").argument_names().collect::<Vec<_>>(),
        ["condition", "x", "y"]
    );
    // TVM's own inconsistencies are kept as registered.
    assert_eq!(
        (
            op("dyn.strided_slice").num_inputs,
            op("dyn.strided_slice").arguments.len()
        ),
        (4, 5)
    );
    assert_eq!(
        (op("qnn.add").num_inputs, op("qnn.add").arguments.len()),
        (8, 10)
    );
    for op in all_ops() {
        let exceptions = ["dyn.strided_slice", "qnn.add", "qnn.mul", "qnn.subtract"];
        if !exceptions.contains(&op.name.as_str()) {
            assert_eq!(op.num_inputs as usize, op.arguments.len(), "{}", op.name);
        }
        assert!(!op.is_variadic());
        assert!(!op.description.is_empty());
    }
}

#[test]
fn unknown_names_get_suggestions() {
    assert!(lookup("nn.conv2").is_none());
    assert_eq!(suggest_op("nn.conv2"), Some("nn.conv2d"));
    assert_eq!(suggest_op("nn.bais_add"), Some("nn.bias_add"));
    assert_eq!(suggest_op("relu"), Some("nn.relu"));
    assert_eq!(suggest_op("totally_unknown_operator"), None);

    let conv = schema_of("nn.conv2d");
    assert_eq!(suggest_attr(conv, "channes"), Some("channels"));
    assert_eq!(suggest_attr(conv, "kernel_sise"), Some("kernel_size"));
    assert_eq!(
        suggest_attr(schema_of("nn.max_pool2d"), "strdies"),
        Some("strides")
    );
    assert_eq!(suggest_attr(conv, "bogus"), None);
}

#[test]
fn types_and_defaults_print_in_table_syntax() {
    let conv = schema_of("nn.conv2d");
    let line = |name: &str| {
        let field = conv.field(name).unwrap();
        format!("{}: {} = {}", field.name, field.ty, field.default)
    };
    assert_eq!(line("padding"), "padding: Array<PrimExpr> = [0, 0]");
    assert_eq!(line("out_dtype"), "out_dtype: DataType = void");
    assert_eq!(line("data_layout"), "data_layout: String = \"NCHW\"");
    assert_eq!(
        schema_of("nn.batch_norm")
            .field("epsilon")
            .unwrap()
            .default
            .to_string(),
        "1e-5"
    );
    assert_eq!(
        schema_of("nn.dense")
            .field("units")
            .unwrap()
            .default
            .to_string(),
        "required"
    );

    // Every type prints back to text that parses to the same type.
    for schema in all_attrs_schemas() {
        for field in &schema.fields {
            assert_eq!(
                AttrType::parse(&field.ty.to_string()).as_ref(),
                Ok(&field.ty)
            );
        }
    }
}

#[test]
fn test_attrs_live_in_the_table() {
    // TVM's tests build calls with `attrs_type_key="attrs.TestAttrs"`; the
    // lowering and the printer both read its schema from here.
    let schema = attrs_schema("attrs.TestAttrs").unwrap();
    assert_eq!(
        schema.field_names().collect::<Vec<_>>(),
        ["axis", "name", "padding", "func"]
    );
    let axis = schema.field("axis").unwrap();
    assert_eq!(axis.default.to_string(), "10");
    assert_eq!(axis.lower_bound, Some(1.0));
    assert_eq!(
        schema.field("name").unwrap().default.to_string(),
        "required"
    );
    assert!(all_ops()
        .iter()
        .all(|op| op.attrs_type.as_deref() != Some("attrs.TestAttrs")));
}
