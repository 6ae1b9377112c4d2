//! What the sparse conversions of listed weights share (`DenseToSparse`,
//! `Conv2dToSparse`, TVM's `convert_sparse_dense.cc` and
//! `convert_sparse_conv2d.cc`): reading their `weight_name`/`weight_shape`
//! parameters, the types of the three BSR parameters that replace a weight,
//! and the rewrite itself — a call of the operator whose weight, as written,
//! is a listed variable becomes a call over `%w.data`, `%w.indices` and
//! `%w.indptr`, and the function's parameters are rebuilt as TVM's
//! `FreeVars` orders them (free variables in order of use, the new ones
//! last), so the dense weight disappears.

use crate::free_var_params::free_vars_as_params;
use relay_ir::dtype::DataType;
use relay_ir::rewrite::rewrite_function;
use relay_ir::{Dim, Expr, Function, Type, Var, VarId};
use relay_pass_manager::pipeline::PipelineValue;

/// The `weight_name` and `weight_shape` parameters, paired up: each name
/// with the sizes listed for it. TVM requires the two lists to have one
/// entry each per weight.
pub(crate) fn listed_bsr_sizes(
    names: Option<&PipelineValue>,
    shapes: Option<&PipelineValue>,
) -> Result<Vec<(String, Vec<i64>)>, String> {
    let list = |value: Option<&PipelineValue>| match value {
        Some(PipelineValue::List(items)) => items.clone(),
        _ => Vec::new(),
    };
    let (names, shapes) = (list(names), list(shapes));
    if names.len() != shapes.len() {
        return Err(format!(
            "weight_name has {} names but weight_shape {} shapes",
            names.len(),
            shapes.len()
        ));
    }
    let mut weights = Vec::with_capacity(names.len());
    for (name, shape) in names.iter().zip(&shapes) {
        let PipelineValue::Str(name) = name else {
            return Err(format!(
                "weight_name must be a list of strings, found {}",
                name.type_name()
            ));
        };
        let PipelineValue::List(items) = shape else {
            return Err(format!(
                "weight_shape must be a list of lists, found {}",
                shape.type_name()
            ));
        };
        let sizes = items
            .iter()
            .map(|item| match item {
                PipelineValue::Int(v) => Ok(*v),
                other => Err(format!(
                    "weight_shape must hold lists of integers, found {}",
                    other.type_name()
                )),
            })
            .collect::<Result<Vec<i64>, String>>()?;
        weights.push((name.clone(), sizes));
    }
    Ok(weights)
}

/// The types of the three BSR parameters for `sizes`: five sizes give a 3-D
/// data tensor, four a 2-D one, then the indices' and the index pointers'
/// lengths (data float32 whatever the weight's dtype, as TVM writes it).
/// Other lengths leave the three undefined, as TVM builds the variables
/// with null types.
pub(crate) fn bsr_types(sizes: &[i64]) -> [Option<Type>; 3] {
    let tensor = |dims: &[i64], dtype: DataType| {
        Some(Type::tensor(
            dims.iter().map(|&d| Dim::int32(d)).collect(),
            dtype,
        ))
    };
    let data_rank = match sizes.len() {
        5 => 3,
        4 => 2,
        _ => return [None, None, None],
    };
    [
        tensor(&sizes[..data_rank], DataType::FLOAT32),
        tensor(&sizes[data_rank..=data_rank], DataType::int(32)),
        tensor(&sizes[data_rank + 1..], DataType::int(32)),
    ]
}

/// Rewrites every call of `op` whose second argument, as written, is a
/// variable `sizes_of` knows: `build(data, [data, indices, indptr])` makes
/// the replacement from the call's (rewritten) first argument and the three
/// new parameter variables; then the parameters are rebuilt (see the module
/// documentation).
pub(crate) fn replace_listed_weights<'a>(
    function: &Function,
    op: &str,
    sizes_of: impl Fn(&str) -> Option<&'a [i64]>,
    mut build: impl FnMut(Expr, Vec<Expr>) -> Expr,
) -> Function {
    let mut new_vars: Vec<VarId> = Vec::new();
    let rewritten = rewrite_function(function, |pre, post| {
        let Some(call) = pre.as_call() else {
            return post;
        };
        if call.callee.as_op().map(|o| o.name.as_str()) != Some(op) {
            return post;
        }
        let Some(weight) = call.args.get(1).and_then(|w| w.as_var()) else {
            return post;
        };
        let Some(sizes) = sizes_of(weight.name()) else {
            return post;
        };
        let data = post.as_call().expect("a rewritten call stays a call").args[0].clone();
        let prefix = weight.name();
        let [data_type, indices_type, indptr_type] = bsr_types(sizes);
        let bsr = [
            Var::new(format!("{prefix}.data"), data_type, None),
            Var::new(format!("{prefix}.indices"), indices_type, None),
            Var::new(format!("{prefix}.indptr"), indptr_type, None),
        ];
        new_vars.extend(bsr.iter().map(Var::id));
        build(data, bsr.into_iter().map(Var::into_expr).collect())
    });
    free_vars_as_params(&rewritten, &new_vars)
}
