//! Building new IR inside passes: operator calls with their attrs objects
//! filled in from the operator table, scalar constants, and the small
//! compositions TVM's passes share (its `pattern_utils.h`), written once.
//!
//! Passes build calls the way TVM's C++ helpers do: attribute-less
//! operators get no attrs object, others get an object of the operator's
//! declared attrs type with every field present (the given ones, the rest at
//! their declared defaults), so the printer shows exactly the fields TVM
//! would. Nodes built here carry no span and no checked type; the
//! `InferType` that follows a function pass types them.

use crate::dtype::DataType;
use crate::metadata::TensorData;
use crate::op::{self, OpDef};
use crate::{AttrValue, Attrs, Expr};

/// The operator `name` from the table. The names passes build are fixed in
/// the source and all in the table; a missing one is a bug in the pass.
fn table_op(name: &str) -> &'static OpDef {
    op::lookup(name).unwrap_or_else(|| panic!("operator `{name}` is not in the operator table"))
}

/// `name(args…)` without attributes (TVM's `Call(op, args, Attrs(), {})`).
pub fn op_call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::call(Expr::op(table_op(name), None), args, None, None)
}

/// `name(args…, fields…)`: an attrs object of the operator's declared type
/// with the given fields and every other field at its default.
pub fn op_call_with(name: &str, args: Vec<Expr>, fields: &[(&str, AttrValue)]) -> Expr {
    let op = table_op(name);
    let attrs = op
        .attrs()
        .map(|schema| attrs_with(&schema.type_key, fields))
        .unwrap_or_else(|| panic!("operator `{name}` declares no attrs type"));
    Expr::call(Expr::op(op, None), args, Some(attrs), None)
}

/// An attrs object of type `type_key` with `fields` set and every other
/// field at its declared default, in declaration order.
pub fn attrs_with(type_key: &str, fields: &[(&str, AttrValue)]) -> Attrs {
    let schema = op::attrs_schema(type_key)
        .unwrap_or_else(|| panic!("attrs type `{type_key}` is not in the operator table"));
    let values = schema
        .fields
        .iter()
        .map(|field| {
            let value = fields
                .iter()
                .find(|(name, _)| *name == field.name)
                .map(|(_, value)| value.clone())
                .unwrap_or_else(|| crate::op::default_value(&field.default, &field.ty));
            (field.name.clone(), value)
        })
        .collect();
    Attrs::new(type_key, values)
}

/// An `Array<Integer>` attribute value (elements are int32 `IntImm`s).
pub fn int_array(values: &[i64]) -> AttrValue {
    AttrValue::Array(
        values
            .iter()
            .map(|&value| AttrValue::int_imm(value, DataType::INT32))
            .collect(),
    )
}

/// A rank-0 constant of `dtype` holding `value` (TVM's
/// `MakeConstantScalar`, which passes the value through a C++ `float`
/// first, so it is rounded to f32 whatever the dtype). `None` for a dtype
/// that cannot hold a number.
pub fn scalar_constant(dtype: DataType, value: f32) -> Option<Expr> {
    let data = if dtype.is_float() || dtype.is_bfloat16() {
        TensorData::from_f64s(dtype, vec![], &[f64::from(value)]).ok()?
    } else {
        TensorData::from_i64s(dtype, vec![], &[value as i64]).ok()?
    };
    Some(Expr::constant(data, None))
}

/// Inserts unit axes into `bias` so that it broadcasts against a tensor of
/// rank `target_ndim` along `axes` (sorted, the axes the bias's own
/// dimensions stand for): TVM's `ExpandBiasToMatchAxis`, one `expand_dims`
/// per gap, last gap first.
pub fn expand_bias_to_match_axis(bias: Expr, target_ndim: usize, axes: &[i64]) -> Expr {
    let mut bias = bias;
    for i in (1..=axes.len()).rev() {
        let new_axes = if i == axes.len() {
            target_ndim as i64 - axes[i - 1] - 1
        } else {
            axes[i] - axes[i - 1]
        };
        if new_axes > 0 {
            bias = op_call_with(
                "expand_dims",
                vec![bias],
                &[
                    ("axis", AttrValue::Int(i as i64)),
                    ("num_newaxis", AttrValue::Int(new_axes)),
                ],
            );
        }
    }
    bias
}

/// A reduction (`mean`, `sum`, …) over `axes` with `ReduceAttrs`.
pub fn reduce(name: &str, data: Expr, axes: &[i64], keepdims: bool, exclude: bool) -> Expr {
    op_call_with(
        name,
        vec![data],
        &[
            ("axis", int_array(axes)),
            ("keepdims", AttrValue::Bool(keepdims)),
            ("exclude", AttrValue::Bool(exclude)),
        ],
    )
}

