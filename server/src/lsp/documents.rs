//! The open documents: each one's text (a rope edits are applied to), its
//! version, and the cell holding the analysis of that version. An edit
//! replaces the cell, so work on an older version can never be published
//! as the current one; the replaced analysis is dropped off the main loop.

use super::analysis::{guarded, Analysis, Incremental};
use super::text::{Document, Encoding};
use relay_passes::diagnostic::Diagnostic;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use tokio::sync::OnceCell;
use tower_lsp_server::ls_types::TextDocumentContentChangeEvent;

/// One open document.
pub struct DocState {
    pub doc: Document,
    /// The latest version, shared with running analyses so they can stop.
    pub latest: Arc<AtomicI32>,
    /// The analysis of `doc.version`.
    pub cell: Arc<OnceCell<Arc<Analysis>>>,
    /// Bumped by every edit: a debounced analysis checks it did not change.
    pub generation: u64,
    /// Diagnostics of the on-save pipelines, for the version they ran on.
    pub save_diagnostics: Option<(i32, Vec<Diagnostic>)>,
    /// Diagnostics of the last run of a function and the last semantic
    /// check, by what made them (`"run"`, `"check"`), for the version they
    /// ran on.
    pub tool_diagnostics: std::collections::BTreeMap<&'static str, (i32, Vec<Diagnostic>)>,
    /// The parse and type inference results kept between the document's
    /// analyses.
    pub kept: Arc<Incremental>,
}

impl DocState {
    pub fn open(text: &str, version: i32) -> DocState {
        DocState {
            doc: Document::new(text, version),
            latest: Arc::new(AtomicI32::new(version)),
            cell: Arc::new(OnceCell::new()),
            generation: 0,
            save_diagnostics: None,
            tool_diagnostics: Default::default(),
            kept: Arc::default(),
        }
    }

    /// Applies one `didChange` (its changes in order) and makes `version`
    /// current: running analyses of older versions see they are obsolete,
    /// and the analysis of the previous version is retired.
    pub fn change(
        &mut self,
        changes: &[TextDocumentContentChangeEvent],
        version: i32,
        encoding: Encoding,
    ) {
        let applied = guarded(|| {
            for change in changes {
                self.doc.apply_change(change, encoding);
            }
        });
        if let Err(message) = applied {
            eprintln!("relay lsp: applying an edit panicked: {message}");
        }
        self.doc.version = version;
        self.latest.store(self.doc.version, Ordering::Relaxed);
        let previous = std::mem::replace(&mut self.cell, Arc::new(OnceCell::new()));
        retire(previous);
        self.generation += 1;
    }

    /// Makes the analysis of the current version be computed again (the
    /// project's `relay.toml` changed, not the text).
    pub fn reanalyse(&mut self) {
        let previous = std::mem::replace(&mut self.cell, Arc::new(OnceCell::new()));
        retire(previous);
        self.generation += 1;
    }

    /// The on-save diagnostics, then those of runs and checks, that belong
    /// to `version`.
    pub fn save_diagnostics_of(&self, version: i32) -> Vec<Diagnostic> {
        self.save_diagnostics
            .iter()
            .chain(self.tool_diagnostics.values())
            .filter(|(v, _)| *v == version)
            .flat_map(|(_, d)| d.iter().cloned())
            .collect()
    }
}

/// Drops an analysis that no longer describes the document on the analysis
/// thread: freeing the trees and modules of a large file takes as long as a
/// good part of analysing it, and would otherwise hold up the edit that
/// replaced it.
pub fn retire(previous: Arc<OnceCell<Arc<Analysis>>>) {
    if previous.get().is_none() {
        return;
    }
    // On the thread that built it, so its memory is reused (see `worker.rs`).
    super::worker::detach(move || drop(previous));
}
