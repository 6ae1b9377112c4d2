//! Indexing relations of `src/relay/op/tensor/transform.cc`: reading
//! (`GatherRel`, `GatherNDRel`, `AdvIndexRel`, `ArgWhereRel`,
//! `UnRavelIndexRel`) and writing (`ScatterElementsRel`, `ScatterNDRel`,
//! `StridedSetRel`) elements at positions given by index tensors.
//!
//! Output dimensions are copied from the inputs (they keep their dtypes and
//! identities); only `argwhere` builds a new size, its `int32` rank. Checks
//! TVM makes with `reporter->AssertEQ` without an `ICHECK` around them
//! (`scatter_nd`'s shape checks) never fail, as in TVM.

use super::broadcast::concrete_broadcast;
use super::shape::assert_eq;
use super::{check, display, error, item, norm_axis, relations, tensor, AboutAttribute, Ctx, Step};
use relay_ir::dtype::DataType;
use relay_ir::{Dim, TypeKind};

relations! {
    /// `GatherRel`: the indices' shape, the data's dtype.
    "Gather" => gather_rel;
    /// `GatherNDRel`: `(Y_0, …, Y_{K-1}, X_{M+B}, …, X_{N-1})`.
    "GatherND" => gather_nd_rel;
    /// `AdvIndexRel`: the broadcast index shape, then the unindexed axes.
    "AdvIndex" => adv_index_rel;
    /// `ArgWhereRel`: `Tensor[(?, rank), int32]`.
    "ArgWhere" => arg_where_rel;
    /// `UnRavelIndexRel`: `(len(shape), len(indices))`.
    "UnRavelIndexRel" => unravel_index_rel;
    /// `ScatterElementsRel`: the data's type.
    "ScatterElements" => scatter_elements_rel;
    /// `ScatterNDRel`: the data's type.
    "ScatterND" => scatter_nd_rel;
    /// `StridedSetRel`: the data's type, whatever the other inputs.
    "StridedSet" => strided_set_rel;
}

fn gather_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(
        0,
        "Gather: expect input data type to be TensorType but get ",
    )?
    else {
        return Ok(false);
    };
    let Some(indices) =
        ctx.tensor_or_wait(1, "Gather: expect indices type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    check(indices.dtype.is_int(), || {
        "indices of take must be tensor of integer".to_string()
    })?;
    let Some(axis) = ctx.attrs.opt_int("axis")? else {
        return error("Check failed: param->axis.defined()");
    };
    let (ndim_data, ndim_indices) = (data.shape.len(), indices.shape.len());
    check(ndim_data == ndim_indices, || {
        format!("Check failed: ndim_data == ndim_indices ({ndim_data} vs. {ndim_indices})")
    })?;
    let axis = norm_axis(axis, ndim_data);
    check(axis >= 0, || {
        format!("Check failed: axis >= 0 ({axis} vs. 0)")
    })
    .about("axis")?;
    check(axis < ndim_data as i64, || {
        format!("Check failed: axis < ndim_data ({axis} vs. {ndim_data})")
    })
    .about("axis")?;
    for (i, (index_dim, data_dim)) in indices.shape.iter().zip(&data.shape).enumerate() {
        if i as i64 == axis {
            if let Some((size, _)) = index_dim.as_int_imm() {
                check(size >= 1, || {
                    format!("Check failed: *indice_shape_i >= 1 ({size} vs. 1)")
                })?;
            }
        } else {
            check(assert_eq(index_dim, data_dim), || {
                "Check failed: reporter->AssertEQ(indices->shape[i], data->shape[i])".to_string()
            })?;
        }
    }
    ctx.assign(2, tensor(indices.shape.clone(), data.dtype));
    Ok(true)
}

