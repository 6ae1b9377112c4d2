//! Shape-manipulating relations of `src/relay/op/tensor/transform.cc` (and
//! `transform.h`): `ExpandDimsRel`, `SqueezeRel`, `TransposeRel`,
//! `ReshapeRel` (special values 0, -1, -2, -3, -4 and `allowzero`),
//! `ReverseReshapeRel`, `ReshapeLikeRel`, `ConcatenateRel`, `StackRel`, `SplitRel`,
//! `StridedSliceRel`, `SliceLikeRel`, `TakeRel`, `TileRel`, `RepeatRel`,
//! `FullRel`, `FullLikeRel`, `InitOpRel`, `ArangeRel`, `LayoutTransformRel`,
//! `OneHotRel`, `SparseToDenseRel` and `MatrixSetDiagRel`.
//!
//! Copied dimensions keep their dtypes; sizes taken from attributes keep the
//! attribute's (`Integer` values are `int32` unless written `…i64`); sizes
//! TVM builds from C++ integers (`expand_dims`' new axes, `stack`'s new
//! axis, `split`'s sections by index, `strided_slice` on an `Any`-free axis
//! cast to the input's dtype) follow the rules in [`super::shape`].

use super::display::{self, shape_array};
use super::layout::{BijectiveLayout, Layout};
use super::shape::{
    self, add, c_int, const_int, dim_dtype, floordiv, floormod, is_any, is_int_imm, mul, sub,
};
use super::{check, constant_scalar, error, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Dim, TensorType, Type, TypeKind};

relations! {
    /// `ExpandDimsRel`.
    "ExpandDims" => expand_dims_rel;
    /// `SqueezeRel`.
    "Squeeze" => squeeze_rel;
    /// `TransposeRel` (`axes=None` reverses).
    "Transpose" => transpose_rel;
    /// `ReshapeRel`.
    "Reshape" => reshape_rel;
    /// `ReverseReshapeRel`: `reshape` with the special values applied
    /// from the right.
    "ReverseReshape" => reverse_reshape_rel;
    /// `ReshapeLikeRel`.
    "ReshapeLike" => reshape_like_rel;
    /// `ConcatenateRel`: the input is a tuple type.
    "Concatenate" => concatenate_rel;
    /// `StackRel`.
    "Stack" => stack_rel;
    /// `SplitRel`: a tuple of pieces.
    "Split" => split_rel;
    /// `StridedSliceRel`.
    "StridedSlice" => strided_slice_rel;
    /// `SliceLikeRel`.
    "SliceLike" => slice_like_rel;
    /// `TakeRel`.
    "Take" => take_rel;
    /// `TileRel`.
    "Tile" => tile_rel;
    /// `RepeatRel`.
    "Repeat" => repeat_rel;
    /// `FullRel`.
    "Full" => full_rel;
    /// `FullLikeRel`.
    "FullLike" => full_like_rel;
    /// `InitOpRel` (`zeros`, `ones`).
    "InitOp" => init_op_rel;
    /// `ArangeRel`.
    "Arange" => arange_rel;
    /// `LayoutTransformRel`.
    "layout_transform" => layout_transform_rel;
    /// `OneHotRel`.
    "OneHot" => one_hot_rel;
    /// `SparseToDenseRel`.
    "SparseToDense" => sparse_to_dense_rel;
    /// `MatrixSetDiagRel`.
    "MatrixSetDiag" => matrix_set_diag_rel;
}

fn expand_dims_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(
        0,
        "expand_dims: expect input type to be TensorType but get ",
    )?
    else {
        return Ok(false);
    };
    let ndim = data.shape.len() as i64;
    let axis = ctx.attrs.int("axis")?;
    let num_newaxis = ctx.attrs.int("num_newaxis")?;
    check(num_newaxis >= 0, || {
        format!("expand_dims only accepts `num_newaxis >= 0`, but got num_newaxis = {num_newaxis}")
    })?;
    check(-ndim - 1 <= axis && axis <= ndim, || {
        format!(
            "expand_dims only accepts `axis` in [-data.ndim - 1, data.ndim], but got axis = {axis}, and data.ndim = {ndim}"
        )
    }).about("axis")?;
    // The new axes are built one by one: bound their number first.
    relay_ir::limits::check_rank(ndim as u64 + num_newaxis as u64).map_err(RelationError::new)?;
    let pivot = if axis < 0 { ndim + axis + 1 } else { axis } as usize;
    let mut oshape = data.shape[..pivot].to_vec();
    // A new `1` object per new axis, as TVM's `emplace_back(1)`.
    oshape.extend((0..num_newaxis).map(|_| c_int(1)));
    oshape.extend_from_slice(&data.shape[pivot..]);
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn squeeze_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let mut result = Vec::new();
    match ctx.attrs.ints("axis")? {
        None => {
            for dim in &data.shape {
                let Some(value) = const_int(dim) else {
                    return error("axis needs to be defined for dynamic input.");
                };
                if value != 1 {
                    result.push(dim.clone());
                }
            }
        }
        Some(axes) => {
            let n = data.shape.len() as i64;
            let mut keep = vec![true; data.shape.len()];
            for axis in axes {
                let axis = if axis < 0 { axis + n } else { axis };
                check(axis >= 0, || {
                    format!("Check failed: axis_val >= 0 ({axis} vs. 0)")
                })
                .about("axis")?;
                check(axis < n, || {
                    format!("Check failed: axis_val < original_shape.size() ({axis} vs. {n})")
                })
                .about("axis")?;
                keep[axis as usize] = false;
            }
            for (dim, keep) in data.shape.iter().zip(keep) {
                if keep {
                    result.push(dim.clone());
                } else if let Some(value) = const_int(dim) {
                    check(value == 1, || {
                        "cannot squeeze axis with dimension not equal to 1".to_string()
                    })?;
                }
            }
        }
    }
    ctx.assign(1, tensor(result, data.dtype));
    Ok(true)
}

