//! Data-movement kernels of the spatial `nn.*` operators (TOPI's
//! `nn/depth_to_space.py`, `nn/space_to_depth.py`, `nn/pad.py`):
//! `nn.depth_to_space`, `nn.space_to_depth` and `nn.mirror_pad`. They copy
//! raw elements, so they are exact for every data type.

use super::tensor::{dims, for_each_index, gather, numel, strides};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalError, EvalResult, Kernel, Value};
use relay_ir::AttrValue;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.depth_to_space" => depth_to_space,
        "nn.space_to_depth" => space_to_depth,
        "nn.mirror_pad" => mirror_pad,
        _ => return None,
    })
}

/// The positions of the (N, C, H, W) axes in the data for TOPI's two
/// supported layouts.
fn nchw_axes(call: &CallInfo) -> EvalResult<[usize; 4]> {
    match call.str("layout").unwrap_or("NCHW") {
        "NCHW" => Ok([0, 1, 2, 3]),
        "NHWC" => Ok([0, 3, 1, 2]),
        other => unsupported(format!(
            "{}: only NCHW and NHWC layouts are supported, not {other}",
            call.op
        )),
    }
}

/// The block size, which must be positive.
fn block_size(call: &CallInfo) -> EvalResult<usize> {
    match call.req_int("block_size")? {
        b if b > 0 => Ok(b as usize),
        b => unsupported(format!("{}: block_size {b}", call.op)),
    }
}

/// Builds the output of a sub-pixel operator: `out_nchw` is the output's
/// (N, C, H, W) extent and `source` maps an output (n, c, y, x) to the
/// input's (n, c, y, x).
fn sub_pixel(
    args: &[Value],
    call: &CallInfo,
    out_nchw: impl Fn([usize; 4]) -> [usize; 4],
    source: impl Fn([usize; 4], [usize; 4]) -> [usize; 4],
) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    if x.ndim() != 4 {
        return unsupported(format!("{}: the data must be 4-D", call.op));
    }
    let axes = nchw_axes(call)?;
    let in_dims = dims(&x.shape);
    let in_nchw = axes.map(|a| in_dims[a]);
    let out = out_nchw(in_nchw);
    let mut out_shape = vec![0i64; 4];
    for (k, &a) in axes.iter().enumerate() {
        out_shape[a] = out[k] as i64;
    }
    call.check_size(&out_shape)?;
    let st = strides(&in_dims);
    let od = dims(&out_shape);
    let mut src = Vec::with_capacity(numel(&od));
    let mut bad = false;
    for_each_index(&od, |_, idx| {
        let from = source(axes.map(|a| idx[a]), in_nchw);
        bad |= from.iter().zip(&in_nchw).any(|(i, n)| i >= n);
        src.push(axes.iter().zip(from).map(|(&a, i)| i * st[a]).sum());
    });
    if bad {
        return unsupported(format!(
            "{}: the channels do not divide into blocks",
            call.op
        ));
    }
    gather(x, out_shape, &src).map(Value::tensor)
}

/// `topi.nn.depth_to_space`: `DCR` takes the block offset from the
/// outer channels, any other mode (`CDR`) from the inner ones.
fn depth_to_space(args: &[Value], call: &CallInfo) -> EvalResult {
    let b = block_size(call)?;
    let dcr = call.str("mode").unwrap_or("DCR") == "DCR";
    sub_pixel(
        args,
        call,
        |[n, c, h, w]| [n, c / (b * b), h * b, w * b],
        |[n, c, y, x], [_, in_c, _, _]| {
            let offset = b * (y % b) + x % b;
            let channel = if dcr {
                (in_c / (b * b)) * offset + c
            } else {
                c * b * b + offset
            };
            [n, channel, y / b, x / b]
        },
    )
}

/// `topi.nn.space_to_depth`.
fn space_to_depth(args: &[Value], call: &CallInfo) -> EvalResult {
    let b = block_size(call)?;
    sub_pixel(
        args,
        call,
        |[n, c, h, w]| [n, c * b * b, h / b, w / b],
        |[n, c, y, x], [_, in_c, _, _]| {
            let offset = c / in_c;
            [n, c % in_c, offset / b + y * b, offset % b + x * b]
        },
    )
}

