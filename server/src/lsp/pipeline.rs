//! Running a pipeline on a document's analysis, as `relay opt` runs it
//! (the same library calls): the module is lowered, type-checked with
//! InferType, and the pipeline runs under a PassContext built from
//! `relay.toml`, its log and timing collected. Code actions, on-save
//! pipelines and `relay/passOutput` all run pipelines through here.

use super::analysis::Analysis;
use crate::project::{read_pipeline, Project};
use relay_passes::diagnostic::{Diagnostic, Layer};
use relay_passes::ir::IRModule;
use relay_passes::pass_manager::instruments::PassTiming;
use relay_passes::pass_manager::pipeline::{build_pipeline, Pipeline};
use relay_passes::pass_manager::registry;
use relay_passes::pass_manager::{
    run_pass, HookResult, LogSink, PassContext, PassContextOptions, PassInfo, PassInstrument,
};
use relay_passes::printer::{print_module, PrintOptions};
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One stage of `relay/passOutput`: the module printed after a pass.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    pub pass: String,
    pub text: String,
    #[serde(rename = "timeMs")]
    pub time_ms: f64,
    pub changed: bool,
    /// The module after the pass (for graphs of a stage), not sent.
    #[serde(skip)]
    pub module: Option<IRModule>,
}

/// What running a pipeline gave.
pub struct RunResult {
    /// The module that entered the pipeline (lowered and type-checked).
    pub input: Option<IRModule>,
    /// The result, when the pipeline succeeded.
    pub output: Option<IRModule>,
    /// Per top-level pass, when asked for.
    pub stages: Vec<Stage>,
    pub error: Option<String>,
    /// Errors and warnings of the passes.
    pub diagnostics: Vec<Diagnostic>,
    /// Text the passes logged (PrintIR), and the timing report.
    pub log: Vec<String>,
    /// External commands that were not run (the workspace is not trusted).
    pub blocked: Vec<String>,
}

/// The module as the document would show it: metadata inline, types as
/// comments when the file writes them.
pub fn print(module: &IRModule, show_types: bool) -> String {
    print_module(
        module,
        &PrintOptions {
            show_meta_data: true,
            show_types,
            reparseable: true,
        },
    )
}

/// Says whether a run's result is no longer wanted (the document changed
/// since the analysis it runs on): polled before every pass.
pub type Obsolete = Arc<dyn Fn() -> bool + Send + Sync>;

/// What a run stopped by [`Obsolete`] fails with.
pub const CANCELLED: &str = "cancelled: the document changed";

/// Stops a run before its next pass once the run is obsolete.
struct Cancellation(Obsolete);

impl PassInstrument for Cancellation {
    fn name(&self) -> &str {
        "Cancellation"
    }

    fn run_before_pass(&self, _module: &IRModule, _info: &PassInfo) -> HookResult {
        if (self.0)() {
            Err(CANCELLED.to_string())
        } else {
            Ok(())
        }
    }
}

/// The analysed module lowered and type-checked as TVM's parser does (and
/// `relay opt`, `relay run`): what pipelines and runs start from. Errors:
/// the message and InferType's diagnostics.
pub fn typed_input(analysis: &Analysis) -> Result<IRModule, (String, Vec<Diagnostic>)> {
    if analysis
        .diagnostics
        .iter()
        .any(|d| d.is_error() && matches!(d.layer, Layer::Syntax | Layer::Name))
    {
        return Err((
            "the file has errors; fix them before running passes".to_string(),
            Vec::new(),
        ));
    }
    let infer = registry::create_by_name("InferType").map_err(|e| (e, Vec::new()))?;
    let parse_ctx = PassContext::new(PassContextOptions::default()).map_err(|e| (e, Vec::new()))?;
    run_pass(&*infer, analysis.lowered.clone(), &parse_ctx).map_err(|e| (e.message, e.diagnostics))
}

/// Runs `pipeline_text` on the analysed module. With `stages`, each
/// top-level pass runs on its own (as a Sequential would run it: passes the
/// context disables are skipped) and the module is printed after each.
pub fn run_pipeline(
    analysis: &Analysis,
    project: Option<&Project>,
    pipeline_text: &str,
    with_stages: bool,
) -> RunResult {
    run_pipeline_with(
        analysis,
        project,
        pipeline_text,
        with_stages,
        Vec::new(),
        None,
    )
}

/// [`run_pipeline`], stopped before the next pass once `obsolete` says so
/// (the run then fails with [`CANCELLED`]).
pub fn run_pipeline_until(
    analysis: &Analysis,
    project: Option<&Project>,
    pipeline_text: &str,
    with_stages: bool,
    obsolete: Option<Obsolete>,
) -> RunResult {
    run_pipeline_with(
        analysis,
        project,
        pipeline_text,
        with_stages,
        Vec::new(),
        obsolete,
    )
}

