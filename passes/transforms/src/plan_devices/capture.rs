//! Phase 4 of PlanDevices (TVM's `DeviceCapturer`): writes the planned
//! devices into the program. Function parameters and functions get their
//! `virtual_device`; existing `on_device` calls and no-op `device_copy`s
//! go; where a child's device differs from what its parent expects, the
//! child is copied (`device_copy(on_device(child, …), …)`); where the
//! expected device differs from the one a reader would infer lexically
//! (call arguments, let values), the child is wrapped in a fixed
//! `on_device`.

use super::domains::DeviceDomains;
use super::virtual_device::{DeviceIo, VirtualDevice};
use super::{
    children_outside_primitives, device_copy, device_copy_devices, maybe_on_device_fixed, pretty,
    OnDeviceProps,
};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::fxhash::{FxMap, FxSet};
use relay_ir::rewrite::{for_each_child, with_children};
use relay_ir::{Expr, ExprKind, FunctionData, IRModule, VarData};

/// Phase 4 on the module.
pub fn capture(module: IRModule, mut domains: DeviceDomains<'_>) -> Result<IRModule, Diagnostic> {
    let config = domains.config;
    let mut capturer = Capturer {
        d: &mut domains,
        io: DeviceIo::new(config),
        new: FxMap::default(),
        params: FxMap::default(),
    };
    let mut out = module.clone();
    for (name, function) in module.functions() {
        if !function.is_optimizable() {
            continue;
        }
        let order = post_order_outside_primitives(function.expr());
        for e in &order {
            capturer.annotate_params(e)?;
        }
        for e in &order {
            let new = capturer.visit(e)?;
            capturer.new.insert(e.addr(), new);
        }
        let new = capturer.new_of(function.expr());
        let new = new.as_function().ok_or_else(|| {
            Diagnostic::pass_failed("PlanDevices turned a function into a non-function")
        })?;
        out.add_function(name, new);
    }
    Ok(out)
}

/// The nodes under `root`, children first, not entering `Primitive`
/// functions.
fn post_order_outside_primitives(root: &Expr) -> Vec<Expr> {
    let mut order = Vec::new();
    let mut seen = FxSet::default();
    let mut stack: Vec<(Expr, bool)> = vec![(root.clone(), false)];
    while let Some((e, expanded)) = stack.pop() {
        if expanded {
            order.push(e);
            continue;
        }
        if !seen.insert(e.addr()) {
            continue;
        }
        stack.push((e.clone(), true));
        let mut buffer = Vec::new();
        children_outside_primitives(&e, &mut buffer);
        let children: Vec<Expr> = buffer.into_iter().cloned().collect();
        for c in children.into_iter().rev() {
            if !seen.contains(&c.addr()) {
                stack.push((c, false));
            }
        }
    }
    order
}

struct Capturer<'d, 'c> {
    d: &'d mut DeviceDomains<'c>,
    io: DeviceIo<'c>,
    /// The rewritten form of each visited node.
    new: FxMap<usize, Expr>,
    /// Function parameters with their planned `virtual_device`.
    params: FxMap<usize, Expr>,
}

impl Capturer<'_, '_> {
    fn new_of(&self, e: &Expr) -> Expr {
        self.new
            .get(&e.addr())
            .cloned()
            .unwrap_or_else(|| e.clone())
    }

    /// TVM's `GetVirtualDevice`: the planned device of `expr` (looking
    /// through an `on_device`).
    fn device_of(&mut self, expr: &Expr) -> Result<VirtualDevice, Diagnostic> {
        let props = OnDeviceProps::of(expr, self.d.config)
            .map_err(|m| Diagnostic::pass_failed_at(expr, m))?;
        let true_expr = props.map_or_else(|| expr.clone(), |p| p.body);
        if !self.d.contains(&true_expr) {
            return Err(Diagnostic::pass_failed_at(
                expr,
                format!("no device domain was computed for:\n{}", pretty(&true_expr)),
            ));
        }
        let dom = self.d.domain_for(&true_expr);
        let vd = self.d.result_device(dom);
        if vd.is_fully_unconstrained() {
            return Err(Diagnostic::pass_failed_at(
                expr,
                format!(
                    "no VirtualDevice was determined for expression:\n{}",
                    pretty(&true_expr)
                ),
            ));
        }
        Ok(vd)
    }

