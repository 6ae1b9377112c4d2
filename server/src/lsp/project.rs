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
