//! Memory relations (`src/relay/op/memory/memory.cc`): `AllocStorageRel`
//! (`memory.alloc_storage(size, alignment)` is a `Storage[]`) and `KillRel`
//! (`memory.kill(x)` is `()`).

use super::{check, relations, Ctx, Step};
use relay_ir::dtype::DataType;
use relay_ir::{GlobalTypeVar, Type, TypeKind};

relations! {
    /// `AllocStorageRel`.
    "AllocStorage" => alloc_storage_rel;
    /// `KillRel`.
    "Kill" => kill_rel;
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
    // `TypeCall(mod->GetGlobalTypeVar("Storage"), {})`; the module must
    // define `Storage`, which the solver's unification with the module's
    // declarations checks.
    let storage = Type::new(TypeKind::GlobalVar(GlobalTypeVar::new("Storage")));
    ctx.assign(
        2,
        Type::new(TypeKind::Call {
            func: storage,
            args: Vec::new(),
        }),
    );
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
