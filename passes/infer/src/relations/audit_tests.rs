//! The robustness audit of every implemented type relation: each operator
//! of the table whose relation we implement is called on inputs of rank 0
//! to 6 (tensors with ordinary, zero, huge, negative, int64 and unknown
//! dimensions, in several dtypes, and tuples of them) and with adversarial
//! attribute values (axes far out of range, empty and over-long lists,
//! zero, negative and huge integers, layouts of every length, NaN and
//! infinite numbers), and must answer every call with a result, a wait or a
//! type error — never a panic.
//!
//! The cases are data: the tables below list the values per attribute
//! type, the input forms and the ranks; the test crosses them (see
//! [`cases_of`]) and reports every panic with its operator, inputs and
//! attributes.

use super::by_name;
use super::test_util::convert;
use crate::relation_contract::RelationArgs;
use relay_ir::dtype::DataType;
use relay_ir::op::default_value;
use relay_ir::op::{self, AttrType, OpDef};
use relay_ir::{AttrValue, Attrs, Dim, Type};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The ranks every input takes.
const RANKS: std::ops::RangeInclusive<usize> = 0..=6;

/// Integers every integer attribute takes (alone, and as list elements).
const ADVERSARIAL_INTS: &[i64] = &[
    -100,
    -2,
    -1,
    0,
    1,
    2,
    3,
    100,
    2_147_483_648,
    99_999_999_999,
    i64::MAX,
    i64::MIN,
];

/// Numbers every floating-point attribute takes.
const ADVERSARIAL_DOUBLES: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -1.0,
    0.0,
    0.5,
    1e300,
    99_999_999_999.0,
];

/// Strings every string attribute takes: layouts of every length (split
/// ones, repeated axes, lower case only), modes, the empty string.
const ADVERSARIAL_STRINGS: &[&str] = &[
    "",
    "N",
    "W",
    "NC",
    "HW",
    "NCW",
    "NWC",
    "NCHW",
    "NHWC",
    "HWCN",
    "OIHW",
    "HWIO",
    "NCDHW",
    "NDHWC",
    "NCHW4c",
    "NCHW16c",
    "OIHW4i4o",
    "NCHW4n",
    "NCHWc",
    "NN",
    "nchw",
    "ABCDEFGHIJ",
    "4c",
    "NCHW0c",
    "NC99999999999c",
    "float32",
    "nearest_neighbor",
    "linear",
    "cubic",
    "reflect",
    "edge",
    "constant",
    "align_corners",
    "SAME",
    "x",
];

/// Data types every data type attribute takes.
const ADVERSARIAL_DTYPES: &[&str] = &[
    "", "int8", "uint8", "int32", "int64", "float16", "float32", "float64", "bool", "int4",
    "handle",
];

/// How the dimensions of an input are chosen.
#[derive(Clone, Copy, Debug)]
enum Dims {
    /// 2, 3, 4, … (int32).
    Ordinary,
    /// The same, int64.
    Int64,
    /// All 0.
    Zero,
    /// All 1.
    One,
    /// All 99999999999 (int64).
    Huge,
    /// All -1.
    Negative,
    /// All `?`.
    Unknown,
}

const ALL_DIMS: &[Dims] = &[
    Dims::Ordinary,
    Dims::Int64,
    Dims::Zero,
    Dims::One,
    Dims::Huge,
    Dims::Negative,
    Dims::Unknown,
];

fn dims(rank: usize, how: Dims) -> Vec<Dim> {
    (0..rank)
        .map(|i| {
            let ordinary = i as i64 + 2;
            match how {
                Dims::Ordinary => Dim::int32(ordinary),
                Dims::Int64 => Dim::int64(ordinary),
                Dims::Zero => Dim::int32(0),
                Dims::One => Dim::int32(1),
                Dims::Huge => Dim::int64(99_999_999_999),
                Dims::Negative => Dim::int32(-1),
                Dims::Unknown => Dim::Any,
            }
        })
        .collect()
}