fn gather_nd_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(
        0,
        "GatherND: expect input data type to be TensorType but get ",
    )?
    else {
        return Ok(false);
    };
    let Some(indices) =
        ctx.tensor_or_wait(1, "GatherND: expect indices type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let ndim = data.shape.len();
    let first = item(&indices.shape, 0)?;
    let Some(mdim) = first.as_int_imm().map(|(value, _)| value) else {
        return error(format!(
            "GatherND needs a static shape for the first axis of indices, got {}",
            display::shape_array(&indices.shape)
        ));
    };
    let kdim = indices.shape.len() - 1;
    check(mdim >= 0 && mdim as u64 <= ndim as u64, || {
        "GatherND: indices shape does satisfy.".to_string()
    })?;
    let batch_dims = ctx.attrs.int("batch_dims")?;
    for i in 0..batch_dims.max(0) as usize {
        let data_dim = item(&data.shape, i)?;
        let index_dim = item(&indices.shape, i + 1)?;
        check(assert_eq(data_dim, index_dim), || {
            "Check failed: reporter->AssertEQ(data->shape[i], indices->shape[i + 1])".to_string()
        })
        .about("batch_dims")?;
    }
    let mut oshape: Vec<Dim> = indices.shape[1..=kdim].to_vec();
    // TVM's `size_t` loop starts at `M + B`; a negative `batch_dims` wraps
    // it past the end, so nothing is copied.
    let start = mdim + batch_dims;
    if start >= 0 {
        oshape.extend(data.shape.iter().skip(start as usize).cloned());
    }
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

fn adv_index_rel(ctx: &mut Ctx) -> Step {
    let fields = match ctx.ty(0).kind() {
        TypeKind::Tuple(fields) => fields.clone(),
        TypeKind::Incomplete(_) => return Ok(false),
        // TVM reads the fields of a non-tuple through a null pointer.
        _ => {
            return Err(crate::relation_contract::RelationError::at_input(
                format!(
                    "adv_index expects a tuple of tensors, got {}",
                    display::ty(ctx.ty(0))
                ),
                0,
            ))
        }
    };
    let data = item(&fields, 0)?;
    let Some(data) = data.as_tensor() else {
        return Ok(false);
    };
    let n_indices = fields.len() - 1;
    check(n_indices <= data.shape.len(), || {
        format!(
            "Check failed: inputs->fields.size() - 1 <= data->shape.size() ({n_indices} vs. {}) : too many indices for data!",
            data.shape.len()
        )
    })?;
    let first_index = item(&fields, 1)?;
    // TVM downcasts each index to a tensor type; we wait on one that is
    // still incomplete and fail on any other.
    if fields[1..].iter().any(relay_ir::Type::is_incomplete) {
        return Ok(false);
    }
    let index_tensor = |t: &relay_ir::Type| {
        t.as_tensor().cloned().ok_or_else(|| {
            crate::relation_contract::RelationError::new(format!(
                "Downcast from {} to relay.TensorType failed.",
                display::ty(t)
            ))
        })
    };
    let mut broadcast = index_tensor(first_index)?;
    for field in &fields[2..] {
        let next = index_tensor(field)?;
        let merged = concrete_broadcast(&broadcast, &next, data.dtype)?;
        broadcast = merged
            .as_tensor()
            .cloned()
            .expect("a broadcast makes a tensor");
    }
    let mut oshape = broadcast.shape.clone();
    oshape.extend(data.shape.iter().skip(n_indices).cloned());
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn arg_where_rel(ctx: &mut Ctx) -> Step {
    // TVM waits on any non-tensor input: a tuple never becomes one, so the
    // call is left untyped and the solver reports it.
    let Some(condition) = ctx.tensor(0) else {
        return Ok(false);
    };
    let rank = Dim::int(condition.shape.len() as i64, DataType::INT32);
    ctx.assign(1, tensor(vec![Dim::Any, rank], DataType::INT32));
    Ok(true)
}

fn unravel_index_rel(ctx: &mut Ctx) -> Step {
    let Some(indices) = ctx.tensor_or_wait(
        0,
        "unravel_index: expect input type to be TensorType but get ",
    )?
    else {
        return Ok(false);
    };
    check(indices.dtype.is_int() || indices.dtype.is_uint(), || {
        "indices of unravel_index must be tensor of integer".to_string()
    })?;
    let Some(shape) = ctx.tensor_or_wait(
        1,
        "unravel_index: expect input type to be TensorType but get ",
    )?
    else {
        return Ok(false);
    };
    check(shape.dtype.is_int() || shape.dtype.is_uint(), || {
        "shape of unravel_index must be tensor of integer".to_string()
    })?;
    let mut oshape = vec![item(&shape.shape, 0)?.clone()];
    if let Some(first) = indices.shape.first() {
        oshape.push(first.clone());
    }
    ctx.assign(2, tensor(oshape, indices.dtype));
    Ok(true)
}

/// The three tensors of a scatter (`[data, indices, updates]`), `None` to
/// wait; `op` names the operator in TVM's messages.
fn scatter_inputs(
    ctx: &Ctx,
    op: &str,
) -> Result<Option<[super::TensorView; 3]>, crate::relation_contract::RelationError> {
    let what = ["input data", "indices", "updates"];
    let mut views = Vec::with_capacity(3);
    for (i, what) in what.iter().enumerate() {
        match ctx.tensor_or_wait(
            i,
            &format!("{op}: expect {what} type to be TensorType but got "),
        )? {
            Some(view) => views.push(view),
            None => return Ok(None),
        }
    }
    let indices = &views[1];
    check(indices.dtype.is_int() || indices.dtype.is_uint(), || {
        format!("{op}: indices must be a tensor of integers.")
    })?;
    Ok(views.try_into().ok())
}

fn scatter_elements_rel(ctx: &mut Ctx) -> Step {
    let Some([data, _, _]) = scatter_inputs(ctx, "ScatterElements")? else {
        return Ok(false);
    };
    ctx.assign(3, tensor(data.shape.clone(), data.dtype));
    Ok(true)
}

fn scatter_nd_rel(ctx: &mut Ctx) -> Step {
    let Some([data, indices, updates]) = scatter_inputs(ctx, "ScatterND")? else {
        return Ok(false);
    };
    let first = item(&indices.shape, 0)?;
    let Some(mdim) = first.as_int_imm().map(|(value, _)| value) else {
        return error(format!(
            "ScatterND needs a static shape for the first axis of indices, got {}",
            display::shape_array(&indices.shape)
        ));
    };
    let kdim = indices.shape.len() - 1;
    let ndim = data.shape.len();
    check(mdim >= 0 && mdim as u64 <= ndim as u64, || {
        format!(
            "Check failed: size_t(mdim->value) <= ndim ({mdim} vs. {ndim}) : ScatterND: Given updates with shape (Y_0, ..., Y_{{K-1}}, X_M, ..., X_{{N-1}}), and indices with shape (M, Y_0, ..., Y_{{K-1}}), M must be less than or equal to N."
        )
    })?;
    // TVM's unchecked `AssertEQ`s: they only read the shapes (an update of
    // too low a rank is an index error), a mismatch is not reported.
    for i in 0..kdim {
        item(&updates.shape, i)?;
    }
    for i in mdim as usize..ndim {
        item(&updates.shape, i - mdim as usize + kdim)?;
    }
    ctx.assign(3, tensor(data.shape.clone(), data.dtype));
    Ok(true)
}

fn strided_set_rel(ctx: &mut Ctx) -> Step {
    let data = ctx.ty(0).clone();
    ctx.assign(5, data);
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, Type};

    #[test]
    fn gather_takes_the_indices_shape_and_checks_the_other_axes() {
        let data = t(&[3, 4, 5], "float32");
        let out = solve_out(
            "gather",
            &[data.clone(), t(&[3, 2, 5], "int64")],
            &[("axis", int(1))],
        );
        assert_eq!(out, t(&[3, 2, 5], "float32"));
        let out = solve_out(
            "gather",
            &[data.clone(), t(&[3, 4, 7], "int32")],
            &[("axis", int(-1))],
        );
        assert_eq!(out, t(&[3, 4, 7], "float32"));
        assert_eq!(
            fails(
                "gather",
                &[data.clone(), t(&[3, 4], "int32")],
                &[("axis", int(0))]
            ),
            "Check failed: ndim_data == ndim_indices (3 vs. 2)"
        );
        assert_eq!(
            fails(
                "gather",
                &[data.clone(), t(&[3, 4, 5], "float32")],
                &[("axis", int(0))]
            ),
            "indices of take must be tensor of integer"
        );
        assert_eq!(
            fails(
                "gather",
                &[data.clone(), t(&[3, 4, 5], "int32")],
                &[("axis", int(3))]
            ),
            "Check failed: axis < ndim_data (3 vs. 3)"
        );
        assert_eq!(
            fails(
                "gather",
                &[data.clone(), t(&[3, 0, 5], "int32")],
                &[("axis", int(1))]
            ),
            "Check failed: *indice_shape_i >= 1 (0 vs. 1)"
        );
        assert_eq!(
            fails(
                "gather",
                &[data.clone(), t(&[2, 4, 5], "int32")],
                &[("axis", int(1))]
            ),
            "Check failed: reporter->AssertEQ(indices->shape[i], data->shape[i])"
        );
        assert_eq!(
            fails("gather", &[data, t(&[3, 4, 5], "int32")], &[]),
            "Check failed: param->axis.defined()"
        );
        assert!(waits(
            "gather",
            &[Type::incomplete(), t(&[1], "int32")],
            &[("axis", int(0))]
        ));
    }

    #[test]
    fn gather_nd_with_and_without_batch_dims() {
        // test_op_level3.py::test_gather_nd: data (2, 2), indices (2, 2) → (2).
        let out = solve_out(
            "gather_nd",
            &[t(&[2, 2], "float32"), t(&[2, 2], "int32")],
            &[],
        );
        assert_eq!(out, t(&[2], "float32"));
        let out = solve_out(
            "gather_nd",
            &[t(&[2, 3, 4, 5], "float32"), t(&[1, 2, 6], "int32")],
            &[("batch_dims", int(1))],
        );
        assert_eq!(out, t(&[2, 6, 4, 5], "float32"));
        let any = td(vec![Dim::Any, Dim::int32(7)], "int32");
        assert_eq!(
            fails("gather_nd", &[t(&[2, 2], "float32"), any], &[]),
            "GatherND needs a static shape for the first axis of indices, got [?, 7]"
        );
        assert_eq!(
            fails(
                "gather_nd",
                &[t(&[2, 2], "float32"), t(&[3, 4], "int32")],
                &[]
            ),
            "GatherND: indices shape does satisfy."
        );
        assert_eq!(
            fails("gather_nd", &[t(&[2, 2], "float32"), t(&[], "int32")], &[]),
            "IndexError: indexing 0 on an array of size 0"
        );
    }

    #[test]
    fn adv_index_broadcasts_the_indices() {
        let fields = [
            t(&[3, 4, 5], "float32"),
            t(&[2, 1], "int64"),
            t(&[1, 3], "int64"),
        ];
        let out = solve_out("adv_index", &[tup(&fields)], &[]);
        assert_eq!(out, t(&[2, 3, 5], "float32"));
        let too_many = [t(&[3], "float32"), t(&[2], "int64"), t(&[2], "int64")];
        assert_eq!(
            fails("adv_index", &[tup(&too_many)], &[]),
            "Check failed: inputs->fields.size() - 1 <= data->shape.size() (2 vs. 1) : too many indices for data!"
        );
        assert!(waits(
            "adv_index",
            &[tup(&[t(&[3], "float32"), Type::incomplete()])],
            &[]
        ));
        assert!(fails(
            "adv_index",
            &[tup(&[
                t(&[3, 4], "float32"),
                t(&[2], "int64"),
                t(&[3], "int64")
            ])],
            &[]
        )
        .starts_with("Incompatible broadcast type"));
    }

    #[test]
    fn argwhere_and_unravel_index() {
        let rank = solve_out("argwhere", &[t(&[2, 3, 4], "bool")], &[]);
        assert_eq!(rank, td(vec![Dim::Any, Dim::int32(3)], "int32"));
        assert!(waits("argwhere", &[tup(&[t(&[2], "bool")])], &[]));
        let out = solve_out("unravel_index", &[t(&[5], "int64"), t(&[3], "int64")], &[]);
        assert_eq!(out, t(&[3, 5], "int64"));
        let out = solve_out("unravel_index", &[t(&[], "int32"), t(&[2], "int32")], &[]);
        assert_eq!(out, t(&[2], "int32"));
        assert_eq!(
            fails("unravel_index", &[t(&[], "float32"), t(&[2], "int32")], &[]),
            "indices of unravel_index must be tensor of integer"
        );
        assert_eq!(
            fails("unravel_index", &[t(&[], "int32"), t(&[2], "float32")], &[]),
            "shape of unravel_index must be tensor of integer"
        );
    }

    #[test]
    fn scatters_keep_the_data_type() {
        let scatter_elements = |indices: Type| {
            let inputs = [t(&[3, 3], "float32"), indices, t(&[2, 3], "float32")];
            super::super::test_util::run(
                "scatter_elements",
                &inputs,
                &[("attrs_type", s("relay.attrs.ScatterElementsAttrs"))],
            )
        };
        let out = scatter_elements(t(&[2, 3], "int64")).unwrap();
        assert!(matches!(
            out,
            crate::relation_contract::RelationOutcome::Solved(assigns)
                if assigns == vec![(3, t(&[3, 3], "float32"))]
        ));
        assert_eq!(
            scatter_elements(t(&[2, 3], "float32")).unwrap_err().message,
            "ScatterElements: indices must be a tensor of integers."
        );
        let nd = &[("attrs_type", s("relay.attrs.ScatterNDAttrs"))];
        let out = solve_out(
            "scatter_nd",
            &[
                t(&[3, 3], "float32"),
                t(&[2, 2], "int32"),
                t(&[2], "float32"),
            ],
            nd,
        );
        assert_eq!(out, t(&[3, 3], "float32"));
        assert_eq!(
            fails(
                "scatter_nd",
                &[t(&[3], "float32"), t(&[2, 2], "int32"), t(&[2], "float32")],
                nd
            ),
            "Check failed: size_t(mdim->value) <= ndim (2 vs. 1) : ScatterND: Given updates with shape (Y_0, ..., Y_{K-1}, X_M, ..., X_{N-1}), and indices with shape (M, Y_0, ..., Y_{K-1}), M must be less than or equal to N."
        );
        // A mismatch TVM does not check; an update of too low a rank it reads past.
        let out = solve_out(
            "scatter_nd",
            &[
                t(&[3, 3], "float32"),
                t(&[1, 2], "int32"),
                t(&[5, 7], "float32"),
            ],
            nd,
        );
        assert_eq!(out, t(&[3, 3], "float32"));
        assert_eq!(
            fails(
                "scatter_nd",
                &[
                    t(&[3, 3], "float32"),
                    t(&[1, 2], "int32"),
                    t(&[2], "float32")
                ],
                nd
            ),
            "IndexError: indexing 1 on an array of size 1"
        );
        let strided = solve_out(
            "strided_set",
            &[
                t(&[3, 4], "float32"),
                t(&[2, 3], "float32"),
                t(&[2], "int64"),
                t(&[2], "int64"),
                t(&[2], "int64"),
            ],
            &[],
        );
        assert_eq!(strided, t(&[3, 4], "float32"));
    }
}
