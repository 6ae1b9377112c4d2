//! Passes: the [`Pass`] trait, running a pass with instruments ([`run_pass`],
//! TVM's `Pass::operator()`), and the three kinds TVM has — module passes,
//! function passes and `Sequential` — plus constructors that make a pass
//! from a closure in a few lines (the Rust form of TVM's decorators).

use crate::{registry, PassContext, PassInfo};
use rayon::prelude::*;
use relay_ir::diagnostic::{Code, Diagnostic, Diagnostics};
use relay_ir::{Function, IRModule, ModuleProperty};
use std::fmt;
use std::sync::Arc;

/// A pass failed: which pass, why, and its diagnostics.
#[derive(Debug, Clone)]
pub struct PassError {
    /// The failing pass (or instrument) name.
    pub pass: String,
    pub message: String,
    pub diagnostics: Vec<Diagnostic>,
    /// Where a reproducer of the failure was written, if one was.
    pub reproducer: Option<std::path::PathBuf>,
    /// The texts the diagnostics' spans point into when that is not the
    /// module the pipeline ran on (the output of an external pass).
    pub sources: Option<relay_ir::source::SourceMap>,
}

impl PassError {
    pub fn new(pass: impl Into<String>, message: impl Into<String>) -> PassError {
        PassError {
            pass: pass.into(),
            message: message.into(),
            diagnostics: Vec::new(),
            reproducer: None,
            sources: None,
        }
    }

    /// A pass that reported errors.
    pub fn failed(pass: &str, diagnostics: Diagnostics) -> PassError {
        let n = diagnostics.error_count();
        PassError {
            pass: pass.to_string(),
            message: format!(
                "pass {pass} failed with {n} error{}",
                if n == 1 { "" } else { "s" }
            ),
            diagnostics: diagnostics.into_vec(),
            reproducer: None,
            sources: None,
        }
    }

    /// An instrument hook that failed.
    pub fn instrument(name: &str, hook: &str, message: String) -> PassError {
        PassError {
            pass: name.to_string(),
            message: format!("instrument {name} failed in {hook}: {message}"),
            diagnostics: Vec::new(),
            reproducer: None,
            sources: None,
        }
    }
}

impl fmt::Display for PassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PassError {}

/// What running a pass gives.
pub type PassResult = Result<IRModule, PassError>;

/// A module-to-module transformation.
pub trait Pass: Send + Sync {
    fn info(&self) -> &PassInfo;

    /// The pass body. Call passes through [`run_pass`] (or [`Pass::run`]),
    /// which adds the instrument hooks around this.
    fn transform(&self, module: IRModule, ctx: &PassContext) -> PassResult;

    /// The pass as pipeline text (`FuseOps(fuse_opt_level=2)`).
    fn describe(&self) -> String {
        self.info().name.clone()
    }

    /// A property this pass establishes: when the module already has it,
    /// the pass need not run (unless the context asks for TVM's exact
    /// behaviour).
    fn establishes(&self) -> Option<ModuleProperty> {
        None
    }

    /// Runs the pass with instruments under `ctx`.
    fn run(&self, module: IRModule, ctx: &PassContext) -> PassResult
    where
        Self: Sized,
    {
        run_pass(self, module, ctx)
    }
}

