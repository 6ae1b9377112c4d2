//! The relation of `call_lowered(@f, (args…))` (`src/relay/op/call/call.cc`,
//! `CallLoweredRel`): the tuple of arguments has the function's parameter
//! types and the call has its return type. It appears in modules after
//! `LowerTE`, which `RemoveStandaloneReshapes` rewrites.

use super::{relations, Ctx, Step};
use relay_ir::{Type, TypeKind};

relations! {
    /// `CallLoweredRel`.
    "CallLoweredRel" => call_lowered_rel;
}

fn call_lowered_rel(ctx: &mut Ctx) -> Step {
    // TVM returns false (waits) until the callee is a function type and the
    // arguments a tuple type.
    let TypeKind::Func(func) = ctx.ty(0).kind() else {
        return Ok(false);
    };
    if !matches!(ctx.ty(1).kind(), TypeKind::Tuple(_)) {
        return Ok(false);
    }
    let (params, ret) = (func.params.clone(), func.ret.clone());
    ctx.assign(1, Type::tuple(params));
    ctx.assign(2, ret);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use relay_ir::Type;

    #[test]
    fn a_lowered_call_has_the_function_return_type() {
        let func = Type::func(vec![t(&[2, 3], "float32")], t(&[6], "float32"), vec![]);
        assert_eq!(
            solve_out("call_lowered", &[func, tup(&[t(&[2, 3], "float32")])], &[]),
            t(&[6], "float32")
        );
    }
}
