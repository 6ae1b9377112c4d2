//! `FirstOrderGradient`: TVM v0.13's module pass (opt_level 0,
//! `first_order_gradient.cc`) that turns every function `fn (x1, …, xn) ->
//! R` of a module into `fn (x1, …, xn) -> (R, (T1, …, Tn))`, returning its
//! result together with the gradient of the result with respect to each
//! parameter, by reverse-mode automatic differentiation.
//!
//! The forward computation is bound to `let` variables (`x_N`), each with a
//! variable for its gradient, initially `zeros_like` of it; the backward
//! computation starts from `ones_like` of the result and runs the operators'
//! gradients ([`super::primal`]) in reverse order, adding each into the
//! gradient variables of the arguments.
//!
//! As in TVM: only first-order programs of tensors and tuples are accepted
//! (variables, constants, tuples, projections, function literals, operator
//! calls — TVM's feature check, with its message); polymorphic functions are
//! refused; an operator without a gradient is an error naming it; the result
//! is not type-checked again (new nodes print without types, except the
//! forward values TVM types).

use super::let_list::LetList;
use super::primal::gradient_of;
use crate::feature::{check_module_features, Feature, FeatureSet};
use relay_ir::build::{int_array, op_call, op_call_with};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::op::OpDef;
use relay_ir::printer::readable;
use relay_ir::{
    AttrValue, Call, Expr, ExprKind, Function, FunctionData, IRModule, Type, TypeKind, VarId,
};
use relay_pass_manager::PassSpec;
use std::cell::RefCell;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;
use std::rc::Rc;

pub(crate) fn spec() -> PassSpec {
    PassSpec::module("FirstOrderGradient", 0)
        .doc(
            "Return each function's result with its gradient with respect to every parameter \
             (reverse-mode AD of first-order programs of tensors and tuples; the gradients of \
             pooling, max, matmul, batch_matmul, variance, take, stack, strided_slice, \
             one_hot, gather_nd, arange, cross entropy and contrib_reverse_reshape are not \
             ported yet)",
        )
        .transform(|module, _ctx| first_order_gradient(module))
}

/// The features a program may use (TVM's check before the pass).
fn allowed_features() -> FeatureSet {
    FeatureSet::of(&[
        Feature::Var,
        Feature::Constant,
        Feature::Tuple,
        Feature::TupleGetItem,
        Feature::Function,
        Feature::Op,
        Feature::Call,
        Feature::Graph,
    ])
}

/// The pass: every function of `module` differentiated on its own.
pub fn first_order_gradient(module: IRModule) -> Result<IRModule, Diagnostic> {
    first_order_gradient_in("FirstOrderGradient", module)
}

/// [`first_order_gradient`] for the pass `pass` (messages name it).
pub(crate) fn first_order_gradient_in(
    pass: &str,
    module: IRModule,
) -> Result<IRModule, Diagnostic> {
    check_module_features(pass, &module, allowed_features())?;
    let mut result = module.clone();
    for (name, function) in module.functions() {
        if !function.data().type_params.is_empty() {
            return Err(Diagnostic::pass_failed_at(
                function.expr(),
                "first-order AD does not support polymorphism yet.",
            ));
        }
        result.add_function(name, differentiate(function)?);
    }
    Ok(result)
}

fn checked_type(expr: &Expr) -> Result<Type, Diagnostic> {
    expr.checked_type().cloned().ok_or_else(|| {
        Diagnostic::pass_failed_at(
            expr,
            "an expression has no checked type; run InferType first",
        )
    })
}

/// A value of the differentiated program (TVM's `ADValue`).
#[derive(Clone)]
enum AdValue {
    Tensor(TensorRef),
    Function(Rc<AdFunction>),
}

/// A tensor (or tuple of tensors): its let-bound forward value and the
/// current expression of its gradient.
struct AdTensor {
    forward: Expr,
    reverse: Expr,
}

type TensorRef = Rc<RefCell<AdTensor>>;