fn transpose_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "transpose: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let ndim = data.shape.len() as i64;
    let axes = ctx.attrs.ints("axes")?;
    let order: Vec<usize> = match axes {
        None => (0..data.shape.len()).rev().collect(),
        Some(axes) => {
            check(axes.len() as i64 == ndim, || {
                format!(
                    "Dimension mismatch: axes has {} elements, but data.ndim = {ndim}",
                    axes.len()
                )
            })
            .about("axes")?;
            let mut used = vec![false; data.shape.len()];
            let mut order = Vec::with_capacity(axes.len());
            for axis in axes {
                check(-ndim <= axis && axis < ndim, || {
                    format!(
                        "transpose only allows each `axis` in `axes` in range [-data.ndim, data.ndim), but got axis = {axis}, and data.ndim = {ndim}"
                    )
                }).about("axes")?;
                let axis = if axis < 0 { axis + ndim } else { axis } as usize;
                check(!used[axis], || {
                    format!("Duplicate axes in transpose: {axis}")
                })
                .about("axes")?;
                used[axis] = true;
                order.push(axis);
            }
            order
        }
    };
    let oshape = order.iter().map(|&i| data.shape[i].clone()).collect();
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

/// `InferNewShape` (not reversed).
pub(crate) fn infer_new_shape(
    ishape: &[Dim],
    newshape: &[Dim],
    allowzero: bool,
) -> Result<Vec<Dim>, RelationError> {
    // Special values (-2, -4) can make the shape longer than `newshape`.
    let mut oshape: Vec<Dim> = Vec::with_capacity(newshape.len().max(ishape.len()));
    let mut used_input = std::collections::BTreeSet::new();
    let mut used_output = std::collections::BTreeSet::new();
    let mut src = 0usize;
    let mut infer_idx: Option<usize> = None;
    let value =
        |d: &Dim| const_int(d).ok_or_else(|| RelationError::new("newshape must hold integers"));
    let mut i = 0;
    while i < newshape.len() {
        let svalue = value(&newshape[i])?;
        if svalue > 0 {
            oshape.push(newshape[i].clone());
            src += 1;
        } else if svalue == 0 {
            if allowzero {
                oshape.push(newshape[i].clone());
                src += 1;
            } else {
                check(src < ishape.len(), || {
                    format!(
                        "Check failed: src_idx < ishape.size() ({src} vs. {})",
                        ishape.len()
                    )
                })?;
                used_input.insert(src);
                used_output.insert(oshape.len());
                oshape.push(ishape[src].clone());
                src += 1;
            }
        } else if svalue == -1 {
            check(infer_idx.is_none(), || {
                "One and only one dim can be inferred".to_string()
            })?;
            infer_idx = Some(i);
            oshape.push(c_int(1));
            src += 1;
        } else if svalue == -2 {
            while src < ishape.len() {
                used_input.insert(src);
                used_output.insert(oshape.len());
                oshape.push(ishape[src].clone());
                src += 1;
            }
        } else if svalue == -3 {
            check(src + 1 < ishape.len(), || {
                format!(
                    "Check failed: src_idx + 1 < ishape.size() ({} vs. {})",
                    src + 1,
                    ishape.len()
                )
            })?;
            used_input.insert(src);
            let d1 = ishape[src].clone();
            src += 1;
            used_input.insert(src);
            let d2 = ishape[src].clone();
            src += 1;
            used_output.insert(oshape.len());
            oshape.push(if is_any(&d1) || is_any(&d2) {
                Dim::Any
            } else {
                mul(&d1, &d2)
            });
        } else if svalue == -4 {
            check(i + 2 < newshape.len(), || {
                format!(
                    "Check failed: i + 2 < newshape.size() ({} vs. {})",
                    i + 2,
                    newshape.len()
                )
            })?;
            check(src < ishape.len(), || {
                format!(
                    "Check failed: src_idx < ishape.size() ({src} vs. {})",
                    ishape.len()
                )
            })?;
            used_input.insert(src);
            let d0 = ishape[src].clone();
            src += 1;
            i += 1;
            let d1 = newshape[i].clone();
            i += 1;
            let d2 = newshape[i].clone();
            if value(&d1)? == -1 {
                check(value(&d2)? != -1, || {
                    "Split dims cannot both be -1.".to_string()
                })?;
                used_output.insert(oshape.len());
                oshape.push(if is_any(&d0) {
                    Dim::Any
                } else {
                    floordiv(&d0, &d2)?
                });
                used_output.insert(oshape.len());
                oshape.push(d2);
            } else {
                used_output.insert(oshape.len());
                oshape.push(d1.clone());
                used_output.insert(oshape.len());
                if value(&d2)? == -1 {
                    oshape.push(if is_any(&d0) {
                        Dim::Any
                    } else {
                        floordiv(&d0, &d1)?
                    });
                } else {
                    oshape.push(d2);
                }
            }
        } else {
            return error(format!("Unsupported special value: {svalue}"));
        }
        i += 1;
    }
    if let Some(infer_idx) = infer_idx {
        let mut infer_dim = c_int(1);
        for (i, dim) in ishape.iter().enumerate() {
            if used_input.contains(&i) {
                continue;
            }
            if is_any(dim) {
                infer_dim = Dim::Any;
                break;
            }
            infer_dim = mul(&infer_dim, dim);
        }
        if !is_any(&infer_dim) {
            for (i, dim) in oshape.iter().enumerate() {
                if used_output.contains(&i) {
                    continue;
                }
                if is_any(dim) {
                    infer_dim = Dim::Any;
                    break;
                }
                infer_dim = floordiv(&infer_dim, dim)?;
            }
        }
        // `oshape.Set(infer_idx, …)`: `infer_idx` counts `newshape`'s
        // entries, which special values make longer than `oshape`.
        if infer_idx >= oshape.len() {
            return Err(super::index_error(infer_idx, oshape.len()));
        }
        oshape[infer_idx] = infer_dim;
    }
    Ok(oshape)
}

