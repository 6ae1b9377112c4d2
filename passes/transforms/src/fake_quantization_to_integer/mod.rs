//! `FakeQuantizationToInteger`: TVM v0.13's `fake_quantization_to_integer.cc`.
//!
//! A fake-quantized region is the data-flow graph feeding a `qnn.quantize`,
//! bounded by `qnn.dequantize` calls. When every operator in the region has a
//! rewrite rule (`rules`), the region is rewritten into integer operations:
//! each rule receives the call (over already rewritten arguments) and the
//! affine types (`real = (q - zero_point) * scale`) known so far, and returns
//! the integer expression with its affine type.
//!
//! With `use_qat`, a second sweep rewrites single operators whose arguments
//! are all `qnn.dequantize` calls, wrapping the result in a `qnn.dequantize`.
//!
//! An operator without a rule leaves its region unchanged; with `hard_fail`
//! the pass fails with TVM's message instead. A rule that cannot handle its
//! call (TVM: a Python exception) also leaves the region unchanged, or fails
//! the pass with `hard_fail`.

mod rules;

use relay_ir::build::op_call_with;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{children, post_order, with_children};
use relay_ir::IRModule;
use relay_ir::{AttrValue, Expr, ExprKind, Function};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;
use rules::{optional_rule_for, rule_for, AffineType, Rule, TypeMap};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

/// Operators the QAT sweep may rewrite on their own (TVM's
/// `is_op_enabled_for_optional_fq2i`), when they also have a rule.
const QAT_OPERATORS: &[&str] = &[
    "broadcast_to",
    "clip",
    "expand_dims",
    "max",
    "maximum",
    "min",
    "minimum",
    "nn.avg_pool2d",
    "nn.batch_flatten",
    "nn.batch_matmul",
    "nn.bias_add",
    "nn.conv2d",
    "nn.conv2d_transpose",
    "nn.dense",
    "nn.depth_to_space",
    "nn.global_avg_pool2d",
    "nn.max_pool2d",
    "nn.pad",
    "nn.relu",
    "reshape",
    "split",
    "squeeze",
    "strided_slice",
    "transpose",
];

pub(crate) fn spec() -> PassSpec {
    PassSpec::function("FakeQuantizationToInteger", 0)
        .required(&["InferType", "DivToMul"])
        .param(ParamSpec::bool(
            "hard_fail",
            false,
            "fail the pass when a fake-quantized region cannot be rewritten (else leave it)",
        ))
        .param(ParamSpec::bool(
            "use_qat",
            false,
            "also rewrite single operators whose inputs are all dequantized (QAT mode)",
        ))
        .param(ParamSpec::list(
            "optional_qnn_ops",
            vec![],
            "operators whose optional rewrite rules are enabled (TVM v0.13 has one: nn.softmax)",
        ))
        .doc(
            "Rewrite regions between qnn.dequantize and qnn.quantize into integer (QNN) \
             operations when every operator in the region has a rewrite rule",
        )
        .build(|args| {
            let options = Options {
                hard_fail: args.bool("hard_fail"),
                use_qat: args.bool("use_qat"),
                optional_qnn_ops: args.string_list("optional_qnn_ops")?,
            };
            Ok(
                move |function: Function, module: &IRModule, _ctx: &PassContext| {
                    fake_quantization_to_integer(&function, Some(module), &options)
                        .map_err(Diagnostic::pass_failed)
                },
            )
        })
}

/// The pass's parameters.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Fail instead of leaving a region that cannot be rewritten.
    pub hard_fail: bool,
    /// Run the QAT sweep after the main one.
    pub use_qat: bool,
    /// Operators whose optional rules are enabled.
    pub optional_qnn_ops: Vec<String>,
}

impl Options {
    fn rule(&self, op: &str) -> Option<Rule> {
        rule_for(op).or_else(|| {
            self.optional_qnn_ops
                .iter()
                .any(|name| name == op)
                .then(|| optional_rule_for(op))
                .flatten()
        })
    }
}

/// Runs the pass over one (typed) function of `module`.
pub fn fake_quantization_to_integer(
    function: &Function,
    module: Option<&IRModule>,
    options: &Options,
) -> Result<Function, String> {
    let mut result = rewrite_regions(function.expr(), options)?;
    if options.use_qat {
        // The QAT sweep reads the types of the rewritten function.
        let (typed, _diagnostics) = relay_infer::infer_expr(&result, module);
        result = rewrite_qat(&typed, options)?;
    }
    Ok(result
        .as_function()
        .expect("the pass rewrites a function into a function"))
}

