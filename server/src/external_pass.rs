//! External passes: a command that reads a module as Relay text on stdin and
//! writes the transformed module as Relay text on stdout, so a pass can be
//! written in Python or any language. Its failures (exit status, stderr,
//! unreadable output) become errors naming the pass; errors in what it wrote
//! point into its output (`<output of NAME>`), not into the input file.
//!
//! The command runs in the directory of `relay.toml` and receives the
//! PassContext in its environment: `RELAY_PASS` (its name),
//! `RELAY_OPT_LEVEL`, `RELAY_TARGET` (empty without a target) and
//! `RELAY_CONFIG` (the config as a JSON object).

use relay_passes::diagnostic::{Code, Diagnostic};
use relay_passes::ir::IRModule;
use relay_passes::lower::parse_and_lower;
use relay_passes::pass_manager::{ConfigValue, Pass, PassContext, PassError, PassInfo, PassResult};
use relay_passes::printer::{print_module, PrintOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A pass run by an external command.
pub struct ExternalPass {
    info: PassInfo,
    command: Vec<String>,
    dir: PathBuf,
    /// Why the command may not run here (`--no-external`, an untrusted
    /// workspace); the pass then leaves the module as it is, warns, and
    /// records the command in the context (see
    /// [`PassContext::blocked_commands`]).
    blocked: Option<String>,
}

impl ExternalPass {
    pub fn new(info: PassInfo, command: Vec<String>, dir: PathBuf) -> ExternalPass {
        ExternalPass {
            info,
            command,
            dir,
            blocked: None,
        }
    }

    /// The same pass, not allowed to run its command, for `why`.
    pub fn blocked(mut self, why: impl Into<String>) -> ExternalPass {
        self.blocked = Some(why.into());
        self
    }

    /// The command as one would type it.
    pub fn command_line(&self) -> String {
        self.command.join(" ")
    }

    /// A failure of the command itself; the message is the whole report
    /// (no diagnostic repeats it).
    fn fail(&self, message: String) -> PassError {
        PassError::new(&self.info.name, message)
    }
}

/// The context as the environment variables an external pass receives.
fn context_environment(name: &str, ctx: &PassContext) -> Vec<(&'static str, String)> {
    let config: serde_json::Map<String, serde_json::Value> = ctx
        .config
        .iter()
        .map(|(key, value)| (key.clone(), config_json(value)))
        .collect();
    vec![
        ("RELAY_PASS", name.to_string()),
        ("RELAY_OPT_LEVEL", ctx.opt_level.to_string()),
        ("RELAY_TARGET", ctx.target.clone().unwrap_or_default()),
        (
            "RELAY_CONFIG",
            serde_json::Value::Object(config).to_string(),
        ),
    ]
}

fn config_json(value: &ConfigValue) -> serde_json::Value {
    match value {
        ConfigValue::Bool(b) => serde_json::Value::Bool(*b),
        ConfigValue::Int(i) => serde_json::Value::from(*i),
        ConfigValue::Float(x) => serde_json::Value::from(*x),
        ConfigValue::String(s) => serde_json::Value::String(s.clone()),
        ConfigValue::Map(m) => {
            serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), config_json(v))).collect())
        }
    }
}

impl Pass for ExternalPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn transform(&self, module: IRModule, ctx: &PassContext) -> PassResult {
        let name = &self.info.name;
        if let Some(why) = &self.blocked {
            let command = self.command_line();
            ctx.report(Diagnostic::warning(
                Code::PassWarning,
                format!(
                    "external pass {name} was not run ({why}); it would have run `{command}` in {}",
                    self.dir.display()
                ),
            ));
            ctx.record_blocked_command(command);
            return Ok(module);
        }
        let input = print_module(&module, &PrintOptions::default());
        let (program, args) = self
            .command
            .split_first()
            .ok_or_else(|| self.fail(format!("external pass {name} has no command")))?;
        if !self.dir.is_dir() {
            return Err(self.fail(format!(
                "external pass {name}: its directory `{}` does not exist",
                self.dir.display()
            )));
        }
        let mut child = Command::new(program)
            .args(args)
            .envs(context_environment(name, ctx))
            .current_dir(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.fail(format!("external pass {name}: cannot run `{program}`: {e}")))?;
        // Write stdin from another thread so a command that writes before it
        // has read everything cannot deadlock us.
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let output = child
            .wait_with_output()
            .map_err(|e| self.fail(format!("external pass {name}: {e}")))?;
        let _ = writer.join();
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        if !stderr.is_empty() {
            ctx.log(&format!("[{name}] {stderr}"));
        }
        if !output.status.success() {
            let detail = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", stderr.lines().last().unwrap_or_default())
            };
            return Err(self.fail(format!(
                "external pass {name} failed ({}){detail}",
                output.status
            )));
        }
        let text = String::from_utf8(output.stdout)
            .map_err(|_| self.fail(format!("external pass {name} wrote text that is not UTF-8")))?;
        let (result, diagnostics) = parse_and_lower(&format!("<output of {name}>"), &text);
        if diagnostics.has_errors() {
            let mut error = self.fail(format!(
                "external pass {name} wrote a module that does not read back"
            ));
            error.diagnostics.extend(diagnostics);
            // The spans point into the output, whose text the result keeps.
            error.sources = Some(result.sources);
            return Err(error);
        }
        Ok(result)
    }
}