fn reshape_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "reshape: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let newshape = ctx.attrs.dims_or_empty("newshape")?;
    let allowzero = ctx.attrs.bool("allowzero")?;
    let oshape = infer_new_shape(&data.shape, &newshape, allowzero)?;
    let product = |dims: &[Dim]| -> Option<i64> {
        dims.iter()
            .map(const_int)
            .try_fold(1i64, |acc, d| d.map(|d| acc.wrapping_mul(d)))
    };
    if let (Some(out), Some(input)) = (product(&oshape), product(&data.shape)) {
        if out != input {
            let join = |dims: &[Dim]| dims.iter().map(display::dim).collect::<Vec<_>>().join(",");
            return error(format!(
                "Input tensor shape({}) and reshaped shape({}) are not compatible!",
                join(&data.shape),
                join(&oshape)
            ));
        }
    }
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn reverse_reshape_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "reshape: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let mut newshape = ctx.attrs.dims_or_empty("newshape")?;
    newshape.reverse();
    let allowzero = ctx.attrs.bool("allowzero")?;
    let mut ishape = data.shape.clone();
    ishape.reverse();
    let mut oshape = infer_new_shape(&ishape, &newshape, allowzero)?;
    // Only immediates count (a folded `n * 2` of a variable does not).
    let product = |dims: &[Dim]| -> Option<i64> {
        dims.iter()
            .map(|d| d.as_int_imm().map(|(v, _)| v))
            .try_fold(1i64, |acc, d| d.map(|d| acc.wrapping_mul(d)))
    };
    if let (Some(out), Some(input)) = (product(&oshape), product(&ishape)) {
        check(out == input, || {
            format!(
                "Check failed: oshape_sum == data_shape_sum ({out} vs. {input}) : Input tensor shape and reshaped shape are not compatible"
            )
        })?;
    }
    oshape.reverse();
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn reshape_like_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(like)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let lhs_size = data.shape.len() as i64;
    let rhs_size = like.shape.len() as i64;
    let norm = |v: i64, size: i64| if v < 0 { v + size } else { v };
    let lhs_begin = norm(attrs.int("lhs_begin")?, lhs_size);
    let lhs_end = norm(attrs.opt_int("lhs_end")?.unwrap_or(lhs_size), lhs_size);
    let rhs_begin = norm(attrs.int("rhs_begin")?, rhs_size);
    let rhs_end = norm(attrs.opt_int("rhs_end")?.unwrap_or(rhs_size), rhs_size);
    let range = |from: i64, to: i64, dims: &[Dim]| -> Result<Vec<Dim>, RelationError> {
        (from.max(0)..to)
            .map(|i| {
                dims.get(i as usize)
                    .cloned()
                    .ok_or_else(|| RelationError::new("reshape_like: index out of range"))
            })
            .collect()
    };
    let mut shape_like = range(0, lhs_begin, &data.shape)?;
    shape_like.extend(range(rhs_begin, rhs_end, &like.shape)?);
    shape_like.extend(range(lhs_end, lhs_size, &data.shape)?);
    if data.shape.iter().all(is_int_imm) {
        let size = |dims: &[Dim]| -> Option<i64> {
            dims.iter()
                .map(const_int)
                .try_fold(1i64, |acc, d| d.map(|d| acc.wrapping_mul(d)))
        };
        if let (Some(a), Some(b)) = (size(&data.shape), size(&shape_like)) {
            check(a == b, || {
                format!(
                    "Reshape inputs size should be compatible, but found data_shape {} not same as output_shape {}",
                    shape_array(&data.shape),
                    shape_array(&shape_like)
                )
            })?;
        }
    }
    ctx.assign(2, tensor(shape_like, data.dtype));
    Ok(true)
}

/// `ConcatenateRel<ConcatenateAttrs>` on slots `[tuple, out]`.
pub(crate) fn concatenate_rel(ctx: &mut Ctx) -> Step {
    let fields = match ctx.ty(0).kind() {
        TypeKind::Tuple(fields) => fields.clone(),
        // TVM reports an incomplete input as an error too; our solver may
        // call relations earlier than TVM's, so we wait for it instead.
        TypeKind::Incomplete(_) => return Ok(false),
        _ => {
            return Err(RelationError::at_input(
                format!(
                    "concatenate requires a tuple of tensors as the first argument, found {}",
                    display::ty(ctx.ty(0))
                ),
                0,
            ))
        }
    };
    if !ctx.attrs.is_some() {
        return error("the call attributes are not defined");
    }
    let Some(first) = fields.first() else {
        return error("concatenate requires a non-empty tuple of tensors");
    };
    if first.is_incomplete() {
        return Ok(false);
    }
    let Some(first) = first.as_tensor().cloned() else {
        return error("concatenate requires a tuple of tensors as the first argument");
    };
    let ndim = first.shape.len() as i64;
    let axis = ctx.attrs.int("axis")?;
    if !(-ndim <= axis && axis < ndim) {
        return error(format!(
            "concatenate only accepts `axis` in [-ndim, ndim), but got axis = {axis}, and ndim = {ndim}"
        ));
    }
    let axis = if axis < 0 { ndim + axis } else { axis } as usize;
    let mut tensors = Vec::with_capacity(fields.len());
    for field in &fields {
        if field.is_incomplete() {
            return Ok(false);
        }
        let Some(e) = field.as_tensor() else {
            return error("concatenate requires a tuple of tensors as the first argument");
        };
        if e.shape.len() as i64 != ndim {
            return error("relay.concatenate requires all tensors have the same ndim");
        }
        if e.dtype != first.dtype {
            return error("relay.concatenate requires all tensors have the same dtype");
        }
        tensors.push(e.clone());
    }
    let mut oshape = vec![Dim::Any; ndim as usize];
    let mut is_dynamic = false;
    let mut concat_dim = first.shape[axis].clone();
    for (i, e) in tensors.iter().enumerate() {
        if is_any(&e.shape[axis]) {
            is_dynamic = true;
            concat_dim = Dim::Any;
        } else if i > 0 && !is_dynamic {
            concat_dim = add(&concat_dim, &e.shape[axis]);
        }
    }
    oshape[axis] = concat_dim;
    for (i, slot) in oshape.iter_mut().enumerate() {
        if i == axis {
            continue;
        }
        let non_any: Vec<&Dim> = tensors
            .iter()
            .map(|e| &e.shape[i])
            .filter(|d| !is_any(d))
            .collect();
        for other in non_any.iter().skip(1) {
            if !shape::assert_eq(non_any[0], other) {
                return error(
                    "relay.concatenate requires all tensors have the same shape on non-concatenating axes",
                );
            }
        }
        *slot = if non_any.len() == tensors.len() || (!non_any.is_empty() && is_dynamic) {
            non_any[0].clone()
        } else {
            Dim::Any
        };
    }
    ctx.assign(1, tensor(oshape, first.dtype));
    Ok(true)
}

