//! Hand-written cases for `FuseOps` and `DefuseOps`: each small module is
//! parsed, type-checked, run through a pipeline and printed with its
//! types, and the print is compared with the result worked out by hand
//! from TVM v0.13's fusion rules (post-dominator grouping, the phases for
//! anchors, element-wise, injective and tuple nodes, the group size limit,
//! parameters named `p0, p1, …` in first-use order).

use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::{
    pipeline_from_text, run_pass, ConfigValue, PassContext, PassContextOptions,
};
use relay_passes::printer::{print_module, PrintOptions};
use std::collections::BTreeMap;

/// Runs `pipeline` on `source` under `opt_level` and `config`; returns the
/// printed module or the error text.
fn run(source: &str, pipeline: &str, opt_level: u32, config: &[(&str, ConfigValue)]) -> String {
    relay_passes::register_builtin_passes();
    let (module, diagnostics) = parse_and_lower("case.relay", source);
    assert!(!diagnostics.has_errors(), "the case does not lower");
    let config: BTreeMap<String, ConfigValue> = config
        .iter()
        .map(|(key, value)| (key.to_string(), value.clone()))
        .collect();
    let ctx = PassContext::new(PassContextOptions {
        opt_level,
        config,
        ..Default::default()
    })
    .expect("the context is valid");
    let _scope = ctx.enter().expect("the context can be entered");
    let infer = pipeline_from_text("InferType").expect("InferType exists");
    let pass = pipeline_from_text(pipeline).expect("the pipeline parses");
    match run_pass(&*infer, module, &ctx).and_then(|m| run_pass(&*pass, m, &ctx)) {
        Ok(module) => print_module(&module, &PrintOptions::default()),
        Err(error) => format!("error: {}", error.message),
    }
}

/// The print without `/* ty=… */` comments, trimmed per line.
fn structure(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(" /* ty=") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let end = after.find(" */").map_or(after.len(), |e| e + 3);
        rest = &after[end..];
    }
    out.push_str(rest);
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

const CHAIN: &str = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(4, 8), float32]) {
  %0 = add(%x, 2f);
  %1 = exp(%0);
  %2 = sigmoid(%1);
  reshape(%2, newshape=[8, 4])
}"#;

#[test]
fn element_wise_chain_becomes_one_function() {
    let expected = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(8, 4), float32] {
  %3 = fn (%p0: Tensor[(4, 8), float32], Primitive=1) -> Tensor[(8, 4), float32] {
    %0 = add(%p0, 2f);
    %1 = exp(%0);
    %2 = sigmoid(%1);
    reshape(%2, newshape=[8, 4])
  };
  %3(%x)
}"#;
    assert_eq!(structure(&run(CHAIN, "FuseOps", 2, &[])), expected);
}

#[test]
fn level_zero_gives_every_operator_its_own_function() {
    let expected = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(8, 4), float32] {
  %0 = fn (%p03: Tensor[(4, 8), float32], %p1: float32, Primitive=1) -> Tensor[(4, 8), float32] {
    add(%p03, %p1)
  };
  %1 = %0(%x, 2f);
  %2 = fn (%p02: Tensor[(4, 8), float32], Primitive=1) -> Tensor[(4, 8), float32] {
    exp(%p02)
  };
  %3 = %2(%1);
  %4 = fn (%p01: Tensor[(4, 8), float32], Primitive=1) -> Tensor[(4, 8), float32] {
    sigmoid(%p01)
  };
  %5 = %4(%3);
  %6 = fn (%p0: Tensor[(4, 8), float32], Primitive=1, relay.reshape_only=1) -> Tensor[(8, 4), float32] {
    reshape(%p0, newshape=[8, 4])
  };
  %6(%5)
}"#;
    assert_eq!(
        structure(&run(CHAIN, "FuseOps(fuse_opt_level=0)", 3, &[])),
        expected
    );
    // fuse_opt_level=-1 takes the context's opt_level.
    assert_eq!(structure(&run(CHAIN, "FuseOps", 0, &[])), expected);
}

#[test]
fn link_params_keeps_constants_inline() {
    let out = structure(&run(
        CHAIN,
        "FuseOps(fuse_opt_level=0)",
        3,
        &[("relay.FuseOps.link_params", ConfigValue::Bool(true))],
    ));
    assert!(out.contains("add(%p0"), "{out}");
    assert!(out.contains(", 2f)"), "{out}");
    assert!(!out.contains("%p1"), "{out}");
}

