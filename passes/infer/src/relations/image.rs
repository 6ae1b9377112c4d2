//! Image relations (`src/relay/op/image/*.cc`): the resizes
//! (`Resize1DRel`, `Resize2DRel`, `Resize3DRel`), `CropAndResizeRel`,
//! `Dilation2DRel`, `AffineGridRel` and `GridSampleRel`.
//!
//! Most of them convert the data shape to the canonical layout (`NCW`,
//! `NCHW`, `NCDHW`; known sizes become `int32`), replace the spatial sizes
//! and convert the result back to the data layout.

use super::layout::{BijectiveLayout, Layout};
use super::nn_conv::{at, dilated, out_size, padding_hw};
use super::shape::{assert_eq as dims_equal, c_int};
use super::{check, item, relations, tensor, AboutAttribute, AttrsView, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::Dim;

relations! {
    /// `Resize1DRel` (`image.resize1d`).
    "Resize1D" => resize1d_rel;
    /// `Resize2DRel` (`image.resize2d`).
    "Resize2D" => resize2d_rel;
    /// `Resize3DRel` (`image.resize3d`, registered as `Resize3d`).
    "Resize3d" => resize3d_rel;
    /// `CropAndResizeRel`.
    "CropAndResize" => crop_and_resize_rel;
    /// `Dilation2DRel`.
    "Dilation2D" => dilation2d_rel;
    /// `AffineGridRel`.
    "AffineGrid" => affine_grid_rel;
    /// `GridSampleRel`.
    "GridSample" => grid_sample_rel;
}

/// `Layout(name)` as TVM's `operator<<` writes a layout.
fn repr(layout: &str) -> String {
    format!("Layout({layout})")
}

/// The conversion from the layout attribute `attr` to `canonical`;
/// `undefined` words the error when there is none.
fn converter(
    attrs: AttrsView,
    attr: &'static str,
    canonical: &str,
    undefined: impl FnOnce(&str) -> String,
) -> Result<BijectiveLayout, RelationError> {
    let name = attrs.str(attr)?;
    let layout = Layout::parse(&name).about(attr)?;
    BijectiveLayout::new(&layout, &Layout::parse(canonical)?)
        .ok_or_else(|| RelationError::new(undefined(&repr(&name))).about_attribute(attr))
}

/// A converter TVM builds without checking it: using an undefined one is
/// its `ForwardShape` check.
fn unchecked_converter(
    attrs: AttrsView,
    attr: &'static str,
    canonical: &str,
) -> Result<BijectiveLayout, RelationError> {
    converter(attrs, attr, canonical, |_| {
        "Cannot operate on an undefined bijective layout.".to_string()
    })
}

/// Element `i` of the `Array<PrimExpr>` attribute `name`, with the checks
/// of TVM's `Array::operator[]` (a null array cannot be indexed).
fn attr_at(attrs: AttrsView, name: &'static str, i: usize) -> Result<Dim, RelationError> {
    match attrs.dims(name)? {
        Some(dims) => at(&dims, i, name),
        None => {
            Err(RelationError::new("ValueError: cannot index a null array").about_attribute(name))
        }
    }
}

/// `shape.Set(i, value)` with TVM's bounds check.
fn set(shape: &mut [Dim], i: usize, value: Dim) -> Result<(), RelationError> {
    let len = shape.len();
    match shape.get_mut(i) {
        Some(slot) => {
            *slot = value;
            Ok(())
        }
        None => Err(super::index_error(i, len)),
    }
}

/// The shared body of the resizes: `size` (of `n` entries) replaces the
/// spatial axes of the canonical layout; `roi` must have `2 * n` entries.
fn resize_impl(ctx: &mut Ctx, canonical: &str, label: &str) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let n = canonical.len() - 2;
    let size = ctx.attrs.dims_or_empty("size")?;
    let roi = match ctx.attrs.value("roi")? {
        relay_ir::AttrValue::Array(items) => items.len(),
        _ => 0,
    };
    check(size.len() == n, || {
        format!("Check failed: param->size.size() == {n}")
    })
    .about("size")?;
    check(roi == 2 * n, || {
        format!("Check failed: param->roi.size() == {}", 2 * n)
    })
    .about("roi")?;
    let converter = converter(ctx.attrs, "layout", canonical, |layout| {
        format!(
            "{label} only support input layouts that are convertible from {canonical}. But got {layout}"
        )
    })?;
    let mut oshape = converter.forward_shape(&data.shape)?;
    for (i, dim) in size.into_iter().enumerate() {
        set(&mut oshape, 2 + i, dim)?;
    }
    let out_dtype = ctx.attrs.dtype_or("out_dtype", data.dtype)?;
    let oshape = converter.backward_shape(&oshape)?;
    ctx.assign(1, tensor(oshape, out_dtype));
    Ok(true)
}