/// How the dtypes of the inputs are chosen.
#[derive(Clone, Copy, Debug)]
enum Dtypes {
    /// Every input the same dtype.
    All(&'static str),
    /// By argument name, as quantized and indexing operators want them
    /// (scales float32, zero points int32, indices int64, data int8).
    ByName,
}

const ALL_DTYPES: &[Dtypes] = &[
    Dtypes::All("float32"),
    Dtypes::All("int32"),
    Dtypes::All("int64"),
    Dtypes::All("int8"),
    Dtypes::All("bool"),
    Dtypes::ByName,
];

fn dtype_of(op: &OpDef, slot: usize, how: Dtypes) -> DataType {
    let name = match how {
        Dtypes::All(name) => name,
        Dtypes::ByName => {
            let arg = op.arguments.get(slot).map_or("", |a| a.name.as_str());
            if arg.contains("scale") {
                "float32"
            } else if arg.contains("zero_point") || arg.contains("bias") {
                "int32"
            } else if arg.contains("ind") || arg.contains("shape") || arg.contains("label") {
                "int64"
            } else {
                "int8"
            }
        }
    };
    name.parse().expect("a data type")
}

/// The type of one input.
#[derive(Clone, Copy, Debug)]
enum Form {
    Tensor,
    /// A tuple of two tensors of the rank.
    Tuple,
    /// An incomplete type.
    Unknown,
}

/// One relation call.
struct Case {
    what: String,
    types: Vec<Type>,
    attrs: Option<Attrs>,
}

fn input(op: &OpDef, slot: usize, form: Form, rank: usize, how: Dims, dtypes: Dtypes) -> Type {
    let tensor = || Type::tensor(dims(rank, how), dtype_of(op, slot, dtypes));
    match form {
        Form::Tensor => tensor(),
        Form::Tuple => Type::tuple(vec![tensor(), tensor()]),
        Form::Unknown => Type::incomplete(),
    }
}

/// Every value an attribute of type `ty` takes in the audit.
fn adversarial_values(ty: &AttrType) -> Vec<AttrValue> {
    let int = |v: i64| AttrValue::int_imm(v, DataType::INT32);
    let mut values = Vec::new();
    if ty.is_nullable() {
        values.push(AttrValue::Null);
    }
    match ty {
        AttrType::Int | AttrType::UInt64 => {
            values.extend(ADVERSARIAL_INTS.iter().map(|&v| AttrValue::Int(v)))
        }
        AttrType::Integer | AttrType::PrimExpr | AttrType::ObjectRef => {
            values.extend(ADVERSARIAL_INTS.iter().map(|&v| int(v)));
            values.push(AttrValue::Any);
            if matches!(ty, AttrType::ObjectRef) {
                // `split`'s indices_or_sections: a list too.
                values.extend(int_lists(&int));
            }
        }
        AttrType::Double => {
            values.extend(ADVERSARIAL_DOUBLES.iter().map(|&v| AttrValue::Double(v)))
        }
        AttrType::FloatImm => {
            values.extend(ADVERSARIAL_DOUBLES.iter().map(|&v| AttrValue::FloatImm {
                value: v,
                dtype: DataType::FLOAT32,
            }))
        }
        AttrType::Bool | AttrType::BoolObj => {
            values.extend([AttrValue::Bool(false), AttrValue::Bool(true)])
        }
        AttrType::StdString | AttrType::String => values.extend(
            ADVERSARIAL_STRINGS
                .iter()
                .map(|s| AttrValue::Str(s.to_string())),
        ),
        AttrType::DataType => values.extend(
            ADVERSARIAL_DTYPES
                .iter()
                .map(|s| AttrValue::DataType(s.parse().unwrap_or_default())),
        ),
        AttrType::Optional(inner) => values.extend(adversarial_values(inner)),
        AttrType::Array(inner) => match &**inner {
            AttrType::Array(_) => {
                // `pad_width`: lists of pairs (and of the wrong lengths).
                for len in 0..=7 {
                    for pair in [
                        vec![],
                        vec![0],
                        vec![0, 0],
                        vec![-1, 99_999_999_999],
                        vec![1, 2, 3],
                    ] {
                        let item = AttrValue::Array(pair.iter().map(|&v| int(v)).collect());
                        values.push(AttrValue::Array(vec![item; len]));
                    }
                }
            }
            AttrType::StdString | AttrType::String => {
                for len in 0..=3 {
                    for s in ["", "NCHW", "x"] {
                        values.push(AttrValue::Array(vec![AttrValue::Str(s.into()); len]));
                    }
                }
            }
            AttrType::Double | AttrType::FloatImm => {
                for len in 0..=7 {
                    for &v in ADVERSARIAL_DOUBLES {
                        let item = AttrValue::FloatImm {
                            value: v,
                            dtype: DataType::FLOAT32,
                        };
                        values.push(AttrValue::Array(vec![item; len]));
                    }
                }
            }
            _ => values.extend(int_lists(&int)),
        },
        _ => {}
    }
    values
}

/// Integer lists of every length up to 7 of every adversarial value, plus
/// mixed lists and lists with unknown or null elements.
fn int_lists(int: &dyn Fn(i64) -> AttrValue) -> Vec<AttrValue> {
    let mut values = Vec::new();
    for len in 0..=7 {
        for &v in ADVERSARIAL_INTS {
            values.push(AttrValue::Array(vec![int(v); len]));
        }
        values.push(AttrValue::Array(vec![AttrValue::Any; len]));
        values.push(AttrValue::Array(vec![AttrValue::Null; len]));
        values.push(AttrValue::Array(
            (0..len as i64).map(|i| int(i - 3)).collect(),
        ));
    }
    values
}

/// The attrs object with every field at its default, then `overrides`.
fn attrs_with(op: &OpDef, overrides: &[(&str, AttrValue)]) -> Option<Attrs> {
    let schema = op.attrs()?;
    let fields = schema
        .fields
        .iter()
        .map(|field| {
            let value = match overrides.iter().find(|(key, _)| *key == field.name) {
                Some((_, value)) => convert(value.clone(), &field.ty),
                None => default_value(&field.default, &field.ty),
            };
            (field.name.clone(), value)
        })
        .collect();
    Some(Attrs::new(schema.type_key.clone(), fields))
}

/// The attribute variants: the defaults, each field at each adversarial
/// value, every integer-list field at once set to one list (so `strides`,
/// `padding`, `dilation`, `pool_size` agree in length), and no attrs at all.
fn attr_variants(op: &OpDef) -> Vec<(String, Option<Attrs>)> {
    let mut variants = vec![("defaults".to_string(), attrs_with(op, &[]))];
    let Some(schema) = op.attrs() else {
        return variants;
    };
    variants.push(("no attrs".to_string(), None));
    for field in &schema.fields {
        for value in adversarial_values(&field.ty) {
            let what = format!("{}={value:?}", field.name);
            variants.push((what, attrs_with(op, &[(&field.name, value)])));
        }
    }
    let int_list_fields: Vec<&str> = schema
        .fields
        .iter()
        .filter(|f| {
            f.ty.element_type().is_some_and(|t| {
                matches!(t, AttrType::Integer | AttrType::PrimExpr | AttrType::Int)
            })
        })
        .map(|f| f.name.as_str())
        .collect();
    if !int_list_fields.is_empty() {
        for len in 0..=7 {
            for &v in ADVERSARIAL_INTS {
                let list = AttrValue::Array(vec![AttrValue::int_imm(v, DataType::INT32); len]);
                let overrides: Vec<(&str, AttrValue)> =
                    int_list_fields.iter().map(|&f| (f, list.clone())).collect();
                variants.push((
                    format!("every list=[{v}; {len}]"),
                    attrs_with(op, &overrides),
                ));
            }
        }
    }
    variants
}

/// The numbers of inputs to try: the declared one, or 1 to 3 for a
/// variadic operator.
fn input_counts(op: &OpDef) -> Vec<usize> {
    match usize::try_from(op.num_inputs) {
        Ok(n) => vec![n],
        Err(_) => vec![1, 2, 3],
    }
}

/// Every call the audit makes for `op`.
fn cases_of(op: &OpDef) -> Vec<Case> {
    let mut cases = Vec::new();
    let attr_variants = attr_variants(op);
    let defaults = attrs_with(op, &[]);
    for n in input_counts(op) {
        let out = Type::incomplete();
        // Every input form, rank, dimension kind and dtype, default attrs;
        // then the output already a tensor of the rank.
        for form in [Form::Tensor, Form::Tuple, Form::Unknown] {
            for rank in RANKS {
                for &how in ALL_DIMS {
                    for &dtypes in ALL_DTYPES {
                        let mut types: Vec<Type> = (0..n)
                            .map(|slot| input(op, slot, form, rank, how, dtypes))
                            .collect();
                        types.push(out.clone());
                        let what = format!("{n} inputs {form:?} rank {rank} {how:?} {dtypes:?}");
                        cases.push(Case {
                            what: what.clone(),
                            types: types.clone(),
                            attrs: defaults.clone(),
                        });
                        *types.last_mut().unwrap() = input(op, 0, Form::Tensor, rank, how, dtypes);
                        cases.push(Case {
                            what: format!("{what}, output given"),
                            types,
                            attrs: defaults.clone(),
                        });
                    }
                }
            }
        }
        // One input of each rank while the others are rank 4.
        for slot in 0..n {
            for rank in RANKS {
                for &dtypes in &[Dtypes::All("float32"), Dtypes::ByName] {
                    let mut types: Vec<Type> = (0..n)
                        .map(|i| {
                            let r = if i == slot { rank } else { 4 };
                            input(op, i, Form::Tensor, r, Dims::Ordinary, dtypes)
                        })
                        .collect();
                    types.push(out.clone());
                    cases.push(Case {
                        what: format!(
                            "{n} inputs, input {slot} rank {rank}, others rank 4 {dtypes:?}"
                        ),
                        types,
                        attrs: defaults.clone(),
                    });
                }
            }
        }
        // Every attribute variant on every rank.
        for (what_attrs, attrs) in &attr_variants {
            for rank in RANKS {
                for &dtypes in &[Dtypes::All("float32"), Dtypes::ByName] {
                    let mut types: Vec<Type> = (0..n)
                        .map(|slot| input(op, slot, Form::Tensor, rank, Dims::Ordinary, dtypes))
                        .collect();
                    types.push(out.clone());
                    cases.push(Case {
                        what: format!("{n} inputs rank {rank} {dtypes:?}, {what_attrs}"),
                        types,
                        attrs: attrs.clone(),
                    });
                }
            }
        }
    }
    cases
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string())
}

