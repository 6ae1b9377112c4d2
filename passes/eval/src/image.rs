//! Image kernels (`src/relay/op/image/*.cc`, TOPI's `topi.image`):
//! `image.dilation2d` and `image.affine_grid`.
//!
//! `affine_grid` is TOPI's formula in the data's dtype: the steps
//! `(2 - 1e-7) / (size - 1)` are constants of that dtype, `y = -1 + i *
//! y_step`, `x = -1 + j * x_step`, and the result is
//! `(m0 * x + m1 * y) + m2`, each operation rounded to the dtype. TVM sets
//! LLVM's floating-point contraction to "fast", so on a target with FMA
//! instructions its code may fuse the multiply-adds (a difference of at most
//! one rounding, ~1 ulp, per fused pair); FoldConstant compiles for the
//! plain `llvm` host target (generic x86-64, no FMA), where it does not.
//!
//! `dilation2d` is TOPI's `dilation2d_nchw` / `dilation2d_nhwc` (the only
//! layouts TVM's strategy accepts: `NCHW` with an `IHW` kernel, `NHWC` with
//! `HWI`): the input, zero-padded, and the kernel are cast to `out_dtype`,
//! and each output is the maximum of `input + kernel` over the window. Each
//! term is one addition and the maximum is a comparison, so the results are
//! exact: no accumulation order is involved. The maximum is TVM's
//! `select(acc > v, acc, v)` from the lowest value of the dtype, so a NaN
//! term propagates as in TVM's code.

use super::tensor::{class, decode, encode, round_f32, wrap, Class, Col};
use super::{
    arg_tensor, cast_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value,
};
use relay_ir::dtype::{DataType, TypeCode};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "image.dilation2d" => dilation2d,
        "image.affine_grid" => affine_grid,
        _ => return None,
    })
}

/// TOPI's `get_pad_tuple` for a list of paddings: two are symmetric
/// (`[h, w]` on both sides), four are `[top, left, bottom, right]`.
fn pad_tuple(padding: &[i64], op: &str) -> EvalResult<[i64; 4]> {
    match *padding {
        [h, w] => {
            let (pad_h, pad_w) = (h * 2, w * 2);
            let (top, left) = ((pad_h + 1) / 2, (pad_w + 1) / 2);
            Ok([top, left, pad_h - top, pad_w - left])
        }
        [top, left, bottom, right] => Ok([top, left, bottom, right]),
        _ => unsupported(format!("{op}: padding of {} values", padding.len())),
    }
}

/// A pair attribute (`strides`, `dilations`), `[1, 1]` when absent.
fn pair(call: &CallInfo, name: &str) -> EvalResult<[i64; 2]> {
    match call.ints(name)?.as_deref() {
        None => Ok([1, 1]),
        Some(&[a, b]) if a > 0 && b > 0 => Ok([a, b]),
        Some(other) => unsupported(format!("{}: `{name}` {other:?}", call.op)),
    }
}

/// The lowest value of `dtype` (TVM's `min_value`), the identity of `max`.
fn lowest_f32(dtype: DataType) -> f32 {
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16) => half::f16::MIN.to_f32(),
        (TypeCode::BFloat, 16) => half::bf16::MIN.to_f32(),
        _ => f32::MIN,
    }
}

fn lowest_int(dtype: DataType) -> i128 {
    if dtype.code == TypeCode::Int {
        -(1i128 << (dtype.bits - 1))
    } else {
        0
    }
}

/// The window geometry of one call, in `NCHW` terms.
struct Geometry {
    nhwc: bool,
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    stride: [usize; 2],
    dilation: [usize; 2],
    top: i64,
    left: i64,
    out_h: usize,
    out_w: usize,
}

impl Geometry {
    /// The flat index of the input at `(b, ch, y, x)`; `None` in the padding.
    fn input(&self, b: usize, ch: usize, y: i64, x: i64) -> Option<usize> {
        if y < 0 || x < 0 || y >= self.h as i64 || x >= self.w as i64 {
            return None;
        }
        let (y, x) = (y as usize, x as usize);
        Some(if self.nhwc {
            ((b * self.h + y) * self.w + x) * self.c + ch
        } else {
            ((b * self.c + ch) * self.h + y) * self.w + x
        })
    }

    fn kernel(&self, ch: usize, ry: usize, rx: usize) -> usize {
        if self.nhwc {
            (ry * self.kw + rx) * self.c + ch
        } else {
            (ch * self.kh + ry) * self.kw + rx
        }
    }

    /// Calls `f(b, ch, oy, ox)` in the output's row-major order.
    fn for_each_output(&self, mut f: impl FnMut(usize, usize, usize, usize)) {
        for b in 0..self.n {
            if self.nhwc {
                for oy in 0..self.out_h {
                    for ox in 0..self.out_w {
                        for ch in 0..self.c {
                            f(b, ch, oy, ox);
                        }
                    }
                }
            } else {
                for ch in 0..self.c {
                    for oy in 0..self.out_h {
                        for ox in 0..self.out_w {
                            f(b, ch, oy, ox);
                        }
                    }
                }
            }
        }
    }

