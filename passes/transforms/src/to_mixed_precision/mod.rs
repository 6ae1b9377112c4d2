//! `ToMixedPrecision(mixed_precision_type, missing_op_mode)`, as TVM
//! v0.13's `src/relay/transforms/to_mixed_precision.cc` defines it, with
//! the default operator rules of `mixed_precision.py` ([`categories`]).
//!
//! Each call is rewritten bottom-up, after its arguments:
//!
//! 1. Its category: an operator's from its rule (an operator without one
//!    is treated as FOLLOW and counted as missing), a call of a function
//!    literal is NEVER (its signature is left alone). A call of a global,
//!    a constructor or a local variable fails the pass (TVM: "Algebraic
//!    Data Types (ADT) are not supported yet").
//! 2. FOLLOW becomes ALWAYS when every argument is already in the mixed
//!    type (non-float tensors ignored) or is a variable or constant,
//!    NEVER otherwise.
//! 3. The floating-point arguments are cast to the mixed type (ALWAYS) or
//!    to float32 (NEVER); tuple arguments field by field through
//!    `t.i`. Casts are cached per (node, dtype) and a cast's reverse
//!    points back to its source, so `cast(cast(x))` is never built.
//! 4. An ALWAYS call gets its accumulation dtype written into the
//!    `out_dtype` of convolution, dense and batch_matmul attrs and the
//!    `dtype` of `zeros`/`ones`/`full` (when that field is a float or
//!    unset).
//!
//! Tuples and projections are re-typed; a `let` variable takes the new type
//! of its value as annotation (before its body is rewritten, so the body
//! sees it); every function loses its return annotation, which the
//! `InferType` after the pass writes again. With the context config
//! `relay.ToMixedPrecision.keep_orig_output_dtype`, the outermost call or
//! tuple of each function body is cast back to its original dtypes.
//!
//! Operators without a rule are reported once per function with their
//! count: a warning per operator (modes 0 and 1), and with mode 0 the pass
//! then fails. Unlike TVM, which lets a user register rules from Python,
//! only the default rules exist here.

pub mod categories;

use categories::{category_of, Category, DTYPE_ATTRS, OUT_DTYPE_ATTRS};
use relay_infer::infer_expr;
use relay_ir::build::op_call_with;
use relay_ir::diagnostic::{Code, Diagnostic};
use relay_ir::dtype::DataType;
use relay_ir::printer::print_type;
use relay_ir::rewrite::{children, rebuild, NodeUpdate};
use relay_ir::{
    AttrValue, Attrs, Call, Expr, ExprKind, Function, FunctionData, IRModule, Type, TypeKind, Var,
    VarId,
};
use relay_pass_manager::registry::{ParamSpec, PassSpec};
use relay_pass_manager::PassContext;
use std::collections::BTreeMap;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

/// The pass context key of TVM's `keep_orig_output_dtype` option.
pub const KEEP_ORIG_OUTPUT_DTYPE: &str = "relay.ToMixedPrecision.keep_orig_output_dtype";

/// The registry entry: TVM's `CreateFunctionPass(…, 0, "ToMixedPrecision",
/// {})` with the Python wrapper's parameters and defaults.
pub(crate) fn spec() -> PassSpec {
    PassSpec::function("ToMixedPrecision", 0)
        .param(ParamSpec::string(
            "mixed_precision_type",
            "float16",
            "the floating-point dtype (float16, bfloat16, …) to compute in where the rules allow",
        ))
        .param(
            ParamSpec::int(
                "missing_op_mode",
                1,
                "operators without a conversion rule: 0 fails the pass, 1 warns, 2 is silent",
            )
            .with_range(0, 2),
        )
        .doc(
            "Compute as much as possible in a lower floating-point precision, with TVM's \
             default ALWAYS/FOLLOW/NEVER operator rules (user-registered rules are not \
             supported); keep_orig_output_dtype comes from the pass context config",
        )
        .build(|args| {
            let mixed_type = parse_mixed_type(&args.string("mixed_precision_type"))?;
            let missing_op_mode = args.int("missing_op_mode");
            Ok(
                move |function: Function, module: &IRModule, ctx: &PassContext| {
                    let options = MixedPrecisionOptions {
                        mixed_type,
                        keep_orig_output_dtype: ctx.config_bool(KEEP_ORIG_OUTPUT_DTYPE, false),
                    };
                    let outcome = to_mixed_precision(&function, module, &options)?;
                    report_missing_ops(&outcome.missing_ops, missing_op_mode, ctx)?;
                    Ok(outcome.function)
                },
            )
        })
}