enum AdFunction {
    /// An operator with a registered gradient (the callee node as written).
    Op(&'static OpDef, Expr),
    /// A function literal: calling it binds its parameters and visits its
    /// body.
    Lambda(Function),
}

/// One step of the backward pass, run last to first.
enum Backprop {
    Op {
        op: &'static OpDef,
        args: Vec<AdValue>,
        orig: Expr,
        /// The call in the module, where an error about its gradient points.
        site: Expr,
        result: TensorRef,
    },
    Project {
        tuple: TensorRef,
        fields: Vec<Type>,
        index: usize,
        result: TensorRef,
    },
    Tuple {
        fields: Vec<TensorRef>,
        types: Vec<Type>,
        result: TensorRef,
    },
}

impl AdValue {
    /// TVM's `get<ADTensor>()`.
    fn tensor(&self) -> Result<TensorRef, Diagnostic> {
        match self {
            AdValue::Tensor(t) => Ok(t.clone()),
            AdValue::Function(_) => Err(Diagnostic::pass_failed("cannot downcast")),
        }
    }
}

#[derive(Clone, Copy)]
enum Factory {
    Zeros,
    Ones,
}

/// TVM's `MultiFactory`: `zeros(shape, dtype)` (or `ones`) for each tensor
/// of a (nested) tuple type.
fn multi_factory(ty: &Type, factory: Factory) -> Result<Expr, Diagnostic> {
    match ty.kind() {
        TypeKind::Tensor(t) => {
            let dims: Vec<i64> = t
                .shape
                .iter()
                .map(|d| {
                    d.as_int()
                        .ok_or_else(|| Diagnostic::pass_failed("shape must be constant"))
                })
                .collect::<Result<_, _>>()?;
            let name = match factory {
                Factory::Zeros => "zeros",
                Factory::Ones => "ones",
            };
            Ok(op_call_with(
                name,
                Vec::new(),
                &[
                    ("shape", int_array(&dims)),
                    ("dtype", AttrValue::DataType(t.dtype)),
                ],
            ))
        }
        TypeKind::Tuple(fields) => {
            let fields = fields
                .iter()
                .map(|f| multi_factory(f, factory))
                .collect::<Result<_, _>>()?;
            Ok(Expr::tuple(fields, None))
        }
        _ => Err(factory_error(ty)),
    }
}

fn factory_error(ty: &Type) -> Diagnostic {
    Diagnostic::pass_failed(format!(
        "could not build tensors using factory for type {}",
        readable::ty(ty)
    ))
}

/// TVM's `MultiFactoryLike`: `zeros_like(e)` for a tensor, the factory's
/// tuple for a tuple.
fn multi_factory_like(expr: &Expr, ty: &Type, factory: Factory) -> Result<Expr, Diagnostic> {
    match ty.kind() {
        TypeKind::Tensor(_) => Ok(op_call(
            match factory {
                Factory::Zeros => "zeros_like",
                Factory::Ones => "ones_like",
            },
            vec![expr.clone()],
        )),
        TypeKind::Tuple(_) => multi_factory(ty, factory),
        _ => Err(factory_error(ty)),
    }
}

/// TVM's `LiftedAdd`: `x + y` for tensors, field by field for tuples, each
/// sum bound in `lets`.
fn lifted_add(ty: &Type, x: Expr, y: Expr, lets: &mut LetList) -> Result<Expr, Diagnostic> {
    match ty.kind() {
        TypeKind::Tensor(_) => Ok(lets.push(op_call("add", vec![x, y])).into_expr()),
        TypeKind::Tuple(fields) => {
            let mut sums = Vec::with_capacity(fields.len());
            for (i, field) in fields.iter().enumerate() {
                let xi = lets.push(Expr::tuple_get_item(x.clone(), i, None));
                let yi = lets.push(Expr::tuple_get_item(y.clone(), i, None));
                sums.push(lifted_add(field, xi.into_expr(), yi.into_expr(), lets)?);
            }
            Ok(lets.push(Expr::tuple(sums, None)).into_expr())
        }
        _ => Err(Diagnostic::pass_failed(format!(
            "cannot lift addition for type {}",
            readable::ty(ty)
        ))),
    }
}

/// How deeply nested an expression the pass follows (it recurses).
pub const MAX_DEPTH: usize = 2000;

/// TVM's `FirstOrderReverseAD`.
struct ReverseAd {
    lets: LetList,
    backprop: Vec<Backprop>,
    memo: HashMap<usize, AdValue>,
    vars: HashMap<VarId, AdValue>,
}

impl ReverseAd {
    /// TVM's `ADTensor(ll, forward)`: binds the value (typed as the
    /// original) and a gradient of zeros for it.
    fn tensor(&mut self, forward: Expr) -> Result<TensorRef, Diagnostic> {
        // A parameter read back from text without inference has only its
        // annotation.
        let ty = match forward.as_var().and_then(|v| v.type_annotation().cloned()) {
            Some(annotation) if forward.checked_type().is_none() => annotation,
            _ => checked_type(&forward)?,
        };
        let var = self.lets.push_typed(forward, Some(ty.clone()));
        let zeros = multi_factory_like(var.expr(), &ty, Factory::Zeros)?;
        let reverse = self.lets.push(zeros).into_expr();
        Ok(Rc::new(RefCell::new(AdTensor {
            forward: var.into_expr(),
            reverse,
        })))
    }