    /// `max` over the window at `(b, ch, oy, ox)` of `add(input, kernel)`,
    /// the input reading `zero` in the padding.
    fn window_max<T: Copy>(
        &self,
        (input, kernel): (&[T], &[T]),
        (b, ch, oy, ox): (usize, usize, usize, usize),
        zero: T,
        init: T,
        add: impl Fn(T, T) -> T,
        greater: impl Fn(T, T) -> bool,
    ) -> T {
        let mut acc = init;
        for ry in 0..self.kh {
            for rx in 0..self.kw {
                let y = (oy * self.stride[0] + ry * self.dilation[0]) as i64 - self.top;
                let x = (ox * self.stride[1] + rx * self.dilation[1]) as i64 - self.left;
                let value = self.input(b, ch, y, x).map_or(zero, |i| input[i]);
                let term = add(value, kernel[self.kernel(ch, ry, rx)]);
                acc = if greater(acc, term) { acc } else { term };
            }
        }
        acc
    }
}

fn dilation2d(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let data = arg_tensor(args, 0, call)?;
    let weight = arg_tensor(args, 1, call)?;
    let nhwc = match (
        call.str("data_layout").unwrap_or("NCHW"),
        call.str("kernel_layout").unwrap_or("IHW"),
    ) {
        ("NCHW", "IHW") => false,
        ("NHWC", "HWI") => true,
        (data, kernel) => return unsupported(format!("{}: layouts {data} and {kernel}", call.op)),
    };
    let (&[n, d1, d2, d3], &[k0, k1, k2]) = (data.shape.as_slice(), weight.shape.as_slice()) else {
        return unsupported(format!("{}: data or kernel of another rank", call.op));
    };
    let ((c, h, w), (kc, kh, kw)) = if nhwc {
        ((d3, d1, d2), (k2, k0, k1))
    } else {
        ((d1, d2, d3), (k0, k1, k2))
    };
    // TOPI asserts this; TVM cannot compile the call otherwise.
    if kc != c {
        return unsupported(format!(
            "{}: {kc} kernel channels for {c} input channels",
            call.op
        ));
    }
    let stride = pair(call, "strides")?;
    let dilation = pair(call, "dilations")?;
    let [top, left, bottom, right] =
        pad_tuple(&call.ints("padding")?.unwrap_or(vec![0, 0]), call.op)?;
    let dilated_h = (kh - 1) * dilation[0] + 1;
    let dilated_w = (kw - 1) * dilation[1] + 1;
    let out_h = (h - dilated_h + top + bottom).div_euclid(stride[0]) + 1;
    let out_w = (w - dilated_w + left + right).div_euclid(stride[1]) + 1;
    if out_h < 0 || out_w < 0 {
        return unsupported(format!("{}: negative output size", call.op));
    }
    let shape = if nhwc {
        vec![n, out_h, out_w, c]
    } else {
        vec![n, c, out_h, out_w]
    };
    call.check_size(&shape)?;
    let geometry = Geometry {
        nhwc,
        n: n as usize,
        c: c as usize,
        h: h as usize,
        w: w as usize,
        kh: kh as usize,
        kw: kw as usize,
        stride: [stride[0] as usize, stride[1] as usize],
        dilation: [dilation[0] as usize, dilation[1] as usize],
        top,
        left,
        out_h: out_h as usize,
        out_w: out_w as usize,
    };
    let out_dtype = call.dtype("out_dtype")?.unwrap_or(data.dtype);
    class(out_dtype)?;
    let input = decode(&cast_tensor(data, out_dtype)?)?;
    let kernel = decode(&cast_tensor(weight, out_dtype)?)?;
    let out = match (&input, &kernel) {
        (Col::F32(x), Col::F32(k)) => {
            let mut out = Vec::new();
            geometry.for_each_output(|b, ch, oy, ox| {
                out.push(geometry.window_max(
                    (x, k),
                    (b, ch, oy, ox),
                    0.0,
                    lowest_f32(out_dtype),
                    |a, b| round_f32(out_dtype, a + b),
                    |a, b| a > b,
                ));
            });
            Col::F32(out)
        }
        (Col::F64(x), Col::F64(k)) => {
            let mut out = Vec::new();
            geometry.for_each_output(|b, ch, oy, ox| {
                out.push(geometry.window_max(
                    (x, k),
                    (b, ch, oy, ox),
                    0.0,
                    f64::MIN,
                    |a, b| a + b,
                    |a, b| a > b,
                ));
            });
            Col::F64(out)
        }
        (Col::Int(x), Col::Int(k)) => {
            let mut out = Vec::new();
            geometry.for_each_output(|b, ch, oy, ox| {
                out.push(geometry.window_max(
                    (x, k),
                    (b, ch, oy, ox),
                    0,
                    lowest_int(out_dtype),
                    |a, b| wrap(out_dtype, a + b),
                    |a, b| a > b,
                ));
            });
            Col::Int(out)
        }
        _ => return unsupported(format!("{}: mixed element classes", call.op)),
    };
    debug_assert!(matches!(
        class(out_dtype),
        Ok(Class::F32 | Class::F64 | Class::Int)
    ));
    Ok(Value::tensor(encode(&out, out_dtype, shape)?))
}

