//! Relations of the layout rewrites that TVM's tuners insert
//! (`src/relay/op/tensor/transform.cc`): `AutoSchedulerLayoutTransformRel`
//! (`auto_scheduler_layout_transform`), whose result shape is spelled out
//! in its `dst_layout` attribute.

use super::shape::c_int;
use super::{relations, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::{Dim, Type};

relations! {
    /// `AutoSchedulerLayoutTransformRel`.
    "auto_scheduler_layout_transform" => auto_scheduler_layout_transform_rel;
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