fn resize1d_rel(ctx: &mut Ctx) -> Step {
    resize_impl(ctx, "NCW", "Resize")
}

fn resize2d_rel(ctx: &mut Ctx) -> Step {
    resize_impl(ctx, "NCHW", "Resize")
}

fn resize3d_rel(ctx: &mut Ctx) -> Step {
    resize_impl(ctx, "NCDHW", "Resize3d")
}

/// `[num_boxes, C, crop_h, crop_w]` in `NCHW`, converted to the layout; the
/// boxes' first axis is the number of boxes (their rank is not checked).
fn crop_and_resize_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(boxes), Some(_)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)) else {
        return Ok(false);
    };
    let out_dtype = ctx.attrs.dtype_or("out_dtype", data.dtype)?;
    let converter = unchecked_converter(ctx.attrs, "layout", "NCHW")?;
    let mut oshape = converter.forward_shape(&data.shape)?;
    set(&mut oshape, 0, item(&boxes.shape, 0)?.clone())?;
    set(&mut oshape, 2, attr_at(ctx.attrs, "crop_size", 0)?)?;
    set(&mut oshape, 3, attr_at(ctx.attrs, "crop_size", 1)?)?;
    let oshape = converter.backward_shape(&oshape)?;
    ctx.assign(3, tensor(oshape, out_dtype));
    Ok(true)
}

/// The output channels come from the weight (its `I` axis) without any
/// check against the data's; each spatial size is
/// `(in + pad - dilated_kernel) / stride + 1`, `?` stays `?`.
fn dilation2d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let input = converter(ctx.attrs, "data_layout", "NCHW", |layout| {
        format!("Dilation2D only support input layouts that are convertible from NCHW. But got {layout}")
    })?;
    let kernel = converter(ctx.attrs, "kernel_layout", "IHW", |layout| {
        format!("Dilation2D only support kernel layouts that are convertible from OIHW. But got {layout}")
    })?;
    // The output layout is the data layout, checked (again) as such.
    let output = converter(ctx.attrs, "data_layout", "NCHW", |layout| {
        format!("Dilation2D only support output layouts that are convertible from NCHW. But got {layout}")
    })?;
    let dshape = input.forward_shape(&data.shape)?;
    // TVM reads the weight only now: a data rank error comes first.
    let Some(weight) = ctx.tensor(1) else {
        return Ok(false);
    };
    let wshape = kernel.forward_shape(&weight.shape)?;
    let dilations = ctx.attrs.dims_or_empty("dilations")?;
    let strides = ctx.attrs.dims_or_empty("strides")?;
    let ksize_y = dilated(&wshape[1], &at(&dilations, 0, "dilations")?);
    let ksize_x = dilated(&wshape[2], &at(&dilations, 1, "dilations")?);
    let (pad_h, pad_w) = padding_hw(&ctx.attrs.dims_or_empty("padding")?).about("padding")?;
    let height = out_size(
        item(&dshape, 2)?,
        &pad_h,
        &ksize_y,
        &at(&strides, 0, "strides")?,
    )?;
    let width = out_size(
        item(&dshape, 3)?,
        &pad_w,
        &ksize_x,
        &at(&strides, 1, "strides")?,
    )?;
    let oshape = vec![dshape[0].clone(), wshape[0].clone(), height, width];
    let out_dtype = ctx.attrs.dtype_or("out_dtype", data.dtype)?;
    let oshape = output.backward_shape(&oshape)?;
    ctx.assign(2, tensor(oshape, out_dtype));
    Ok(true)
}

