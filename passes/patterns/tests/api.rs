//! The library API where the text cases cannot reach: callbacks written in
//! Rust (`rewrite_once`, `require_type`, TVM's 100-round limit), partition
//! attributes, the dataflow graph's post-dominators, and the memo of shared
//! pattern nodes.

use relay_ir::build::op_call;
use relay_ir::rewrite::post_order;
use relay_ir::{AttrValue, Expr, ExprKind};
use relay_patterns::graph::ExprGraph;
use relay_patterns::pattern::{is_op, is_tuple, is_var, wildcard};
use relay_patterns::rewrite::{partition, rewrite, Callback};
use relay_patterns::{matches, Matcher};

fn expr(text: &str) -> Expr {
    let (e, diagnostics) = relay_lower::parse_and_lower_expr("test", text);
    assert!(diagnostics.is_empty(), "{text}");
    match e.kind() {
        ExprKind::Function(f) => f.body.clone(),
        _ => e,
    }
}

fn print(e: &Expr) -> String {
    relay_ir::printer::print_expr(e, &Default::default())
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("free_var"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// TVM's `ConcatRewriter`: drops the last field of a concatenated tuple.
fn concat_rewriter(once: bool) -> Callback {
    let pattern = is_op("concatenate").unwrap().call_any_args();
    Callback::new(pattern, |_pre, post, _| {
        let call = post.as_call().unwrap();
        let ExprKind::Tuple(fields) = call.args[0].kind() else {
            panic!("a tuple")
        };
        if fields.len() > 1 {
            let kept = fields[..fields.len() - 1].to_vec();
            op_call("concatenate", vec![Expr::tuple(kept, None)])
        } else {
            fields[0].clone()
        }
    })
    .rewrite_once(once)
}

fn relu_after_softmax(once: bool) -> Callback {
    let pattern = is_op("nn.softmax").unwrap().call_any_args();
    Callback::new(pattern, |_pre, post, _| {
        op_call("nn.relu", vec![post.clone()])
    })
    .rewrite_once(once)
}

#[test]
fn rewrite_once_stops_a_callback_after_its_first_change() {
    // TVM test_rewrite_once / test_one_callback.
    let concat = expr("fn (%x, %y, %z) { concatenate((%x, %y, %z)) }");
    let out = rewrite(&[concat_rewriter(false)], &concat, None).unwrap();
    assert_eq!(print(&out), "%x");
    let out = rewrite(&[concat_rewriter(true)], &concat, None).unwrap();
    assert_eq!(print(&out), "%0 = (%x, %y);\nconcatenate(%0)");
}

#[test]
fn rewrite_once_per_callback() {
    // TVM test_rewrite_once / test_multi_callbacks.
    let before = expr("fn (%x, %y, %z) { nn.softmax(concatenate((%x, %y, %z))) }");
    let out = rewrite(
        &[relu_after_softmax(true), concat_rewriter(true)],
        &before,
        None,
    )
    .unwrap();
    assert_eq!(
        print(&out),
        "%0 = (%x, %y);\n%1 = concatenate(%0);\n%2 = nn.softmax(%1);\nnn.relu(%2)"
    );
    let out = rewrite(
        &[relu_after_softmax(true), concat_rewriter(false)],
        &before,
        None,
    )
    .unwrap();
    assert_eq!(print(&out), "%0 = nn.softmax(%x);\nnn.relu(%0)");
}

#[test]
fn a_callback_that_never_settles_stops_after_100_rounds() {
    // Each round wraps the innermost relu in another one: never a fixed
    // point (one more node a round).
    let relu = is_op("nn.relu").unwrap().call(vec![is_var("x")]);
    let grow = Callback::new(relu, |_pre, post, _| op_call("nn.relu", vec![post.clone()]));
    let err = rewrite(&[grow], &expr("fn (%x) { nn.relu(%x) }"), None).unwrap_err();
    assert_eq!(
        err,
        "Observed 100 rewrite passes, possible conflicting passes?"
    );
}

#[test]
fn require_type_gives_callbacks_checked_types() {
    let relu = is_op("nn.relu").unwrap().call(vec![wildcard()]);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let callback = Callback::new(relu, move |pre, post, _| {
        record
            .lock()
            .unwrap()
            .push(pre.checked_type().map(relay_ir::printer::print_type));
        post.clone()
    });
    let e = expr("fn (%x: Tensor[(2, 3), float32]) { nn.relu(%x) }");
    rewrite(&[callback.require_type(true)], &e, None).unwrap();
    assert_eq!(
        seen.lock().unwrap().first().cloned().flatten().as_deref(),
        Some("Tensor[(2, 3), float32]")
    );
}

#[test]
fn partition_adds_the_attributes_after_partitioned_from_pattern() {
    let relu = is_op("nn.relu").unwrap().call(vec![wildcard()]);
    let e = expr("fn (%x) { nn.relu(%x) }");
    let out = partition(
        &relu,
        &e,
        &[("Composite".to_string(), AttrValue::Str("relu".to_string()))],
        &|_| true,
    );
    let callee = out.as_call().unwrap().callee.as_function().unwrap();
    let keys: Vec<&str> = callee
        .data()
        .attrs
        .entries()
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(keys, ["PartitionedFromPattern", "Composite"]);
}

#[test]
fn post_dominators_of_a_diamond() {
    let e = expr("fn (%x) { %0 = nn.relu(%x); %1 = tanh(%0); %2 = sigmoid(%0); add(%1, %2) }");
    let graph = ExprGraph::new(&e);
    let index = |name: &str| {
        graph
            .nodes
            .iter()
            .position(|n| {
                n.expr
                    .as_call()
                    .and_then(|c| c.callee.as_op())
                    .is_some_and(|op| op.name == name)
            })
            .unwrap()
    };
    let (relu, tanh, add) = (index("nn.relu"), index("tanh"), index("add"));
    assert_eq!(graph.nodes[relu].dominator_parent, Some(add));
    assert_eq!(graph.nodes[tanh].dominator_parent, Some(add));
    assert!(graph.dominates(add, relu));
    assert!(!graph.dominates(tanh, relu));
}

#[test]
fn a_shared_pattern_node_matches_one_expression_node() {
    let x = wildcard();
    let twice = is_op("add").unwrap().call(vec![x.clone(), x.clone()]);
    assert!(matches(&twice, &expr("fn (%a) { add(%a, %a) }")));
    assert!(!matches(&twice, &expr("fn (%a, %b) { add(%a, %b) }")));
    // Two separately built wildcards match independently.
    let two = is_op("add").unwrap().call(vec![wildcard(), wildcard()]);
    assert!(matches(&two, &expr("fn (%a, %b) { add(%a, %b) }")));
}

#[test]
fn a_failed_alternative_forgets_what_it_matched() {
    // The left alternative binds `x` to %a before failing on its second
    // argument; the right one must be free to bind `x` to %b.
    let x = wildcard();
    let left = is_op("add").unwrap().call(vec![x.clone(), is_var("nope")]);
    let right = is_tuple(vec![x.clone()]);
    let pattern = is_tuple(vec![left.or(&right)]);
    let e = expr("fn (%b) { ((%b,),) }");
    let mut graph_matcher = Matcher::new(None);
    assert!(graph_matcher.match_at(&pattern, &e));
    assert_eq!(graph_matcher.memo().get(&x).len(), 1);
    assert!(post_order(&e)
        .iter()
        .any(|n| n.ptr_eq(&graph_matcher.memo().get(&x)[0])));
}

#[test]
fn text_too_deep_to_match_is_refused_not_overflowed() {
    use relay_patterns::text::{no_named_patterns, parse_pattern};
    let nested = format!("{}*{}", "(".repeat(100_000), ")".repeat(100_000));
    let err = parse_pattern(&nested, &no_named_patterns).unwrap_err();
    assert!(
        err.message.contains("nests more than 200 levels"),
        "{}",
        err.message
    );
    let chained = format!("*{}", " |> nn.relu(_)".repeat(100_000));
    let err = parse_pattern(&chained, &no_named_patterns).unwrap_err();
    assert!(
        err.message.contains("chains more than 2000 forms"),
        "{}",
        err.message
    );
    let tuple_items = format!("*{}", ".0".repeat(100_000));
    assert!(parse_pattern(&tuple_items, &no_named_patterns).is_err());
}

/// `@name` stands for new nodes at each use: `add(@p, @p)` matches two
/// different expressions that each match `p`; `$x = @p` shares one node.
#[test]
fn each_use_of_a_named_pattern_is_its_own_node() {
    use relay_patterns::text::parse_pattern;
    let relu = parse_pattern("nn.relu(*)", &relay_patterns::text::no_named_patterns)
        .unwrap()
        .pattern;
    let named = |name: &str| (name == "r").then(|| relu.clone());
    let twice = parse_pattern("add(@r, @r)", &named).unwrap().pattern;
    let shared = parse_pattern("$x = @r; add($x, $x)", &named)
        .unwrap()
        .pattern;
    // `expr` gives the function's body.
    let body = expr("fn (%a, %b) { add(nn.relu(%a), nn.relu(%b)) }");
    assert!(matches(&twice, &body));
    assert!(!matches(&shared, &body));
}