pub(crate) fn op_name(expr: &Expr) -> Option<&'static str> {
    expr.as_call()
        .and_then(|call| call.callee.as_op())
        .map(|op| op.name.as_str())
}

/// The affine type a `qnn.quantize` (its output) or `qnn.dequantize` (its
/// input) call describes.
fn boundary_type(call_expr: &Expr) -> Option<AffineType> {
    let call = call_expr.as_call()?;
    let attrs = call.attrs.as_ref();
    let axis = attrs
        .and_then(|a| a.get("axis"))
        .and_then(AttrValue::as_int)
        .unwrap_or(-1);
    let dtype = match op_name(call_expr)? {
        "qnn.quantize" => match attrs.and_then(|a| a.get("out_dtype"))? {
            AttrValue::DataType(d) => *d,
            AttrValue::Str(s) => s.parse().ok()?,
            _ => return None,
        },
        "qnn.dequantize" => call.args.first()?.checked_type()?.as_tensor()?.dtype,
        _ => return None,
    };
    Some(AffineType::Tensor {
        scale: call.args.get(1)?.clone(),
        zero_point: call.args.get(2)?.clone(),
        dtype,
        axis,
    })
}

/// A region's calls and the affine types of its boundary calls.
type Region = (Vec<Expr>, Vec<(Expr, AffineType)>);

/// TVM's `SubgraphExtractor` from a `qnn.quantize`: the calls of its region
/// (dequantize calls included, quantize calls excluded) and the affine types
/// of its boundary calls, or `None` when the region holds anything but
/// data flow (a variable, a let, a function, control flow).
fn extract_region(quantize: &Expr) -> Option<Region> {
    let mut seen = HashSet::default();
    let mut calls = Vec::new();
    let mut types = Vec::new();
    let mut stack = vec![quantize.clone()];
    while let Some(expr) = stack.pop() {
        if !seen.insert(expr.addr()) {
            continue;
        }
        match expr.kind() {
            ExprKind::Call(call) => {
                match op_name(&expr) {
                    Some("qnn.quantize") => {
                        types.push((expr.clone(), boundary_type(&expr)?));
                        stack.extend(call.args.first().cloned());
                    }
                    Some("qnn.dequantize") => {
                        types.push((expr.clone(), boundary_type(&expr)?));
                        calls.push(expr.clone());
                    }
                    Some(_) => {
                        calls.push(expr.clone());
                        stack.extend(call.args.iter().cloned());
                    }
                    // A call of a function or global is not data flow TVM
                    // rewrites (its op downcast fails); treat it as foreign.
                    None => return None,
                }
            }
            ExprKind::Tuple(fields) => stack.extend(fields.iter().cloned()),
            ExprKind::TupleGetItem { tuple, .. } => stack.push(tuple.clone()),
            ExprKind::Constant(_) | ExprKind::Op(_) => {}
            _ => return None,
        }
    }
    Some((calls, types))
}

/// The main sweep: every `qnn.quantize` whose region can be rewritten is.
fn rewrite_regions(root: &Expr, options: &Options) -> Result<Expr, String> {
    let mut memo: HashMap<usize, Expr> = HashMap::default();
    for node in post_order(root) {
        let new_children: Vec<Expr> = children(&node)
            .into_iter()
            .map(|c| memo.get(&c.addr()).cloned().unwrap_or_else(|| c.clone()))
            .collect();
        let post = with_children(&node, &new_children);
        let replacement = if op_name(&node) == Some("qnn.quantize") {
            rewrite_region(&node, post, &memo, options)?
        } else {
            post
        };
        memo.insert(node.addr(), replacement);
    }
    Ok(memo.remove(&root.addr()).unwrap_or_else(|| root.clone()))
}

fn rewrite_region(
    pre: &Expr,
    post: Expr,
    memo: &HashMap<usize, Expr>,
    options: &Options,
) -> Result<Expr, String> {
    let hard_fail = options.hard_fail;
    let Some((calls, boundary)) = extract_region(pre) else {
        return Ok(post);
    };
    if calls.is_empty() {
        return Ok(post);
    }
    let to_post = |e: &Expr| memo.get(&e.addr()).cloned().unwrap_or_else(|| e.clone());
    let mut types = TypeMap::default();
    for (expr, ty) in boundary {
        let key = if expr.ptr_eq(pre) {
            post.clone()
        } else {
            to_post(&expr)
        };
        types.insert(&key, ty);
    }
    for call in &calls {
        let name = op_name(&to_post(call)).unwrap_or_default();
        if options.rule(name).is_none() {
            if hard_fail {
                return Err(format!("Found no rewrite rule for {name}"));
            }
            return Ok(post);
        }
    }
    let out_type = types.get(&post).cloned();
    let mut mutator = RegionMutator {
        types,
        out_type,
        memo: HashMap::default(),
        qat_root: None,
        options,
    };
    match mutator.mutate(&post) {
        Ok(out) => Ok(out),
        Err(message) if hard_fail => Err(message),
        Err(_) => Ok(post),
    }
}