/// The target dtype, which must be an IEEE float or bfloat16.
fn parse_mixed_type(text: &str) -> Result<DataType, String> {
    let unsupported = || {
        format!(
            "Only support IEEE floating point mixed precision types and bfloat16, but got {text}"
        )
    };
    let dtype = DataType::parse(text).map_err(|_| unsupported())?;
    if dtype.is_float() || dtype.is_bfloat16() {
        Ok(dtype)
    } else {
        Err(unsupported())
    }
}

/// TVM's warnings (modes 0 and 1) and failure (mode 0) for operators
/// without a rule. TVM walks a hash map; the names are sorted here.
fn report_missing_ops(
    missing_ops: &BTreeMap<String, usize>,
    missing_op_mode: i64,
    ctx: &PassContext,
) -> Result<(), Diagnostic> {
    if missing_op_mode == 2 || missing_ops.is_empty() {
        return Ok(());
    }
    for (op, count) in missing_ops {
        ctx.report(Diagnostic::warning(
            Code::PassWarning,
            format!(
                "Op \"{op}\" not registered FTVMMixedPrecisionConversionType appears {count} \
                 times in graph."
            ),
        ));
    }
    if missing_op_mode == 0 {
        let names: Vec<&str> = missing_ops.keys().map(String::as_str).collect();
        return Err(Diagnostic::pass_failed(format!(
            "ToMixedPrecision: Missing ops were found! (no conversion rule for {}; \
                 missing_op_mode=1 or 2 treats them as FOLLOW)",
            names.join(", ")
        )));
    }
    Ok(())
}

/// What the rewrite needs besides the function.
#[derive(Debug, Clone, Copy)]
pub struct MixedPrecisionOptions {
    /// The dtype to compute in (`float16`, `bfloat16`, `float64`, …).
    pub mixed_type: DataType,
    /// Cast the outermost call or tuple of the body back to its dtypes.
    pub keep_orig_output_dtype: bool,
}

/// The rewritten function and the operators it found without a rule.
#[derive(Debug)]
pub struct MixedPrecisionOutcome {
    pub function: Function,
    /// Operator name → number of calls, for the pass's warnings.
    pub missing_ops: BTreeMap<String, usize>,
}

/// Rewrites `function` (nested functions included) to compute in
/// `options.mixed_type` where the rules allow (see the module doc).
pub fn to_mixed_precision(
    function: &Function,
    module: &IRModule,
    options: &MixedPrecisionOptions,
) -> Result<MixedPrecisionOutcome, Diagnostic> {
    let mut converter = Converter::new(function, module, options)?;
    let rewritten = converter.run(function.expr())?;
    let function = rewritten.as_function().ok_or_else(|| {
        Diagnostic::pass_failed(
            "ToMixedPrecision: the rewrite of a function did not produce a function",
        )
    })?;
    Ok(MixedPrecisionOutcome {
        function,
        missing_ops: converter.missing_ops,
    })
}

/// A node's identity: variables by id (every occurrence is the same
/// variable), other nodes by address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Var(VarId),
    Node(usize),
}

fn key(expr: &Expr) -> Key {
    match expr.kind() {
        ExprKind::Var(v) => Key::Var(v.id),
        _ => Key::Node(expr.addr()),
    }
}

fn failure(message: impl Into<String>) -> Diagnostic {
    Diagnostic::pass_failed(format!("ToMixedPrecision: {}", message.into()))
}

const FLOAT32: DataType = DataType::float(32);

