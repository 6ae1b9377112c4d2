//! The gradients of the matrix products `nn.matmul` and `nn.batch_matmul`:
//! one product per argument, chosen by the call's `transpose_a` /
//! `transpose_b` so that no explicit transpose is needed (but where the
//! Python keeps the "NT" form), each summed back to the argument's shape.

use super::{attr_bool, collapse_sum_like, dense_grad, transpose};
use relay_ir::build::op_call_with;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Call, Expr};

/// Python's `_nn.matmul(a, b, transpose_a=…, transpose_b=…)` with the
/// default `units=None`, `out_dtype=""`: the "NT" case is built as
/// `nn.dense`, as the wrapper does.
fn matmul(a: &Expr, b: &Expr, transpose_a: bool, transpose_b: bool) -> Expr {
    if !transpose_a && transpose_b {
        return op_call_with(
            "nn.dense",
            vec![a.clone(), b.clone()],
            &[
                ("units", AttrValue::Null),
                ("out_dtype", AttrValue::DataType(DataType::void())),
            ],
        );
    }
    op_call_with(
        "nn.matmul",
        vec![a.clone(), b.clone()],
        &[
            ("units", AttrValue::Null),
            ("out_dtype", AttrValue::DataType(DataType::void())),
            ("transpose_a", AttrValue::Bool(transpose_a)),
            ("transpose_b", AttrValue::Bool(transpose_b)),
        ],
    )
}

fn transposes(call: &Call) -> Result<(bool, bool), Diagnostic> {
    Ok((
        attr_bool(call, "transpose_a")?,
        attr_bool(call, "transpose_b")?,
    ))
}

pub(super) fn matmul_grad(orig: &Expr, call: &Call, grad: &Expr) -> Result<Vec<Expr>, Diagnostic> {
    let (a, b) = (super::arg(call, 0)?, super::arg(call, 1)?);
    let (grad_a, grad_b) = match transposes(call)? {
        (true, true) => (matmul(b, grad, true, true), matmul(grad, a, true, true)),
        (true, false) => (matmul(b, grad, false, true), matmul(a, grad, false, false)),
        // The Python reuses the gradient of `nn.dense` here.
        (false, true) => return dense_grad(orig, call, grad),
        (false, false) => (matmul(grad, b, false, true), matmul(a, grad, true, false)),
    };
    Ok(vec![
        collapse_sum_like(grad_a, a),
        collapse_sum_like(grad_b, b),
    ])
}

/// Python's `_nn.batch_matmul(a, b, transpose_a=…, transpose_b=…)` with
/// `out_dtype=""`.
fn batch_matmul(a: Expr, b: Expr, transpose_a: bool, transpose_b: bool) -> Expr {
    op_call_with(
        "nn.batch_matmul",
        vec![a, b],
        &[
            ("out_dtype", AttrValue::DataType(DataType::void())),
            ("transpose_a", AttrValue::Bool(transpose_a)),
            ("transpose_b", AttrValue::Bool(transpose_b)),
        ],
    )
}

pub(super) fn batch_matmul_grad(
    _orig: &Expr,
    call: &Call,
    grad: &Expr,
) -> Result<Vec<Expr>, Diagnostic> {
    let (lhs, rhs) = (super::arg(call, 0)?, super::arg(call, 1)?);
    let g = || grad.clone();
    let swap_last = [0, 2, 1];
    let (grad_lhs, grad_rhs) = match transposes(call)? {
        (true, true) => (
            batch_matmul(rhs.clone(), g(), true, true),
            batch_matmul(g(), lhs.clone(), true, true),
        ),
        (true, false) => (
            batch_matmul(rhs.clone(), g(), false, true),
            batch_matmul(lhs.clone(), g(), false, false),
        ),
        // The Python keeps the "NT" form, transposing explicitly.
        (false, true) => (
            batch_matmul(g(), transpose(rhs.clone(), Some(&swap_last)), false, true),
            batch_matmul(
                transpose(g(), Some(&swap_last)),
                transpose(lhs.clone(), Some(&swap_last)),
                false,
                true,
            ),
        ),
        (false, false) => (
            batch_matmul(g(), rhs.clone(), false, true),
            batch_matmul(lhs.clone(), g(), true, false),
        ),
    };
    Ok(vec![
        collapse_sum_like(grad_lhs, lhs),
        collapse_sum_like(grad_rhs, rhs),
    ])
}
