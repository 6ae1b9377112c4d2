//! Relations whose result is a tuple of tensors
//! (`src/relay/op/tensor/transform.cc`): `MeshgridRel`, `UniqueRel`,
//! `SparseFillEmptyRowsRel`, `SparseReshapeRel` and `DFTRel`.
//!
//! Sizes that depend on the data (the number of unique elements, of filled
//! rows) are the input's length or `?`, as in TVM.

use super::shape::c_int;
use super::{check, display, error, item, relations, tensor, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::{Dim, Type, TypeKind};

relations! {
    /// `MeshgridRel`: one grid per input, all of the same shape.
    "Meshgrid" => meshgrid_rel;
    /// `UniqueRel`: (unique, indices, inverse indices, count[, counts]).
    "unique" => unique_rel;
    /// `SparseFillEmptyRowsRel`: (indices, values, empty-row indicator),
    /// all `int64` with `?` rows.
    "sparse_fill_empty_rows" => sparse_fill_empty_rows_rel;
    /// `SparseReshapeRel`: (new indices, new shape).
    "sparse_reshape" => sparse_reshape_rel;
    /// `DFTRel`: the two inputs' types as a tuple.
    "DFT" => dft_rel;
}

/// `Downcast<TensorType>(t)`: TVM's message for any other type.
fn downcast_tensor(t: &Type) -> Result<&relay_ir::TensorType, RelationError> {
    t.as_tensor().ok_or_else(|| {
        RelationError::new(format!(
            "Downcast from {} to relay.TensorType failed.",
            display::ty(t)
        ))
    })
}

fn meshgrid_rel(ctx: &mut Ctx) -> Step {
    let fields = match ctx.ty(0).kind() {
        TypeKind::Tuple(fields) => fields.clone(),
        TypeKind::Incomplete(_) => return Ok(false),
        _ => {
            return Err(RelationError::at_input(
                format!(
                    "meshgrid requires a tuple of tensors as the first argument, found {}",
                    display::ty(ctx.ty(0))
                ),
                0,
            ))
        }
    };
    // Every field must be known before the first one's dtype is read.
    if fields.iter().any(Type::is_incomplete) {
        return Ok(false);
    }
    let dtype = downcast_tensor(item(&fields, 0)?)?.dtype;
    let mut grid_shape: Vec<Dim> = Vec::with_capacity(fields.len());
    for field in &fields {
        let field = downcast_tensor(field)?;
        if field.dtype != dtype {
            return error("relay.meshgrid requires all tensors have the same dtype");
        }
        match field.shape.as_slice() {
            [] => grid_shape.push(c_int(1)),
            [len] => grid_shape.push(len.clone()),
            _ => {
                return error(
                    "relay.meshgrid requires all tensors be either scalars or 1-D vectors.",
                )
            }
        }
    }
    if ctx.attrs.str("indexing")? == "xy" && grid_shape.len() >= 2 {
        grid_shape.swap(0, 1);
    }
    let grids = fields
        .iter()
        .map(|_| tensor(grid_shape.clone(), dtype))
        .collect();
    ctx.assign(1, Type::tuple(grids));
    Ok(true)
}

fn unique_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "Unique: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let ndim = data.shape.len();
    check(ndim == 1, || {
        format!("Check failed: ndim == 1 ({ndim} vs. 1) : Unique: input must be 1-D tensor")
    })?;
    let int32 = DataType::INT32;
    let mut fields = vec![
        tensor(data.shape.clone(), data.dtype),
        tensor(data.shape.clone(), int32),
        tensor(data.shape.clone(), int32),
        tensor(vec![c_int(1)], int32),
    ];
    if ctx.attrs.bool("return_counts")? {
        fields.push(tensor(data.shape.clone(), int32));
    }
    ctx.assign(1, Type::tuple(fields));
    Ok(true)
}

fn sparse_fill_empty_rows_rel(ctx: &mut Ctx) -> Step {
    // TVM reads the indices' type without checking it is a tensor.
    let Some(indices) = ctx.tensor_or_wait(
        0,
        "sparse_fill_empty_rows: expect sparse_indices type to be TensorType but get ",
    )?
    else {
        return Ok(false);
    };
    let ndims = item(&indices.shape, 1)?.clone();
    let int64 = DataType::INT64;
    let fields = vec![
        tensor(vec![Dim::Any, ndims], int64),
        tensor(vec![Dim::Any], int64),
        tensor(vec![Dim::Any], int64),
    ];
    let out = ctx.out();
    ctx.assign(out, Type::tuple(fields));
    Ok(true)
}

