//! Relations that move, pad or compare spatial data (`src/relay/op/nn/nn.cc`,
//! `pad.cc`, `correlation.cc`, `pooling.cc`): `DepthToSpaceRel`,
//! `SpaceToDepthRel`, `MirrorPadRel`, `DilateRel`, `CorrelationRel`,
//! `FIFOBufferRel` and `Pool2DGradRel`.
//!
//! `depth_to_space`/`space_to_depth` go through the `NCHW` view of their
//! layout (so known sizes come out `int32`, see [`super::layout`]); the
//! others work on the shape as it is, keeping each dimension's dtype. A
//! `?` size stays `?`.

use super::layout::{BijectiveLayout, Layout};
use super::nn_conv::padding_hw;
use super::nn_misc::nested_dims;
use super::shape::{add, c_int, const_int, floordiv, is_any, mul, sub};
use super::{check, error, item, norm_axis, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::Dim;

relations! {
    /// `DepthToSpaceRel`: channels divided by `block_size²`, height and
    /// width multiplied by `block_size`.
    "DepthToSpace" => depth_to_space_rel;
    /// `SpaceToDepthRel`: the inverse of `DepthToSpace`.
    "SpaceToDepth" => space_to_depth_rel;
    /// `MirrorPadRel`: each axis grows by its two constant pad widths.
    "MirrorPad" => mirror_pad_rel;
    /// `DilateRel`: `(n - 1) * stride + 1` per axis.
    "Dilate" => dilate_rel;
    /// `CorrelationRel` (`NCHW` only).
    "Correlation" => correlation_rel;
    /// `FIFOBufferRel`: the buffer's type.
    "FIFOBuffer" => fifo_buffer_rel;
    /// `Pool2DGradRel` (`nn.max_pool2d_grad`, `nn.avg_pool2d_grad`): the
    /// pooled data's type (the second input).
    "MaxPool2DGrad" => pool2d_grad_rel;
}

/// The shared body of the sub-pixel relations: the data's shape in `NCHW`,
/// changed by `reshape(shape, block_size)`, converted back.
fn sub_pixel(
    ctx: &mut Ctx,
    op: &str,
    reshape: fn(&mut [Dim], i64) -> Result<(), RelationError>,
) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let block_size = ctx.attrs.int("block_size")?;
    let name = ctx.attrs.str("layout")?;
    let layout = Layout::parse(&name).about("layout")?;
    let converter = BijectiveLayout::new(&layout, &Layout::parse("NCHW")?)
        .ok_or_else(|| {
            RelationError::new(format!(
                "{op} only support input layouts that are convertible from NCHW. But got Layout({name})"
            ))
        })
        .about("layout")?;
    let mut oshape = converter.forward_shape(&data.shape)?;
    reshape(&mut oshape, block_size)?;
    let oshape = converter.backward_shape(&oshape)?;
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

/// Applies `f` to `dim` unless it is `?`.
fn unless_any(
    dim: &mut Dim,
    f: impl FnOnce(&Dim) -> Result<Dim, RelationError>,
) -> Result<(), RelationError> {
    if !is_any(dim) {
        *dim = f(dim)?;
    }
    Ok(())
}

/// `block_size * block_size`, refused when it overflows.
fn block_squared(block: i64) -> Result<i64, RelationError> {
    match block.checked_mul(block) {
        Some(squared) => Ok(squared),
        None => error(format!("block_size={block} is out of range")),
    }
}

fn depth_to_space_rel(ctx: &mut Ctx) -> Step {
    sub_pixel(ctx, "DepthToSpace", |shape, block| {
        let b = c_int(block);
        let squared = block_squared(block)?;
        unless_any(&mut shape[1], |c| floordiv(c, &c_int(squared)))?;
        unless_any(&mut shape[2], |h| Ok(mul(h, &b)))?;
        unless_any(&mut shape[3], |w| Ok(mul(w, &b)))
    })
}

fn space_to_depth_rel(ctx: &mut Ctx) -> Step {
    sub_pixel(ctx, "SpaceToDepth", |shape, block| {
        let b = c_int(block);
        let squared = block_squared(block)?;
        unless_any(&mut shape[1], |c| Ok(mul(c, &c_int(squared))))?;
        unless_any(&mut shape[2], |h| floordiv(h, &b))?;
        unless_any(&mut shape[3], |w| floordiv(w, &b))
    })
}

fn mirror_pad_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let pad_width = nested_dims(ctx, "pad_width").about("pad_width")?;
    check(data.shape.len() == pad_width.len(), || {
        format!(
            "There should be as many pad width pairs as shape dimensions but the shape has {} dimensions and there are {} pad width pairs.",
            data.shape.len(),
            pad_width.len()
        )
    })
    .about("pad_width")?;
    let mut oshape = Vec::with_capacity(pad_width.len());
    for (i, (dim, pair)) in data.shape.iter().zip(&pad_width).enumerate() {
        check(pair.len() == 2, || {
            format!(
                "Each pad width element should be a pair but at index {i} there are {} elements.",
                pair.len()
            )
        })
        .about("pad_width")?;
        let (Some(before), Some(after)) = (const_int(&pair[0]), const_int(&pair[1])) else {
            return error("Check failed: (width1 != nullptr) is false: ").about("pad_width");
        };
        for width in [before, after] {
            check(width >= 0, || {
                format!(
                    "Param width elements should be positive but first pad width at index {i} is {width}."
                )
            })
            .about("pad_width")?;
        }
        oshape.push(add(dim, &c_int(before + after)));
    }
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn dilate_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let strides = ctx.attrs.dims_or_empty("strides")?;
    check(data.shape.len() == strides.len(), || {
        format!(
            "Check failed: x->shape.size() == param->strides.size() ({} vs. {}) : ",
            data.shape.len(),
            strides.len()
        )
    })
    .about("strides")?;
    let one = c_int(1);
    let oshape = data
        .shape
        .iter()
        .zip(&strides)
        .map(|(dim, stride)| {
            if is_any(dim) {
                dim.clone()
            } else {
                add(&mul(&sub(dim, &one), stride), &one)
            }
        })
        .collect();
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn correlation_rel(ctx: &mut Ctx) -> Step {
    let (Some(data1), Some(data2)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let attrs = ctx.attrs;
    let layout = attrs.str("layout")?;
    check(layout == "NCHW", || {
        format!(
            "Check failed: param->layout == \"NCHW\" ({layout} vs. NCHW) : layout not supported."
        )
    })
    .about("layout")?;
    let (pad_h, pad_w) = padding_hw(&attrs.dims_or_empty("padding")?).about("padding")?;
    let padded_height = add(item(&data1.shape, 2)?, &pad_h);
    let padded_width = add(item(&data2.shape, 3)?, &pad_w);
    let kernel_size = attrs.int("kernel_size")?;
    let max_displacement = attrs.int("max_displacement")?;
    let stride1 = attrs.int("stride1")?;
    let stride2 = attrs.int("stride2")?;
    if stride2 == 0 {
        return error("stride2 must not be 0").about("stride2");
    }
    // C++ `int` arithmetic: `/` truncates. Sizes that overflow it are
    // refused rather than wrapped.
    let sizes = || -> Option<(i64, i64)> {
        let kernel_radius = kernel_size.checked_sub(1)? / 2;
        let border_size = max_displacement.checked_add(kernel_radius)?;
        let displacement_radius = max_displacement.checked_div(stride2)?;
        let displacement_size = displacement_radius.checked_mul(2)?.checked_add(1)?;
        let out_channels = displacement_size.checked_mul(displacement_size)?;
        Some((border_size.checked_mul(2)?, out_channels))
    };
    let Some((border_twice, out_channels)) = sizes() else {
        return error(format!(
            "kernel_size={kernel_size}, max_displacement={max_displacement} and \
             stride2={stride2} give sizes out of range"
        ));
    };
    let stride = c_int(stride1);
    let out_size = |padded: &Dim| {
        let shrunk = sub(padded, &c_int(border_twice));
        floordiv(&sub(&add(&shrunk, &stride), &c_int(1)), &stride)
    };
    let oshape = vec![
        item(&data1.shape, 0)?.clone(),
        c_int(out_channels),
        out_size(&padded_height)?,
        out_size(&padded_width)?,
    ];
    ctx.assign(2, tensor(oshape, data1.dtype));
    Ok(true)
}

fn fifo_buffer_rel(ctx: &mut Ctx) -> Step {
    let (Some(input), Some(buffer)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let rank = buffer.shape.len();
    check(input.shape.len() == rank, || {
        format!(
            "Check failed: input->shape.size() == buffer->shape.size() ({} vs. {rank}) : ",
            input.shape.len()
        )
    })?;
    // TVM's `Assert`s on the other axes and on the lengths are not
    // enforced (their result is ignored); reading the input along the
    // axis is bounds-checked.
    let axis = norm_axis(ctx.attrs.int("axis")?, rank);
    let index = usize::try_from(axis).map_err(|_| super::index_error(axis, rank))?;
    item(&input.shape, index).about("axis")?;
    ctx.assign(2, tensor(buffer.shape.clone(), buffer.dtype));
    Ok(true)
}

fn pool2d_grad_rel(ctx: &mut Ctx) -> Step {
    if ctx.tensor(1).is_none() {
        return Ok(false);
    }
    let data = ctx.ty(1).clone();
    ctx.assign(2, data);
    Ok(true)
}

/// Runs `DilateRel` on `slots` with `attrs` (the operator has no attrs
/// schema the test helpers could fill).
#[cfg(test)]
fn dilate_rel_for_test(
    slots: &[relay_ir::Type],
    attrs: &relay_ir::Attrs,
) -> Vec<(usize, relay_ir::Type)> {
    use crate::relation_contract::{RelationArgs, RelationOutcome};
    let args = RelationArgs::new(slots, Some(attrs));
    match super::run(&args, dilate_rel) {
        Ok(RelationOutcome::Solved(assigns)) => assigns,
        other => panic!("dilate: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Attrs, Dim, Type};

    #[test]
    fn sub_pixel_ops() {
        let out = solve_out(
            "nn.depth_to_space",
            &[t(&[1, 4, 4, 18], "float32")],
            &[("block_size", int(3)), ("layout", s("NHWC"))],
        );
        assert_eq!(out, t(&[1, 12, 12, 2], "float32"));
        let any_channels = td(
            vec![Dim::int32(1), Dim::Any, Dim::int32(4), Dim::int32(4)],
            "float32",
        );
        let out = solve_out(
            "nn.depth_to_space",
            &[any_channels],
            &[("block_size", int(2))],
        );
        assert_eq!(
            out,
            td(
                vec![Dim::int32(1), Dim::Any, Dim::int32(8), Dim::int32(8)],
                "float32"
            )
        );
        let message = fails(
            "nn.space_to_depth",
            &[t(&[4, 8, 8], "float32")],
            &[("block_size", int(2))],
        );
        assert!(message.contains("Input shape size 3 mismatch with the expected shape size 4"));
    }

    #[test]
    fn dilate_and_fifo_buffer() {
        // `nn.dilate` declares no attrs type (as in TVM): its calls carry a
        // `DilateAttrs` object from the metadata section.
        let attrs = Attrs::new(
            "relay.attrs.DilateAttrs",
            vec![
                ("strides".to_string(), ints(&[3, 2])),
                ("dilation_value".to_string(), f(0.0)),
            ],
        );
        let slots = [t(&[2, 3], "float32"), Type::incomplete()];
        let outcome = super::dilate_rel_for_test(&slots, &attrs);
        assert_eq!(outcome, vec![(1, t(&[4, 5], "float32"))]);
        let out = solve_out(
            "nn.fifo_buffer",
            &[t(&[2, 3], "float32"), t(&[8, 3], "float32")],
            &[("axis", int(-2))],
        );
        assert_eq!(out, t(&[8, 3], "float32"));
        let message = fails(
            "nn.fifo_buffer",
            &[t(&[2, 3], "float32"), t(&[8, 3], "float32")],
            &[("axis", int(2))],
        );
        assert_eq!(message, "IndexError: indexing 2 on an array of size 2");
    }

    #[test]
    fn correlation_and_pool_grad() {
        let out = solve_out(
            "nn.correlation",
            &[t(&[5, 1, 15, 15], "float32"), t(&[5, 1, 15, 15], "float32")],
            &[
                ("kernel_size", int(3)),
                ("max_displacement", int(5)),
                ("stride2", int(2)),
                ("padding", ints(&[5, 5])),
            ],
        );
        // Displacement radius 5 / 2 = 2: (2 * 2 + 1)² channels.
        assert_eq!(out, t(&[5, 25, 13, 13], "float32"));
        assert!(waits(
            "nn.max_pool2d_grad",
            &[t(&[1, 4, 8, 8], "float32"), Type::incomplete()],
            &[],
        ));
        assert!(waits(
            "nn.avg_pool2d_grad",
            &[t(&[1, 4, 8, 8], "float32"), tup(&[t(&[1], "float32")])],
            &[],
        ));
    }
}
