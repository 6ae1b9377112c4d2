//! TVM's own results for FoldConstant: every record of
//! `shared/tvm/passes/FoldConstant` (TVM's test-suite cases, the models and
//! the parser programs) is parsed, lowered, type-checked once (as TVM's
//! parser does), run through its pipeline under its PassContext, printed
//! with types and compared with TVM's print: once without the `/* ty=… */`
//! comments ("structure"), once as is ("typed"). Records with `"error"`
//! must fail.
//!
//! The records of the seeds' pipelines that contain FoldConstant
//! (`Pipeline-InferType+FoldConstant+…`) are run too and reported, without
//! failing the test: their results also depend on other passes.
//!
//! The test also folds every record's input directly and lists the
//! operators whose calls had constant arguments but no kernel, or that a
//! kernel refused.
//!
//! `RELAY_CORPUS_FILTER=substring` restricts the records (by file name);
//! `RELAY_CORPUS_VERBOSE=1` prints the first differing line of each miss.

mod common;

use common::{PassRecord, Tally};
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::printer::{print_module, PrintOptions};
use relay_passes::transforms::fold_constant::{fold_constant_function, FoldOptions, FoldStats};
use std::collections::BTreeMap;

/// The directories checked (the test fails on any miss) and the ones only
/// reported.
const CHECKED: [&str; 1] = ["FoldConstant"];
const REPORTED: [&str; 1] =
    ["Pipeline-InferType+FoldConstant+EliminateCommonSubexpr+DeadCodeElimination"];

fn merge(into: &mut FoldStats, stats: FoldStats, record: &str, why: &mut BTreeMap<String, String>) {
    into.folded += stats.folded;
    into.too_large += stats.too_large;
    for (op, n) in stats.missing_kernels {
        *into.missing_kernels.entry(op).or_default() += n;
    }
    for (op, reason) in stats.failed {
        why.entry(op)
            .or_insert_with(|| format!("{reason} ({record})"));
    }
}

/// Folds every optimisable function of the typed input directly, to list
/// the operators without a kernel.
fn fold_directly(
    record: &PassRecord,
    module: &IRModule,
    stats: &mut FoldStats,
    refused: &mut BTreeMap<String, String>,
) {
    let options = FoldOptions {
        fold_qnn: record.pipeline().contains("fold_qnn=true"),
        ..FoldOptions::default()
    };
    for (_, function) in module.functions() {
        if function.is_optimizable() {
            let (_, s) = fold_constant_function(function, &options);
            merge(stats, s, &record.stem, refused);
        }
    }
}

#[test]
fn fold_constant_matches_tvm() {
    let Some(root) = common::corpus("fold_constant_matches_tvm") else {
        return;
    };
    let mut all: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut stats = FoldStats::default();
    let mut refused: BTreeMap<String, String> = BTreeMap::new();
    for dir in CHECKED.iter().chain(REPORTED.iter()).copied() {
        let tally = all.entry(dir).or_default();
        for record in common::pass_records(&root, dir) {
            let record = match record {
                Ok(record) => record,
                Err(message) => {
                    tally.add_unreadable(message);
                    continue;
                }
            };
            let result = common::parse_typed("before.relay", &record.before).and_then(|module| {
                if dir == "FoldConstant" {
                    fold_directly(&record, &module, &mut stats, &mut refused);
                }
                let options = common::context_options(&record.json)?;
                let module = common::run_pipeline(module, record.pipeline(), options, Vec::new())?;
                Ok(print_module(&module, &PrintOptions::default()))
            });
            tally.add(&record, result);
        }
    }
    let mut failed = false;
    eprintln!();
    for (dir, tally) in &all {
        tally.report(dir);
        if CHECKED.contains(dir) {
            // Every record matches, the metadata section included (which
            // dimension objects the constants' types share too).
            if !tally.misses.is_empty() {
                eprintln!("  unexpected misses: {:?}", tally.misses);
                failed = true;
            }
            failed |= tally.errors_ok < tally.errors_expected || tally.found_nothing();
        }
    }
    eprintln!(
        "FoldConstant inputs: {} calls folded; without a kernel: {:?}; refused: {:?}",
        stats.folded, stats.missing_kernels, refused
    );
    assert!(
        !failed,
        "some FoldConstant records do not match TVM (see above)"
    );
}

