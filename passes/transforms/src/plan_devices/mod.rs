//! `PlanDevices(targets, host)`: TVM v0.13's device planner
//! (`src/relay/transforms/device_planner.cc`). It decides the virtual
//! device that holds the result of every sub-expression, from the
//! constraints of `on_device` annotations, `device_copy` calls, the memory
//! operators that keep shapes on the host, and earlier results of the pass
//! (parameter and function `virtual_device`s), and writes the result back:
//!
//! * every function's parameters and the function itself get a
//!   `virtual_device`;
//! * a `device_copy` is inserted where a value crosses devices, its
//!   argument wrapped in an `on_device(…, constrain_result=True)`;
//! * `let` values and call arguments whose device differs from their
//!   context are wrapped in `on_device(…, constrain_result=True)`; other
//!   `on_device` calls and no-op `device_copy`s are removed.
//!
//! As in TVM it is a `Sequential` named `PlanDevices` of the function pass
//! `PlanDevicesRewrite` (phase 0, `rewrite`), the module pass
//! `PlanDevicesCheckConflicts` (phase 1, `conflicts`), `InferType`, and the
//! module pass `PlanDevicesCore`: analysis (`analysis`, unification of
//! `domains`), defaulting, and capture (`capture`).
//!
//! The compilation configuration ([`config`]) is built from the `targets`
//! and `host` parameters and the PassContext's `relay.fallback_device_type`,
//! as `tvm.target.make_compilation_config(ctx, targets, host)` does.
//!
//! Not handled (a diagnostic, never a guess): `call_lowered` calls (calls
//! of lowered `PrimFunc`s, which a module here cannot hold), and targets
//! other than the kinds [`config`] can build.

mod analysis;
mod capture;
pub mod config;
mod conflicts;
mod domains;
mod rewrite;
pub mod virtual_device;

use config::CompilationConfig;
use relay_ir::build::op_call_with;
use relay_ir::diagnostic::Diagnostic;
use relay_ir::rewrite::for_each_child;
use relay_ir::{AttrValue, Call, Expr, ExprKind, IRModule};
use relay_pass_manager::pipeline::PipelineValue;
use relay_pass_manager::{FunctionPass, ModulePass, ParamSpec, PassInfo, PassSpec};
use std::sync::Arc;
use virtual_device::{DeviceIo, VirtualDevice};

pub(crate) fn spec() -> PassSpec {
    PassSpec::sequential("PlanDevices", 0)
        .param(ParamSpec::list(
            "targets",
            vec![PipelineValue::Str("llvm".into())],
            "the target kinds to plan for (`llvm`, `cuda`); the default device is the \
             PassContext's relay.fallback_device_type, else the targets' one device type, \
             else the CPU",
        ))
        .param(ParamSpec::string(
            "host",
            "",
            "the host target kind (empty: the first CPU target, else `llvm`)",
        ))
        .doc(
            "Decide the virtual device of every sub-expression from on_device/device_copy \
             constraints; insert device_copy where values cross devices (call_lowered is not \
             handled)",
        )
        .build(|args| {
            let targets = args.string_list("targets")?;
            let host = args.string("host");
            let host = (!host.is_empty()).then_some(host);
            // Checked now, so a bad parameter is refused where it is written.
            CompilationConfig::new(&targets, host.as_deref(), None)?;
            let make_config = {
                let targets = targets.clone();
                let host = host.clone();
                move |ctx: &relay_pass_manager::PassContext| {
                    let fallback = ctx
                        .config("relay.fallback_device_type")
                        .and_then(|v| v.as_int());
                    CompilationConfig::new(&targets, host.as_deref(), fallback)
                        .map_err(Diagnostic::pass_failed)
                }
            };
            let check_config = make_config.clone();
            let rewrite_config = make_config.clone();
            let rewrite = FunctionPass::new(
                PassInfo::new("PlanDevicesRewrite", 0, &[]),
                move |function, _module, ctx| {
                    rewrite::rewrite_on_devices(&function, &rewrite_config(ctx)?)
                },
            );
            let check = ModulePass::new(
                PassInfo::new("PlanDevicesCheckConflicts", 0, &[]),
                move |module, ctx| {
                    let config = check_config(ctx)?;
                    conflicts::insert_conflict_copies(module, &config)
                },
            );
            let core = ModulePass::new(
                PassInfo::new("PlanDevicesCore", 0, &[]),
                move |module, ctx| {
                    let config = make_config(ctx)?;
                    plan_core(module, &config)
                },
            );
            Ok(vec![
                Arc::new(rewrite),
                Arc::new(check),
                relay_pass_manager::registry::create_by_name("InferType")?,
                Arc::new(core),
            ])
        })
}