/// TVM's `MixedPrecisionPass` mutator state.
struct Converter<'a> {
    module: &'a IRModule,
    mixed_type: DataType,
    /// Original node → rewritten node.
    memo: HashMap<Key, Expr>,
    /// (node, wanted dtype) → its cast; the node is kept alive beside the
    /// cast so its address is not reused while it is a key.
    casts: HashMap<(Key, DataType), (Expr, Expr)>,
    /// Each `let` variable's original value.
    let_values: HashMap<VarId, Expr>,
    missing_ops: BTreeMap<String, usize>,
    /// The body of the function, when its output dtypes are to be kept.
    kept_root: Option<usize>,
    /// The body's original dtypes (one per tuple field, or one for a call).
    original_dtypes: Vec<DataType>,
}

impl<'a> Converter<'a> {
    fn new(
        function: &Function,
        module: &'a IRModule,
        options: &MixedPrecisionOptions,
    ) -> Result<Converter<'a>, Diagnostic> {
        let mut let_values = HashMap::default();
        relay_ir::rewrite::post_order_each(function.expr(), |e| {
            if let ExprKind::Let { var, value, .. } = e.kind() {
                let_values.insert(var.id(), value.clone());
            }
        });
        let mut converter = Converter {
            module,
            mixed_type: options.mixed_type,
            memo: HashMap::default(),
            casts: HashMap::default(),
            let_values,
            missing_ops: BTreeMap::new(),
            kept_root: None,
            original_dtypes: Vec::new(),
        };
        if options.keep_orig_output_dtype {
            converter.record_output_dtypes(function.body())?;
        }
        Ok(converter)
    }

    /// TVM's constructor: the dtypes of a call or tuple body.
    fn record_output_dtypes(&mut self, body: &Expr) -> Result<(), Diagnostic> {
        let tensor_dtype = |ty: &Type| match ty.kind() {
            TypeKind::Tensor(t) => Ok(t.dtype),
            _ => Err(failure(format!(
                "keep_orig_output_dtype needs tensor outputs, not {}",
                print_type(ty)
            ))),
        };
        let ty = match body.kind() {
            ExprKind::Tuple(_) | ExprKind::Call(_) => self.type_of(body)?,
            _ => return Ok(()),
        };
        self.original_dtypes = match (body.kind(), ty.kind()) {
            (ExprKind::Tuple(_), TypeKind::Tuple(fields)) => {
                fields.iter().map(tensor_dtype).collect::<Result<_, _>>()?
            }
            _ => vec![tensor_dtype(&ty)?],
        };
        self.kept_root = Some(body.addr());
        Ok(())
    }

    /// Rewrites `root` children first without recursion. A `let` visits
    /// its value, then its variable, then its body (TVM's order: the
    /// variable takes the value's new type before the body is rewritten).
    fn run(&mut self, root: &Expr) -> Result<Expr, Diagnostic> {
        enum Step {
            Enter(Expr),
            Exit(Expr),
        }
        let mut stack = vec![Step::Enter(root.clone())];
        while let Some(step) = stack.pop() {
            match step {
                Step::Enter(expr) => {
                    if self.memo.contains_key(&key(&expr)) {
                        continue;
                    }
                    let order: Vec<Expr> = match expr.kind() {
                        ExprKind::Let { var, value, body } => {
                            vec![value.clone(), var.expr().clone(), body.clone()]
                        }
                        _ => children(&expr).into_iter().cloned().collect(),
                    };
                    if order.is_empty() {
                        let post = self.leaf(&expr)?;
                        self.memo.insert(key(&expr), post);
                        continue;
                    }
                    stack.push(Step::Exit(expr));
                    stack.extend(order.into_iter().rev().map(Step::Enter));
                }
                Step::Exit(expr) => {
                    let post = self.node(&expr)?;
                    self.memo.insert(key(&expr), post);
                }
            }
        }
        Ok(self.memo[&key(root)].clone())
    }

    fn post(&self, pre: &Expr) -> Expr {
        self.memo
            .get(&key(pre))
            .cloned()
            .unwrap_or_else(|| pre.clone())
    }

    /// A node without children: a `let` variable gets its value's new type;
    /// everything else stays.
    fn leaf(&mut self, expr: &Expr) -> Result<Expr, Diagnostic> {
        let ExprKind::Var(data) = expr.kind() else {
            return Ok(expr.clone());
        };
        let Some(value) = self.let_values.get(&data.id).cloned() else {
            return Ok(expr.clone());
        };
        let value = self.post(&value);
        let ty = self.type_of(&value)?;
        let var = Var::with_id(
            data.id,
            data.name.clone(),
            Some(ty.clone()),
            data.virtual_device.as_deref().cloned(),
            expr.span(),
        );
        Ok(var.with_checked_type(ty).into_expr())
    }

    /// A node whose children are rewritten.
    fn node(&mut self, pre: &Expr) -> Result<Expr, Diagnostic> {
        let new_children: Vec<Expr> = children(pre).into_iter().map(|c| self.post(c)).collect();
        let unchanged = children(pre)
            .iter()
            .zip(&new_children)
            .all(|(a, b)| a.ptr_eq(b));
        match pre.kind() {
            ExprKind::Call(call) => self.rewrite_call(pre, call, &new_children),
            ExprKind::Tuple(_) => {
                let tuple = if unchanged {
                    pre.clone()
                } else {
                    let types = new_children
                        .iter()
                        .map(|f| self.type_of(f))
                        .collect::<Result<Vec<_>, _>>()?;
                    typed(Expr::tuple(new_children, pre.span()), Type::tuple(types))
                };
                if self.kept_root == Some(pre.addr()) {
                    return self.cast_outputs(tuple);
                }
                Ok(tuple)
            }
            ExprKind::Function(data) => {
                if unchanged && data.ret_type.is_none() {
                    return Ok(pre.clone());
                }
                let (params, body) = new_children.split_at(new_children.len() - 1);
                let function = Function::new(
                    FunctionData {
                        params: params.iter().filter_map(Expr::as_var).collect(),
                        body: body[0].clone(),
                        ret_type: None,
                        ..(**data).clone()
                    },
                    pre.span(),
                )
                .into_expr();
                let ty = match pre.checked_type() {
                    Some(ty) if unchanged => ty.clone(),
                    _ => self.infer(&function)?,
                };
                Ok(typed(function, ty))
            }
            _ if unchanged => Ok(pre.clone()),
            ExprKind::TupleGetItem { index, .. } => {
                let tuple = &new_children[0];
                let ty = field_type(&self.type_of(tuple)?, *index)?;
                Ok(typed(
                    Expr::tuple_get_item(tuple.clone(), *index, pre.span()),
                    ty,
                ))
            }
            ExprKind::Let { .. } => {
                let ty = self.type_of(&new_children[2])?;
                let rebuilt = rebuild(pre, &new_children, NodeUpdate::default());
                Ok(typed(rebuilt, ty))
            }
            _ => {
                // `if`, `match`, references: re-typed from their new children.
                let rebuilt = rebuild(pre, &new_children, NodeUpdate::default());
                let stand_in = self.stand_in(&rebuilt)?;
                let ty = self.infer(&stand_in)?;
                Ok(typed(rebuilt, ty))
            }
        }
    }

    /// TVM's `Rewrite_(const CallNode*)`.
    fn rewrite_call(
        &mut self,
        pre: &Expr,
        call: &Call,
        new_children: &[Expr],
    ) -> Result<Expr, Diagnostic> {
        let callee = new_children[0].clone();
        let args = &new_children[1..];
        let initial = match callee.kind() {
            ExprKind::GlobalVar(_) | ExprKind::Constructor(_) | ExprKind::Var(_) => {
                return Err(failure(
                    "Algebraic Data Types (ADT) are not supported yet for mixed precision pass \
                     (a call of a global function, a constructor or a local function)",
                ))
            }
            // Calls of function literals keep the function's signature.
            ExprKind::Function(_) => Category::Never,
            ExprKind::Op(op) => category_of(&op.name).unwrap_or_else(|| {
                *self.missing_ops.entry(op.name.to_string()).or_insert(0) += 1;
                Category::Follow
            }),
            _ => {
                return Err(failure(format!(
                    "Unsupported op type in CallNode: {}",
                    relay_ir::printer::print_expr(
                        &call.callee,
                        &relay_ir::printer::PrintOptions::default()
                    )
                )))
            }
        };
        let mut arg_types = Vec::with_capacity(args.len());
        let mut all_compatible = true;
        for arg in args {
            let ty = self.type_of(arg)?;
            if initial == Category::Follow && all_compatible {
                all_compatible = self.is_mixed_type(&ty, true)?
                    || matches!(arg.kind(), ExprKind::Var(_) | ExprKind::Constant(_));
            }
            arg_types.push(ty);
        }
        let always = match initial {
            Category::Always => true,
            Category::Never => false,
            Category::Follow => all_compatible,
        };
        let wanted = if always { self.mixed_type } else { FLOAT32 };
        let new_args = args
            .iter()
            .zip(&arg_types)
            .map(|(arg, ty)| self.cast_arg(arg, ty, wanted))
            .collect::<Result<Vec<_>, _>>()?;
        let attrs = if always {
            call.attrs
                .as_ref()
                .map(|attrs| with_accumulation_dtype(attrs, self.mixed_type))
        } else {
            call.attrs.clone()
        };
        let output = self
            .typed_call(callee.clone(), new_args, attrs, pre.span())
            .map_err(|error| explain_rejected_call(error, &callee, always, self.mixed_type))?;
        if always && self.kept_root == Some(pre.addr()) {
            // The accumulation and output dtypes of every default rule are
            // the mixed type, so only the kept dtype can ask for a cast.
            if let Some(&original) = self.original_dtypes.first() {
                if original != self.mixed_type {
                    let ty = self.type_of(&output)?;
                    return self.cast_arg(&output, &ty, original);
                }
            }
        }
        Ok(output)
    }

    /// The kept-output tuple: each field `t.i` cast back to its original
    /// dtype; the tuple itself when nothing needs a cast.
    fn cast_outputs(&mut self, tuple: Expr) -> Result<Expr, Diagnostic> {
        let tuple_type = self.type_of(&tuple)?;
        let mut fields = Vec::with_capacity(self.original_dtypes.len());
        let mut all_same = true;
        for (i, original) in self.original_dtypes.clone().into_iter().enumerate() {
            let field = typed(
                Expr::tuple_get_item(tuple.clone(), i, None),
                field_type(&tuple_type, i)?,
            );
            let ty = self.type_of(&field)?;
            let cast = self.cast_arg(&field, &ty, original)?;
            all_same &= cast.ptr_eq(&field);
            fields.push(cast);
        }
        if all_same {
            return Ok(tuple);
        }
        let types = fields
            .iter()
            .map(|f| self.type_of(f))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(typed(Expr::tuple(fields, None), Type::tuple(types)))
    }

    /// TVM's `IsMixedPrecisionType`.
    fn is_mixed_type(&self, ty: &Type, ignore_non_float: bool) -> Result<bool, Diagnostic> {
        match ty.kind() {
            TypeKind::Tensor(t) => {
                let floating = t.dtype.is_float() || t.dtype.is_bfloat16();
                Ok((ignore_non_float && !floating) || t.dtype == self.mixed_type)
            }
            TypeKind::Tuple(fields) => {
                for field in fields {
                    if !self.is_mixed_type(field, ignore_non_float)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            _ => Err(failure(format!(
                "Unsupported type {} we don't know how to handle",
                print_type(ty)
            ))),
        }
    }

    /// TVM's `CastArg`: a tensor through the cast cache, a tuple field by
    /// field (a new tuple of `t.i` only when some field was cast).
    fn cast_arg(&mut self, expr: &Expr, ty: &Type, wanted: DataType) -> Result<Expr, Diagnostic> {
        match ty.kind() {
            TypeKind::Tensor(t) => Ok(self.cached_cast(expr, t.dtype, &t.shape, wanted)),
            TypeKind::Tuple(fields) => {
                let mut new_fields = Vec::with_capacity(fields.len());
                let mut all_same = true;
                for (i, field_ty) in fields.iter().enumerate() {
                    let field = typed(
                        Expr::tuple_get_item(expr.clone(), i, None),
                        field_ty.clone(),
                    );
                    let cast = self.cast_arg(&field, field_ty, wanted)?;
                    all_same &= cast.ptr_eq(&field);
                    new_fields.push(cast);
                }
                if all_same {
                    return Ok(expr.clone());
                }
                let types = new_fields
                    .iter()
                    .map(|f| self.type_of(f))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(typed(Expr::tuple(new_fields, None), Type::tuple(types)))
            }
            _ => Err(failure(format!(
                "Unsupported type {} we don't know how to cast for arguments!",
                print_type(ty)
            ))),
        }
    }

    /// TVM's `CachedCast`: non-float tensors and tensors already in the
    /// wanted dtype stay; a cast is made once per (node, dtype), and the
    /// cast's own way back leads to the original node.
    fn cached_cast(
        &mut self,
        expr: &Expr,
        dtype: DataType,
        shape: &[relay_ir::Dim],
        wanted: DataType,
    ) -> Expr {
        if !(dtype.is_float() || dtype.is_bfloat16()) || dtype == wanted {
            return expr.clone();
        }
        if let Some((_, cast)) = self.casts.get(&(key(expr), wanted)) {
            return cast.clone();
        }
        let cast = typed(
            op_call_with(
                "cast",
                vec![expr.clone()],
                &[("dtype", AttrValue::DataType(wanted))],
            ),
            Type::tensor(shape.to_vec(), wanted),
        );
        self.casts
            .insert((key(expr), wanted), (expr.clone(), cast.clone()));
        self.casts
            .insert((key(&cast), dtype), (cast.clone(), expr.clone()));
        cast
    }

    /// A call with its type (TVM's `InferTypeLocal` on the new call: the
    /// arguments stand in as typed variables).
    fn typed_call(
        &self,
        callee: Expr,
        args: Vec<Expr>,
        attrs: Option<Attrs>,
        span: Option<relay_ir::source::Span>,
    ) -> Result<Expr, Diagnostic> {
        let call = Expr::call(callee, args, attrs, span);
        let stand_in = self.stand_in(&call)?;
        let ty = self.infer(&stand_in).map_err(|error| match span {
            // At the call it rewrote, not nowhere.
            Some(span) if error.span.is_none() => error.with_span(span),
            _ => error,
        })?;
        Ok(typed(call, ty))
    }

    /// `expr` with each typed child that is not a binding replaced by a
    /// variable of the child's type, so inferring it looks one level deep.
    fn stand_in(&self, expr: &Expr) -> Result<Expr, Diagnostic> {
        let dummy = |child: &Expr| -> Result<Expr, Diagnostic> {
            if matches!(child.kind(), ExprKind::Op(_)) {
                return Ok(child.clone());
            }
            if let ExprKind::Function(data) = child.kind() {
                if !data.type_params.is_empty() {
                    return Ok(child.clone());
                }
            }
            let ty = self.type_of(child)?;
            Ok(Var::new("dummy_var", Some(ty), None).into_expr())
        };
        Ok(match expr.kind() {
            ExprKind::Call(call) => {
                let args = call.args.iter().map(dummy).collect::<Result<_, _>>()?;
                Expr::call(dummy(&call.callee)?, args, call.attrs.clone(), expr.span())
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => Expr::if_(
                dummy(cond)?,
                dummy(then_branch)?,
                dummy(else_branch)?,
                expr.span(),
            ),
            ExprKind::RefCreate(value) => {
                Expr::new(ExprKind::RefCreate(dummy(value)?), expr.span())
            }
            ExprKind::RefRead(value) => Expr::new(ExprKind::RefRead(dummy(value)?), expr.span()),
            ExprKind::RefWrite { reference, value } => Expr::new(
                ExprKind::RefWrite {
                    reference: dummy(reference)?,
                    value: dummy(value)?,
                },
                expr.span(),
            ),
            // A match is inferred whole: its clauses bind variables.
            _ => expr.clone(),
        })
    }

    /// TVM's `GetType`: the type a node carries, else inferred.
    fn type_of(&self, expr: &Expr) -> Result<Type, Diagnostic> {
        if let Some(ty) = expr.checked_type() {
            return Ok(ty.clone());
        }
        if let ExprKind::Var(v) = expr.kind() {
            if let Some(ty) = &v.type_annotation {
                return Ok(ty.clone());
            }
        }
        self.infer(expr)
    }

    /// The inferred type of `expr` (globals and ADTs from the module); a
    /// type error fails the pass, as in TVM.
    fn infer(&self, expr: &Expr) -> Result<Type, Diagnostic> {
        let (typed, diagnostics) = infer_expr(expr, Some(self.module));
        if let Some(error) = diagnostics.iter().find(|d| d.is_error()) {
            return Err(failure(format!(
                "type inference of a rewritten expression failed: {}",
                error.message
            )));
        }
        typed
            .checked_type()
            .cloned()
            .ok_or_else(|| failure("type inference of a rewritten expression found no type"))
    }
}

/// A rewritten call whose type inference failed, with what the pass did to
/// it: an operator without a rule that was converted as FOLLOW had its
/// `float32` arguments cast, which its relation may reject (`qnn.*`
/// operators want `float32` scales). TVM v0.13 makes the same call and its
/// `InferTypeLocal` fails with the same relation error.
fn explain_rejected_call(
    error: Diagnostic,
    callee: &Expr,
    converted: bool,
    mixed_type: DataType,
) -> Diagnostic {
    let ExprKind::Op(op) = callee.kind() else {
        return error;
    };
    if !converted || category_of(&op.name).is_some() {
        return error;
    }
    error
        .with_note(format!(
            "`{name}` has no conversion rule, so it is treated as FOLLOW (TVM treats an \
             operator without FTVMMixedPrecisionConversionType so too); its other arguments \
             being integers, variables or constants, its float arguments were cast to \
             {mixed_type}, which `{name}`'s type relation rejects. TVM v0.13 fails here too, \
             with the same relation error",
            name = op.name
        ))
        .with_help(format!(
            "ToMixedPrecision is for float models: run it before quantizing. TVM lets a \
             program give `{}` a NEVER rule (register FTVMMixedPrecisionConversionType); \
             only TVM's default rules exist here",
            op.name
        ))
}

/// `expr` carrying `ty` as its checked type.
fn typed(expr: Expr, ty: Type) -> Expr {
    let kids: Vec<Expr> = children(&expr).into_iter().cloned().collect();
    rebuild(
        &expr,
        &kids,
        NodeUpdate {
            checked_type: Some(ty),
            ..NodeUpdate::default()
        },
    )
}

/// Field `index` of a tuple type.
fn field_type(ty: &Type, index: usize) -> Result<Type, Diagnostic> {
    match ty.kind() {
        TypeKind::Tuple(fields) if index < fields.len() => Ok(fields[index].clone()),
        _ => Err(failure(format!(
            "field {index} of a value of type {}",
            print_type(ty)
        ))),
    }
}

/// TVM's `GetNewAttrs`: the accumulation dtype in `out_dtype` (convolutions,
/// dense, batch_matmul) or `dtype` (`zeros`, `ones`, `full`), when that
/// field is a float or unset.
fn with_accumulation_dtype(attrs: &Attrs, accumulation: DataType) -> Attrs {
    let field = if OUT_DTYPE_ATTRS.contains(&attrs.type_key()) {
        "out_dtype"
    } else if attrs.type_key() == DTYPE_ATTRS {
        "dtype"
    } else {
        return attrs.clone();
    };
    let current = match attrs.get(field) {
        Some(AttrValue::DataType(dtype)) => Some(*dtype),
        Some(AttrValue::Str(text)) => DataType::parse(text).ok(),
        _ => None,
    };
    match current {
        Some(dtype) if dtype.is_float() || dtype.is_bfloat16() || dtype.is_void() => {
            relay_ir::build::attrs_replacing(attrs, &[(field, AttrValue::DataType(accumulation))])
        }
        _ => attrs.clone(),
    }
}

#[cfg(test)]
mod tests;
