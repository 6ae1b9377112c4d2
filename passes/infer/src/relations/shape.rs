//! Dimension arithmetic with the dtype rules of TVM's `IntImm` arithmetic.
//!
//! TVM builds output shapes with `PrimExpr` operators (`src/tir/op/op.cc`):
//! both operands are first brought to one dtype (`BinaryOpMatchTypes`: the
//! narrower integer is cast to the wider one, so `int32 + int64` is `int64`),
//! then constants are folded (`arith::TryConstFold`). We follow that exactly
//! for known sizes:
//!
//! * a dimension keeps its dtype when it is copied;
//! * a C++ `int` (a literal in TVM's code, an `int` attribute such as
//!   `groups`, `Integer(x)`, `IndexExpr(x)`) is an `int32` immediate, see
//!   [`c_int`]; `x + 1`, `x * 2` and friends therefore keep `x`'s dtype
//!   (`int32` or `int64`), as TVM's `make_const(a.dtype(), b)` overloads do;
//! * the result of an arithmetic operation on two known sizes has the
//!   promoted dtype and wraps like TVM's `GetFoldResultInt64Repr`.
//!
//! Unknown sizes are `Dim::Any` (`?`, TVM's `tir::Any`, dtype `int32`),
//! `Dim::Meta` (a symbolic size from the metadata section: a `tir.Var`,
//! `tir.SizeVar` or any other expression; its dtype is read from the object
//! graph, `int32` if absent) and `Dim::Expr` (an expression computed here).
//! TVM keeps `Any` where a relation copies a dimension or checks
//! `as<AnyNode>()`, and folds the identities `x + 0`, `x - 0`, `x * 1`,
//! `x / 1`, `0 * x`, `x % 1` by returning an operand itself; we do the same,
//! so a copied or identity-folded dimension is the same object. Where TVM
//! builds a new symbolic expression (`n + 2`, `n * 16`, a cast of an `int64`
//! variable to `int32`) we build the same `Dim::Expr` node, printed as
//! `meta[tir.Add][…]`. Arithmetic on `?` stays `?`.
//!
//! Identity matters as in TVM (see [`Dim`]): a folded result is a new
//! immediate, an operand returned by an identity is the operand's object.

use super::RelationError;
use relay_ir::dtype::DataType;
use relay_ir::{Dim, DimExpr, DimOp};

pub use relay_ir::dim::{
    c_int, const_int, dim_dtype, int_of, is_any, is_int_imm, normalize, promote, wrap, I32, I64,
};

/// `cast(dtype, dim)`: the same object when the dtype is already right; a
/// new immediate for an immediate; a `tir.Cast` of a symbolic size.
pub fn cast(dtype: DataType, dim: &Dim) -> Dim {
    if dim_dtype(dim) == dtype && !matches!(dim, Dim::Any) {
        return dim.clone();
    }
    let dim = normalize(dim);
    match dim {
        Dim::Int { value, .. } => int_of(value, dtype),
        Dim::Any => Dim::Any,
        Dim::Meta(_) | Dim::Expr(_) if dim_dtype(&dim) == dtype => dim,
        Dim::Meta(_) | Dim::Expr(_) => Dim::expr(DimExpr::Cast { value: dim, dtype }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    /// `floordiv` (`indexdiv`).
    FloorDiv,
    /// `floormod` (`indexmod`).
    FloorMod,
    /// `div` (C++'s `/` on `PrimExpr`), truncating.
    TruncDiv,
}

fn divide_by_zero() -> RelationError {
    RelationError::new("Divide by zero")
}

fn floor_div(x: i64, y: i64) -> i64 {
    let q = x.wrapping_div(y);
    if x.wrapping_rem(y) != 0 && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}

fn binary(op: Op, a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
    binary_with(op, a, b, AnyRule::StaysAny)
}

/// What arithmetic on `?` gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AnyRule {
    /// `?` (relations that test for `?` before computing).
    StaysAny,
    /// The expression around `tir.Any`, as TVM builds it in relations that
    /// never test for `?`.
    Expression,
}

fn binary_with(op: Op, a: &Dim, b: &Dim, any: AnyRule) -> Result<Dim, RelationError> {
    // Two immediates, the common case: folded without copying either.
    if let (Some((x, dx)), Some((y, dy))) = (a.as_int_imm(), b.as_int_imm()) {
        let dtype = promote(dx, dy);
        let as_dtype = |v: i64, own: DataType| if own == dtype { v } else { wrap(v, dtype) };
        return fold(op, as_dtype(x, dx), as_dtype(y, dy), dtype);
    }
    let (a, b) = (normalize(a), normalize(b));
    let dtype = promote(dim_dtype(&a), dim_dtype(&b));
    // `BinaryOpMatchTypes`: an operand of another dtype is cast first.
    let (a, b) = (cast(dtype, &a), cast(dtype, &b));
    // `TryConstFold`: two immediates fold into a new one; the identities
    // return one operand itself (the same object).
    Ok(match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => return fold(op, x, y, dtype),
        (Some(x), None) => match op {
            Op::Add if x == 0 => b,
            Op::Mul if x == 1 => b,
            Op::Mul if x == 0 => a,
            Op::FloorDiv | Op::FloorMod | Op::TruncDiv if x == 0 => a,
            _ => symbolic(op, a, b, dtype, any),
        },
        (None, Some(y)) => match op {
            Op::Add | Op::Sub if y == 0 => a,
            Op::Mul if y == 1 => a,
            Op::Mul if y == 0 => b,
            Op::FloorDiv | Op::TruncDiv if y == 1 => a,
            Op::FloorMod if y == 1 => int_of(0, dtype),
            Op::FloorDiv | Op::FloorMod | Op::TruncDiv if y == 0 => return Err(divide_by_zero()),
            _ => symbolic(op, a, b, dtype, any),
        },
        (None, None) => symbolic(op, a, b, dtype, any),
    })
}

