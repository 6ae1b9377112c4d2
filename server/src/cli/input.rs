//! Reading input files for the subcommands: text must be UTF-8; a file that
//! cannot be read is reported plainly (exit status 2). The path `-` means
//! standard input, named `<stdin>` in diagnostics (as rustfmt and ruff do).

use std::io::Read;
use std::path::Path;

/// The name diagnostics give standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// Whether `path` is `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The name to show for `path` in diagnostics.
pub fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        STDIN_NAME.to_string()
    } else {
        path.display().to_string()
    }
}

/// The file's text (standard input's for `-`), or a message saying why it
/// cannot be used.
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = if is_stdin(path) {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read {STDIN_NAME}: {e}"))?;
        bytes
    } else {
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?
    };
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: the file is not valid UTF-8 (first bad byte at offset {})",
            display_name(path),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Writes a command's text result to `output`, or to standard output when
/// none is given; the exit status (`EXIT_USAGE` when the file cannot be
/// written, with the reason on stderr).
pub fn write_result(output: Option<&Path>, text: &str) -> i32 {
    match output {
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => super::EXIT_OK,
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                super::EXIT_USAGE
            }
        },
        None => {
            print!("{text}");
            super::EXIT_OK
        }
    }
}
