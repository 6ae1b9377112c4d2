//! Relations of the compiler-internal call forms: the VM dialect
//! (`src/relay/op/vm/vm.cc`: `InvokeTVMOpRel`, `ReshapeTensorRel`),
//! `call_lowered` (`src/relay/op/call/call.cc`: `CallLoweredRel`) and the
//! parser's `parser.MetaRef` placeholder (`MetaRefRel`).
//!
//! These ops appear in IR that TVM's lowering produces (and prints); the
//! relations let such IR be checked again.

use super::{check, display, error, relations, Ctx, Step};
use crate::relation_contract::RelationError;
use relay_ir::{FuncType, Type, TypeKind};

relations! {
    /// `InvokeTVMOpRel` (`vm.invoke_tvm_op(op, ins, outs)`).
    "InvokeTVMOp" => invoke_tvm_op_rel;
    /// `ReshapeTensorRel` (`vm.reshape_tensor(data, shape)`).
    "ReshapeTensor" => reshape_tensor_rel;
    /// `CallLoweredRel` (`call_lowered(func, args)`).
    "CallLoweredRel" => call_lowered_rel;
    /// `MetaRefRel` (`parser.MetaRef`): always an error.
    "MetaRef" => meta_ref_rel;
}

/// The function type of slot `i`, `None` to wait while it is incomplete;
/// `message` is TVM's check for any other type.
fn func_or_wait<'c>(
    ctx: &'c Ctx,
    i: usize,
    message: &str,
) -> Result<Option<&'c FuncType>, RelationError> {
    match ctx.ty(i).kind() {
        TypeKind::Func(func) => Ok(Some(func)),
        TypeKind::Incomplete(_) => Ok(None),
        _ => Err(RelationError::at_input(message.to_string(), i)),
    }
}

/// The tuple fields of slot `i`, `None` to wait while it is incomplete;
/// `message` is TVM's check for any other type.
fn tuple_or_wait(ctx: &Ctx, i: usize, message: &str) -> Result<Option<Vec<Type>>, RelationError> {
    match ctx.ty(i).kind() {
        TypeKind::Tuple(fields) => Ok(Some(fields.clone())),
        TypeKind::Incomplete(_) => Ok(None),
        _ => Err(RelationError::at_input(message.to_string(), i)),
    }
}

/// The inputs tuple has the function's parameter types; the outputs tuple
/// holds its result (a tensor result as a one-field tuple); the call itself
/// is `()`.
fn invoke_tvm_op_rel(ctx: &mut Ctx) -> Step {
    let Some(func) = func_or_wait(
        ctx,
        0,
        "Check failed: (func_type != nullptr) is false: input must be operator with known type",
    )?
    else {
        return Ok(false);
    };
    let func = func.clone();
    let inputs = tuple_or_wait(
        ctx,
        1,
        "Check failed: (input_type != nullptr) is false: internal invariant violated: invoke_tvm_op inputs must be a tuple",
    )?;
    let outputs = tuple_or_wait(
        ctx,
        2,
        "Check failed: (output_type != nullptr) is false: internal invariant violated: invoke_tvm_op outputs must be a tuple",
    )?;
    if inputs.is_none() || outputs.is_none() {
        return Ok(false);
    }
    let expected_outputs = match func.ret.kind() {
        TypeKind::Tensor(_) => Type::tuple(vec![func.ret.clone()]),
        TypeKind::Tuple(_) => func.ret.clone(),
        // A result not inferred yet: TVM's check would fail on it only
        // because its solver visited this relation early.
        TypeKind::Incomplete(_) => return Ok(false),
        _ => {
            let types: Vec<String> = ctx.types.iter().map(display::ty).collect();
            return error(format!(
                "Check failed: (func_type->ret_type.as<TupleTypeNode>()) is false: expecting function result to be tuple type. Types:\n[{}]",
                types.join(", ")
            ));
        }
    };
    ctx.assign(1, Type::tuple(func.params.clone()));
    ctx.assign(2, expected_outputs);
    ctx.assign(3, Type::unit());
    Ok(true)
}

/// A tensor of the `newshape` attribute with the data's dtype.
fn reshape_tensor_rel(ctx: &mut Ctx) -> Step {
    check(ctx.attrs.is_some(), || {
        "Check failed: reshape_attrs is false: ".to_string()
    })?;
    let Some(data) =
        ctx.tensor_or_wait_exact(0, "Check failed: (tt) is false: input must be tensor type")?
    else {
        return Ok(false);
    };
    let Some(newshape) = ctx.attrs.dims("newshape")? else {
        return Err(
            RelationError::new("the attribute `newshape` is null").about_attribute("newshape")
        );
    };
    ctx.assign(2, Type::tensor(newshape, data.dtype));
    Ok(true)
}