fn sparse_reshape_rel(ctx: &mut Ctx) -> Step {
    // TVM waits while any input is not a tensor (a tuple never becomes one:
    // the call stays untyped and the solver reports it).
    let (Some(indices), Some(prev_shape), Some(new_shape)) =
        (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    else {
        return Ok(false);
    };
    check(indices.dtype.is_int(), || {
        "sparse_indices must be tensor of integers".to_string()
    })?;
    check(prev_shape.dtype.is_int(), || {
        "prev_shape must be tensor of integers".to_string()
    })?;
    check(new_shape.dtype.is_int(), || {
        "new_shape must be tensor of integers".to_string()
    })?;
    let rank_check = |name: &str, got: usize, want: usize| {
        check(got == want, || {
            format!(
                "Check failed: {name}->shape.size() == {want} ({got} vs. {want}) : {name} must be {want}-D tensor"
            )
        })
    };
    rank_check("sparse_indices", indices.shape.len(), 2)?;
    rank_check("prev_shape", prev_shape.shape.len(), 1)?;
    rank_check("new_shape", new_shape.shape.len(), 1)?;
    let fields = vec![
        tensor(
            vec![indices.shape[0].clone(), new_shape.shape[0].clone()],
            indices.dtype,
        ),
        tensor(new_shape.shape.clone(), new_shape.dtype),
    ];
    ctx.assign(3, Type::tuple(fields));
    Ok(true)
}

fn dft_rel(ctx: &mut Ctx) -> Step {
    let Some(re) = ctx.tensor_or_wait(0, "DFT: expect re_data type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let Some(im) = ctx.tensor_or_wait(1, "DFT: expect im_data type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let fields = vec![
        tensor(re.shape.clone(), re.dtype),
        tensor(im.shape.clone(), im.dtype),
    ];
    ctx.assign(2, Type::tuple(fields));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, Type};

    #[test]
    fn meshgrid_grids_share_one_shape() {
        let xy = tup(&[t(&[3], "float32"), t(&[4], "float32")]);
        let grid = t(&[3, 4], "float32");
        assert_eq!(
            solve_out("meshgrid", &[xy.clone()], &[]),
            tup(&[grid.clone(), grid])
        );
        let swapped = t(&[4, 3], "float32");
        assert_eq!(
            solve_out("meshgrid", &[xy], &[("indexing", s("xy"))]),
            tup(&[swapped.clone(), swapped])
        );
        let scalar = tup(&[t(&[], "float32"), t(&[4], "float32")]);
        assert_eq!(
            solve_out("meshgrid", &[scalar], &[]),
            tup(&[t(&[1, 4], "float32"), t(&[1, 4], "float32")])
        );
        assert_eq!(
            fails(
                "meshgrid",
                &[tup(&[t(&[3], "float32"), t(&[4], "int32")])],
                &[]
            ),
            "relay.meshgrid requires all tensors have the same dtype"
        );
        assert_eq!(
            fails("meshgrid", &[tup(&[t(&[3, 1], "float32")])], &[]),
            "relay.meshgrid requires all tensors be either scalars or 1-D vectors."
        );
        assert_eq!(
            fails("meshgrid", &[t(&[3], "float32")], &[]),
            "meshgrid requires a tuple of tensors as the first argument, found Tensor[(3), float32]"
        );
        assert!(waits(
            "meshgrid",
            &[tup(&[t(&[3], "float32"), Type::incomplete()])],
            &[]
        ));
    }

    #[test]
    fn unique_counts_are_optional() {
        let unique = |return_counts: bool| {
            solve_out(
                "unique",
                &[t(&[8], "float32")],
                &[
                    ("attrs_type", s("relay.attrs.UniqueAttrs")),
                    ("return_counts", b(return_counts)),
                ],
            )
        };
        let i = t(&[8], "int32");
        let base = vec![t(&[8], "float32"), i.clone(), i.clone(), t(&[1], "int32")];
        assert_eq!(unique(false), tup(&base));
        let mut counted = base;
        counted.push(i);
        assert_eq!(unique(true), tup(&counted));
        assert_eq!(
            fails(
                "unique",
                &[t(&[2, 5], "int32")],
                &[("attrs_type", s("relay.attrs.UniqueAttrs"))]
            ),
            "Check failed: ndim == 1 (2 vs. 1) : Unique: input must be 1-D tensor"
        );
    }

    #[test]
    fn sparse_rows_and_reshape() {
        let out = solve_out(
            "sparse_fill_empty_rows",
            &[
                t(&[4, 2], "int64"),
                t(&[4], "float32"),
                t(&[2], "int64"),
                t(&[1], "float32"),
            ],
            &[],
        );
        let int64 = |dims: Vec<Dim>| td(dims, "int64");
        assert_eq!(
            out,
            tup(&[
                int64(vec![Dim::Any, Dim::int32(2)]),
                int64(vec![Dim::Any]),
                int64(vec![Dim::Any])
            ])
        );
        assert_eq!(
            fails(
                "sparse_fill_empty_rows",
                &[
                    t(&[4], "int64"),
                    t(&[4], "float32"),
                    t(&[2], "int64"),
                    t(&[1], "float32")
                ],
                &[],
            ),
            "IndexError: indexing 1 on an array of size 1"
        );
        let out = solve_out(
            "sparse_reshape",
            &[t(&[5, 2], "int64"), t(&[2], "int64"), t(&[3], "int64")],
            &[],
        );
        assert_eq!(out, tup(&[t(&[5, 3], "int64"), t(&[3], "int64")]));
        assert_eq!(
            fails(
                "sparse_reshape",
                &[t(&[5, 2], "int64"), t(&[2, 1], "int64"), t(&[3], "int64")],
                &[],
            ),
            "Check failed: prev_shape->shape.size() == 1 (2 vs. 1) : prev_shape must be 1-D tensor"
        );
        assert_eq!(
            fails(
                "sparse_reshape",
                &[t(&[5, 2], "float32"), t(&[2], "int64"), t(&[3], "int64")],
                &[],
            ),
            "sparse_indices must be tensor of integers"
        );
    }

    #[test]
    fn dft_pairs_its_inputs() {
        let dft = &[("attrs_type", s("relay.attrs.DFTAttrs"))];
        let (re, im) = (t(&[4, 8], "float32"), t(&[4, 8], "float32"));
        assert_eq!(
            solve_out("dft", &[re.clone(), im.clone()], dft),
            tup(&[re.clone(), im])
        );
        assert!(fails("dft", &[tup(&[re.clone()]), re], dft)
            .starts_with("DFT: expect re_data type to be TensorType but get"));
    }
}