/// Analysis, defaulting and capture (TVM's `PlanDevicesCore`).
fn plan_core(module: IRModule, config: &CompilationConfig) -> Result<IRModule, Diagnostic> {
    let domains = analysis::analyze(&module, config)?;
    capture::capture(module, domains)
}

/// TVM's `PrettyPrint` of an expression, for messages (without the
/// metadata section, as TVM's).
pub(crate) fn pretty(expr: &Expr) -> String {
    let options = relay_ir::printer::PrintOptions {
        show_meta_data: false,
        ..Default::default()
    };
    relay_ir::printer::print_expr(expr, &options)
}

fn is_op(call: &Call, name: &str) -> bool {
    call.callee.as_op().is_some_and(|op| op.name == name)
}

/// What an `on_device` call says (TVM's `OnDeviceProps`).
#[derive(Clone)]
pub(crate) struct OnDeviceProps {
    pub body: Expr,
    pub virtual_device: VirtualDevice,
    pub constrain_result: bool,
    pub constrain_body: bool,
}

impl OnDeviceProps {
    /// The props of `call`, which must be an `on_device` call.
    pub fn read(call: &Call, config: &CompilationConfig) -> Result<OnDeviceProps, String> {
        let [body] = call.args.as_slice() else {
            return Err("on_device expects one argument".to_string());
        };
        let attrs = call.attrs.as_ref();
        let flag = |name: &str, default: bool| {
            attrs
                .and_then(|a| a.get(name))
                .and_then(AttrValue::as_int)
                .map_or(default, |v| v != 0)
        };
        Ok(OnDeviceProps {
            body: body.clone(),
            virtual_device: DeviceIo::new(config)
                .read(attrs.and_then(|a| a.get("virtual_device")))?,
            constrain_result: flag("constrain_result", false),
            constrain_body: flag("constrain_body", true),
        })
    }

    /// The props of `expr` if it is an `on_device` call.
    pub fn of(expr: &Expr, config: &CompilationConfig) -> Result<Option<OnDeviceProps>, String> {
        match expr.as_call() {
            Some(call) if is_op(call, "on_device") => Ok(Some(Self::read(call, config)?)),
            _ => Ok(None),
        }
    }

    /// Constrains the body only: what a user writes.
    pub fn is_normal(&self) -> bool {
        self.constrain_body && !self.constrain_result
    }
}

/// The source and destination devices of a `device_copy` call.
pub(crate) fn device_copy_devices(
    call: &Call,
    config: &CompilationConfig,
) -> Result<(VirtualDevice, VirtualDevice), String> {
    if call.args.len() != 1 {
        return Err("device_copy expects one argument".to_string());
    }
    let io = DeviceIo::new(config);
    let attr = |name: &str| call.attrs.as_ref().and_then(|a| a.get(name));
    Ok((
        io.read(attr("src_virtual_device"))?,
        io.read(attr("dst_virtual_device"))?,
    ))
}

/// Whether `expr` is a `device_copy` call.
pub(crate) fn as_device_copy(expr: &Expr) -> Option<&Call> {
    expr.as_call().filter(|c| is_op(c, "device_copy"))
}

/// Whether `expr` is a `call_lowered` call (not handled).
pub(crate) fn is_call_lowered(expr: &Expr) -> bool {
    expr.as_call().is_some_and(|c| is_op(c, "call_lowered"))
}

/// TVM's `OnDevice`: a new `on_device` call (its span the body's).
pub(crate) fn on_device(
    io: &mut DeviceIo<'_>,
    body: Expr,
    vd: &VirtualDevice,
    constrain_result: bool,
    constrain_body: bool,
) -> Expr {
    let vd = if constrain_result || constrain_body {
        vd.clone()
    } else {
        VirtualDevice::unconstrained()
    };
    let span = body.span();
    let attrs = relay_ir::build::attrs_with(
        "relay.attrs.OnDeviceAttrs",
        &[
            ("virtual_device", io.write(&vd)),
            ("constrain_result", AttrValue::Bool(constrain_result)),
            ("constrain_body", AttrValue::Bool(constrain_body)),
        ],
    );
    let op = relay_ir::op::lookup("on_device").expect("on_device is in the operator table");
    Expr::call(Expr::op(op, None), vec![body], Some(attrs), span)
}