/// `TryConstFold` of two immediates of `dtype`: a new immediate.
fn fold(op: Op, x: i64, y: i64, dtype: DataType) -> Result<Dim, RelationError> {
    let value = match op {
        Op::Add => x.wrapping_add(y),
        Op::Sub => x.wrapping_sub(y),
        Op::Mul => x.wrapping_mul(y),
        Op::FloorDiv | Op::FloorMod | Op::TruncDiv if y == 0 => return Err(divide_by_zero()),
        Op::FloorDiv => floor_div(x, y),
        Op::FloorMod => x.wrapping_sub(y.wrapping_mul(floor_div(x, y))),
        Op::TruncDiv => x.wrapping_div(y),
    };
    Ok(int_of(value, dtype))
}

/// The expression TVM builds when nothing folds. With `?` as an operand
/// the result stays `?` under [`AnyRule::StaysAny`] (relations test for `?`
/// before computing; keeping it avoids expressions around `tir.Any`).
fn symbolic(op: Op, a: Dim, b: Dim, dtype: DataType, any: AnyRule) -> Dim {
    if any == AnyRule::StaysAny && (is_any(&a) || is_any(&b)) {
        return Dim::Any;
    }
    let op = match op {
        Op::Add => DimOp::Add,
        Op::Sub => DimOp::Sub,
        Op::Mul => DimOp::Mul,
        Op::FloorDiv => DimOp::FloorDiv,
        Op::FloorMod => DimOp::FloorMod,
        Op::TruncDiv => DimOp::Div,
    };
    Dim::expr(DimExpr::Binary { op, a, b, dtype })
}

/// `a + b`.
pub fn add(a: &Dim, b: &Dim) -> Dim {
    binary(Op::Add, a, b).unwrap_or(Dim::Any)
}

/// `a - b`.
pub fn sub(a: &Dim, b: &Dim) -> Dim {
    binary(Op::Sub, a, b).unwrap_or(Dim::Any)
}

/// `a * b`.
pub fn mul(a: &Dim, b: &Dim) -> Dim {
    binary(Op::Mul, a, b).unwrap_or(Dim::Any)
}

/// `indexdiv(a, b)` (`floordiv`); dividing by a zero immediate is TVM's
/// "Divide by zero".
pub fn floordiv(a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
    binary(Op::FloorDiv, a, b)
}

/// `indexmod(a, b)` (`floormod`).
pub fn floormod(a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
    binary(Op::FloorMod, a, b)
}

/// `a / b` on `PrimExpr`s (`div`, truncating for integers).
pub fn truncdiv(a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
    binary(Op::TruncDiv, a, b)
}

/// TVM's size arithmetic without the `?` shortcut, for relations that
/// compute with sizes without testing for `?` first: `? + 1` is the
/// expression `tir.Add(tir.Any, 1)`, as TVM builds it.
pub mod keeping_any {
    use super::{binary_with, AnyRule, Op, RelationError};
    use relay_ir::Dim;

    /// `a + b`.
    pub fn add(a: &Dim, b: &Dim) -> Dim {
        binary_with(Op::Add, a, b, AnyRule::Expression).unwrap_or(Dim::Any)
    }

    /// `a - b`.
    pub fn sub(a: &Dim, b: &Dim) -> Dim {
        binary_with(Op::Sub, a, b, AnyRule::Expression).unwrap_or(Dim::Any)
    }

