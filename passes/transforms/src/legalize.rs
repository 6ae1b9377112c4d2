//! `Legalize`: rewrites operator calls that the chosen target cannot run
//! as they are, through each operator's legalization rule, as TVM v0.13's
//! `legalize.cc` does with its `FTVMLegalize` attributes.
//!
//! The walk is TVM's post-order rewrite: arguments first, then the call,
//! which a rule may replace by another expression. A rule sees the call's
//! attributes, its rewritten arguments and the checked types of the
//! original arguments and result (TVM hands the rules the types of the call
//! before rewriting).
//!
//! TVM's rules live in Python and dispatch on the target (`tvm.target`
//! generic functions); the ones built in here are those of the `llvm`
//! target (key `cpu`) and the target-independent ones:
//!
//! * `nn.conv2d_transpose`, `nn.conv3d_transpose`: channel-last data is
//!   transposed to channel-first around the convolution, and the kernel is
//!   brought to the `IO…` layout.
//! * `erf` on `cpu`: a non-`float32` input is computed in `float32` between
//!   two casts.
//! * `take` whose data has a dynamic shape: the data goes through
//!   `annotation.stop_fusion`.
//! * `clip` right after `qnn.requantize` with the output dtype's own bounds:
//!   the clip is dropped.
//!
//! The other rules TVM registers return "no change" on `llvm` without a
//! `-mcpu` (the int8 rewrites of `nn.conv2d`, `nn.dense` and
//! `nn.batch_matmul` need AVX-512/VNNI support), or always
//! (`nn.matmul`, `nn.bias_add`, `nn.deformable_conv2d`,
//! `nn.bitserial_conv2d` off `arm_cpu`). `nn.conv2d_backward_weight`'s rule
//! (a lowering to grouped `nn.conv2d`) is not built in: such a call is left
//! as it is and the pass reports a warning rather than pretending.

use relay_ir::attrs::{AttrValue, Attrs};
use relay_ir::build::{attrs_replacing, int_array, op_call, op_call_with};
use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::dtype::DataType;
use relay_ir::rewrite::rewrite_function;
use relay_ir::{Expr, Function, IRModule, Type};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;

/// The attribute name of TVM's rules; the only rule set built in.
const DEFAULT_RULES: &str = "FTVMLegalize";

/// The registry entry.
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("Legalize", 1)
        .required(&["InferType"])
        .param(ParamSpec::string(
            "legalize_map_attr_name",
            DEFAULT_RULES,
            "the operator attribute that holds the rules (only FTVMLegalize is built in)",
        ))
        .doc(
            "Rewrite operator calls the target cannot run as they are, through each \
             operator's legalization rule",
        )
        .build(|args| {
            let rules = args.string("legalize_map_attr_name");
            if rules != DEFAULT_RULES {
                return Err(format!(
                    "Legalize: no rules are built in for the attribute `{rules}` \
                     (only `{DEFAULT_RULES}`)"
                ));
            }
            Ok(
                |function: Function, _module: &IRModule, ctx: &PassContext| {
                    let target = Target::from_context(ctx.target.as_deref());
                    let mut warnings = Vec::new();
                    let result = legalize(&function, &target, &mut warnings);
                    for warning in warnings {
                        ctx.report(warning);
                    }
                    result
                },
            )
        })
}

/// What the rules need to know of the `--target` scope.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// The target has the `cpu` key (`llvm`, TVM's x86 rules).
    pub cpu: bool,
}

impl Target {
    /// The target of a PassContext's `--target` string (`llvm …`), or no
    /// target (the generic rules only).
    pub fn from_context(target: Option<&str>) -> Target {
        let kind = target.and_then(|t| t.split_whitespace().next());
        Target {
            cpu: kind == Some("llvm"),
        }
    }
}

