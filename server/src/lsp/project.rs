//! The `relay.toml` of a document: found upward from its path, as the CLI
//! finds it.

use crate::project::{ExternalCommands, Project};
use std::path::Path;

/// The project of a file: `relay.toml` found upward from it (its external
/// passes are registered, allowed to run their commands or not), or why it
/// could not be read.
pub fn project_for(
    path: Option<&Path>,
    commands: &ExternalCommands,
) -> Result<Option<Project>, String> {
    let Some(path) = path else { return Ok(None) };
    let Some(file) = Project::find(path) else {
        return Ok(None);
    };
    let project = Project::load(&file)?;
    project.register_passes(commands);
    Ok(Some(project))
}

/// `[format] width` of the `relay.toml` above `path`, or the default.
pub fn format_width(path: Option<&Path>) -> Result<usize, String> {
    let default = relay_syntax::format::DEFAULT_WIDTH;
    let Some(file) = path.and_then(Project::find) else {
        return Ok(default);
    };
    let project = Project::load(&file)?;
    Ok(project.format_width.unwrap_or(default))
}

/// How the editor reads the file at `path`: leniently, unless its
/// `relay.toml` says `lenient = false` (an unreadable project file is
/// reported elsewhere and does not change the reading); and the
/// [`project_generation`] after reading it.
pub fn read_options(path: Option<&Path>) -> (relay_passes::lower::LowerOptions, u64) {
    let Some(file) = path.and_then(Project::find) else {
        return (
            relay_passes::lower::LowerOptions::LENIENT,
            project_generation(),
        );
    };
    // Asked on every analysis (each keystroke): the file is read, parsed and
    // its operators declared again only when its modification time changes.
    let modified = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
    let mut cache = READ_OPTIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((seen, options)) = cache.get(&file) {
        if modified.is_some() && *seen == modified {
            return (*options, project_generation());
        }
    }
    let project = Project::load(&file).ok();
    // Its declared operators are known to every feature (a declaration
    // relay.toml rejects is reported when the project is loaded).
    if let Some(project) = &project {
        let _ = project.declare_ops();
    }
    let strict = project.is_some_and(|project| project.lenient == Some(false));
    let options = if strict {
        relay_passes::lower::LowerOptions::STRICT
    } else {
        relay_passes::lower::LowerOptions::LENIENT
    };
    cache.insert(file, (modified, options));
    // The operators it declares may have changed: what was inferred with
    // the earlier declarations is no base for the next analysis.
    let generation = PROJECT_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    (options, generation)
}

/// Counts the readings of a `relay.toml` by [`read_options`]: an analysis
/// keeps type results only while it is unchanged.
pub fn project_generation() -> u64 {
    PROJECT_GENERATION.load(std::sync::atomic::Ordering::Relaxed)
}

static PROJECT_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Forgets what was read from the `relay.toml` at `file` (the editor says
/// it changed): the next analysis reads it again, even if its modification
/// time looks the same (file systems with coarse times, a quick save).
pub fn forget_project(file: &Path) {
    READ_OPTIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(file);
}

/// `relay.toml` path → (its modification time when read, the reading it asks for).
type OptionsCache = std::collections::HashMap<
    std::path::PathBuf,
    (
        Option<std::time::SystemTime>,
        relay_passes::lower::LowerOptions,
    ),
>;

static READ_OPTIONS: std::sync::LazyLock<std::sync::Mutex<OptionsCache>> =
    std::sync::LazyLock::new(Default::default);
