//! Phases 2 and 3 of PlanDevices: collecting the device constraints of
//! every sub-expression as unifications of [`DeviceDomains`] (TVM's
//! `DeviceAnalyzer`), then defaulting what is left free: first by unifying
//! the body and result of `on_device` calls that constrain neither
//! (`FreeOnDeviceDefaulter`), then function results and call results to
//! the default primitive device, parameters to their function's result
//! device, and let variables to their let's device (`DeviceDefaulter`).

use super::config::CompilationConfig;
use super::domains::{DeviceDomains, DomainId};
use super::virtual_device::DeviceIo;
use super::{children_outside_primitives, pre_order, pretty, OnDeviceProps};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{for_each_child, post_order_each};
use relay_ir::{Expr, ExprKind, IRModule, Pattern};

/// Phases 2 and 3: every expression of the module's optimizable functions
/// gets a domain, and every such domain is constrained.
pub fn analyze<'c>(
    module: &IRModule,
    config: &'c CompilationConfig,
) -> Result<DeviceDomains<'c>, Diagnostic> {
    let mut a = Analyzer {
        d: DeviceDomains::new(config, module),
    };
    for (name, function) in module.functions() {
        if !function.is_optimizable() {
            continue;
        }
        let global = Expr::global(name, None);
        a.unify_exprs(&global, function.expr())?;
        pre_order(function.expr(), children_outside_primitives, |e| a.visit(e))?;
    }
    for (_, function) in module.functions() {
        if function.is_optimizable() {
            a.default_free_on_devices(function.expr())?;
        }
    }
    for (_, function) in module.functions() {
        if function.is_optimizable() {
            a.default_devices(function.expr())?;
        }
    }
    Ok(a.d)
}

struct Analyzer<'c> {
    d: DeviceDomains<'c>,
}

