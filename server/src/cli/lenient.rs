//! `--lenient`, shared by every command that reads Relay text: read the
//! files other TVM versions, frontends and dumps write (see
//! `relay_syntax::ParseOptions`), reporting each acceptance as a warning.
//! Without the flag, `lenient = true` in the input's `relay.toml` asks for
//! the same; otherwise commands read exactly what TVM v0.13 reads.

use crate::project::Project;
use relay_passes::lower::LowerOptions;
use std::path::Path;

#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct LenientArg {
    /// Also read what TVM v0.13's parser rejects but other versions, frontends
    /// and dumps write (no or an old version header, a bare `fn` file, dotted
    /// names, `meta[…]` without a metadata section, other versions'
    /// attributes), each reported as a warning. `lenient = true` in
    /// relay.toml does the same.
    #[arg(long)]
    pub lenient: bool,
}

impl LenientArg {
    /// The reading for an input whose project is looked up from `start`;
    /// the project's declared operators (`[ops.NAME]`) are made known.
    /// An unreadable `relay.toml` counts as not asking for leniency (the
    /// commands that need the project report it themselves).
    pub fn options(self, start: &Path) -> LowerOptions {
        let project = declare_project_ops(start);
        let project_lenient = project.and_then(|p| p.lenient).unwrap_or(false);
        if self.lenient || project_lenient {
            LowerOptions::LENIENT
        } else {
            LowerOptions::STRICT
        }
    }
}

/// The project of `start`, with its declared operators made known (an
/// invalid declaration is reported on standard error and left out).
pub fn declare_project_ops(start: &Path) -> Option<Project> {
    let project = Project::find(start).and_then(|file| Project::load(&file).ok())?;
    if let Err(message) = project.declare_ops() {
        eprintln!("error: relay.toml: {message}");
    }
    Some(project)
}
