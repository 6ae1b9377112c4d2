//! TVM's pass-infrastructure semantics: enable order in Sequential, required
//! resolution, nested Sequential opt_level, direct calls, instrument hook
//! order including the failure cases, config validation, scoped contexts,
//! and what the module-property cache saves on real models.

mod common;

use relay_passes::diagnostic::{Code, Diagnostic};
use relay_passes::ir::{DictAttrs, Function, FunctionData, IRModule, Var};
use relay_passes::pass_manager::registry::{register, PassKind, PassSpec};
use relay_passes::pass_manager::{
    module_pass, run_pass, ConfigValue, HookResult, Pass, PassContext, PassContextOptions,
    PassInfo, PassInstrument, Sequential,
};
use std::sync::{Arc, Mutex};

fn identity_module() -> IRModule {
    let x = Var::new("x", None, None);
    let f = Function::new(
        FunctionData {
            params: vec![x.clone()],
            body: x.into_expr(),
            ret_type: None,
            type_params: vec![],
            attrs: DictAttrs::default(),
            virtual_device: None,
        },
        None,
    );
    let mut m = IRModule::new();
    m.add_function("main", f);
    m
}

/// A pass that records its name in `log` and otherwise does nothing.
fn recording(
    name: &str,
    opt_level: u32,
    required: &[&str],
    log: &Arc<Mutex<Vec<String>>>,
) -> Arc<dyn Pass> {
    let log = Arc::clone(log);
    let label = name.to_string();
    module_pass(name, opt_level, required, move |m, _| {
        log.lock().unwrap().push(label.clone());
        Ok(m)
    })
}

fn context(opt_level: u32, required: &[&str], disabled: &[&str]) -> Arc<PassContext> {
    PassContext::new(PassContextOptions {
        opt_level,
        required_pass: required.iter().map(|s| s.to_string()).collect(),
        disabled_pass: disabled.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn sequential_enable_order_disabled_then_required_then_opt_level() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let seq = Sequential::new(vec![
        recording("Low", 1, &[], &log),
        recording("High", 3, &[], &log),
        recording("HighRequired", 3, &[], &log),
        recording("LowDisabled", 1, &[], &log),
        recording("BothListed", 3, &[], &log),
    ]);
    let ctx = context(
        2,
        &["HighRequired", "BothListed"],
        &["LowDisabled", "BothListed"],
    );
    run_pass(&seq, identity_module(), &ctx).unwrap();
    assert_eq!(*log.lock().unwrap(), ["Low", "HighRequired"]);
}

#[test]
fn calling_a_pass_directly_ignores_opt_level_and_disabled_list() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let pass = recording("Gated", 4, &[], &log);
    let ctx = context(0, &[], &["Gated"]);
    run_pass(&*pass, identity_module(), &ctx).unwrap();
    assert_eq!(*log.lock().unwrap(), ["Gated"]);
}

#[test]
fn required_passes_resolve_by_name_and_skip_the_enabled_check() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let dep_log = Arc::clone(&log);
    register(PassSpec {
        name: "TestDependency".into(),
        info: PassInfo::new("TestDependency", 4, &[]),
        kind: PassKind::Module,
        params: vec![],
        description: "records itself".into(),
        factory: Arc::new(move |_| Ok(recording("TestDependency", 4, &[], &dep_log))),
    });
    let seq = Sequential::new(vec![recording("Dependent", 1, &["TestDependency"], &log)]);
    run_pass(&seq, identity_module(), &context(2, &[], &[])).unwrap();
    assert_eq!(*log.lock().unwrap(), ["TestDependency", "Dependent"]);

    // An unknown requirement fails with TVM's message.
    let seq = Sequential::new(vec![recording("NeedsGhost", 0, &["Ghost"], &log)]);
    let error = run_pass(&seq, identity_module(), &context(2, &[], &[])).unwrap_err();
    assert_eq!(error.message, "Cannot use Ghost to create the pass");
}

