//! What the client told the server about itself: `initializationOptions`
//! (debounce, the commands it implements, workspace trust), its
//! capabilities (progress), and later trust changes.

use super::ext::PICK_PASS;
use crate::project::ExternalCommands;
use serde_json::Value;
use std::time::Duration;
use tower_lsp_server::ls_types::InitializeParams;

/// The default delay between an edit and its analysis.
pub const DEFAULT_DEBOUNCE_MS: u64 = 150;

/// Settings from `initializationOptions`.
#[derive(Debug, Clone)]
pub struct Settings {
    pub debounce: Duration,
    pub work_done_progress: bool,
    /// The client implements `relay.applyPass` itself (a pass picker), so
    /// the full pass list can be one "Apply pass…" code action.
    pub client_picks_pass: bool,
    /// Whether the editor says the workspace is trusted
    /// (`initializationOptions.trusted`, later `workspace/
    /// didChangeConfiguration` with `settings.trusted`). Until it is, the
    /// commands of relay.toml's external passes do not run: opening and
    /// saving a file of a cloned folder must not execute what its
    /// relay.toml says.
    pub trusted: bool,
    /// The pipeline the editor offers (`initializationOptions.
    /// defaultPipeline`), shown in the "Run pipeline" code lens.
    pub default_pipeline: Option<String>,
    /// The client can be asked to fetch code lenses again
    /// (`workspace/codeLens/refresh`).
    pub code_lens_refresh: bool,
    /// The client watches files for the server when asked to
    /// (`client/registerCapability` of `workspace/didChangeWatchedFiles`):
    /// how a changed `relay.toml` reaches the server.
    pub watch_files: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            debounce: Duration::from_millis(DEFAULT_DEBOUNCE_MS),
            work_done_progress: false,
            client_picks_pass: false,
            trusted: false,
            default_pipeline: None,
            code_lens_refresh: false,
            watch_files: false,
        }
    }
}

impl Settings {
    pub fn external_commands(&self) -> ExternalCommands {
        if self.trusted {
            ExternalCommands::Allowed
        } else {
            ExternalCommands::Blocked("the workspace is not trusted".to_string())
        }
    }

    /// Takes what `initialize` says (options absent keep their value, as
    /// before: the debounce).
    pub fn initialize(&mut self, params: &InitializeParams) {
        self.work_done_progress = params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
        self.code_lens_refresh = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        self.watch_files = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|c| c.dynamic_registration)
            .unwrap_or(false);
        let options = params.initialization_options.as_ref();
        if let Some(ms) = options
            .and_then(|o| o.get("debounceMs"))
            .and_then(Value::as_u64)
        {
            self.debounce = Duration::from_millis(ms);
        }
        self.client_picks_pass = options
            .and_then(|o| o.get("clientCommands"))
            .and_then(Value::as_array)
            .is_some_and(|commands| commands.iter().any(|c| c.as_str() == Some(PICK_PASS)));
        self.trusted = options.and_then(trusted_flag).unwrap_or(false);
        self.default_pipeline = options
            .and_then(|o| o.get("defaultPipeline"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string);
    }
}

/// The `trusted` flag of initialization options or configuration settings
/// (`{"trusted": true}` or `{"relay": {"trusted": true}}`).
pub fn trusted_flag(settings: &Value) -> Option<bool> {
    settings
        .get("trusted")
        .or_else(|| settings.get("relay").and_then(|r| r.get("trusted")))
        .and_then(Value::as_bool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn initialization_options() {
        let params: InitializeParams = serde_json::from_value(json!({
            "capabilities": { "window": { "workDoneProgress": true } },
            "initializationOptions": {
                "debounceMs": 0,
                "clientCommands": ["relay.applyPass"],
                "relay": { "trusted": true }
            }
        }))
        .unwrap();
        let mut settings = Settings::default();
        settings.initialize(&params);
        assert_eq!(settings.debounce, Duration::ZERO);
        assert!(settings.work_done_progress && settings.client_picks_pass && settings.trusted);
        let mut settings = Settings::default();
        settings.initialize(&serde_json::from_value(json!({ "capabilities": {} })).unwrap());
        assert_eq!(
            settings.debounce,
            Duration::from_millis(DEFAULT_DEBOUNCE_MS)
        );
        assert!(!settings.work_done_progress && !settings.client_picks_pass && !settings.trusted);
    }
}