    fn visit(&mut self, expr: &Expr, depth: usize) -> Result<AdValue, Diagnostic> {
        if depth > MAX_DEPTH {
            return Err(Diagnostic::pass_failed(format!(
                "FirstOrderGradient: the expression is nested more than {MAX_DEPTH} levels deep"
            )));
        }
        if let ExprKind::Var(data) = expr.kind() {
            return self.vars.get(&data.id).cloned().ok_or_else(|| {
                Diagnostic::pass_failed_at(expr, "Do not have a default for relay.Var")
            });
        }
        if let Some(value) = self.memo.get(&expr.addr()) {
            return Ok(value.clone());
        }
        let value = self.visit_node(expr, depth)?;
        self.memo.insert(expr.addr(), value.clone());
        Ok(value)
    }

    fn visit_node(&mut self, expr: &Expr, depth: usize) -> Result<AdValue, Diagnostic> {
        match expr.kind() {
            ExprKind::Op(op) => {
                if gradient_of(&op.name).is_none() {
                    return Err(Diagnostic::pass_failed_at(
                        expr,
                        format!(
                            "the operator {} does not have a registered gradient.",
                            op.name
                        ),
                    ));
                }
                Ok(AdValue::Function(Rc::new(AdFunction::Op(op, expr.clone()))))
            }
            ExprKind::Function(_) => {
                let function = expr.as_function().expect("a function node");
                Ok(AdValue::Function(Rc::new(AdFunction::Lambda(function))))
            }
            ExprKind::Constant(_) => Ok(AdValue::Tensor(self.tensor(expr.clone())?)),
            ExprKind::TupleGetItem { tuple, index } => {
                let tuple_value = self.visit(tuple, depth + 1)?.tensor()?;
                let fields = match checked_type(tuple)?.kind() {
                    TypeKind::Tuple(fields) => fields.clone(),
                    _ => {
                        return Err(Diagnostic::pass_failed_at(
                            tuple,
                            "a projection of a value that is not a tuple",
                        ))
                    }
                };
                let forward = tuple_value.borrow().forward.clone();
                let projection = Expr::with_type(
                    ExprKind::TupleGetItem {
                        tuple: forward,
                        index: *index,
                    },
                    None,
                    Some(checked_type(expr)?),
                );
                let result = self.tensor(projection)?;
                self.backprop.push(Backprop::Project {
                    tuple: tuple_value,
                    fields,
                    index: *index,
                    result: result.clone(),
                });
                Ok(AdValue::Tensor(result))
            }
            ExprKind::Tuple(fields) => {
                let types = match checked_type(expr)?.kind() {
                    TypeKind::Tuple(types) => types.clone(),
                    _ => {
                        return Err(Diagnostic::pass_failed_at(
                            expr,
                            "a tuple without a tuple type",
                        ))
                    }
                };
                let mut values = Vec::with_capacity(fields.len());
                let mut bindings = Vec::with_capacity(fields.len());
                for field in fields {
                    let value = match self.visit(field, depth + 1)? {
                        AdValue::Tensor(t) => t,
                        AdValue::Function(_) => {
                            return Err(Diagnostic::pass_failed_at(
                                field,
                                "first-order AD only supports (nested) tuples of tensors",
                            ))
                        }
                    };
                    bindings.push(value.borrow().forward.clone());
                    values.push(value);
                }
                let ty = Type::new(TypeKind::Tuple(types.clone()));
                let rebuilt = Expr::with_type(ExprKind::Tuple(bindings), expr.span(), Some(ty));
                let result = self.tensor(rebuilt)?;
                self.backprop.push(Backprop::Tuple {
                    fields: values,
                    types,
                    result: result.clone(),
                });
                Ok(AdValue::Tensor(result))
            }
            ExprKind::Call(call) => {
                let callee = self.visit(&call.callee, depth + 1)?;
                let mut args = Vec::with_capacity(call.args.len());
                for arg in &call.args {
                    args.push(self.visit(arg, depth + 1)?);
                }
                self.apply(&callee, args, expr, call, depth)
            }
            ExprKind::GlobalVar(_) => Err(Diagnostic::pass_failed_at(
                expr,
                "Do not have a default for GlobalVar",
            )),
            _ => Err(Diagnostic::pass_failed_at(
                expr,
                "first-order AD does not support this expression (see the feature check)",
            )),
        }
    }