    /// `a * b`.
    pub fn mul(a: &Dim, b: &Dim) -> Dim {
        binary_with(Op::Mul, a, b, AnyRule::Expression).unwrap_or(Dim::Any)
    }

    /// `indexdiv(a, b)`.
    pub fn floordiv(a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
        binary_with(Op::FloorDiv, a, b, AnyRule::Expression)
    }

    /// `indexmod(a, b)`.
    pub fn floormod(a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
        binary_with(Op::FloorMod, a, b, AnyRule::Expression)
    }
}

/// `a != b` (`tir::NE`, dtype `bool`): folded to a `bool` immediate when
/// both are immediates, else the comparison node.
pub fn not_equal(a: &Dim, b: &Dim) -> Dim {
    let (a, b) = (normalize(a), normalize(b));
    let dtype = promote(dim_dtype(&a), dim_dtype(&b));
    let (a, b) = (cast(dtype, &a), cast(dtype, &b));
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => int_of(i64::from(x != y), DataType::bool()),
        _ => Dim::expr(DimExpr::Binary {
            op: DimOp::Ne,
            a,
            b,
            dtype: DataType::bool(),
        }),
    }
}

/// `tvm::if_then_else(cond, then_value, else_value)`: the branch itself
/// when the condition is an immediate, else a call of the builtin; the two
/// values are first brought to one dtype.
pub fn if_then_else(cond: &Dim, then_value: &Dim, else_value: &Dim) -> Dim {
    let dtype = promote(dim_dtype(then_value), dim_dtype(else_value));
    let (then_value, else_value) = (cast(dtype, then_value), cast(dtype, else_value));
    match normalize(cond).as_int() {
        Some(0) => else_value,
        Some(_) => then_value,
        None => Dim::expr(DimExpr::IfThenElse {
            cond: cond.clone(),
            then_value,
            else_value,
            dtype,
        }),
    }
}

/// `shapediv(a, b)` = `ceildiv(a, b)` = `floordiv(a + b - 1, b)`, folded
/// as TVM folds it (a symbolic `a` gives `floordiv(a + b - 1, b)` even for
/// `b` = 1, which only drops the division).
pub fn ceildiv(a: &Dim, b: &Dim) -> Result<Dim, RelationError> {
    let sum = add(a, b);
    let numerator = sub(&sum, &int_of(1, dim_dtype(&sum)));
    floordiv(&numerator, b)
}

/// `max(a, b)` on two sizes: folded on immediates, `a` when both are the
/// same object, a `tir.Max` otherwise.
pub fn max(a: &Dim, b: &Dim) -> Dim {
    let (a, b) = (normalize(a), normalize(b));
    let dtype = promote(dim_dtype(&a), dim_dtype(&b));
    let (a, b) = (cast(dtype, &a), cast(dtype, &b));
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => int_of(x.max(y), dtype),
        _ if a.same_as(&b) => a,
        _ if is_any(&a) || is_any(&b) => Dim::Any,
        _ => Dim::expr(DimExpr::Binary {
            op: DimOp::Max,
            a,
            b,
            dtype,
        }),
    }
}

/// `EqualCheck` of `type_relations.cc`: `lhs - rhs` simplifies to zero.
/// Two symbolic sizes are equal when they are the same variable or the
/// same expression over the same variables.
pub fn equal_check(a: &Dim, b: &Dim) -> bool {
    if let (Dim::Int { value: x, .. }, Dim::Int { value: y, .. }) = (a, b) {
        return x == y;
    }
    let (a, b) = (normalize(a), normalize(b));
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => x == y,
        _ => matches!(&a, Dim::Meta(_) | Dim::Expr(_)) && a == b,
    }
}

/// `EqualConstInt(dim, value)`.
pub fn equal_const_int(dim: &Dim, value: i64) -> bool {
    const_int(dim) == Some(value)
}

