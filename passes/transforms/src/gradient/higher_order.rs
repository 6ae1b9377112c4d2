//! `gradient` in TVM v0.13's higher-order mode (`higher_order_gradient.cc`,
//! `ReverseAD`): reverse-mode automatic differentiation of any Relay
//! function of tensors — `let`, `if`, tuples, references, closures, ADTs,
//! `match` and calls of global functions included.
//!
//! Every tensor value `t` of the program becomes a pair `(t, ref(∂t))`: its
//! value and a reference accumulating its gradient (the type mapping of
//! [`reverse_type`]). A reference `bp` holds the backpropagator, a closure
//! `fn () -> ()`: each operator call, after computing its value, replaces
//! `bp` by a closure that adds the operator's gradients (the table of
//! [`super::primal`], shared with `FirstOrderGradient`) into its arguments'
//! references and then calls the previous backpropagator. Every function
//! gets `bp` as an extra last parameter; a global function `@f` the program
//! calls is differentiated once into `@f_grad`, added to the module. The
//! result is `fn (x1, …, xn) -> (R, (T1, …, Tn))`: the function is run on
//! `(xi, ref(zeros_like(xi)))`, the result's gradient is set to ones, the
//! backpropagator is called and the parameters' gradients are read.
//!
//! The order of bindings and the names of fresh variables (`x_N`, `bp`)
//! follow TVM's construction, so the printed result is TVM's. As in TVM, the
//! result is not type-checked again: run `InferType` after it.

use super::first_order::grad_ret_type;
use super::let_list::LetList;
use super::primal::gradient_of;
use crate::feature::{check_features, check_module_features, Feature, FeatureSet};
use crate::normal_form::{to_normal_form, NormalForm};
use crate::partial_eval::dedup::{dedup, TypeSubst};
use crate::partial_eval::with_stack;
use relay_ir::attrs::DictAttrs;
use relay_ir::build::op_call;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::printer::readable;
use relay_ir::rewrite::rewrite_post_order;
use relay_ir::{
    Call, Clause, Expr, ExprKind, FuncType, Function, FunctionData, IRModule, Type, TypeKind, Var,
    VarId,
};
use std::collections::BTreeSet;
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxMap as HashMap;

/// How deeply nested an expression the differentiation follows (it
/// recurses; the stack grows as needed, this bounds the memory).
pub const MAX_DEPTH: usize = 20_000;

/// The operator TVM treats as a gradient checkpoint (recomputed in the
/// backward pass instead of kept).
const CHECKPOINT: &str = "annotation.checkpoint";

