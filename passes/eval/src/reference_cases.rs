//! The kernels against NumPy's reference values: each case of
//! `tests/reference/kernel_cases.txt` and `vision_cases.txt` (written by
//! `gen_kernel_cases.py` and `gen_vision_cases.py` beside them, by
//! algorithms independent of ours) is evaluated and compared,
//! bit for bit where the case's tolerance is 0, else within that relative
//! tolerance (float sums whose order NumPy does not share).

use super::{eval_call, CallInfo, Value};
use relay_ir::dtype::DataType;
use relay_ir::metadata::TensorData;
use relay_ir::{AttrValue, Attrs};

const CASE_FILES: [&str; 2] = [
    include_str!("../tests/reference/kernel_cases.txt"),
    include_str!("../tests/reference/vision_cases.txt"),
];

struct Case {
    name: String,
    op: String,
    attrs: Vec<(String, AttrValue)>,
    args: Vec<Value>,
    outs: Vec<TensorData>,
    tol: f64,
}

fn tensor(fields: &[&str]) -> TensorData {
    let dtype = DataType::parse(fields[0]).expect("a dtype");
    let shape: Vec<i64> = if fields[1] == "-" {
        Vec::new()
    } else {
        fields[1]
            .split(',')
            .map(|d| d.parse().expect("a dim"))
            .collect()
    };
    let values = &fields[2..];
    if dtype.is_float() {
        let v: Vec<f64> = values.iter().map(|x| x.parse().expect("a float")).collect();
        TensorData::from_f64s(dtype, shape, &v).expect("a tensor")
    } else {
        // uint64 words above i64::MAX keep their bits.
        let v: Vec<i64> = values
            .iter()
            .map(|x| x.parse::<i128>().expect("an int") as i64)
            .collect();
        TensorData::from_i64s(dtype, shape, &v).expect("a tensor")
    }
}

fn attr(kind: &str, values: &[&str]) -> AttrValue {
    match kind {
        "int" => AttrValue::Int(values[0].parse().expect("an int")),
        "ints" => AttrValue::Array(
            values
                .iter()
                .map(|v| AttrValue::Int(v.parse().expect("an int")))
                .collect(),
        ),
        "pairs" => AttrValue::Array(values.chunks(2).map(|pair| attr("ints", pair)).collect()),
        "float" => AttrValue::Double(values[0].parse().expect("a float")),
        "bool" => AttrValue::Bool(values[0] == "1"),
        "str" => AttrValue::Str(values.first().copied().unwrap_or("").to_string()),
        "dtype" => AttrValue::DataType(DataType::parse(values[0]).expect("a dtype")),
        other => panic!("unknown attribute kind {other}"),
    }
}

fn parse() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut current: Option<Case> = None;
    for line in CASE_FILES
        .iter()
        .flat_map(|text| text.lines())
        .filter(|l| !l.starts_with('#'))
    {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some((&head, rest)) = fields.split_first() else {
            continue;
        };
        if head == "case" {
            current = Some(Case {
                name: rest[0].to_string(),
                op: String::new(),
                attrs: Vec::new(),
                args: Vec::new(),
                outs: Vec::new(),
                tol: 0.0,
            });
            continue;
        }
        let case = current.as_mut().expect("inside a case");
        match head {
            "op" => case.op = rest[0].to_string(),
            "attr" => case
                .attrs
                .push((rest[0].to_string(), attr(rest[1], &rest[2..]))),
            "arg" => case.args.push(Value::tensor(tensor(rest))),
            "tuple" => case.args.push(Value::Tuple(Vec::new())),
            "field" => match case.args.last_mut() {
                Some(Value::Tuple(fields)) => fields.push(Value::tensor(tensor(rest))),
                _ => panic!("a field outside a tuple"),
            },
            "out" => case.outs.push(tensor(rest)),
            "tol" => case.tol = rest[0].parse().expect("a tolerance"),
            "end" => cases.push(current.take().expect("a case")),
            other => panic!("unknown line {other}"),
        }
    }
    cases
}

fn check(case: &Case, got: &TensorData, want: &TensorData) -> Result<(), String> {
    if got.dtype != want.dtype || got.shape != want.shape {
        return Err(format!(
            "{}: got {} {:?}, want {} {:?}",
            case.name, got.dtype, got.shape, want.dtype, want.shape
        ));
    }
    if case.tol == 0.0 {
        // Integers, and floats NumPy computes exactly.
        let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
        if g != w {
            return Err(format!("{}: got {g:?}, want {w:?}", case.name));
        }
        return Ok(());
    }
    let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        if (a - b).abs() > case.tol * b.abs().max(1.0) {
            return Err(format!("{}: element {i}: got {a}, want {b}", case.name));
        }
    }
    Ok(())
}

#[test]
fn kernels_agree_with_numpy_reference_values() {
    let cases = parse();
    assert!(cases.len() >= 30, "the case file was read");
    let mut failures = Vec::new();
    for case in &cases {
        let attrs = Attrs::new(
            "test",
            case.attrs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        let info = CallInfo::new(&case.op, Some(&attrs));
        let result = match eval_call(&info, &case.args) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        let got: Vec<&TensorData> = match &result {
            Value::Tensor(t) => vec![t],
            Value::Tuple(fields) => fields.iter().filter_map(Value::as_tensor).collect(),
        };
        if got.len() != case.outs.len() {
            failures.push(format!("{}: {} outputs", case.name, got.len()));
            continue;
        }
        for (g, w) in got.iter().zip(&case.outs) {
            if let Err(e) = check(case, g, w) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