/// [`run_pipeline`] with more instruments in the context (the semantic
/// check), stopped once `obsolete` says so when given.
pub fn run_pipeline_with(
    analysis: &Analysis,
    project: Option<&Project>,
    pipeline_text: &str,
    with_stages: bool,
    instruments: Vec<Arc<dyn PassInstrument>>,
    obsolete: Option<Obsolete>,
) -> RunResult {
    let mut result = RunResult {
        input: None,
        output: None,
        stages: Vec::new(),
        error: None,
        diagnostics: Vec::new(),
        log: Vec::new(),
        blocked: Vec::new(),
    };
    let pipeline = match read_pipeline(project, pipeline_text) {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(e.render(pipeline_text));
            return result;
        }
    };
    let pass = match build_pipeline(&pipeline) {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(e.render(pipeline_text));
            return result;
        }
    };
    let input = match typed_input(analysis) {
        Ok(m) => m,
        Err((message, diagnostics)) => {
            result.diagnostics = diagnostics;
            analysis.resolve_diagnostics(&mut result.diagnostics);
            result.error = Some(message);
            return result;
        }
    };
    result.input = Some(input.clone());

    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink_log = log.clone();
    let sink: LogSink = Arc::new(move |text: &str| {
        sink_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text.to_string())
    });
    let timing = Arc::new(PassTiming::new());
    let mut options = project.map(Project::context_options).unwrap_or_default();
    options.log = Some(sink);
    options.instruments = vec![timing.clone() as Arc<dyn PassInstrument>];
    if let Some(obsolete) = obsolete {
        options
            .instruments
            .push(Arc::new(Cancellation(obsolete)) as Arc<dyn PassInstrument>);
    }
    options.instruments.extend(instruments);
    let ctx = match PassContext::new(options) {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    let show_types = shows_types(analysis);
    let outcome = ctx.enter().and_then(|guard| {
        let run = if with_stages {
            run_stages(&pipeline, input, &ctx, show_types, &mut result.stages)
        } else {
            run_pass(&*pass, input, &ctx)
        };
        guard.exit().map(|()| run)
    });
    match outcome.and_then(|r| r) {
        Ok(module) => result.output = Some(module),
        Err(e) => {
            match &e.sources {
                // Spans into an external pass's output, not the document:
                // place them in words.
                Some(sources) => result
                    .diagnostics
                    .extend(e.diagnostics.iter().map(|d| d.detached(sources))),
                None => result.diagnostics.extend(e.diagnostics.iter().cloned()),
            }
            result.error = Some(e.message.clone());
        }
    }
    result.diagnostics.extend(ctx.take_diagnostics());
    analysis.resolve_diagnostics(&mut result.diagnostics);
    result.blocked = ctx.blocked_commands();
    let mut lines = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    let report = timing.render();
    if !report.trim().is_empty() {
        lines.push(report);
    }
    result.log = lines;
    result
}

fn run_stages(
    pipeline: &Pipeline,
    mut module: IRModule,
    ctx: &PassContext,
    show_types: bool,
    stages: &mut Vec<Stage>,
) -> Result<IRModule, relay_passes::pass_manager::PassError> {
    let several = pipeline.items.len() > 1;
    let mut previous = print(&module, show_types);
    for item in &pipeline.items {
        let one = Pipeline {
            items: vec![item.clone()],
        };
        let pass = build_pipeline(&one)
            .map_err(|e| relay_passes::pass_manager::PassError::new(&item.name, e.message))?;
        if several && !ctx.pass_enabled(pass.info()) {
            stages.push(Stage {
                pass: item.name.clone(),
                text: previous.clone(),
                time_ms: 0.0,
                changed: false,
                module: Some(module.clone()),
            });
            continue;
        }
        let start = Instant::now();
        module = run_pass(&*pass, module, ctx)?;
        let time_ms = start.elapsed().as_secs_f64() * 1000.0;
        let text = print(&module, show_types);
        stages.push(Stage {
            pass: item.name.clone(),
            changed: text != previous,
            text: text.clone(),
            time_ms,
            module: Some(module.clone()),
        });
        previous = text;
    }
    Ok(module)
}

/// Whether the file writes `/* ty=… */` comments (then printed text keeps them).
pub fn shows_types(analysis: &Analysis) -> bool {
    analysis.text().contains("/* ty=")
}

/// The `relay.listPasses` answer: the registered passes with the name,
/// kind, opt_level, required passes and description `relay passes --json`
/// gives them.
pub fn list_passes() -> serde_json::Value {
    let specs = registry::all();
    serde_json::Value::Array(
        specs
            .iter()
            .map(|spec| {
                serde_json::json!({
                    "name": spec.name,
                    "kind": spec.kind.name(),
                    "opt_level": spec.info.opt_level,
                    "required": spec.info.required,
                    "description": spec.description,
                })
            })
            .collect(),
    )
}