/// Runs `pass` on `module` under `ctx` as TVM's `Pass::operator()` does:
/// unless the pass is in `required_pass`, every instrument's `should_run`
/// is asked (all of them); if all agree, every `run_before_pass` runs, then
/// the pass, then every `run_after_pass`. A failing hook or pass stops the
/// rest. The pass's opt_level is not consulted here (only `Sequential` does).
pub fn run_pass(pass: &dyn Pass, module: IRModule, ctx: &PassContext) -> PassResult {
    let _running = RunningPass::enter(pass);
    let info = pass.info();
    if !ctx.tvm_exact {
        if let Some(property) = pass.establishes() {
            if module.has_property(property) {
                ctx.skipped(
                    &module,
                    info,
                    format!(
                        "skipped: the module is already {property:?} and has not changed since"
                    ),
                );
                return Ok(module);
            }
        }
    }
    let instruments = ctx.instruments();
    if !instruments.is_empty() {
        let mut should_run = true;
        if !ctx.required_pass.contains(&info.name) {
            for instrument in &instruments {
                should_run &= instrument
                    .should_run(&module, info)
                    .map_err(|m| PassError::instrument(instrument.name(), "should_run", m))?;
            }
        }
        if !should_run {
            ctx.skipped(
                &module,
                info,
                "skipped: an instrument's should_run said no".into(),
            );
            return Ok(module);
        }
        for instrument in &instruments {
            instrument
                .run_before_pass(&module, info)
                .map_err(|m| PassError::instrument(instrument.name(), "run_before_pass", m))?;
        }
    }
    ctx.explain(&info.name, true, "ran");
    let kept_for_reproducer = ctx.reproducer_dir.as_ref().map(|_| module.clone());
    ctx.nest(1);
    let result = if ctx.config_bool("testing.immutable_module", false) {
        let before = module.structural_hash();
        let out = pass.transform(module.clone(), ctx);
        if module.structural_hash() != before {
            Err(PassError::new(
                &info.name,
                format!("Immutable module has been modified in pass: {}", info.name),
            ))
        } else {
            out
        }
    } else {
        pass.transform(module, ctx)
    };
    ctx.nest(-1);
    let out = match result {
        Ok(out) => out,
        Err(mut error) => {
            // The innermost failing pass writes the reproducer; outer ones
            // pass the error on untouched.
            // An instrument's failure (its name is the error's pass) is
            // not this pass's: the instrument reports its own findings.
            let from_instrument = instruments.iter().any(|i| i.name() == error.pass);
            if let (Some(dir), Some(before), None, false) = (
                &ctx.reproducer_dir,
                kept_for_reproducer,
                &error.reproducer,
                from_instrument,
            ) {
                match write_reproducer(dir, pass, &before, ctx) {
                    Ok(()) => error.reproducer = Some(dir.clone()),
                    Err(e) => error.diagnostics.push(Diagnostic::warning(
                        Code::PassWarning,
                        format!("could not write the reproducer: {e}"),
                    )),
                }
            }
            return Err(error);
        }
    };
    for instrument in &instruments {
        instrument
            .run_after_pass(&out, info)
            .map_err(|m| PassError::instrument(instrument.name(), "run_after_pass", m))?;
    }
    Ok(out)
}

thread_local! {
    static RUNNING: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps the description of the pass `run_pass` is running on this
/// thread's stack of running passes while it lives.
struct RunningPass;

impl RunningPass {
    fn enter(pass: &dyn Pass) -> RunningPass {
        RUNNING.with(|r| r.borrow_mut().push(pass.describe()));
        RunningPass
    }
}

impl Drop for RunningPass {
    fn drop(&mut self) {
        RUNNING.with(|r| r.borrow_mut().pop());
    }
}

/// The pipeline text (`FuseOps(fuse_opt_level=2)`) of the innermost pass
/// [`run_pass`] is running on this thread: what an instrument hook needs
/// to name the pass with its parameters (its `PassInfo` has only the name).
pub fn running_pass_description() -> Option<String> {
    RUNNING.with(|r| r.borrow().last().cloned())
}

/// Writes `before.relay` (the module the pass failed on) and `pipeline.txt`
/// (the arguments of `relay opt` that run the pass alone under the same
/// context: `-p PASS --opt-level N`, and the target, config, required and
/// disabled passes when set) into `dir`, so that
/// `eval "relay opt DIR/before.relay $(cat DIR/pipeline.txt)"` fails the
/// same way.
fn write_reproducer(
    dir: &std::path::Path,
    pass: &dyn Pass,
    before: &IRModule,
    ctx: &PassContext,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let text = relay_ir::printer::print_module(before, &relay_ir::printer::PrintOptions::default());
    std::fs::write(dir.join("before.relay"), text)?;
    std::fs::write(
        dir.join("pipeline.txt"),
        format!("{}\n", reproducer_arguments(pass, ctx)),
    )
}

/// The `relay opt` arguments for `pass` under `ctx`, quoted for a POSIX
/// shell. Map-valued config entries (only `relay.toml` can set them) have
/// no command-line form and are left out.
pub fn reproducer_arguments(pass: &dyn Pass, ctx: &PassContext) -> String {
    reproducer_arguments_for(&pass.describe(), ctx)
}

/// [`reproducer_arguments`] for a pass given by its pipeline text.
pub fn reproducer_arguments_for(description: &str, ctx: &PassContext) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut args = vec![
        "-p".to_string(),
        quote(description),
        "--opt-level".to_string(),
        ctx.opt_level.to_string(),
    ];
    if let Some(target) = &ctx.target {
        args.push("--target".into());
        args.push(quote(target));
    }
    for (key, value) in &ctx.config {
        if !matches!(value, crate::ConfigValue::Map(_)) {
            args.push("--config".into());
            args.push(quote(&format!("{key}={value}")));
        }
    }
    for name in &ctx.required_pass {
        args.push("--required-pass".into());
        args.push(quote(name));
    }
    for name in &ctx.disabled_pass {
        args.push("--disabled-pass".into());
        args.push(quote(name));
    }
    if ctx.tvm_exact {
        args.push("--tvm-exact".into());
    }
    args.join(" ")
}

