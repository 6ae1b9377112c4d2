//! Relations of operators working along one axis of a tensor
//! (`src/relay/op/tensor/transform.cc`): `ReverseRel`, `ReverseSequenceRel`,
//! `SequenceMaskRel`, `ScanopRel` (`cumsum`, `cumprod`), `TriluRel`,
//! `SlidingWindowRel` and `STFTRel`.
//!
//! Where TVM computes a size from a dimension that may be `?` (the
//! flattened size of a `cumsum` without axis, the window count of
//! `sliding_window`), it builds the expression around `tir.Any` and folds
//! only its identities (`x * 1`, `x + 0`, …); `any_arith` does the same,
//! so `cumprod` over `(?, 3)` has size `meta[tir.Mul][0]` (`? * 3`), not `?`.

use super::shape::{self, c_int, dim_dtype, floordiv, is_any, promote};
use super::{check, display, error, item, norm_axis, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::{Dim, DimExpr, DimOp};

relations! {
    /// `ReverseRel`: the input's type.
    "Reverse" => reverse_rel;
    /// `ReverseSequenceRel`: the input's type.
    "ReverseSequence" => reverse_sequence_rel;
    /// `SequenceMaskRel`: the input's type; the lengths are typed
    /// `Tensor[(batch), dtype]`.
    "SequenceMask" => sequence_mask_rel;
    /// `ScanopRel`: the data's shape (flattened without an axis) in the
    /// `dtype` attribute or the data's.
    "Cumsum" | "Cumprod" => scan_rel;
    /// `TriluRel`: the data's type; `k` is a scalar.
    "trilu" => trilu_rel;
    /// `SlidingWindowRel`: leading axes, window counts, window shape.
    "SlidingWindow" => sliding_window_rel;
    /// `STFTRel`: `([batch,] n_fft/2+1 or n_fft, n_frames, 2)`.
    "stft" => stft_rel;
}

/// TVM's `PrimExpr` arithmetic when an operand may be `tir.Any`: the
/// identities of `TryConstFold` fold, anything else around `?` becomes an
/// expression node; without `?` it is [`shape`]'s arithmetic.
pub(crate) fn any_arith(op: DimOp, a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
    if !is_any(a) && !is_any(b) {
        return match op {
            DimOp::Add => Ok(shape::add(a, b)),
            DimOp::Sub => Ok(shape::sub(a, b)),
            DimOp::Mul => Ok(shape::mul(a, b)),
            DimOp::FloorDiv => floordiv(a, b),
            _ => unreachable!("any_arith handles +, -, * and floordiv"),
        };
    }
    let (x, y) = (shape::const_int(a), shape::const_int(b));
    let folded = match op {
        DimOp::Add if x == Some(0) => Some(b),
        DimOp::Add | DimOp::Sub if y == Some(0) => Some(a),
        DimOp::Mul if x == Some(1) || y == Some(0) => Some(b),
        DimOp::Mul if y == Some(1) || x == Some(0) => Some(a),
        DimOp::FloorDiv if y == Some(0) => return error("Divide by zero"),
        DimOp::FloorDiv if y == Some(1) || x == Some(0) => Some(a),
        _ => None,
    };
    Ok(match folded {
        Some(dim) => dim.clone(),
        None => Dim::expr(DimExpr::Binary {
            op,
            a: a.clone(),
            b: b.clone(),
            dtype: promote(dim_dtype(a), dim_dtype(b)),
        }),
    })
}

fn reverse_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "reverse: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let ndim = data.shape.len() as i64;
    // TVM dereferences a null `axis`; we report it.
    let Some(axis) = ctx.attrs.opt_int("axis")? else {
        return error("reverse: the attribute `axis` is not defined");
    };
    check(-ndim <= axis && axis < ndim, || {
        format!(
            "reverse only accepts `axis` in [-data.ndim, data.ndim - 1], but got axis = {axis}, and data.ndim = {ndim}"
        )
    })
    .about("axis")?;
    let ty = ctx.ty(0).clone();
    ctx.assign(1, ty);
    Ok(true)
}

