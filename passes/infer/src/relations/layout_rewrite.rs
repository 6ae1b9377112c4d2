//! Relations of the layout rewrites that TVM's tuners insert
//! (`src/relay/op/tensor/transform.cc`): `AutoSchedulerLayoutTransformRel`
//! (`auto_scheduler_layout_transform`), whose result shape is spelled out
//! in its `dst_layout` attribute, and `MetaScheduleLayoutTransformRel`
//! (`meta_schedule_layout_transform`), whose result shape is its
//! `index_map` attribute's `MapShape` of the data's shape
//! ([`relay_ir::index_map`]).

use super::shape::c_int;
use super::{relations, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dim::{const_int, dim_dtype};
use relay_ir::index_map::IndexMap;
use relay_ir::{AttrValue, Dim, Type};

relations! {
    /// `AutoSchedulerLayoutTransformRel`.
    "auto_scheduler_layout_transform" => auto_scheduler_layout_transform_rel;
    /// `MetaScheduleLayoutTransformRel`.
    "meta_schedule_layout_transform" => meta_schedule_layout_transform_rel;
}

/// The sizes of an auto-scheduler layout string as topi's
/// `parse_auto_scheduler_layout` reads them: each axis name (characters
/// from `A` to `z`) is followed by its size, and a size counts only when
/// another axis name follows it (so a layout's last size and any `0` size
/// are dropped, as in TVM).
fn auto_scheduler_layout_sizes(layout: &str) -> Result<Vec<Dim>, RelationError> {
    let mut sizes = Vec::new();
    let mut factor: i32 = 0;
    for c in layout.chars() {
        if ('A'..='z').contains(&c) {
            if factor != 0 {
                sizes.push(c_int(i64::from(factor)));
                factor = 0;
            }
        } else if let Some(digit) = c.to_digit(10) {
            // `int32_t` arithmetic in TVM; wrapping keeps a huge size
            // from aborting us where it only overflows there.
            factor = factor.wrapping_mul(10).wrapping_add(digit as i32);
        } else {
            return Err(RelationError::new(format!("Invalid layout {layout}"))
                .about_attribute("dst_layout"));
        }
    }
    Ok(sizes)
}

/// The data's dtype with the sizes written in `dst_layout`.
fn auto_scheduler_layout_transform_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor_or_wait(0, "Check failed: (data != nullptr) is false: ")? else {
        return Ok(false);
    };
    let shape = auto_scheduler_layout_sizes(&ctx.attrs.str("dst_layout")?)?;
    ctx.assign(1, Type::tensor(shape, data.dtype));
    Ok(true)
}

/// The data's dtype with the shape its index map sends it to. A result
/// index that is one of the map's variables keeps that dimension as it is
/// (symbolic or not); any other needs a constant shape.
fn meta_schedule_layout_transform_rel(ctx: &mut Ctx) -> Step {
    let Some(data) = ctx.tensor(0) else {
        return Ok(false);
    };
    let about = |message: String| RelationError::new(message).about_attribute("index_map");
    let map = match ctx.attrs.value("index_map")? {
        AttrValue::Meta(meta) => IndexMap::read(meta).map_err(|e| about(e.0))?,
        _ => return Err(about("index_map must be a tir.IndexMap".into())),
    };
    // TVM's `MapRanges` gives its extents the widest dtype of the shape.
    let dtype = data
        .shape
        .iter()
        .map(dim_dtype)
        .max_by_key(|d| d.bits)
        .unwrap_or(relay_ir::dtype::DataType::int(32));
    let constant: Option<Vec<i64>> = data.shape.iter().map(const_int).collect();
    let shape: Vec<Dim> = match constant {
        Some(sizes) => map
            .map_shape(&sizes)
            .map_err(|e| about(e.0))?
            .into_iter()
            .map(|extent| Dim::int(extent, dtype))
            .collect(),
        None => {
            if data.shape.len() != map.inputs.len() {
                return Err(about(format!(
                    "Check failed: shape.size() == initial_indices.size() ({} vs. {}) : ",
                    data.shape.len(),
                    map.inputs.len()
                )));
            }
            map.outputs
                .iter()
                .map(|e| match e {
                    relay_ir::index_map::IndexExpr::Var(n) => Ok(data.shape[*n].clone()),
                    _ => Err(about(
                        "cannot map a symbolic shape through an index map that computes its \
                         indices (only result indices that are initial indices keep a \
                         symbolic dimension)"
                            .into(),
                    )),
                })
                .collect::<Result<_, _>>()?
        }
    };
    ctx.assign(1, Type::tensor(shape, data.dtype));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

    #[test]
    fn auto_scheduler_layout() {
        let out = |dst: &str| {
            solve_out(
                "auto_scheduler_layout_transform",
                &[t(&[64, 32], "float32")],
                &[("src_layout", s("N64K32")), ("dst_layout", s(dst))],
            )
        };
        // The last size is dropped, as by TVM's parser.
        assert_eq!(out("N4K8n16k4"), t(&[4, 8, 16], "float32"));
        assert_eq!(out("N4K8n16k4x"), t(&[4, 8, 16, 4], "float32"));
        assert_eq!(out("N0K8x"), t(&[8], "float32"));
        assert_eq!(
            fails(
                "auto_scheduler_layout_transform",
                &[t(&[64, 32], "float32")],
                &[("src_layout", s("N64K32")), ("dst_layout", s("N4-K8"))]
            ),
            "Invalid layout N4-K8"
        );
        assert!(waits(
            "auto_scheduler_layout_transform",
            &[relay_ir::Type::incomplete()],
            &[("src_layout", s("N64K32")), ("dst_layout", s("N64K32x"))]
        ));
    }
}