    fn constrained(
        &self,
        at: &Expr,
        vd: VirtualDevice,
        what: &str,
    ) -> Result<VirtualDevice, Diagnostic> {
        if vd.is_fully_unconstrained() {
            return Err(Diagnostic::pass_failed_at(
                at,
                format!(
                    "no VirtualDevice was determined for {what} of:\n{}",
                    pretty(at)
                ),
            ));
        }
        Ok(vd)
    }

    /// Gives the parameters of a (non-primitive) function their devices.
    fn annotate_params(&mut self, e: &Expr) -> Result<(), Diagnostic> {
        let Some(f) = e.as_function() else {
            return Ok(());
        };
        if f.is_primitive() {
            return Ok(());
        }
        let func = self.d.domain_for(e);
        for (i, param) in f.params().iter().enumerate() {
            let p = self.d.param(func, i);
            let vd = self.d.result_device(p);
            let vd = self.constrained(e, vd, &format!("parameter {i}"))?;
            let data = param.data();
            let annotated = Expr::with_type(
                ExprKind::Var(VarData {
                    id: data.id,
                    name: data.name.clone(),
                    type_annotation: data.type_annotation.clone(),
                    virtual_device: Some(Box::new(self.io.write(&vd))),
                }),
                param.expr().span(),
                param.expr().checked_type().cloned(),
            );
            self.params.insert(param.expr().addr(), annotated);
        }
        Ok(())
    }

    /// TVM's `VisitChild(lexical, expected, child_device, child)`.
    fn visit_child(
        &mut self,
        lexical: &VirtualDevice,
        expected: &VirtualDevice,
        child_device: &VirtualDevice,
        child: &Expr,
    ) -> Result<Expr, Diagnostic> {
        if expected.is_fully_unconstrained() {
            return Err(Diagnostic::pass_failed_at(
                child,
                "the expected virtual device is unconstrained",
            ));
        }
        if matches!(child.kind(), ExprKind::Op(_) | ExprKind::Constructor(_)) {
            return Ok(child.clone());
        }
        let mut result = self.new_of(child);
        if child_device != expected {
            result = maybe_on_device_fixed(&mut self.io, result, child_device)
                .map_err(Diagnostic::pass_failed)?;
            result = device_copy(&mut self.io, result, child_device, expected);
        }
        if expected != lexical {
            result = maybe_on_device_fixed(&mut self.io, result, expected)
                .map_err(Diagnostic::pass_failed)?;
        }
        Ok(result)
    }

    /// A direct child expected on its parent's device.
    fn visit_same(&mut self, parent: &Expr, child: &Expr) -> Result<Expr, Diagnostic> {
        let expected = self.device_of(parent)?;
        let child_device = self.device_of(child)?;
        self.visit_child(&expected, &expected, &child_device, child)
    }

