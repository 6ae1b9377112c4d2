//! The server's state and the plumbing every handler shares: the open
//! documents, the negotiated encoding, the settings, and running work on
//! the blocking pool (with the current analysis, under `catch_unwind`,
//! with `$/progress` when it takes a while).
//!
//! Concurrency: edits are applied to the document's rope at once, in order,
//! on the main loop. Analysis runs on the analysis thread (`worker.rs`) on
//! an immutable snapshot (text + version); see `scheduler.rs`. Every
//! handler's work runs under `catch_unwind`; a panic is logged and answered
//! with an error.

use super::analysis::{guarded, Analysis};
use super::documents::DocState;
use super::errors::internal;
use super::settings::Settings;
use super::text::Encoding;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{MessageType, NumberOrString, Uri};
use tower_lsp_server::Client;

/// How long a pipeline may run before the editor is shown progress.
const PROGRESS_AFTER: Duration = Duration::from_millis(300);

/// The shared state of the server.
pub struct State {
    pub docs: Mutex<HashMap<Uri, DocState>>,
    pub encoding: RwLock<Encoding>,
    pub settings: RwLock<Settings>,
    pub shut_down: AtomicBool,
    progress_tokens: AtomicU64,
    /// External commands the user was already told were not run.
    told_blocked: Mutex<HashSet<String>>,
    /// What the last pipeline run on a function did, by document and
    /// function: `(pipeline, summary)`, shown by its code lens.
    pub pipeline_runs: Mutex<HashMap<(Uri, String), (String, String)>>,
    /// What the last run on random inputs of a function gave, by document
    /// and function: `(version, summary)`, shown by its code lens while the
    /// document is at that version.
    pub function_runs: Mutex<HashMap<(Uri, String), (i32, String)>>,
}

/// The server, as tower-lsp-server drives it (see `router.rs` for the
/// methods it answers).
pub struct Backend {
    pub(super) client: Client,
    pub(super) state: Arc<State>,
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend {
            client,
            state: Arc::new(State {
                docs: Mutex::new(HashMap::new()),
                encoding: RwLock::new(Encoding::Utf16),
                settings: RwLock::new(Settings::default()),
                shut_down: AtomicBool::new(false),
                progress_tokens: AtomicU64::new(1),
                told_blocked: Mutex::new(HashSet::new()),
                pipeline_runs: Mutex::new(HashMap::new()),
                function_runs: Mutex::new(HashMap::new()),
            }),
        }
    }

    pub(super) fn encoding(&self) -> Encoding {
        *self
            .state
            .encoding
            .read()
            .unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn settings(&self) -> Settings {
        self.state
            .settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(super) fn docs(&self) -> MutexGuard<'_, HashMap<Uri, DocState>> {
        self.state.docs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Another handle on the same server, for work that outlives a request.
    pub(super) fn clone_handle(&self) -> Backend {
        Backend {
            client: self.client.clone(),
            state: self.state.clone(),
        }
    }

    pub(super) async fn log_error(&self, message: String) {
        eprintln!("relay lsp: {message}");
        self.client.log_message(MessageType::ERROR, message).await;
    }

    /// Runs `f` on the current analysis on the blocking pool, catching panics.
    pub(super) async fn with_analysis<T, F>(&self, uri: &Uri, what: &str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Analysis) -> T + Send + 'static,
    {
        self.with_shared_analysis(uri, what, move |a: &Arc<Analysis>| f(a))
            .await
    }

    /// [`Backend::with_analysis`] for work that keeps the analysis beyond
    /// the request (a check finished in the background).
    pub(super) async fn with_shared_analysis<T, F>(&self, uri: &Uri, what: &str, f: F) -> Result<T>
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

    /// Runs blocking work, showing `$/progress` if it takes more than a moment.
    pub(super) async fn with_progress<T: Send + 'static>(
        &self,
        title: String,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let handle = tokio::task::spawn_blocking(move || guarded(job));
        let joined = self.progress_while(&title, handle).await;
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

    /// Awaits `work`; when it has not finished after [`PROGRESS_AFTER`]
    /// (and the client takes progress), the editor is shown `title` as
    /// `$/progress` until it has.
    pub(super) async fn progress_while<F: std::future::Future>(
        &self,
        title: &str,
        work: F,
    ) -> F::Output {
        let mut work = std::pin::pin!(work);
        if let Ok(done) = tokio::time::timeout(PROGRESS_AFTER, &mut work).await {
            return done;
        }
        let progress = if self.settings().work_done_progress {
            let n = self.state.progress_tokens.fetch_add(1, Ordering::Relaxed);
            let token = NumberOrString::String(format!("relay-{n}"));
            match self.client.create_work_done_progress(token.clone()).await {
                Ok(()) => Some(self.client.progress(token, title.to_string()).begin().await),
                Err(_) => None,
            }
        } else {
            None
        };
        let done = work.await;
        if let Some(progress) = progress {
            progress.finish().await;
        }
        done
    }

    /// Tells the user, once per command, that an external pass's command was
    /// not run because the workspace is not trusted.
    pub(super) async fn tell_blocked(&self, commands: &[String]) {
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

    /// Sends the log lines of a pipeline run to the editor's log.
    pub(super) async fn send_log(&self, lines: &[String]) {
        for line in lines {
            self.client.log_message(MessageType::LOG, line).await;
        }
    }
}
