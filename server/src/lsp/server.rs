//! The language server: document sync, scheduling of analyses, and the
//! LSP handlers, each a thin shell over [`features`] and [`actions`].
//!
//! Concurrency: edits are applied to the document's rope at once, in order,
//! on the main loop. Analysis runs on the blocking pool on an immutable
//! snapshot (text + version). There is at most one analysis per version
//! (a `OnceCell` shared by the debounced publisher and by requests, which
//! do not wait for the debounce); a newer edit makes older work obsolete:
//! it stops between stages and its results are never published. Every
//! handler's work runs under `catch_unwind`; a panic is logged and answered
//! with an error.

use super::actions::{
    self, ApplyPipelineArgs, PassOutput, PassOutputParams, APPLY_PIPELINE, LIST_PASSES,
};
use super::analysis::{analyze_incrementally, guarded, Analysis};
use super::applicable;
use super::features;
use super::text::{Document, Encoding};
use crate::project::{ExternalCommands, Project};
use relay_passes::diagnostic::{Code, Diagnostic, Layer};
use relay_passes::infer::IncrementalChecker;
use relay_passes::pass_manager::registry;
use relay_syntax::{TextRange, TextSize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::OnceCell;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

/// The default delay between an edit and its analysis.
pub const DEFAULT_DEBOUNCE_MS: u64 = 150;
/// How long a pipeline may run before the editor is shown progress.
const PROGRESS_AFTER: Duration = Duration::from_millis(300);

/// Settings from `initializationOptions`.
#[derive(Debug, Clone)]
struct Settings {
    debounce: Duration,
    work_done_progress: bool,
    /// The client implements `relay.applyPass` itself (a pass picker), so
    /// the full pass list can be one "Apply pass…" code action.
    client_picks_pass: bool,
    /// Whether the editor says the workspace is trusted
    /// (`initializationOptions.trusted`, later `workspace/
    /// didChangeConfiguration` with `settings.trusted`). Until it is, the
    /// commands of relay.toml's external passes do not run: opening and
    /// saving a file of a cloned folder must not execute what its
    /// relay.toml says.
    trusted: bool,
}

impl Settings {
    fn external_commands(&self) -> ExternalCommands {
        if self.trusted {
            ExternalCommands::Allowed
        } else {
            ExternalCommands::Blocked("the workspace is not trusted".to_string())
        }
    }
}

/// The `trusted` flag of initialization options or configuration settings
/// (`{"trusted": true}` or `{"relay": {"trusted": true}}`).
fn trusted_flag(settings: &Value) -> Option<bool> {
    settings
        .get("trusted")
        .or_else(|| settings.get("relay").and_then(|r| r.get("trusted")))
        .and_then(Value::as_bool)
}

struct DocState {
    doc: Document,
    /// The latest version, shared with running analyses so they can stop.
    latest: Arc<AtomicI32>,
    /// The analysis of `doc.version`.
    cell: Arc<OnceCell<Arc<Analysis>>>,
    /// Bumped by every edit: a debounced analysis checks it did not change.
    generation: u64,
    /// Diagnostics of the on-save pipelines, for the version they ran on.
    save_diagnostics: Option<(i32, Vec<Diagnostic>)>,
    /// Type inference results kept between the document's analyses.
    checker: Arc<Mutex<IncrementalChecker>>,
}

/// The shared state of the server.
pub struct State {
    docs: Mutex<HashMap<Uri, DocState>>,
    encoding: RwLock<Encoding>,
    settings: RwLock<Settings>,
    shut_down: AtomicBool,
    progress_tokens: AtomicU64,
    /// External commands the user was already told were not run.
    told_blocked: Mutex<HashSet<String>>,
}

/// The server, as tower-lsp-server drives it.
pub struct Backend {
    client: Client,
    state: Arc<State>,
}

fn internal(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: message.into().into(),
        data: None,
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

fn content_modified() -> Error {
    Error {
        code: ErrorCode::ServerError(-32801),
        message: "the document changed while the request was running".into(),
        data: None,
    }
}

fn uri_path(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

/// `[format] width` of the `relay.toml` above `path`, or the default.
fn format_width(path: Option<&std::path::Path>) -> std::result::Result<usize, String> {
    let default = relay_syntax::format::DEFAULT_WIDTH;
    let Some(file) = path.and_then(Project::find) else {
        return Ok(default);
    };
    let project = Project::load(&file)?;
    Ok(project.format_width.unwrap_or(default))
}

fn request_failed(message: String) -> Error {
    Error {
        code: ErrorCode::ServerError(-32803),
        message: message.into(),
        data: None,
    }
}

fn doc_name(uri: &Uri) -> String {
    uri_path(uri).map_or_else(|| uri.as_str().to_string(), |p| p.display().to_string())
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend {
            client,
            state: Arc::new(State {
                docs: Mutex::new(HashMap::new()),
                encoding: RwLock::new(Encoding::Utf16),
                settings: RwLock::new(Settings {
                    debounce: Duration::from_millis(DEFAULT_DEBOUNCE_MS),
                    work_done_progress: false,
                    client_picks_pass: false,
                    trusted: false,
                }),
                shut_down: AtomicBool::new(false),
                progress_tokens: AtomicU64::new(1),
                told_blocked: Mutex::new(HashSet::new()),
            }),
        }
    }

    fn encoding(&self) -> Encoding {
        *self
            .state
            .encoding
            .read()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn settings(&self) -> Settings {
        self.state
            .settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn docs(&self) -> std::sync::MutexGuard<'_, HashMap<Uri, DocState>> {
        self.state.docs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The analysis of the document's current version, computed now if no
    /// one has yet.
    async fn analysis(&self, uri: &Uri) -> Result<Arc<Analysis>> {
        for _ in 0..8 {
            let (cell, version, latest) = {
                let docs = self.docs();
                let state = docs
                    .get(uri)
                    .ok_or_else(|| invalid(format!("{} is not open", uri.as_str())))?;
                (state.cell.clone(), state.doc.version, state.latest.clone())
            };
            let result = cell
                .get_or_try_init(|| self.compute(uri, version, latest))
                .await;
            match result {
                Ok(analysis) => return Ok(analysis.clone()),
                Err(None) => continue, // superseded: analyse the newer version
                Err(Some(error)) => return Err(error),
            }
        }
        Err(content_modified())
    }

    /// Runs the analysis of `version` on the blocking pool. `Err(None)`:
    /// the version was superseded.
    async fn compute(
        &self,
        uri: &Uri,
        version: i32,
        latest: Arc<AtomicI32>,
    ) -> std::result::Result<Arc<Analysis>, Option<Error>> {
        let (text, checker) = {
            let docs = self.docs();
            let state = docs.get(uri).ok_or(None)?;
            if state.doc.version != version {
                return Err(None);
            }
            (state.doc.text(), state.checker.clone())
        };
        let name = doc_name(uri);
        let encoding = self.encoding();
        let job = tokio::task::spawn_blocking(move || {
            guarded(|| {
                analyze_incrementally(
                    &name,
                    text,
                    version,
                    encoding,
                    &|| latest.load(Ordering::Relaxed) != version,
                    &checker,
                )
            })
        });
        match job.await {
            Ok(Ok(Some(analysis))) => Ok(Arc::new(analysis)),
            Ok(Ok(None)) => Err(None),
            Ok(Err(message)) => {
                self.log_error(format!("the analysis panicked: {message}"))
                    .await;
                Err(Some(internal(format!("the analysis panicked: {message}"))))
            }
            Err(join) => Err(Some(internal(format!("the analysis failed: {join}")))),
        }
    }

    async fn log_error(&self, message: String) {
        eprintln!("relay lsp: {message}");
        self.client.log_message(MessageType::ERROR, message).await;
    }

    /// Runs `f` on the current analysis on the blocking pool, catching panics.
    async fn with_analysis<T, F>(&self, uri: &Uri, what: &str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Analysis) -> T + Send + 'static,
    {
        self.with_shared_analysis(uri, what, move |a: &Arc<Analysis>| f(a))
            .await
    }

    /// [`Backend::with_analysis`] for work that keeps the analysis beyond
    /// the request (a check finished in the background).
    async fn with_shared_analysis<T, F>(&self, uri: &Uri, what: &str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Arc<Analysis>) -> T + Send + 'static,
    {
        let analysis = self.analysis(uri).await?;
        let job = tokio::task::spawn_blocking(move || guarded(|| f(&analysis)));
        match job.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(message)) => {
                let message = format!("{what} panicked: {message}");
                self.log_error(message.clone()).await;
                Err(internal(message))
            }
            Err(join) => Err(internal(format!("{what} failed: {join}"))),
        }
    }

    /// Publishes the diagnostics of an analysis, unless the document has
    /// moved on to another version.
    async fn publish(&self, uri: &Uri, analysis: &Arc<Analysis>) {
        let save = {
            let docs = self.docs();
            match docs.get(uri) {
                Some(state) if state.doc.version == analysis.version => state
                    .save_diagnostics
                    .as_ref()
                    .filter(|(v, _)| *v == analysis.version)
                    .map(|(_, d)| d.clone())
                    .unwrap_or_default(),
                _ => return,
            }
        };
        let uri2 = uri.clone();
        let analysis2 = analysis.clone();
        let converted = tokio::task::spawn_blocking(move || {
            guarded(|| {
                analysis2
                    .diagnostics
                    .iter()
                    .chain(save.iter())
                    .map(|d| features::to_lsp_diagnostic(&analysis2, &uri2, d))
                    .collect::<Vec<_>>()
            })
        })
        .await;
        let Ok(Ok(diagnostics)) = converted else {
            if !self.state.shut_down.load(Ordering::Relaxed) {
                self.log_error("converting diagnostics failed".to_string())
                    .await;
            }
            return;
        };
        // Checked again: never publish for a stale version.
        let current = self.docs().get(uri).map(|s| s.doc.version);
        if current == Some(analysis.version) {
            self.client
                .publish_diagnostics(uri.clone(), diagnostics, Some(analysis.version))
                .await;
        }
    }

    /// Analyses the current version after the debounce delay (unless
    /// another edit came in meanwhile) and publishes its diagnostics.
    fn schedule(&self, uri: Uri, delay: Duration) {
        let generation = match self.docs().get(&uri) {
            Some(state) => state.generation,
            None => return,
        };
        let backend = self.clone_handle();
        tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if backend.docs().get(&uri).map(|s| s.generation) != Some(generation) {
                return;
            }
            if let Ok(analysis) = backend.analysis(&uri).await {
                backend.publish(&uri, &analysis).await;
                // Hover and inlay hints look nodes up by range: build that
                // index now, while the user reads the diagnostics, rather
                // than on the first request (a quarter of a second on 10 MB).
                let warm = analysis.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    let _ = guarded(|| warm.index().len());
                })
                .await;
            }
        });
    }

    fn clone_handle(&self) -> Backend {
        Backend {
            client: self.client.clone(),
            state: self.state.clone(),
        }
    }

    fn offset(analysis: &Analysis, position: Position) -> TextSize {
        TextSize::from(analysis.lines.offset(position))
    }

    /// Runs blocking work, showing `$/progress` if it takes more than a moment.
    async fn with_progress<T: Send + 'static>(
        &self,
        title: String,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let mut handle = tokio::task::spawn_blocking(move || guarded(job));
        let first = tokio::time::timeout(PROGRESS_AFTER, &mut handle).await;
        let joined = match first {
            Ok(joined) => joined,
            Err(_) => {
                let progress = if self.settings().work_done_progress {
                    let n = self.state.progress_tokens.fetch_add(1, Ordering::Relaxed);
                    let token = NumberOrString::String(format!("relay-{n}"));
                    match self.client.create_work_done_progress(token.clone()).await {
                        Ok(()) => Some(self.client.progress(token, title.clone()).begin().await),
                        Err(_) => None,
                    }
                } else {
                    None
                };
                let joined = handle.await;
                if let Some(progress) = progress {
                    progress.finish().await;
                }
                joined
            }
        };
        match joined {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(message)) => {
                let message = format!("{title} panicked: {message}");
                self.log_error(message.clone()).await;
                Err(internal(message))
            }
            Err(join) => Err(internal(format!("{title} failed: {join}"))),
        }
    }

    /// Tells the user, once per command, that an external pass's command was
    /// not run because the workspace is not trusted.
    async fn tell_blocked(&self, commands: &[String]) {
        for command in commands {
            let first_time = self
                .state
                .told_blocked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(command.clone());
            if first_time {
                self.client
                    .show_message(
                        MessageType::WARNING,
                        format!(
                            "relay: the workspace is not trusted, so the external pass command \
                             `{command}` from relay.toml was not run (trust the workspace to run it)"
                        ),
                    )
                    .await;
            }
        }
    }

    async fn send_log(&self, lines: &[String]) {
        for line in lines {
            self.client.log_message(MessageType::LOG, line).await;
        }
    }

    fn replacement_edits(
        analysis: &Analysis,
        replacements: &[actions::Replacement],
    ) -> Vec<TextEdit> {
        replacements
            .iter()
            .map(|r| TextEdit {
                range: analysis.lines.range(r.range),
                new_text: r.text.clone(),
            })
            .collect()
    }

    /// `relay.applyPipeline`: runs the pipeline and applies ONE workspace
    /// edit replacing the definitions that changed.
    async fn apply_pipeline(&self, args: ApplyPipelineArgs) -> Result<Option<Value>> {
        let uri = Uri::from_str(&args.uri).map_err(|e| invalid(format!("bad uri: {e}")))?;
        let analysis = self.analysis(&uri).await?;
        let path = uri_path(&uri);
        let a = analysis.clone();
        let pipeline = args.pipeline.clone();
        let only = args.function.clone();
        let commands = self.settings().external_commands();
        let (edits, result) = self
            .with_progress(format!("Running {}", args.pipeline), move || {
                let project = actions::project_for(path.as_deref(), &commands);
                let project = match project {
                    Ok(p) => p,
                    Err(e) => return (Err(e), None),
                };
                let (edits, result) =
                    actions::apply_pipeline(&a, project.as_ref(), &pipeline, only.as_deref());
                (edits, Some(result))
            })
            .await?;
        if let Some(result) = &result {
            self.send_log(&result.log).await;
            self.tell_blocked(&result.blocked).await;
        }
        let edits = match edits {
            Ok(edits) => edits,
            Err(message) => {
                let mut full = message.clone();
                if let Some(result) = &result {
                    for d in result.diagnostics.iter().filter(|d| d.is_error()) {
                        full.push_str(&format!("\n{d}"));
                    }
                }
                self.client
                    .show_message(
                        MessageType::ERROR,
                        format!("relay: {}: {full}", args.pipeline),
                    )
                    .await;
                return Err(internal(full));
            }
        };
        if edits.is_empty() {
            self.client
                .show_message(
                    MessageType::INFO,
                    format!("relay: {} left the module unchanged", args.pipeline),
                )
                .await;
            return Ok(None);
        }
        if self.docs().get(&uri).map(|s| s.doc.version) != Some(analysis.version) {
            return Err(content_modified());
        }
        let text_edits = Self::replacement_edits(&analysis, &edits);
        let edit = WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), text_edits)])),
            ..Default::default()
        };
        let response = self.client.apply_edit(edit).await;
        match response {
            Ok(r) if !r.applied => Err(internal(format!(
                "the editor did not apply the edit{}",
                r.failure_reason
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ))),
            Ok(_) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `relay/passOutput`: the module after each pass of a pipeline.
    pub async fn pass_output(&self, params: PassOutputParams) -> Result<PassOutput> {
        let uri = Uri::from_str(&params.text_document.uri)
            .map_err(|e| invalid(format!("bad uri: {e}")))?;
        let analysis = self.analysis(&uri).await?;
        let path = uri_path(&uri);
        let pipeline = params.pipeline.clone();
        let commands = self.settings().external_commands();
        let (output, log, blocked) = self
            .with_progress(format!("Running {}", params.pipeline), move || {
                match actions::project_for(path.as_deref(), &commands) {
                    Ok(project) => {
                        let (output, result) =
                            actions::pass_output(&analysis, project.as_ref(), &pipeline);
                        (output, result.log, result.blocked)
                    }
                    Err(e) => (
                        PassOutput {
                            stages: Vec::new(),
                            error: Some(e),
                        },
                        Vec::new(),
                        Vec::new(),
                    ),
                }
            })
            .await?;
        self.send_log(&log).await;
        self.tell_blocked(&blocked).await;
        Ok(output)
    }

    /// Runs the `on_save` pipelines of `relay.toml` and publishes what they
    /// report with the file's diagnostics.
    async fn on_save(&self, uri: &Uri) {
        let Ok(analysis) = self.analysis(uri).await else {
            return;
        };
        let path = uri_path(uri);
        let a = analysis.clone();
        let commands = self.settings().external_commands();
        let job = self
            .with_progress("Running the on-save pipelines".to_string(), move || {
                let project = match actions::project_for(path.as_deref(), &commands) {
                    Ok(Some(p)) => p,
                    Ok(None) => return None,
                    Err(e) => {
                        return Some((
                            vec![Diagnostic::error(
                                Code::ProjectConfig,
                                format!("relay.toml: {e}"),
                            )],
                            Vec::new(),
                            Vec::new(),
                        ))
                    }
                };
                if project.on_save.is_empty() {
                    return None;
                }
                Some(run_on_save(&a, &project))
            })
            .await;
        let (diagnostics, log, blocked) = match job {
            Ok(Some(found)) => found,
            Ok(None) => (Vec::new(), Vec::new(), Vec::new()),
            Err(e) => (
                vec![Diagnostic::error(
                    Code::PassFailed,
                    format!("on-save pipelines: {}", e.message),
                )],
                Vec::new(),
                Vec::new(),
            ),
        };
        self.send_log(&log).await;
        self.tell_blocked(&blocked).await;
        {
            let mut docs = self.docs();
            match docs.get_mut(uri) {
                Some(state) if state.doc.version == analysis.version => {
                    state.save_diagnostics = Some((analysis.version, diagnostics));
                }
                _ => return,
            }
        }
        self.publish(uri, &analysis).await;
    }
}