/// Runs `body` in a fresh diagnostics frame of `ctx`: errors reported in it
/// (or returned) fail the pass; warnings are kept.
fn with_diagnostics(
    name: &str,
    ctx: &PassContext,
    body: impl FnOnce() -> Result<IRModule, Diagnostic>,
) -> PassResult {
    ctx.push_diagnostic_frame();
    let result = body();
    let mut errors = ctx.pop_diagnostic_frame();
    match result {
        Ok(module) if errors.is_empty() => Ok(module),
        Ok(_) => Err(PassError::failed(name, errors)),
        Err(diagnostic) => {
            errors.push(diagnostic);
            Err(PassError::failed(name, errors))
        }
    }
}

type ModuleFn = dyn Fn(IRModule, &PassContext) -> Result<IRModule, Diagnostic> + Send + Sync;
type FunctionFn =
    dyn Fn(Function, &IRModule, &PassContext) -> Result<Function, Diagnostic> + Send + Sync;

/// A pass over the whole module.
pub struct ModulePass {
    info: PassInfo,
    description: String,
    func: Box<ModuleFn>,
    establishes: Option<ModuleProperty>,
}

impl ModulePass {
    pub fn new(
        info: PassInfo,
        func: impl Fn(IRModule, &PassContext) -> Result<IRModule, Diagnostic> + Send + Sync + 'static,
    ) -> ModulePass {
        ModulePass {
            description: info.name.clone(),
            info,
            func: Box::new(func),
            establishes: None,
        }
    }

    /// The pipeline text that recreates this pass.
    pub fn with_description(mut self, description: impl Into<String>) -> ModulePass {
        self.description = description.into();
        self
    }

    pub fn establishing(mut self, property: ModuleProperty) -> ModulePass {
        self.establishes = Some(property);
        self
    }
}

impl Pass for ModulePass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn transform(&self, module: IRModule, ctx: &PassContext) -> PassResult {
        with_diagnostics(&self.info.name, ctx, || (self.func)(module, ctx))
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn establishes(&self) -> Option<ModuleProperty> {
        self.establishes
    }
}

/// A pass over each Relay function of the module that may be optimised (not
/// those with a `Compiler` attribute, a non-zero `Extern` or a non-zero
/// `SkipOptimization`). Results are written back after all functions are
/// done, and InferType runs afterwards under the current context, as TVM
/// does. Independent functions are transformed in parallel; the result is
/// the same as a serial run.
pub struct FunctionPass {
    info: PassInfo,
    description: String,
    func: Arc<FunctionFn>,
}

impl FunctionPass {
    pub fn new(
        info: PassInfo,
        func: impl Fn(Function, &IRModule, &PassContext) -> Result<Function, Diagnostic>
            + Send
            + Sync
            + 'static,
    ) -> FunctionPass {
        FunctionPass {
            description: info.name.clone(),
            info,
            func: Arc::new(func),
        }
    }

    pub fn with_description(mut self, description: impl Into<String>) -> FunctionPass {
        self.description = description.into();
        self
    }
}

