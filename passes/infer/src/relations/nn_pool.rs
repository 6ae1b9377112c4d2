//! Pooling relations (`src/relay/op/nn/pooling.cc`): `Pool1DRel`,
//! `Pool2DRel`, `Pool3DRel` (max and avg), `GlobalPool2DRel` and
//! `AdaptivePool{1,2,3}DRel`.
//!
//! Unlike convolutions, pooling does not convert layouts: it finds the
//! spatial axes by letter (`layout.IndexOf('H')`), so every other dimension
//! is copied with its dtype, and the pooled ones are
//! `(in + pad - ((pool - 1) * dilation + 1) [+ stride - 1]) / stride + 1`
//! with C++ `/` (truncating), computed in the promoted dtype (an `int64`
//! input stays `int64`). Global pooling sets the spatial sizes to the `int32`
//! constant 1.

use super::layout::Layout;
use super::nn_conv::at;
use super::shape::{add, c_int, is_any, mul, sub, truncdiv};
use super::{check, item, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::Dim;

relations! {
    /// `Pool1DRel`.
    "MaxPool1D" | "AvgPool1D" => pool1d_rel;
    /// `Pool2DRel`.
    "MaxPool2D" | "AvgPool2D" => pool2d_rel;
    /// `Pool3DRel`.
    "MaxPool3D" | "AvgPool3D" => pool3d_rel;
    /// `GlobalPool2DRel`.
    "GlobalAvgPool2D" | "GlobalMaxPool2D" => global_pool2d_rel;
    /// `AdaptivePool1DRel`.
    "AdaptiveAvgPool1D" | "AdaptiveMaxPool1D" => adaptive_pool1d_rel;
    /// `AdaptivePool2DRel`.
    "AdaptiveAvgPool2D" | "AdaptiveMaxPool2D" => adaptive_pool2d_rel;
    /// `AdaptivePool3DRel`.
    "AdaptiveAvgPool3D" | "AdaptiveMaxPool3D" => adaptive_pool3d_rel;
}

/// `calculate_pool_dimension`.
pub(crate) fn pool_dimension(
    input: &Dim,
    pad: &Dim,
    pool: &Dim,
    dilation: &Dim,
    stride: &Dim,
    ceil_mode: bool,
) -> Result<Dim, RelationError> {
    let one = c_int(1);
    let mut numerator = sub(
        &add(input, pad),
        &add(&mul(&sub(pool, &one), dilation), &one),
    );
    if ceil_mode {
        numerator = add(&numerator, &sub(stride, &one));
    }
    Ok(add(&truncdiv(&numerator, stride)?, &one))
}

/// A pool's input has at least its `spatial` axes (1 to 3: width, height,
/// depth); `what` is the relation's name in TVM's message.
fn check_spatial_rank(rank: usize, spatial: usize, what: &str) -> Result<(), RelationError> {
    check(rank >= spatial, || {
        let axes = match spatial {
            1 => "width",
            2 => "height and width",
            _ => "depth, height and width",
        };
        format!("{what} only support input >= {spatial}-D: input must have {axes}")
    })
}

/// The layout, checked to contain each of `axes` and none of their splits.
fn spatial_layout(ctx: &Ctx, axes: &[char], what: &str) -> Result<Vec<usize>, RelationError> {
    let name = ctx.attrs.str("layout")?;
    let layout = Layout::parse(&name).about("layout")?;
    let ok = axes
        .iter()
        .all(|&c| layout.contains(c) && !layout.contains(c.to_ascii_lowercase()));
    check(ok, || {
        let letters: Vec<String> = axes.iter().map(|c| c.to_string()).collect();
        let list = match letters.len() {
            1 => letters[0].clone(),
            2 => format!("{} and {}", letters[0], letters[1]),
            _ => format!("{}, {} and {}", letters[0], letters[1], letters[2]),
        };
        format!(
            "Invalid layout Layout({name}). {what} layout must have {list}, which cannot be split"
        )
    })
    .about("layout")?;
    Ok(axes
        .iter()
        .map(|&c| layout.index_of(c).unwrap_or(0))
        .collect())
}

/// The shared body of the sliding-window pools over `axes` with the
/// padding forms of `pads`.
fn pool_nd(ctx: &mut Ctx, axes: &[char], what: &str) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check_spatial_rank(data.shape.len(), axes.len(), what)?;
    let idx = spatial_layout(ctx, axes, what)?;
    let attrs = ctx.attrs;
    let padding = attrs.dims_or_empty("padding")?;
    let n = axes.len();
    let pads: Vec<Dim> = if padding.len() == 1 {
        vec![mul(&padding[0], &c_int(2)); n]
    } else if padding.len() == n && n > 1 {
        // (top, left) / (front, top, left).
        padding.iter().map(|p| mul(p, &c_int(2))).collect()
    } else if padding.len() == 2 * n {
        // (left, right) / (top, left, bottom, right) / (front, …, right).
        (0..n).map(|i| add(&padding[i], &padding[i + n])).collect()
    } else {
        return Ok(false);
    };
    let pool_size = attrs.dims_or_empty("pool_size")?;
    let dilation = attrs.dims_or_empty("dilation")?;
    let strides = attrs.dims_or_empty("strides")?;
    let ceil_mode = attrs.bool("ceil_mode")?;
    let mut oshape = data.shape.clone();
    for (i, &axis) in idx.iter().enumerate() {
        let input = item(&data.shape, axis)?;
        if is_any(input) {
            continue;
        }
        oshape[axis] = pool_dimension(
            input,
            &pads[i],
            &at(&pool_size, i, "pool_size")?,
            &at(&dilation, i, "dilation")?,
            &at(&strides, i, "strides")?,
            ceil_mode,
        )?;
    }
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn pool1d_rel(ctx: &mut Ctx) -> Step {
    pool_nd(ctx, &['W'], "Pool1D")
}

fn pool2d_rel(ctx: &mut Ctx) -> Step {
    pool_nd(ctx, &['H', 'W'], "Pool2D")
}

fn pool3d_rel(ctx: &mut Ctx) -> Step {
    pool_nd(ctx, &['D', 'H', 'W'], "Pool3D")
}

fn global_pool2d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check_spatial_rank(data.shape.len(), 2, "Pool2D")?;
    let idx = spatial_layout(ctx, &['H', 'W'], "Pool2D")?;
    let mut oshape = data.shape.clone();
    for axis in idx {
        // `oshape.Set(axis, 1)`: the layout may name more axes than the
        // input has.
        item(&data.shape, axis)?;
        oshape[axis] = c_int(1);
    }
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

/// The shared body of the adaptive pools.
fn adaptive_nd(ctx: &mut Ctx, axes: &[char], what: &str) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let n = axes.len();
    check_spatial_rank(data.shape.len(), n, what)?;
    let idx = spatial_layout(ctx, axes, what)?;
    let output_size = ctx.attrs.dims_or_empty("output_size")?;
    check(output_size.len() <= n, || match n {
        1 => "output_size must have 1 element.".to_string(),
        k => format!("output_size can have up to {k} elements."),
    })
    .about("output_size")?;
    // TVM reads every output size first (from the input's shape, or from
    // `output_size`, which may be shorter than the number of axes), then
    // sets them; each access is bounds-checked.
    let sizes = idx
        .iter()
        .enumerate()
        .map(|(i, &axis)| match output_size.len() {
            0 => item(&data.shape, axis).cloned(),
            1 => Ok(output_size[0].clone()),
            _ => item(&output_size, i).cloned(),
        })
        .collect::<Result<Vec<Dim>, RelationError>>()?;
    let mut oshape = data.shape.clone();
    for (&axis, size) in idx.iter().zip(sizes) {
        item(&data.shape, axis)?;
        oshape[axis] = size;
    }
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

fn adaptive_pool1d_rel(ctx: &mut Ctx) -> Step {
    adaptive_nd(ctx, &['W'], "Pool1D")
}

fn adaptive_pool2d_rel(ctx: &mut Ctx) -> Step {
    adaptive_nd(ctx, &['H', 'W'], "Pool2D")
}

fn adaptive_pool3d_rel(ctx: &mut Ctx) -> Step {
    adaptive_nd(ctx, &['D', 'H', 'W'], "Pool3D")
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::AttrValue;

    #[test]
    fn pools() {
        let out = solve_out(
            "nn.max_pool2d",
            &[t(&[1, 64, 112, 112], "float32")],
            &[
                ("pool_size", ints(&[3, 3])),
                ("strides", ints(&[2, 2])),
                ("padding", ints(&[1, 1])),
            ],
        );
        assert_eq!(out, t(&[1, 64, 56, 56], "float32"));
        let out = solve_out(
            "nn.avg_pool2d",
            &[t(&[1, 7, 7, 8], "float32")],
            &[
                ("pool_size", ints(&[2, 2])),
                ("strides", ints(&[2, 2])),
                ("layout", s("NHWC")),
                ("ceil_mode", b(true)),
            ],
        );
        assert_eq!(out, t(&[1, 4, 4, 8], "float32"));
        // int64 inputs stay int64.
        let out = solve_out(
            "nn.avg_pool3d",
            &[t64(&[1, 3, 32, 32, 32], "float32")],
            &[
                ("pool_size", ints(&[2, 2, 2])),
                ("strides", ints(&[2, 2, 2])),
                ("padding", ints(&[2, 0, 0, 2, 0, 0])),
            ],
        );
        assert_eq!(out, t64(&[1, 3, 18, 16, 16], "float32"));
        let out = solve_out(
            "nn.max_pool1d",
            &[t(&[1, 3, 10], "float32")],
            &[("pool_size", ints(&[3])), ("padding", ints(&[1, 1]))],
        );
        assert_eq!(out, t(&[1, 3, 10], "float32"));
        assert!(waits(
            "nn.max_pool2d",
            &[t(&[1, 3, 8, 8], "float32")],
            &[("pool_size", ints(&[2, 2])), ("padding", ints(&[1, 1, 1]))]
        ));
    }

    #[test]
    fn global_and_adaptive() {
        assert_eq!(
            solve_out(
                "nn.global_avg_pool2d",
                &[t64(&[1, 8, 7, 7], "float32")],
                &[]
            ),
            td(
                vec![
                    relay_ir::Dim::int64(1),
                    relay_ir::Dim::int64(8),
                    relay_ir::Dim::int32(1),
                    relay_ir::Dim::int32(1)
                ],
                "float32"
            )
        );
        assert_eq!(
            solve_out(
                "nn.adaptive_avg_pool3d",
                &[t(&[1, 3, 8, 8, 8], "float32")],
                &[("output_size", ints(&[2]))]
            ),
            t(&[1, 3, 2, 2, 2], "float32")
        );
        assert_eq!(
            solve_out(
                "nn.adaptive_max_pool1d",
                &[t(&[1, 3, 8], "float32")],
                &[("output_size", AttrValue::Array(vec![]))]
            ),
            t(&[1, 3, 8], "float32")
        );
    }
}
