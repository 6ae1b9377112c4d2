//! Document sync: `textDocument/didOpen`, `didChange`, `didSave` (which
//! runs the on-save pipelines of `relay.toml`) and `didClose`; and
//! `workspace/didChangeWatchedFiles` for `relay.toml` (its reading and
//! declared operators change what every open document means).

use crate::lsp::backend::Backend;
use crate::lsp::documents::{retire, DocState};
use crate::lsp::features::diagnostics::{on_save_until as run_on_save, OnSaveReport};
use crate::lsp::from_proto::uri_path;
use crate::lsp::pipeline::Obsolete;
use crate::lsp::project::{forget_project, project_for};
use relay_passes::diagnostic::{Code, Diagnostic};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, Uri,
};

/// The file name whose changes the server watches.
pub const PROJECT_FILE: &str = "relay.toml";

pub async fn did_open(backend: &Backend, params: DidOpenTextDocumentParams) {
    let uri = params.text_document.uri;
    let version = params.text_document.version;
    let reopened = backend.docs().insert(
        uri.clone(),
        DocState::open(&params.text_document.text, version),
    );
    if let Some(reopened) = reopened {
        retire(reopened.cell);
    }
    backend.schedule(uri, Duration::ZERO);
}

pub async fn did_change(backend: &Backend, params: DidChangeTextDocumentParams) {
    let uri = params.text_document.uri;
    let encoding = backend.encoding();
    {
        let mut docs = backend.docs();
        let Some(state) = docs.get_mut(&uri) else {
            return;
        };
        state.change(
            &params.content_changes,
            params.text_document.version,
            encoding,
        );
    }
    backend.schedule(uri, backend.settings().debounce);
}

/// The on-save pipelines run in a task of their own: the notification
/// returns at once, so edits that follow are never queued behind them, and
/// a newer edit stops them (their report would describe an old version).
pub async fn did_save(backend: &Backend, params: DidSaveTextDocumentParams) {
    let uri = params.text_document.uri;
    let backend = backend.clone_handle();
    tokio::spawn(async move {
        if let Ok(analysis) = backend.analysis(&uri).await {
            backend.publish(&uri, &analysis).await;
        }
        on_save(&backend, &uri).await;
    });
}

pub async fn did_close(backend: &Backend, params: DidCloseTextDocumentParams) {
    let uri = params.text_document.uri;
    let closed = backend.docs().remove(&uri);
    if let Some(closed) = closed {
        retire(closed.cell);
    }
    backend
        .client
        .publish_diagnostics(uri, Vec::new(), None)
        .await;
}

/// A `relay.toml` was created, changed or deleted: it is read again and
/// every open document analysed again (diagnostics, hover and completion
/// follow its `lenient` and `[ops]` without a restart).
pub async fn did_change_watched_files(backend: &Backend, params: DidChangeWatchedFilesParams) {
    let mut projects_changed = false;
    for change in &params.changes {
        let Some(path) = uri_path(&change.uri) else {
            continue;
        };
        if path.file_name().is_some_and(|name| name == PROJECT_FILE) {
            forget_project(&path);
            projects_changed = true;
        }
    }
    if !projects_changed {
        return;
    }
    let open: Vec<Uri> = {
        let mut docs = backend.docs();
        docs.iter_mut()
            .map(|(uri, state)| {
                state.reanalyse();
                uri.clone()
            })
            .collect()
    };
    for uri in open {
        backend.schedule(uri, Duration::ZERO);
    }
}

/// Runs the `on_save` pipelines of `relay.toml` and publishes what they
/// report with the file's diagnostics.
async fn on_save(backend: &Backend, uri: &Uri) {
    let Ok(analysis) = backend.analysis(uri).await else {
        return;
    };
    let Some(latest) = backend.docs().get(uri).map(|s| s.latest.clone()) else {
        return;
    };
    let version = analysis.version;
    let obsolete: Obsolete = Arc::new(move || latest.load(Ordering::Relaxed) != version);
    let path = uri_path(uri);
    let a = analysis.clone();
    let commands = backend.settings().external_commands();
    let job = backend
        .with_progress("Running the on-save pipelines".to_string(), move || {
            let project = match project_for(path.as_deref(), &commands) {
                Ok(Some(p)) => p,
                Ok(None) => return None,
                Err(e) => {
                    return Some(OnSaveReport::failed(Diagnostic::error(
                        Code::ProjectConfig,
                        format!("relay.toml: {e}"),
                    )))
                }
            };
            if project.on_save.is_empty() {
                return None;
            }
            Some(run_on_save(&a, &project, Some(obsolete)))
        })
        .await;
    let report = match job {
        Ok(Some(found)) => found,
        Ok(None) => OnSaveReport::default(),
        Err(e) => OnSaveReport::failed(Diagnostic::error(
            Code::PassFailed,
            format!("on-save pipelines: {}", e.message),
        )),
    };
    backend.send_log(&report.log).await;
    backend.tell_blocked(&report.blocked).await;
    {
        let mut docs = backend.docs();
        match docs.get_mut(uri) {
            Some(state) if state.doc.version == analysis.version => {
                state.save_diagnostics = Some((analysis.version, report.diagnostics));
            }
            _ => return,
        }
    }
    backend.publish(uri, &analysis).await;
}