fn reverse_sequence_rel(ctx: &mut Ctx) -> Step {
    let what = "reverse_sequence: expect input type to be TensorType but get ";
    let Some(data) = ctx.tensor_or_wait(0, what)? else {
        return Ok(false);
    };
    let Some(seq_lengths) = ctx.tensor_or_wait(1, what)? else {
        return Ok(false);
    };
    check(seq_lengths.shape.len() == 1, || {
        "For reverse_sequnece, seq_lengths must be a 1D vector".to_string()
    })?;
    check(seq_lengths.dtype.is_int(), || {
        "For reverse_sequnece, seq_lengths must be tensor of integer".to_string()
    })?;
    let ndim = data.shape.len() as i64;
    let batch_axis = ctx.attrs.int("batch_axis")?;
    check(-ndim <= batch_axis && batch_axis < ndim, || {
        format!(
            "reverse_sequence only accepts `batch_axis` in [-data.ndim, data.ndim - 1], but got batch_axis = {batch_axis}, and data.ndim = {ndim}"
        )
    })
    .about("batch_axis")?;
    let batch_dim = &data.shape[norm_axis(batch_axis, data.shape.len()) as usize];
    check(shape::assert_eq(&seq_lengths.shape[0], batch_dim), || {
        format!(
            "For reverse_sequnece seq_lengths size should match with dimension of batch axis, but got dimension of batch_axis = {}, and seq_length size = {}",
            display::dim(batch_dim),
            display::dim(&seq_lengths.shape[0])
        )
    })?;
    let seq_axis = ctx.attrs.int("seq_axis")?;
    check(-ndim <= seq_axis && seq_axis < ndim, || {
        format!(
            "reverse_sequnece only accepts `seq_axis` in [-data.ndim, data.ndim - 1], but got seq_axis = {seq_axis}, and data.ndim = {ndim}"
        )
    })
    .about("seq_axis")?;
    let ty = ctx.ty(0).clone();
    ctx.assign(2, ty);
    Ok(true)
}

fn sequence_mask_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(0, "Check failed: (data) is false: ")? else {
        return Ok(false);
    };
    let Some(valid_length) = ctx.tensor_or_wait(1, "Check failed: (valid_length) is false: ")?
    else {
        return Ok(false);
    };
    let axis = ctx.attrs.int("axis")?;
    check(axis == 0 || axis == 1, || {
        "Check failed: param->axis == 0 || param->axis == 1".to_string()
    })
    .about("axis")?;
    let batch = item(&data.shape, (1 - axis) as usize)?.clone();
    ctx.assign(1, tensor(vec![batch], valid_length.dtype));
    let ty = ctx.ty(0).clone();
    ctx.assign(2, ty);
    Ok(true)
}

fn scan_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "Scanop: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let dtype = ctx.attrs.dtype_or("dtype", data.dtype)?;
    let shape = if ctx.attrs.opt_int("axis")?.is_some() {
        data.shape.clone()
    } else {
        let mut prod = item(&data.shape, 0)?.clone();
        for dim in &data.shape[1..] {
            prod = any_arith(DimOp::Mul, &prod, dim)?;
        }
        vec![prod]
    };
    ctx.assign(1, tensor(shape, dtype));
    Ok(true)
}

fn trilu_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(0, "Trilu: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let Some(k) = ctx.tensor_or_wait(1, "Trilu: expect k type to be TensorType but get ")? else {
        return Ok(false);
    };
    check(k.shape.is_empty(), || {
        format!(
            "Trilu: k must be a 0-D tensor but get {}",
            display::ty(ctx.ty(1))
        )
    })?;
    ctx.assign(2, tensor(data.shape.clone(), data.dtype));
    Ok(true)
}

