//! `DynamicToStatic`: turns calls of dynamic operators (`dyn.reshape`,
//! `dyn.topk`, `dyn.strided_slice`, …) whose shape-like arguments are, or
//! fold to, constants into the static operators with those values as
//! attributes, as TVM v0.13's `dynamic_to_static.cc` does.
//!
//! For each dynamic call (bottom-up), every non-constant argument is
//! constant-folded on its own — fold, re-type, fold again, as TVM does by
//! running `FoldConstant` and `InferTypeLocal` twice — so that e.g.
//! `shape_of(%x)` of a statically shaped `%x` becomes a constant. When the
//! arguments the static operator needs are constants of the expected rank,
//! the call is replaced; otherwise it stays as it was (with its original
//! arguments). Finally the whole function is folded twice the same way, so
//! the pass also folds everything `FoldConstant` folds, and function return
//! annotations are dropped (TVM rebuilds every function without them; the
//! `InferType` after the pass fills them in again).
//!
//! Integer attribute values become int32 immediates as in TVM; a value that
//! does not fit in int32 leaves the call dynamic (TVM would fail).
//!
//! **TVM's limitation, kept as a clear error:** TVM v0.13 re-types each
//! function in a fresh module that holds only that function, so a function
//! that refers to a global function (even itself) or to an algebraic data
//! type (a constructor, a `match` on constructors, a type such as
//! `List[int32]`) makes the pass fail. We report the first such reference
//! with its span instead of producing a result TVM never would.

use crate::fold_constant::{fold_constant_expr, FoldOptions};
use relay_infer::infer_expr;
use relay_ir::build::{int_array, op_call_with};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::rewrite::{post_order, rewrite_function};
use relay_ir::{
    AttrValue, Attrs, Expr, ExprKind, Function, FunctionData, IRModule, Type, TypeKind,
};
use relay_pass_manager::registry::PassSpec;
use std::sync::Arc;

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("DynamicToStatic", 2)
        .doc(
            "Replace dynamic operators whose shape arguments fold to constants by static ones, \
             and fold constants",
        )
        .transform(|f, m, ctx| {
            if let Some(blocker) = isolation_blocker(&f) {
                return Err(blocker);
            }
            let options = FoldOptions::from_context(false, ctx);
            Ok(dynamic_to_static(&f, m, &options))
        })
}