/// `variance(data, mean)` over `axes` (biased, as TVM's `Variance` helper
/// builds it by default).
pub fn variance(data: Expr, mean: Expr, axes: &[i64], keepdims: bool, exclude: bool) -> Expr {
    op_call_with(
        "variance",
        vec![data, mean],
        &[
            ("axis", int_array(axes)),
            ("keepdims", AttrValue::Bool(keepdims)),
            ("exclude", AttrValue::Bool(exclude)),
            ("unbiased", AttrValue::Bool(false)),
        ],
    )
}

/// `reshape(data, newshape=…)` with `allowzero` off.
pub fn reshape(data: Expr, newshape: &[i64]) -> Expr {
    op_call_with("reshape", vec![data], &[("newshape", int_array(newshape))])
}

/// A rank-0 constant of `dtype` holding `value` given as a C++ `double`
/// (TVM's `MakeConstantScalar` with a `double` argument): stored directly
/// for 32- and 64-bit floats and integers (integers truncate toward zero),
/// through `float` for float16 and bfloat16. `None` for a dtype that cannot
/// hold a number.
pub fn scalar_constant_f64(dtype: DataType, value: f64) -> Option<Expr> {
    let value = if dtype.is_float16() || dtype.is_bfloat16() {
        f64::from(value as f32)
    } else {
        value
    };
    let data = TensorData::from_f64s(dtype, vec![], &[value]).ok()?;
    Some(Expr::constant(data, None))
}

/// A one-dimensional int32 constant holding `values` (TVM's
/// `MakeConstantTensor(Int(32), {n}, values)`).
pub fn int32_vector_constant(values: &[i64]) -> Option<Expr> {
    let data = TensorData::from_i64s(DataType::INT32, vec![values.len() as i64], values).ok()?;
    Some(Expr::constant(data, None))
}

/// A copy of `attrs` (same type, same field order) with the named fields
/// set to new values; names the attrs object does not have are ignored, so
/// the result always keeps the schema of the original.
pub fn attrs_replacing(attrs: &Attrs, replacements: &[(&str, AttrValue)]) -> Attrs {
    let fields = attrs
        .fields()
        .iter()
        .map(|(name, value)| {
            let value = replacements
                .iter()
                .find(|(replaced, _)| replaced == name)
                .map_or_else(|| value.clone(), |(_, new_value)| new_value.clone());
            (name.clone(), value)
        })
        .collect();
    Attrs::new(attrs.type_key(), fields)
}

/// How many variables [`fresh_let_variable`] has made in this process.
static FRESH_LET_VARIABLES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A new variable named `x_N` without a type annotation, `N` counting from
/// 0 per process (TVM's `Var::GenSym`, whose counter is process-wide, so
/// names depend on how many were made before, as in TVM).
pub fn fresh_let_variable() -> crate::Var {
    let number = FRESH_LET_VARIABLES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    crate::Var::new(format!("x_{number}"), None, None)
}

/// Starts the [`fresh_let_variable`] count at 0 again, as a new process
/// would: for test harnesses that run, in one process, cases each standing
/// for one TVM run (TVM's records are made one process per case).
pub fn restart_fresh_let_variables() {
    FRESH_LET_VARIABLES.store(0, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::printer::print_expr;
    use crate::Var;

    #[test]
    fn calls_print_like_tvm_builds_them() {
        let x = Var::new("x", None, None);
        let mean = reduce("mean", x.expr().clone(), &[-1], true, false);
        let text = print_expr(&mean, &Default::default());
        assert!(
            text.contains("mean(%x, axis=[-1], keepdims=True)"),
            "{text}"
        );
    }

    #[test]
    fn bias_is_expanded_after_its_axis() {
        let b = Var::new("b", None, None);
        let expanded = expand_bias_to_match_axis(b.expr().clone(), 4, &[1]);
        let text = print_expr(&expanded, &Default::default());
        assert!(
            text.contains("expand_dims(%b, axis=1, num_newaxis=2)"),
            "{text}"
        );
        // The last axis needs no padding.
        let same = expand_bias_to_match_axis(b.expr().clone(), 4, &[3]);
        assert!(same.ptr_eq(b.expr()));
    }

    #[test]
    fn scalars_go_through_f32() {
        let c = scalar_constant(DataType::float(64), 0.1).unwrap();
        let value = c.as_constant().unwrap().get_f64(0).unwrap();
        assert_eq!(value, f64::from(0.1f32));
    }
}