/// `topi.nn.mirror_pad`: `SYMMETRIC` repeats the border element,
/// `REFLECT` does not.
fn mirror_pad(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let symmetric = match call.str("mode").unwrap_or("SYMMETRIC") {
        "SYMMETRIC" => 1i64,
        "REFLECT" => 0,
        other => return unsupported(format!("nn.mirror_pad: mode {other}")),
    };
    let widths: Vec<Vec<i64>> = match call.attr("pad_width").and_then(AttrValue::as_array) {
        Some(rows) => rows
            .iter()
            .map(|r| {
                r.as_int_array()
                    .filter(|pair| pair.len() == 2 && pair.iter().all(|&w| w >= 0))
                    .ok_or_else(|| EvalError::Unsupported("nn.mirror_pad: bad pad_width".into()))
            })
            .collect::<EvalResult<_>>()?,
        None => return unsupported("nn.mirror_pad: no pad_width"),
    };
    if widths.len() != x.ndim() {
        return unsupported("nn.mirror_pad: one pad width pair per axis");
    }
    let out_shape: Vec<i64> = x
        .shape
        .iter()
        .zip(&widths)
        .map(|(&d, w)| d + w[0] + w[1])
        .collect();
    call.check_size(&out_shape)?;
    let st = strides(&dims(&x.shape));
    let od = dims(&out_shape);
    let mut src = Vec::with_capacity(numel(&od));
    let mut bad = false;
    for_each_index(&od, |_, idx| {
        let mut flat = 0usize;
        for (k, &i) in idx.iter().enumerate() {
            let (before, size) = (widths[k][0], x.shape[k]);
            let i = i as i64;
            let a = i - before;
            let mapped = if i >= size + before {
                2 * (size - 1) - a + symmetric
            } else if i < before {
                -a - symmetric
            } else {
                a
            };
            // A pad wider than the data reads outside it in TOPI's compute.
            bad |= mapped < 0 || mapped >= size;
            flat += mapped.clamp(0, (size - 1).max(0)) as usize * st[k];
        }
        src.push(flat);
    });
    if bad {
        return unsupported("nn.mirror_pad: a pad width exceeds the data");
    }
    gather(x, out_shape, &src).map(Value::tensor)
}

#[cfg(test)]
#[allow(clippy::cloned_ref_to_slice_refs)] // `&[x.clone()]` reads best in tables of cases
mod tests {
    use super::super::{eval_call, CallInfo, Value};
    use relay_ir::dtype::DataType;
    use relay_ir::metadata::TensorData;
    use relay_ir::{AttrValue, Attrs};

    fn ints(shape: &[i64], values: &[i64]) -> Value {
        Value::tensor(TensorData::from_i64s(DataType::INT32, shape.to_vec(), values).unwrap())
    }

    fn run(op: &str, fields: &[(&str, AttrValue)], x: Value) -> (Vec<i64>, Vec<i64>) {
        let attrs = Attrs::new(
            "test",
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        );
        let out = eval_call(&CallInfo::new(op, Some(&attrs)), &[x]).unwrap();
        let t = out.as_tensor().unwrap();
        let values = (0..t.num_elements() as usize)
            .map(|i| t.get_f64(i).unwrap() as i64)
            .collect();
        (t.shape.clone(), values)
    }

    fn s(v: &str) -> AttrValue {
        AttrValue::Str(v.into())
    }

    #[test]
    fn depth_to_space_modes_and_its_inverse() {
        let x = || ints(&[1, 8, 1, 1], &[0, 1, 2, 3, 4, 5, 6, 7]);
        let block = ("block_size", AttrValue::Int(2));
        // DCR (TensorFlow): the block offset selects among the outer channels.
        let (shape, dcr) = run("nn.depth_to_space", &[block.clone()], x());
        assert_eq!(shape, vec![1, 2, 2, 2]);
        assert_eq!(dcr, vec![0, 2, 4, 6, 1, 3, 5, 7]);
        // CDR (PyTorch): consecutive channels form a block.
        let (_, cdr) = run(
            "nn.depth_to_space",
            &[block.clone(), ("mode", s("CDR"))],
            x(),
        );
        assert_eq!(cdr, vec![0, 1, 2, 3, 4, 5, 6, 7]);
        let (shape, back) = run(
            "nn.space_to_depth",
            &[block.clone()],
            ints(&[1, 2, 2, 2], &dcr),
        );
        assert_eq!(
            (shape, back),
            (vec![1, 8, 1, 1], vec![0, 1, 2, 3, 4, 5, 6, 7])
        );
        let (shape, nhwc) = run(
            "nn.space_to_depth",
            &[block, ("layout", s("NHWC"))],
            ints(&[1, 2, 2, 1], &[0, 1, 2, 3]),
        );
        assert_eq!((shape, nhwc), (vec![1, 1, 1, 4], vec![0, 1, 2, 3]));
    }

    #[test]
    fn mirror_pad_symmetric_and_reflect() {
        let width = AttrValue::Array(vec![AttrValue::Array(vec![
            AttrValue::Int(2),
            AttrValue::Int(1),
        ])]);
        let x = || ints(&[3], &[1, 2, 3]);
        let (shape, symmetric) = run("nn.mirror_pad", &[("pad_width", width.clone())], x());
        assert_eq!((shape, symmetric), (vec![6], vec![2, 1, 1, 2, 3, 3]));
        let (_, reflect) = run(
            "nn.mirror_pad",
            &[("pad_width", width.clone()), ("mode", s("REFLECT"))],
            x(),
        );
        assert_eq!(reflect, vec![3, 2, 1, 2, 3, 2]);
        let attrs = Attrs::new(
            "test",
            vec![
                ("pad_width".to_string(), width),
                ("mode".to_string(), s("REFLECT")),
            ],
        );
        let short = ints(&[1], &[7]);
        assert!(eval_call(&CallInfo::new("nn.mirror_pad", Some(&attrs)), &[short]).is_err());
    }
}