impl Pass for FunctionPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn transform(&self, module: IRModule, ctx: &PassContext) -> PassResult {
        let updated = with_diagnostics(&self.info.name, ctx, || {
            let targets: Vec<(String, Function)> = module
                .functions()
                .filter(|(_, f)| f.is_optimizable())
                .map(|(name, f)| (name.to_string(), f.clone()))
                .collect();
            let run = |(name, f): &(String, Function)| {
                (self.func)(f.clone(), &module, ctx).map(|new| (name.clone(), new))
            };
            let results: Vec<Result<(String, Function), Diagnostic>> = if targets.len() > 1 {
                targets.par_iter().map(run).collect()
            } else {
                targets.iter().map(run).collect()
            };
            let mut updated = module.clone();
            for result in results {
                let (name, function) = result?;
                updated.add_function(&name, function);
            }
            Ok(updated)
        })?;
        let infer = registry::create_by_name("InferType")
            .map_err(|m| PassError::new(&self.info.name, m))?;
        run_pass(&*infer, updated, &PassContext::current())
    }

    fn describe(&self) -> String {
        self.description.clone()
    }
}

/// Passes run in order, each only if enabled (TVM's `Sequential`).
pub struct Sequential {
    info: PassInfo,
    passes: Vec<Arc<dyn Pass>>,
}

impl Sequential {
    /// TVM's default: name "sequential", opt_level 0, nothing required.
    pub fn new(passes: Vec<Arc<dyn Pass>>) -> Sequential {
        Sequential::with_info(PassInfo::new("sequential", 0, &[]), passes)
    }

    pub fn with_info(info: PassInfo, passes: Vec<Arc<dyn Pass>>) -> Sequential {
        Sequential { info, passes }
    }

    pub fn passes(&self) -> &[Arc<dyn Pass>] {
        &self.passes
    }
}

impl Pass for Sequential {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    /// For each child: skip it unless enabled (disabled list, then required
    /// list, then opt_level); run each pass it requires, looked up by name,
    /// without the enabled check; then run it.
    fn transform(&self, mut module: IRModule, ctx: &PassContext) -> PassResult {
        for pass in &self.passes {
            let info = pass.info();
            if !ctx.pass_enabled(info) {
                ctx.skipped(
                    &module,
                    info,
                    format!("skipped: {}", ctx.enabled_reason(info)),
                );
                continue;
            }
            for required in &info.required {
                let dependency = registry::create_by_name(required)
                    .map_err(|m| PassError::new(&info.name, m))?;
                ctx.explain(required, true, format!("required by {}", info.name));
                module = run_pass(&*dependency, module, ctx)?;
            }
            module = run_pass(&**pass, module, ctx)?;
        }
        Ok(module)
    }

    fn describe(&self) -> String {
        let inner: Vec<String> = self.passes.iter().map(|p| p.describe()).collect();
        let mut extra = Vec::new();
        if self.info.opt_level != 0 {
            extra.push(format!("opt_level={}", self.info.opt_level));
        }
        if self.info.name != "sequential" {
            extra.push(format!("name={:?}", self.info.name));
        }
        if !self.info.required.is_empty() {
            let names: Vec<String> = self
                .info
                .required
                .iter()
                .map(|r| format!("{r:?}"))
                .collect();
            extra.push(format!("required=[{}]", names.join(", ")));
        }
        let all: Vec<String> = inner.into_iter().chain(extra).collect();
        format!("Sequential({})", all.join(", "))
    }
}

/// A module pass from a closure: `module_pass("AddAbs", 0, &[], |m, ctx| …)`.
pub fn module_pass(
    name: &str,
    opt_level: u32,
    required: &[&str],
    func: impl Fn(IRModule, &PassContext) -> Result<IRModule, Diagnostic> + Send + Sync + 'static,
) -> Arc<dyn Pass> {
    Arc::new(ModulePass::new(
        PassInfo::new(name, opt_level, required),
        func,
    ))
}

/// A function pass from a closure: `function_pass("Rename", 1, &[], |f, m, ctx| …)`.
pub fn function_pass(
    name: &str,
    opt_level: u32,
    required: &[&str],
    func: impl Fn(Function, &IRModule, &PassContext) -> Result<Function, Diagnostic>
        + Send
        + Sync
        + 'static,
) -> Arc<dyn Pass> {
    Arc::new(FunctionPass::new(
        PassInfo::new(name, opt_level, required),
        func,
    ))
}
