//! The pass's registration, parameters and diagnostics (its rewrites are
//! covered by the data-driven cases in `test_data/passes/ToMixedPrecision`).

use relay_ir::diagnostic::Diagnostics;
use relay_lower::parse_and_lower;
use relay_pass_manager::pipeline::PipelineValue;
use relay_pass_manager::registry::{self, PassKind};
use relay_pass_manager::{run_pass, PassContext, PassContextOptions, PassInfo};

const TWO_UNRULED_OPS: &str = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(2), float32]) {
  %0 = negative(%x);
  %1 = negative(%0);
  %2 = ones(shape=[2], dtype=\"float32\");
  add(%1, %2)
}";

/// Runs `pipeline` over `text` (type-checked first); the result's success
/// and the warnings left in the context.
fn run(pipeline: &str, text: &str) -> (Result<(), String>, Diagnostics) {
    crate::register_builtin_passes();
    let (module, diagnostics) = parse_and_lower("t.relay", text);
    assert!(!diagnostics.has_errors());
    let ctx = PassContext::new(PassContextOptions::default()).unwrap();
    let _scope = ctx.enter().unwrap();
    let infer = registry::create("InferType", &[]).unwrap();
    let pass = relay_pass_manager::pipeline_from_text(pipeline).unwrap();
    let result = run_pass(&*infer, module, &ctx)
        .and_then(|m| run_pass(&*pass, m, &ctx))
        .map(|_| ())
        .map_err(|e| {
            e.diagnostics
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("\n")
        });
    (result, ctx.take_diagnostics())
}

fn messages(diagnostics: &Diagnostics) -> Vec<String> {
    diagnostics.iter().map(|d| d.message.clone()).collect()
}

#[test]
fn registered_like_tvm() {
    crate::register_builtin_passes();
    let spec = registry::lookup("ToMixedPrecision").expect("registered");
    assert_eq!(spec.info, PassInfo::new("ToMixedPrecision", 0, &[]));
    assert_eq!(spec.kind, PassKind::Function);
    let names: Vec<&str> = spec.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["mixed_precision_type", "missing_op_mode"]);
}

#[test]
fn the_mixed_type_must_be_a_float_and_the_mode_0_to_2() {
    crate::register_builtin_passes();
    let int8 = registry::create(
        "ToMixedPrecision",
        &[(
            "mixed_precision_type".into(),
            PipelineValue::Str("int8".into()),
        )],
    );
    let message = int8.err().expect("int8 is refused").message;
    assert!(
        message.contains(
            "Only support IEEE floating point mixed precision types and bfloat16, but got int8"
        ),
        "{message}"
    );
    assert!(registry::create(
        "ToMixedPrecision",
        &[("missing_op_mode".into(), PipelineValue::Int(3))],
    )
    .is_err());
    assert!(registry::create(
        "ToMixedPrecision",
        &[(
            "mixed_precision_type".into(),
            PipelineValue::Str("bfloat16".into()),
        )],
    )
    .is_ok());
}

#[test]
fn operators_without_rules_warn_once_each_with_their_count() {
    let (result, warnings) = run("ToMixedPrecision", TWO_UNRULED_OPS);
    assert_eq!(result, Ok(()));
    assert_eq!(
        messages(&warnings),
        [
            "Op \"negative\" not registered FTVMMixedPrecisionConversionType appears 2 times in graph.",
            "Op \"ones\" not registered FTVMMixedPrecisionConversionType appears 1 times in graph.",
        ]
    );
}

#[test]
fn mode_2_is_silent_and_mode_0_fails_after_warning() {
    let (result, warnings) = run("ToMixedPrecision(missing_op_mode=2)", TWO_UNRULED_OPS);
    assert_eq!(result, Ok(()));
    assert!(warnings.is_empty(), "{:?}", messages(&warnings));

    let (result, _) = run("ToMixedPrecision(missing_op_mode=0)", TWO_UNRULED_OPS);
    let error = result.expect_err("mode 0 fails");
    assert!(error.contains("Missing ops were found!"), "{error}");
    assert!(error.contains("negative, ones"), "{error}");
}

#[test]
fn a_module_of_ruled_operators_warns_about_nothing() {
    let text = "#[version = \"0.0.5\"]
def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(3, 4), float32]) {
  nn.relu(nn.dense(%x, %w, units=3))
}";
    let (result, warnings) = run("ToMixedPrecision(missing_op_mode=0)", text);
    assert_eq!(result, Ok(()));
    assert!(warnings.is_empty());
}

/// Chains as deep as real models must not overflow the stack: the rewrite
/// and its local re-typing do not recurse on depth.
#[test]
fn deep_chains_do_not_overflow() {
    // Written as bindings so that parsing does not recurse either.
    let mut text = String::from(
        "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) {\n  %0 = nn.relu(%x);\n",
    );
    for i in 1..20_000 {
        text.push_str(&format!("  %{i} = nn.relu(%{});\n", i - 1));
    }
    text.push_str("  %19999\n}\n");
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || run("ToMixedPrecision", &text).0)
        .unwrap();
    assert_eq!(handle.join().unwrap(), Ok(()));
}
