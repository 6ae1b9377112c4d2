//! `einsum` (TOPI's `einsum`): every output element is the sum, over the
//! labels the output lacks, of the product of the operands' elements, the
//! operands multiplied left to right. Explicit (`ij,jk->ik`) and implicit
//! (`ij,jk`: the labels seen once, sorted) outputs; a label repeated in one
//! operand takes its diagonal. Ellipses (`...`) are not evaluated.
//!
//! Integers are exact. Float products and sums round to the type at each
//! step; the reduced labels are walked in order of first appearance, which
//! may differ from the loop order TOPI's einsum builder chooses, so float
//! results may differ from TVM's in the last bits (within `n · ε · Σ|terms|`
//! for `n` terms).

use super::num::Num;
use super::tensor::{decode, dims, encode, for_each_index, strides, Col};
use super::{arg_tensors, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "einsum" => einsum,
        _ => return None,
    })
}

/// The parsed equation: the labels of each operand and of the output.
fn parse(equation: &str, operands: usize) -> Option<(Vec<Vec<char>>, Vec<char>)> {
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    if equation.contains('.') {
        return None;
    }
    let (inputs, output) = match equation.split_once("->") {
        Some((i, o)) => (i.to_string(), Some(o.to_string())),
        None => (equation.clone(), None),
    };
    let inputs: Vec<Vec<char>> = inputs.split(',').map(|s| s.chars().collect()).collect();
    if inputs.len() != operands || inputs.iter().flatten().any(|c| !c.is_ascii_alphabetic()) {
        return None;
    }
    let output: Vec<char> = match output {
        Some(o) => o.chars().collect(),
        None => {
            let mut once: Vec<char> = inputs
                .iter()
                .flatten()
                .copied()
                .filter(|c| inputs.iter().flatten().filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            once
        }
    };
    Some((inputs, output))
}

fn einsum(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let tensors = arg_tensors(args, 0, call)?;
    let equation = call.str("equation").unwrap_or("");
    let Some((inputs, output)) = parse(equation, tensors.len()) else {
        return unsupported(format!("einsum: equation {equation:?}"));
    };
    // The extent of every label, checked across operands.
    let mut labels: Vec<(char, usize)> = Vec::new();
    for (t, ls) in tensors.iter().zip(&inputs) {
        if t.ndim() != ls.len() {
            return unsupported("einsum: an operand's rank differs from its labels");
        }
        for (&l, &d) in ls.iter().zip(&dims(&t.shape)) {
            match labels.iter().find(|(m, _)| *m == l) {
                Some(&(_, e)) if e != d => return unsupported("einsum: a label's extents differ"),
                Some(_) => {}
                None => labels.push((l, d)),
            }
        }
    }
    let extent = |l: char| labels.iter().find(|(m, _)| *m == l).map(|&(_, e)| e);
    let out_dims: Vec<usize> = output
        .iter()
        .map(|&l| extent(l))
        .collect::<Option<_>>()
        .map_or_else(|| unsupported("einsum: an output label no operand has"), Ok)?;
    let reduced: Vec<char> = labels
        .iter()
        .map(|&(l, _)| l)
        .filter(|l| !output.contains(l))
        .collect();
    let red_dims: Vec<usize> = reduced.iter().filter_map(|&l| extent(l)).collect();
    let out_shape: Vec<i64> = out_dims.iter().map(|&d| d as i64).collect();
    call.check_size(&out_shape)?;
    let dt = tensors[0].dtype;
    if tensors.iter().any(|t| t.dtype != dt) {
        return unsupported("einsum: operands of different types");
    }
    // Per operand and label position: the stride of that label's value.
    let plans: Vec<Vec<(char, usize)>> = tensors
        .iter()
        .zip(&inputs)
        .map(|(t, ls)| ls.iter().copied().zip(strides(&dims(&t.shape))).collect())
        .collect();
    let cols: Vec<Col> = tensors
        .iter()
        .map(|t| decode(t))
        .collect::<EvalResult<_>>()?;
    fn run<T: Num>(
        values: &[&Vec<T>],
        plans: &[Vec<(char, usize)>],
        output: &[char],
        reduced: &[char],
        out_dims: &[usize],
        red_dims: &[usize],
        dt: DataType,
    ) -> Vec<T> {
        let mut out = Vec::new();
        let mut value_of = vec![0usize; 128];
        for_each_index(out_dims, |_, oidx| {
            for (&l, &i) in output.iter().zip(oidx) {
                value_of[l as usize] = i;
            }
            // A sum starts from zero; without reduced labels there is no sum.
            let mut acc = T::default();
            let mut bare = None;
            for_each_index(red_dims, |_, ridx| {
                for (&l, &i) in reduced.iter().zip(ridx) {
                    value_of[l as usize] = i;
                }
                let mut product: Option<T> = None;
                for (v, plan) in values.iter().zip(plans) {
                    let at: usize = plan.iter().map(|&(l, st)| value_of[l as usize] * st).sum();
                    product = Some(match product {
                        None => v[at],
                        Some(p) => (p * v[at]).fix(dt),
                    });
                }
                let p = product.unwrap_or_default();
                if reduced.is_empty() {
                    bare = Some(p);
                } else {
                    acc = (acc + p).fix(dt);
                }
            });
            out.push(bare.unwrap_or(acc));
        });
        out
    }
    macro_rules! all_of {
        ($variant:ident) => {{
            let vs: Option<Vec<&Vec<_>>> = cols
                .iter()
                .map(|c| match c {
                    Col::$variant(v) => Some(v),
                    _ => None,
                })
                .collect();
            vs.map(|vs| {
                Col::$variant(run(
                    &vs, &plans, &output, &reduced, &out_dims, &red_dims, dt,
                ))
            })
        }};
    }
    let out = match &cols[0] {
        Col::F32(_) => all_of!(F32),
        Col::F64(_) => all_of!(F64),
        Col::Int(_) => all_of!(Int),
    };
    let Some(out) = out else {
        return unsupported("einsum: operands of different classes");
    };
    Ok(Value::tensor(encode(&out, dt, out_shape)?))
}
