//! The `dyn.*` operators: the static operator with the attribute its
//! tensor argument holds (`dyn.reshape(x, s)` is `reshape(x,
//! newshape=s)`), which is what DynamicToStatic rewrites them to and what
//! TOPI's dynamic computes produce once the shape functions have run. The
//! results are the static kernels' (exact where those are).

use super::tensor::{decode, Col};
use super::{arg_tensor, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::{AttrValue, Attrs};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "dyn.reshape" => reshape,
        "dyn.broadcast_to" => broadcast_to,
        "dyn.expand_dims" => expand_dims,
        "dyn.squeeze" => squeeze,
        "dyn.tile" => tile,
        "dyn.full" => full,
        "dyn.zeros" | "dyn.ones" => zeros_ones,
        "dyn.strided_slice" => strided_slice,
        "dyn.topk" => topk,
        "dyn.one_hot" => one_hot,
        "dyn.nn.pad" => pad,
        "dyn.nn.upsampling" | "dyn.nn.upsampling3d" => upsampling,
        "dyn.image.resize2d" => resize2d,
        _ => return None,
    })
}

/// The integers of tensor argument `i`.
fn ints(args: &[Value], i: usize, call: &CallInfo) -> EvalResult<Vec<i64>> {
    match decode(arg_tensor(args, i, call)?)? {
        Col::Int(v) => Ok(v.into_iter().map(|x| x as i64).collect()),
        _ => unsupported(format!("{}: argument {i} must hold integers", call.op)),
    }
}

fn int_list(v: &[i64]) -> AttrValue {
    AttrValue::Array(v.iter().map(|&x| AttrValue::Int(x)).collect())
}

/// Calls the static operator `op` on `args` with the call's attributes plus
/// `fields` (which replace attributes of the same name).
fn delegate(
    op: &str,
    args: &[Value],
    call: &CallInfo,
    fields: Vec<(&str, AttrValue)>,
) -> EvalResult {
    let mut all: Vec<(String, AttrValue)> = call
        .attrs
        .map(|a| a.fields().to_vec())
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, _)| !fields.iter().any(|(f, _)| f == name))
        .collect();
    all.extend(fields.into_iter().map(|(k, v)| (k.to_string(), v)));
    let type_key = call.attrs.map_or("", |a| a.type_key()).to_string();
    let attrs = Attrs::new(type_key, all);
    let inner = CallInfo {
        op,
        attrs: Some(&attrs),
        ..*call
    };
    let kernel = super::kernel(op).ok_or_else(|| EvalError::NoKernel(op.into()))?;
    kernel(args, &inner)
}

fn reshape(args: &[Value], call: &CallInfo) -> EvalResult {
    let newshape = int_list(&ints(args, 1, call)?);
    delegate("reshape", &args[..1], call, vec![("newshape", newshape)])
}

fn broadcast_to(args: &[Value], call: &CallInfo) -> EvalResult {
    let shape = int_list(&ints(args, 1, call)?);
    delegate("broadcast_to", &args[..1], call, vec![("shape", shape)])
}

fn expand_dims(args: &[Value], call: &CallInfo) -> EvalResult {
    let axis = ints(args, 1, call)?;
    if axis.len() != 1 {
        return unsupported("dyn.expand_dims: one axis expected");
    }
    delegate(
        "expand_dims",
        &args[..1],
        call,
        vec![("axis", AttrValue::Int(axis[0]))],
    )
}

fn squeeze(args: &[Value], call: &CallInfo) -> EvalResult {
    let axes = int_list(&ints(args, 1, call)?);
    delegate("squeeze", &args[..1], call, vec![("axis", axes)])
}

fn tile(args: &[Value], call: &CallInfo) -> EvalResult {
    let reps = int_list(&ints(args, 1, call)?);
    delegate("tile", &args[..1], call, vec![("reps", reps)])
}

fn full(args: &[Value], call: &CallInfo) -> EvalResult {
    let shape = int_list(&ints(args, 1, call)?);
    delegate("full", &args[..1], call, vec![("shape", shape)])
}

fn zeros_ones(args: &[Value], call: &CallInfo) -> EvalResult {
    let shape = int_list(&ints(args, 0, call)?);
    let op = if call.op == "dyn.ones" {
        "ones"
    } else {
        "zeros"
    };
    delegate(op, &[], call, vec![("shape", shape)])
}

fn strided_slice(args: &[Value], call: &CallInfo) -> EvalResult {
    let fields = vec![
        ("begin", int_list(&ints(args, 1, call)?)),
        ("end", int_list(&ints(args, 2, call)?)),
        ("strides", int_list(&ints(args, 3, call)?)),
    ];
    delegate("strided_slice", &args[..1], call, fields)
}

fn topk(args: &[Value], call: &CallInfo) -> EvalResult {
    let k = ints(args, 1, call)?;
    if k.len() != 1 {
        return unsupported("dyn.topk: a scalar k expected");
    }
    delegate("topk", &args[..1], call, vec![("k", AttrValue::Int(k[0]))])
}

fn one_hot(args: &[Value], call: &CallInfo) -> EvalResult {
    let depth = ints(args, 3, call)?;
    if depth.len() != 1 {
        return unsupported("dyn.one_hot: a scalar depth expected");
    }
    delegate(
        "one_hot",
        &args[..3],
        call,
        vec![("depth", AttrValue::Int(depth[0]))],
    )
}

/// `dyn.nn.pad(data, pad_width [n, 2], pad_value)`.
fn pad(args: &[Value], call: &CallInfo) -> EvalResult {
    let widths = ints(args, 1, call)?;
    if widths.len() % 2 != 0 {
        return unsupported("dyn.nn.pad: pad_width must be [n, 2]");
    }
    let rows = AttrValue::Array(widths.chunks(2).map(int_list).collect());
    let value = args
        .get(2)
        .cloned()
        .ok_or_else(|| EvalError::Unsupported("dyn.nn.pad: no pad value".into()))?;
    delegate(
        "nn.pad",
        &[args[0].clone(), value],
        call,
        vec![("pad_width", rows)],
    )
}

/// The floats of tensor argument `i`.
fn floats(args: &[Value], i: usize, call: &CallInfo) -> EvalResult<Vec<f64>> {
    let t = arg_tensor(args, i, call)?;
    t.to_f64_vec()
        .map_err(|e| EvalError::Unsupported(format!("{}: {}", call.op, e.message)))
}

/// `dyn.nn.upsampling(data, scale_h, scale_w)` (and the 3-D one with
/// `scale_d` first): the scales as attributes.
fn upsampling(args: &[Value], call: &CallInfo) -> EvalResult {
    let names: &[&'static str] = if call.op == "dyn.nn.upsampling3d" {
        &["scale_d", "scale_h", "scale_w"]
    } else {
        &["scale_h", "scale_w"]
    };
    let mut fields = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        match floats(args, k + 1, call)?.as_slice() {
            [v] => fields.push((*name, AttrValue::Double(*v))),
            _ => return unsupported(format!("{}: a scalar {name} expected", call.op)),
        }
    }
    let op = call.op.trim_start_matches("dyn.");
    delegate(op, &args[..1], call, fields)
}

/// `dyn.image.resize2d(data, size, roi)`.
fn resize2d(args: &[Value], call: &CallInfo) -> EvalResult {
    let size = int_list(&ints(args, 1, call)?);
    let roi = AttrValue::Array(
        floats(args, 2, call)?
            .into_iter()
            .map(AttrValue::Double)
            .collect(),
    );
    delegate(
        "image.resize2d",
        &args[..1],
        call,
        vec![("size", size), ("roi", roi)],
    )
}
