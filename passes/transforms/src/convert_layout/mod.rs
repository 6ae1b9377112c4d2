//! `ConvertLayout(desired_layouts)`, as TVM v0.13 defines it
//! (`src/relay/transforms/convert_layout.cc` over `transform_layout.h`).
//!
//! The user names, per operator, the layouts it should compute in
//! (`{"nn.conv2d": ["NHWC", "default"]}`: data in NHWC, the kernel in the
//! layout that goes with it). Those operators are rebuilt in the desired
//! layouts with `layout_transform`s on their inputs; the operators after
//! them keep working in the new layout as far as their layout inference
//! allows, and the first one that cannot (or the function's result) gets a
//! `layout_transform` back to the original layout.
//!
//! * `rewrite` is the driver (TVM's `ForwardRewrite` + `LayoutRewriter`),
//! * `infer` (with `infer_nn`, `infer_tensor`, `infer_qnn`) holds each
//!   operator's `FInferCorrectLayout`,
//! * `convert` holds the `FTVMConvertOpLayout` conversions to the desired
//!   layouts,
//! * `layout` the layout operations they share.
//!
//! AlterOpLayout (`super::alter_op_layout`) runs the same driver with its
//! own rebuild step.
//!
//! The pass is a function pass (opt_level 3) that requires `InferType` and
//! `CanonicalizeOps`; as in TVM, a `Sequential` runs those first, a pass
//! applied on its own does not.

mod convert;
mod infer;
mod infer_nn;
mod infer_qnn;
mod infer_tensor;
mod layout;
pub(crate) mod rewrite;

pub use rewrite::DesiredLayouts;

/// The Python constructors' padding normalisation, shared with
/// AlterOpLayout's rules.
pub(crate) use convert::pad_2d as convert_pad_2d;

use relay_ir::diagnostic::Diagnostic;
use relay_ir::{Function, IRModule};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::{PassContext, PipelineValue};

/// Whether operator `op` has a layout inference (TVM's
/// `FInferCorrectLayout`), the rule ConvertLayout and AlterOpLayout use to
/// carry a new layout through it.
pub fn has_layout_inference(op: &str) -> bool {
    infer::rule(op).is_some()
}

/// Whether operator `op` has a conversion to desired layouts (TVM's
/// `FTVMConvertOpLayout`), the operators ConvertLayout can be asked about.
pub fn has_layout_conversion(op: &str) -> bool {
    convert::has_hook(op)
}

/// The registry entry: `ConvertLayout(desired_layouts={...})`.
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("ConvertLayout", 3)
        .required(&["InferType", "CanonicalizeOps"])
        .param(ParamSpec::map(
            "desired_layouts",
            "the layouts each operator should compute in, e.g. \
             {\"nn.conv2d\": [\"NHWC\", \"default\"]} (data, then kernel; \"default\" \
             picks the kernel layout that goes with the data layout)",
        ))
        .doc(
            "Convert operators (conv2d, pooling, ...) to the desired data layouts, \
             inserting layout_transform where needed",
        )
        .build(|args| {
            let desired = desired_layouts(args.get("desired_layouts"))?;
            Ok(
                move |function: Function, _module: &IRModule, _ctx: &PassContext| {
                    convert_layout(&function, &desired).map_err(Diagnostic::pass_failed)
                },
            )
        })
}

/// The `desired_layouts` argument: a map from operator names to lists of
/// layout strings (TVM's `Map<String, Array<String>>`).
fn desired_layouts(value: Option<&PipelineValue>) -> Result<DesiredLayouts, String> {
    let entries = match value {
        None => return Ok(Vec::new()),
        Some(PipelineValue::Map(entries)) => entries,
        Some(other) => {
            return Err(format!(
                "`desired_layouts` takes a map, not {}",
                other.type_name()
            ))
        }
    };
    entries
        .iter()
        .map(|(op, layouts)| {
            let PipelineValue::List(items) = layouts else {
                return Err(format!(
                    "`desired_layouts[\"{op}\"]` takes a list of layout strings"
                ));
            };
            let layouts = items
                .iter()
                .map(|item| match item {
                    PipelineValue::Str(s) => Ok(s.clone()),
                    _ => Err(format!(
                        "`desired_layouts[\"{op}\"]` takes a list of layout strings"
                    )),
                })
                .collect::<Result<Vec<String>, String>>()?;
            Ok((op.clone(), layouts))
        })
        .collect()
}

/// Converts `function` to the desired layouts. Errors are where TVM fails
/// (an unsupported desired layout, layouts that cannot be converted).
pub fn convert_layout(function: &Function, desired: &DesiredLayouts) -> Result<Function, String> {
    let memorizer = convert::ConvertMemorizer(desired);
    let mut rewriter = rewrite::LayoutRewriter::new(&memorizer);
    let result = rewriter.run(function.expr())?;
    result
        .as_function()
        .ok_or_else(|| "ConvertLayout: the function was rewritten to a non-function".to_string())
}

#[cfg(test)]
mod tests {
    use relay_pass_manager::pipeline_from_text;

    #[test]
    fn desired_layouts_come_from_the_pipeline() {
        crate::register_builtin_passes();
        let text = r#"ConvertLayout(desired_layouts={"nn.conv2d": ["NHWC", "default"]})"#;
        let pass = pipeline_from_text(text).expect("the pipeline builds");
        assert_eq!(pass.info().name, "ConvertLayout");
        assert_eq!(pass.info().opt_level, 3);
        assert_eq!(pass.info().required, ["InferType", "CanonicalizeOps"]);
        assert_eq!(pass.describe(), text);
    }

    #[test]
    fn malformed_desired_layouts_are_rejected() {
        crate::register_builtin_passes();
        for text in [
            r#"ConvertLayout(desired_layouts={"nn.conv2d": "NHWC"})"#,
            r#"ConvertLayout(desired_layouts={"nn.conv2d": [1, 2]})"#,
            r#"ConvertLayout(desired_layouts=["NHWC"])"#,
        ] {
            assert!(pipeline_from_text(text).is_err(), "{text}");
        }
    }
}