/// A constant of `dtype` made from a double (`tir.const`): rounded once,
/// straight to the dtype.
fn const_f32(dtype: DataType, v: f64) -> f32 {
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16) => half::f16::from_f64(v).to_f32(),
        (TypeCode::BFloat, 16) => half::bf16::from_f64(v).to_f32(),
        _ => v as f32,
    }
}

/// `[batch, 2, H, W]` sampling grid from `[batch, 2, 3]` affine matrices.
fn affine_grid(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let data = arg_tensor(args, 0, call)?;
    let &[batch, 2, 3] = data.shape.as_slice() else {
        return unsupported(format!("{}: data of shape {:?}", call.op, data.shape));
    };
    // TOPI asserts a target of two sizes, each above 1.
    let Some(&[height, width]) = call.ints("target_shape")?.as_deref() else {
        return unsupported(format!("{}: no two target sizes", call.op));
    };
    if height <= 1 || width <= 1 {
        return unsupported(format!("{}: target sizes must be above 1", call.op));
    }
    let shape = vec![batch, 2, height, width];
    call.check_size(&shape)?;
    let dtype = data.dtype;
    let step = |size: i64| (2.0 - 1e-7) / (size - 1) as f64;
    let out = match decode(data)? {
        Col::F32(m) => {
            let r = |x: f32| round_f32(dtype, x);
            let (y_step, x_step) = (
                const_f32(dtype, step(height)),
                const_f32(dtype, step(width)),
            );
            let mut out = Vec::new();
            for n in 0..batch as usize {
                for dim in 0..2 {
                    let row = &m[(n * 2 + dim) * 3..][..3];
                    for i in 0..height {
                        let y = r(-1.0 + r(const_f32(dtype, i as f64) * y_step));
                        for j in 0..width {
                            let x = r(-1.0 + r(const_f32(dtype, j as f64) * x_step));
                            out.push(r(r(r(row[0] * x) + r(row[1] * y)) + row[2]));
                        }
                    }
                }
            }
            Col::F32(out)
        }
        Col::F64(m) => {
            let (y_step, x_step) = (step(height), step(width));
            let mut out = Vec::new();
            for n in 0..batch as usize {
                for dim in 0..2 {
                    let row = &m[(n * 2 + dim) * 3..][..3];
                    for i in 0..height {
                        let y = -1.0 + i as f64 * y_step;
                        for j in 0..width {
                            let x = -1.0 + j as f64 * x_step;
                            out.push(row[0] * x + row[1] * y + row[2]);
                        }
                    }
                }
            }
            Col::F64(out)
        }
        Col::Int(_) => return unsupported(format!("{}: integer matrices", call.op)),
    };
    Ok(Value::tensor(encode(&out, dtype, shape)?))
}

#[cfg(test)]
mod tests {
    use super::super::{eval_call, CallInfo, Value};
    use relay_ir::dtype::DataType;
    use relay_ir::metadata::TensorData;
    use relay_ir::{AttrValue, Attrs};

    fn tensor(dtype: &str, shape: &[i64], values: &[i64]) -> Value {
        Value::tensor(
            TensorData::from_i64s(DataType::parse(dtype).unwrap(), shape.to_vec(), values).unwrap(),
        )
    }

