//! Reading input files for the subcommands: text must be UTF-8; a file that
//! cannot be read is reported plainly (exit status 2).

use std::path::Path;

/// The file's text, or a message saying why it cannot be used.
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: the file is not valid UTF-8 (first bad byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}
