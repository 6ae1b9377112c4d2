//! Operator calls for the program generator: for any operator of the table
//! (`relay_passes::op`), the types of its arguments and the values of its
//! attributes, mostly inside their valid ranges and sometimes just outside.
//!
//! Validity is not encoded here: the generator proposes, InferType decides
//! (see [`super::typing`]). What is encoded is how to make a proposal likely
//! to be accepted: shapes that fit the operator's relation (a convolution's
//! weight matches its data's channels, a pooling window has one size per
//! spatial dimension) and attribute values chosen from the field's name,
//! type and default, in the style of GenCoG's per-operator constraints but
//! driven by the table instead of a hand-written spec per operator.

use super::entropy::Entropy;
use super::typing::{Ty, DTYPES};
use relay_passes::op::{AttrDefault, AttrField, AttrType, OpDef};

/// How far outside the valid ranges proposals may go.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Attribute values far beyond any real tensor (10^11, 2^31): a shape
    /// or a count no program needs, which must be rejected with a
    /// diagnostic rather than allocated.
    pub huge_values: bool,
    /// Pooling operators on tensors of a rank other than their layout's.
    pub pool_rank_mismatch: bool,
    /// `if (True)` / `if (False)`: folding one leaves a `let` whose value
    /// is a `let` chain, which the printer (as TVM's) writes in a form the
    /// parser rejects (issue 15, item 6).
    pub literal_if_conditions: bool,
    /// Operators left out (known crashes being fixed elsewhere).
    pub skip_ops: &'static [&'static str],
    /// Percentage of calls that get one deliberately invalid choice.
    pub outside_percent: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            huge_values: true,
            pool_rank_mismatch: true,
            literal_if_conditions: true,
            skip_ops: &[],
            outside_percent: 10,
        }
    }
}

/// One argument of a proposed call.
#[derive(Debug, Clone)]
pub enum ArgPlan {
    /// A value of this type (an existing one, a new parameter or a literal).
    Value(Ty),
    /// A tuple literal of values of these types.
    Tuple(Vec<Ty>),
}

/// A proposed call: argument types and `key=value` attribute texts.
#[derive(Debug, Clone)]
pub struct CallPlan {
    pub op: &'static OpDef,
    pub args: Vec<ArgPlan>,
    pub attrs: Vec<(String, String)>,
}

/// What attribute choices depend on: the first argument's shape.
struct Ctx {
    shape: Vec<i64>,
    /// The number of spatial dimensions the operator works on (1, 2, 3).
    spatial: usize,
    /// Output channels / units chosen for the weight, if any.
    out_channels: Option<i64>,
    outside: bool,
    limits: Limits,
}

impl Ctx {
    fn rank(&self) -> i64 {
        self.shape.len() as i64
    }
}

/// A random dtype, weighted toward float32.
pub fn random_dtype(e: &mut Entropy) -> &'static str {
    DTYPES[e.below(DTYPES.len())]
}

fn float_dtype(e: &mut Entropy) -> &'static str {
    const FLOATS: [&str; 5] = ["float32", "float32", "float32", "float16", "float64"];
    FLOATS[e.below(FLOATS.len())]
}

/// A shape of `rank` small dimensions.
pub fn random_shape(e: &mut Entropy, rank: usize) -> Vec<i64> {
    (0..rank).map(|_| *e.pick(&[1, 2, 2, 3, 4, 5])).collect()
}

/// A tensor type of a random rank (0 to 5, mostly 2 to 4).
pub fn random_tensor(e: &mut Entropy) -> Ty {
    let rank = *e.pick(&[0, 1, 2, 2, 3, 3, 4, 4, 4, 5]);
    let dtype = random_dtype(e);
    Ty::tensor(&random_shape(e, rank), dtype)
}

