//! Types and shapes written in Relay syntax for error messages.
//!
//! Messages quote types as the Relay text printer writes them:
//! `Tensor[(1, 2i64, ?), float32]`, a rank-0 tensor as its dtype, tuples as
//! `(A, B)` (and `(A,)`). A symbolic size is written as its variable's name
//! (never a `meta[…]` reference). An incomplete type is `_`.

use crate::dim as shape;
use crate::dtype::DataType;
use crate::{Dim, DimExpr, DimOp, Type, TypeKind};

/// One dimension: `3`, `3i64`, `3i16`, `?`, or a symbolic size's name.
pub fn dim(d: &Dim) -> String {
    match shape::normalize(d) {
        Dim::Int { value, dtype, .. } => int_imm(value, dtype),
        Dim::Any => "?".to_string(),
        Dim::Meta(meta) => {
            // A `tir.Var`'s `name` field points at a `runtime.String`.
            let nodes = &meta.graph.nodes;
            nodes
                .get(meta.index)
                .and_then(|node| node.attrs.get("name"))
                .and_then(|index| index.parse::<usize>().ok())
                .and_then(|index| nodes.get(index))
                .and_then(|name| name.repr_str())
                .map(str::to_string)
                .unwrap_or_else(|| "?".to_string())
        }
        Dim::Expr(e) => expr(&e, 0),
    }
}

/// A computed expression in TVM's script notation (`d2 * d3`, `n + 2`,
/// `n // 2`, `T.max(a, b)`), parenthesised where precedence needs it;
/// `outer` is the binding strength of the context.
fn expr(e: &DimExpr, outer: u8) -> String {
    let operand = |d: &Dim, strength: u8| match d {
        Dim::Expr(inner) => expr(inner, strength),
        other => dim(other),
    };
    match e {
        DimExpr::Binary { op, a, b, .. } => {
            let (symbol, strength) = match op {
                DimOp::Add => ("+", 1),
                DimOp::Sub => ("-", 1),
                DimOp::Mul => ("*", 2),
                DimOp::FloorDiv => ("//", 2),
                DimOp::FloorMod => ("%", 2),
                DimOp::Div => return format!("T.Div({}, {})", operand(a, 0), operand(b, 0)),
                DimOp::Max => return format!("T.max({}, {})", operand(a, 0), operand(b, 0)),
                DimOp::Min => return format!("T.min({}, {})", operand(a, 0), operand(b, 0)),
                DimOp::Ne => ("!=", 0),
            };
            // Left-associative: the right operand binds one level tighter.
            let text = format!(
                "{} {symbol} {}",
                operand(a, strength),
                operand(b, strength + 1)
            );
            if strength < outer {
                format!("({text})")
            } else {
                text
            }
        }
        DimExpr::Cast { value, dtype } => {
            format!(
                "T.Cast(\"{}\", {})",
                dtype.to_tvm_string(),
                operand(value, 0)
            )
        }
        DimExpr::IfThenElse {
            cond,
            then_value,
            else_value,
            ..
        } => format!(
            "T.if_then_else({}, {}, {})",
            operand(cond, 0),
            operand(then_value, 0),
            operand(else_value, 0)
        ),
    }
}

/// An integer immediate as TVM's `IntImmToString` writes it.
pub fn int_imm(value: i64, dtype: DataType) -> String {
    if dtype == DataType::INT32 {
        value.to_string()
    } else if dtype == DataType::INT64 {
        format!("{value}i64")
    } else if dtype == DataType::int(16) {
        format!("{value}i16")
    } else if dtype.is_bool() {
        if value != 0 { "True" } else { "False" }.to_string()
    } else {
        value.to_string()
    }
}

/// A shape as an array: `[1, 2, 3]` (TVM's `Array<PrimExpr>` printing).
pub fn shape_array(dims: &[Dim]) -> String {
    let items: Vec<String> = dims.iter().map(dim).collect();
    format!("[{}]", items.join(", "))
}

/// A shape as TVM's `PrettyPrint(Array<PrimExpr>)` writes it: `[1, 2, 3]`.
pub fn shape_list(dims: &[Dim]) -> String {
    shape_array(dims)
}

/// A type in Relay syntax.
pub fn ty(t: &Type) -> String {
    match t.kind() {
        TypeKind::Tensor(tensor) if tensor.shape.is_empty() => tensor.dtype.to_string(),
        TypeKind::Tensor(tensor) => {
            let dims: Vec<String> = tensor.shape.iter().map(dim).collect();
            format!("Tensor[({}), {}]", dims.join(", "), tensor.dtype)
        }
        TypeKind::Tuple(fields) if fields.len() == 1 => format!("({},)", ty(&fields[0])),
        TypeKind::Tuple(fields) => {
            let items: Vec<String> = fields.iter().map(ty).collect();
            format!("({})", items.join(", "))
        }
        TypeKind::Func(func) => {
            let params: Vec<String> = func.params.iter().map(ty).collect();
            let type_params = if func.type_params.is_empty() {
                String::new()
            } else {
                let names: Vec<&str> = func.type_params.iter().map(|v| v.name()).collect();
                format!("[{}]", names.join(", "))
            };
            format!(
                "fn {type_params}({}) -> {}",
                params.join(", "),
                ty(&func.ret)
            )
        }
        TypeKind::Var(var) => var.name().to_string(),
        TypeKind::GlobalVar(var) => var.name().to_string(),
        TypeKind::Call { func, args } => {
            let items: Vec<String> = args.iter().map(ty).collect();
            format!("{}[{}]", ty(func), items.join(", "))
        }
        TypeKind::Ref(inner) => format!("ref({})", ty(inner)),
        TypeKind::Incomplete(_) => "_".to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::*;

    #[test]
    fn relay_syntax() {
        let t = Type::tensor(
            vec![Dim::int32(2), Dim::int64(3), Dim::Any],
            DataType::FLOAT32,
        );
        assert_eq!(ty(&t), "Tensor[(2, 3i64, ?), float32]");
        assert_eq!(ty(&Type::scalar(DataType::bool())), "bool");
        assert_eq!(
            ty(&Type::tuple(vec![t.clone()])),
            "(Tensor[(2, 3i64, ?), float32],)"
        );
        assert_eq!(shape_array(&[Dim::int32(1), Dim::int64(2)]), "[1, 2i64]");
    }
}
