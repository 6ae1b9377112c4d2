//! Memory relations (`src/relay/op/memory/memory.cc`): `AllocStorageRel`
//! (`memory.alloc_storage(size, alignment)` is a `Storage[]`),
//! `AllocTensorRel` (`memory.alloc_tensor(storage, offset, shape)`) and
//! `KillRel` (`memory.kill(x)` is `()`).

use super::{check, error, relations, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;
use relay_ir::{AttrValue, Dim, ExprKind, GlobalTypeVar, Type, TypeKind};

relations! {
    /// `AllocStorageRel`.
    "AllocStorage" => alloc_storage_rel;
    /// `AllocTensorRel`.
    "AllocTensor" => alloc_tensor_rel;
    /// `KillRel`.
    "Kill" => kill_rel;
}

/// `TypeCall(mod->GetGlobalTypeVar("Storage"), {})`; the module must
/// define `Storage`, which the solver's unification with the module's
/// declarations checks.
fn storage_type() -> Type {
    let storage = Type::new(TypeKind::GlobalVar(GlobalTypeVar::new("Storage")));
    Type::new(TypeKind::Call {
        func: storage,
        args: Vec::new(),
    })
}

/// The tensor of a `Constant` attribute: inline, or in the metadata section.
fn constant_tensor(value: &AttrValue) -> Option<TensorData> {
    match value {
        AttrValue::Expr(expr) => match expr.kind() {
            ExprKind::Constant(data) => Some((**data).clone()),
            _ => None,
        },
        AttrValue::Meta(meta) if meta.type_key() == "relay.Constant" => {
            let node = meta.graph.nodes.get(meta.index)?;
            let index: usize = node.attrs.get("data")?.parse().ok()?;
            meta.graph.tensor(index).ok()
        }
        _ => None,
    }
}

/// `FromConstShape`: the sizes held by a 1-D `int32`/`int64` constant.
fn const_shape(konst: &TensorData) -> Result<Vec<i64>, RelationError> {
    check(konst.ndim() == 1, || {
        format!("Check failed: shape->ndim == 1u ({} vs. 1)", konst.ndim())
    })?;
    let dtype = konst.dtype;
    check(dtype.code == TypeCode::Int, || {
        format!(
            "Check failed: shape->dtype.code == 0U ({} vs. 0) : The dtype of constant shape must be int32 or int64, but got {dtype}",
            dtype.code.to_u8()
        )
    })?;
    check(dtype.bits == 32 || dtype.bits == 64, || {
        format!(
            "Check failed: (shape->dtype.bits == 64 || shape->dtype.bits == 32) is false: The dtype of constant shape must be int32 or int64, but got{dtype}"
        )
    })?;
    (0..konst.shape[0] as usize)
        .map(|i| konst.get_i64(i).map_err(|e| RelationError::new(e.message)))
        .collect()
}

/// The storage argument is a `Storage[]`; the result is a tensor of the
/// `dtype` attribute shaped by `const_shape` (whose length must be the
/// shape argument's size). Without `const_shape`, TVM builds the type from
/// `assert_shape` but never assigns it: the output's type must then come
/// from elsewhere.
fn alloc_tensor_rel(ctx: &mut Ctx) -> Step {
    check(ctx.attrs.is_some(), || {
        "Check failed: (alloc_attrs != nullptr) is false: must be alloc_tensor attributes"
            .to_string()
    })?;
    // TVM `ICHECK`s both; we wait while either is incomplete.
    let Some(_offset) = ctx.tensor_or_wait_exact(
        1,
        "Check failed: (offset_type != nullptr) is false: must be a scalar type",
    )?
    else {
        return Ok(false);
    };
    let Some(shape) = ctx.tensor_or_wait_exact(
        2,
        "Check failed: (tt != nullptr) is false: must be tensor type",
    )?
    else {
        return Ok(false);
    };
    let dims = match shape.shape.first() {
        None => 0,
        Some(Dim::Int { value, .. }) => *value,
        Some(_) => return error("Check failed: (rank != nullptr) is false: "),
    };
    ctx.assign(0, storage_type());
    match ctx.attrs.value("const_shape")? {
        AttrValue::Null => {
            check(
                !matches!(ctx.attrs.value("assert_shape")?, AttrValue::Null),
                || {
                    "Check failed: (alloc_attrs->assert_shape.defined()) is false: the assert_shape must be set when const_shape is not".to_string()
                },
            )?;
        }
        value => {
            let konst = constant_tensor(value).ok_or_else(|| {
                RelationError::new("the attribute `const_shape` is not a constant")
                    .about_attribute("const_shape")
            })?;
            let sizes = const_shape(&konst)?;
            check(sizes.len() as i64 == dims, || {
                format!(
                    "Check failed: sh.size() == dims ({} vs. {dims})",
                    sizes.len()
                )
            })?;
            // `tvm::Integer(sh[i])`: int32 immediates.
            let out = sizes.into_iter().map(Dim::int32).collect();
            let dtype = ctx.attrs.dtype("dtype")?;
            ctx.assign(3, Type::tensor(out, dtype));
        }
    }
    Ok(true)
}

fn alloc_storage_rel(ctx: &mut Ctx) -> Step {
    // TVM `ICHECK`s both inputs; we wait while either is incomplete.
    for (slot, name) in [(0usize, "size"), (1, "alignment")] {
        let Some(t) = ctx.tensor_or_wait(
            slot,
            &format!("Check failed: {name} type is a TensorType: "),
        )?
        else {
            return Ok(false);
        };
        check(t.dtype == DataType::INT64, || {
            format!(
                "Check failed: {name} dtype == int64 ({} vs. int64)",
                t.dtype
            )
        })?;
        check(t.shape.is_empty(), || {
            format!(
                "Check failed: {name} shape.size() == 0 ({} vs. 0)",
                t.shape.len()
            )
        })?;
    }
    ctx.assign(2, storage_type());
    Ok(true)
}

fn kill_rel(ctx: &mut Ctx) -> Step {
    ctx.assign(1, Type::unit());
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{Type, TypeKind};

    fn shape_constant(dtype: &str, sizes: &[i64]) -> relay_ir::AttrValue {
        let data = relay_ir::metadata::TensorData::from_i64s(
            dtype.parse().unwrap(),
            vec![sizes.len() as i64],
            sizes,
        )
        .unwrap();
        relay_ir::AttrValue::Expr(relay_ir::Expr::constant(data, None))
    }

    #[test]
    fn alloc_tensor() {
        let inputs = [Type::incomplete(), t(&[], "int64"), t(&[2], "int64")];
        let assigns = solved(
            "memory.alloc_tensor",
            &inputs,
            &[
                ("const_shape", shape_constant("int64", &[2, 3])),
                ("assert_shape", relay_ir::AttrValue::Null),
                ("dtype", dt("float16")),
            ],
        );
        assert!(matches!(assigns[0].1.kind(), TypeKind::Call { args, .. } if args.is_empty()));
        assert_eq!(assigns[1], (3, t(&[2, 3], "float16")));
        // A scalar: an empty shape tensor and an empty constant.
        let assigns = solved(
            "memory.alloc_tensor",
            &[Type::incomplete(), t(&[], "int64"), t(&[0], "int64")],
            &[
                ("const_shape", shape_constant("int32", &[])),
                ("assert_shape", relay_ir::AttrValue::Null),
            ],
        );
        assert_eq!(assigns[1], (3, t(&[], "float32")));
        // Without a constant shape TVM assigns only the storage.
        let assigns = solved(
            "memory.alloc_tensor",
            &inputs,
            &[
                ("const_shape", relay_ir::AttrValue::Null),
                ("assert_shape", ints(&[2, 3])),
            ],
        );
        assert_eq!(assigns.len(), 1);
        assert_eq!(
            fails(
                "memory.alloc_tensor",
                &inputs,
                &[("const_shape", relay_ir::AttrValue::Null), ("assert_shape", relay_ir::AttrValue::Null)],
            ),
            "Check failed: (alloc_attrs->assert_shape.defined()) is false: the assert_shape must be set when const_shape is not"
        );
        assert_eq!(
            fails(
                "memory.alloc_tensor",
                &inputs,
                &[
                    ("const_shape", shape_constant("int64", &[2, 3, 4])),
                    ("assert_shape", relay_ir::AttrValue::Null)
                ],
            ),
            "Check failed: sh.size() == dims (3 vs. 2)"
        );
        assert_eq!(
            fails(
                "memory.alloc_tensor",
                &inputs,
                &[("const_shape", shape_constant("uint8", &[2, 3])), ("assert_shape", relay_ir::AttrValue::Null)],
            ),
            "Check failed: shape->dtype.code == 0U (1 vs. 0) : The dtype of constant shape must be int32 or int64, but got uint8"
        );
        assert!(waits(
            "memory.alloc_tensor",
            &[Type::incomplete(), t(&[], "int64"), Type::incomplete()],
            &[
                ("const_shape", shape_constant("int64", &[2, 3])),
                ("assert_shape", relay_ir::AttrValue::Null)
            ],
        ));
    }

    #[test]
    fn storage_and_kill() {
        let out = solve_out(
            "memory.alloc_storage",
            &[t(&[], "int64"), t(&[], "int64")],
            &[],
        );
        assert!(matches!(out.kind(), TypeKind::Call { args, .. } if args.is_empty()));
        assert_eq!(
            solve_out("memory.kill", &[Type::incomplete()], &[]),
            Type::unit()
        );
    }
}
