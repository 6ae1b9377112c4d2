//! Image relations (`src/relay/op/image/resize.cc`): `Resize2DRel`.
//!
//! The data shape is converted to `NCHW` (so known sizes become `int32`),
//! `H` and `W` are replaced by the `size` attribute, and the result is
//! converted back to the data layout.

use super::layout::{BijectiveLayout, Layout};
use super::{check, relations, tensor, AboutAttribute, Ctx, Step};
use crate::relation_contract::RelationError;

relations! {
    /// `Resize2DRel` (`image.resize2d`).
    "Resize2D" => resize2d_rel;
}

fn resize2d_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let size = ctx.attrs.dims_or_empty("size")?;
    let roi = match ctx.attrs.value("roi")? {
        relay_ir::AttrValue::Array(items) => items.len(),
        _ => 0,
    };
    check(size.len() == 2, || {
        "Check failed: param->size.size() == 2".to_string()
    })?;
    check(roi == 4, || {
        "Check failed: param->roi.size() == 4".to_string()
    })?;
    let layout_name = ctx.attrs.str("layout")?;
    let converter = BijectiveLayout::new(&Layout::parse(&layout_name).about("layout")?, &Layout::parse("NCHW")?)
        .ok_or_else(|| {
            RelationError::new(format!(
                "Resize only support input layouts that are convertible from NCHW. But got Layout({layout_name})"
            ))
        }).about("layout")?;
    let mut oshape = converter.forward_shape(&data.shape)?;
    oshape[2] = size[0].clone();
    oshape[3] = size[1].clone();
    let out_dtype = ctx.attrs.dtype_or("out_dtype", data.dtype)?;
    let oshape = converter.backward_shape(&oshape)?;
    ctx.assign(1, tensor(oshape, out_dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::AttrValue;

    #[test]
    fn resize() {
        let roi = AttrValue::Array(vec![
            AttrValue::FloatImm {
                value: 0.0,
                dtype: relay_ir::dtype::DataType::FLOAT32
            };
            4
        ]);
        assert_eq!(
            solve_out(
                "image.resize2d",
                &[t(&[1, 8, 8, 3], "float32")],
                &[
                    ("size", ints(&[16, 12])),
                    ("roi", roi.clone()),
                    ("layout", s("NHWC"))
                ]
            ),
            t(&[1, 16, 12, 3], "float32")
        );
        assert_eq!(
            solve_out(
                "image.resize2d",
                &[t64(&[1, 3, 8, 8], "float32")],
                &[("size", ints(&[4, 4])), ("roi", roi)]
            ),
            t(&[1, 3, 4, 4], "float32")
        );
    }
}
