//! `relay.runFunction` (the "Run with random inputs" lens) and
//! `relay.checkSemantics` ("Check pass semantics"): the commands that run
//! the document's program with the reference interpreter. Both run off the
//! edit path on the blocking pool with `$/progress`, stop at a time limit,
//! and stop when the editor cancels the request; their diagnostics are
//! published with the document's for the version they ran on.

use crate::lsp::backend::Backend;
use crate::lsp::errors::invalid;
use crate::lsp::ext::{
    CheckSemanticsArgs, RunFunctionArgs, CHECK_SEMANTICS, CHECK_TIME_LIMIT_SECONDS, RUN_FUNCTION,
    RUN_TIME_LIMIT_SECONDS,
};
use crate::lsp::features::check_semantics::{check_semantics as check, CheckRequest};
use crate::lsp::features::run_function::run_function as run;
use crate::lsp::project::project_for;
use crate::lsp::{from_proto, to_proto};
use relay_passes::diagnostic::Diagnostic;
use relay_passes::interp::Limits;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::Uri;

/// Sets the run's cancel flag when dropped: the server drops a request's
/// future when the editor cancels it (`$/cancelRequest`), and the run on
/// the blocking pool then stops at its next look at the flag.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Limits with a deadline `seconds` from now (a given limit must be
/// positive and finite) and a cancel flag, and the guard that sets it.
fn limits(seconds: Option<f64>, default: f64) -> Result<(Limits, CancelOnDrop)> {
    let seconds = seconds.unwrap_or(default);
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
        return Err(invalid(format!(
            "timeLimitSeconds must be a number of seconds in (0, 86400], not {seconds}"
        )));
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let limits = Limits {
        deadline: Some(Instant::now() + Duration::from_secs_f64(seconds)),
        cancel: Some(cancel.clone()),
        ..Limits::default()
    };
    Ok((limits, CancelOnDrop(cancel)))
}

fn first_argument<T: DeserializeOwned>(arguments: Vec<Value>, command: &str) -> Result<T> {
    let arg = arguments
        .into_iter()
        .next()
        .ok_or_else(|| invalid(format!("{command} takes one object argument")))?;
    serde_json::from_value(arg).map_err(|e| invalid(format!("{command}: {e}")))
}

/// Shows `diagnostics` as the document's diagnostics of `tool` for
/// `version` (replacing that tool's previous ones).
async fn publish_tool_diagnostics(
    backend: &Backend,
    uri: &Uri,
    analysis: &Arc<crate::lsp::analysis::Analysis>,
    tool: &'static str,
    diagnostics: Vec<Diagnostic>,
) {
    {
        let mut docs = backend.docs();
        match docs.get_mut(uri) {
            Some(state) if state.doc.version == analysis.version => {
                state
                    .tool_diagnostics
                    .insert(tool, (analysis.version, diagnostics));
            }
            _ => return,
        }
    }
    backend.publish(uri, analysis).await;
}

/// `relay.runFunction`: runs the function on seeded random inputs; the
/// answer summarises the result, the function's code lens shows it, a
/// run-time error is also a diagnostic at the failing expression.
pub async fn run_function(backend: &Backend, arguments: Vec<Value>) -> Result<Option<Value>> {
    let args: RunFunctionArgs = first_argument(arguments, RUN_FUNCTION)?;
    let uri = Uri::from_str(&args.uri).map_err(|e| invalid(format!("bad uri: {e}")))?;
    let (limits, _cancel_on_drop) = limits(args.time_limit_seconds, RUN_TIME_LIMIT_SECONDS)?;
    let analysis = backend.analysis(&uri).await?;
    let a = analysis.clone();
    let function = args.function.trim_start_matches('@').to_string();
    let name = function.clone();
    let seed = args.seed;
    let result = backend
        .with_progress(format!("Running @{function} on random inputs"), move || {
            run(&a, &name, seed, limits)
        })
        .await?;
    if !result.stopped {
        let mut summary = result.summary();
        if summary.chars().count() > 120 {
            summary = summary.chars().take(119).collect::<String>() + "…";
        }
        let summary = format!("{summary} · seed {seed}");
        backend
            .state
            .function_runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((uri.clone(), function), (analysis.version, summary));
        if backend.settings().code_lens_refresh {
            let _ = backend.client.code_lens_refresh().await;
        }
    }
    publish_tool_diagnostics(backend, &uri, &analysis, "run", result.diagnostics()).await;
    Ok(Some(to_proto::function_run(&analysis.lines, &result)))
}

