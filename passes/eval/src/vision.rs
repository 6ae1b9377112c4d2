//! Vision operators: `vision.yolo_reorg` (TOPI's `vision::reorg`). TOPI
//! computes each element from a flat position of the data, `(((b·s²)·C +
//! (k mod C')·s²)·H + (j·s + (k div C') div s)·s)·W + i·s + (k div C') mod s`
//! with `C' = C / s²`, then reshapes to `[N, C·s², H/s, W/s]`; the formula
//! can point past the data (TVM then reads whatever memory is there), so a
//! call where it does is not folded. Elements are copied: exact.

use super::tensor::{dims, gather};
use super::{arg_tensor, expect_args, unsupported, CallInfo, EvalResult, Kernel, Value};

pub(super) fn kernel(op: &str) -> Option<Kernel> {
    Some(match op {
        "vision.yolo_reorg" => yolo_reorg,
        _ => return None,
    })
}

fn yolo_reorg(args: &[Value], call: &CallInfo) -> EvalResult {
    expect_args(args, 1, call)?;
    let x = arg_tensor(args, 0, call)?;
    let s = call.int_or("stride", 1);
    if x.ndim() != 4 || s < 1 {
        return unsupported("vision.yolo_reorg: 4-D data and a positive stride expected");
    }
    let s = s as usize;
    let d = dims(&x.shape);
    let (n, c, h, w) = (d[0], d[1], d[2], d[3]);
    let out_c = c / (s * s);
    if out_c == 0 || h % s != 0 || w % s != 0 {
        return unsupported("vision.yolo_reorg: the stride does not divide the data");
    }
    let total = n * c * h * w;
    let mut src = Vec::with_capacity(total);
    for b in 0..n {
        for k in 0..c {
            for j in 0..h {
                for i in 0..w {
                    let (q, r) = (k / out_c, k % out_c);
                    let flat = (((b * s * s) * c + r * s * s) * h + (j * s + q / s) * s) * w
                        + i * s
                        + q % s;
                    if flat >= total {
                        return unsupported(
                            "vision.yolo_reorg: TOPI's index reads past the data here",
                        );
                    }
                    src.push(flat);
                }
            }
        }
    }
    let out_shape = vec![n as i64, (c * s * s) as i64, (h / s) as i64, (w / s) as i64];
    gather(x, out_shape, &src).map(Value::tensor)
}