fn stack_rel(ctx: &mut Ctx) -> Step {
    let fields = match ctx.ty(0).kind() {
        TypeKind::Tuple(fields) => fields.clone(),
        TypeKind::Incomplete(_) => return Ok(false),
        _ => {
            return Err(RelationError::at_input(
                format!(
                    "cast: expect input type to be TupleType but get {}",
                    display::ty(ctx.ty(0))
                ),
                0,
            ))
        }
    };
    if fields.iter().any(Type::is_incomplete) {
        return Ok(false);
    }
    let tensors: Vec<_> = fields
        .iter()
        .map(|f| {
            f.as_tensor()
                .cloned()
                .ok_or_else(|| RelationError::new("relay.stack requires a tuple of tensors"))
        })
        .collect::<Result<_, _>>()?;
    let Some(first) = tensors.first().cloned() else {
        return error("relay.stack requires a non-empty tuple of tensors");
    };
    let ndim = first.shape.len() as i64;
    let axis = ctx.attrs.int("axis")?;
    check(-(ndim + 1) <= axis && axis < ndim + 1, || {
        format!(
            "stack only accepts `axis` in [-(ndim+1), ndim+1), but got axis = {axis}, and ndim = {ndim}"
        )
    }).about("axis")?;
    let axis = if axis < 0 { ndim + axis + 1 } else { axis } as usize;
    for e in &tensors {
        check(e.shape.len() as i64 == ndim, || {
            "relay.stack requires all tensors have the same ndim".to_string()
        })?;
        check(e.dtype == first.dtype, || {
            "relay.stack requires all tensors have the same dtype".to_string()
        })?;
        for j in 0..first.shape.len() {
            if j == axis {
                continue;
            }
            if is_any(&first.shape[j])
                || is_any(&e.shape[j])
                || shape::assert_eq(&first.shape[j], &e.shape[j])
            {
                continue;
            }
            return error(
                "relay.stack requires all tensors have the same shape on non-stacking axes",
            );
        }
    }
    let mut oshape = first.shape[..axis].to_vec();
    oshape.push(c_int(tensors.len() as i64));
    oshape.extend_from_slice(&first.shape[axis..]);
    ctx.assign(1, tensor(oshape, first.dtype));
    Ok(true)
}

fn split_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check(!data.shape.is_empty(), || {
        "Input shape cannot be empty".to_string()
    })?;
    let ndim = data.shape.len() as i64;
    let mut axis = ctx.attrs.int("axis")?;
    if axis < 0 {
        axis += ndim;
    }
    check(axis < ndim, || {
        "axis should be within the input dimension range.".to_string()
    })
    .about("axis")?;
    check(axis >= 0, || {
        "axis should be within the input dimension range.".to_string()
    })
    .about("axis")?;
    let axis = axis as usize;
    let dim = data.shape[axis].clone();
    let mut fields = Vec::new();
    match ctx.attrs.value("indices_or_sections")? {
        AttrValue::Array(items) => {
            let mut indices = Vec::with_capacity(items.len());
            for item in items {
                let value = item
                    .as_int()
                    .ok_or_else(|| RelationError::new("indices_or_sections must hold integers"))?;
                // `IntImm(DataType::Int(32), value)`.
                indices.push(c_int(value));
            }
            let mut begin = c_int(0);
            for index in &indices {
                check(shape::assert_lt(&begin, index), || {
                    "indices_or_sections need to be a sorted ascending list".to_string()
                })?;
                let mut oshape = data.shape.clone();
                oshape[axis] = sub(index, &begin);
                begin = index.clone();
                fields.push(tensor(oshape, data.dtype));
            }
            if !is_any(&dim) {
                check(shape::assert_lt(&begin, &dim), || {
                    "The sum of sections must match the input.shape[axis]".to_string()
                })?;
            }
            let mut oshape = data.shape.clone();
            oshape[axis] = if is_any(&dim) {
                Dim::Any
            } else {
                sub(&dim, &begin)
            };
            fields.push(tensor(oshape, data.dtype));
        }
        other => {
            let sections = other.as_int().ok_or_else(|| {
                RelationError::new("indices_or_sections must be an integer or a list")
            })?;
            let sections_dim = c_int(sections);
            if !is_any(&dim) {
                let rem = floormod(&dim, &sections_dim)?;
                check(const_int(&rem).is_none_or(|r| r == 0), || {
                    "indices_or_sections need to be able to divide input.shape[axis]".to_string()
                })?;
            }
            relay_ir::limits::check_fields(sections.max(0) as u64).map_err(RelationError::new)?;
            for _ in 0..sections.max(0) {
                let mut oshape = data.shape.clone();
                oshape[axis] = if is_any(&dim) {
                    Dim::Any
                } else {
                    floordiv(&dim, &sections_dim)?
                };
                fields.push(tensor(oshape, data.dtype));
            }
        }
    }
    ctx.assign(1, Type::tuple(fields));
    Ok(true)
}

/// `CanonicalizeIndex`.
fn canonicalize_index(index: i64, extent: i64, stride: i64) -> i64 {
    let begin_range = if stride < 0 { -1 } else { 0 };
    let end_range = if stride < 0 { extent - 1 } else { extent };
    let index = if index < 0 {
        index.saturating_add(extent)
    } else {
        index
    };
    index.max(begin_range).min(end_range)
}

