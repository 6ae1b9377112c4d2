//! Sparse relations (`src/relay/op/nn/sparse.cc`): `SparseDenseRel` (also
//! `nn.internal.sparse_dense_padded`), `SparseTransposeRel`, `SparseAddRel`
//! and `SparseConv2dRel`.
//!
//! A sparse matrix is CSR (`data` 1-D) or BSR (`data` 3-D, or 2-D for the
//! convolution: blocks of `data.shape[1]` rows); its row count is
//! `indptr.shape[0] - 1` (times the block height for BSR). TVM reads the
//! sparse operands without checking that they are tensors (it would crash
//! on an incomplete one); we wait for them.

use super::shape::{c_int, mul, sub};
use super::{check, error, relations, tensor, Ctx, Step};
use relay_ir::Dim;
use relay_ir::Type;

relations! {
    /// `SparseDenseRel`: `data · weightᵀ` with either operand sparse
    /// (`sparse_lhs`).
    "SparseDense" => sparse_dense_rel;
    /// `SparseTransposeRel`: the three CSR arrays keep their types.
    "SparseTranspose" => sparse_transpose_rel;
    /// `SparseAddRel`: the dense operand's type.
    "SparseAdd" => sparse_add_rel;
    /// `SparseConv2dRel`: a 1×1 convolution with a BSR weight.
    "SparseConv2d" => sparse_conv2d_rel;
}

/// `indptr.shape[0] - 1`: the row count of a CSR matrix (of blocks for
/// BSR).
fn rows(indptr: &[Dim]) -> Result<Dim, super::RelationError> {
    let first = super::item(indptr, 0)?;
    Ok(sub(first, &c_int(1)))
}

fn sparse_dense_rel(ctx: &mut Ctx) -> Step {
    let sparse_lhs = ctx.attrs.bool("sparse_lhs")?;
    // The dense operand (slot 0), the sparse data (1) and index pointers (3).
    let (Some(dense), Some(sparse), Some(indptr)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(3))
    else {
        return Ok(false);
    };
    let rank = sparse.shape.len();
    check(rank == 1 || rank == 3, || {
        if sparse_lhs {
            "Check failed: (data_data->shape.size() == 1 || data_data->shape.size() == 3) is false: "
        } else {
            "Check failed: (weight_data->shape.size() == 1 || weight_data->shape.size() == 3) is false: "
        }
        .to_string()
    })?;
    let mut sparse_rows = rows(&indptr.shape)?;
    if rank == 3 {
        sparse_rows = mul(&sparse_rows, &sparse.shape[1]);
    }
    let dense_rows = super::item(&dense.shape, 0)?.clone();
    let oshape = if sparse_lhs {
        vec![sparse_rows, dense_rows]
    } else {
        vec![dense_rows, sparse_rows]
    };
    ctx.assign(4, tensor(oshape, dense.dtype));
    Ok(true)
}

fn sparse_transpose_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(indices), Some(indptr)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    else {
        return Ok(false);
    };
    check(data.shape.len() == 1, || {
        format!(
            "Check failed: sparse_data->shape.size() == 1 ({} vs. 1) : ",
            data.shape.len()
        )
    })?;
    check(indices.shape.len() == 1, || {
        format!(
            "Check failed: sparse_indices->shape.size() == 1 ({} vs. 1) : ",
            indices.shape.len()
        )
    })?;
    let fields = [&data, &indices, &indptr]
        .iter()
        .map(|t| tensor(t.shape.clone(), t.dtype))
        .collect();
    ctx.assign(3, Type::tuple(fields));
    Ok(true)
}