    /// The rewritten form of `e`, its children already rewritten.
    fn visit(&mut self, e: &Expr) -> Result<Expr, Diagnostic> {
        match e.kind() {
            ExprKind::Var(_) => Ok(self.params.get(&e.addr()).cloned().unwrap_or(e.clone())),
            ExprKind::GlobalVar(_) | ExprKind::Constant(_) | ExprKind::Op(_) => Ok(e.clone()),
            ExprKind::Constructor(_) => Ok(e.clone()),
            ExprKind::Function(f) => {
                if e.as_function().is_some_and(|f| f.is_primitive()) {
                    return Ok(e.clone());
                }
                let func = self.d.domain_for(e);
                let result = self.d.result_device(func);
                let result = self.constrained(e, result, "the result")?;
                let body_device = self.device_of(&f.body)?;
                let body = self.visit_child(&result, &result, &body_device, &f.body)?;
                let mut children: Vec<Expr> =
                    f.params.iter().map(|p| self.new_of(p.expr())).collect();
                children.push(body);
                let rebuilt = with_children(e, &children);
                let ExprKind::Function(data) = rebuilt.kind() else {
                    unreachable!("a function rebuilt is a function")
                };
                Ok(Expr::with_type(
                    ExprKind::Function(Box::new(FunctionData {
                        virtual_device: Some(self.io.write(&result)),
                        ..(**data).clone()
                    })),
                    e.span(),
                    e.checked_type().cloned(),
                ))
            }
            ExprKind::Call(call) => {
                if let Some(props) = OnDeviceProps::of(e, self.d.config)
                    .map_err(|m| Diagnostic::pass_failed_at(e, m))?
                {
                    return Ok(self.new_of(&props.body));
                }
                if super::as_device_copy(e).is_some() {
                    let (src, dst) = device_copy_devices(call, self.d.config)
                        .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                    let src = self
                        .d
                        .config
                        .canonical(&src)
                        .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                    let dst = self
                        .d
                        .config
                        .canonical(&dst)
                        .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                    return if src == dst {
                        Ok(self.new_of(&call.args[0]))
                    } else {
                        self.visit_child(&dst, &dst, &src, &call.args[0])
                    };
                }
                let call_device = self.device_of(e)?;
                let func = self
                    .d
                    .domain_for_callee(e, call)
                    .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                let result = self.d.result_device(func);
                let result = self.constrained(e, result, "the callee's result")?;
                let mut children =
                    vec![self.visit_child(&call_device, &call_device, &result, &call.callee)?];
                for (i, arg) in call.args.iter().enumerate() {
                    let p = self.d.param(func, i);
                    let param = self.d.result_device(p);
                    let param = self.constrained(e, param, &format!("parameter {i}"))?;
                    let arg_device = self.device_of(arg)?;
                    children.push(self.visit_child(&call_device, &param, &arg_device, arg)?);
                }
                Ok(with_children(e, &children))
            }
            ExprKind::Let { var, value, body } => {
                let let_device = self.device_of(e)?;
                let var_device = self.device_of(var.expr())?;
                let value_device = self.device_of(value)?;
                let value = self.visit_child(
                    &VirtualDevice::unconstrained(),
                    &var_device,
                    &value_device,
                    value,
                )?;
                let body_device = self.device_of(body)?;
                let body = self.visit_child(&let_device, &let_device, &body_device, body)?;
                Ok(with_children(e, &[var.expr().clone(), value, body]))
            }
            ExprKind::Match { data, clauses, .. } => {
                let mut children = vec![self.visit_same(e, data)?];
                for clause in clauses {
                    let mut vars = Vec::new();
                    for_each_pattern_var(&clause.pattern, &mut vars);
                    children.extend(vars);
                    children.push(self.visit_same(e, &clause.rhs)?);
                }
                Ok(with_children(e, &children))
            }
            _ => {
                // Tuples, projections, ifs and references: every child is
                // expected on the parent's device.
                let mut kids = Vec::new();
                for_each_child(e, |c| kids.push(c.clone()));
                let children = kids
                    .iter()
                    .map(|c| self.visit_same(e, c))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(with_children(e, &children))
            }
        }
    }
}

fn for_each_pattern_var(pattern: &relay_ir::Pattern, out: &mut Vec<Expr>) {
    match pattern {
        relay_ir::Pattern::Wildcard => {}
        relay_ir::Pattern::Var(v) => out.push(v.expr().clone()),
        relay_ir::Pattern::Constructor(_, fields) | relay_ir::Pattern::Tuple(fields) => {
            for f in fields {
                for_each_pattern_var(f, out);
            }
        }
    }
}