/// The diagnostics, log lines and blocked external commands of the
/// project's on-save pipelines.
type OnSaveReport = (Vec<Diagnostic>, Vec<String>, Vec<String>);

fn run_on_save(analysis: &Analysis, project: &Project) -> OnSaveReport {
    let mut diagnostics = Vec::new();
    let mut log = Vec::new();
    let mut blocked = Vec::new();
    for name in &project.on_save {
        let text = project.pipelines.get(name).cloned().unwrap_or_default();
        let result = actions::run_pipeline(analysis, Some(project), name, false);
        log.push(format!("on-save pipeline `{name}` ({text}):"));
        log.extend(result.log);
        for command in result.blocked {
            if !blocked.contains(&command) {
                blocked.push(command);
            }
        }
        for mut d in result.diagnostics {
            d.message = format!("{} [on-save pipeline `{name}`]", d.message);
            diagnostics.push(d);
        }
        if let Some(error) = result.error {
            let first_line = error.lines().next().unwrap_or("").to_string();
            let mut d = Diagnostic::error(
                Code::PassFailed,
                format!("on-save pipeline `{name}` failed: {first_line}"),
            );
            // At the first definition, if any: something the editor can show.
            if let Some(def) = analysis
                .root()
                .children()
                .find(|n| n.kind() == relay_syntax::SyntaxKind::DEF)
            {
                let name_token = def
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                    .find(|t| t.kind() == relay_syntax::SyntaxKind::GLOBAL);
                let range = name_token.map_or(def.text_range(), |t| t.text_range());
                d = d.with_span(relay_passes::source::Span::new(
                    relay_passes::source::FileId(0),
                    range,
                ));
            }
            if error.contains('\n') {
                d = d.with_note(error);
            }
            diagnostics.push(d);
        }
    }
    (diagnostics, log, blocked)
}