/// The pipeline a check runs: the one asked for, the editor's default, or
/// `relay.toml`'s only pipeline.
fn pipeline_to_check(
    asked: Option<String>,
    default: Option<String>,
    project_pipelines: &[String],
) -> std::result::Result<String, String> {
    if let Some(p) = asked.filter(|p| !p.trim().is_empty()).or(default) {
        return Ok(p);
    }
    match project_pipelines {
        [only] => Ok(only.clone()),
        [] => Err(
            "name the pipeline to check (no default pipeline is set and no relay.toml \
                   names one)"
                .to_string(),
        ),
        several => Err(format!(
            "name the pipeline to check: relay.toml has {}",
            several.join(", ")
        )),
    }
}

/// Where a check writes its reproducer: `relay-check-semantics/` beside the
/// document (as `relay opt` writes it in its working directory), in the
/// system's temporary directory for an unsaved document.
fn reproducer_dir(path: Option<&Path>) -> PathBuf {
    path.and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir)
        .join("relay-check-semantics")
}

/// `relay.checkSemantics`: runs the pipeline under the semantic check; the
/// answer says whether the results agree or where they first differ, and a
/// difference is also a diagnostic at the function it points to.
pub async fn check_semantics(backend: &Backend, arguments: Vec<Value>) -> Result<Option<Value>> {
    let args: CheckSemanticsArgs = first_argument(arguments, CHECK_SEMANTICS)?;
    let uri = Uri::from_str(&args.uri).map_err(|e| invalid(format!("bad uri: {e}")))?;
    let inputs = args.inputs.unwrap_or(3);
    if !(1..=1000).contains(&inputs) {
        return Err(invalid(format!("inputs must be in 1..=1000, not {inputs}")));
    }
    let (limits, _cancel_on_drop) = limits(args.time_limit_seconds, CHECK_TIME_LIMIT_SECONDS)?;
    let analysis = backend.analysis(&uri).await?;
    let path = from_proto::uri_path(&uri);
    let commands = backend.settings().external_commands();
    let default = backend.settings().default_pipeline;
    let a = analysis.clone();
    let result = backend
        .with_progress("Checking pass semantics".to_string(), move || {
            let project = project_for(path.as_deref(), &commands)?;
            let names: Vec<String> = project
                .as_ref()
                .map(|p| p.pipelines.keys().cloned().collect())
                .unwrap_or_default();
            let pipeline = pipeline_to_check(args.pipeline, default, &names)?;
            let request = CheckRequest {
                pipeline,
                inputs,
                first_seed: args.seed,
                entry: args.entry.unwrap_or_else(|| "main".to_string()),
                reproducer_dir: Some(reproducer_dir(path.as_deref())),
                limits,
            };
            Ok::<_, String>(check(&a, project.as_ref(), &request))
        })
        .await?
        .map_err(invalid)?;
    backend.send_log(&result.log).await;
    backend.tell_blocked(&result.blocked).await;
    publish_tool_diagnostics(
        backend,
        &uri,
        &analysis,
        "check",
        result.diagnostics.clone(),
    )
    .await;
    Ok(Some(serde_json::to_value(&result).unwrap_or(Value::Null)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipeline_is_the_one_asked_for_then_the_default_then_relay_toml_s_only_one() {
        let one = ["cleanup".to_string()];
        let two = ["a".to_string(), "b".to_string()];
        let pick = |asked: Option<&str>, default: Option<&str>, names: &[String]| {
            pipeline_to_check(asked.map(String::from), default.map(String::from), names)
        };
        assert_eq!(
            pick(Some("FoldConstant"), Some("X"), &two),
            Ok("FoldConstant".into())
        );
        assert_eq!(pick(Some(" "), Some("X"), &two), Ok("X".into()));
        assert_eq!(pick(None, None, &one), Ok("cleanup".into()));
        assert_eq!(
            pick(None, None, &two),
            Err("name the pipeline to check: relay.toml has a, b".into())
        );
        assert!(pick(None, None, &[])
            .unwrap_err()
            .contains("no default pipeline"));
    }

    #[test]
    fn a_time_limit_must_be_a_positive_number_of_seconds() {
        assert!(limits(Some(0.0), 1.0).is_err());
        assert!(limits(Some(f64::NAN), 1.0).is_err());
        let (limits, guard) = limits(None, 5.0).unwrap();
        assert!(limits.deadline.unwrap() > Instant::now());
        let flag = limits.cancel.clone().unwrap();
        assert!(!flag.load(Ordering::Relaxed));
        drop(guard);
        assert!(
            flag.load(Ordering::Relaxed),
            "dropping the request cancels the run"
        );
    }
}