/// The type reporter's `AssertEQ`: false only when `a - b` is a nonzero
/// constant.
pub fn assert_eq(a: &Dim, b: &Dim) -> bool {
    match (const_int(a), const_int(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// The type reporter's `Assert(a <= b)`: false only when both are constants
/// and the comparison is false.
pub fn assert_le(a: &Dim, b: &Dim) -> bool {
    match (const_int(a), const_int(b)) {
        (Some(x), Some(y)) => x <= y,
        _ => true,
    }
}

/// `Assert(a < b)`.
pub fn assert_lt(a: &Dim, b: &Dim) -> bool {
    match (const_int(a), const_int(b)) {
        (Some(x), Some(y)) => x < y,
        _ => true,
    }
}

/// TVM's `std::nearbyint` under the default rounding mode (ties to even).
pub fn round_half_even(value: f64) -> f64 {
    value.round_ties_even()
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::*;

    #[test]
    fn promotion_and_folding() {
        let a = Dim::int64(7);
        let b = c_int(2);
        assert_eq!(add(&a, &b), Dim::int64(9));
        assert_eq!(floordiv(&c_int(-7), &c_int(2)).unwrap(), c_int(-4));
        assert_eq!(truncdiv(&c_int(-7), &c_int(2)).unwrap(), c_int(-3));
        assert_eq!(floormod(&c_int(-7), &c_int(2)).unwrap(), c_int(1));
        assert_eq!(floordiv(&c_int(7), &c_int(-2)).unwrap(), c_int(-4));
        assert_eq!(ceildiv(&c_int(10), &c_int(4)).unwrap(), c_int(3));
        assert!(floordiv(&c_int(1), &c_int(0)).is_err());
    }

    #[test]
    fn identities_return_the_operand_object() {
        // TVM's `TryConstFold` folds two immediates into a new object, and
        // with one symbolic operand returns an operand itself for `n * 1`,
        // `0 + n`, `0 * n`; a cast to the dtype a size already has is the
        // size itself.
        let x = c_int(7);
        let folded = add(&x, &c_int(0));
        assert_eq!(folded, x);
        assert!(!folded.same_as(&x));
        let n = symbolic_var("n");
        assert!(mul(&n, &c_int(1)).same_as(&n));
        assert!(add(&c_int(0), &n).same_as(&n));
        let zero = c_int(0);
        assert!(mul(&zero, &n).same_as(&zero));
        assert!(cast(I32, &x).same_as(&x));
        assert!(!cast(I64, &x).same_as(&x));
        // An equal value made anew is another object.
        assert_eq!(c_int(7), x);
        assert!(!c_int(7).same_as(&x));
    }

    #[test]
    fn symbolic_sizes_build_expressions() {
        use relay_ir::{DimExpr, DimOp};
        let n = symbolic_var("n");
        let doubled = mul(&n, &c_int(2));
        let Dim::Expr(e) = &doubled else {
            panic!("an expression: {doubled:?}");
        };
        assert!(matches!(
            &**e,
            DimExpr::Binary { op: DimOp::Mul, a, b, dtype }
                if a.same_as(&n) && b.as_int() == Some(2) && *dtype == I32
        ));
        // Structurally equal expressions are equal, not the same object.
        let again = mul(&n, &c_int(2));
        assert_eq!(again, doubled);
        assert!(!again.same_as(&doubled));
        assert!(equal_check(&again, &doubled));
        // `ceildiv(n, 1)` is `floordiv(n + 1 - 1, 1)`: TVM folds only the
        // division.
        let c = ceildiv(&n, &c_int(1)).unwrap();
        assert!(matches!(&c, Dim::Expr(e) if e.type_key() == "tir.Sub"));
        assert_eq!(crate::relations::display::dim(&c), "n + 1 - 1");
        // With `?` the result stays `?`.
        assert_eq!(mul(&Dim::Any, &n), Dim::Any);
        // An int64 immediate promotes the variable with a cast.
        let wide = add(&n, &Dim::int64(1));
        assert!(matches!(&wide, Dim::Expr(e) if e.dtype() == I64));
        assert_eq!(
            crate::relations::display::dim(&wide),
            "T.Cast(\"int64\", n) + 1i64"
        );
    }

    /// A `tir.SizeVar` named `name` in a graph of its own.
    fn symbolic_var(name: &str) -> Dim {
        use relay_ir::metadata::{ObjectGraphBuilder, Value};
        let mut b = ObjectGraphBuilder::new();
        let name = b.string(name);
        let prim = b.prim_type(I32);
        let var = b.object(
            "tir.SizeVar",
            vec![
                ("dtype", Value::DType(I32)),
                ("name", Value::Obj(name)),
                ("type_annotation", Value::Obj(prim)),
                ("span", Value::Null),
            ],
        );
        let graph = b.build(var);
        let index = graph.root;
        Dim::Meta(relay_ir::MetaObject {
            graph: std::sync::Arc::new(graph),
            index,
        })
    }

    #[test]
    fn symbolic_identities() {
        assert_eq!(add(&Dim::Any, &c_int(0)), Dim::Any);
        assert_eq!(mul(&Dim::Any, &c_int(0)), c_int(0));
        assert_eq!(floordiv(&Dim::Any, &c_int(1)).unwrap(), Dim::Any);
        assert_eq!(mul(&Dim::int64(3), &c_int(2)), Dim::int64(6));
        assert_eq!(wrap(1 << 31, I32), -(1 << 31));
        assert_eq!(cast(I32, &Dim::int64(5)), c_int(5));
    }
}