#[test]
fn nested_sequential_uses_its_own_opt_level() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let inner = Sequential::with_info(
        PassInfo::new("inner", 3, &[]),
        vec![recording("Inside", 0, &[], &log)],
    );
    let outer = Sequential::new(vec![Arc::new(inner), recording("After", 0, &[], &log)]);
    run_pass(&outer, identity_module(), &context(2, &[], &[])).unwrap();
    assert_eq!(*log.lock().unwrap(), ["After"]);
    log.lock().unwrap().clear();
    run_pass(&outer, identity_module(), &context(3, &[], &[])).unwrap();
    assert_eq!(*log.lock().unwrap(), ["Inside", "After"]);
}

/// Records every hook; fails where told to.
struct Recorder {
    name: String,
    events: Arc<Mutex<Vec<String>>>,
    fail_on: Option<&'static str>,
    should_run: bool,
}

impl Recorder {
    fn new(name: &str, events: &Arc<Mutex<Vec<String>>>) -> Recorder {
        Recorder {
            name: name.into(),
            events: Arc::clone(events),
            fail_on: None,
            should_run: true,
        }
    }

    fn hook(&self, hook: &'static str, detail: &str) -> HookResult {
        self.events
            .lock()
            .unwrap()
            .push(format!("{}:{hook}{detail}", self.name));
        if self.fail_on == Some(hook) {
            Err(format!("{hook} failed"))
        } else {
            Ok(())
        }
    }
}

impl PassInstrument for Recorder {
    fn name(&self) -> &str {
        &self.name
    }
    fn enter_pass_ctx(&self) -> HookResult {
        self.hook("enter", "")
    }
    fn exit_pass_ctx(&self) -> HookResult {
        self.hook("exit", "")
    }
    fn should_run(&self, _: &IRModule, info: &PassInfo) -> HookResult<bool> {
        self.hook("should_run", &format!("({})", info.name))?;
        Ok(self.should_run)
    }
    fn run_before_pass(&self, _: &IRModule, info: &PassInfo) -> HookResult {
        self.hook("before", &format!("({})", info.name))
    }
    fn run_after_pass(&self, _: &IRModule, info: &PassInfo) -> HookResult {
        self.hook("after", &format!("({})", info.name))
    }
}

fn with_instruments(
    instruments: Vec<Arc<dyn PassInstrument>>,
    required: &[&str],
) -> Arc<PassContext> {
    PassContext::new(PassContextOptions {
        instruments,
        required_pass: required.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
    .unwrap()
}

fn noop(name: &str) -> Arc<dyn Pass> {
    module_pass(name, 0, &[], |m, _| Ok(m))
}

#[test]
fn hooks_run_in_order() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let ctx = with_instruments(
        vec![
            Arc::new(Recorder::new("a", &events)),
            Arc::new(Recorder::new("b", &events)),
        ],
        &[],
    );
    let guard = ctx.enter().unwrap();
    run_pass(&*noop("P"), identity_module(), &ctx).unwrap();
    guard.exit().unwrap();
    assert_eq!(
        *events.lock().unwrap(),
        [
            "a:enter",
            "b:enter",
            "a:should_run(P)",
            "b:should_run(P)",
            "a:before(P)",
            "b:before(P)",
            "a:after(P)",
            "b:after(P)",
            "a:exit",
            "b:exit"
        ]
    );
}

#[test]
fn should_run_asks_every_instrument_and_skipping_returns_the_same_module() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut no = Recorder::new("a", &events);
    no.should_run = false;
    let ctx = with_instruments(
        vec![Arc::new(no), Arc::new(Recorder::new("b", &events))],
        &[],
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    run_pass(&*recording("P", 0, &[], &log), identity_module(), &ctx).unwrap();
    assert!(log.lock().unwrap().is_empty());
    assert_eq!(
        *events.lock().unwrap(),
        ["a:should_run(P)", "b:should_run(P)"]
    );
}

#[test]
fn required_passes_are_not_asked_should_run() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut no = Recorder::new("a", &events);
    no.should_run = false;
    let ctx = with_instruments(vec![Arc::new(no)], &["P"]);
    let log = Arc::new(Mutex::new(Vec::new()));
    run_pass(&*recording("P", 0, &[], &log), identity_module(), &ctx).unwrap();
    assert_eq!(*log.lock().unwrap(), ["P"]);
    assert_eq!(*events.lock().unwrap(), ["a:before(P)", "a:after(P)"]);
}