/// The differentiation of `expr` — a function, or a global variable of
/// `module` naming one — in the higher-order mode (TVM's
/// `relay._transform.gradient`). Global functions the program calls are
/// differentiated into `@<name>_grad` functions added to `module`, which
/// is therefore required when the program calls any.
pub fn higher_order_gradient(
    expr: &Expr,
    module: Option<&mut IRModule>,
) -> Result<Expr, Diagnostic> {
    let allowed = FeatureSet::all().without(Feature::Graph);
    check_features("Gradient", expr, allowed)?;
    if let Some(module) = module.as_deref() {
        check_module_features("Gradient", module, allowed)?;
    }
    let e = de_global(module.as_deref(), expr);
    let f = e
        .as_function()
        .ok_or_else(|| check_failed(&e, "f", "input need to be a function"))?;
    if !f.data().type_params.is_empty() {
        return Err(check_failed(
            &e,
            "f->type_params.size() == 0",
            "no polymorphism supported for now",
        ));
    }
    for param in f.params() {
        let ty = param
            .expr()
            .checked_type()
            .or_else(|| param.type_annotation());
        if !matches!(ty.map(Type::kind), Some(TypeKind::Tensor(_))) {
            return Err(check_failed(
                param.expr(),
                "p->checked_type().as<TensorTypeNode>()",
                "input parameters need to be tensor",
            ));
        }
    }
    check_gradients(&e)?;
    let body_type = checked_type(f.body())?;

    let mut shared = Shared {
        module,
        ad_vars: HashMap::default(),
        ad_globals: HashMap::default(),
    };
    let mut ll = LetList::default();
    let bp = ll.push_annotated(backprop_empty(), backprop_type());
    let rev = Visitor::new(bp.clone()).visit(&mut shared, &e, 0)?;
    let mut normal_args = Vec::with_capacity(f.params().len());
    for param in f.params() {
        let p = param.expr().clone();
        let x = ll.push(pair(p.clone(), ref_create(zeros_like(p))));
        normal_args.push(x.into_expr());
    }
    let mut args = normal_args.clone();
    args.push(bp.expr().clone());
    let c = ll.push(call(rev, args)).into_expr();
    init_grad(&c, &body_type, &mut ll)?;
    ll.push(call(ref_read(bp.into_expr()), Vec::new()));
    let grads = normal_args
        .iter()
        .map(|a| ref_read(field(a.clone(), 1)))
        .collect();
    let result = final_result(&c, &body_type, &mut ll)?;
    let body = ll.get(pair(result, Expr::tuple(grads, None)));

    let data = f.data();
    let gradient = Function::new(
        FunctionData {
            body,
            ret_type: grad_ret_type(&f),
            type_params: Vec::new(),
            ..data.clone()
        },
        f.expr().span(),
    )
    .into_expr();
    check_features("Gradient", &gradient, allowed)?;
    Ok(gradient)
}

/// TVM's `DeGlobal`: a global variable of `module` naming a function is
/// that function.
fn de_global(module: Option<&IRModule>, expr: &Expr) -> Expr {
    match (module, expr.kind()) {
        (Some(module), ExprKind::GlobalVar(gv)) => module
            .function(gv.name())
            .map_or_else(|| expr.clone(), |f| f.expr().clone()),
        _ => expr.clone(),
    }
}

/// TVM's `MissingGrad` check: every operator of `expr` (but the
/// checkpoint annotation) has a gradient.
fn check_gradients(expr: &Expr) -> Result<(), Diagnostic> {
    let mut missing = BTreeSet::new();
    relay_ir::rewrite::post_order_each(expr, |node| {
        if let ExprKind::Op(op) = node.kind() {
            let name = op.name.as_str();
            if name != CHECKPOINT && gradient_of(name).is_none() {
                missing.insert(name.to_string());
            }
        }
    });
    if !missing.is_empty() {
        return Err(Diagnostic::pass_failed_at(
            expr,
            format!(
                "Check failed: (!MissingGrad(e)) is false: input has operators with missing \
                 gradients (found operators with missing gradients: {})",
                list(&missing)
            ),
        ));
    }
    Ok(())
}

fn list(names: &BTreeSet<String>) -> String {
    names.iter().cloned().collect::<Vec<_>>().join(", ")
}

/// TVM's `ICHECK(condition) << message` failure.
fn check_failed(at: &Expr, condition: &str, message: &str) -> Diagnostic {
    Diagnostic::pass_failed_at(
        at,
        format!("Check failed: ({condition}) is false: {message}"),
    )
}

fn checked_type(expr: &Expr) -> Result<Type, Diagnostic> {
    expr.checked_type().cloned().ok_or_else(|| {
        Diagnostic::pass_failed_at(
            expr,
            "an expression has no checked type; run InferType before gradient",
        )
    })
}

// ---- the types and values of the reverse-mode program ----

/// `ref(fn () -> ())`: the type of the backpropagator reference.
fn backprop_type() -> Type {
    Type::new(TypeKind::Ref(Type::new(TypeKind::Func(Box::new(
        FuncType {
            params: Vec::new(),
            ret: Type::unit(),
            type_params: Vec::new(),
        },
    )))))
}