fn sparse_add_rel(ctx: &mut Ctx) -> Step {
    let (Some(dense), Some(data), Some(indices)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    else {
        return Ok(false);
    };
    check(data.dtype == dense.dtype, || {
        "sparse tensor and dense tensor datatype should match.".to_string()
    })?;
    check(data.shape.len() == 1, || {
        "sparse data tensor should be 1D.".to_string()
    })?;
    check(indices.shape.len() == 1, || {
        "sparse indices tensor should be 1D.".to_string()
    })?;
    ctx.assign(4, tensor(dense.shape.clone(), dense.dtype));
    Ok(true)
}

fn sparse_conv2d_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(weight), Some(indptr)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(3))
    else {
        return Ok(false);
    };
    let rank = weight.shape.len();
    check((1..=3).contains(&rank), || {
        "Check failed: (weight_data->shape.size() == 1 || weight_data->shape.size() == 2 || weight_data->shape.size() == 3) is false: ".to_string()
    })?;
    let unknown = || {
        error(format!(
            "Unknown weight ndim {rank} for nn.sparse_conv2d, should be 2 or 3 (BSR)"
        ))
    };
    if rank == 1 {
        return unknown();
    }
    let channels = mul(&rows(&indptr.shape)?, &weight.shape[1]);
    let d = |i: usize| super::item(&data.shape, i).cloned();
    let oshape = match ctx.attrs.str("layout")?.as_str() {
        "NHWC" => vec![d(0)?, d(1)?, d(2)?, channels],
        "NCHW" => vec![d(0)?, channels, d(2)?, d(3)?],
        _ => return unknown(),
    };
    ctx.assign(4, tensor(oshape, data.dtype));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, Type};

    #[test]
    fn sparse_dense_csr_and_bsr_either_side() {
        let csr = [t(&[20], "float32"), t(&[20], "int32"), t(&[13], "int32")];
        let out = solve_out(
            "nn.sparse_dense",
            &[&[t(&[8, 16], "float32")][..], &csr].concat(),
            &[],
        );
        assert_eq!(out, t(&[8, 12], "float32"));
        let bsr = [t(&[6, 4, 2], "float32"), t(&[6], "int32"), t(&[4], "int32")];
        let out = solve_out(
            "nn.sparse_dense",
            &[&[t(&[8, 16], "float32")][..], &bsr].concat(),
            &[("sparse_lhs", b(true))],
        );
        assert_eq!(out, t(&[12, 8], "float32"));
        assert!(waits(
            "nn.sparse_dense",
            &[
                t(&[8, 16], "float32"),
                Type::incomplete(),
                t(&[20], "int32"),
                t(&[13], "int32")
            ],
            &[],
        ));
        let indptr = td(vec![Dim::Any], "int32");
        let out = solve_out(
            "nn.sparse_dense",
            &[
                t(&[8, 16], "float32"),
                t(&[20], "float32"),
                t(&[20], "int32"),
                indptr,
            ],
            &[],
        );
        assert_eq!(out, td(vec![Dim::int32(8), Dim::Any], "float32"));
    }

    #[test]
    fn sparse_transpose_add_and_conv2d() {
        let out = solve_out(
            "nn.sparse_transpose",
            &[t(&[10], "float64"), t(&[10], "int64"), t(&[6], "int64")],
            &[],
        );
        assert_eq!(
            out,
            tup(&[t(&[10], "float64"), t(&[10], "int64"), t(&[6], "int64")])
        );
        let message = fails(
            "nn.sparse_transpose",
            &[t(&[10, 1], "float64"), t(&[10], "int64"), t(&[6], "int64")],
            &[],
        );
        assert_eq!(
            message,
            "Check failed: sparse_data->shape.size() == 1 (2 vs. 1) : "
        );
        let message = fails(
            "nn.sparse_add",
            &[
                t(&[4, 5], "float32"),
                t(&[6], "float32"),
                t(&[6, 1], "int32"),
                t(&[5], "int32"),
            ],
            &[],
        );
        assert_eq!(message, "sparse indices tensor should be 1D.");
        let weight = [t(&[40, 4], "float32"), t(&[40], "int32"), t(&[17], "int32")];
        let out = solve_out(
            "nn.sparse_conv2d",
            &[&[t(&[1, 64, 32, 32], "float32")][..], &weight].concat(),
            &[("layout", s("NCHW"))],
        );
        assert_eq!(out, t(&[1, 64, 32, 32], "float32"));
        let csr = [t(&[40], "float32"), t(&[40], "int32"), t(&[17], "int32")];
        let message = fails(
            "nn.sparse_conv2d",
            &[&[t(&[1, 32, 32, 64], "float32")][..], &csr].concat(),
            &[],
        );
        assert_eq!(
            message,
            "Unknown weight ndim 1 for nn.sparse_conv2d, should be 2 or 3 (BSR)"
        );
    }
}