#[test]
fn a_failing_pass_skips_the_after_hooks_but_the_context_still_exits() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let ctx = with_instruments(vec![Arc::new(Recorder::new("a", &events))], &[]);
    let failing = module_pass("Broken", 0, &[], |_, _| {
        Err(Diagnostic::error(
            Code::PassFailed,
            "this pass always fails",
        ))
    });
    let guard = ctx.enter().unwrap();
    let error = run_pass(&*failing, identity_module(), &ctx).unwrap_err();
    drop(guard);
    assert_eq!(error.pass, "Broken");
    assert_eq!(error.diagnostics[0].message, "this pass always fails");
    assert_eq!(
        *events.lock().unwrap(),
        [
            "a:enter",
            "a:should_run(Broken)",
            "a:before(Broken)",
            "a:exit"
        ]
    );
}

#[test]
fn a_failing_after_hook_stops_the_later_instruments() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut first = Recorder::new("a", &events);
    first.fail_on = Some("after");
    let ctx = with_instruments(
        vec![Arc::new(first), Arc::new(Recorder::new("b", &events))],
        &[],
    );
    let error = run_pass(&*noop("P"), identity_module(), &ctx).unwrap_err();
    assert!(
        error.message.contains("run_after_pass"),
        "{}",
        error.message
    );
    let events = events.lock().unwrap();
    assert_eq!(events.last().unwrap(), "a:after(P)");
    assert!(!events.iter().any(|e| e == "b:after(P)"));
}

#[test]
fn a_failing_enter_exits_the_entered_instruments_and_clears_the_list() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut second = Recorder::new("b", &events);
    second.fail_on = Some("enter");
    let ctx = with_instruments(
        vec![
            Arc::new(Recorder::new("a", &events)),
            Arc::new(second),
            Arc::new(Recorder::new("c", &events)),
        ],
        &[],
    );
    assert!(ctx.enter().is_err());
    assert_eq!(*events.lock().unwrap(), ["a:enter", "b:enter", "a:exit"]);
    assert!(ctx.instruments().is_empty());
    // The failed context did not become current.
    assert_eq!(PassContext::current().opt_level, 2);
}

#[test]
fn a_failing_exit_clears_the_instruments() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut first = Recorder::new("a", &events);
    first.fail_on = Some("exit");
    let ctx = with_instruments(
        vec![Arc::new(first), Arc::new(Recorder::new("b", &events))],
        &[],
    );
    let guard = ctx.enter().unwrap();
    assert!(guard.exit().is_err());
    assert_eq!(*events.lock().unwrap(), ["a:enter", "b:enter", "a:exit"]);
    assert!(ctx.instruments().is_empty());
}

#[test]
fn nested_scopes_restore_the_outer_context() {
    assert_eq!(PassContext::current().opt_level, 2);
    let outer = context(3, &[], &[]);
    let guard = outer.enter().unwrap();
    assert_eq!(PassContext::current().opt_level, 3);
    {
        let inner = context(1, &[], &[]);
        let _inner_guard = inner.enter().unwrap();
        assert_eq!(PassContext::current().opt_level, 1);
    }
    assert_eq!(PassContext::current().opt_level, 3);
    drop(guard);
    assert_eq!(PassContext::current().opt_level, 2);
}