/// The number of spatial dimensions an operator's name or relation names.
fn spatial_dims(op: &OpDef) -> usize {
    let text = format!("{} {}", op.name, op.type_rel.as_deref().unwrap_or(""));
    if text.contains("1d") || text.contains("1D") {
        1
    } else if text.contains("3d") || text.contains("3D") {
        3
    } else {
        2
    }
}

fn arg_count(op: &OpDef, e: &mut Entropy) -> usize {
    if op.is_variadic() {
        e.range(1, 3) as usize
    } else if op.num_inputs >= 0 && op.num_inputs as usize != op.arguments.len() {
        op.num_inputs as usize
    } else {
        op.arguments.len()
    }
}

/// Proposes a call of `op`. `base`, when given, is the type of an existing
/// value the first argument should reuse (so that calls chain).
pub fn plan_call(
    op: &'static OpDef,
    base: Option<&Ty>,
    e: &mut Entropy,
    limits: Limits,
) -> CallPlan {
    let outside = e.chance(limits.outside_percent);
    let rel = op.type_rel.as_deref().unwrap_or("");
    let spatial = spatial_dims(op);
    let quantized = op.name.starts_with("qnn.");
    let mut dtype = match base.and_then(Ty::static_tensor) {
        Some((_, dtype)) => dtype.to_string(),
        None if quantized => e.pick(&["int8", "uint8"]).to_string(),
        None => random_dtype(e).to_string(),
    };
    let mut attrs: Vec<(String, String)> = Vec::new();
    let mut out_channels = None;
    let base_shape = base.and_then(Ty::static_tensor).map(|(s, _)| s);
    let n = arg_count(op, e);

    // Relation-specific shapes: the operators whose arguments must agree
    // with each other in more than "same type".
    let mut args: Vec<ArgPlan> = Vec::new();
    let is_conv = rel.starts_with("Conv")
        && !["Winograd", "Gemm", "NCHWc", "Backward"]
            .iter()
            .any(|k| rel.contains(k));
    let is_pool = rel.contains("Pool") && !rel.contains("Grad");
    if is_conv && n >= 2 {
        if !dtype.starts_with("float") {
            dtype = float_dtype(e).to_string();
        }
        let (batch, channels, out) = (e.range(1, 2), e.range(1, 4), e.range(1, 4));
        let kernel: Vec<i64> = (0..spatial).map(|_| e.range(1, 3)).collect();
        let mut data = vec![batch, channels];
        data.extend((0..spatial).map(|_| e.range(3, 6)));
        let mut weight = if rel.contains("Transpose") {
            vec![channels, out]
        } else {
            vec![out, channels]
        };
        weight.extend(&kernel);
        args.push(ArgPlan::Value(Ty::tensor(&data, &dtype)));
        args.push(ArgPlan::Value(Ty::tensor(&weight, &dtype)));
        if e.chance(50) {
            attrs.push(("kernel_size".into(), int_list(&kernel)));
        }
        if e.chance(50) {
            attrs.push(("channels".into(), out.to_string()));
        }
        out_channels = Some(out);
    } else if rel == "Dense" || rel == "Matmul" || rel == "BatchMatmul" {
        if !dtype.starts_with("float") && !outside {
            dtype = float_dtype(e).to_string();
        }
        let (m, k, units) = (e.range(1, 4), e.range(1, 5), e.range(1, 4));
        let (a, b) = match rel {
            "Dense" => (vec![m, k], vec![units, k]),
            "Matmul" => (vec![m, k], vec![k, units]),
            _ => {
                let batch = e.range(1, 3);
                (vec![batch, m, k], vec![batch, k, units])
            }
        };
        args.push(ArgPlan::Value(Ty::tensor(&a, &dtype)));
        args.push(ArgPlan::Value(Ty::tensor(&b, &dtype)));
        if rel != "BatchMatmul" && (rel == "Matmul" || e.chance(50)) {
            attrs.push(("units".into(), units.to_string()));
        }
        out_channels = Some(units);
    } else if is_pool {
        let rank = if rel.starts_with("Global") {
            4
        } else {
            spatial + 2
        };
        let rank = if outside && limits.pool_rank_mismatch {
            e.range(0, rank as i64 + 1) as usize
        } else {
            rank
        };
        let mut shape = random_shape(e, rank);
        for d in shape.iter_mut().skip(2) {
            *d += 2;
        }
        if !dtype.starts_with("float") && !outside {
            dtype = float_dtype(e).to_string();
        }
        args.push(ArgPlan::Value(Ty::tensor(&shape, &dtype)));
    } else if matches!(rel, "Concatenate" | "Stack" | "Meshgrid") {
        let element = match base {
            Some(ty) if ty.is_tensor() => ty.clone(),
            _ => random_tensor(e),
        };
        let count = e.range(1, 3) as usize;
        let mut fields = vec![element.clone(); count];
        if outside && count > 1 {
            fields[1] = random_tensor(e);
        }
        args.push(ArgPlan::Tuple(fields));
    } else if matches!(
        rel,
        "BiasAdd" | "BatchNorm" | "LayerNorm" | "InstanceNorm" | "GroupNorm" | "PRelu"
    ) {
        if !dtype.starts_with("float") && !outside {
            dtype = float_dtype(e).to_string();
        }
        let rank = e.range(2, 4) as usize;
        let mut shape = random_shape(e, rank);
        if rel == "GroupNorm" {
            let groups = e.range(1, 2);
            shape[1] = groups * e.range(1, 2);
            attrs.push(("num_groups".into(), groups.to_string()));
        }
        let channels = if rel == "LayerNorm" {
            shape[rank - 1]
        } else {
            shape[1]
        };
        args.push(ArgPlan::Value(Ty::tensor(&shape, &dtype)));
        for _ in 1..n {
            args.push(ArgPlan::Value(Ty::tensor(&[channels], &dtype)));
        }
    } else if rel == "Where" && n == 3 {
        let shape = base_shape.clone().unwrap_or_else(|| {
            let rank = e.range(0, 3) as usize;
            random_shape(e, rank)
        });
        let value_dtype = if dtype == "bool" { "float32" } else { &dtype };
        args.push(ArgPlan::Value(Ty::tensor(&shape, "bool")));
        args.push(ArgPlan::Value(Ty::tensor(&shape, value_dtype)));
        args.push(ArgPlan::Value(Ty::tensor(&shape, value_dtype)));
    } else if rel == "Take" && n == 2 {
        let data = match base {
            Some(ty) if ty.static_tensor().is_some() => ty.clone(),
            _ => random_tensor(e),
        };
        let rank = e.range(0, 2) as usize;
        let indices = Ty::tensor(&random_shape(e, rank), ["int32", "int64"][e.below(2)]);
        args.push(ArgPlan::Value(data));
        args.push(ArgPlan::Value(indices));
    }

    // Every other argument: the first is the base (or a random tensor);
    // later ones mostly share its type, as element-wise and broadcasting
    // operators need, or are per-channel vectors and scalars.
    if args.is_empty() {
        let first = match base {
            Some(ty) if !quantized || ty.static_tensor().is_some() => ty.clone(),
            _ => {
                let rank = *e.pick(&[0, 1, 2, 2, 3, 4, 4]);
                Ty::tensor(&random_shape(e, rank), &dtype)
            }
        };
        for (i, arg) in op.arguments.iter().take(n).enumerate() {
            let name = arg.name.as_str();
            let plan = if arg.kind.contains("Tuple") {
                let count = e.range(1, 3) as usize;
                ArgPlan::Tuple(vec![first.clone(); count])
            } else if quantized && name.contains("scale") {
                ArgPlan::Value(Ty::tensor(&[], "float32"))
            } else if quantized && name.contains("zero_point") {
                ArgPlan::Value(Ty::tensor(&[], "int32"))
            } else if i == 0 {
                ArgPlan::Value(first.clone())
            } else {
                ArgPlan::Value(companion(e, &first, &dtype))
            };
            args.push(plan);
        }
        while args.len() < n {
            args.push(ArgPlan::Value(companion(e, &first, &dtype)));
        }
    }

    let shape = match args.first() {
        Some(ArgPlan::Value(ty)) => ty.static_tensor().map(|(s, _)| s),
        Some(ArgPlan::Tuple(fields)) => fields.first().and_then(Ty::static_tensor).map(|(s, _)| s),
        None => None,
    }
    .unwrap_or_default();
    let mut ctx = Ctx {
        shape,
        spatial,
        out_channels,
        outside,
        limits,
    };
    if let Some(schema) = op.attrs() {
        let outside = outside && (limits.pool_rank_mismatch || !is_pool);
        let mutate = if outside {
            Some(e.below(schema.fields.len().max(1)))
        } else {
            None
        };
        for (index, field) in schema.fields.iter().enumerate() {
            if attrs.iter().any(|(k, _)| *k == field.name) {
                continue;
            }
            if is_pool && !limits.pool_rank_mismatch && field.name.contains("layout") {
                // A layout of another rank is the same mismatch as a tensor
                // of another rank.
                continue;
            }
            let wanted = field.is_required() || mutate == Some(index) || e.chance(25);
            if !wanted {
                continue;
            }
            ctx.outside = mutate == Some(index);
            if let Some(value) = attr_value(e, field, &ctx, &field.ty) {
                attrs.push((field.name.clone(), value));
            }
        }
    }
    if outside && (limits.pool_rank_mismatch || !is_pool) && e.chance(30) {
        // Wrong types rather than wrong values: one argument changes dtype
        // or rank.
        if let Some(ArgPlan::Value(ty)) = args.last_mut() {
            *ty = random_tensor(e);
        }
    }
    CallPlan { op, args, attrs }
}

