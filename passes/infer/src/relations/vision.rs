//! Vision relations (`src/relay/op/vision/rcnn_op.cc`): `ROIAlignRel` and
//! `ROIPoolRel`: `[num_rois, C, pooled_h, pooled_w]` in `NCHW`,
//! `[num_rois, pooled_h, pooled_w, C]` in `NHWC`.

use super::nn_conv::at;
use super::{check, error, relations, tensor, Ctx, Step};

relations! {
    /// `ROIAlignRel`.
    "ROIAlign" => roi_align_rel;
    /// `ROIPoolRel`.
    "ROIPool" => roi_pool_rel;
}

fn roi_impl(ctx: &mut Ctx, align: bool) -> Step {
    // TVM dereferences both inputs as tensors (`ICHECK` for align); we wait
    // while either is incomplete.
    let Some(data) = ctx.tensor_or_wait(0, "Check failed: (data) is false: ")? else {
        return Ok(false);
    };
    let Some(rois) = ctx.tensor_or_wait(1, "Check failed: (rois) is false: ")? else {
        return Ok(false);
    };
    check(data.shape.len() == 4, || {
        "Input data should be 4-D.".to_string()
    })?;
    check(rois.shape.len() == 2, || {
        "Input rois should be 2-D.".to_string()
    })?;
    let pooled = ctx.attrs.dims_or_empty("pooled_size")?;
    let (ph, pw) = (
        at(&pooled, 0, "pooled_size")?,
        at(&pooled, 1, "pooled_size")?,
    );
    let layout = ctx.attrs.str("layout")?;
    let oshape = match layout.as_str() {
        "NCHW" => vec![rois.shape[0].clone(), data.shape[1].clone(), ph, pw],
        "NHWC" => vec![rois.shape[0].clone(), ph, pw, data.shape[3].clone()],
        other if align => return error(format!("Check failed: roi_align_attrs->layout == \"NHWC\" ({other} vs. NHWC) : Unexpected ROI Align layout")),
        other => return error(format!("vision.roi_pool does not support {other} layout")),
    };
    ctx.assign(2, tensor(oshape, data.dtype));
    Ok(true)
}

fn roi_align_rel(ctx: &mut Ctx) -> Step {
    roi_impl(ctx, true)
}

fn roi_pool_rel(ctx: &mut Ctx) -> Step {
    roi_impl(ctx, false)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;

    #[test]
    fn roi() {
        let attrs = [
            ("attrs_type", s("relay.attrs.ROIAlignAttrs")),
            ("pooled_size", ints(&[14, 14])),
            ("spatial_scale", f(1.0)),
            ("layout", s("NHWC")),
        ];
        assert_eq!(
            solve_out(
                "vision.roi_align",
                &[t(&[1, 32, 32, 64], "float32"), t(&[32, 5], "float32")],
                &attrs
            ),
            t(&[32, 14, 14, 64], "float32")
        );
        let attrs = [
            ("attrs_type", s("relay.attrs.ROIPoolAttrs")),
            ("pooled_size", ints(&[7, 7])),
            ("spatial_scale", f(1.0)),
        ];
        assert_eq!(
            solve_out(
                "vision.roi_pool",
                &[t(&[1, 64, 32, 32], "float32"), t(&[8, 5], "float32")],
                &attrs
            ),
            t(&[8, 64, 7, 7], "float32")
        );
    }
}
