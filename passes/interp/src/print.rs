//! Printing a tensor as TVM prints an `NDArray` in Python
//! (`<tvm.nd.NDArray shape=(1, 10), cpu(0)>` and NumPy's `repr` of the
//! array: NumPy's default print options — 8 digits of precision, the
//! shortest digits that identify a value, 75 columns, arrays above 1000
//! elements summarised with 3 items at each edge).

use relay_ir::dtype::{DataType, TypeCode};
use relay_ir::metadata::TensorData;

const LINE_WIDTH: usize = 75;
const PRECISION: usize = 8;
const THRESHOLD: i64 = 1000;
const EDGE_ITEMS: i64 = 3;

/// `<tvm.nd.NDArray shape=…, cpu(0)>` and the array's NumPy repr.
pub fn ndarray_text(tensor: &TensorData) -> String {
    format!(
        "<tvm.nd.NDArray shape={}, cpu(0)>\n{}",
        python_shape(&tensor.shape),
        numpy_repr(tensor)
    )
}

/// A shape as a Python tuple: `()`, `(3,)`, `(1, 2)`.
pub fn python_shape(shape: &[i64]) -> String {
    match shape {
        [] => "()".into(),
        [n] => format!("({n},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

/// NumPy's name of a data type (`float32`, `bool`).
fn numpy_dtype(dtype: DataType) -> String {
    if dtype.is_bool() {
        "bool".into()
    } else {
        dtype.to_string()
    }
}

/// NumPy's `repr(array)`.
pub fn numpy_repr(tensor: &TensorData) -> String {
    let dtype = tensor.dtype;
    // NumPy leaves out the dtype of float64, int64 and bool arrays.
    let implied = (dtype == DataType::float(64) || dtype == DataType::INT64 || dtype.is_bool())
        && tensor.num_elements() > 0;
    let prefix = "array(";
    let suffix = if implied { ")" } else { "," };
    let body = if tensor.num_elements() == 0 && tensor.shape != [0] {
        format!("[], shape={}", python_shape(&tensor.shape))
    } else {
        array2string(tensor, LINE_WIDTH - suffix.len(), prefix.len())
    };
    let text = format!("{prefix}{body}{suffix}");
    if implied {
        return text;
    }
    let dtype_text = format!("dtype={})", numpy_dtype(dtype));
    let last_line = text.len() - text.rfind('\n').map_or(0, |i| i + 1);
    let spacer = if last_line + dtype_text.len() + 1 > LINE_WIDTH {
        format!("\n{}", " ".repeat(prefix.len()))
    } else {
        " ".to_string()
    };
    format!("{text}{spacer}{dtype_text}")
}

/// The element values, or a message for types we cannot read.
fn elements(tensor: &TensorData) -> Vec<f64> {
    (0..tensor.len())
        .map(|i| match tensor.dtype.code {
            TypeCode::Int | TypeCode::UInt => tensor
                .get_i64(i)
                .map(|v| v as f64)
                .or_else(|_| tensor.get_f64(i))
                .unwrap_or(f64::NAN),
            _ => tensor.get_f64(i).unwrap_or(f64::NAN),
        })
        .collect()
}

/// The flat indices NumPy shows (all, or the edges of each long axis).
fn shown_indices(shape: &[i64], summarise: bool) -> Vec<usize> {
    let mut out = Vec::new();
    fn walk(shape: &[i64], axis: usize, base: usize, summarise: bool, out: &mut Vec<usize>) {
        if axis == shape.len() {
            out.push(base);
            return;
        }
        let n = shape[axis];
        let stride: i64 = shape[axis + 1..].iter().product();
        let indices: Vec<i64> = if summarise && n > 2 * EDGE_ITEMS {
            (0..EDGE_ITEMS).chain(n - EDGE_ITEMS..n).collect()
        } else {
            (0..n).collect()
        };
        for i in indices {
            walk(
                shape,
                axis + 1,
                base + (i * stride) as usize,
                summarise,
                out,
            );
        }
    }
    walk(shape, 0, 0, summarise, &mut out);
    out
}

fn array2string(tensor: &TensorData, line_width: usize, prefix_len: usize) -> String {
    let summarise = tensor.num_elements() > THRESHOLD;
    let values = elements(tensor);
    let shown: Vec<f64> = shown_indices(&tensor.shape, summarise)
        .into_iter()
        .map(|i| values[i])
        .collect();
    let format = ElementFormat::new(tensor.dtype, &shown, tensor.shape.is_empty());
    if tensor.shape.is_empty() {
        return format.format(values[0]);
    }
    let hanging = " ".repeat(prefix_len + 1);
    let mut index = Vec::new();
    recurse(
        tensor, &values, &format, &mut index, &hanging, line_width, summarise,
    )
}

/// NumPy's `_formatArray` recursion.
fn recurse(
    tensor: &TensorData,
    values: &[f64],
    format: &ElementFormat,
    index: &mut Vec<i64>,
    hanging: &str,
    width: usize,
    summarise: bool,
) -> String {
    let shape = &tensor.shape;
    let axis = index.len();
    if axis == shape.len() {
        let mut flat = 0i64;
        for (i, d) in index.iter().zip(shape) {
            flat = flat * d + i;
        }
        return format.format(values[flat as usize]);
    }
    let next_hanging = format!("{hanging} ");
    let next_width = width - 1;
    let n = shape[axis];
    let show_summary = summarise && 2 * EDGE_ITEMS < n;
    let (leading, trailing) = if show_summary {
        (EDGE_ITEMS, EDGE_ITEMS)
    } else {
        (0, n)
    };
    let item = |i: i64, index: &mut Vec<i64>| {
        index.push(i);
        let s = recurse(
            tensor,
            values,
            format,
            index,
            &next_hanging,
            next_width,
            summarise,
        );
        index.pop();
        s
    };
    let mut s = String::new();
    let axes_left = shape.len() - axis;
    if axes_left == 1 {
        let elem_width = width - 1;
        let mut line = hanging.to_string();
        for i in 0..leading {
            let word = item(i, index);
            extend_line(&mut s, &mut line, &word, elem_width, hanging);
            line.push_str(", ");
        }
        if show_summary {
            extend_line(&mut s, &mut line, "...", elem_width, hanging);
            line.push_str(", ");
        }
        for i in (2..=trailing).rev() {
            let word = item(n - i, index);
            extend_line(&mut s, &mut line, &word, elem_width, hanging);
            line.push_str(", ");
        }
        if n > 0 {
            let word = item(n - 1, index);
            extend_line(&mut s, &mut line, &word, elem_width, hanging);
        }
        s.push_str(&line);
    } else {
        let line_sep = format!(",{}", "\n".repeat(axes_left - 1));
        for i in 0..leading {
            let nested = item(i, index);
            s.push_str(hanging);
            s.push_str(&nested);
            s.push_str(&line_sep);
        }
        if show_summary {
            s.push_str(hanging);
            s.push_str("...");
            s.push_str(&line_sep);
        }
        for i in (2..=trailing).rev() {
            let nested = item(n - i, index);
            s.push_str(hanging);
            s.push_str(&nested);
            s.push_str(&line_sep);
        }
        if n > 0 {
            let nested = item(n - 1, index);
            s.push_str(hanging);
            s.push_str(&nested);
        }
    }
    format!("[{}]", &s[hanging.len().min(s.len())..])
}

fn extend_line(s: &mut String, line: &mut String, word: &str, width: usize, hanging: &str) {
    let needs_wrap = line.len() + word.len() > width && line.len() > hanging.len();
    if needs_wrap {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = hanging.to_string();
    }
    line.push_str(word);
}

/// How every element of one array is written (NumPy's `FloatingFormat`,
/// `IntegerFormat`, `BoolFormat`).
enum ElementFormat {
    Bool { scalar: bool },
    Int { width: usize },
    Float(FloatFormat),
}

struct FloatFormat {
    dtype: DataType,
    exp: bool,
    /// Fraction digits (positional: most shown; scientific: all shown).
    precision: usize,
    pad_left: usize,
    pad_right: usize,
    exp_size: usize,
}

impl ElementFormat {
    fn new(dtype: DataType, shown: &[f64], scalar: bool) -> ElementFormat {
        if dtype.is_bool() {
            return ElementFormat::Bool { scalar };
        }
        if matches!(dtype.code, TypeCode::Int | TypeCode::UInt) {
            let width = shown
                .iter()
                .map(|v| format!("{}", *v as i128).len())
                .max()
                .unwrap_or(0);
            return ElementFormat::Int { width };
        }
        ElementFormat::Float(FloatFormat::new(dtype, shown))
    }

    fn format(&self, v: f64) -> String {
        match self {
            ElementFormat::Bool { scalar } => match (v != 0.0, scalar) {
                (true, false) => " True".into(),
                (true, true) => "True".into(),
                (false, _) => "False".into(),
            },
            ElementFormat::Int { width } => format!("{:>width$}", v as i128),
            ElementFormat::Float(f) => f.format(v),
        }
    }
}

/// One element as the shortest text that identifies it in its dtype
/// (`0.1` for the float32 nearest to 0.1, not its float64 expansion).
pub fn scalar_text(v: f64, dtype: DataType) -> String {
    if !v.is_finite() || matches!(dtype.code, TypeCode::Int | TypeCode::UInt) {
        return format!("{v}");
    }
    (0..=17)
        .map(|p| format!("{v:.p$e}"))
        .find(|s| round_trips(s, v, dtype))
        .and_then(|s| s.parse::<f64>().ok())
        .map_or_else(|| format!("{v}"), |short| format!("{short}"))
}

/// Whether `text` reads back as `v` in `dtype`.
fn round_trips(text: &str, v: f64, dtype: DataType) -> bool {
    let Ok(back) = text.parse::<f64>() else {
        return false;
    };
    match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16) => half::f16::from_f64(back) == half::f16::from_f64(v),
        (TypeCode::BFloat, 16) => half::bf16::from_f64(back) == half::bf16::from_f64(v),
        (TypeCode::Float, 32) => back as f32 == v as f32,
        _ => back == v,
    }
}

/// The shortest positional digits identifying `v` in its type, at most
/// `PRECISION` after the point, `trim='.'` (`1.`, `0.25`).
fn positional(v: f64, dtype: DataType) -> String {
    let digits = (0..=PRECISION).find(|&p| round_trips(&format!("{v:.p$}"), v, dtype));
    let mut s = format!("{v:.prec$}", prec = digits.unwrap_or(PRECISION));
    if digits.is_none() && s.contains('.') {
        // Cut at the precision: trailing zeros go (`trim='.'`).
        s.truncate(s.trim_end_matches('0').len());
    }
    if s.contains('.') {
        s
    } else {
        format!("{s}.")
    }
}

/// The shortest scientific digits identifying `v`, mantissa and exponent
/// apart (`("1.5", -5)`).
fn scientific(v: f64, dtype: DataType) -> (String, i32) {
    let digits = (0..=PRECISION).find(|&p| round_trips(&format!("{v:.p$e}"), v, dtype));
    let s = format!("{v:.prec$e}", prec = digits.unwrap_or(PRECISION));
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mut mantissa = mantissa.to_string();
    if digits.is_none() {
        mantissa.truncate(mantissa.trim_end_matches('0').len());
    }
    if !mantissa.contains('.') {
        mantissa.push('.');
    }
    (mantissa, exp.parse().unwrap_or(0))
}

impl FloatFormat {
    fn new(dtype: DataType, shown: &[f64]) -> FloatFormat {
        let finite: Vec<f64> = shown.iter().copied().filter(|v| v.is_finite()).collect();
        let non_zero: Vec<f64> = finite
            .iter()
            .map(|v| v.abs())
            .filter(|v| *v != 0.0)
            .collect();
        let mut exp = false;
        if !non_zero.is_empty() {
            let max = non_zero.iter().copied().fold(f64::MIN, f64::max);
            let min = non_zero.iter().copied().fold(f64::MAX, f64::min);
            exp = max >= 1e8 || min < 1e-4 || max / min > 1e3;
        }
        let mut f = FloatFormat {
            dtype,
            exp,
            precision: PRECISION,
            pad_left: 0,
            pad_right: 0,
            exp_size: 0,
        };
        if finite.is_empty() {
            f.exp = false;
        } else if exp {
            let parts: Vec<(String, i32)> = finite.iter().map(|v| scientific(*v, dtype)).collect();
            f.precision = parts
                .iter()
                .map(|(m, _)| m.split_once('.').map_or(0, |(_, fr)| fr.len()))
                .max()
                .unwrap_or(0);
            f.exp_size = parts
                .iter()
                .map(|(_, e)| e.unsigned_abs().to_string().len().max(2))
                .max()
                .unwrap_or(2);
            f.pad_left = parts
                .iter()
                .map(|(m, _)| m.split_once('.').map_or(m.len(), |(i, _)| i.len()))
                .max()
                .unwrap_or(0);
            f.pad_right = f.exp_size + 2 + f.precision;
        } else {
            let strs: Vec<String> = finite.iter().map(|v| positional(*v, dtype)).collect();
            f.pad_left = strs
                .iter()
                .map(|s| s.split_once('.').map_or(s.len(), |(i, _)| i.len()))
                .max()
                .unwrap_or(0);
            f.pad_right = strs
                .iter()
                .map(|s| s.split_once('.').map_or(0, |(_, fr)| fr.len()))
                .max()
                .unwrap_or(0);
        }
        if finite.len() != shown.len() {
            let neg_inf = shown.iter().any(|v| v.is_infinite() && *v < 0.0);
            let offset = f.pad_right + 1;
            let inf_len = 3 + usize::from(neg_inf);
            f.pad_left = f
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max(inf_len.saturating_sub(offset));
        }
        f
    }

    fn format(&self, v: f64) -> String {
        let total = self.pad_left + self.pad_right + 1;
        if v.is_nan() {
            return format!("{:>total$}", "nan");
        }
        if v.is_infinite() {
            return format!("{:>total$}", if v < 0.0 { "-inf" } else { "inf" });
        }
        if self.exp {
            // Every value shows `precision` digits, the shorter ones with
            // more digits of their exact value (Dragon4's `min_digits`).
            let (short, _) = scientific(v, self.dtype);
            let short_digits = short.split_once('.').map_or(0, |(_, f)| f.len());
            let text = format!("{v:.prec$e}", prec = self.precision.max(short_digits));
            let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
            let exp: i32 = exp.parse().unwrap_or(0);
            let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let sign = if exp < 0 { '-' } else { '+' };
            format!(
                "{int:>left$}.{frac}e{sign}{:0>size$}",
                exp.unsigned_abs(),
                left = self.pad_left,
                size = self.exp_size
            )
        } else {
            let s = positional(v, self.dtype);
            let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
            format!(
                "{int:>left$}.{frac:<right$}",
                left = self.pad_left,
                right = self.pad_right
            )
        }
    }
}

/// A whole value as `relay run` prints it: a tensor as TVM prints an
/// `NDArray`; anything else as its structure, then each tensor in it under
/// its path (`output.0`).
pub fn value_text(value: &crate::Value) -> String {
    match value {
        crate::Value::Tensor(t) => format!("{}\n", ndarray_text(t)),
        other => {
            let mut out = format!("{}\n", other.skeleton());
            for leaf in other.leaves() {
                out.push_str(&format!(
                    "output{}:\n{}\n",
                    leaf.path,
                    ndarray_text(&leaf.tensor)
                ));
            }
            out
        }
    }
}