    /// Calls a function value on differentiated arguments.
    fn apply(
        &mut self,
        callee: &AdValue,
        args: Vec<AdValue>,
        orig: &Expr,
        call: &Call,
        depth: usize,
    ) -> Result<AdValue, Diagnostic> {
        let AdValue::Function(function) = callee else {
            return Err(Diagnostic::pass_failed("cannot downcast"));
        };
        match function.as_ref() {
            AdFunction::Op(op, op_expr) => {
                let mut forward_args = Vec::with_capacity(args.len());
                for arg in &args {
                    forward_args.push(arg.tensor()?.borrow().forward.clone());
                }
                let orig_new = Expr::with_type(
                    ExprKind::Call(Call {
                        callee: op_expr.clone(),
                        args: forward_args,
                        attrs: call.attrs.clone(),
                        type_args: call.type_args.clone(),
                    }),
                    None,
                    Some(checked_type(orig)?),
                );
                let result = self.tensor(orig_new.clone())?;
                self.backprop.push(Backprop::Op {
                    op,
                    args,
                    orig: orig_new,
                    site: orig.clone(),
                    result: result.clone(),
                });
                Ok(AdValue::Tensor(result))
            }
            AdFunction::Lambda(f) => self.call_lambda(f, args, depth),
        }
    }

    fn call_lambda(
        &mut self,
        f: &Function,
        args: Vec<AdValue>,
        depth: usize,
    ) -> Result<AdValue, Diagnostic> {
        if f.params().len() != args.len() {
            return Err(Diagnostic::pass_failed_at(
                f.expr(),
                format!(
                    "Check failed: f->params.size() == ad_args.size() ({} vs. {})",
                    f.params().len(),
                    args.len()
                ),
            ));
        }
        for (param, arg) in f.params().iter().zip(args) {
            self.vars.insert(param.id(), arg);
        }
        self.visit(f.body(), depth + 1)
    }