#[test]
fn no_relation_panics_on_adversarial_inputs() {
    let mut ops_run = 0;
    let mut calls = 0usize;
    let mut panics = Vec::new();
    // `RELATION_AUDIT_TRACE=1` names each operator before its calls (to
    // find one that hangs or aborts).
    let trace = std::env::var_os("RELATION_AUDIT_TRACE").is_some();
    for op in op::all_ops() {
        let Some(rel) = op.type_rel.as_deref().and_then(by_name) else {
            continue;
        };
        ops_run += 1;
        if trace {
            eprintln!("auditing {}", op.name);
        }
        for case in cases_of(op) {
            calls += 1;
            let result = catch_unwind(AssertUnwindSafe(|| {
                rel(&RelationArgs::new(&case.types, case.attrs.as_ref()))
            }));
            if let Err(payload) = result {
                panics.push(format!(
                    "{}: {}: {}",
                    op.name,
                    case.what,
                    panic_message(&*payload)
                ));
            }
        }
    }
    eprintln!("relation audit: {ops_run} operators, {calls} calls");
    // The audit must actually cover the table.
    assert!(ops_run >= 190, "only {ops_run} operators audited");
    assert!(calls > 500_000, "only {calls} calls");
    let shown: Vec<&String> = panics.iter().take(60).collect();
    assert!(
        panics.is_empty(),
        "{} relation calls panicked:\n{}",
        panics.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
