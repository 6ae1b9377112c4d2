//! Vision relations (`src/relay/op/vision/*.cc`): the region ops of
//! `rcnn_op.cc` (`ROIAlignRel`, `ROIPoolRel`: `[num_rois, C, pooled_h,
//! pooled_w]` in `NCHW`, `[num_rois, pooled_h, pooled_w, C]` in `NHWC`;
//! `ProposalRel`), the detection ops of `nms.cc` (`GetValidCountRel`,
//! `NMSRel`, `AllClassNMSRel`) and `multibox_op.cc` (`MultiboxPriorRel`,
//! `MultiBoxTransformLocRel`), and `YoloReorgRel` (`yolo.cc`).
//!
//! The NMS ops, `get_valid_counts` and `proposal` declare no attrs type in
//! TVM, so their calls carry the attrs object in the metadata section; the
//! fields are read by name all the same.

use super::nn_conv::at;
use super::shape::{assert_eq as dims_equal, assert_lt, c_int, floordiv, is_any, mul};
use super::{check, error, relations, tensor, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Dim, Type};

relations! {
    /// `ROIAlignRel`.
    "ROIAlign" => roi_align_rel;
    /// `ROIPoolRel`.
    "ROIPool" => roi_pool_rel;
    /// `ProposalRel` (`vision.proposal`).
    "Proposal" => proposal_rel;
    /// `GetValidCountRel` (`vision.get_valid_counts`).
    "GetValidCount" => get_valid_count_rel;
    /// `NMSRel` (`vision.non_max_suppression`).
    "NMS" => nms_rel;
    /// `AllClassNMSRel` (`vision.all_class_non_max_suppression`).
    "AllClassNMS" => all_class_nms_rel;
    /// `MultiboxPriorRel` (`vision.multibox_prior`).
    "MultiBoxPrior" => multibox_prior_rel;
    /// `MultiBoxTransformLocRel` (`vision.multibox_transform_loc`).
    "MultiBoxTransformLoc" => multibox_transform_loc_rel;
    /// `YoloReorgRel` (`vision.yolo_reorg`).
    "YoloReorg" => yolo_reorg_rel;
}

/// `ICHECK_EQ(<what>, <expected>) << message` on a rank: TVM's message
/// with both sides (`expected` as written in TVM's source, e.g. `3U`).
fn check_rank(
    shape: &[Dim],
    what: &str,
    expected: &str,
    message: &str,
) -> Result<(), RelationError> {
    let want: usize = expected
        .trim_end_matches('U')
        .parse()
        .expect("a rank literal");
    check(shape.len() == want, || {
        let mut text = format!(
            "Check failed: {what} == {expected} ({} vs. {want})",
            shape.len()
        );
        if !message.is_empty() {
            text.push_str(" : ");
            text.push_str(message);
        }
        text
    })
}

/// `ICHECK(reporter->AssertEQ(...)) << message` with TVM's text.
fn check_assert(holds: bool, condition: &str, message: &str) -> Result<(), RelationError> {
    check(holds, || {
        format!("Check failed: ({condition}) is false: {message}")
    })
}