/// TVM's `ReverseType`: a tensor type `T` becomes `(T, ref(T))`; a function
/// type takes the backpropagator as an extra last argument (its result type
/// is kept as it is, as in TVM).
pub fn reverse_type(ty: &Type) -> Type {
    match ty.kind() {
        TypeKind::Tensor(_) => Type::new(TypeKind::Tuple(vec![
            ty.clone(),
            Type::new(TypeKind::Ref(ty.clone())),
        ])),
        TypeKind::Func(f) => {
            let mut params: Vec<Type> = f.params.iter().map(reverse_type).collect();
            params.push(backprop_type());
            Type::new(TypeKind::Func(Box::new(FuncType {
                params,
                ret: f.ret.clone(),
                type_params: f.type_params.clone(),
            })))
        }
        TypeKind::Tuple(fields) => {
            Type::new(TypeKind::Tuple(fields.iter().map(reverse_type).collect()))
        }
        TypeKind::Ref(inner) => Type::new(TypeKind::Ref(reverse_type(inner))),
        TypeKind::Call { func, args } => Type::new(TypeKind::Call {
            func: reverse_type(func),
            args: args.iter().map(reverse_type).collect(),
        }),
        TypeKind::Var(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => ty.clone(),
    }
}

/// Whether [`reverse_type`] changes `ty` (it mentions a tensor or a
/// function type). TVM's type mutator returns an unchanged type as the same
/// object, and a variable whose annotation stays the same object is kept.
fn reverse_changes(ty: &Type) -> bool {
    match ty.kind() {
        TypeKind::Tensor(_) | TypeKind::Func(_) => true,
        TypeKind::Tuple(fields) => fields.iter().any(reverse_changes),
        TypeKind::Ref(inner) => reverse_changes(inner),
        TypeKind::Call { func, args } => reverse_changes(func) || args.iter().any(reverse_changes),
        TypeKind::Var(_) | TypeKind::GlobalVar(_) | TypeKind::Incomplete(_) => false,
    }
}

fn pair(a: Expr, b: Expr) -> Expr {
    Expr::tuple(vec![a, b], None)
}

fn field(tuple: Expr, index: usize) -> Expr {
    Expr::tuple_get_item(tuple, index, None)
}

fn ref_create(value: Expr) -> Expr {
    Expr::new(ExprKind::RefCreate(value), None)
}

fn ref_read(reference: Expr) -> Expr {
    Expr::new(ExprKind::RefRead(reference), None)
}

fn ref_write(reference: Expr, value: Expr) -> Expr {
    Expr::new(ExprKind::RefWrite { reference, value }, None)
}

fn zeros_like(e: Expr) -> Expr {
    op_call("zeros_like", vec![e])
}

fn call(callee: Expr, args: Vec<Expr>) -> Expr {
    Expr::call(callee, args, None, None)
}

/// `fn () -> () { body }`.
fn unit_function(body: Expr) -> Function {
    Function::new(
        FunctionData {
            params: Vec::new(),
            body,
            ret_type: Some(Type::unit()),
            type_params: Vec::new(),
            attrs: DictAttrs::default(),
            virtual_device: None,
        },
        None,
    )
}

/// TVM's `BPEmpty`: a reference to the backpropagator that does nothing.
fn backprop_empty() -> Expr {
    ref_create(unit_function(Expr::tuple(Vec::new(), None)).into_expr())
}

/// TVM's `LiftTensor`: `f` applied to every tensor of the (nested) tuple
/// `e` of type `forward_type`, each result bound with the type `tf` gives.
fn lift_tensor(
    f: &dyn Fn(Expr) -> Expr,
    tf: &dyn Fn(&Type) -> Type,
    forward_type: &Type,
    e: Expr,
    ll: &mut LetList,
) -> Result<Expr, Diagnostic> {
    match forward_type.kind() {
        TypeKind::Tensor(_) => Ok(ll.push_typed(f(e), Some(tf(forward_type))).into_expr()),
        TypeKind::Tuple(fields) => {
            let mut lifted = Vec::with_capacity(fields.len());
            let mut types = Vec::with_capacity(fields.len());
            for (i, field_type) in fields.iter().enumerate() {
                let item = ll.push(field(e.clone(), i)).into_expr();
                let value = lift_tensor(f, tf, field_type, item, ll)?;
                types.push(value.checked_type().cloned().unwrap_or_else(Type::unit));
                lifted.push(value);
            }
            let ty = Type::new(TypeKind::Tuple(types));
            Ok(ll
                .push_typed(Expr::tuple(lifted, None), Some(ty))
                .into_expr())
        }
        _ => Err(unsupported("unsupported input/output type", forward_type)),
    }
}

fn unsupported(what: &str, ty: &Type) -> Diagnostic {
    Diagnostic::pass_failed(format!(
        "{what}: {} (higher-order AD handles tensors and tuples of them here)",
        readable::ty(ty)
    ))
}

/// TVM's `GetRev`: each tensor `t` paired with a new gradient reference.
fn get_rev(forward_type: &Type, e: Expr, ll: &mut LetList) -> Result<Expr, Diagnostic> {
    let rev = |t: Expr| pair(t.clone(), ref_create(zeros_like(t)));
    lift_tensor(&rev, &reverse_type, forward_type, e, ll)
}

/// TVM's `GetValue`: the values of a reverse-mode value.
fn get_value(forward_type: &Type, e: Expr, ll: &mut LetList) -> Result<Expr, Diagnostic> {
    lift_tensor(&|t| field(t, 0), &Type::clone, forward_type, e, ll)
}

/// TVM's `GetGrad`: the gradients accumulated so far.
fn get_grad(forward_type: &Type, e: Expr, ll: &mut LetList) -> Result<Expr, Diagnostic> {
    lift_tensor(
        &|t| ref_read(field(t, 1)),
        &Type::clone,
        forward_type,
        e,
        ll,
    )
}

/// TVM's `UpdateGrad`: adds `grad` into the gradient references of `arg`.
fn update_grad(ty: &Type, arg: Expr, grad: Expr, ll: &mut LetList) -> Result<(), Diagnostic> {
    match ty.kind() {
        TypeKind::Tensor(_) => {
            let sum = op_call("add", vec![ref_read(field(arg.clone(), 1)), grad]);
            ll.push(ref_write(field(arg, 1), sum));
            Ok(())
        }
        TypeKind::Tuple(fields) => {
            for (i, field_type) in fields.iter().enumerate() {
                let arg_i = ll.push(field(arg.clone(), i)).into_expr();
                let grad_i = ll.push(field(grad.clone(), i)).into_expr();
                update_grad(field_type, arg_i, grad_i, ll)?;
            }
            Ok(())
        }
        _ => Err(unsupported("unsupported arg type of operator", ty)),
    }
}

/// TVM's `TransferGrads`: copies the gradients of `from` into the
/// references of its duplicate `to`.
fn transfer_grads(ty: &Type, from: Expr, to: Expr, ll: &mut LetList) -> Result<(), Diagnostic> {
    match ty.kind() {
        TypeKind::Tensor(_) => {
            ll.push(ref_write(field(to, 1), ref_read(field(from, 1))));
            Ok(())
        }
        TypeKind::Tuple(fields) => {
            for (i, field_type) in fields.iter().enumerate() {
                let from_i = ll.push(field(from.clone(), i)).into_expr();
                let to_i = ll.push(field(to.clone(), i)).into_expr();
                transfer_grads(field_type, from_i, to_i, ll)?;
            }
            Ok(())
        }
        _ => Err(unsupported("Unsupported input/output type", ty)),
    }
}

/// Sets the gradient of the result (of its first tensor, for a tuple, as
/// TVM does) to ones.
fn init_grad(e: &Expr, ty: &Type, ll: &mut LetList) -> Result<(), Diagnostic> {
    match ty.kind() {
        TypeKind::Tensor(_) => {
            let ones = op_call("ones_like", vec![field(e.clone(), 0)]);
            ll.push(ref_write(field(e.clone(), 1), ones));
            Ok(())
        }
        TypeKind::Tuple(fields) if !fields.is_empty() => {
            let first = ll.push(field(e.clone(), 0)).into_expr();
            init_grad(&first, &fields[0], ll)
        }
        _ => Err(unsupported("unhandled type", ty)),
    }
}

/// The forward values of the reverse-mode result.
fn final_result(e: &Expr, ty: &Type, ll: &mut LetList) -> Result<Expr, Diagnostic> {
    match ty.kind() {
        TypeKind::Tensor(_) => Ok(field(e.clone(), 0)),
        TypeKind::Tuple(fields) => {
            let mut values = Vec::with_capacity(fields.len());
            for (i, field_type) in fields.iter().enumerate() {
                let item = ll.push(field(e.clone(), i)).into_expr();
                values.push(final_result(&item, field_type, ll)?);
            }
            Ok(Expr::tuple(values, None))
        }
        _ => Err(unsupported("unhandled type", ty)),
    }
}

// ---- the transformation (TVM's `ReverseAD` mutator) ----

/// What every visitor shares: the module (global functions are read from
/// it and their gradients added), the reverse-mode variable of each
/// variable, and the gradient function made for each global.
struct Shared<'m> {
    module: Option<&'m mut IRModule>,
    ad_vars: HashMap<VarId, Var>,
    ad_globals: HashMap<String, String>,
}

