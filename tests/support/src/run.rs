//! Running a built binary the way a user does and capturing what it
//! printed. The `relay` binary's path comes from Cargo
//! (`env!("CARGO_BIN_EXE_relay")` in `relay-server`'s tests).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// What one run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    /// The exit code; `None` when the process was killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The exit code, `-1` for a signal (for `assert_eq!(run.code(), 0)`).
    pub fn code(&self) -> i32 {
        self.code.unwrap_or(-1)
    }
}

/// Runs `binary` with `args` in `dir` (the current directory when `None`),
/// writing `stdin` to its standard input.
pub fn run(binary: &Path, args: &[&str], stdin: &str, dir: Option<&Path>) -> Run {
    let mut command = Command::new(binary);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", binary.display()));
    let mut input = child.stdin.take().expect("stdin is piped");
    // A binary that exits without reading its input closes the pipe: that
    // is its business, not a test failure.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let out = child
        .wait_with_output()
        .expect("the binary runs to its end");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn captures_output_code_and_stdin() {
        let run = run(
            Path::new("sh"),
            &["-c", "cat; echo err >&2; exit 3"],
            "in",
            None,
        );
        assert_eq!(run.code(), 3);
        assert_eq!(run.stdout, "in");
        assert_eq!(run.stderr, "err\n");
        let here = super::run(Path::new("pwd"), &[], "", Some(Path::new("/")));
        assert_eq!(here.stdout.trim(), "/");
    }
}