    /// Runs one backward step, binding into `lets`.
    fn run(step: &Backprop, lets: &mut LetList) -> Result<(), Diagnostic> {
        match step {
            Backprop::Op {
                op,
                args,
                orig,
                site,
                result,
            } => {
                let ExprKind::Call(call) = orig.kind() else {
                    unreachable!("the forward value of an operator is a call")
                };
                let gradient = gradient_of(&op.name).expect("checked when the operator was met");
                let grad = result.borrow().reverse.clone();
                let grads = gradient(orig, call, &grad).map_err(|d| {
                    let message = format!("the gradient of {}: {}", op.name, d.message);
                    Diagnostic::pass_failed_at(site, message)
                })?;
                if grads.len() != args.len() {
                    return Err(Diagnostic::pass_failed_at(
                        site,
                        format!(
                        "arity mismatch for operator {} and its registered gradient: expected {} \
                         but got {} gradients.",
                            op.name,
                            args.len(),
                            grads.len()
                        ),
                    ));
                }
                for (arg, grad) in args.iter().zip(grads) {
                    let arg = arg.tensor()?;
                    let (ty, reverse) = {
                        let arg = arg.borrow();
                        (checked_type(&arg.forward)?, arg.reverse.clone())
                    };
                    let sum = lifted_add(&ty, reverse, grad, lets)?;
                    arg.borrow_mut().reverse = sum;
                }
            }
            Backprop::Project {
                tuple,
                fields,
                index,
                result,
            } => {
                let tuple_reverse = tuple.borrow().reverse.clone();
                let mut updated = Vec::with_capacity(fields.len());
                for (i, field) in fields.iter().enumerate() {
                    let before = Expr::tuple_get_item(tuple_reverse.clone(), i, None);
                    updated.push(if i == *index {
                        let grad = result.borrow().reverse.clone();
                        lifted_add(field, before, grad, lets)?
                    } else {
                        before
                    });
                }
                tuple.borrow_mut().reverse = lets.push(Expr::tuple(updated, None)).into_expr();
            }
            Backprop::Tuple {
                fields,
                types,
                result,
            } => {
                let result_reverse = result.borrow().reverse.clone();
                for (i, (field, ty)) in fields.iter().zip(types).enumerate() {
                    let before = field.borrow().reverse.clone();
                    let grad = Expr::tuple_get_item(result_reverse.clone(), i, None);
                    let sum = lifted_add(ty, before, grad, lets)?;
                    field.borrow_mut().reverse = sum;
                }
            }
        }
        Ok(())
    }
}

/// TVM's `GradRetType`: `(R, (T1, …, Tn))` when the function's return type
/// and every parameter are annotated; otherwise none (left to inference).
pub(super) fn grad_ret_type(f: &Function) -> Option<Type> {
    let ret = f.data().ret_type.clone()?;
    let params: Option<Vec<Type>> = f
        .params()
        .iter()
        .map(|p| p.type_annotation().cloned())
        .collect();
    let params = Type::new(TypeKind::Tuple(params?));
    Some(Type::new(TypeKind::Tuple(vec![ret, params])))
}

/// One function, differentiated.
fn differentiate(f: &Function) -> Result<Function, Diagnostic> {
    let mut ad = ReverseAd {
        lets: LetList::default(),
        backprop: Vec::new(),
        memo: HashMap::default(),
        vars: HashMap::default(),
    };
    let mut params = Vec::with_capacity(f.params().len());
    for param in f.params() {
        params.push(ad.tensor(param.expr().clone())?);
    }
    let args = params.iter().cloned().map(AdValue::Tensor).collect();
    let result = ad.call_lambda(f, args, 0)?.tensor()?;

    let mut backward = LetList::default();
    let (forward, ty) = {
        let result = result.borrow();
        (result.forward.clone(), checked_type(&result.forward)?)
    };
    result.borrow_mut().reverse = multi_factory_like(&forward, &ty, Factory::Ones)?;
    for step in ad.backprop.iter().rev() {
        ReverseAd::run(step, &mut backward)?;
    }
    let grads = params.iter().map(|p| p.borrow().reverse.clone()).collect();
    let grad_tuple = backward.get(Expr::tuple(grads, None));
    let body = ad.lets.get(Expr::tuple(vec![forward, grad_tuple], None));

    let data = f.data();
    let function = FunctionData {
        body,
        ret_type: grad_ret_type(f),
        type_params: Vec::new(),
        ..data.clone()
    };
    Ok(Function::new(function, f.expr().span()))
}