#[test]
fn max_depth_limits_group_size() {
    // The constant joins `add` (2 nodes); `add` cannot join `exp` (3 > 2);
    // `exp` and `sigmoid` make a pair; `reshape` stays alone.
    let expected = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(4, 8), float32]) -> Tensor[(8, 4), float32] {
  %1 = fn (%p02: Tensor[(4, 8), float32], Primitive=1) -> Tensor[(4, 8), float32] {
    add(%p02, 2f)
  };
  %2 = %1(%x);
  %3 = fn (%p01: Tensor[(4, 8), float32], Primitive=1) -> Tensor[(4, 8), float32] {
    %0 = exp(%p01);
    sigmoid(%0)
  };
  %4 = %3(%2);
  %5 = fn (%p0: Tensor[(4, 8), float32], Primitive=1, relay.reshape_only=1) -> Tensor[(8, 4), float32] {
    reshape(%p0, newshape=[8, 4])
  };
  %5(%4)
}"#;
    let config = [("relay.FuseOps.max_depth", ConfigValue::Int(2))];
    assert_eq!(structure(&run(CHAIN, "FuseOps", 2, &config)), expected);
}

#[test]
fn convolution_takes_its_element_wise_consumers() {
    // The first conv2d is an anchor: add and relu join it. Its result is
    // used twice (by the second conv2d and the final add), whose common
    // post-dominator is the final add, so the second conv2d group ends
    // there and reuses the same input as `%p0`.
    let source = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32], %b: Tensor[(4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w, padding=[1, 1, 1, 1]);
  add(%3, %2)
}"#;
    let out = structure(&run(source, "FuseOps", 2, &[]));
    let expected_second = r#"  %5 = fn (%p0: Tensor[(1, 4, 8, 8), float32], %p1: Tensor[(4, 4, 3, 3), float32], Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
    %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]);
    add(%0, %p0)
  };
  %5(%4, %w)"#;
    assert!(out.contains(expected_second), "{out}");
    assert!(out.contains("%4 = %3(%x, %w, %b);"), "{out}");
    assert!(out.contains("    nn.relu(%2)\n"), "{out}");
}

#[test]
fn tuples_fuse_into_their_injective_consumer() {
    let source = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = exp(%x);
  %1 = log(%y);
  %2 = (%0, %1);
  %3 = concatenate(%2);
  nn.relu(%3)
}"#;
    let expected = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(4, 3), float32] {
  %4 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(4, 3), float32] {
    %0 = exp(%p0);
    %1 = log(%p1);
    %2 = (%0, %1);
    %3 = concatenate(%2);
    nn.relu(%3)
  };
  %4(%x, %y)
}"#;
    assert_eq!(structure(&run(source, "FuseOps", 2, &[])), expected);
}

#[test]
fn a_returned_tuple_stays_outside_the_functions() {
    let source = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = exp(%x);
  (%0, %x)
}"#;
    let expected = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) {
  %0 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
    exp(%p0)
  };
  %1 = %0(%x);
  (%1, %x)
}"#;
    assert_eq!(structure(&run(source, "FuseOps", 2, &[])), expected);
}

#[test]
fn fusion_stops_at_lets_and_branches() {
    let source = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32], %c: bool) {
  let %a = exp(%x);
  if (%c) {
    negative(%a)
  } else {
    %0 = sqrt(%a);
    abs(%0)
  }
}"#;
    let expected = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32], %c: bool) -> Tensor[(3), float32] {
  %0 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
    exp(%p0)
  };
  let %a: Tensor[(3), float32] = %0(%x);
  if (%c) {
    %1 = fn (%p01: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
      negative(%p01)
    };
    %1(%a)
  } else {
    %3 = fn (%p02: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
      %2 = sqrt(%p02);
      abs(%2)
    };
    %3(%a)
  }
}"#;
    assert_eq!(structure(&run(source, "FuseOps", 2, &[])), expected);
}

#[test]
fn reshape_only_groups_are_marked() {
    let source = r#"#[version = "0.0.5"]
def @main(%x: Tensor[(2, 6), float32]) {
  %0 = nn.softmax(%x);
  squeeze(expand_dims(%0, axis=0), axis=[0])
}"#;
    let out = structure(&run(source, "FuseOps", 2, &[]));
    assert!(
        out.contains("fn (%p0: Tensor[(2, 6), float32], Primitive=1, relay.reshape_only=1)"),
        "{out}"
    );
    assert!(
        out.contains("fn (%p01: Tensor[(2, 6), float32], Primitive=1) ->"),
        "{out}"
    );
}

#[test]
fn fused_functions_are_left_alone_by_a_second_run() {
    let once = run(CHAIN, "FuseOps", 2, &[]);
    let twice = run(CHAIN, "FuseOps, FuseOps", 2, &[]);
    assert_eq!(once, twice);
}

#[test]
fn defuse_ops_undoes_fuse_ops() {
    let original = run(CHAIN, "InferType", 3, &[]);
    let round_trip = run(CHAIN, "FuseOps(fuse_opt_level=0), DefuseOps", 3, &[]);
    assert_eq!(round_trip, original);
    let round_trip = run(CHAIN, "FuseOps, DefuseOps", 3, &[]);
    assert_eq!(round_trip, original);
}
