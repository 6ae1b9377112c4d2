//! Phase 1 (`PlanDevicesCheckConflicts`, TVM's `ConflictedNodeFinder` and
//! `ConflictedNodeRewriter`): devices flow from calls to their arguments
//! (an `on_device` imposes its device on its body, a `device_copy` its
//! source); an argument that two calls want on devices that do not join is
//! copied, where it is used, to the device of the call using it.

use super::config::CompilationConfig;
use super::virtual_device::{DeviceIo, VirtualDevice};
use super::{device_copy_devices, pre_order, pretty, OnDeviceProps};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::fxhash::{FxMap, FxSet};
use relay_ir::rewrite::{for_each_child, rewrite_function, with_children};
use relay_ir::{Expr, ExprKind, IRModule};

#[derive(Default)]
struct DeviceContext {
    devices: FxMap<usize, VirtualDevice>,
    conflicted: FxSet<usize>,
}

impl DeviceContext {
    fn device_for(&mut self, expr: &Expr) -> VirtualDevice {
        self.devices
            .entry(expr.addr())
            .or_insert_with(VirtualDevice::unconstrained)
            .clone()
    }

    /// Joins `vd` into `expr`'s device; false if they do not join.
    fn update(&mut self, expr: &Expr, vd: &VirtualDevice) -> bool {
        match self.devices.get_mut(&expr.addr()) {
            None => {
                self.devices.insert(expr.addr(), vd.clone());
                true
            }
            Some(current) => match VirtualDevice::join(current, vd) {
                Some(joined) => {
                    *current = joined;
                    true
                }
                None => false,
            },
        }
    }
}

fn find_conflicts(
    module: &IRModule,
    config: &CompilationConfig,
) -> Result<DeviceContext, Diagnostic> {
    let mut ctx = DeviceContext::default();
    let mut on_device_calls = FxSet::default();
    for (_, function) in module.functions() {
        if !function.is_optimizable() {
            continue;
        }
        pre_order(
            function.expr(),
            |e, out| match e.as_call() {
                // A call visits its arguments, not its callee.
                Some(call) => out.extend(call.args.iter()),
                None => for_each_child(e, |c| out.push(c)),
            },
            |e| {
                let Some(call) = e.as_call() else {
                    return Ok(());
                };
                let mut call_dev = ctx.device_for(e);
                let mut body_dev = call_dev.clone();
                let on_device =
                    OnDeviceProps::of(e, config).map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                if let Some(props) = &on_device {
                    on_device_calls.insert(e.addr());
                    if props.constrain_body {
                        body_dev = props.virtual_device.clone();
                    }
                    if props.constrain_result {
                        call_dev = props.virtual_device.clone();
                    }
                } else if super::as_device_copy(e).is_some() {
                    let (src, dst) = device_copy_devices(call, config)
                        .map_err(|m| Diagnostic::pass_failed_at(e, m))?;
                    body_dev = src;
                    call_dev = dst;
                }
                if !ctx.update(e, &call_dev) && on_device.is_none() {
                    let practical = ctx.device_for(e);
                    return Err(Diagnostic::pass_failed_at(
                        e,
                        format!(
                            "Mismatched device type after iterating args. Implied device: \n{}and \
                             practial device:\n{}\nWith CallNode: \n{}",
                            call_dev.describe(config),
                            practical.describe(config),
                            pretty(e)
                        ),
                    ));
                }
                for arg in &call.args {
                    if !ctx.update(arg, &body_dev) {
                        ctx.conflicted.insert(arg.addr());
                    }
                }
                Ok(())
            },
        )?;
    }
    ctx.conflicted.retain(|a| !on_device_calls.contains(a));
    Ok(ctx)
}

/// Phase 1 on the module.
pub fn insert_conflict_copies(
    module: IRModule,
    config: &CompilationConfig,
) -> Result<IRModule, Diagnostic> {
    let mut ctx = find_conflicts(&module, config)?;
    if ctx.conflicted.is_empty() {
        return Ok(module);
    }
    let mut io = DeviceIo::new(config);
    let mut out = module.clone();
    for (name, function) in module.functions() {
        if !function.is_optimizable() {
            continue;
        }
        let mut error = None;
        let rewritten = rewrite_function(function, |old, rebuilt| {
            let (ExprKind::Call(old_call), ExprKind::Call(new_call)) = (old.kind(), rebuilt.kind())
            else {
                return rebuilt;
            };
            let mut children = vec![old_call.callee.clone()];
            for (old_arg, new_arg) in old_call.args.iter().zip(&new_call.args) {
                if !(new_arg.ptr_eq(old_arg) && ctx.conflicted.contains(&old_arg.addr())) {
                    children.push(new_arg.clone());
                    continue;
                }
                let arg_dev = ctx.device_for(old_arg);
                let call_dev = ctx.device_for(old);
                match (config.canonical(&arg_dev), config.canonical(&call_dev)) {
                    (Ok(src), Ok(dst)) if src == dst => children.push(new_arg.clone()),
                    (Ok(src), Ok(dst)) => {
                        children.push(super::device_copy(&mut io, new_arg.clone(), &src, &dst))
                    }
                    (Err(m), _) | (_, Err(m)) => {
                        error.get_or_insert(Diagnostic::pass_failed(m));
                        children.push(new_arg.clone());
                    }
                }
            }
            with_children(old, &children)
        });
        if let Some(e) = error {
            return Err(e);
        }
        out.add_function(name, rewritten);
    }
    Ok(out)
}