#[test]
fn config_is_validated_against_registered_keys() {
    let bad_key = PassContext::new(PassContextOptions {
        config: [("relay.FuseOps.max_dept".to_string(), ConfigValue::Int(3))].into(),
        ..Default::default()
    })
    .unwrap_err();
    assert!(bad_key.starts_with("Invalid config option 'relay.FuseOps.max_dept' candidates are:"));
    assert!(bad_key.contains("relay.FuseOps.max_depth"));
    let bad_type = PassContext::new(PassContextOptions {
        config: [(
            "relay.FuseOps.max_depth".to_string(),
            ConfigValue::String("x".into()),
        )]
        .into(),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(
        bad_type,
        "expect config relay.FuseOps.max_depth to have type IntImm but get runtime.String"
    );
    let ok = PassContext::new(PassContextOptions {
        config: [("relay.FuseOps.max_depth".to_string(), ConfigValue::Int(3))].into(),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(ok.config_int("relay.FuseOps.max_depth", 256), 3);
}

#[test]
fn the_seeds_module_pass_adds_a_function() {
    // A module pass that adds an `abs` function, as in TVM's tutorial.
    let add_abs = module_pass("AddAbs", 0, &[], |mut m, _| {
        let abs = relay_passes::op::lookup("abs").expect("abs is registered");
        let x = Var::new("x", None, None);
        let body = relay_passes::ir::Expr::call(
            relay_passes::ir::Expr::op(abs, None),
            vec![x.expr().clone()],
            None,
            None,
        );
        let f = Function::new(
            FunctionData {
                params: vec![x],
                body,
                ret_type: None,
                type_params: vec![],
                attrs: DictAttrs::default(),
                virtual_device: None,
            },
            None,
        );
        m.add_function("abs", f);
        Ok(m)
    });
    let out = run_pass(&*add_abs, identity_module(), &context(2, &[], &[])).unwrap();
    let names: Vec<&str> = out.functions().map(|(n, _)| n).collect();
    assert_eq!(names, ["abs", "main"]);
}

/// For every model of the corpus: `FoldConstant, EliminateCommonSubexpr,
/// DeadCodeElimination` at opt_level 3, once with the module-property cache
/// (the default) and once with TVM's exact behaviour. The printed results
/// must be equal, and the cache must run InferType strictly fewer times
/// (each function pass runs InferType after itself; the cache skips the
/// runs that find the module already typed). Prints both counts per model.
#[test]
fn the_property_cache_runs_infer_type_fewer_times_on_every_model() {
    use relay_passes::pass_manager::instruments::PassCounts;
    use relay_passes::printer::{print_module, PrintOptions};

    let Some(root) = common::corpus("the_property_cache_runs_infer_type_fewer_times") else {
        return;
    };
    let models = common::sorted_files(&root.join("models"), ".relay");
    assert!(!models.is_empty(), "no models in {}", root.display());
    let pipeline = "FoldConstant, EliminateCommonSubexpr, DeadCodeElimination";
    let run = |text: &str, tvm_exact: bool| -> Result<(String, usize, usize), String> {
        let module = common::parse_typed("model.relay", text)?;
        let counts = Arc::new(PassCounts::new());
        let options = PassContextOptions {
            opt_level: 3,
            tvm_exact,
            ..Default::default()
        };
        let module = common::run_pipeline(module, pipeline, options, vec![counts.clone()])?;
        let infer = counts.get("InferType");
        Ok((
            print_module(&module, &PrintOptions::default()),
            infer.ran,
            infer.skipped,
        ))
    };
    let mut failures = Vec::new();
    eprintln!("\nInferType runs (ran/skipped), cache vs --tvm-exact:");
    for path in models {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let text = common::read(&path);
        // Large models are lowered and printed on a thread with room.
        let result = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || Ok::<_, String>((run(&text, false)?, run(&text, true)?)))
            .map_err(|e| e.to_string())
            .and_then(|handle| handle.join().map_err(|_| "panicked".to_string()))
            .and_then(|r| r);
        match result {
            Ok(((cached, ran, skipped), (exact, exact_ran, exact_skipped))) => {
                eprintln!(
                    "  {name:<36} cache {ran}/{skipped}  tvm-exact {exact_ran}/{exact_skipped}"
                );
                if cached != exact {
                    failures.push(format!(
                        "{name}: the outputs differ: {}",
                        common::first_difference(&cached, &exact)
                    ));
                }
                if ran >= exact_ran {
                    failures.push(format!(
                        "{name}: InferType ran {ran} times with the cache, {exact_ran} without"
                    ));
                }
            }
            Err(message) => failures.push(format!("{name}: {message}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
