//! When analyses run and when their diagnostics are published.
//!
//! There is at most one analysis per version: a `OnceCell` per version,
//! shared by the debounced publisher and by requests, which do not wait for
//! the debounce. A newer edit makes older work obsolete: it stops between
//! stages and its results are never published. After an edit, the analysis
//! waits for the debounce delay and is skipped if another edit came in.

use super::analysis::{analyze_incrementally_with, guarded, Analysis};
use super::backend::Backend;
use super::errors::{content_modified, internal, invalid};
use super::features::diagnostics::published;
use super::from_proto::doc_name;
use super::to_proto;
use super::worker;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::Uri;

impl Backend {
    /// The analysis of the document's current version, computed now if no
    /// one has yet.
    pub(super) async fn analysis(&self, uri: &Uri) -> Result<Arc<Analysis>> {
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

    /// Runs the analysis of `version` on the analysis thread. `Err(None)`:
    /// the version was superseded.
    async fn compute(
        &self,
        uri: &Uri,
        version: i32,
        latest: Arc<AtomicI32>,
    ) -> std::result::Result<Arc<Analysis>, Option<Error>> {
        // The rope is shared, not copied: the text is made one string on
        // the analysis thread, not under the lock on the main loop.
        let (document, kept) = {
            let docs = self.docs();
            let state = docs.get(uri).ok_or(None)?;
            if state.doc.version != version {
                return Err(None);
            }
            (state.doc.clone(), state.kept.clone())
        };
        let name = doc_name(uri);
        let encoding = self.encoding();
        let path = super::from_proto::uri_path(uri);
        let job = worker::run(move || {
            let (options, project) = super::project::read_options(path.as_deref());
            kept.for_project(project);
            guarded(|| {
                analyze_incrementally_with(
                    &name,
                    document.text(),
                    (version, encoding),
                    &|| latest.load(Ordering::Relaxed) != version,
                    &kept,
                    options,
                )
            })
        });
        // Opening a large file takes a while: the editor shows progress.
        let file_name = uri.as_str().rsplit('/').next().unwrap_or_default();
        let title = format!("Analysing {file_name}");
        match self.progress_while(&title, job).await {
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

    /// Publishes the diagnostics of an analysis, unless the document has
    /// moved on to another version.
    pub(super) async fn publish(&self, uri: &Uri, analysis: &Arc<Analysis>) {
        let save = {
            let docs = self.docs();
            match docs.get(uri) {
                Some(state) if state.doc.version == analysis.version => {
                    state.save_diagnostics_of(analysis.version)
                }
                _ => return,
            }
        };
        let uri2 = uri.clone();
        let analysis2 = analysis.clone();
        let converted = tokio::task::spawn_blocking(move || {
            guarded(|| {
                published(&analysis2, &save)
                    .map(|d| to_proto::diagnostic(&analysis2.lines, &uri2, d))
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
    pub(super) fn schedule(&self, uri: Uri, delay: Duration) {
        let (generation, latest) = match self.docs().get(&uri) {
            Some(state) => (state.generation, state.latest.clone()),
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
                // The names' lookup tables are built now, while the user
                // reads the diagnostics, rather than on the first request
                // (navigation, completion); on the thread that will drop
                // them. Not for a version already edited: the next analysis
                // would wait for it. (The span index needs no warming: it
                // walks one function, the one a request lands in.) This
                // task's reference goes with the job, so that it is dropped
                // there too: kept here, it would often be the last one
                // (the edit that retires the analysis comes as soon as the
                // diagnostics are out), and the analysis would be freed on
                // a runtime thread, away from the pages it came from.
                let warm = analysis;
                let _ = worker::run(move || {
                    if latest.load(Ordering::Relaxed) == warm.version {
                        let _ = guarded(|| warm.names.warm());
                    }
                })
                .await;
            }
        });
    }
}