    fn attrs(fields: &[(&str, AttrValue)]) -> Attrs {
        Attrs::new(
            "relay.attrs.Dilation2DAttrs",
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn ints(values: &[i64]) -> AttrValue {
        AttrValue::Array(values.iter().map(|&v| AttrValue::Int(v)).collect())
    }

    fn run(attrs: &Attrs, args: &[Value]) -> Result<Value, super::super::EvalError> {
        eval_call(&CallInfo::new("image.dilation2d", Some(attrs)), args)
    }

    fn values(v: &Value) -> (Vec<i64>, Vec<i64>) {
        let t = v.as_tensor().unwrap();
        (t.shape.clone(), t.to_i64_vec().unwrap())
    }

    #[test]
    fn nchw_window_maximum() {
        let data = tensor("int32", &[1, 1, 3, 3], &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let kernel = tensor("int32", &[1, 2, 2], &[0, 10, -5, 1]);
        let out = run(&attrs(&[]), &[data, kernel]).unwrap();
        assert_eq!(values(&out), (vec![1, 1, 2, 2], vec![12, 13, 15, 16]));
    }

    #[test]
    fn nhwc_padding_reads_zero() {
        let data = Value::tensor(
            TensorData::from_f64s(DataType::FLOAT32, vec![1, 2, 2, 1], &[1.0, 2.0, 3.0, 4.0])
                .unwrap(),
        );
        let kernel = Value::tensor(
            TensorData::from_f64s(DataType::FLOAT32, vec![1, 1, 1], &[-10.0]).unwrap(),
        );
        let call = attrs(&[
            ("padding", ints(&[1, 1])),
            ("data_layout", AttrValue::Str("NHWC".into())),
            ("kernel_layout", AttrValue::Str("HWI".into())),
        ]);
        let out = run(&call, &[data, kernel]).unwrap();
        let t = out.as_tensor().unwrap();
        assert_eq!(t.shape, vec![1, 4, 4, 1]);
        let got: Vec<f64> = (0..16).map(|i| t.get_f64(i).unwrap()).collect();
        #[rustfmt::skip]
        let want = [
            -10.0, -10.0, -10.0, -10.0,
            -10.0, -9.0, -8.0, -10.0,
            -10.0, -7.0, -6.0, -10.0,
            -10.0, -10.0, -10.0, -10.0,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn strides_dilations_and_integer_wrapping() {
        // int8 sums wrap as in TVM's code: 120 + 10 is -126.
        let data = tensor("int8", &[1, 1, 1, 1], &[120]);
        let kernel = tensor("int8", &[1, 1, 1], &[10]);
        assert_eq!(
            values(&run(&attrs(&[]), &[data, kernel]).unwrap()).1,
            vec![-126]
        );
        // Stride 2 and dilation 2 on 5x5: the window reads rows/columns 0 and 2.
        let data = tensor("int32", &[1, 1, 5, 5], &(0..25).collect::<Vec<_>>());
        let kernel = tensor("int32", &[1, 2, 2], &[0, 0, 0, 100]);
        let call = attrs(&[("strides", ints(&[2, 2])), ("dilations", ints(&[2, 2]))]);
        // Windows at (0,0) and (0,2),(2,0),(2,2): the maximum is the
        // bottom-right element + 100.
        assert_eq!(
            values(&run(&call, &[data, kernel]).unwrap()),
            (vec![1, 1, 2, 2], vec![112, 114, 122, 124])
        );
    }

    #[test]
    fn affine_grid_identity_and_translation() {
        // The identity matrix plus a translation of 0.5 in x.
        let data = Value::tensor(
            TensorData::from_f64s(
                DataType::FLOAT32,
                vec![1, 2, 3],
                &[1.0, 0.0, 0.5, 0.0, 1.0, 0.0],
            )
            .unwrap(),
        );
        let call = Attrs::new(
            "relay.attrs.AffineGridAttrs",
            vec![("target_shape".to_string(), ints(&[2, 3]))],
        );
        let out = eval_call(&CallInfo::new("image.affine_grid", Some(&call)), &[data]).unwrap();
        let t = out.as_tensor().unwrap();
        assert_eq!(t.shape, vec![1, 2, 2, 3]);
        let got: Vec<f32> = (0..12).map(|i| t.get_f64(i).unwrap() as f32).collect();
        // Steps are (2 - 1e-7) / (n - 1) rounded to float32: the last
        // sample of each axis falls just short of 1.
        let x_step = ((2.0 - 1e-7) / 2.0_f64) as f32;
        let y_step = (2.0 - 1e-7_f64) as f32;
        let xs = [-1.0f32, -1.0 + x_step, -1.0 + 2.0 * x_step];
        let ys = [-1.0f32, -1.0 + y_step];
        let mut want = Vec::new();
        for y in ys {
            want.extend(xs.iter().map(|x| (x + 0.0 * y) + 0.5));
        }
        for y in ys {
            want.extend(xs.iter().map(|x| (0.0 * x + y) + 0.0));
        }
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert!(got[2] < 1.5 && got[2] > 1.4999, "{}", got[2]);
    }

    #[test]
    fn calls_tvm_cannot_compile_are_not_folded() {
        let data = tensor("int32", &[1, 2, 3, 3], &[0; 18]);
        let kernel = tensor("int32", &[3, 1, 1], &[0; 3]);
        assert!(run(&attrs(&[]), &[data.clone(), kernel]).is_err());
        let kernel = tensor("int32", &[2, 1, 1], &[0; 2]);
        let call = attrs(&[("kernel_layout", AttrValue::Str("HWI".into()))]);
        assert!(run(&call, &[data, kernel]).is_err());
    }
}