/// One `ReverseAD` visitor: the backpropagator reference in scope and the
/// memo of the nodes it rewrote (TVM's `ExprMutator` memo).
struct Visitor {
    bp: Var,
    memo: HashMap<usize, Expr>,
}

impl Visitor {
    fn new(bp: Var) -> Visitor {
        Visitor {
            bp,
            memo: HashMap::default(),
        }
    }

    fn visit(
        &mut self,
        shared: &mut Shared,
        expr: &Expr,
        depth: usize,
    ) -> Result<Expr, Diagnostic> {
        if depth > MAX_DEPTH {
            return Err(Diagnostic::pass_failed_at(
                expr,
                format!("gradient: the expression is nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        if let ExprKind::Var(_) = expr.kind() {
            return Ok(visit_var(shared, expr));
        }
        if let Some(done) = self.memo.get(&expr.addr()) {
            return Ok(done.clone());
        }
        let result = with_stack(|| self.visit_node(shared, expr, depth + 1))?;
        self.memo.insert(expr.addr(), result.clone());
        Ok(result)
    }

    fn visit_node(
        &mut self,
        shared: &mut Shared,
        expr: &Expr,
        depth: usize,
    ) -> Result<Expr, Diagnostic> {
        let span = expr.span();
        Ok(match expr.kind() {
            ExprKind::Op(_) => {
                return Err(Diagnostic::pass_failed_at(
                    expr,
                    "op should only be inside call",
                ))
            }
            ExprKind::Var(_) => visit_var(shared, expr),
            ExprKind::Constructor(_) => expr.clone(),
            ExprKind::GlobalVar(gv) => self.visit_global(shared, expr, gv.name(), depth)?,
            ExprKind::Constant(_) => {
                let mut ll = LetList::default();
                let e = ll.push(expr.clone()).into_expr();
                ll.get(pair(e.clone(), ref_create(zeros_like(e))))
            }
            ExprKind::Call(c) => match c.callee.kind() {
                ExprKind::Op(op) if op.name == CHECKPOINT => {
                    self.visit_checkpoint(shared, expr, c, depth)?
                }
                ExprKind::Op(_) => self.visit_op_call(shared, expr, c, depth)?,
                ExprKind::Constructor(_) => {
                    let mut args = Vec::with_capacity(c.args.len());
                    for arg in &c.args {
                        args.push(self.visit(shared, arg, depth)?);
                    }
                    Expr::new(
                        ExprKind::Call(Call {
                            callee: c.callee.clone(),
                            args,
                            attrs: c.attrs.clone(),
                            type_args: c.type_args.iter().map(reverse_type).collect(),
                        }),
                        span,
                    )
                }
                _ => {
                    let mut args = Vec::with_capacity(c.args.len() + 1);
                    for arg in &c.args {
                        args.push(self.visit(shared, arg, depth)?);
                    }
                    args.push(self.bp.expr().clone());
                    let callee = self.visit(shared, &c.callee, depth)?;
                    call(callee, args)
                }
            },
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let cond = field(self.visit(shared, cond, depth)?, 0);
                let then_branch = self.visit(shared, then_branch, depth)?;
                let else_branch = self.visit(shared, else_branch, depth)?;
                Expr::if_(cond, then_branch, else_branch, None)
            }
            ExprKind::Function(_) => {
                let function = expr.as_function().expect("a function node");
                self.visit_function(shared, &function, depth)?
            }
            ExprKind::Let { var, value, body } => {
                let var = visit_var(shared, var.expr())
                    .as_var()
                    .expect("a variable stands for a variable");
                let value = self.visit(shared, value, depth)?;
                let body = self.visit(shared, body, depth)?;
                Expr::let_(var, value, body, span)
            }
            ExprKind::Tuple(fields) => {
                let mut visited = Vec::with_capacity(fields.len());
                for f in fields {
                    visited.push(self.visit(shared, f, depth)?);
                }
                Expr::tuple(visited, span)
            }
            ExprKind::TupleGetItem { tuple, index } => {
                Expr::tuple_get_item(self.visit(shared, tuple, depth)?, *index, span)
            }
            ExprKind::RefCreate(value) => {
                Expr::new(ExprKind::RefCreate(self.visit(shared, value, depth)?), span)
            }
            ExprKind::RefRead(reference) => Expr::new(
                ExprKind::RefRead(self.visit(shared, reference, depth)?),
                span,
            ),
            ExprKind::RefWrite { reference, value } => {
                let reference = self.visit(shared, reference, depth)?;
                let value = self.visit(shared, value, depth)?;
                Expr::new(ExprKind::RefWrite { reference, value }, span)
            }
            ExprKind::Match {
                data,
                clauses,
                complete,
            } => {
                let data = self.visit(shared, data, depth)?;
                let mut visited = Vec::with_capacity(clauses.len());
                for clause in clauses {
                    visited.push(Clause {
                        pattern: clause.pattern.clone(),
                        rhs: self.visit(shared, &clause.rhs, depth)?,
                    });
                }
                Expr::new(
                    ExprKind::Match {
                        data,
                        clauses: visited,
                        complete: *complete,
                    },
                    span,
                )
            }
        })
    }

    /// An operator call: its value, paired with a new gradient reference,
    /// and a new backpropagator that adds the operator's gradients into the
    /// arguments' references before calling the previous one.
    fn visit_op_call(
        &mut self,
        shared: &mut Shared,
        expr: &Expr,
        c: &Call,
        depth: usize,
    ) -> Result<Expr, Diagnostic> {
        let ExprKind::Op(op) = c.callee.kind() else {
            unreachable!("called for operator calls")
        };
        let gradient = gradient_of(&op.name).ok_or_else(|| {
            Diagnostic::pass_failed_at(
                expr,
                format!(
                    "Check failed: (rev_map.count(op_ref)) is false: {} does not have reverse \
                     mode defined",
                    op.name
                ),
            )
        })?;
        let call_type = checked_type(expr)?;
        let mut arg_types = Vec::with_capacity(c.args.len());
        for arg in &c.args {
            arg_types.push(checked_type(arg)?);
        }
        let mut ll = LetList::default();
        let mut args = Vec::with_capacity(c.args.len());
        for arg in &c.args {
            let visited = self.visit(shared, arg, depth)?;
            args.push(ll.push(visited).into_expr());
        }
        let mut orig_args = Vec::with_capacity(args.len());
        for (arg, ty) in args.iter().zip(&arg_types) {
            orig_args.push(get_value(ty, arg.clone(), &mut ll)?);
        }
        let orig_call = Call {
            callee: c.callee.clone(),
            args: orig_args,
            attrs: c.attrs.clone(),
            type_args: c.type_args.clone(),
        };
        let orig = Expr::with_type(
            ExprKind::Call(Call {
                callee: orig_call.callee.clone(),
                args: orig_call.args.clone(),
                attrs: orig_call.attrs.clone(),
                type_args: orig_call.type_args.clone(),
            }),
            None,
            Some(call_type.clone()),
        );
        let orig_var = ll
            .push_typed(orig.clone(), Some(call_type.clone()))
            .into_expr();
        let rev = get_rev(&call_type, orig_var, &mut ll)?;
        let ret = ll.push(rev).into_expr();
        let bpv = ll.push(ref_read(self.bp.expr().clone())).into_expr();

        let mut backward = LetList::default();
        let grad = get_grad(&call_type, ret.clone(), &mut backward)?;
        let grads = gradient(&orig, &orig_call, &grad).map_err(|d| {
            Diagnostic::pass_failed_at(expr, format!("the gradient of {}: {}", op.name, d.message))
        })?;
        if grads.len() != args.len() {
            return Err(Diagnostic::pass_failed_at(
                expr,
                format!(
                    "Check failed: (args.size() == rev.size()) is false: the operator {} has {} \
                     arguments but its gradient gives {}",
                    op.name,
                    args.len(),
                    grads.len()
                ),
            ));
        }
        for ((arg, ty), grad) in args.iter().zip(&arg_types).zip(grads) {
            update_grad(ty, arg.clone(), grad, &mut backward)?;
        }
        let nbp = unit_function(backward.get(call(bpv, Vec::new())));
        let nbp = to_normal_form(&nbp, NormalForm::ANormal)?;
        ll.push(ref_write(self.bp.expr().clone(), nbp.into_expr()));
        Ok(ll.get(ret))
    }

    /// `annotation.checkpoint(x)`: `x` is computed forward as it is, and
    /// recomputed (differentiated afresh) when backpropagating.
    fn visit_checkpoint(
        &mut self,
        shared: &mut Shared,
        expr: &Expr,
        c: &Call,
        depth: usize,
    ) -> Result<Expr, Diagnostic> {
        let x = c.args.first().ok_or_else(|| {
            Diagnostic::pass_failed_at(expr, "annotation.checkpoint takes one argument")
        })?;
        let call_type = checked_type(expr)?;
        let mut ll = LetList::default();
        let remapped = remap(shared, x)?;
        let x_var = ll.push(remapped).into_expr();
        let rev = get_rev(&call_type, x_var, &mut ll)?;
        let ret = ll.push(rev).into_expr();
        let bpv = ll.push(ref_read(self.bp.expr().clone())).into_expr();

        let mut backward = LetList::default();
        let dup_bp = backward.push(backprop_empty());
        let (copy, _) = dedup(x, &TypeSubst::default());
        let dup = Visitor::new(dup_bp.clone()).visit(shared, &copy, depth)?;
        let dup_ad = backward.push(dup).into_expr();
        transfer_grads(&call_type, ret.clone(), dup_ad, &mut backward)?;
        backward.push(call(ref_read(dup_bp.into_expr()), Vec::new()));
        let nbp = unit_function(backward.get(call(bpv, Vec::new())));
        ll.push(ref_write(self.bp.expr().clone(), nbp.into_expr()));
        Ok(ll.get(ret))
    }

    /// A function literal takes the backpropagator as a new last parameter
    /// `%bp`; its body is differentiated with it.
    fn visit_function(
        &mut self,
        shared: &mut Shared,
        function: &Function,
        depth: usize,
    ) -> Result<Expr, Diagnostic> {
        let mut params: Vec<Var> = function
            .params()
            .iter()
            .map(|p| visit_var(shared, p.expr()).as_var().expect("a variable"))
            .collect();
        let new_bp = Var::new("bp", Some(backprop_type()), None);
        params.push(new_bp.clone());
        let body = Visitor::new(new_bp).visit(shared, function.body(), depth)?;
        let data = function.data();
        Ok(Function::new(
            FunctionData {
                params,
                body,
                ret_type: data.ret_type.as_ref().map(reverse_type),
                ..data.clone()
            },
            function.expr().span(),
        )
        .into_expr())
    }

    /// A global function is differentiated once, into `@<name>_grad` (its
    /// parameters reverse-typed, the backpropagator in scope its last).
    fn visit_global(
        &mut self,
        shared: &mut Shared,
        expr: &Expr,
        name: &str,
        depth: usize,
    ) -> Result<Expr, Diagnostic> {
        if let Some(done) = shared.ad_globals.get(name) {
            return Ok(Expr::global(done, None));
        }
        let original = match shared.module.as_deref() {
            None => {
                return Err(check_failed(
                    expr,
                    "mod.defined()",
                    &format!("the program calls @{name}: pass the module that defines it"),
                ))
            }
            Some(module) => module.function(name).cloned().ok_or_else(|| {
                Diagnostic::pass_failed_at(
                    expr,
                    format!("Cannot find global var \"{name}\" in the Module"),
                )
            })?,
        };
        let grad_name = format!("{name}_grad");
        shared
            .ad_globals
            .insert(name.to_string(), grad_name.clone());
        let (copy, _) = dedup(original.expr(), &TypeSubst::default());
        let copy = copy
            .as_function()
            .expect("a copy of a function is a function");
        let mut params: Vec<Var> = copy
            .params()
            .iter()
            .map(|p| visit_var(shared, p.expr()).as_var().expect("a variable"))
            .collect();
        // TVM appends its visitor's own `bp` variable, so the global's
        // parameter is the very variable the caller binds: printed in one
        // module, the second binding reads as malformed IR. A fresh
        // variable of the same name is the same function.
        let global_bp = Var::new("bp", Some(backprop_type()), None);
        params.push(global_bp.clone());
        let body = Visitor::new(global_bp).visit(shared, copy.body(), depth)?;
        let data = copy.data();
        let gradient = Function::new(
            FunctionData {
                params,
                body,
                ret_type: data.ret_type.as_ref().map(reverse_type),
                ..data.clone()
            },
            copy.expr().span(),
        );
        if let Some(module) = shared.module.as_deref_mut() {
            module.add_function(&grad_name, gradient);
        }
        Ok(Expr::global(&grad_name, None))
    }
}

/// A variable's reverse-mode variable, made on first sight: a new variable
/// with the reverse type of its annotation (the same one without).
fn visit_var(shared: &mut Shared, expr: &Expr) -> Expr {
    let var = expr.as_var().expect("called for variables");
    shared
        .ad_vars
        .entry(var.id())
        .or_insert_with(|| match var.type_annotation() {
            Some(ty) if reverse_changes(ty) => {
                Var::new(var.name(), Some(reverse_type(ty)), var.expr().span())
            }
            _ => var.clone(),
        })
        .expr()
        .clone()
}

/// TVM's `Remap`: `e` with every variable that has a reverse-mode variable
/// replaced by that variable's values.
fn remap(shared: &Shared, e: &Expr) -> Result<Expr, Diagnostic> {
    let mut ll = LetList::default();
    let mut failure = None;
    let remapped = rewrite_post_order(e, |original, rebuilt| {
        let ExprKind::Var(data) = original.kind() else {
            return rebuilt;
        };
        let Some(ad_var) = shared.ad_vars.get(&data.id) else {
            return rebuilt;
        };
        let value =
            checked_type(original).and_then(|ty| get_value(&ty, ad_var.expr().clone(), &mut ll));
        match value {
            Ok(value) => value,
            Err(e) => {
                failure.get_or_insert(e);
                rebuilt
            }
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(ll.get(remapped)),
    }
}
