//! The loss operators with Relay computes: `nn.cross_entropy`
//! (`-sum(log(x) · y) / N`) and `nn.cross_entropy_with_logits`
//! (`-sum(x · y) / N`), `N` the batch (the first extent), composed from the
//! elementwise and reduction kernels in that order (`-s` is `0 - s`, `N`
//! cast to the data type), and `nn.nll_loss` (TOPI's: per target
//! `(0 - p[b, c, …]) · w[c]`, 0 for `ignore_index`, then the sum, or the
//! sum divided by the sum of the weights used, or none). The sums
//! accumulate in row-major order, TVM's reduce schedule too, so results
//! agree unless LLVM vectorises the sum.

use super::elemwise::{map_binary, map_unary};
use super::num::{on_cols, Num};
use super::reduce::reduce_tensor;
use super::tensor::{decode, dims, encode, strides, Col};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.cross_entropy" | "nn.cross_entropy_with_logits" => cross_entropy,
        "nn.nll_loss" => nll_loss,
        _ => return None,
    })
}

fn cross_entropy(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let (x, y) = (arg_tensor(args, 0, call)?, arg_tensor(args, 1, call)?);
    if x.ndim() == 0 || !x.dtype.is_float() {
        return unsupported(format!(
            "{}: float predictions with a batch axis expected",
            call.op
        ));
    }
    let terms = if call.op == "nn.cross_entropy" {
        map_binary(&map_unary(x, "log")?, y, "multiply")?
    } else {
        map_binary(x, y, "multiply")?
    };
    let axes: Vec<usize> = (0..terms.ndim()).collect();
    let total = map_unary(&reduce_tensor(&terms, "sum", &axes, false)?, "negative")?;
    let batch = TensorData::from_f64s(x.dtype, Vec::new(), &[x.shape[0] as f64])
        .map_err(|e| EvalError::Unsupported(e.message))?;
    map_binary(&total, &batch, "divide").map(Value::tensor)
}

fn nll_loss(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 3, call)?;
    let p = arg_tensor(args, 0, call)?;
    let (targets, weights) = (arg_tensor(args, 1, call)?, arg_tensor(args, 2, call)?);
    let Col::Int(t) = decode(targets)? else {
        return unsupported("nn.nll_loss: integer targets expected");
    };
    let ignore = i128::from(call.int_or("ignore_index", -100));
    let reduction = call.str("reduction").unwrap_or("mean");
    let dt = p.dtype;
    if !dt.is_float() || weights.dtype != dt || p.ndim() < 2 || targets.ndim() + 1 != p.ndim() {
        return unsupported("nn.nll_loss: float predictions [N, C, …] and targets [N, …] expected");
    }
    let pd = dims(&p.shape);
    let classes = pd[1];
    let td = dims(&targets.shape);
    let (ps, ts) = (strides(&pd), strides(&td));
    // The flat prediction index of each target (None where ignored).
    let mut picks = Vec::with_capacity(t.len());
    for (flat, &c) in t.iter().enumerate() {
        if c == ignore {
            picks.push(None);
            continue;
        }
        let Some(c) = usize::try_from(c)
            .ok()
            .filter(|&c| c < classes && c < weights.num_elements() as usize)
        else {
            return unsupported("nn.nll_loss: a target outside the classes");
        };
        let mut at = c * ps[1];
        for (k, &st) in ts.iter().enumerate() {
            let i = (flat / st) % td[k];
            at += i * if k == 0 { ps[0] } else { ps[k + 1] };
        }
        picks.push(Some((at, c)));
    }
    fn run<T: Num>(
        p: &[T],
        w: &[T],
        picks: &[Option<(usize, usize)>],
        dt: DataType,
        reduction: &str,
    ) -> Vec<T> {
        let loss: Vec<T> = picks
            .iter()
            .map(|pick| {
                pick.map_or_else(T::default, |(at, c)| {
                    ((T::default() - p[at]).fix(dt) * w[c]).fix(dt)
                })
            })
            .collect();
        let sum = |v: &[T]| v.iter().fold(T::default(), |acc, &x| (acc + x).fix(dt));
        match reduction {
            "none" => loss,
            "sum" => vec![sum(&loss)],
            _ => {
                let used: Vec<T> = picks
                    .iter()
                    .map(|pick| pick.map_or_else(T::default, |(_, c)| w[c]))
                    .collect();
                vec![sum(&loss).div(sum(&used), dt).unwrap_or_default()]
            }
        }
    }
    let out = on_cols!(
        decode(p)?,
        decode(weights)?,
        (pv, wv) => run(&pv, &wv, &picks, dt, reduction),
        unsupported("nn.nll_loss: weights of another type")
    );
    let shape = if reduction == "none" {
        targets.shape.clone()
    } else {
        Vec::new()
    };
    Ok(Value::tensor(encode(&out, dt, shape)?))
}