/// `StridedSliceOutputShape` with `use_any`.
pub(crate) fn strided_slice_shape(
    ishape: &[Dim],
    begin: &[Option<i64>],
    end: &[Option<i64>],
    strides: &[Option<i64>],
    axes: &[i64],
    slice_mode: &str,
) -> Result<Vec<Dim>, RelationError> {
    check(
        axes.len() == begin.len() && axes.len() == end.len() && axes.len() == strides.len(),
        || {
            "Check failed: axes.size() == begin.size() && axes.size() == end.size() && axes.size() == strides.size()"
                .to_string()
        },
    )?;
    // `ConvertToVec`.
    let max_range = i64::MAX;
    let mut stride_vec = vec![1i64; strides.len()];
    if slice_mode == "end" {
        for (i, s) in strides.iter().enumerate() {
            stride_vec[i] =
                s.ok_or_else(|| RelationError::new("Check failed: strides[i].defined()"))?;
        }
    }
    let begin_vec: Vec<i64> = begin
        .iter()
        .enumerate()
        .map(|(i, b)| b.unwrap_or(if stride_vec[i] > 0 { 0 } else { max_range }))
        .collect();
    let end_vec: Vec<i64> = end
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            None => {
                if stride_vec[i] < 0 {
                    0
                } else {
                    max_range
                }
            }
            Some(e) if slice_mode == "size" => {
                if *e < 0 {
                    if stride_vec[i] < 0 {
                        0
                    } else {
                        max_range
                    }
                } else {
                    begin_vec[i].saturating_add(*e)
                }
            }
            Some(e) => *e,
        })
        .collect();
    let mut out: Vec<Dim> = ishape.to_vec();
    for (i, &axis) in axes.iter().enumerate() {
        let dim = usize::try_from(axis)
            .ok()
            .and_then(|a| ishape.get(a))
            .ok_or_else(|| {
                RelationError::new(format!("strided_slice: axis {axis} out of range"))
            })?;
        let axis = axis as usize;
        match const_int(dim) {
            Some(dim_i) => {
                let stride = stride_vec[i];
                if stride == 0 {
                    return error("strided_slice: stride must not be zero");
                }
                let begin_i = canonicalize_index(begin_vec[i], dim_i, stride);
                let end_i = canonicalize_index(end_vec[i], dim_i, stride);
                // TVM keeps the interval and the size in C++ `int`s.
                let interval = (end_i - begin_i).abs() as i32 as i64;
                let slice_size = ((interval + stride.abs() - 1) / stride.abs()) as i32 as i64;
                let valid = if stride < 0 {
                    end_i <= begin_i
                } else {
                    begin_i <= end_i
                };
                check(valid, || {
                    let show = |v: Option<i64>| v.map_or("None".to_string(), |v| v.to_string());
                    format!(
                        ": Input [Begin={}, End={}] is invalid for axis={i}",
                        show(begin.get(i).copied().flatten()),
                        show(end.get(i).copied().flatten())
                    )
                })?;
                // `cast(out_shape[i].dtype(), slice_size)`: TVM reads the
                // dtype of position `i`, not of `axes[i]`.
                let dtype = out.get(i).map_or(shape::I32, dim_dtype);
                out[axis] = shape::int_of(slice_size, dtype);
            }
            None => out[axis] = Dim::Any,
        }
    }
    Ok(out)
}