/// TVM's `SubgraphMutator` (and, with `qat_root`, `QATSubgraphMutator`).
struct RegionMutator<'o> {
    types: TypeMap,
    /// The quantize's output type, given to every rewritten call before its
    /// rule runs (rules read the output parameters from it). The QAT sweep
    /// has none.
    out_type: Option<AffineType>,
    memo: HashMap<usize, Expr>,
    /// The QAT sweep's operator: its result is dequantized again.
    qat_root: Option<usize>,
    options: &'o Options,
}

impl RegionMutator<'_> {
    fn mutate(&mut self, expr: &Expr) -> Result<Expr, String> {
        if let Some(done) = self.memo.get(&expr.addr()) {
            return Ok(done.clone());
        }
        let out = match expr.kind() {
            ExprKind::Call(call) => {
                let Some(name) = op_name(expr) else {
                    return Err(format!(
                        "When rewriting a fake quantized graph, found an invalid node {}",
                        relay_ir::printer::print_expr(expr, &Default::default())
                    ));
                };
                let Some(rule) = self.options.rule(name) else {
                    return Err(format!(
                        "When rewriting a fake quantized graph, found an invalid node {}",
                        relay_ir::printer::print_expr(expr, &Default::default())
                    ));
                };
                let rebuilt = if name == "qnn.dequantize" {
                    expr.clone()
                } else {
                    let args = call
                        .args
                        .iter()
                        .map(|a| self.mutate(a))
                        .collect::<Result<Vec<_>, _>>()?;
                    let callee = self.mutate(&call.callee)?;
                    let mut children_new = vec![callee];
                    children_new.extend(args);
                    let rebuilt = with_children(expr, &children_new);
                    if let Some(t) = &self.out_type {
                        self.types.insert(&rebuilt, t.clone());
                    }
                    rebuilt
                };
                let (out, ty) = rule(&rebuilt, &self.types)?;
                self.types.insert(&out, ty.clone());
                if self.qat_root == Some(expr.addr()) {
                    let AffineType::Tensor {
                        scale,
                        zero_point,
                        axis,
                        ..
                    } = ty
                    else {
                        return Err("the QAT rewrite produced a tuple".into());
                    };
                    op_call_with(
                        "qnn.dequantize",
                        vec![out, scale, zero_point],
                        &[(
                            "axis",
                            AttrValue::int_imm(axis, relay_ir::dtype::DataType::int(32)),
                        )],
                    )
                } else {
                    out
                }
            }
            ExprKind::Tuple(fields) => {
                let new_fields = fields
                    .iter()
                    .map(|f| self.mutate(f))
                    .collect::<Result<Vec<_>, _>>()?;
                let rebuilt = with_children(expr, &new_fields);
                let mut field_types = Vec::new();
                for f in &new_fields {
                    match self.types.get(f) {
                        Some(t @ AffineType::Tensor { .. }) => field_types.push(t.clone()),
                        _ => return Err("a tuple field has no tensor affine type".into()),
                    }
                }
                self.types.insert(&rebuilt, AffineType::Tuple(field_types));
                rebuilt
            }
            ExprKind::TupleGetItem {
                tuple: item_tuple,
                index,
            } => {
                let tuple = self.mutate(item_tuple)?;
                let rebuilt = with_children(expr, std::slice::from_ref(&tuple));
                let Some(AffineType::Tuple(fields)) = self.types.get(&tuple) else {
                    return Err("a projected tuple has no tuple affine type".into());
                };
                let Some(field) = fields.get(*index).cloned() else {
                    return Err("a projection out of its tuple's affine type".into());
                };
                self.types.insert(&rebuilt, field);
                rebuilt
            }
            _ => expr.clone(),
        };
        self.memo.insert(expr.addr(), out.clone());
        Ok(out)
    }
}