/// The number of elements of an array attribute (0 when null).
fn array_len(ctx: &Ctx, name: &str) -> Result<usize, RelationError> {
    Ok(match ctx.attrs.value(name)? {
        AttrValue::Array(items) => items.len(),
        _ => 0,
    })
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

/// `[batch * rpn_post_nms_top_n, 5]`.
fn proposal_rel(ctx: &mut Ctx) -> Step {
    let (Some(cls_prob), Some(bbox_pred), Some(im_info)) =
        (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    else {
        return Ok(false);
    };
    check_rank(
        &cls_prob.shape,
        "cls_prob->shape.size()",
        "4U",
        &format!(
            "The dimension of class probability should be 4, but received {}",
            cls_prob.shape.len()
        ),
    )?;
    check_rank(
        &bbox_pred.shape,
        "bbox_pred->shape.size()",
        "4U",
        &format!(
            "The dimension of box prediction should be 4, but received {}",
            bbox_pred.shape.len()
        ),
    )?;
    check_rank(
        &im_info.shape,
        "im_info->shape.size()",
        "2U",
        &format!(
            "The dimension of image info should be 2, but received {}",
            im_info.shape.len()
        ),
    )?;
    check_assert(
        dims_equal(&im_info.shape[1], &c_int(3)),
        "reporter->AssertEQ(im_info->shape[1], 3)",
        "",
    )?;
    let post = c_int(ctx.attrs.int("rpn_post_nms_top_n")?);
    let oshape = vec![mul(&cls_prob.shape[0], &post), c_int(5)];
    ctx.assign(3, tensor(oshape, cls_prob.dtype));
    Ok(true)
}

/// `([batch], int32)`, the data itself, and `([batch, num_anchors], int32)`.
fn get_valid_count_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check_rank(
        &data.shape,
        "dshape.size()",
        "3",
        "Input data should be 3-D.",
    )?;
    let batch = data.shape[0].clone();
    let fields = vec![
        tensor(vec![batch.clone()], DataType::INT32),
        tensor(data.shape.clone(), data.dtype),
        tensor(vec![batch, data.shape[1].clone()], DataType::INT32),
    ];
    ctx.assign(2, Type::tuple(fields));
    Ok(true)
}

/// With `return_indices`: the kept indices `[batch, num_anchors]` and their
/// count `[batch, 1]` (both `int32`); otherwise boxes shaped like the data.
fn nms_rel(ctx: &mut Ctx) -> Step {
    let (Some(data), Some(valid_count)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    check_rank(
        &data.shape,
        "dshape.size()",
        "3",
        "Input data should be 3-D.",
    )?;
    check_rank(
        &valid_count.shape,
        "vshape.size()",
        "1",
        "Input valid count should be 1-D.",
    )?;
    let out = if ctx.attrs.bool("return_indices")? {
        let batch = data.shape[0].clone();
        Type::tuple(vec![
            tensor(vec![batch.clone(), data.shape[1].clone()], DataType::INT32),
            tensor(vec![batch, c_int(1)], DataType::INT32),
        ])
    } else {
        tensor(data.shape.clone(), data.dtype)
    };
    ctx.assign(5, out);
    Ok(true)
}

/// `onnx`: the selected `[batch * classes * boxes, 3]` indices (`?` when the
/// batch or the number of boxes is) and their count `[1]`; any other format
/// (TensorFlow's): per batch `[batch, classes * boxes, 2]` indices, their
/// scores and counts.
fn all_class_nms_rel(ctx: &mut Ctx) -> Step {
    let (Some(boxes), Some(scores)) = (ctx.tensor(0), ctx.tensor(1)) else {
        return Ok(false);
    };
    check_rank(
        &boxes.shape,
        "boxes_shape.size()",
        "3",
        "Input boxes should be 3-D.",
    )?;
    check_rank(
        &scores.shape,
        "scores_shape.size()",
        "3",
        "Input scores count should be 3-D.",
    )?;
    let batch = &boxes.shape[0];
    let num_classes = &scores.shape[1];
    let num_boxes = &boxes.shape[1];
    let fields = if ctx.attrs.str("output_format")? == "onnx" {
        let total = if is_any(batch) || is_any(num_boxes) {
            Dim::Any
        } else {
            mul(&mul(batch, num_classes), num_boxes)
        };
        vec![
            tensor(vec![total, c_int(3)], DataType::INT64),
            tensor(vec![c_int(1)], DataType::INT64),
        ]
    } else {
        let per_batch = if is_any(num_boxes) {
            Dim::Any
        } else {
            mul(num_classes, num_boxes)
        };
        vec![
            tensor(
                vec![batch.clone(), per_batch.clone(), c_int(2)],
                DataType::INT64,
            ),
            tensor(vec![batch.clone(), per_batch], DataType::FLOAT32),
            tensor(vec![batch.clone()], DataType::INT64),
        ]
    };
    ctx.assign(5, Type::tuple(fields));
    Ok(true)
}

/// `[1, H * W * (sizes + ratios - 1), 4]`.
fn multibox_prior_rel(ctx: &mut Ctx) -> Step {
    // TVM reads the data's shape unchecked; we wait while it is unknown.
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check_rank(
        &data.shape,
        "dshape.size()",
        "4",
        "Input data should be 4D: [batch, channel, height, width]",
    )?;
    let priors = array_len(ctx, "sizes")? as i64 + array_len(ctx, "ratios")? as i64 - 1;
    let count = mul(&mul(&data.shape[2], &data.shape[3]), &c_int(priors));
    ctx.assign(1, tensor(vec![c_int(1), count, c_int(4)], data.dtype));
    Ok(true)
}

/// The decoded boxes `[batch, num_anchors, 6]` and the valid counts
/// `[batch]` (`int32`).
fn multibox_transform_loc_rel(ctx: &mut Ctx) -> Step {
    let (Some(cls), Some(loc), Some(anchor)) = (ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)) else {
        return Ok(false);
    };
    let (cls_shape, loc_shape, anchor_shape) = (&cls.shape, &loc.shape, &anchor.shape);
    check_rank(
        cls_shape,
        "cls_shape.size()",
        "3U",
        &format!(
            "The dimension of class probability should be 3, but received {}",
            cls_shape.len()
        ),
    )?;
    check_rank(
        loc_shape,
        "loc_shape.size()",
        "2U",
        &format!(
            "The dimension of location prediction should be 2, but received {}",
            loc_shape.len()
        ),
    )?;
    check_rank(
        anchor_shape,
        "anchor_shape.size()",
        "3U",
        &format!(
            "The dimension of anchor should be 3, but received {}",
            anchor_shape.len()
        ),
    )?;
    check_assert(
        dims_equal(&cls_shape[2], &anchor_shape[1]),
        "reporter->AssertEQ(cls_shape[2], anchor_shape[1])",
        "Number of anchors mismatch found",
    )?;
    check_assert(
        dims_equal(&mul(&cls_shape[2], &c_int(4)), &loc_shape[1]),
        "reporter->AssertEQ(cls_shape[2] * 4, loc_shape[1])",
        "# anchors mismatch with # loc.",
    )?;
    check_assert(
        assert_lt(&c_int(0), &anchor_shape[1]),
        "reporter->Assert(anchor_shape[1] > 0)",
        "Number of anchors must > 0.",
    )?;
    check_assert(
        dims_equal(&anchor_shape[2], &c_int(4)),
        "reporter->AssertEQ(anchor_shape[2], 4)",
        "",
    )?;
    let batch = cls_shape[0].clone();
    let fields = vec![
        tensor(
            vec![batch.clone(), anchor_shape[1].clone(), c_int(6)],
            cls.dtype,
        ),
        tensor(vec![batch], DataType::INT32),
    ];
    ctx.assign(3, Type::tuple(fields));
    Ok(true)
}

/// `[N, C * stride * stride, H / stride, W / stride]`.
fn yolo_reorg_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    check(data.shape.len() == 4, || {
        "Check failed: (data->shape.size() == 4) is false: Yolo reorg supports only 4 dimension."
            .to_string()
    })?;
    let Some(stride) = ctx.attrs.dim("stride")? else {
        return Err(RelationError::new("the attribute `stride` is null").about_attribute("stride"));
    };
    let shape = &data.shape;
    let oshape = vec![
        shape[0].clone(),
        mul(&mul(&shape[1], &stride), &stride),
        floordiv(&shape[2], &stride)?,
        floordiv(&shape[3], &stride)?,
    ];
    ctx.assign(1, tensor(oshape, data.dtype));
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Dim, Type};

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

    fn nms_attrs(return_indices: bool) -> Vec<(&'static str, relay_ir::AttrValue)> {
        vec![
            ("attrs_type", s("relay.attrs.NonMaximumSuppressionAttrs")),
            ("return_indices", b(return_indices)),
        ]
    }

    #[test]
    fn proposal() {
        let attrs = [
            ("attrs_type", s("relay.attrs.ProposalAttrs")),
            ("rpn_post_nms_top_n", int(100)),
        ];
        let inputs = [
            t(&[2, 18, 16, 16], "float32"),
            t(&[2, 36, 16, 16], "float32"),
            t(&[2, 3], "float32"),
        ];
        assert_eq!(
            solve_out("vision.proposal", &inputs, &attrs),
            t(&[200, 5], "float32")
        );
        assert_eq!(
            fails(
                "vision.proposal",
                &[inputs[0].clone(), inputs[1].clone(), t(&[2, 4], "float32")],
                &attrs
            ),
            "Check failed: (reporter->AssertEQ(im_info->shape[1], 3)) is false: "
        );
        assert_eq!(
            fails(
                "vision.proposal",
                &[inputs[0].clone(), t(&[2, 36, 16], "float32"), inputs[2].clone()],
                &attrs
            ),
            "Check failed: bbox_pred->shape.size() == 4U (3 vs. 4) : The dimension of box prediction should be 4, but received 3"
        );
        assert!(waits(
            "vision.proposal",
            &[Type::incomplete(), inputs[1].clone(), inputs[2].clone()],
            &attrs
        ));
    }

    #[test]
    fn get_valid_counts() {
        let attrs = [("attrs_type", s("relay.attrs.GetValidCountsAttrs"))];
        assert_eq!(
            solve_out(
                "vision.get_valid_counts",
                &[t(&[1, 2500, 6], "float32"), t(&[], "float32")],
                &attrs
            ),
            tup(&[
                t(&[1], "int32"),
                t(&[1, 2500, 6], "float32"),
                t(&[1, 2500], "int32")
            ])
        );
        assert_eq!(
            fails(
                "vision.get_valid_counts",
                &[t(&[2500, 6], "float32"), t(&[], "float32")],
                &attrs
            ),
            "Check failed: dshape.size() == 3 (2 vs. 3) : Input data should be 3-D."
        );
    }

    #[test]
    fn nms() {
        let inputs = [
            t(&[1, 5, 6], "float32"),
            t(&[1], "int32"),
            t(&[1, 5], "int32"),
            t(&[], "int32"),
            t(&[], "float32"),
        ];
        assert_eq!(
            solve_out("vision.non_max_suppression", &inputs, &nms_attrs(true)),
            tup(&[t(&[1, 5], "int32"), t(&[1, 1], "int32")])
        );
        assert_eq!(
            solve_out("vision.non_max_suppression", &inputs, &nms_attrs(false)),
            t(&[1, 5, 6], "float32")
        );
        let mut bad = inputs.to_vec();
        bad[1] = t(&[1, 1], "int32");
        assert_eq!(
            fails("vision.non_max_suppression", &bad, &nms_attrs(true)),
            "Check failed: vshape.size() == 1 (2 vs. 1) : Input valid count should be 1-D."
        );
        bad[1] = Type::incomplete();
        assert!(waits("vision.non_max_suppression", &bad, &nms_attrs(true)));
    }

    #[test]
    fn all_class_nms() {
        let onnx = [(
            "attrs_type",
            s("relay.attrs.AllClassNonMaximumSuppressionAttrs"),
        )];
        let tf = [onnx[0].clone(), ("output_format", s("tensorflow"))];
        let scalars = [t(&[], "int64"), t(&[], "float32"), t(&[], "float32")];
        let call = |boxes: Type, scores: Type| {
            let mut inputs = vec![boxes, scores];
            inputs.extend(scalars.iter().cloned());
            inputs
        };
        assert_eq!(
            solve_out(
                "vision.all_class_non_max_suppression",
                &call(t(&[1, 6, 4], "float32"), t(&[1, 2, 6], "float32")),
                &onnx
            ),
            tup(&[t(&[12, 3], "int64"), t(&[1], "int64")])
        );
        assert_eq!(
            solve_out(
                "vision.all_class_non_max_suppression",
                &call(t(&[2, 10, 4], "float32"), t(&[2, 3, 10], "float32")),
                &tf
            ),
            tup(&[
                t(&[2, 30, 2], "int64"),
                t(&[2, 30], "float32"),
                t(&[2], "int64")
            ])
        );
        let any_boxes = td(vec![Dim::Any, Dim::Any, Dim::int32(4)], "float32");
        let any_scores = td(vec![Dim::Any, Dim::int32(2), Dim::Any], "float32");
        assert_eq!(
            solve_out(
                "vision.all_class_non_max_suppression",
                &call(any_boxes.clone(), any_scores.clone()),
                &onnx
            ),
            tup(&[td(vec![Dim::Any, Dim::int32(3)], "int64"), t(&[1], "int64")])
        );
        assert_eq!(
            solve_out(
                "vision.all_class_non_max_suppression",
                &call(any_boxes, any_scores),
                &tf
            ),
            tup(&[
                td(vec![Dim::Any, Dim::Any, Dim::int32(2)], "int64"),
                td(vec![Dim::Any, Dim::Any], "float32"),
                td(vec![Dim::Any], "int64")
            ])
        );
        assert_eq!(
            fails(
                "vision.all_class_non_max_suppression",
                &call(t(&[1, 6, 4], "float32"), t(&[2, 6], "float32")),
                &onnx
            ),
            "Check failed: scores_shape.size() == 3 (2 vs. 3) : Input scores count should be 3-D."
        );
    }

    #[test]
    fn multibox_prior() {
        assert_eq!(
            solve_out(
                "vision.multibox_prior",
                &[t(&[1, 24, 32, 32], "float32")],
                &[]
            ),
            t(&[1, 1024, 4], "float32")
        );
        let sizes = relay_ir::AttrValue::Array(vec![f(0.3), f(0.2)]);
        let ratios = relay_ir::AttrValue::Array(vec![f(1.0), f(2.0), f(0.5)]);
        assert_eq!(
            solve_out(
                "vision.multibox_prior",
                &[td(
                    vec![Dim::Any, Dim::int32(3), Dim::int32(56), Dim::int32(56)],
                    "float32"
                )],
                &[("sizes", sizes), ("ratios", ratios)]
            ),
            t(&[1, 12544, 4], "float32")
        );
        assert_eq!(
            fails("vision.multibox_prior", &[t(&[3, 16, 16], "float32")], &[]),
            "Check failed: dshape.size() == 4 (3 vs. 4) : Input data should be 4D: [batch, channel, height, width]"
        );
    }

    #[test]
    fn multibox_transform_loc() {
        let run = |cls: &[i64], loc: &[i64], anchor: &[i64]| {
            crate::relations::test_util::run(
                "vision.multibox_transform_loc",
                &[t(cls, "float32"), t(loc, "float32"), t(anchor, "float32")],
                &[],
            )
        };
        assert_eq!(
            solve_out(
                "vision.multibox_transform_loc",
                &[
                    t(&[2, 5, 20], "float32"),
                    t(&[2, 80], "float32"),
                    t(&[1, 20, 4], "float32")
                ],
                &[]
            ),
            tup(&[t(&[2, 20, 6], "float32"), t(&[2], "int32")])
        );
        let message = |r: RelationOutcomeOrError| r.unwrap_err().message;
        assert_eq!(
            message(run(&[1, 3, 10], &[1, 36], &[1, 10, 4])),
            "Check failed: (reporter->AssertEQ(cls_shape[2] * 4, loc_shape[1])) is false: # anchors mismatch with # loc."
        );
        assert_eq!(
            message(run(&[1, 3, 10], &[1, 40], &[1, 9, 4])),
            "Check failed: (reporter->AssertEQ(cls_shape[2], anchor_shape[1])) is false: Number of anchors mismatch found"
        );
        assert_eq!(
            message(run(&[1, 3, 0], &[1, 0], &[1, 0, 4])),
            "Check failed: (reporter->Assert(anchor_shape[1] > 0)) is false: Number of anchors must > 0."
        );
        assert_eq!(
            message(run(&[1, 3, 10], &[1, 40], &[1, 10, 5])),
            "Check failed: (reporter->AssertEQ(anchor_shape[2], 4)) is false: "
        );
        assert_eq!(
            message(run(&[1, 3, 10], &[1, 40], &[10, 4])),
            "Check failed: anchor_shape.size() == 3U (2 vs. 3) : The dimension of anchor should be 3, but received 2"
        );
        assert_eq!(
            message(run(&[1, 3, 10], &[40], &[1, 10, 4])),
            "Check failed: loc_shape.size() == 2U (1 vs. 2) : The dimension of location prediction should be 2, but received 1"
        );
    }

    #[test]
    fn yolo_reorg() {
        assert_eq!(
            solve_out(
                "vision.yolo_reorg",
                &[t(&[2, 64, 8, 8], "float32")],
                &[("stride", int(4))]
            ),
            t(&[2, 1024, 2, 2], "float32")
        );
        assert_eq!(
            solve_out(
                "vision.yolo_reorg",
                &[t(&[1, 4, 7, 7], "float32")],
                &[("stride", int(2))]
            ),
            t(&[1, 16, 3, 3], "float32")
        );
        assert_eq!(
            fails("vision.yolo_reorg", &[t(&[4, 6, 6], "float32")], &[("stride", int(2))]),
            "Check failed: (data->shape.size() == 4) is false: Yolo reorg supports only 4 dimension."
        );
        assert_eq!(
            fails(
                "vision.yolo_reorg",
                &[t(&[1, 4, 6, 6], "float32")],
                &[("stride", int(0))]
            ),
            "Divide by zero"
        );
    }
}