/// TVM's `MaybeOnDevice`: nothing around variables, globals, operators,
/// constructors and functions or for an unconstrained device; nested
/// `on_device` calls merge.
pub(crate) fn maybe_on_device(
    io: &mut DeviceIo<'_>,
    body: Expr,
    vd: &VirtualDevice,
    constrain_result: bool,
    constrain_body: bool,
) -> Result<Expr, String> {
    if vd.is_fully_unconstrained() {
        return Ok(body);
    }
    if matches!(
        body.kind(),
        ExprKind::Op(_)
            | ExprKind::Constructor(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Var(_)
            | ExprKind::Function(_)
    ) {
        return Ok(body);
    }
    if let Some(inner) = OnDeviceProps::of(&body, io.config)? {
        let (outer_vd, constrain_outer, constrain_inner) =
            (vd, constrain_result, inner.constrain_body);
        if constrain_outer && constrain_inner && inner.virtual_device != *outer_vd {
            return Err(
                "Cannot constrain result and body of nested on_device calls to \
                        different virtual devices"
                    .to_string(),
            );
        }
        if constrain_body && inner.constrain_result && inner.virtual_device != *outer_vd {
            return Err(
                "Cannot constrain intermediate result of nested on_device calls to \
                        different virtual devices"
                    .to_string(),
            );
        }
        let chosen = if constrain_inner || constrain_outer {
            outer_vd.clone()
        } else {
            inner.virtual_device.clone()
        };
        return Ok(on_device(
            io,
            inner.body,
            &chosen,
            constrain_outer,
            constrain_inner,
        ));
    }
    Ok(on_device(io, body, vd, constrain_result, constrain_body))
}

/// TVM's `MaybeOnDeviceFixed`: constrains both body and result.
pub(crate) fn maybe_on_device_fixed(
    io: &mut DeviceIo<'_>,
    body: Expr,
    vd: &VirtualDevice,
) -> Result<Expr, String> {
    maybe_on_device(io, body, vd, true, true)
}

/// TVM's `DeviceCopy`.
pub(crate) fn device_copy(
    io: &mut DeviceIo<'_>,
    body: Expr,
    src: &VirtualDevice,
    dst: &VirtualDevice,
) -> Expr {
    op_call_with(
        "device_copy",
        vec![body],
        &[
            ("src_virtual_device", io.write(src)),
            ("dst_virtual_device", io.write(dst)),
        ],
    )
}

/// Every node under `root` once, parents before children (TVM's
/// `ExprVisitor` order), with the children `children` lists.
pub(crate) fn pre_order<'a>(
    root: &'a Expr,
    mut children: impl FnMut(&'a Expr, &mut Vec<&'a Expr>),
    mut f: impl FnMut(&'a Expr) -> Result<(), Diagnostic>,
) -> Result<(), Diagnostic> {
    let mut seen = relay_ir::fxhash::FxSet::default();
    let mut stack: Vec<&'a Expr> = vec![root];
    let mut buffer: Vec<&'a Expr> = Vec::new();
    while let Some(expr) = stack.pop() {
        if !seen.insert(expr.addr()) {
            continue;
        }
        f(expr)?;
        children(expr, &mut buffer);
        stack.extend(buffer.drain(..).rev());
    }
    Ok(())
}

/// The children TVM's `ExprVisitor` visits, except inside `Primitive`
/// functions (which the planner leaves alone).
pub(crate) fn children_outside_primitives<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    if let Some(f) = expr.as_function() {
        if f.is_primitive() {
            return;
        }
    }
    for_each_child(expr, |c| out.push(c));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plans `text` for llvm and cuda with the GPU as the default device.
    fn plan(text: &str) -> Result<IRModule, Diagnostic> {
        let (module, diagnostics) = relay_lower::parse_and_lower("test.relay", text);
        assert!(!diagnostics.has_errors());
        let (module, _) = relay_infer::infer_module(&module);
        let config = CompilationConfig::new(&["llvm".into(), "cuda".into()], None, Some(2))
            .expect("a valid configuration");
        let mut rewritten = module.clone();
        for (name, f) in module.functions() {
            rewritten.add_function(name, rewrite::rewrite_on_devices(f, &config)?);
        }
        let checked = conflicts::insert_conflict_copies(rewritten, &config)?;
        let (typed, _) = relay_infer::infer_module(&checked);
        plan_core(typed, &config)
    }

    /// TVM's `test_stack_overflow`: a chain far deeper than any recursion
    /// would survive is planned (every walk of the pass is iterative).
    #[test]
    fn deep_chains_do_not_overflow_the_stack() {
        let mut text = String::from(
            "#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(5, 7), float32], \
             %b: Tensor[(5, 7), float32]) {\n  %0 = add(%a, %b);\n  %1 = add(%0, %b);\n",
        );
        let n = 20_000;
        for i in 2..n {
            text.push_str(&format!("  %{i} = add(%{}, %{});\n", i - 1, i - 2));
        }
        text.push_str(&format!("  add(%{}, %{})\n}}\n", n - 1, n - 2));
        let planned = plan(&text).expect("the chain is planned");
        let main = planned.function("main").expect("@main");
        assert!(main.data().virtual_device.is_some());
    }
}