impl Analyzer<'_> {
    /// TVM's `UnifyExprExact(lhs, rhs)`.
    fn unify_exprs(&mut self, lhs: &Expr, rhs: &Expr) -> Result<(), Diagnostic> {
        let l = self.d.domain_for(lhs);
        let r = self.d.domain_for(rhs);
        if self
            .d
            .unify(l, r)
            .map_err(|m| Diagnostic::pass_failed_at(rhs, m))?
            .is_none()
        {
            let message = format!(
                "Incompatible virtual devices for expressions:\n{}\nwith virtual device:\n{}and:\n{}\
                 \nwith virtual device:\n{}",
                pretty(lhs),
                self.d.describe(l),
                pretty(rhs),
                self.d.describe(r)
            );
            return Err(Diagnostic::pass_failed_at(rhs, message));
        }
        Ok(())
    }

    /// TVM's `UnifyExprExact(expr, expected_domain)`.
    fn unify_expr(&mut self, expr: &Expr, expected: DomainId) -> Result<(), Diagnostic> {
        let actual = self.d.domain_for(expr);
        if self
            .d
            .unify(actual, expected)
            .map_err(|m| Diagnostic::pass_failed_at(expr, m))?
            .is_none()
        {
            let message = format!(
                "Incompatible virtual devices for expression:\n{}\nwith actual virtual device:\n{}\
                 \nand expected virtual device:\n{}",
                pretty(expr),
                self.d.describe(actual),
                self.d.describe(expected)
            );
            return Err(Diagnostic::pass_failed_at(expr, message));
        }
        Ok(())
    }

    /// TVM's `UnifyExprCollapsed`.
    fn unify_collapsed(&mut self, expr: &Expr, expected: DomainId) -> Result<(), Diagnostic> {
        let actual = self.d.domain_for(expr);
        if self.d.is_higher_order(actual) {
            return Err(Diagnostic::pass_failed_at(
                expr,
                format!(
                    "expected a first-order device domain for:\n{}",
                    pretty(expr)
                ),
            ));
        }
        if !self
            .d
            .unify_collapsed(actual, expected)
            .map_err(|m| Diagnostic::pass_failed_at(expr, m))?
        {
            let message = format!(
                "Incompatible virtual devices for expression:\n{}\nwith actual virtual devices:\n\
                 {}\nand expected virtual device:\n{}",
                pretty(expr),
                self.d.describe(actual),
                self.d.describe(expected)
            );
            return Err(Diagnostic::pass_failed_at(expr, message));
        }
        Ok(())
    }

    fn for_device(
        &mut self,
        at: &Expr,
        vd: Option<&relay_ir::AttrValue>,
    ) -> Result<Option<DomainId>, Diagnostic> {
        let io = DeviceIo::new(self.d.config);
        let vd = io.read(vd).map_err(|m| Diagnostic::pass_failed_at(at, m))?;
        if vd.is_fully_unconstrained() {
            return Ok(None);
        }
        self.d
            .for_virtual_device(at.checked_type(), &vd)
            .map(Some)
            .map_err(|m| Diagnostic::pass_failed_at(at, m))
    }

    /// Phase 2 at one node (TVM's `DeviceAnalyzer::VisitExpr_`).
    fn visit(&mut self, e: &Expr) -> Result<(), Diagnostic> {
        match e.kind() {
            ExprKind::Call(call) => {
                let func = self
                    .d
                    .domain_for_callee(e, call)
                    .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                if self.d.arity(func) != call.args.len() || !self.d.is_higher_order(func) {
                    return Err(Diagnostic::pass_failed_at(
                        e,
                        format!(
                            "the callee's device domain {} does not take {} arguments:\n{}",
                            self.d.describe(func),
                            call.args.len(),
                            pretty(e)
                        ),
                    ));
                }
                let mut parts: Vec<DomainId> =
                    call.args.iter().map(|a| self.d.domain_for(a)).collect();
                parts.push(self.d.domain_for(e));
                let implied = self.d.higher_order(parts);
                if self
                    .d
                    .unify(func, implied)
                    .map_err(|m| Diagnostic::pass_failed_at(e, m))?
                    .is_none()
                {
                    let message = format!(
                        "Function parameters and result VirtualDevices do not match those of \
                         call. Call:\n{}\nwith function virtual devices:\n{}\nand implied call \
                         virtual devices:\n{}",
                        pretty(e),
                        self.d.describe(func),
                        self.d.describe(implied)
                    );
                    return Err(Diagnostic::pass_failed_at(e, message));
                }
            }
            ExprKind::Let { var, value, body } => {
                self.unify_exprs(var.expr(), value)?;
                self.unify_exprs(e, body)?;
            }
            ExprKind::Function(f) => {
                let func = self.d.domain_for(e);
                if self.d.arity(func) != f.params.len() || !self.d.is_higher_order(func) {
                    return Err(Diagnostic::pass_failed_at(
                        e,
                        "the function has no function type (run InferType first)".to_string(),
                    ));
                }
                let result = self.d.result(func);
                self.unify_expr(&f.body, result)?;
                if let Some(dom) = self.for_device(&f.body, f.virtual_device.as_ref())? {
                    self.unify_expr(&f.body, dom)?;
                }
                for (i, param) in f.params.iter().enumerate() {
                    let p = self.d.param(func, i);
                    self.unify_expr(param.expr(), p)?;
                    let vd = param.data().virtual_device.as_deref();
                    if let Some(dom) = self.for_device(param.expr(), vd)? {
                        self.unify_expr(param.expr(), dom)?;
                    }
                }
            }
            ExprKind::Tuple(fields) => {
                for field in fields {
                    let dom = self.d.domain_for(field);
                    self.unify_collapsed(e, dom)?;
                }
            }
            ExprKind::TupleGetItem { tuple, .. } => {
                let dom = self.d.domain_for(e);
                self.unify_collapsed(tuple, dom)?;
            }
            ExprKind::Match { data, clauses, .. } => {
                let dom = self.d.domain_for(e);
                self.unify_collapsed(data, dom)?;
                for clause in clauses {
                    let mut vars = Vec::new();
                    pattern_vars(&clause.pattern, &mut vars);
                    for var in vars {
                        let var_dom = self.d.domain_for(&var);
                        self.unify_collapsed(data, var_dom)?;
                    }
                    self.unify_expr(&clause.rhs, dom)?;
                }
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let dom = self.d.domain_for(e);
                self.unify_collapsed(cond, dom)?;
                self.unify_expr(then_branch, dom)?;
                self.unify_expr(else_branch, dom)?;
            }
            ExprKind::RefCreate(value) => {
                let dom = self.d.domain_for(value);
                self.unify_collapsed(e, dom)?;
            }
            ExprKind::RefRead(reference) => {
                let dom = self.d.domain_for(e);
                self.unify_collapsed(reference, dom)?;
            }
            ExprKind::RefWrite { reference, value } => {
                let dom = self.d.domain_for(value);
                self.unify_collapsed(reference, dom)?;
                self.unify_collapsed(e, dom)?;
            }
            ExprKind::GlobalVar(_) | ExprKind::Var(_) | ExprKind::Constant(_) => {
                self.d.domain_for(e);
            }
            ExprKind::Op(_) | ExprKind::Constructor(_) => {}
        }
        Ok(())
    }

    /// Phase 3a: an `on_device` that constrains neither side gets its body
    /// and result on one device where that is possible.
    fn default_free_on_devices(&mut self, root: &Expr) -> Result<(), Diagnostic> {
        let mut error = None;
        post_order_each(root, |e| {
            if error.is_some() {
                return;
            }
            let props = match OnDeviceProps::of(e, self.d.config) {
                Ok(Some(p)) => p,
                Ok(None) => return,
                Err(m) => {
                    error = Some(Diagnostic::pass_failed_at(e, m));
                    return;
                }
            };
            if props.constrain_body || props.constrain_result {
                return;
            }
            let call = self.d.domain_for(e);
            let body = self.d.domain_for(&props.body);
            let snapshot = self.d.snapshot();
            match self.d.unify(call, body) {
                Ok(Some(_)) => {}
                Ok(None) => self.d.restore(snapshot),
                Err(m) => error = Some(Diagnostic::pass_failed_at(e, m)),
            }
        });
        error.map_or(Ok(()), Err)
    }

    /// Phase 3b (TVM's `DeviceDefaulter`).
    fn default_devices(&mut self, root: &Expr) -> Result<(), Diagnostic> {
        let default = self.d.config.default_primitive.clone();
        pre_order(
            root,
            |e, out| match e.kind() {
                ExprKind::Function(f) => {
                    if !e.as_function().is_some_and(|f| f.is_primitive()) {
                        out.push(&f.body);
                    }
                }
                _ => for_each_child(e, |c| out.push(c)),
            },
            |e| {
                match e.kind() {
                    ExprKind::Function(_) if e.as_function().is_some_and(|f| f.is_primitive()) => {}
                    ExprKind::Function(_) => {
                        let func = self.d.domain_for(e);
                        if !self.d.is_fully_constrained(func) {
                            self.d
                                .set_result_default_then_params(func, &default)
                                .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                        }
                    }
                    ExprKind::Call(call) => {
                        let func = self
                            .d
                            .domain_for_callee(e, call)
                            .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                        if !self.d.is_fully_constrained(func) {
                            self.d
                                .set_result_default_then_params(func, &default)
                                .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                        }
                    }
                    ExprKind::Let { var, .. } => {
                        let let_dom = self.d.domain_for(e);
                        let let_device = self.d.result_device(let_dom);
                        if let_device.is_fully_unconstrained() {
                            return Err(Diagnostic::pass_failed_at(
                                e,
                                format!("no virtual device was determined for:\n{}", pretty(e)),
                            ));
                        }
                        let var_dom = self.d.domain_for(var.expr());
                        if !self.d.is_fully_constrained(var_dom) {
                            self.d
                                .set_default(var_dom, &let_device)
                                .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                        }
                    }
                    _ => {}
                }
                Ok(())
            },
        )
    }
}

/// The variables a pattern binds, in order.
fn pattern_vars(pattern: &Pattern, out: &mut Vec<Expr>) {
    match pattern {
        Pattern::Wildcard => {}
        Pattern::Var(v) => out.push(v.expr().clone()),
        Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
            for f in fields {
                pattern_vars(f, out);
            }
        }
    }
}