/// Why TVM's per-function re-typing in an empty module fails on
/// `function`: its first reference to a global function or an ADT.
fn isolation_blocker(function: &Function) -> Option<Diagnostic> {
    let problem = |what: String, node: &Expr| {
        Some(Diagnostic::pass_failed_at(
            node,
            format!(
                "DynamicToStatic cannot handle a function that refers to {what}: TVM v0.13 \
                 re-types each function on its own, without the module's other functions and \
                 type definitions"
            ),
        ))
    };
    for node in post_order(function.expr()) {
        match node.kind() {
            ExprKind::GlobalVar(global) => {
                return problem(format!("the global `@{}`", global.name()), &node)
            }
            ExprKind::Constructor(ctor) => {
                return problem(format!("the constructor `{}`", ctor.name()), &node)
            }
            ExprKind::Match { .. } => {
                return problem("a data type (through `match`)".into(), &node)
            }
            ExprKind::Var(var) => {
                if let Some(name) = var.type_annotation.as_ref().and_then(global_type_in) {
                    return problem(format!("the data type `{name}`"), &node);
                }
            }
            ExprKind::Function(data) => {
                if let Some(name) = data.ret_type.as_ref().and_then(global_type_in) {
                    return problem(format!("the data type `{name}`"), &node);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first ADT named in `ty`.
fn global_type_in(ty: &Type) -> Option<String> {
    match ty.kind() {
        TypeKind::GlobalVar(global) => Some(global.name().to_string()),
        TypeKind::Call { func, args } => {
            global_type_in(func).or_else(|| args.iter().find_map(global_type_in))
        }
        TypeKind::Tuple(fields) => fields.iter().find_map(global_type_in),
        TypeKind::Func(func) => func
            .params
            .iter()
            .chain(std::iter::once(&func.ret))
            .find_map(global_type_in),
        TypeKind::Ref(inner) => global_type_in(inner),
        TypeKind::Tensor(_) | TypeKind::Var(_) | TypeKind::Incomplete(_) => None,
    }
}

/// Rewrites the dynamic operators of `function` (see the module doc).
pub fn dynamic_to_static(
    function: &Function,
    module: &IRModule,
    options: &FoldOptions,
) -> Function {
    let rewritten = rewrite_function(function, |_pre, post| {
        let post = match staticise(&post, module, options) {
            Some(static_call) => static_call,
            None => post,
        };
        without_return_type(post)
    });
    let folded = fold_twice(rewritten.expr(), module, options);
    folded.as_function().unwrap_or(rewritten)
}

/// Folds, re-types and folds again (TVM's `PrepareInput`).
fn fold_twice(expr: &Expr, module: &IRModule, options: &FoldOptions) -> Expr {
    let (once, _) = fold_constant_expr(expr, options);
    let (typed, diagnostics) = infer_expr(&once, Some(module));
    let typed = if diagnostics.has_errors() {
        once
    } else {
        typed
    };
    fold_constant_expr(&typed, options).0
}

/// A function rebuilt without its return annotation.
fn without_return_type(expr: Expr) -> Expr {
    let ExprKind::Function(data) = expr.kind() else {
        return expr;
    };
    if data.ret_type.is_none() {
        return expr;
    }
    Function::new(
        FunctionData {
            ret_type: None,
            ..(**data).clone()
        },
        expr.span(),
    )
    .into_expr()
}

/// The arguments of a dynamic call with the non-constant ones folded.
fn prepared_args(args: &[Expr], module: &IRModule, options: &FoldOptions) -> Vec<Expr> {
    args.iter()
        .map(|arg| {
            if arg.as_constant().is_some() {
                arg.clone()
            } else {
                fold_twice(arg, module, options)
            }
        })
        .collect()
}

/// The constant data of a prepared argument with rank `ndim`.
fn constant(args: &[Expr], index: usize, ndim: usize) -> Option<&Arc<TensorData>> {
    args.get(index)?
        .as_constant()
        .filter(|data| data.ndim() == ndim)
}

/// A 1-d constant's elements as int32 immediates (TVM's `ToVector`).
fn int_vector(data: &TensorData) -> Option<Vec<i64>> {
    data.to_f64_vec()
        .ok()?
        .into_iter()
        .map(|v| {
            let v = v as i64;
            i32::try_from(v).ok().map(i64::from)
        })
        .collect()
}

/// Element `i` as a number (TVM's `ToScalar`).
fn scalar(data: &TensorData, i: usize) -> Option<f64> {
    data.get_f64(i).ok()
}

fn attr(attrs: &Attrs, name: &str) -> AttrValue {
    attrs.get(name).cloned().unwrap_or(AttrValue::Null)
}

/// The static replacement of a dynamic call, if its arguments allow one.
fn staticise(call_expr: &Expr, module: &IRModule, options: &FoldOptions) -> Option<Expr> {
    let call = call_expr.as_call()?;
    let name = call.callee.as_op()?.name.as_str();
    if !name.starts_with("dyn.") {
        return None;
    }
    let attrs = call.attrs.as_ref();
    let data = || call.args[0].clone();
    let args = prepared_args(&call.args, module, options);
    let shape_attr = |index: usize| -> Option<AttrValue> {
        Some(int_array(&int_vector(constant(&args, index, 1)?)?))
    };
    match name {
        "dyn.reshape" => Some(op_call_with(
            "reshape",
            vec![data()],
            &[("newshape", shape_attr(1)?)],
        )),
        "dyn.squeeze" => Some(op_call_with(
            "squeeze",
            vec![data()],
            &[("axis", shape_attr(1)?)],
        )),
        "dyn.tile" => Some(op_call_with(
            "tile",
            vec![data()],
            &[("reps", shape_attr(1)?)],
        )),
        "dyn.broadcast_to" => Some(op_call_with(
            "broadcast_to",
            vec![data()],
            &[
                ("shape", shape_attr(1)?),
                ("dtype", AttrValue::DataType(DataType::void())),
            ],
        )),
        "dyn.topk" => {
            let attrs = attrs?;
            let k = scalar(args.get(1)?.as_constant()?, 0)? as i64;
            let k = i32::try_from(k).ok()?;
            Some(op_call_with(
                "topk",
                vec![data()],
                &[
                    ("k", AttrValue::int_imm(i64::from(k), DataType::INT32)),
                    ("axis", attr(attrs, "axis")),
                    ("ret_type", attr(attrs, "ret_type")),
                    ("is_ascend", attr(attrs, "is_ascend")),
                    ("dtype", attr(attrs, "dtype")),
                ],
            ))
        }
        "dyn.zeros" | "dyn.ones" => {
            let attrs = attrs?;
            let shape = Some(int_array(&int_vector(constant(&args, 0, 1)?)?))?;
            let static_name = &name["dyn.".len()..];
            Some(op_call_with(
                static_name,
                vec![],
                &[("shape", shape), ("dtype", attr(attrs, "dtype"))],
            ))
        }
        "dyn.full" => {
            let attrs = attrs?;
            Some(op_call_with(
                "full",
                vec![call.args[0].clone()],
                &[("shape", shape_attr(1)?), ("dtype", attr(attrs, "dtype"))],
            ))
        }
        "dyn.one_hot" => {
            let attrs = attrs?;
            let depth = scalar(constant(&args, 3, 0)?, 0)? as i64;
            Some(op_call_with(
                "one_hot",
                call.args[..3].to_vec(),
                &[
                    ("depth", AttrValue::Int(i64::from(depth as i32))),
                    ("axis", attr(attrs, "axis")),
                    ("dtype", attr(attrs, "dtype")),
                ],
            ))
        }
        "dyn.image.resize2d" => {
            let attrs = attrs?;
            let size = int_vector(constant(&args, 1, 1)?)?;
            let roi = constant(&args, 2, 1)?.to_f64_vec().ok()?;
            let roi = AttrValue::Array(
                roi.into_iter()
                    .map(|v| AttrValue::FloatImm {
                        value: f64::from(v as f32),
                        dtype: DataType::FLOAT32,
                    })
                    .collect(),
            );
            let keep = |field: &str| (field.to_string(), attr(attrs, field));
            let mut fields: Vec<(String, AttrValue)> =
                vec![("size".into(), int_array(&size)), ("roi".into(), roi)];
            fields.extend(
                [
                    "layout",
                    "method",
                    "coordinate_transformation_mode",
                    "rounding_method",
                    "cubic_alpha",
                    "cubic_exclude",
                    "extrapolation_value",
                    "out_dtype",
                ]
                .map(keep),
            );
            let fields: Vec<(&str, AttrValue)> = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            Some(op_call_with("image.resize2d", vec![data()], &fields))
        }
        "dyn.nn.upsampling" => {
            let attrs = attrs?;
            let scale_h = scalar(constant(&args, 1, 0)?, 0)?;
            let scale_w = scalar(constant(&args, 2, 0)?, 0)?;
            Some(op_call_with(
                "nn.upsampling",
                vec![data()],
                &[
                    ("scale_h", AttrValue::Double(scale_h)),
                    ("scale_w", AttrValue::Double(scale_w)),
                    ("layout", attr(attrs, "layout")),
                    ("method", attr(attrs, "method")),
                    ("align_corners", attr(attrs, "align_corners")),
                ],
            ))
        }
        "dyn.nn.upsampling3d" => {
            let attrs = attrs?;
            let scale_d = scalar(constant(&args, 1, 0)?, 0)?;
            let scale_h = scalar(constant(&args, 2, 0)?, 0)?;
            let scale_w = scalar(constant(&args, 3, 0)?, 0)?;
            Some(op_call_with(
                "nn.upsampling3d",
                vec![data()],
                &[
                    ("scale_d", AttrValue::Double(scale_d)),
                    ("scale_h", AttrValue::Double(scale_h)),
                    ("scale_w", AttrValue::Double(scale_w)),
                    ("layout", attr(attrs, "layout")),
                    ("method", attr(attrs, "method")),
                    (
                        "coordinate_transformation_mode",
                        attr(attrs, "coordinate_transformation_mode"),
                    ),
                ],
            ))
        }
        "dyn.nn.pad" => {
            let attrs = attrs?;
            let width = constant(&args, 1, 2)?;
            constant(&args, 2, 0)?;
            let columns = usize::try_from(*width.shape.get(1)?).ok()?;
            let values = int_vector(width)?;
            if columns == 0 {
                return None;
            }
            let rows = values
                .chunks(columns)
                .map(int_array)
                .collect::<Vec<AttrValue>>();
            Some(op_call_with(
                "nn.pad",
                vec![data(), args[2].clone()],
                &[
                    ("pad_width", AttrValue::Array(rows)),
                    ("pad_mode", attr(attrs, "pad_mode")),
                ],
            ))
        }
        "dyn.strided_slice" => {
            let attrs = attrs?;
            Some(op_call_with(
                "strided_slice",
                vec![data()],
                &[
                    ("begin", shape_attr(1)?),
                    ("end", shape_attr(2)?),
                    ("strides", shape_attr(3)?),
                    ("slice_mode", attr(attrs, "slice_mode")),
                    ("axes", AttrValue::Null),
                ],
            ))
        }
        "dyn.sparse_to_dense" => Some(op_call_with(
            "sparse_to_dense",
            vec![
                call.args[0].clone(),
                call.args[1].clone(),
                call.args[2].clone(),
            ],
            &[("output_shape", shape_attr(3)?)],
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::rewrite::rewrite_post_order;

    #[test]
    fn integer_vectors_must_fit_in_int32() {
        let fits = TensorData::from_i64s(DataType::INT64, vec![2], &[3, -1]).unwrap();
        assert_eq!(int_vector(&fits), Some(vec![3, -1]));
        let too_big = TensorData::from_i64s(DataType::INT64, vec![1], &[1 << 40]).unwrap();
        assert_eq!(int_vector(&too_big), None);
    }

    #[test]
    fn non_dynamic_calls_are_left_alone() {
        let x = relay_ir::Var::new("x", None, None);
        let call = relay_ir::build::op_call("negative", vec![x.expr().clone()]);
        let module = IRModule::new();
        assert!(staticise(&call, &module, &FoldOptions::default()).is_none());
        // The rewrite helper is exercised on a whole expression too.
        let same = rewrite_post_order(&call, |_pre, post| post);
        assert!(same.ptr_eq(&call));
    }
}