/// Drops an analysis that no longer describes the document on the blocking
/// pool: freeing the trees and modules of a large file takes as long as a
/// good part of analysing it, and would otherwise hold up the edit that
/// replaced it.
fn retire(previous: Arc<OnceCell<Arc<Analysis>>>) {
    if previous.get().is_none() {
        return;
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn_blocking(move || drop(previous));
    }
}

fn text_range_of(analysis: &Analysis, range: Range) -> TextRange {
    analysis.lines.text_range(range)
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let utf8 = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|encodings| encodings.contains(&PositionEncodingKind::UTF8));
        let encoding = if utf8 {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        *self
            .state
            .encoding
            .write()
            .unwrap_or_else(|e| e.into_inner()) = encoding;
        {
            let mut settings = self
                .state
                .settings
                .write()
                .unwrap_or_else(|e| e.into_inner());
            settings.work_done_progress = params
                .capabilities
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false);
            if let Some(ms) = params
                .initialization_options
                .as_ref()
                .and_then(|o| o.get("debounceMs"))
                .and_then(Value::as_u64)
            {
                settings.debounce = Duration::from_millis(ms);
            }
            settings.client_picks_pass = params
                .initialization_options
                .as_ref()
                .and_then(|o| o.get("clientCommands"))
                .and_then(Value::as_array)
                .is_some_and(|commands| {
                    commands
                        .iter()
                        .any(|c| c.as_str() == Some(applicable::PICK_PASS))
                });
            settings.trusted = params
                .initialization_options
                .as_ref()
                .and_then(trusted_flag)
                .unwrap_or(false);
        }
        let position_encoding = Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        });
        Ok(InitializeResult {
            offset_encoding: None,
            server_info: Some(ServerInfo {
                name: "relay".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            capabilities: ServerCapabilities {
                position_encoding,
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                            include_text: Some(false),
                        })),
                        ..Default::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                document_highlight_provider: Some(OneOf::Left(true)),
                rename_provider: Some(OneOf::Right(RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: Default::default(),
                })),
                document_symbol_provider: Some(OneOf::Left(true)),
                folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
                semantic_tokens_provider: Some(
                    SemanticTokensServerCapabilities::SemanticTokensOptions(
                        SemanticTokensOptions {
                            legend: SemanticTokensLegend {
                                token_types: features::TOKEN_TYPES.to_vec(),
                                token_modifiers: features::TOKEN_MODIFIERS.to_vec(),
                            },
                            range: Some(true),
                            full: Some(SemanticTokensFullOptions::Bool(true)),
                            ..Default::default()
                        },
                    ),
                ),
                document_formatting_provider: Some(OneOf::Left(true)),
                inlay_hint_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec!["%".into(), "@".into(), "(".into(), ",".into()]),
                    ..Default::default()
                }),
                signature_help_provider: Some(SignatureHelpOptions {
                    trigger_characters: Some(vec!["(".into(), ",".into()]),
                    retrigger_characters: None,
                    work_done_progress_options: Default::default(),
                }),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::QUICKFIX,
                            CodeActionKind::REFACTOR_REWRITE,
                        ]),
                        ..Default::default()
                    },
                )),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![APPLY_PIPELINE.to_string(), LIST_PASSES.to_string()],
                    work_done_progress_options: Default::default(),
                }),
                ..Default::default()
            },
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.client
            .log_message(MessageType::INFO, "relay language server started")
            .await;
    }

    /// The editor's trust decision can change while the server runs (VS
    /// Code's "Trust" button, Neovim's `:trust`): it comes as
    /// `settings.trusted`.
    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        if let Some(trusted) = trusted_flag(&params.settings) {
            self.state
                .settings
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .trusted = trusted;
            self.client
                .log_message(
                    MessageType::INFO,
                    format!("relay: workspace trusted: {trusted}"),
                )
                .await;
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.shut_down.store(true, Ordering::Relaxed);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        {
            let mut docs = self.docs();
            let reopened = docs.insert(
                uri.clone(),
                DocState {
                    doc: Document::new(&params.text_document.text, version),
                    latest: Arc::new(AtomicI32::new(version)),
                    cell: Arc::new(OnceCell::new()),
                    generation: 0,
                    save_diagnostics: None,
                    checker: Arc::default(),
                },
            );
            if let Some(reopened) = reopened {
                retire(reopened.cell);
            }
        }
        self.schedule(uri, Duration::ZERO);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        {
            let mut docs = self.docs();
            let Some(state) = docs.get_mut(&uri) else {
                return;
            };
            let applied = guarded(|| {
                for change in &params.content_changes {
                    state.doc.apply_change(change, encoding);
                }
            });
            if let Err(message) = applied {
                eprintln!("relay lsp: applying an edit panicked: {message}");
            }
            state.doc.version = params.text_document.version;
            state.latest.store(state.doc.version, Ordering::Relaxed);
            let previous = std::mem::replace(&mut state.cell, Arc::new(OnceCell::new()));
            retire(previous);
            state.generation += 1;
        }
        self.schedule(uri, self.settings().debounce);
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        let uri = params.text_document.uri;
        if let Ok(analysis) = self.analysis(&uri).await {
            self.publish(&uri, &analysis).await;
        }
        self.on_save(&uri).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let closed = self.docs().remove(&uri);
        if let Some(closed) = closed {
            retire(closed.cell);
        }
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        self.with_analysis(&p.text_document.uri, "hover", move |a| {
            features::hover(a, Self::offset(a, p.position))
        })
        .await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        let uri = p.text_document.uri.clone();
        self.with_analysis(&p.text_document.uri, "definition", move |a| {
            features::definition(a, &uri, Self::offset(a, p.position))
                .map(GotoDefinitionResponse::Scalar)
        })
        .await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let p = params.text_document_position;
        let uri = p.text_document.uri.clone();
        let include = params.context.include_declaration;
        self.with_analysis(&p.text_document.uri, "references", move |a| {
            Some(features::references(
                a,
                &uri,
                Self::offset(a, p.position),
                include,
            ))
        })
        .await
    }

    async fn document_highlight(
        &self,
        params: DocumentHighlightParams,
    ) -> Result<Option<Vec<DocumentHighlight>>> {
        let p = params.text_document_position_params;
        self.with_analysis(&p.text_document.uri, "highlight", move |a| {
            Some(features::highlights(a, Self::offset(a, p.position)))
        })
        .await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let position = params.position;
        self.with_analysis(&params.text_document.uri, "prepareRename", move |a| {
            features::prepare_rename(a, Self::offset(a, position)).map(|(range, placeholder)| {
                PrepareRenameResponse::RangeWithPlaceholder { range, placeholder }
            })
        })
        .await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let p = params.text_document_position;
        let uri = p.text_document.uri.clone();
        let new_name = params.new_name;
        let result = self
            .with_analysis(&p.text_document.uri, "rename", move |a| {
                features::rename(a, Self::offset(a, p.position), &new_name)
            })
            .await?;
        match result {
            Ok(edits) => Ok(Some(WorkspaceEdit {
                changes: Some(HashMap::from([(uri, edits)])),
                ..Default::default()
            })),
            Err(message) => Err(invalid(message)),
        }
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        self.with_analysis(&params.text_document.uri, "documentSymbol", |a| {
            Some(DocumentSymbolResponse::Nested(features::document_symbols(
                a,
            )))
        })
        .await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.with_analysis(&params.text_document.uri, "foldingRange", |a| {
            Some(features::folding_ranges(a))
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        self.with_analysis(&params.text_document.uri, "semanticTokens", |a| {
            Some(SemanticTokensResult::Tokens(SemanticTokens {
                result_id: None,
                data: features::semantic_tokens(a, None),
            }))
        })
        .await
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let range = params.range;
        self.with_analysis(&params.text_document.uri, "semanticTokens", move |a| {
            let range = text_range_of(a, range);
            Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
                result_id: None,
                data: features::semantic_tokens(a, Some(range)),
            }))
        })
        .await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let range = params.range;
        self.with_analysis(&params.text_document.uri, "inlayHint", move |a| {
            Some(features::inlay_hints(a, text_range_of(a, range)))
        })
        .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        self.with_analysis(&p.text_document.uri, "completion", move |a| {
            Some(CompletionResponse::Array(features::completion(
                a,
                Self::offset(a, p.position),
            )))
        })
        .await
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let p = params.text_document_position_params;
        self.with_analysis(&p.text_document.uri, "signatureHelp", move |a| {
            features::signature_help(a, Self::offset(a, p.position))
        })
        .await
    }

    /// Formatting with the formatter of `relay fmt`, at the width of the
    /// project's `relay.toml` (`[format] width`, default 100; the client's
    /// tab size is not used: Relay is indented by two spaces, as TVM prints).
    /// A document with syntax errors is left alone (its diagnostics say
    /// why); a construct the formatter refuses is reported as an error.
    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        let path = uri_path(&params.text_document.uri);
        let width = match format_width(path.as_deref()) {
            Ok(width) => width,
            Err(message) => return Err(request_failed(message)),
        };
        let result = self
            .with_analysis(&params.text_document.uri, "formatting", move |a| {
                features::format_edits(a, width).map_err(|error| (error, a.lines.clone()))
            })
            .await?;
        match result {
            Ok(edits) => Ok(Some(edits)),
            Err((relay_syntax::format::FormatError::Syntax(_), _)) => Ok(None),
            Err((error, lines)) => {
                let message = error
                    .errors()
                    .iter()
                    .map(|e| {
                        let at = lines.range(e.range()).start;
                        format!("{}:{}: {}", at.line + 1, at.character + 1, e.message())
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                Err(request_failed(message))
            }
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri.clone();
        let range = params.range;
        let only = params.context.only.clone();
        let path = uri_path(&uri);
        let uri2 = uri.clone();
        let picker = self
            .state
            .settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .client_picks_pass;
        let commands = self.settings().external_commands();
        self.with_shared_analysis(&uri, "codeAction", move |a| {
            let wants = |kind: &CodeActionKind| only.as_ref().is_none_or_has(kind);
            let range = text_range_of(a, range);
            let mut out: Vec<CodeActionOrCommand> = Vec::new();
            if wants(&CodeActionKind::QUICKFIX) {
                for fix in actions::quick_fixes(a, range) {
                    let edits = Backend::replacement_edits(a, &fix.edits);
                    out.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: fix.title,
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(vec![features::to_lsp_diagnostic(
                            a,
                            &uri2,
                            &fix.diagnostic,
                        )]),
                        edit: Some(WorkspaceEdit {
                            changes: Some(HashMap::from([(uri2.clone(), edits)])),
                            ..Default::default()
                        }),
                        is_preferred: Some(true),
                        ..Default::default()
                    }));
                }
            }
            let blocked = a
                .diagnostics
                .iter()
                .any(|d| d.is_error() && matches!(d.layer, Layer::Syntax | Layer::Name));
            if blocked || !wants(&CodeActionKind::REFACTOR_REWRITE) {
                return Some(out);
            }
            let command = |title: &str, args: ApplyPipelineArgs| {
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.to_string(),
                    kind: Some(CodeActionKind::REFACTOR_REWRITE),
                    command: Some(Command {
                        title: title.to_string(),
                        command: APPLY_PIPELINE.to_string(),
                        arguments: Some(vec![serde_json::to_value(args).unwrap_or_default()]),
                    }),
                    ..Default::default()
                })
            };
            let function = actions::enclosing_def(a, range);
            let uri_text = uri2.as_str().to_string();
            let project = actions::project_for(path.as_deref(), &commands)
                .ok()
                .flatten();
            if let Some(project) = &project {
                for name in project.pipelines.keys() {
                    out.push(command(
                        &format!("Run the relay.toml pipeline `{name}`"),
                        ApplyPipelineArgs {
                            uri: uri_text.clone(),
                            pipeline: name.clone(),
                            function: None,
                        },
                    ));
                }
            }
            // Only the passes that change this function (or the module);
            // the others are behind "Apply pass…".
            let applicable = applicable::applicable_passes(
                a,
                function.as_deref(),
                project.as_ref(),
                applicable::CHECK_BUDGET,
            );
            let several_functions = a.lowered.function_count() > 1;
            for name in &applicable.changing {
                out.push(command(
                    &format!("Apply {name}"),
                    ApplyPipelineArgs {
                        uri: uri_text.clone(),
                        pipeline: name.clone(),
                        function: None,
                    },
                ));
                let is_function_pass = registry::lookup(name)
                    .is_some_and(|spec| spec.kind == registry::PassKind::Function);
                if let (true, true, Some(f)) = (is_function_pass, several_functions, &function) {
                    out.push(command(
                        &format!("Apply {name} to @{f} only"),
                        ApplyPipelineArgs {
                            uri: uri_text.clone(),
                            pipeline: name.clone(),
                            function: Some(f.clone()),
                        },
                    ));
                }
            }
            if picker {
                let title = "Apply pass…";
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.to_string(),
                    kind: Some(CodeActionKind::REFACTOR_REWRITE),
                    command: Some(Command {
                        title: title.to_string(),
                        command: applicable::PICK_PASS.to_string(),
                        arguments: Some(vec![serde_json::json!({
                            "uri": uri_text,
                            "applicable": applicable.changing,
                        })]),
                    }),
                    ..Default::default()
                }));
            }
            Some(out)
        })
        .await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        match params.command.as_str() {
            APPLY_PIPELINE => {
                let arg = params.arguments.into_iter().next().ok_or_else(|| {
                    invalid("relay.applyPipeline takes {uri, pipeline, function?}")
                })?;
                let args: ApplyPipelineArgs = serde_json::from_value(arg)
                    .map_err(|e| invalid(format!("relay.applyPipeline: {e}")))?;
                self.apply_pipeline(args).await
            }
            LIST_PASSES => Ok(Some(actions::list_passes())),
            // For tests of panic isolation only: needs RELAY_LSP_DEBUG_PANIC=1.
            "relay.debug.panic" if std::env::var_os("RELAY_LSP_DEBUG_PANIC").is_some() => {
                let uri = params
                    .arguments
                    .first()
                    .and_then(|a| a.get("uri"))
                    .and_then(Value::as_str)
                    .and_then(|u| Uri::from_str(u).ok())
                    .ok_or_else(|| invalid("relay.debug.panic takes {uri}"))?;
                self.with_analysis(&uri, "relay.debug.panic", |_| -> Option<Value> {
                    panic!("a deliberate panic (RELAY_LSP_DEBUG_PANIC)")
                })
                .await
            }
            other => Err(invalid(format!("unknown command `{other}`"))),
        }
    }
}

trait OnlyKinds {
    fn is_none_or_has(&self, kind: &CodeActionKind) -> bool;
}

impl OnlyKinds for Option<&Vec<CodeActionKind>> {
    fn is_none_or_has(&self, kind: &CodeActionKind) -> bool {
        match self {
            None => true,
            Some(kinds) => kinds.iter().any(|k| {
                kind.as_str() == k.as_str()
                    || kind.as_str().starts_with(&format!("{}.", k.as_str()))
            }),
        }
    }
}