/// The constants TVM folds out of `models/synthetic.bound.relay`'s
/// batch_norm in the fixed pipeline (SimplifyInference then FoldConstant):
/// `scale = expand_dims(1 / sqrt(var + eps) * gamma)` and
/// `shift = expand_dims(-mean * scale + beta)`, computed here with the
/// evaluator's kernels, must be bit for bit the ones in
/// `models/synthetic.bound.pipeline.relay`.
#[test]
fn batch_norm_constants_of_synthetic_bound_match_tvm() {
    use relay_passes::dtype::DataType;
    use relay_passes::eval::{eval_call, CallInfo, Value};
    use relay_passes::ir::rewrite::post_order;
    use relay_passes::ir::{AttrValue, Attrs, ExprKind};
    use relay_passes::metadata::TensorData;
    use std::sync::Arc;

    let Some(root) = common::corpus("batch_norm_constants_of_synthetic_bound_match_tvm") else {
        return;
    };
    let root = root.join("models");
    let read = |name: &str| {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        let (module, diagnostics) = parse_and_lower(name, &text);
        assert!(!diagnostics.has_errors(), "{name}");
        module
    };
    let before = read("synthetic.bound.relay");
    let after = read("synthetic.bound.pipeline.relay");
    let main = before.function("main").unwrap();
    let args = post_order(main.expr())
        .into_iter()
        .find_map(|e| {
            let call = e.as_call()?;
            (call.callee.as_op()?.name == "nn.batch_norm").then(|| call.args.clone())
        })
        .expect("a batch_norm");
    let arg = |i: usize| Value::Tensor(Arc::clone(args[i].as_constant().expect("a constant")));
    let scalar =
        |v: f64| Value::tensor(TensorData::from_f64s(DataType::FLOAT32, vec![], &[v]).unwrap());
    let call = |op: &str, attrs: Option<&Attrs>, a: &[Value]| {
        eval_call(&CallInfo::new(op, attrs), a).unwrap_or_else(|e| panic!("{op}: {e}"))
    };
    let expand = Attrs::new(
        "relay.attrs.ExpandDimsAttrs",
        vec![
            ("axis".into(), AttrValue::Int(1)),
            ("num_newaxis".into(), AttrValue::Int(2)),
        ],
    );
    // The epsilon is float32(1e-5), as MakeConstantScalar makes it.
    let eps = f64::from(1e-5f32);
    let std = call("sqrt", None, &[call("add", None, &[arg(4), scalar(eps)])]);
    let scale = call(
        "multiply",
        None,
        &[call("divide", None, &[scalar(1.0), std]), arg(1)],
    );
    let neg_mean = call("negative", None, &[arg(3)]);
    let shift = call(
        "add",
        None,
        &[call("multiply", None, &[neg_mean, scale.clone()]), arg(2)],
    );
    let scale = call("expand_dims", Some(&expand), &[scale]);
    let shift = call("expand_dims", Some(&expand), &[shift]);
    let mut folded: Vec<Arc<TensorData>> = Vec::new();
    for (_, function) in after.functions() {
        for e in post_order(function.expr()) {
            if let ExprKind::Constant(data) = e.kind() {
                if data.shape == [3, 1, 1] && !folded.iter().any(|d| Arc::ptr_eq(d, data)) {
                    folded.push(Arc::clone(data));
                }
            }
        }
    }
    let ours = [scale.as_tensor().unwrap(), shift.as_tensor().unwrap()];
    assert_eq!(folded.len(), 2);
    for (tvm, ours) in folded.iter().zip(ours) {
        assert_eq!(**tvm, *ours);
    }
}