/// Legalizes every operator call of `function` for `target`. Calls whose
/// rule is not built in are kept, with a warning in `warnings`.
pub fn legalize(
    function: &Function,
    target: &Target,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Function, Diagnostic> {
    let mut error = None;
    let result = rewrite_function(function, |pre, post| {
        if error.is_some() {
            return post;
        }
        match legalize_call(pre, &post, target, warnings) {
            Ok(Some(replacement)) => replacement,
            Ok(None) => post,
            Err(e) => {
                error = Some(e);
                post
            }
        }
    });
    match error {
        Some(e) => Err(e),
        None => Ok(result),
    }
}

/// The replacement of one call, if its operator's rule rewrites it.
fn legalize_call(
    pre: &Expr,
    post: &Expr,
    target: &Target,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Option<Expr>, Diagnostic> {
    let Some(call) = post.as_call() else {
        return Ok(None);
    };
    let Some(op) = call.callee.as_op() else {
        return Ok(None);
    };
    let Some(pre_call) = pre.as_call() else {
        return Ok(None);
    };
    // The types TVM passes to a rule: the original arguments', then the
    // result's.
    let arg_type = |i: usize| pre_call.args.get(i).and_then(|a| a.checked_type());
    let attrs = call.attrs.as_ref();
    let args = &call.args;
    let rewritten = match op.name.as_str() {
        "nn.conv2d_transpose" => match (attrs, args.as_slice()) {
            (Some(attrs), [data, kernel]) => conv2d_transpose(attrs, data, kernel, pre)?,
            _ => None,
        },
        "nn.conv3d_transpose" => match (attrs, args.as_slice()) {
            (Some(attrs), [data, kernel]) => conv3d_transpose(attrs, data, kernel, pre)?,
            _ => None,
        },
        "erf" if target.cpu => match (args.as_slice(), arg_type(0).and_then(tensor_dtype)) {
            ([data], Some(dtype)) if dtype != DataType::FLOAT32 => {
                Some(erf_in_float32(data, dtype))
            }
            _ => None,
        },
        "take" => match (args.as_slice(), arg_type(0)) {
            ([data, indices], Some(ty)) if ty.is_dynamic() => {
                let fenced = op_call("annotation.stop_fusion", vec![data.clone()]);
                Some(Expr::call(
                    call.callee.clone(),
                    vec![fenced, indices.clone()],
                    call.attrs.clone(),
                    None,
                ))
            }
            _ => None,
        },
        "clip" => match (attrs, args.as_slice()) {
            (Some(attrs), [input]) => clip_after_requantize(attrs, input, arg_type(0), pre)?,
            _ => None,
        },
        "nn.conv2d_backward_weight" => {
            warnings.push(at_call(
                Diagnostic::warning(
                    Code::PassWarning,
                    "Legalize: the rule of `nn.conv2d_backward_weight` (a lowering to a \
                     grouped `nn.conv2d`) is not built in; the call is left unchanged",
                ),
                pre,
            ));
            None
        }
        _ => None,
    };
    Ok(rewritten)
}

/// `erf(x)` for a non-`float32` `x`: `cast(erf(cast(x, float32)), dtype)`.
fn erf_in_float32(data: &Expr, dtype: DataType) -> Expr {
    let widened = cast(data.clone(), DataType::FLOAT32);
    cast(op_call("erf", vec![widened]), dtype)
}

fn cast(data: Expr, dtype: DataType) -> Expr {
    op_call_with("cast", vec![data], &[("dtype", AttrValue::DataType(dtype))])
}

fn transpose(data: Expr, axes: &[i64]) -> Expr {
    op_call_with("transpose", vec![data], &[("axes", int_array(axes))])
}

/// TVM's rule for `nn.conv2d_transpose`: channel-last data (`NHWC`) is
/// transposed to `NCHW` around the convolution; in both layouts the kernel
/// is brought to `IOHW` (by a transpose when its layout is another
/// permutation of those letters) and the call is made again.
fn conv2d_transpose(
    attrs: &Attrs,
    data: &Expr,
    kernel: &Expr,
    pre: &Expr,
) -> Result<Option<Expr>, Diagnostic> {
    let data_layout = string_attr(attrs, "data_layout");
    if data_layout != "NHWC" && data_layout != "NCHW" {
        return Ok(None);
    }
    let kernel_layout = string_attr(attrs, "kernel_layout");
    let kernel = to_layout(kernel.clone(), &kernel_layout, "IOHW")
        .map_err(|message| rule_error(pre, "nn.conv2d_transpose", message))?;
    let padding = four_way_padding(attrs.get("padding"))
        .map_err(|message| rule_error(pre, "nn.conv2d_transpose", message))?;
    let mut replacements = vec![
        ("kernel_layout", AttrValue::Str("IOHW".into())),
        ("padding", padding),
    ];
    if data_layout == "NCHW" {
        let attrs = attrs_replacing(attrs, &replacements);
        return Ok(Some(conv_call(pre, vec![data.clone(), kernel], attrs)));
    }
    replacements.push(("data_layout", AttrValue::Str("NCHW".into())));
    let attrs = attrs_replacing(attrs, &replacements);
    let data = transpose(data.clone(), &[0, 3, 1, 2]);
    let deconv = conv_call(pre, vec![data, kernel], attrs);
    Ok(Some(transpose(deconv, &[0, 2, 3, 1])))
}

/// TVM's rule for `nn.conv3d_transpose`: only channel-last data (`NDHWC`)
/// changes, to `NCDHW` around the convolution, with the kernel transposed
/// to `IODHW` from the layouts the rule knows (others are left alone).
fn conv3d_transpose(
    attrs: &Attrs,
    data: &Expr,
    kernel: &Expr,
    pre: &Expr,
) -> Result<Option<Expr>, Diagnostic> {
    if string_attr(attrs, "data_layout") != "NDHWC" {
        return Ok(None);
    }
    let kernel_axes: Option<&[i64]> = match string_attr(attrs, "kernel_layout").as_str() {
        "DHWIO" => Some(&[3, 4, 0, 1, 2]),
        "DHWOI" => Some(&[4, 3, 0, 1, 2]),
        "OIDHW" => Some(&[1, 0, 2, 3, 4]),
        "IODHW" => None,
        _ => return Ok(None),
    };
    let kernel = match kernel_axes {
        Some(axes) => transpose(kernel.clone(), axes),
        None => kernel.clone(),
    };
    let padding = six_way_padding(attrs.get("padding"))
        .map_err(|message| rule_error(pre, "nn.conv3d_transpose", message))?;
    let attrs = attrs_replacing(
        attrs,
        &[
            ("data_layout", AttrValue::Str("NCDHW".into())),
            ("kernel_layout", AttrValue::Str("IODHW".into())),
            ("padding", padding),
        ],
    );
    let data = transpose(data.clone(), &[0, 4, 1, 2, 3]);
    let deconv = conv_call(pre, vec![data, kernel], attrs);
    Ok(Some(transpose(deconv, &[0, 2, 3, 4, 1])))
}

/// The convolution `pre` called again with new arguments and attributes.
fn conv_call(pre: &Expr, args: Vec<Expr>, attrs: Attrs) -> Expr {
    let callee = pre
        .as_call()
        .map(|c| c.callee.clone())
        .expect("only called for calls");
    Expr::call(callee, args, Some(attrs), None)
}

/// `tensor` moved from `current` to `desired` layout by a transpose (TVM's
/// rule helper: both must be permutations of the same letters; the same
/// layout needs no transpose).
fn to_layout(tensor: Expr, current: &str, desired: &str) -> Result<Expr, String> {
    let mut sorted_current: Vec<char> = current.chars().collect();
    let mut sorted_desired: Vec<char> = desired.chars().collect();
    sorted_current.sort_unstable();
    sorted_desired.sort_unstable();
    if sorted_current != sorted_desired {
        return Err(format!("Incompatible layouts: {current} vs {desired}"));
    }
    if current == desired {
        return Ok(tensor);
    }
    let axes: Vec<i64> = desired
        .chars()
        .filter_map(|c| current.chars().position(|d| d == c))
        .map(|i| i as i64)
        .collect();
    Ok(transpose(tensor, &axes))
}

/// The padding TVM's Python `conv2d_transpose` passes on: four values as
/// they are; two values `(h, w)` become `(h, w, h, w)` (each doubled, then
/// split with the odd half first, as `get_pad_tuple2d` does).
fn four_way_padding(padding: Option<&AttrValue>) -> Result<AttrValue, String> {
    spread_padding(padding, 2)
}

/// As [`four_way_padding`] for three spatial axes (`get_pad_tuple3d`).
fn six_way_padding(padding: Option<&AttrValue>) -> Result<AttrValue, String> {
    spread_padding(padding, 3)
}

fn spread_padding(padding: Option<&AttrValue>, axes: usize) -> Result<AttrValue, String> {
    let values = padding.and_then(AttrValue::as_array).unwrap_or_default();
    if values.len() == 2 * axes {
        return Ok(AttrValue::Array(values.to_vec()));
    }
    if values.len() != axes {
        return Err(format!(
            "Size of padding can only be {axes} or {}",
            2 * axes
        ));
    }
    let mut before = Vec::with_capacity(axes);
    let mut after = Vec::with_capacity(axes);
    for value in values {
        let (Some(pad), dtype) = (value.as_int(), int_dtype(value)) else {
            return Err("padding must be integers".into());
        };
        let total = pad * 2;
        let first = (total + 1).div_euclid(2);
        before.push(AttrValue::int_imm(first, dtype));
        after.push(AttrValue::int_imm(total - first, dtype));
    }
    before.extend(after);
    Ok(AttrValue::Array(before))
}

fn int_dtype(value: &AttrValue) -> DataType {
    match value {
        AttrValue::IntImm { dtype, .. } => *dtype,
        _ => DataType::INT32,
    }
}

/// TVM's `clip` rule (registered with the QNN operators): a clip of a
/// `qnn.requantize` result to exactly the bounds of its integer dtype does
/// nothing and is dropped.
fn clip_after_requantize(
    attrs: &Attrs,
    input: &Expr,
    input_type: Option<&Type>,
    pre: &Expr,
) -> Result<Option<Expr>, Diagnostic> {
    let is_requantize = input
        .as_call()
        .and_then(|c| c.callee.as_op())
        .is_some_and(|op| op.name == "qnn.requantize");
    if !is_requantize {
        return Ok(None);
    }
    let Some(dtype) = input_type.and_then(tensor_dtype) else {
        return Ok(None);
    };
    let Some((min, max)) = integer_bounds(dtype) else {
        // numpy's `iinfo` rejects a non-integer dtype, and so does TVM.
        return Err(rule_error(
            pre,
            "clip",
            format!("Invalid integer data type '{dtype}'."),
        ));
    };
    let a_min = attrs.get("a_min").and_then(AttrValue::as_f64);
    let a_max = attrs.get("a_max").and_then(AttrValue::as_f64);
    if a_min == Some(min) && a_max == Some(max) {
        return Ok(Some(input.clone()));
    }
    Ok(None)
}

/// The smallest and largest value of an integer dtype, as numpy's `iinfo`.
fn integer_bounds(dtype: DataType) -> Option<(f64, f64)> {
    let bits = u32::from(dtype.bits);
    if dtype.lanes != 1 || !(1..=64).contains(&bits) || dtype.is_bool() {
        return None;
    }
    if dtype.is_int() {
        let max = (1i128 << (bits - 1)) - 1;
        Some((-(max as f64) - 1.0, max as f64))
    } else if dtype.is_uint() {
        Some((0.0, ((1i128 << bits) - 1) as f64))
    } else {
        None
    }
}

/// An error of a rule, at the call it was legalizing.
fn rule_error(pre: &Expr, op: &str, message: String) -> Diagnostic {
    Diagnostic::pass_failed_at(pre, format!("Legalize ({op}): {message}"))
}

/// `diagnostic` pointed at the call's source, when it has one.
fn at_call(diagnostic: Diagnostic, call: &Expr) -> Diagnostic {
    match call.span() {
        Some(span) => diagnostic.with_span(span),
        None => diagnostic,
    }
}

fn string_attr(attrs: &Attrs, name: &str) -> String {
    attrs
        .get(name)
        .and_then(AttrValue::as_str)
        .unwrap_or_default()
        .to_string()
}

fn tensor_dtype(ty: &Type) -> Option<DataType> {
    ty.as_tensor().map(|t| t.dtype)
}
