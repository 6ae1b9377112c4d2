//! Phase 0 (`PlanDevicesRewrite`, TVM's `RewriteOnDevices`): an
//! `on_device` that only constrains its body (what a user writes) becomes
//! fixed (body and result) where it is a `let` value or a function body, so
//! the let variable or function result is not left free; a projection of
//! such an annotated tuple is annotated itself, so the projection rather
//! than the whole tuple is what gets copied.

use super::config::CompilationConfig;
use super::virtual_device::DeviceIo;
use super::{is_call_lowered, maybe_on_device_fixed, on_device, OnDeviceProps};
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::{rewrite_function, with_children};
use relay_ir::{Expr, ExprKind, Function};

/// Phase 0 on one function.
pub fn rewrite_on_devices(
    function: &Function,
    config: &CompilationConfig,
) -> Result<Function, Diagnostic> {
    let mut io = DeviceIo::new(config);
    let mut error: Option<Diagnostic> = None;
    let rewritten = rewrite_function(function, |old, rebuilt| {
        if error.is_some() {
            return rebuilt;
        }
        match step(&mut io, old, rebuilt.clone()) {
            Ok(e) => e,
            Err(d) => {
                error = Some(d);
                rebuilt
            }
        }
    });
    match error {
        Some(d) => Err(d),
        None => Ok(rewritten),
    }
}

/// The normal `on_device` props of `expr`, if it is such a call.
fn normal_props(io: &DeviceIo<'_>, expr: &Expr) -> Result<Option<OnDeviceProps>, Diagnostic> {
    let props =
        OnDeviceProps::of(expr, io.config).map_err(|m| Diagnostic::pass_failed_at(expr, m))?;
    Ok(props.filter(OnDeviceProps::is_normal))
}

fn step(io: &mut DeviceIo<'_>, old: &Expr, rebuilt: Expr) -> Result<Expr, Diagnostic> {
    if is_call_lowered(old) {
        return Err(Diagnostic::pass_failed_at(
            old,
            "PlanDevices does not handle call_lowered calls (calls of lowered PrimFuncs) here",
        ));
    }
    match rebuilt.kind() {
        ExprKind::TupleGetItem { tuple, .. } => match normal_props(io, tuple)? {
            Some(p) => Ok(on_device(
                io,
                rebuilt.clone(),
                &p.virtual_device,
                p.constrain_result,
                p.constrain_body,
            )),
            None => Ok(rebuilt),
        },
        ExprKind::Let { var, value, body } => match normal_props(io, value)? {
            Some(p) => {
                let fixed = maybe_on_device_fixed(io, p.body, &p.virtual_device)
                    .map_err(Diagnostic::pass_failed)?;
                Ok(with_children(
                    &rebuilt,
                    &[var.expr().clone(), fixed, body.clone()],
                ))
            }
            None => Ok(rebuilt),
        },
        ExprKind::Function(f) => match normal_props(io, &f.body)? {
            Some(p) => {
                let fixed = maybe_on_device_fixed(io, p.body, &p.virtual_device)
                    .map_err(Diagnostic::pass_failed)?;
                let mut children: Vec<Expr> = f.params.iter().map(|v| v.expr().clone()).collect();
                children.push(fixed);
                Ok(with_children(&rebuilt, &children))
            }
            None => Ok(rebuilt),
        },
        _ => Ok(rebuilt),
    }
}