/// The argument tuple has the lowered function's parameter types and the
/// call its result type. Waits (forever, as TVM's) on a callee that is not
/// a function or arguments that are not a tuple.
fn call_lowered_rel(ctx: &mut Ctx) -> Step {
    if ctx.types.len() != 3 {
        return Ok(false);
    }
    let TypeKind::Func(func) = ctx.ty(0).kind() else {
        return Ok(false);
    };
    if !matches!(ctx.ty(1).kind(), TypeKind::Tuple(_)) {
        return Ok(false);
    }
    let func = func.clone();
    ctx.assign(1, Type::tuple(func.params));
    ctx.assign(2, func.ret);
    Ok(true)
}

/// TVM's parser expands every `parser.MetaRef` call into the metadata
/// object it names before type checking; one left in the IR is an error.
fn meta_ref_rel(_ctx: &mut Ctx) -> Step {
    error("need to expand before type checking")
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::test_util::*;
    use relay_ir::{FuncType, Type, TypeKind};

    fn func(params: &[Type], ret: Type) -> Type {
        Type::new(TypeKind::Func(Box::new(FuncType {
            params: params.to_vec(),
            ret,
            type_params: Vec::new(),
        })))
    }

    #[test]
    fn invoke_tvm_op() {
        let x = t(&[2, 3], "float32");
        let f = func(&[x.clone(), x.clone()], x.clone());
        // The inputs and outputs are tuple expressions: tuple types whose
        // fields may still be unknown.
        let assigns = solved(
            "vm.invoke_tvm_op",
            &[
                f,
                tup(&[x.clone(), Type::incomplete()]),
                tup(&[Type::incomplete()]),
            ],
            &[],
        );
        assert_eq!(
            assigns,
            vec![
                (1, tup(&[x.clone(), x.clone()])),
                (2, tup(&[x.clone()])),
                (3, Type::unit())
            ]
        );
        // A tuple result is the outputs tuple itself.
        let f = func(&[x.clone()], tup(&[x.clone(), x.clone()]));
        assert_eq!(
            solved(
                "vm.invoke_tvm_op",
                &[f, tup(&[x.clone()]), tup(&[x.clone(), x.clone()])],
                &[]
            )[1],
            (2, tup(&[x.clone(), x.clone()]))
        );
        assert!(waits(
            "vm.invoke_tvm_op",
            &[Type::incomplete(), tup(&[]), tup(&[])],
            &[]
        ));
        assert_eq!(
            fails("vm.invoke_tvm_op", &[x.clone(), tup(&[]), tup(&[])], &[]),
            "Check failed: (func_type != nullptr) is false: input must be operator with known type"
        );
        assert_eq!(
            fails("vm.invoke_tvm_op", &[func(&[], x.clone()), x.clone(), tup(&[])], &[]),
            "Check failed: (input_type != nullptr) is false: internal invariant violated: invoke_tvm_op inputs must be a tuple"
        );
        let message = fails(
            "vm.invoke_tvm_op",
            &[
                func(&[], Type::new(TypeKind::Ref(x.clone()))),
                tup(&[]),
                tup(&[]),
            ],
            &[],
        );
        assert!(message.starts_with("Check failed: (func_type->ret_type.as<TupleTypeNode>()) is false: expecting function result to be tuple type. Types:\n"), "{message}");
    }

    #[test]
    fn reshape_tensor() {
        assert_eq!(
            solve_out(
                "vm.reshape_tensor",
                &[t(&[2, 3], "float16"), t(&[1], "int64")],
                &[("newshape", ints(&[6]))]
            ),
            t(&[6], "float16")
        );
        assert!(waits(
            "vm.reshape_tensor",
            &[Type::incomplete(), t(&[1], "int64")],
            &[("newshape", ints(&[6]))]
        ));
        assert_eq!(
            fails(
                "vm.reshape_tensor",
                &[tup(&[]), t(&[1], "int64")],
                &[("newshape", ints(&[6]))]
            ),
            "Check failed: (tt) is false: input must be tensor type"
        );
    }

    #[test]
    fn call_lowered() {
        let x = t(&[4], "int32");
        let f = func(&[x.clone(), x.clone()], t(&[], "bool"));
        assert_eq!(
            solved(
                "call_lowered",
                &[f.clone(), tup(&[x.clone(), Type::incomplete()])],
                &[]
            ),
            vec![(1, tup(&[x.clone(), x.clone()])), (2, t(&[], "bool"))]
        );
        // A callee or arguments of another kind never resolve.
        assert!(waits("call_lowered", &[f, Type::incomplete()], &[]));
        assert!(waits("call_lowered", &[x.clone(), tup(&[])], &[]));
    }

    #[test]
    fn meta_ref() {
        assert_eq!(
            fails(
                "parser.MetaRef",
                &[],
                &[
                    ("node_type_key", s("relay.Constant")),
                    ("node_index", int(0))
                ]
            ),
            "need to expand before type checking"
        );
    }
}
