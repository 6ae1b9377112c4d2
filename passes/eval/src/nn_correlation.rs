//! `nn.correlation` (FlowNet's correlation layer): TOPI's
//! `correlation_nchw`, the only layout TVM's strategy accepts.
//!
//! Both inputs are zero-padded; output channel `q` is the displacement
//! `((q div D) - r, (q mod D) - r) · stride2` (`r = max_displacement div
//! stride2`, `D = 2r + 1`), and each output element sums
//! `a · b` (or `|a - b|` without `is_multiply`) over channels, then kernel
//! rows, then kernel columns, sequentially from zero in the data type
//! (each step rounded as TVM's code rounds it: float16 after every
//! operation, integers wrapped), then divides by `kernel_size² · C` (C's
//! truncating division for integers). The order is TOPI's reduction order,
//! so float sums are TVM's.

use super::num::{on_cols, Num};
use super::tensor::{decode, encode};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};
use relay_ir::dtype::DataType;

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "nn.correlation" => correlation,
        _ => return None,
    })
}

/// The geometry of one call.
struct Geometry {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    kernel: usize,
    max_displacement: usize,
    stride1: usize,
    stride2: usize,
    pad_top: usize,
    pad_left: usize,
    radius: i64,
    size: usize,
    out_h: usize,
    out_w: usize,
}

impl Geometry {
    fn new(call: &CallInfo, shape: &[i64]) -> EvalResult<Geometry> {
        let op = call.op;
        let [n, c, h, w] = *shape else {
            return unsupported(format!("{op}: the data is not 4-D"));
        };
        let kernel = call.int_or("kernel_size", 1);
        let max_displacement = call.int_or("max_displacement", 1);
        let stride1 = call.int_or("stride1", 1);
        let stride2 = call.int_or("stride2", 1);
        if kernel <= 0 || kernel % 2 == 0 || max_displacement < 0 || stride1 <= 0 || stride2 <= 0 {
            return unsupported(format!("{op}: kernel_size, max_displacement or strides"));
        }
        let [top, left, bottom, right] = match call.ints("padding")?.as_deref() {
            None => [0, 0, 0, 0],
            Some(&[ph, pw]) => [ph, pw, ph, pw],
            Some(&[t, l, b, r]) => [t, l, b, r],
            Some(other) => return unsupported(format!("{op}: padding {other:?}")),
        };
        if [top, left, bottom, right].iter().any(|&p| p < 0) {
            return unsupported(format!("{op}: negative padding"));
        }
        let radius = max_displacement / stride2;
        let border = max_displacement + (kernel - 1) / 2;
        let padded_h = h + top + bottom;
        let padded_w = w + left + right;
        // Python's floor division, as TOPI writes it.
        let out_h = (padded_h - 2 * border + stride1 - 1).div_euclid(stride1);
        let out_w = (padded_w - 2 * border + stride1 - 1).div_euclid(stride1);
        if out_h <= 0 || out_w <= 0 {
            return unsupported(format!("{op}: no output positions"));
        }
        Ok(Geometry {
            n: n as usize,
            c: c as usize,
            h: h as usize,
            w: w as usize,
            kernel: kernel as usize,
            max_displacement: max_displacement as usize,
            stride1: stride1 as usize,
            stride2: stride2 as usize,
            pad_top: top as usize,
            pad_left: left as usize,
            radius,
            size: (2 * radius + 1) as usize,
            out_h: out_h as usize,
            out_w: out_w as usize,
        })
    }

    fn out_shape(&self) -> Vec<i64> {
        let q = self.size * self.size;
        vec![
            self.n as i64,
            q as i64,
            self.out_h as i64,
            self.out_w as i64,
        ]
    }

    /// The padded input at `(b, ch, y, x)` (padded coordinates).
    fn padded<T: Num>(&self, data: &[T], b: usize, ch: usize, y: usize, x: usize) -> T {
        match (y.checked_sub(self.pad_top), x.checked_sub(self.pad_left)) {
            (Some(y), Some(x)) if y < self.h && x < self.w => {
                data[((b * self.c + ch) * self.h + y) * self.w + x]
            }
            _ => T::default(),
        }
    }

    fn run<T: Num>(&self, a: &[T], b: &[T], multiply: bool, dt: DataType) -> Vec<T> {
        let count = T::from_count((self.kernel * self.kernel * self.c) as i64, dt);
        let mut out = Vec::with_capacity(self.out_shape().iter().product::<i64>() as usize);
        let zero = T::default();
        for n in 0..self.n {
            for q in 0..self.size * self.size {
                let dy = ((q / self.size) as i64 - self.radius) * self.stride2 as i64;
                let dx = ((q % self.size) as i64 - self.radius) * self.stride2 as i64;
                for i in 0..self.out_h {
                    for j in 0..self.out_w {
                        let y1 = i * self.stride1 + self.max_displacement;
                        let x1 = j * self.stride1 + self.max_displacement;
                        // |dy|, |dx| ≤ max_displacement ≤ y1, x1: never negative.
                        let (y2, x2) = ((y1 as i64 + dy) as usize, (x1 as i64 + dx) as usize);
                        let mut acc = zero;
                        for ch in 0..self.c {
                            for ry in 0..self.kernel {
                                for rx in 0..self.kernel {
                                    let p = self.padded(a, n, ch, y1 + ry, x1 + rx);
                                    let r = self.padded(b, n, ch, y2 + ry, x2 + rx);
                                    let term = if multiply {
                                        (p * r).fix(dt)
                                    } else {
                                        let d = (p - r).fix(dt);
                                        if d < zero {
                                            (zero - d).fix(dt)
                                        } else {
                                            d
                                        }
                                    };
                                    acc = (acc + term).fix(dt);
                                }
                            }
                        }
                        out.push(acc.div(count, dt).unwrap_or(zero));
                    }
                }
            }
        }
        out
    }
}

fn correlation(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 2, call)?;
    let a = arg_tensor(args, 0, call)?;
    let b = arg_tensor(args, 1, call)?;
    if a.shape != b.shape || a.dtype != b.dtype {
        return unsupported("nn.correlation: the inputs differ in shape or type");
    }
    if call.str("layout").unwrap_or("NCHW") != "NCHW" {
        return unsupported("nn.correlation: TVM computes only NCHW");
    }
    let geometry = Geometry::new(call, &a.shape)?;
    let shape = geometry.out_shape();
    call.check_size(&shape)?;
    let multiply = call.bool_or("is_multiply", true);
    let dt = a.dtype;
    let col = on_cols!(
        decode(a)?,
        decode(b)?,
        (x, y) => geometry.run(&x, &y, multiply, dt),
        unsupported("nn.correlation: the inputs differ in type")
    );
    encode(&col, dt, shape).map(Value::tensor)
}