/// The QAT sweep (TVM's `QATRewriter`).
fn rewrite_qat(root: &Expr, options: &Options) -> Result<Expr, String> {
    let mut memo: HashMap<usize, Expr> = HashMap::default();
    for node in post_order(root) {
        let new_children: Vec<Expr> = children(&node)
            .into_iter()
            .map(|c| memo.get(&c.addr()).cloned().unwrap_or_else(|| c.clone()))
            .collect();
        let post = with_children(&node, &new_children);
        if let Some(call) = post.as_call() {
            // TVM's QATRewriter downcasts every callee to an operator: a
            // call of a function, global or variable fails the pass.
            if call.callee.as_op().is_none() {
                return Err(format!(
                    "Downcast from {} to Op failed.",
                    callee_type_key(&call.callee)
                ));
            }
        }
        let replacement = match op_name(&post) {
            Some(name) if QAT_OPERATORS.contains(&name) && rule_for(name).is_some() => {
                rewrite_qat_operator(post, options)?
            }
            _ => post,
        };
        memo.insert(node.addr(), replacement);
    }
    Ok(memo.remove(&root.addr()).unwrap_or_else(|| root.clone()))
}

/// The type key TVM names a non-operator callee by.
fn callee_type_key(callee: &Expr) -> &'static str {
    match callee.kind() {
        ExprKind::Var(_) => "relay.Var",
        ExprKind::GlobalVar(_) => "GlobalVar",
        ExprKind::Function(_) => "relay.Function",
        ExprKind::Constructor(_) => "relay.Constructor",
        ExprKind::Call(_) => "relay.Call",
        ExprKind::Let { .. } => "relay.Let",
        ExprKind::If { .. } => "relay.If",
        ExprKind::TupleGetItem { .. } => "relay.TupleGetItem",
        ExprKind::Match { .. } => "relay.Match",
        ExprKind::RefRead(_) => "relay.RefRead",
        _ => "relay.Expr",
    }
}

/// One operator of the QAT sweep: its arguments' region must consist of
/// `qnn.dequantize` calls only.
fn rewrite_qat_operator(post: Expr, options: &Options) -> Result<Expr, String> {
    let hard_fail = options.hard_fail;
    let call = post.as_call().expect("an operator call");
    // The region under the operator's arguments, as TVM's
    // `QATSubgraphExtractor` walks it (dequantize args are not entered).
    let mut seen = HashSet::default();
    let mut calls = Vec::new();
    let mut types = TypeMap::default();
    let mut stack: Vec<Expr> = call.args.clone();
    let mut data_flow = true;
    while let Some(expr) = stack.pop() {
        if !seen.insert(expr.addr()) {
            continue;
        }
        match expr.kind() {
            // A call of a function, global or variable: its callee is not
            // data flow, so the region is not rewritten.
            ExprKind::Call(inner) if inner.callee.as_op().is_none() => data_flow = false,
            ExprKind::Call(inner) => {
                calls.push(expr.clone());
                if op_name(&expr) == Some("qnn.dequantize") {
                    let ty = inner
                        .args
                        .first()
                        .and_then(|a| {
                            a.checked_type()
                                .and_then(|t| t.as_tensor())
                                .map(|t| t.dtype)
                        })
                        .or_else(|| {
                            let (typed, _) = relay_infer::infer_expr(&inner.args[0], None);
                            typed
                                .checked_type()
                                .and_then(|t| t.as_tensor())
                                .map(|t| t.dtype)
                        });
                    let Some(dtype) = ty else { return Ok(post) };
                    let axis = inner
                        .attrs
                        .as_ref()
                        .and_then(|a| a.get("axis"))
                        .and_then(AttrValue::as_int)
                        .unwrap_or(-1);
                    types.insert(
                        &expr,
                        AffineType::Tensor {
                            scale: inner.args[1].clone(),
                            zero_point: inner.args[2].clone(),
                            dtype,
                            axis,
                        },
                    );
                } else {
                    stack.extend(inner.args.iter().cloned());
                }
            }
            ExprKind::Tuple(fields) => stack.extend(fields.iter().cloned()),
            ExprKind::TupleGetItem { tuple, .. } => stack.push(tuple.clone()),
            ExprKind::Constant(_) | ExprKind::Op(_) => {}
            _ => data_flow = false,
        }
    }
    if !data_flow || calls.is_empty() {
        return Ok(post);
    }
    for inner in &calls {
        if op_name(inner) != Some("qnn.dequantize") {
            // TVM names the offending argument's operator, without a space.
            let name = op_name(inner).unwrap_or_default();
            if hard_fail {
                return Err(format!(
                    "Not dequantization was found in the input arguments for{name}"
                ));
            }
            return Ok(post);
        }
    }
    let mut mutator = RegionMutator {
        types,
        out_type: None,
        memo: HashMap::default(),
        qat_root: Some(post.addr()),
        options,
    };
    match mutator.mutate(&post) {
        Ok(out) => Ok(out),
        Err(message) if hard_fail => Err(message),
        Err(_) => Ok(post),
    }
}