/// A later argument of a generic call: the first's type, a per-channel
/// vector, a scalar or anything.
fn companion(e: &mut Entropy, first: &Ty, dtype: &str) -> Ty {
    let shape = first.static_tensor().map(|(s, _)| s).unwrap_or_default();
    match e.below(20) {
        0..=10 => first.clone(),
        11..=13 => Ty::tensor(&[], dtype),
        14..=16 if !shape.is_empty() => {
            let dim = if shape.len() > 1 && e.chance(50) {
                shape[1]
            } else {
                shape[shape.len() - 1]
            };
            Ty::tensor(&[dim], dtype)
        }
        17 if !shape.is_empty() => {
            // Broadcasting: some dimensions become 1.
            let shape: Vec<i64> = shape
                .iter()
                .map(|&d| if e.chance(40) { 1 } else { d })
                .collect();
            Ty::tensor(&shape, dtype)
        }
        _ => random_tensor(e),
    }
}

fn int_list(values: &[i64]) -> String {
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn float_text(value: f64) -> String {
    let text = format!("{value:?}");
    format!("{text}f")
}

/// A value far beyond any real tensor.
fn huge(e: &mut Entropy) -> i64 {
    *e.pick(&[99_999_999_999, 2_147_483_648, 1 << 40, 65_536 * 65_536])
}

/// The text of one attribute value for `field` (typed `ty`, which may be an
/// element or inner type of the field's); `None` to leave it out.
fn attr_value(e: &mut Entropy, field: &AttrField, ctx: &Ctx, ty: &AttrType) -> Option<String> {
    let name = field.name.as_str();
    if ty.is_nullable() && !field.is_required() && e.chance(8) {
        return Some("None".into());
    }
    let rank = ctx.rank();
    Some(match ty {
        AttrType::Bool | AttrType::BoolObj => if e.chance(50) { "True" } else { "False" }.into(),
        AttrType::Int | AttrType::UInt64 | AttrType::Integer | AttrType::PrimExpr => {
            int_value(e, field, ctx).to_string()
        }
        AttrType::Double | AttrType::FloatImm => {
            let default = match field.default {
                AttrDefault::Double(v) => v,
                AttrDefault::Int(v) => v as f64,
                _ => 1.0,
            };
            let options = [default, 0.5, 1.0, 1e-5, 0.0, -1.0, 2.0];
            float_text(*e.pick(&options))
        }
        AttrType::StdString | AttrType::String => format!("\"{}\"", string_value(e, field, ctx)),
        AttrType::DataType => {
            if e.chance(15) {
                "\"\"".into()
            } else {
                format!("\"{}\"", random_dtype(e))
            }
        }
        AttrType::Optional(inner) => return attr_value(e, field, ctx, inner),
        AttrType::Array(element) => {
            let values = int_array(e, name, ctx, &field.default);
            match **element {
                AttrType::Double | AttrType::FloatImm => {
                    let items: Vec<String> = values.iter().map(|&v| float_text(v as f64)).collect();
                    format!("[{}]", items.join(", "))
                }
                AttrType::Int | AttrType::Integer | AttrType::PrimExpr | AttrType::UInt64 => {
                    int_list(&values)
                }
                _ => return None,
            }
        }
        AttrType::ObjectRef => {
            // `split`'s `indices_or_sections`: a count or a list of indices.
            if e.chance(60) {
                e.range(1, 3).to_string()
            } else {
                let len = e.range(0, 2) as usize;
                let mut indices: Vec<i64> = (0..len).map(|_| e.range(1, 3)).collect();
                indices.sort_unstable();
                int_list(&indices)
            }
        }
        _ => {
            let _ = rank;
            return None;
        }
    })
}

fn is_axis_name(name: &str) -> bool {
    name.contains("axis") || name.contains("axes") || name == "dim"
}

fn int_value(e: &mut Entropy, field: &AttrField, ctx: &Ctx) -> i64 {
    let name = field.name.as_str();
    let rank = ctx.rank();
    if ctx.outside && ctx.limits.huge_values && e.chance(30) {
        return huge(e);
    }
    if is_axis_name(name) {
        return if ctx.outside {
            *e.pick(&[rank, -rank - 1, rank + 1])
        } else if rank == 0 {
            0
        } else {
            e.range(-rank, rank - 1)
        };
    }
    match name {
        "channels" | "units" => {
            return ctx
                .out_channels
                .filter(|_| !ctx.outside)
                .unwrap_or_else(|| e.range(1, 4))
        }
        "groups" => return if ctx.outside { 2 } else { 1 },
        "num_newaxis" => return if ctx.outside { -1 } else { e.range(0, 2) },
        _ => {}
    }
    let default = match field.default {
        AttrDefault::Int(v) => Some(v),
        _ => None,
    };
    if ctx.outside {
        return *e.pick(&[-1, 0, rank + 1, i64::from(i32::MAX)]);
    }
    match default {
        Some(v) => v + e.range(-1, 1),
        None => e.range(0, 3),
    }
}

/// Layouts of each rank (index = rank).
const LAYOUTS: &[&[&str]] = &[
    &[],
    &["C"],
    &["NC", "CN"],
    &["NCW", "NWC", "OIW", "WIO"],
    &["NCHW", "NHWC", "OIHW", "HWIO", "HWOI", "OHWI"],
    &["NCDHW", "NDHWC", "OIDHW", "DHWIO"],
];

fn string_value(e: &mut Entropy, field: &AttrField, ctx: &Ctx) -> String {
    let name = field.name.as_str();
    let default = match &field.default {
        AttrDefault::Str(s) => s.clone(),
        _ => String::new(),
    };
    if e.chance(40) {
        return default;
    }
    if name.contains("layout") {
        let rank = if ctx.outside {
            e.below(LAYOUTS.len())
        } else {
            ctx.shape.len().clamp(ctx.spatial + 2, LAYOUTS.len() - 1)
        };
        let options = LAYOUTS[rank.min(LAYOUTS.len() - 1)];
        if options.is_empty() || e.chance(20) {
            return String::new();
        }
        return e.pick(options).to_string();
    }
    let options: &[&str] = match name {
        "method" => &["linear", "nearest_neighbor", "cubic", "bilinear", "nearest"],
        "coordinate_transformation_mode" => &["half_pixel", "align_corners", "asymmetric"],
        "rounding" | "rounding_method" => &["round", "floor", "ceil", "UPWARD", "TONEAREST"],
        "pad_mode" | "mode" => &["constant", "edge", "reflect", "SYMMETRIC", "REFLECT"],
        "reduction" => &["mean", "sum", "none", "update", "add"],
        _ => &["", "x"],
    };
    if ctx.outside {
        "not-a-valid-value".into()
    } else {
        e.pick(options).to_string()
    }
}

/// The integers of an array attribute, from its name: axes, window sizes,
/// paddings, shapes.
fn int_array(e: &mut Entropy, name: &str, ctx: &Ctx, default: &AttrDefault) -> Vec<i64> {
    let rank = ctx.rank();
    let spatial = ctx.spatial;
    let shape = &ctx.shape;
    let outside = ctx.outside;
    let window = |e: &mut Entropy, lo: i64, hi: i64| -> Vec<i64> {
        let len = if outside { spatial + 1 } else { spatial };
        (0..len).map(|_| e.range(lo, hi)).collect()
    };
    let mut values = if is_axis_name(name) {
        let mut axes: Vec<i64> = (0..rank).filter(|_| e.chance(50)).collect();
        if name == "axes" && e.chance(50) {
            // A permutation, as transpose wants.
            axes = (0..rank).collect();
            for i in (1..axes.len()).rev() {
                axes.swap(i, e.below(i + 1));
            }
        }
        if outside {
            axes.push(rank);
        }
        axes
    } else {
        match name {
            "pool_size" | "kernel_size" | "dilation" => window(e, 1, 2),
            "strides" => window(e, 1, 2),
            "output_size" | "size" => window(e, 1, 3),
            "padding" => {
                let len = if e.chance(50) { spatial } else { 2 * spatial };
                (0..len).map(|_| e.range(0, 1)).collect()
            }
            "newshape" => {
                let mut dims = shape.clone();
                for i in (1..dims.len()).rev() {
                    dims.swap(i, e.below(i + 1));
                }
                if !dims.is_empty() && e.chance(40) {
                    let i = e.below(dims.len());
                    dims[i] = -1;
                }
                dims
            }
            "shape" | "target_shape" => {
                if !shape.is_empty() && e.chance(60) {
                    shape
                        .iter()
                        .map(|&d| if d == 1 { e.range(1, 3) } else { d })
                        .collect()
                } else {
                    let rank = e.range(0, 3) as usize;
                    random_shape(e, rank)
                }
            }
            "begin" => shape.iter().map(|&d| e.range(0, d - 1)).collect(),
            "end" => shape.iter().map(|&d| e.range(1, d)).collect(),
            "reps" => shape.iter().map(|_| e.range(1, 2)).collect(),
            _ => match default.as_int_array() {
                Some(items) if !items.is_empty() => {
                    items.iter().map(|&v| (v + e.range(-1, 1)).max(0)).collect()
                }
                _ => {
                    let len = e.range(0, rank.clamp(1, 4)) as usize;
                    (0..len).map(|_| e.range(0, 3)).collect()
                }
            },
        }
    };
    if outside && !values.is_empty() {
        let i = e.below(values.len());
        values[i] = if ctx.limits.huge_values && e.chance(40) {
            huge(e)
        } else {
            *e.pick(&[0, -1, -rank - 2])
        };
    }
    values
}