fn strided_slice_rel(ctx: &mut Ctx) -> Step {
    if !ctx.attrs.is_some() {
        return Ok(false);
    }
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let Some(mut begin) = attrs.opt_ints("begin")? else {
        return error("strided_slice received invalid begin None");
    };
    let Some(mut end) = attrs.opt_ints("end")? else {
        return error("strided_slice received invalid end None");
    };
    let Some(mut strides) = attrs.opt_ints("strides")? else {
        return error("strided_slice received invalid strides None");
    };
    let ndim = data.shape.len();
    let axes: Vec<i64> = match attrs.ints("axes")? {
        Some(axes) => {
            check(
                axes.len() == begin.len() && axes.len() == end.len() && axes.len() == strides.len(),
                || "axes, begin, end, and strides must have the same length".to_string(),
            )?;
            axes
        }
        None => {
            while strides.len() < ndim {
                strides.push(Some(1));
            }
            let stride_at =
                |s: &Option<i64>| s.ok_or_else(|| RelationError::new("strides must be integers"));
            for s in strides.iter().take(ndim).skip(begin.len()) {
                let s = stride_at(s)?;
                begin.push(Some(if s > 0 { 0 } else { i64::MAX }));
            }
            for s in strides.iter().take(ndim).skip(end.len()) {
                let s = stride_at(s)?;
                end.push(Some(if s < 0 { 0 } else { i64::MAX }));
            }
            (0..ndim as i64).collect()
        }
    };
    if begin.is_empty() && !axes.is_empty() {
        return error("strided_slice: begin is empty");
    }
    let slice_mode = attrs.str("slice_mode")?;
    let oshape = strided_slice_shape(&data.shape, &begin, &end, &strides, &axes, &slice_mode)?;
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn slice_like_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(target)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let dshape = &data.shape;
    let tshape = &target.shape;
    let mut oshape = dshape.clone();
    match ctx.attrs.ints("axes")? {
        None => {
            for i in 0..dshape.len() {
                if i < tshape.len() {
                    oshape[i] = tshape[i].clone();
                    check(shape::assert_le(&oshape[i], &dshape[i]), || {
                        format!(
                            "End index of axis {i} exceeds input shape: {} vs {}",
                            display::dim(&oshape[i]),
                            display::dim(&dshape[i])
                        )
                    })?;
                }
            }
        }
        Some(axes) => {
            check(!axes.is_empty(), || "Axes cannot be empty.".to_string()).about("axes")?;
            for axis in axes {
                let axis = if axis < 0 {
                    axis + dshape.len() as i64
                } else {
                    axis
                };
                check(axis < tshape.len() as i64, || {
                    format!(
                        "Axis {axis} exceeds dimension {} of target_shape.",
                        tshape.len()
                    )
                })?;
                let a = usize::try_from(axis)
                    .ok()
                    .filter(|&a| a < dshape.len())
                    .ok_or_else(|| RelationError::new(format!("Axis {axis} out of range")))?;
                oshape[a] = tshape[a].clone();
                check(shape::assert_le(&oshape[a], &dshape[a]), || {
                    format!(
                        "End index of axis {axis} exceeds input shape: {} vs {}",
                        display::dim(&oshape[a]),
                        display::dim(&dshape[a])
                    )
                })?;
            }
        }
    }
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

fn take_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(indices)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    check(indices.dtype.is_int() || indices.dtype.is_uint(), || {
        "indices of take must be tensor of integer".to_string()
    })?;
    let Some(axis) = ctx.attrs.opt_int("axis")? else {
        ctx.assign(2, tensor(indices.shape.clone(), data.dtype));
        return Ok(true);
    };
    let ndim_data = data.shape.len() as i64;
    let ndim_indices = indices.shape.len() as i64;
    let batch_dims = ctx.attrs.opt_int("batch_dims")?.unwrap_or(0);
    let mut axis = axis;
    if axis < 0 {
        axis += ndim_data;
    }
    // Sic: TVM adds to `axis` here.
    if batch_dims < 0 {
        axis += ndim_indices;
    }
    check(axis <= ndim_data, || {
        format!("axis should be with in data shape, but got = {axis}")
    })
    .about("axis")?;
    check(batch_dims <= ndim_indices, || {
        format!("batch_dims should be with in indices shape, but got = {batch_dims}")
    })?;
    check(batch_dims <= axis, || {
        format!("batch_dims should be less than or equal to axis, but got = {batch_dims}")
    })?;
    let get = |dims: &[Dim], i: i64| -> Result<Dim, RelationError> {
        usize::try_from(i)
            .ok()
            .and_then(|i| dims.get(i))
            .cloned()
            .ok_or_else(|| RelationError::new("take: index out of range"))
    };
    let mut oshape = Vec::new();
    for i in 0..batch_dims {
        oshape.push(get(&data.shape, i)?);
    }
    for i in batch_dims..axis {
        oshape.push(get(&data.shape, i)?);
    }
    for i in batch_dims..ndim_indices {
        oshape.push(get(&indices.shape, i)?);
    }
    for i in axis + 1..ndim_data {
        oshape.push(get(&data.shape, i)?);
    }
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

fn tile_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(0, "tile: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let ndim = data.shape.len();
    let Some(reps) = ctx.attrs.dims("reps")? else {
        return error(format!(
            "repetition array is not defined. data.ndim = {ndim}"
        ));
    };
    for rep in &reps {
        if let Some(value) = const_int(rep) {
            check(value > 0, || {
                format!("Tile reps value should always be larger than 0, but get: {value}")
            })?;
        }
    }
    let rndim = reps.len();
    let tndim = ndim.max(rndim);
    let (data_shape, reps_shape): (Vec<Dim>, Vec<Dim>) = if ndim == rndim {
        (data.shape.clone(), reps.clone())
    } else if ndim > rndim {
        let mut r = vec![c_int(1); ndim - rndim];
        r.extend(reps.iter().cloned());
        (data.shape.clone(), r)
    } else {
        let mut d = vec![c_int(1); rndim - ndim];
        d.extend(data.shape.iter().cloned());
        (d, reps.clone())
    };
    let oshape = (0..tndim)
        .map(|i| {
            if is_int_imm(&data_shape[i]) {
                mul(&data_shape[i], &reps_shape[i])
            } else {
                Dim::Any
            }
        })
        .collect();
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn repeat_rel(ctx: &mut Ctx) -> Step {
    let Some(data) =
        ctx.tensor_or_wait(0, "repeat: expect input type to be TensorType but get ")?
    else {
        return Ok(false);
    };
    let ndim = data.shape.len() as i64;
    let repeats = ctx.attrs.int("repeats")?;
    let axis = ctx
        .attrs
        .opt_int("axis")?
        .ok_or_else(|| RelationError::new("repeat: `axis` is not defined"))?;
    check(repeats >= 1, || {
        format!("repeat only accepts `repeats >= 1`, but got repeats = {repeats}")
    })?;
    check(-ndim - 1 <= axis && axis <= ndim, || {
        format!(
            "repeat only accepts `axis` in [-data.ndim - 1, data.ndim], but got axis = {axis}, and data.ndim = {ndim}"
        )
    }).about("axis")?;
    let pivot = if axis < 0 { ndim + axis } else { axis };
    let pivot = usize::try_from(pivot)
        .ok()
        .filter(|&p| p < data.shape.len())
        .ok_or_else(|| RelationError::new(format!("repeat: axis {axis} out of range")))?;
    let mut oshape = data.shape[..pivot].to_vec();
    let dim = &data.shape[pivot];
    oshape.push(if is_any(dim) {
        Dim::Any
    } else {
        mul(dim, &shape::int_of(repeats, dim_dtype(dim)))
    });
    oshape.extend_from_slice(&data.shape[pivot + 1..]);
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

/// The `shape` of an `InitOpAttrs` (`param->shape.value()`).
fn init_shape(ctx: &Ctx) -> Result<Vec<Dim>, RelationError> {
    ctx.attrs
        .dims("shape")?
        .ok_or_else(|| RelationError::new("The shape attribute is not defined (None)"))
}

/// `full`'s (and `dyn.full`'s) output dtype: the `dtype` attribute, or the
/// fill value's when void; the fill value must be a scalar.
pub(super) fn fill_dtype(ctx: &Ctx, fill: &TensorType) -> Result<DataType, RelationError> {
    let dtype = ctx.attrs.dtype_or("dtype", fill.dtype)?;
    check(fill.shape.is_empty(), || {
        format!(
            "Fill value should be a scalar but has dimension {}.",
            fill.shape.len()
        )
    })?;
    Ok(dtype)
}

fn full_rel(ctx: &mut Ctx) -> Step {
    let Some(fill) = ctx.tensor(0) else {
        return Ok(false);
    };
    let dtype = fill_dtype(ctx, &fill)?;
    let shape = init_shape(ctx)?;
    ctx.assign(1, tensor(shape, dtype));
    Ok(true)
}

fn init_op_rel(ctx: &mut Ctx) -> Step {
    let dtype = ctx.attrs.dtype("dtype")?;
    let shape = init_shape(ctx)?;
    ctx.assign(0, tensor(shape, dtype));
    Ok(true)
}

fn full_like_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(fill)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    check(fill.shape.is_empty(), || {
        format!(
            "The fill value should be a scalar but here it has dimension {}.",
            fill.shape.len()
        )
    })?;
    ctx.assign(2, tensor(data.shape.clone(), data.dtype));
    Ok(true)
}

fn arange_rel(ctx: &mut Ctx) -> Step {
    let dtype = ctx.attrs.dtype("dtype")?;
    let (t1, t2) = (ctx.ty(1).clone(), ctx.ty(2).clone());
    ctx.assign(0, t1);
    ctx.assign(1, t2);
    ctx.assign(2, Type::scalar(dtype));
    let values = ["start", "stop", "step"]
        .iter()
        .map(|name| ctx.attrs.get(name).and_then(constant_scalar))
        .collect::<Option<Vec<f64>>>();
    let out = match values.as_deref() {
        Some(&[start, stop, step]) => {
            let num_elem = ((stop - start) / step).ceil() as i32;
            check(num_elem > 0, || {
                format!("Invalid arange attributes (start, stop, step): {start}, {stop}, {step}")
            })?;
            tensor(vec![c_int(i64::from(num_elem))], dtype)
        }
        _ => tensor(vec![Dim::Any], dtype),
    };
    ctx.assign(3, out);
    Ok(true)
}

fn layout_transform_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(
        0,
        "LayoutTransform: expect input data type to be TensorType but get ",
    )?
    else {
        return Ok(false);
    };
    let src_name = ctx.attrs.str("src_layout")?;
    let dst_name = ctx.attrs.str("dst_layout")?;
    let src = Layout::parse(&src_name)?;
    let dst = Layout::parse(&dst_name)?;
    check(src.is_defined() && dst.is_defined(), || {
        "cannot convert from/to undefined layout".to_string()
    })?;
    let converter = BijectiveLayout::new(&src, &dst).ok_or_else(|| {
        RelationError::new(format!("cannot convert from {src_name} to {dst_name}"))
    })?;
    let oshape = converter.forward_shape(&data.shape)?;
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn one_hot_rel(ctx: &mut Ctx) -> Step {
    let Some(indices) = ctx.tensor_or_wait(0, "Check failed: (indices) is false: ")? else {
        return Ok(false);
    };
    let depth = ctx.attrs.int("depth")?;
    check(depth > 0, || {
        format!("Check failed: param->depth > 0 ({depth} vs. 0)")
    })?;
    let axis = ctx.attrs.int("axis")?;
    let rank = indices.shape.len() as i64;
    let true_axis = if axis == -1 { rank } else { axis };
    let mut oshape = Vec::new();
    let mut next = indices.shape.iter();
    for i in 0..=rank {
        if i == true_axis {
            oshape.push(c_int(depth));
        } else {
            oshape.push(
                next.next()
                    .cloned()
                    .ok_or_else(|| RelationError::new("one_hot: axis out of range"))?,
            );
        }
    }
    let dtype = ctx.attrs.dtype("dtype")?;
    ctx.assign(3, tensor(oshape, dtype));
    Ok(true)
}

fn sparse_to_dense_rel(ctx: &mut Ctx) -> Step {
    let (Some(indices), Some(values), Some(default)) =
        (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    else {
        return Ok(false);
    };
    check(indices.dtype.is_int(), || {
        "sparse_indices must be tensor of integers".to_string()
    })?;
    check(indices.shape.len() <= 3, || {
        "sparse_indices must be a tensor of either 0D, 1D or 2D".to_string()
    })?;
    check(values.shape.len() <= 2, || {
        "sparse_values must be a tensor of either 0D, 1D".to_string()
    })?;
    check(default.shape.is_empty(), || {
        "default_value should be a scalar".to_string()
    })?;
    let oshape = ctx.attrs.dims_or_empty("output_shape")?;
    ctx.assign(3, tensor(oshape, values.dtype));
    Ok(true)
}

fn matrix_set_diag_rel(ctx: &mut Ctx) -> Step {
    let Some(input) = ctx.tensor_or_wait(0, "Check failed: (input) is false: ")? else {
        return Ok(false);
    };
    if ctx
        .tensor_or_wait(1, "Check failed: (diagonal) is false: ")?
        .is_none()
    {
        return Ok(false);
    }
    let k1 = ctx.attrs.int("k1")?;
    let k2 = ctx.attrs.int("k2")?;
    check(k2 >= k1, || {
        format!("Check failed: param->k2 >= param->k1 ({k2} vs. {k1})")
    })?;
    check(input.shape.len() >= 2, || {
        "matrix_set_diag: the input must have at least 2 dimensions".to_string()
    })?;
    // TVM's other checks here ignore their results.
    ctx.assign(2, tensor(input.shape.clone(), input.dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{AttrValue, Dim, Type};

    #[test]
    fn reshape_special_values() {
        let x = t(&[2, 3, 4], "float32");
        let cases: &[(&[i64], &[i64])] = &[
            (&[6, 4], &[6, 4]),
            (&[0, -1], &[2, 12]),
            (&[-1], &[24]),
            (&[-2], &[2, 3, 4]),
            (&[-3, 4], &[6, 4]),
            (&[2, -4, 1, 3, 4], &[2, 1, 3, 4]),
            (&[-4, 1, -1, 3, 4], &[1, 2, 3, 4]),
        ];
        for (newshape, expected) in cases {
            assert_eq!(
                solve_out("reshape", &[x.clone()], &[("newshape", ints(newshape))]),
                t(expected, "float32"),
                "newshape {newshape:?}"
            );
        }
        assert_eq!(
            fails("reshape", &[x.clone()], &[("newshape", ints(&[5, 5]))]),
            "Input tensor shape(2,3,4) and reshaped shape(5,5) are not compatible!"
        );
        // int64 inputs: `-1` is computed in int64.
        assert_eq!(
            solve_out(
                "reshape",
                &[t64(&[2, 3], "float32")],
                &[("newshape", ints(&[-1]))]
            ),
            t64(&[6], "float32")
        );
        let any = td(vec![Dim::Any, Dim::int32(4)], "float32");
        assert_eq!(
            solve_out("reshape", &[any], &[("newshape", ints(&[-1, 2]))]),
            td(vec![Dim::Any, Dim::int32(2)], "float32")
        );
        assert_eq!(
            solve_out(
                "reshape",
                &[t(&[0, 3], "float32")],
                &[("newshape", ints(&[0, 3])), ("allowzero", b(true))]
            ),
            t(&[0, 3], "float32")
        );
    }

    #[test]
    fn squeeze_expand_transpose() {
        let x = t(&[1, 3, 1, 4], "float32");
        assert_eq!(
            solve_out("squeeze", &[x.clone()], &[]),
            t(&[3, 4], "float32")
        );
        assert_eq!(
            solve_out("squeeze", &[x.clone()], &[("axis", ints(&[-2]))]),
            t(&[1, 3, 4], "float32")
        );
        assert_eq!(
            fails("squeeze", &[x.clone()], &[("axis", ints(&[1]))]),
            "cannot squeeze axis with dimension not equal to 1"
        );
        assert_eq!(
            solve_out(
                "expand_dims",
                &[t64(&[3], "float32")],
                &[
                    ("axis", AttrValue::Int(0)),
                    ("num_newaxis", AttrValue::Int(2))
                ]
            ),
            td(vec![Dim::int32(1), Dim::int32(1), Dim::int64(3)], "float32")
        );
        assert_eq!(
            solve_out("transpose", &[x.clone()], &[("axes", AttrValue::Null)]),
            t(&[4, 1, 3, 1], "float32")
        );
        assert_eq!(
            solve_out("transpose", &[x], &[("axes", ints(&[0, 2, 3, -3]))]),
            t(&[1, 1, 4, 3], "float32")
        );
    }

    #[test]
    fn concatenate_split_stack() {
        let tuple = tup(&[t(&[2, 3], "float32"), t(&[4, 3], "float32")]);
        assert_eq!(
            solve_out("concatenate", &[tuple], &[]),
            t(&[6, 3], "float32")
        );
        let tuple = tup(&[
            td(vec![Dim::Any, Dim::int32(3)], "float32"),
            td(vec![Dim::int32(1), Dim::Any], "float32"),
        ]);
        assert_eq!(
            solve_out("concatenate", &[tuple], &[]),
            td(vec![Dim::Any, Dim::int32(3)], "float32")
        );
        assert!(waits("concatenate", &[Type::incomplete()], &[]));
        assert!(fails("concatenate", &[t(&[2], "float32")], &[])
            .starts_with("concatenate requires a tuple of tensors as the first argument, found Tensor[(2), float32]"));
        assert_eq!(
            solve_out(
                "split",
                &[t(&[6, 4], "float32")],
                &[("indices_or_sections", int(3))]
            ),
            tup(&[
                t(&[2, 4], "float32"),
                t(&[2, 4], "float32"),
                t(&[2, 4], "float32")
            ])
        );
        assert_eq!(
            solve_out(
                "split",
                &[t64(&[6, 4], "float32")],
                &[
                    ("indices_or_sections", ints(&[1, 4])),
                    ("axis", AttrValue::Int(0))
                ]
            ),
            tup(&[
                td(vec![Dim::int32(1), Dim::int64(4)], "float32"),
                td(vec![Dim::int32(3), Dim::int64(4)], "float32"),
                td(vec![Dim::int64(2), Dim::int64(4)], "float32"),
            ])
        );
        assert_eq!(
            solve_out(
                "stack",
                &[tup(&[t(&[2], "int32"), t(&[2], "int32")])],
                &[("axis", int(1))]
            ),
            t(&[2, 2], "int32")
        );
    }

    #[test]
    fn strided_slice_take_tile() {
        let x = t(&[4, 6], "float32");
        assert_eq!(
            solve_out(
                "strided_slice",
                &[x.clone()],
                &[
                    ("begin", ints(&[1])),
                    ("end", ints(&[3])),
                    ("strides", ints(&[1])),
                    ("axes", AttrValue::Null)
                ]
            ),
            t(&[2, 6], "float32")
        );
        assert_eq!(
            solve_out(
                "strided_slice",
                &[x.clone()],
                &[
                    ("begin", ints(&[5])),
                    ("end", ints(&[-7])),
                    ("strides", ints(&[-2])),
                    ("axes", ints(&[1]))
                ]
            ),
            t(&[4, 3], "float32")
        );
        assert_eq!(
            solve_out(
                "strided_slice",
                &[x.clone()],
                &[
                    ("begin", ints(&[0, 1])),
                    ("end", ints(&[2, -1])),
                    ("strides", ints(&[1])),
                    ("slice_mode", s("size")),
                    ("axes", AttrValue::Null)
                ]
            ),
            t(&[2, 5], "float32")
        );
        assert_eq!(
            solve_out("take", &[x.clone(), t(&[3, 2], "int32")], &[]),
            t(&[3, 2], "float32")
        );
        assert_eq!(
            solve_out("take", &[x.clone(), t(&[5], "int32")], &[("axis", int(1))]),
            t(&[4, 5], "float32")
        );
        assert_eq!(
            solve_out("tile", &[x.clone()], &[("reps", ints(&[2, 1, 3]))]),
            t(&[2, 4, 18], "float32")
        );
        assert_eq!(
            solve_out("repeat", &[x], &[("repeats", int(2)), ("axis", int(-1))]),
            t(&[4, 12], "float32")
        );
    }

    #[test]
    fn init_ops_and_layout_transform() {
        assert_eq!(
            solve_out(
                "zeros",
                &[],
                &[("shape", ints(&[1, 4])), ("dtype", dt("float32"))]
            ),
            t(&[1, 4], "float32")
        );
        assert_eq!(
            solve_out("full", &[t(&[], "int8")], &[("shape", ints(&[2]))]),
            t(&[2], "int8")
        );
        assert_eq!(
            solve_out(
                "layout_transform",
                &[t(&[1, 32, 8, 8], "float32")],
                &[("src_layout", s("NCHW")), ("dst_layout", s("NCHW16c"))]
            ),
            t(&[1, 2, 8, 8, 16], "float32")
        );
        assert_eq!(
            solve_out(
                "one_hot",
                &[t(&[3], "int32"), t(&[], "float32"), t(&[], "float32")],
                &[("depth", AttrValue::Int(5)), ("dtype", dt("float32"))]
            ),
            t(&[3, 5], "float32")
        );
        assert_eq!(
            solve_out(
                "arange",
                &[t(&[], "float32"), Type::incomplete(), Type::incomplete()],
                &[("dtype", dt("float32"))]
            ),
            td(vec![Dim::Any], "float32")
        );
    }

    #[test]
    fn reverse_reshape_applies_special_values_from_the_right() {
        // test_op_level10.py::test_reverse_reshape.
        let cases: &[(&[i64], &[i64], &[i64])] = &[
            (&[2, 3, 4], &[4, 0, 2], &[4, 3, 2]),
            (&[2, 3, 4], &[2, 0, 0], &[2, 3, 4]),
            (&[2, 3, 4], &[0, -1], &[3, 8]),
            (&[2, 3, 4], &[-1, 0], &[6, 4]),
            (&[2, 3, 4], &[0, -3], &[2, 12]),
        ];
        for (input, newshape, expected) in cases {
            let out = solve_out(
                "contrib_reverse_reshape",
                &[t(input, "float32")],
                &[("newshape", ints(newshape))],
            );
            assert_eq!(out, t(expected, "float32"), "newshape {newshape:?}");
        }
        assert_eq!(
            fails(
                "contrib_reverse_reshape",
                &[t(&[2, 3, 4], "float32")],
                &[("newshape", ints(&[5, 5]))]
            ),
            "Check failed: oshape_sum == data_shape_sum (25 vs. 24) : Input tensor shape and reshaped shape are not compatible"
        );
    }
}
