//! External passes: a command that reads a module as Relay text on stdin and
//! writes the transformed module as Relay text on stdout, so a pass can be
//! written in Python or any language. Its failures (exit status, stderr,
//! unreadable output) become diagnostics naming the pass.

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::IRModule;
use crate::lower::parse_and_lower;
use crate::printer::{print_module, PrintOptions};
use crate::transform::{Pass, PassContext, PassError, PassInfo, PassResult};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A pass run by an external command.
pub struct ExternalPass {
    info: PassInfo,
    command: Vec<String>,
    dir: PathBuf,
}

impl ExternalPass {
    pub fn new(info: PassInfo, command: Vec<String>, dir: PathBuf) -> ExternalPass {
        ExternalPass { info, command, dir }
    }

    fn fail(&self, message: String) -> PassError {
        let mut error = PassError::new(&self.info.name, message.clone());
        error
            .diagnostics
            .push(Diagnostic::error(Code::PassFailed, message));
        error
    }
}

impl Pass for ExternalPass {
    fn info(&self) -> &PassInfo {
        &self.info
    }

    fn transform(&self, module: IRModule, ctx: &PassContext) -> PassResult {
        let name = &self.info.name;
        let input = print_module(&module, &PrintOptions::default());
        let (program, args) = self
            .command
            .split_first()
            .ok_or_else(|| self.fail(format!("external pass {name} has no command")))?;
        let mut child = Command::new(program)
            .args(args)
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
        let (mut result, diagnostics) = parse_and_lower(&format!("<output of {name}>"), &text);
        if diagnostics.has_errors() {
            let mut error = self.fail(format!(
                "external pass {name} wrote a module that does not read back"
            ));
            error.diagnostics.extend(diagnostics);
            // Keep the text so the errors' spans can be shown.
            result.sources = result.sources.clone();
            return Err(error);
        }
        Ok(result)
    }
}