fn sliding_window_rel(ctx: &mut Ctx) -> Step {
    let data = match ctx.tensor(0) {
        Some(data) => data,
        None if ctx.is_incomplete(0) => return Ok(false),
        None => {
            return Err(RelationError::at_input(
                format!(
                    "SlidingWindow operator expects input to be of TensorType but got {}",
                    display::ty(ctx.ty(0))
                ),
                0,
            ))
        }
    };
    let axis = ctx.attrs.int("axis")?;
    let window_shape = ctx.attrs.dims_or_empty("window_shape")?;
    let strides = ctx.attrs.dims_or_empty("strides")?;
    let index = |i: i64| -> Result<&Dim, RelationError> {
        if i < 0 {
            return Err(super::index_error(i, data.shape.len()));
        }
        item(&data.shape, i as usize)
    };
    let mut oshape: Vec<Dim> = (0..axis.max(0))
        .map(|i| index(i).cloned())
        .collect::<Result<_, _>>()?;
    let one = c_int(1);
    for (i, window) in window_shape.iter().enumerate() {
        let dim_len = index(axis + i as i64)?;
        let stride = item(&strides, i).about("strides")?;
        // `floordiv(dim_len - (window_len - 1) + stride - 1, stride)`.
        let span = any_arith(DimOp::Sub, window, &one)?;
        let rest = any_arith(DimOp::Sub, dim_len, &span)?;
        let rest = any_arith(DimOp::Add, &rest, stride)?;
        let rest = any_arith(DimOp::Sub, &rest, &one)?;
        oshape.push(any_arith(DimOp::FloorDiv, &rest, stride)?);
    }
    oshape.extend(window_shape.iter().cloned());
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn stft_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "Unique: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let n_fft = ctx.attrs.int("n_fft")?;
    let hop_length = ctx.attrs.int("hop_length")?;
    let onesided = ctx.attrs.bool("onesided")?;
    let mut oshape = Vec::with_capacity(4);
    let mut dim = 0;
    if data.shape.len() == 2 {
        oshape.push(data.shape[0].clone());
        dim = 1;
    }
    // C++ `int` arithmetic: `n_fft / 2` truncates.
    oshape.push(c_int(if onesided { n_fft / 2 + 1 } else { n_fft }));
    let frames_of = item(&data.shape, dim)?;
    oshape.push(if is_any(frames_of) {
        Dim::Any
    } else {
        let span = shape::sub(frames_of, &c_int(n_fft));
        shape::add(&floordiv(&span, &c_int(hop_length))?, &c_int(1))
    });
    oshape.push(c_int(2));
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, DimExpr, DimOp, Type};

    fn scan_attrs(
        given: &[(&'static str, relay_ir::AttrValue)],
    ) -> Vec<(&'static str, relay_ir::AttrValue)> {
        let mut attrs = vec![("attrs_type", s("relay.attrs.ScanopAttrs"))];
        attrs.extend(given.iter().cloned());
        attrs
    }

    #[test]
    fn scans_keep_or_flatten_the_shape() {
        let x = t(&[3, 4, 5], "float32");
        let out = solve_out("cumsum", &[x.clone()], &scan_attrs(&[("axis", int(1))]));
        assert_eq!(out, x);
        let out = solve_out("cumprod", &[x.clone()], &scan_attrs(&[]));
        assert_eq!(out, t(&[60], "float32"));
        let out = solve_out(
            "cumsum",
            &[t(&[2, 3], "int32")],
            &scan_attrs(&[("axis", int(0)), ("dtype", dt("int64"))]),
        );
        assert_eq!(out, t(&[2, 3], "int64"));
        // TVM's `? * 3` stays an expression.
        let any = td(vec![Dim::Any, Dim::int32(3)], "float32");
        let out = solve_out("cumprod", &[any], &scan_attrs(&[]));
        let product = Dim::expr(DimExpr::Binary {
            op: DimOp::Mul,
            a: Dim::Any,
            b: Dim::int32(3),
            dtype: relay_ir::dtype::DataType::INT32,
        });
        assert_eq!(out, td(vec![product], "float32"));
        assert_eq!(
            fails("cumsum", &[t(&[], "float32")], &scan_attrs(&[])),
            "IndexError: indexing 0 on an array of size 0"
        );
    }

    #[test]
    fn reverse_and_reverse_sequence_check_their_axes() {
        let x = t(&[2, 3], "float32");
        assert_eq!(solve_out("reverse", &[x.clone()], &[("axis", int(-2))]), x);
        assert_eq!(
            fails("reverse", &[x.clone()], &[("axis", int(2))]),
            "reverse only accepts `axis` in [-data.ndim, data.ndim - 1], but got axis = 2, and data.ndim = 2"
        );
        let lengths = t(&[2], "int32");
        assert_eq!(
            solve_out("reverse_sequence", &[x.clone(), lengths.clone()], &[]),
            x
        );
        assert_eq!(
            fails("reverse_sequence", &[x.clone(), t(&[3], "int32")], &[]),
            "For reverse_sequnece seq_lengths size should match with dimension of batch axis, but got dimension of batch_axis = 2, and seq_length size = 3"
        );
        assert_eq!(
            fails("reverse_sequence", &[x.clone(), t(&[2], "float32")], &[]),
            "For reverse_sequnece, seq_lengths must be tensor of integer"
        );
        assert_eq!(
            fails("reverse_sequence", &[x.clone(), t(&[2, 1], "int32")], &[]),
            "For reverse_sequnece, seq_lengths must be a 1D vector"
        );
        assert_eq!(
            fails("reverse_sequence", &[x.clone(), lengths.clone()], &[("seq_axis", int(5))]),
            "reverse_sequnece only accepts `seq_axis` in [-data.ndim, data.ndim - 1], but got seq_axis = 5, and data.ndim = 2"
        );
        assert_eq!(
            fails("reverse_sequence", &[x, lengths], &[("batch_axis", int(-3))]),
            "reverse_sequence only accepts `batch_axis` in [-data.ndim, data.ndim - 1], but got batch_axis = -3, and data.ndim = 2"
        );
    }

    #[test]
    fn sequence_mask_types_the_lengths() {
        let data = t(&[5, 3, 2], "float32");
        assert!(waits(
            "sequence_mask",
            &[data.clone(), Type::incomplete()],
            &[]
        ));
        let assigns = solved("sequence_mask", &[data.clone(), t(&[3], "int32")], &[]);
        assert!(assigns.contains(&(1, t(&[3], "int32"))));
        assert!(assigns.contains(&(2, data.clone())));
        let assigns = solved(
            "sequence_mask",
            &[data.clone(), t(&[5], "int64")],
            &[("axis", int(1))],
        );
        assert!(assigns.contains(&(1, t(&[5], "int64"))));
        assert_eq!(
            fails(
                "sequence_mask",
                &[data, t(&[3], "int32")],
                &[("axis", int(2))]
            ),
            "Check failed: param->axis == 0 || param->axis == 1"
        );
    }

    #[test]
    fn trilu_sliding_window_and_stft() {
        let trilu = &[("attrs_type", s("relay.attrs.TriluAttrs"))];
        let x = t(&[3, 3], "float32");
        assert_eq!(solve_out("trilu", &[x.clone(), t(&[], "int32")], trilu), x);
        assert_eq!(
            fails("trilu", &[x, t(&[1], "int32")], trilu),
            "Trilu: k must be a 0-D tensor but get Tensor[(1), int32]"
        );
        // test_op_level3.py::test_sliding_window.
        let out = solve_out(
            "sliding_window",
            &[t(&[3, 6, 7, 8, 9], "float32")],
            &[
                ("axis", int(1)),
                ("window_shape", ints(&[3, 4, 5])),
                ("strides", ints(&[2, 3, 4])),
            ],
        );
        assert_eq!(out, t(&[3, 2, 2, 1, 3, 4, 5], "float32"));
        assert_eq!(
            fails(
                "sliding_window",
                &[t(&[5, 6], "float32")],
                &[
                    ("axis", int(0)),
                    ("window_shape", ints(&[2, 2, 2])),
                    ("strides", ints(&[1, 1, 1]))
                ],
            ),
            "IndexError: indexing 2 on an array of size 2"
        );
        let stft = &[
            ("attrs_type", s("relay.attrs.StftAttrs")),
            ("n_fft", int(3)),
            ("hop_length", int(3)),
            ("win_length", int(3)),
        ];
        let out = solve_out("stft", &[t(&[1, 16], "float32"), t(&[3], "float32")], stft);
        assert_eq!(out, t(&[1, 2, 5, 2], "float32"));
        let any = td(vec![Dim::Any, Dim::Any], "float32");
        let out = solve_out("stft", &[any, t(&[3], "float32")], stft);
        assert_eq!(
            out,
            td(
                vec![Dim::Any, Dim::int32(2), Dim::Any, Dim::int32(2)],
                "float32"
            )
        );
    }
}