/// `[batch, 2, target_h, target_w]` from a `[batch, 2, 3]` matrix.
fn affine_grid_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    // TVM reads the batch before checking the rank.
    let batch = item(&data.shape, 0)?.clone();
    check(
        data.shape.len() == 3
            && dims_equal(&data.shape[1], &c_int(2))
            && dims_equal(&data.shape[2], &c_int(3)),
        || "data should be anaffine matrix with shape [batch_size, 2, 3]".to_string(),
    )?;
    let target = ctx.attrs.dims("target_shape")?;
    let Some(target) = target.filter(|t| t.len() == 2) else {
        return Err(RelationError::new("target_shape should be 2D").about_attribute("target_shape"));
    };
    let [height, width] = <[Dim; 2]>::try_from(target).expect("two sizes, checked above");
    ctx.assign(1, tensor(vec![batch, c_int(2), height, width], data.dtype));
    Ok(true)
}

/// 4-D data: the grid's axes 2 and 3 replace the data's `H` and `W`; 5-D
/// data: the grid's axes 2 to 4 replace `D`, `H` and `W`. Data of any other
/// rank never resolves (TVM's relation returns false forever).
fn grid_sample_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(grid)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    let canonical = match data.shape.len() {
        4 => "NCHW",
        5 => "NCDHW",
        _ => return Ok(false),
    };
    let converter = unchecked_converter(ctx.attrs, "layout", canonical)?;
    let mut oshape = converter.forward_shape(&data.shape)?;
    for axis in 2..data.shape.len() {
        set(&mut oshape, axis, item(&grid.shape, axis)?.clone())?;
    }
    let oshape = converter.backward_shape(&oshape)?;
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::dtype::DataType;
    use relay_ir::{AttrValue, Dim};

    fn roi(n: usize) -> AttrValue {
        AttrValue::Array(vec![
            AttrValue::FloatImm {
                value: 0.0,
                dtype: DataType::FLOAT32
            };
            n
        ])
    }

    #[test]
    fn resize2d() {
        assert_eq!(
            solve_out(
                "image.resize2d",
                &[t(&[1, 8, 8, 3], "float32")],
                &[
                    ("size", ints(&[16, 12])),
                    ("roi", roi(4)),
                    ("layout", s("NHWC"))
                ]
            ),
            t(&[1, 16, 12, 3], "float32")
        );
        assert_eq!(
            solve_out(
                "image.resize2d",
                &[t64(&[1, 3, 8, 8], "float32")],
                &[("size", ints(&[4, 4])), ("roi", roi(4))]
            ),
            t(&[1, 3, 4, 4], "float32")
        );
    }

    #[test]
    fn resize1d_and_3d() {
        assert_eq!(
            solve_out(
                "image.resize1d",
                &[t(&[2, 8, 4], "float32")],
                &[
                    ("size", ints(&[5])),
                    ("roi", roi(2)),
                    ("layout", s("NWC")),
                    ("out_dtype", dt("float16"))
                ]
            ),
            t(&[2, 5, 4], "float16")
        );
        assert_eq!(
            solve_out(
                "image.resize3d",
                &[td(
                    vec![
                        Dim::Any,
                        Dim::int64(3),
                        Dim::int64(4),
                        Dim::int64(4),
                        Dim::int64(4)
                    ],
                    "float32"
                )],
                &[("size", ints(&[8, 8, 8])), ("roi", roi(6))]
            ),
            td(
                vec![
                    Dim::Any,
                    Dim::int32(3),
                    Dim::int32(8),
                    Dim::int32(8),
                    Dim::int32(8)
                ],
                "float32"
            )
        );
        // Blocked layouts convert through the canonical one.
        assert_eq!(
            solve_out(
                "image.resize1d",
                &[t(&[1, 2, 16, 4], "float32")],
                &[
                    ("size", ints(&[32])),
                    ("roi", roi(2)),
                    ("layout", s("NCW4c"))
                ]
            ),
            t(&[1, 2, 32, 4], "float32")
        );
    }

    #[test]
    fn resize_errors() {
        assert_eq!(
            fails(
                "image.resize1d",
                &[t(&[1, 3, 16], "float32")],
                &[("size", ints(&[4, 4])), ("roi", roi(2))]
            ),
            "Check failed: param->size.size() == 1"
        );
        assert_eq!(
            fails(
                "image.resize3d",
                &[t(&[1, 3, 4, 4, 4], "float32")],
                &[("size", ints(&[8, 8, 8])), ("roi", roi(4))]
            ),
            "Check failed: param->roi.size() == 6"
        );
        assert_eq!(
            fails(
                "image.resize3d",
                &[t(&[1, 3, 4, 8], "float32")],
                &[("size", ints(&[8, 16, 16])), ("roi", roi(6))]
            ),
            "Input shape size 4 mismatch with the expected shape size 5"
        );
        assert_eq!(
            fails(
                "image.resize3d",
                &[t(&[1, 3, 4, 8, 8], "float32")],
                &[("size", ints(&[8, 16, 16])), ("roi", roi(6)), ("layout", s("NCHW"))]
            ),
            "Resize3d only support input layouts that are convertible from NCDHW. But got Layout(NCHW)"
        );
        assert!(waits(
            "image.resize1d",
            &[relay_ir::Type::incomplete()],
            &[("size", ints(&[4])), ("roi", roi(2))]
        ));
    }

    #[test]
    fn crop_and_resize() {
        let inputs = [
            t(&[1, 32, 32, 3], "float32"),
            t(&[5, 4], "float32"),
            t(&[5], "int32"),
        ];
        assert_eq!(
            solve_out(
                "image.crop_and_resize",
                &inputs,
                &[("crop_size", ints(&[14, 14])), ("layout", s("NHWC"))]
            ),
            t(&[5, 14, 14, 3], "float32")
        );
        assert_eq!(
            fails("image.crop_and_resize", &inputs, &[("layout", s("NHWC"))]),
            "ValueError: cannot index a null array"
        );
        assert_eq!(
            fails(
                "image.crop_and_resize",
                &inputs,
                &[("crop_size", ints(&[14])), ("layout", s("NHWC"))]
            ),
            "IndexError: indexing 1 on an array of size 1 (attribute `crop_size`)"
        );
        assert_eq!(
            fails(
                "image.crop_and_resize",
                &inputs,
                &[("crop_size", ints(&[14, 14])), ("layout", s("NCW"))]
            ),
            "Cannot operate on an undefined bijective layout."
        );
        assert_eq!(
            fails(
                "image.crop_and_resize",
                &[inputs[0].clone(), t(&[], "float32"), inputs[2].clone()],
                &[("crop_size", ints(&[14, 14])), ("layout", s("NHWC"))]
            ),
            "IndexError: indexing 0 on an array of size 0"
        );
        assert!(waits(
            "image.crop_and_resize",
            &[
                inputs[0].clone(),
                inputs[1].clone(),
                relay_ir::Type::incomplete()
            ],
            &[("crop_size", ints(&[14, 14]))]
        ));
    }

    #[test]
    fn dilation2d() {
        let out = |data: &[i64], weight: &[i64], attrs: &[(&str, AttrValue)]| {
            solve_out(
                "image.dilation2d",
                &[t(data, "float32"), t(weight, "float32")],
                attrs,
            )
        };
        assert_eq!(
            out(&[1, 3, 32, 32], &[3, 3, 3], &[]),
            t(&[1, 3, 30, 30], "float32")
        );
        assert_eq!(
            out(
                &[1, 32, 32, 4],
                &[3, 3, 4],
                &[
                    ("strides", ints(&[2, 2])),
                    ("padding", ints(&[1, 1])),
                    ("data_layout", s("NHWC")),
                    ("kernel_layout", s("HWI"))
                ]
            ),
            t(&[1, 16, 16, 4], "float32")
        );
        // Dilations widen the kernel; four paddings are top, left, bottom, right.
        assert_eq!(
            out(
                &[1, 3, 10, 10],
                &[3, 3, 3],
                &[
                    ("dilations", ints(&[2, 3])),
                    ("padding", ints(&[1, 0, 0, 0]))
                ]
            ),
            t(&[1, 3, 7, 4], "float32")
        );
        assert_eq!(
            solve_out(
                "image.dilation2d",
                &[
                    td(
                        vec![Dim::int32(1), Dim::int32(3), Dim::Any, Dim::int32(8)],
                        "float32"
                    ),
                    t(&[3, 2, 2], "float32")
                ],
                &[("out_dtype", dt("float16"))]
            ),
            td(
                vec![Dim::int32(1), Dim::int32(3), Dim::Any, Dim::int32(7)],
                "float16"
            )
        );
        assert_eq!(
            fails(
                "image.dilation2d",
                &[t(&[1, 3, 32, 32], "float32"), t(&[3, 3, 3], "float32")],
                &[("kernel_layout", s("OIHW"))]
            ),
            "Dilation2D only support kernel layouts that are convertible from OIHW. But got Layout(OIHW)"
        );
        assert_eq!(
            fails(
                "image.dilation2d",
                &[t(&[1, 3, 32, 32], "float32"), t(&[3, 3, 3], "float32")],
                &[("data_layout", s("NCW"))]
            ),
            "Dilation2D only support input layouts that are convertible from NCHW. But got Layout(NCW)"
        );
        assert_eq!(
            fails(
                "image.dilation2d",
                &[t(&[1, 3, 32, 32], "float32"), t(&[3, 3, 3], "float32")],
                &[("padding", ints(&[1, 1, 1]))]
            ),
            " Padding size should be 1, 2 or 4, but got 3"
        );
        // The data's rank is checked before the weight is needed.
        assert_eq!(
            fails(
                "image.dilation2d",
                &[t(&[3, 32, 32], "float32"), relay_ir::Type::incomplete()],
                &[]
            ),
            "Input shape size 3 mismatch with the expected shape size 4"
        );
        assert!(waits(
            "image.dilation2d",
            &[t(&[1, 3, 32, 32], "float32"), relay_ir::Type::incomplete()],
            &[]
        ));
    }

    #[test]
    fn affine_grid() {
        assert_eq!(
            solve_out(
                "image.affine_grid",
                &[t(&[4, 2, 3], "float32")],
                &[("target_shape", ints(&[8, 16]))]
            ),
            t(&[4, 2, 8, 16], "float32")
        );
        let bad = "data should be anaffine matrix with shape [batch_size, 2, 3]";
        for shape in [&[1, 3, 3][..], &[2, 3], &[1, 2, 3, 1]] {
            assert_eq!(
                fails(
                    "image.affine_grid",
                    &[t(shape, "float32")],
                    &[("target_shape", ints(&[8, 8]))]
                ),
                bad
            );
        }
        assert_eq!(
            fails(
                "image.affine_grid",
                &[t(&[], "float32")],
                &[("target_shape", ints(&[8, 8]))]
            ),
            "IndexError: indexing 0 on an array of size 0"
        );
        assert_eq!(
            fails(
                "image.affine_grid",
                &[t(&[1, 2, 3], "float32")],
                &[("target_shape", ints(&[8]))]
            ),
            "target_shape should be 2D"
        );
    }

    #[test]
    fn grid_sample() {
        assert_eq!(
            solve_out(
                "image.grid_sample",
                &[t(&[4, 4, 16, 32], "float32"), t(&[4, 2, 8, 8], "float32")],
                &[]
            ),
            t(&[4, 4, 8, 8], "float32")
        );
        assert_eq!(
            solve_out(
                "image.grid_sample",
                &[
                    t(&[1, 2, 4, 6, 8], "float32"),
                    t(&[1, 3, 2, 3, 4], "float32")
                ],
                &[("layout", s("NCDHW"))]
            ),
            t(&[1, 2, 2, 3, 4], "float32")
        );
        assert_eq!(
            solve_out(
                "image.grid_sample",
                &[t(&[1, 16, 32, 4], "float32"), t(&[1, 2, 8, 8], "float32")],
                &[("layout", s("NHWC"))]
            ),
            t(&[1, 8, 8, 4], "float32")
        );
        // Other ranks never resolve.
        assert!(waits(
            "image.grid_sample",
            &[t(&[4, 16, 32], "float32"), t(&[4, 2, 8, 8], "float32")],
            &[]
        ));
        assert_eq!(
            fails(
                "image.grid_sample",
                &[t(&[4, 4, 16, 32], "float32"), t(&[4, 2, 8], "float32")],
                &[]
            ),
            "IndexError: indexing 3 on an array of size 3"
        );
        assert_eq!(
            fails(
                "image.grid_sample",
                &[t(&[4, 4, 16, 32], "float32"), t(&[4, 2, 8, 8], "float32")],
                &[("layout", s("NCDHW"))]
            ),
            "Cannot operate on an undefined bijective layout."
        );
    }
}
